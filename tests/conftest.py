"""Shared test settings.

* Every notebook a test runs uses the smoke profile.
* Every process the tests start (kernels, the book build, Dask workers) loads
  ``tests/guards/sitecustomize.py``: a connection to any non-loopback address is refused and
  logged, and the session fails if anything tried (the tests and the default build must make
  no network access). The guard is also installed in the pytest process itself.
"""
import os
import runpy
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.md"))
GUARDS = Path(__file__).resolve().parent / "guards"

os.environ.setdefault("BOOK_PROFILE", "smoke")
NETWORK_LOG = Path(tempfile.mkdtemp(prefix="twolayer-net-")) / "attempts.log"
os.environ["TWOLAYER_NETWORK_LOG"] = str(NETWORK_LOG)
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(GUARDS)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
runpy.run_path(str(GUARDS / "sitecustomize.py"))


def pytest_sessionfinish(session, exitstatus):
    if NETWORK_LOG.exists() and NETWORK_LOG.read_text().strip():
        print("\nnetwork access attempted during the tests (blocked):\n" + NETWORK_LOG.read_text())
        session.exitstatus = 1


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


# A minimal notebook that follows the notebook contract, for sweep and fault tests.
TINY = '''---
jupytext:
  formats: ipynb,md:myst
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---

```{code-cell} ipython3
import os, signal, time
from twolayer.common.contract import Bool, Contract, Float, Int, OptionalPath
contract = Contract({"x": Int(0, 100), "fail": Bool(), "sleep": Float(0, 60),
                     "kill_marker": OptionalPath()},
                    {"smoke": {}, "book": {}, "paper": {}}, globals())
```

```{code-cell} ipython3
:tags: [parameters]

seed = 0
profile = "smoke"
results_path = None
x = 1
fail = False
sleep = 0.0
kill_marker = None   # a .json path: the first run to create it SIGKILLs the process running it
```

```{code-cell} ipython3
P = contract.validate()
time.sleep(P.sleep)
if P.kill_marker is not None:
    try:
        fd = os.open(P.kill_marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        pass
    else:
        os.close(fd)
        os.kill(os.getppid(), signal.SIGKILL)  # the kernel's parent: the papermill process
        time.sleep(30)
contract.check("not_asked_to_fail", not P.fail, f"x={P.x}")
contract.metric("square", P.x ** 2 + P.seed)
contract.finish()
```
'''


@pytest.fixture(scope="session")
def tiny_notebook(tmp_path_factory) -> Path:
    import jupytext

    path = tmp_path_factory.mktemp("nb") / "tiny.ipynb"
    jupytext.write(jupytext.reads(TINY, fmt="md:myst"), path)
    return path
