"""Shared test settings, markers and fixtures (helpers: ``tests/helpers.py``).

* Every notebook a test runs uses the smoke profile; kernels, Dask workers and the book build
  run with one BLAS/OpenMP thread (``OMP_NUM_THREADS=1``: two test workers share two cores).
* **Network guard**: every process the tests start (xdist workers, kernels, the book build,
  Dask workers) loads ``tests/guards/sitecustomize.py``; the pytest process installs it too.
  A connection to a non-loopback address or a DNS lookup of a non-local name is refused and
  logged to ``$TWOLAYER_NETWORK_DIR/<worker>.log``. A test during which its worker's log grew
  fails (in the phase, setup, call or teardown, in which it grew); and the session fails (on
  the xdist controller too) if any log is not empty at the end.
* **Markers**, applied from the folder: ``unit`` (tests/core, tests/page, tests/paper_a,
  tests/paper_b, the in-process entry-point tests), ``notebook`` (tests/notebooks), ``book``
  (the book build and every test that reads it), ``sweep`` (tests on a Dask cluster),
  ``slow`` (the book, the sweeps, and, marked at the test, the tests that start a kernel and
  the unit tests measured above SLOW_SECONDS (one process, 2 shared cores); `make unit`
  leaves them to `make test`),
  ``full`` (the exhaustive variants, deselected by default: ``make test-full``).
* **xdist groups** (``--dist loadgroup``): the book build and its readers in group ``book``,
  collected first so that one worker starts it at once; every Dask test in group ``sweep``
  (one shared local cluster per worker, so one in the session).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from helpers import GROUP_TIMEOUT, GUARDS, ROOT, Book, book_build, write_tiny

# --- environment of every process the tests start, and the network guard ----------------------

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(GUARDS))
from network_plugin import (  # noqa: E402, F401  (pytest hooks, registered by import)
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_sessionfinish,
    pytest_sessionstart,
)

# --- markers and groups -----------------------------------------------------------------------

# a unit test measured above this many seconds is marked slow at the test, with its time
SLOW_SECONDS = 2.0
UNIT_DIRS = ("core", "page", "paper_a", "paper_b", "entry_points")
# fixtures that mean "this test runs notebooks on the shared Dask cluster"
SWEEP_FIXTURES = {"dask_client", "tiny_notebook", "robustness_report"}


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups
def pytest_collection_modifyitems(config, items):
    def rank(item):
        if item.get_closest_marker("book"):
            return 0
        if item.get_closest_marker("sweep"):
            return 1
        return 2

    for item in items:
        path = Path(str(item.fspath)).resolve()
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else ""
        folder = rel.split("/")[1] if rel.startswith("tests/") else ""
        names = set(getattr(item, "fixturenames", ()))
        if folder == "book" or "book" in names:
            item.add_marker(pytest.mark.book)
        if SWEEP_FIXTURES & names or item.get_closest_marker("sweep"):
            item.add_marker(pytest.mark.sweep)
        heavy = item.get_closest_marker("book") or item.get_closest_marker("sweep")
        if folder == "notebooks":
            item.add_marker(pytest.mark.notebook)
        elif folder in UNIT_DIRS and not heavy:
            item.add_marker(pytest.mark.unit)
        if heavy:
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("book"):
            item.add_marker(pytest.mark.xdist_group("book"))
        elif item.get_closest_marker("sweep"):
            item.add_marker(pytest.mark.xdist_group("sweep"))
        if heavy and not item.get_closest_marker("timeout"):
            # the first test of a group also builds the book or runs the harness (setup counts):
            # the group's timeout; every other test has pyproject.toml's (see helpers.py)
            item.add_marker(pytest.mark.timeout(GROUP_TIMEOUT))
    items.sort(key=rank)  # stable: the book build first, then the cluster, then the rest


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def book(tmp_path_factory):
    """The strict smoke build of the whole book, once per session (see helpers.book_build).
    ``TWOLAYER_TEST_BOOK=<folder>``: reuse the build in that ``--path-output`` folder instead
    (while working on the book tests)."""
    reuse = os.environ.get("TWOLAYER_TEST_BOOK")
    if reuse:
        out = Path(reuse)
        return Book(out, out / "_build" / "html", out / "_build" / "results", "")
    return book_build(tmp_path_factory.mktemp("book"))


@pytest.fixture(scope="session")
def tiny_notebook(tmp_path_factory) -> Path:
    return write_tiny(tmp_path_factory.mktemp("nb") / "tiny.ipynb")


@pytest.fixture(scope="session")
def dask_client():
    """One local Dask cluster for the session (2 worker processes on 127.0.0.1)."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()
