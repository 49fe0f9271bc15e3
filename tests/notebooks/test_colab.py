"""The Colab path, offline (``make test-colab``; the ``colab`` marker keeps it out of the
default run: it builds an environment, minutes; run it before each release).

A fresh virtual environment holds only torch and ipykernel, as a Colab runtime has, and is
registered as a Jupyter kernel in a temporary ``JUPYTER_PATH``. The first cell of a chapter,
its install cell, is run there with ``TWOLAYER_INSTALL_SOURCE`` pointing at a
``git+file://`` clone of this checkout's working tree (committed or not), so ``pip`` installs
the package with the loose ranges of ``pyproject.toml`` next to the preinstalled torch. That
step alone reaches the package index, through this machine's pip configuration, with the
tests' network guard lifted for its processes. Then one Paper A chapter and one Paper B chapter
run in that kernel at the smoke profile with papermill, under the network guard, from a
working directory outside the checkout and the clone: nothing may read a file relative to the
checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from helpers import CELL_TIMEOUT, GUARDS, ROOT

pytestmark = [pytest.mark.colab, pytest.mark.slow, pytest.mark.timeout(2400)]

# what Colab preinstalls that the package needs: torch (this machine's pip finds the CPU wheel
# of the lock's version; TWOLAYER_COLAB_TORCH names another requirement)
TORCH = os.environ.get("TWOLAYER_COLAB_TORCH", "torch==2.13.0")
CHAPTERS = ("paper_a/setting", "paper_b/stage1")
KERNEL = "twolayer-colab"
INSTALL_ENV = "TWOLAYER_INSTALL_SOURCE"


def clone_working_tree(dest: Path) -> Path:
    """A git repository at ``dest`` holding this checkout's working tree as one commit: the
    tracked and the untracked, not ignored files (``git clone`` would miss uncommitted work)."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        src = ROOT / name
        if src.is_file():  # tracked but deleted in the working tree: left out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-C", str(dest)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "working tree"], check=True)
    return dest


def unguarded_env() -> dict:
    """This process's environment without the network guard (the install step only)."""
    env = {k: v for k, v in os.environ.items() if k != "TWOLAYER_NETWORK_LOG"}
    path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(GUARDS)]
    env["PYTHONPATH"] = os.pathsep.join(path)
    if not path:
        env.pop("PYTHONPATH")
    return env


def install_cell(nb: Path) -> str:
    doc = nbformat.read(nb, as_version=4)
    return next(c.source for c in doc.cells if c.cell_type == "code")


def _run(cmd, env, timeout=1200):
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd[:4]} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    """``(kernel name, clone, seconds of the install)``: the Colab-like kernel, with twolayer
    installed by a chapter's own install cell from a ``git+file://`` clone."""
    tmp = tmp_path_factory.mktemp("colab")
    clone = clone_working_tree(tmp / "clone")
    venv = tmp / "venv"
    env = unguarded_env()
    env[INSTALL_ENV] = f"git+file://{clone}"
    start = time.perf_counter()
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", str(venv)], env)
    py = venv / "bin" / "python"
    extra = os.environ.get("PIP_EXTRA", "").split()
    _run([str(py), "-m", "pip", "install", "-q", *extra, TORCH, "ipykernel"], env)
    before = _run([str(py), "-m", "pip", "list", "--format=json"], env).stdout
    assert "twolayer" not in before and '"numpy"' not in before.replace(" ", "")
    # the install cell of the first chapter, as Colab runs it: IPython, with %pip
    cell = install_cell(clone / "notebooks" / f"{CHAPTERS[0]}.ipynb")
    _run([str(venv / "bin" / "ipython"), "--quick", "-c", cell], env)
    seconds = time.perf_counter() - start
    where = _run([str(py), "-c", "import twolayer; print(twolayer.__file__)"], env).stdout.strip()
    assert Path(where).is_relative_to(venv), f"twolayer imported from {where}, not the venv"
    spec = tmp / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(py), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Colab-like (torch + ipykernel)",
                "language": "python",
            }
        )
    )
    return {"kernel": KERNEL, "jupyter": tmp / "jupyter", "clone": clone, "seconds": seconds}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_runs_in_a_colab_like_kernel(colab, chapter, tmp_path, monkeypatch):
    from twolayer.tools.runner import execute

    print(f"install step: {colab['seconds']:.0f} s")
    monkeypatch.setenv("JUPYTER_PATH", str(colab["jupyter"]))
    monkeypatch.setenv(INSTALL_ENV, f"git+file://{colab['clone']}")
    work = tmp_path / "work"  # outside the checkout and the clone
    work.mkdir()
    nb = colab["clone"] / "notebooks" / f"{chapter}.ipynb"
    results = work / "results.json"
    execute(
        nb,
        work / "out.ipynb",
        {"profile": "smoke"},
        results_path=results,
        kernel_name=colab["kernel"],
        cwd=work,
        cell_timeout=CELL_TIMEOUT,
    )
    res = json.loads(results.read_text())
    assert res["params"]["profile"] == "smoke"
    assert res["checks"] and not [k for k, v in res["checks"].items() if v is False]
    assert res["environment"]["lock"]["matches"] is not True  # not the locked environment
