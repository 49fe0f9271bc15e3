"""Shared helpers of the test suite (fixtures are in ``conftest.py``).

* the chapters (``NOTEBOOKS``, ``chapter_name``), ``_toc.yml`` and ``_config.yml``;
* :func:`execute` / :func:`run_chapter`: a page run with the library's notebook runner
  (``twolayer.tools.runner.execute``: smoke profile unless told otherwise, the notebook's
  folder as working directory, a per-cell timeout so a hung kernel fails the test instead of
  stalling the run);
* :func:`book_build`: the strict build of the whole book, with every chapter's results JSON;
* ``TINY``: a minimal notebook that follows the notebook contract, for the sweep tests.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
GUARDS = Path(__file__).resolve().parent / "guards"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.md"))
# Timeouts, ordered cell < test < group (tests/entry_points/test_timeouts.py checks it): a hung
# cell fails its test with the cell's message (a smoke chapter runs in seconds) before its
# test's timeout (pytest-timeout, `timeout` in pyproject.toml) stops it without one; the book build
# stops after BUILD_TIMEOUT, before the timeout of its group (the first test of the book and
# sweep groups builds the book or runs the harness in its setup: tests/conftest.py)
CELL_TIMEOUT = 240
GROUP_TIMEOUT = 1800
# the determinism rerun runs on these by default (every chapter under the `full` marker):
# one chapter per library it exercises (torch trainer, convex solver, NumPy/SciPy).
REPRESENTATIVE = ("paper_a/setting", "paper_a/kkt_not_max_margin", "paper_b/stage1")


# A toy page's parameters: its spec, size profiles and parameters cell (the cell's values before
# papermill injects any), shared by the tests of twolayer.core.params and twolayer.page.contract.
def toy_spec() -> dict:
    from twolayer.core.params import Bool, Choice, Float, Int, ListOf

    return {
        "n": Int(1, 100),
        "lr": Float(0.0, 1.0, lo_open=True),
        "act": Choice("leaky_relu", "smoothed_leaky_relu"),
        "normalized": Bool(),
        "ns": ListOf(Int(2), increasing=True),
    }


TOY_PROFILES = {
    "smoke": {"seed": 0, "n": 5, "lr": 0.1, "ns": [2, 3]},
    "book": {"seed": 1, "n": 50, "lr": 0.05, "ns": [2, 4, 8]},
    "paper": {"seed": 2, "n": 100, "lr": 0.01, "ns": [2, 4, 8, 16]},
}
TOY_CELL = dict(
    seed=None,
    profile="smoke",
    results_path=None,
    n=None,
    lr=None,
    act="leaky_relu",
    normalized=False,
    ns=None,
)


def chapter_results(checks: dict, profile="smoke", **params) -> dict:
    """A chapter's results (its JSON, as a page writes it) with
    ``checks = {name: (kind, passed, statement)}`` (for the claims index's tests)."""
    return {
        "params": {"profile": profile, **params},
        "checks": {k: v[1] for k, v in checks.items()},
        "check_details": {
            k: {
                "kind": kind,
                "statement": st,
                "value": 0.5,
                "bound": 1.0,
                "op": "<",
                "margin": None if passed is None else 0.5,
                "reason": "" if passed is not None else "hypothesis fails",
            }
            for k, (kind, passed, st) in checks.items()
        },
    }


def fd_grad_regularized(net, teacher, lam: float, h: float = 1e-6) -> np.ndarray:
    """Central differences of Paper B's ``L_lambda`` (``population.regularized_loss``) in every
    parameter of ``net``, as a flat vector: the independent route to its gradient."""
    from twolayer.paper_b import population as pop

    v = net.flat()
    m, d = net.W.shape
    g = np.empty_like(v)
    for i in range(len(v)):
        e = np.zeros_like(v)
        e[i] = h
        up = pop.regularized_loss(pop.Net.unflat(v + e, m, d), teacher, lam)
        dn = pop.regularized_loss(pop.Net.unflat(v - e, m, d), teacher, lam)
        g[i] = (up - dn) / (2 * h)
    return g


def chapter_name(path: Path) -> str:
    """``notebooks/paper_a/setting.md`` -> ``paper_a/setting``."""
    return f"{path.parent.name}/{path.stem}"


CHAPTERS = [chapter_name(p) for p in NOTEBOOKS]


def toc_files() -> list[str]:
    """Every file of ``_toc.yml`` (without suffix), root first."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            files.append(ch["file"])
            files += [s["file"] for s in ch.get("sections", [])]
    return files


def book_config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())


# --- running a page ---------------------------------------------------------------------------


def execute(nb: str | os.PathLike, out_dir: str | os.PathLike, name: str | None = None, **params):
    """Execute the notebook ``nb`` (``.md`` or ``.ipynb``; its paired ``.ipynb`` runs) with
    ``params`` into ``out_dir/<name>-out.ipynb`` with the notebook runner
    (:func:`twolayer.tools.runner.execute`, in the notebook's folder, each cell stopped after
    ``CELL_TIMEOUT``); ``profile`` defaults to ``"smoke"``. Raises
    ``papermill.PapermillExecutionError`` when a cell raises (its ``ename``, ``evalue``)."""
    from twolayer.tools.runner import execute as run

    out = Path(out_dir) / f"{name or Path(nb).stem}-out.ipynb"
    return run(nb, out, {"profile": "smoke", **params}, cell_timeout=CELL_TIMEOUT)


def run_chapter(
    nb: str | os.PathLike, out_dir: str | os.PathLike, name: str | None = None, **params
) -> dict:
    """:func:`execute` with ``results_path`` in ``out_dir`` (unless given); return the results."""
    name = name or Path(nb).stem
    params.setdefault("results_path", str(Path(out_dir) / f"{name}.json"))
    execute(nb, out_dir, name, **params)
    return json.loads(Path(params["results_path"]).read_text())


# --- the book -----------------------------------------------------------------------------------


@dataclass
class Book:
    """A strict build: ``html`` (the site), ``results`` (``<paper>/<name>.json`` per chapter,
    written by every chapter's ``contract.finish()``), ``log`` (Sphinx's output)."""

    root: Path
    html: Path
    results: Path
    log: str

    def chapter_results(self, chapter: str) -> dict:
        path = self.results / f"{chapter}.json"
        assert path.exists(), f"the book build wrote no results for {chapter} ({path})"
        return json.loads(path.read_text())


BUILD_TIMEOUT = 840  # seconds; its group's GROUP_TIMEOUT is the backstop


def book_build(out: Path) -> Book:
    """``jupyter-book build . -W -n --keep-going`` into ``out`` with ``BOOK_PROFILE=smoke``:
    every Sphinx warning (a broken reference, a missing citation, a failed cell) fails."""
    # MPLBACKEND (Agg for the tests' own processes) must not reach the book's kernels: under
    # Agg, plt.show() displays nothing and the pages would have no figures
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["BOOK_PROFILE"] = "smoke"
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--path-output", str(out), "-W", "-n", "--keep-going"],
        capture_output=True,
        text=True,
        env=env,
        timeout=BUILD_TIMEOUT,
    )
    log = proc.stdout + proc.stderr
    (out / "build.log").write_text(log)
    assert proc.returncode == 0, "strict book build failed:\n" + log[-6000:]
    html = out / "_build" / "html"
    assert (html / "index.html").exists()
    return Book(out, html, out / "_build" / "results", log)


# --- a tiny notebook for the sweep tests ----------------------------------------------------------

# Follows the notebook contract; its metric is known (x^2 + seed), so a sweep's table can be
# compared with known values instead of a second, clean sweep.
TINY = """---
jupytext:
  formats: ipynb,md:myst
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---

```{code-cell} ipython3
import os, signal, time
from twolayer.core.params import Bool, Float, Int, OptionalPath
from twolayer.page.contract import Contract
contract = Contract({"x": Int(0, 100), "fail": Bool(), "sleep": Float(0, 60),
                     "kill_marker": OptionalPath(), "started": OptionalPath()},
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
started = None       # a .json path: each run writes its kernel's pid to <started>.<x> first
```

```{code-cell} ipython3
P = contract.validate()
if P.started is not None:
    with open(f"{P.started}.{P.x}", "w") as fh:
        fh.write(str(os.getpid()))
time.sleep(P.sleep)
if P.kill_marker is not None:
    try:
        fd = os.open(P.kill_marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        pass
    else:
        os.close(fd)
        os.kill(os.getppid(), signal.SIGKILL)  # the kernel's parent: the papermill process
        os._exit(1)  # and this kernel: no orphan may write results after its parent died
contract.sanity("not_asked_to_fail", not P.fail, detail=f"x={P.x}")
contract.metric("square", P.x ** 2 + P.seed)
contract.finish()
```
"""


def square(x: int, seed: int = 0) -> int:
    """The tiny notebook's metric."""
    return x * x + seed


def write_tiny(path: Path) -> Path:
    import jupytext

    jupytext.write(jupytext.reads(TINY, fmt="md:myst"), path)
    return path


def chapter_table(package: str, path, attr: str, what: str) -> dict[tuple[str, str], object]:
    """The entries of a per-chapter table package (``tests/failing_cases``,
    ``tests/exercises``): each of its modules names its ``CHAPTER`` and a dict ``attr``;
    returns every entry keyed by ``(chapter, key)``, refusing a key given twice (``what``
    names the entries in the message)."""
    import importlib
    import pkgutil

    out: dict[tuple[str, str], object] = {}
    for info in pkgutil.iter_modules(path):
        mod = importlib.import_module(f"{package}.{info.name}")
        for name, entry in getattr(mod, attr).items():
            key = (mod.CHAPTER, name)
            if key in out:
                raise ValueError(f"two {what} for {key}")
            out[key] = entry
    return out


def parameters_cell(md: Path) -> dict:
    """The values a page's papermill ``parameters`` cell assigns (its MyST source ``md``),
    read with ``ast``: what a test compares with the chapter module's ``SPEC.defaults``."""
    import ast

    text = Path(md).read_text(encoding="utf-8")
    start = text.index(":tags: [parameters")
    body = text[text.index("\n\n", start) + 2 : text.index("```", start)]
    out = {}
    for node in ast.parse(body).body:
        target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
        out[target.id] = ast.literal_eval(node.value)
    return out


# --- run folders without a kernel (the runner's and the sweep's unit tests) ----------------------


def results_record(params, metrics=None, checks=None) -> dict:
    """A results file as a page's contract writes it, with these parameters."""
    return {
        "params": params,
        "metrics": metrics if metrics is not None else {"m": 1.0},
        "checks": checks if checks is not None else {"c": True},
        "check_details": {},
    }


def write_results(run_dir: Path, obj) -> Path:
    """``obj`` (a results record, or text) as the run folder's ``results.json``."""
    from twolayer.tools.runner import RESULTS

    run_dir.mkdir(parents=True, exist_ok=True)
    text = obj if isinstance(obj, str) else json.dumps(obj)
    (run_dir / RESULTS).write_text(text)
    return run_dir


def fake_papermill(recorded_extra=None, fail=None):
    """A stand-in for papermill.execute_notebook: writes what the notebook would write, with the
    profile's values filled in for parameters asked as None (here: 7); ``fail(parameters)``
    says when a cell raises. Returns the stand-in and the list of the parameters it was
    called with."""
    calls = []

    def execute_notebook(nb, out, parameters, **kw):
        calls.append(dict(parameters))
        Path(out).write_text("{}")
        if fail is not None and fail(parameters):
            import papermill as pm

            raise pm.PapermillExecutionError(
                0, 1, "contract.finish()", "CheckFailed", "sanity check 'c' failed", []
            )
        params = {k: (7 if v is None else v) for k, v in parameters.items()}
        params.update(recorded_extra or {})
        path = Path(parameters["results_path"])
        path.write_text(json.dumps(results_record(params, {"sq": params.get("x", 0) ** 2})))

    return execute_notebook, calls


# --- a kept paper-profile run (tools/paperscale and page/paperscale) -------------------------

#: a 1x1 PNG, the figure of the kept run
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def paper_results(profile="paper", value=0.5, passed=True):
    """A results file of a paper-profile run: one theorem check, one not applicable."""
    return {
        "params": {"seed": 0, "profile": profile, "results_path": "/x.json", "n": 400},
        "checks": {"bound_holds": passed, "skipped": None},
        "check_details": {
            "bound_holds": {
                "kind": "theorem",
                "statement": "a-thm-1",
                "applies": True,
                "value": value,
                "op": "<=",
                "bound": 1.0,
            },
            "skipped": {
                "kind": "observation",
                "statement": None,
                "applies": False,
                "value": None,
                "op": ">",
                "bound": 0.0,
            },
        },
        "metrics": {"rate": 0.25, "curve": [1.0, 2.0], "flag": True},
        "environment": {"python": "3.11", "device": "cpu", "dtype": "float64"},
    }


def kept_paper_run(tmp_path, results):
    """``results`` and an executed notebook with one captioned figure, as ``bench --keep``
    leaves them (``runs/paper_x/ch.json`` and ``.ipynb``), and an empty book root: ``(runs,
    root)``."""
    import nbformat

    src = tmp_path / "runs" / "paper_x"
    src.mkdir(parents=True)
    (src / "ch.json").write_text(json.dumps(results))
    nb = nbformat.v4.new_notebook()
    fig = nbformat.v4.new_code_cell("plot()")
    fig.metadata["mystnb"] = {"figure": {"caption": "A curve.", "name": "fig-ch-curve"}}
    fig.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"image/png": base64.b64encode(PNG).decode(), "text/plain": "<Figure>"},
        )
    ]
    plain = nbformat.v4.new_code_cell("x = 1")
    nb.cells = [plain, fig]
    nbformat.write(nb, src / "ch.ipynb")
    root = tmp_path / "book_root"
    (root / "book").mkdir(parents=True)
    (root / "_toc.yml").write_text("root: intro\n")
    return tmp_path / "runs", root
