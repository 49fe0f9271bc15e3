"""The test processes' environment and the network guard, as pytest hooks shared by
``tests/conftest.py`` (the suite) and ``notebooks/conftest.py`` (``pytest --nbval`` on the
chapter notebooks), which import them.

* Every process the tests start uses the smoke profile (``BOOK_PROFILE``, unless set) and one
  BLAS/OpenMP thread (two test workers share two cores).
* **Network guard**: every process the tests start (xdist workers, kernels, the book build,
  Dask workers) loads ``sitecustomize.py`` beside this file; the pytest process installs it
  too. A connection to a non-loopback address or a DNS lookup of a non-local name is refused
  and logged to ``$TWOLAYER_NETWORK_DIR/<worker>.log``. A test during which its worker's log
  grew fails (in the phase, setup, call or teardown, in which it grew); and the session fails
  (on the xdist controller too) if any log is not empty at the end. A session forked from a
  process that imported this module (mutmut's forkserver) starts a folder of its own.
"""

from __future__ import annotations

import os
import runpy
import tempfile
from pathlib import Path

import pytest

GUARDS = Path(__file__).resolve().parent

os.environ.setdefault("BOOK_PROFILE", "smoke")
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(GUARDS)]
    + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(GUARDS)]
)

# one folder of connection logs for the whole session: created by the controller (or a plain
# run), inherited by xdist workers; each process family writes its own file
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")


def _use_folder(folder: str | None = None) -> None:
    """Log to ``folder`` (a new one when ``None``), here and in every process started later."""
    global NETWORK_DIR, NETWORK_LOG
    os.environ["TWOLAYER_NETWORK_DIR"] = folder or tempfile.mkdtemp(prefix="twolayer-net-")
    NETWORK_DIR = Path(os.environ["TWOLAYER_NETWORK_DIR"])
    NETWORK_LOG = NETWORK_DIR / f"{WORKER}.log"
    os.environ["TWOLAYER_NETWORK_LOG"] = str(NETWORK_LOG)


_use_folder(os.environ.get("TWOLAYER_NETWORK_DIR"))
_IMPORTED_BY = os.getpid()
runpy.run_path(str(GUARDS / "sitecustomize.py"))


@pytest.hookimpl(tryfirst=True)  # before xdist starts its workers, which inherit the folder
def pytest_sessionstart(session):
    """A session in a process forked after this module was imported (mutmut forks every
    mutant's session from one server that collected the tests) gets a folder of its own: else
    one session's blocked attempt, left in the shared log, would fail every later session and
    every test that a concurrent session's attempt overlaps."""
    if os.getpid() != _IMPORTED_BY and not os.environ.get("PYTEST_XDIST_WORKER"):
        _use_folder()


def _attempts() -> str:
    return "".join(p.read_text() for p in sorted(NETWORK_DIR.glob("*.log")))


def _log_size() -> int:
    return NETWORK_LOG.stat().st_size if NETWORK_LOG.exists() else 0


_LOG_AT_START = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[_LOG_AT_START] = _log_size()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Fail the phase (setup, call, teardown) of a test during which this worker (or a process
    it started: a kernel, a Dask worker, the book build) tried to reach the network."""
    outcome = yield
    report = outcome.get_result()
    start = item.stash.get(_LOG_AT_START, None)
    size = _log_size()
    if start is not None and size > start:
        with open(NETWORK_LOG) as fh:
            fh.seek(start)
            new = fh.read()
        item.stash[_LOG_AT_START] = size
        report.outcome = "failed"
        report.longrepr = f"network access attempted (blocked) during {call.when}:\n{new}"


def pytest_sessionfinish(session, exitstatus):
    # runs in every worker and in the controller; the controller sees every worker's log
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    text = _attempts()
    if text.strip():
        print("\nnetwork access attempted during the tests (blocked):\n" + text)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
