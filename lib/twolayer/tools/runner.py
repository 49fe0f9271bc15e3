"""The one notebook runner: a chapter notebook executed with parameters by papermill.

:func:`execute` is the one call of papermill: the notebook (``.md`` or ``.ipynb``; its paired
``.ipynb`` runs) with its parameters and ``results_path``, in its own folder (the working
directory a page expects), on the named kernel, with an optional per-cell timeout and an
optional kernel already running. Everything that executes a page goes through it: the sweep and
the robustness harness (through :func:`execute_run`, once per run folder, on Dask workers, warm
kernels with ``--warm``), ``twolayer run`` (:func:`execute_run`), the benchmark's timings of
every chapter (:func:`twolayer.tools.bench.notebooks.bench_notebooks`, one process per chapter)
and the test suite's helper (``tests/helpers.py``).

A run folder (:func:`execute_run`) holds ``notebook.ipynb`` (the executed notebook, kept for
inspection), ``results.json`` (what the page's contract wrote) and, when the run failed,
``error.json``; :func:`is_done` says whether it holds a complete run of given parameters.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.io import atomic_write_json, to_jsonable

RESULTS = "results.json"
EXECUTED = "notebook.ipynb"
ERROR = "error.json"


def execute(
    notebook: str | os.PathLike,
    output: str | os.PathLike,
    params: Mapping[str, Any] | None = None,
    *,
    results_path: str | os.PathLike | None = None,
    kernel_name: str = "python3",
    cwd: str | os.PathLike | None = None,
    cell_timeout: float | None = None,
    kernel_manager=None,
):
    """Execute a chapter notebook with papermill, raising when a cell raises.

    Args:
        notebook: the page's ``.md`` or ``.ipynb`` (its paired ``.ipynb`` runs).
        output: where the executed notebook is written.
        params: the parameters papermill injects after the ``parameters`` cell.
        results_path: the page's ``results_path`` (``None``: the one in ``params``, if any).
        kernel_name: the Jupyter kernel.
        cwd: the working directory (default: the notebook's own folder, as in a book build).
        cell_timeout: seconds a cell may run (``None``: no limit).
        kernel_manager: a running ``jupyter_client`` kernel manager (a warm kernel) to use.

    Returns:
        The executed notebook (an ``nbformat`` node).

    Raises:
        papermill.PapermillExecutionError: a cell raised (its ``ename`` and ``evalue``).
    """
    import papermill as pm

    nb = Path(notebook).with_suffix(".ipynb")
    params = dict(params or {})
    if results_path is not None:
        params["results_path"] = str(results_path)
    extra = {} if kernel_manager is None else {"km": kernel_manager}
    return pm.execute_notebook(
        str(nb),
        str(output),
        parameters=params,
        cwd=str(Path(cwd) if cwd is not None else nb.resolve().parent),
        kernel_name=kernel_name,
        progress_bar=False,
        log_output=False,
        execution_timeout=cell_timeout,
        **extra,
    )


def is_done(run_dir: Path, params: Mapping[str, Any]) -> bool:
    """Whether ``run_dir`` holds a complete, parseable results file for ``params``.

    A parameter asked as ``None`` means "the profile's value": the results record the value
    it took, so ``None`` matches any recorded value (the run's id, a hash of what was asked,
    already tells runs apart)."""
    path = Path(run_dir) / RESULTS
    try:
        res = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(res, dict) or not {"params", "metrics", "checks"} <= set(res):
        return False
    got = res["params"]
    want = to_jsonable(dict(params))
    return isinstance(got, dict) and all(
        k in got and (v is None or got[k] == v) for k, v in want.items()
    )


# A warm kernel (``warm=True``) executes one run after another in the same process: the
# imports (torch, SciPy, cvxpy, matplotlib: seconds per run) are paid once per worker. Before
# each run the kernel's namespace and the global state a chapter may change are reset; a
# chapter never relies on state left by another one (each seeds its own streams). The book
# build and ``make robustness`` keep a fresh kernel per run.
_RESET = """
%reset -f
import gc as _gc, os as _os, warnings as _warnings
_os.chdir({cwd!r})
_warnings.resetwarnings()
import numpy as _np
_np.seterr(all="warn")
import matplotlib as _mpl, matplotlib.pyplot as _plt
_plt.close("all"); _mpl.rcdefaults()
try:
    import torch as _torch
    _torch.set_default_dtype(_torch.float32)
    _torch.set_num_threads({threads})
except ImportError:
    pass
del _gc, _os, _warnings, _np, _mpl, _plt
"""
_WARM: dict = {}


def _warm_kernel(kernel_name: str, threads: int | None, cwd: str):
    """This process's warm kernel for ``kernel_name`` (started on first use), reset for a
    run in ``cwd``; ``None`` when it cannot be reset (the caller falls back to a fresh one)."""
    from jupyter_client.manager import KernelManager

    km = _WARM.get(kernel_name)
    if km is None or not km.is_alive():
        km = KernelManager(kernel_name=kernel_name)
        env = dict(os.environ)
        if threads:
            for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
                env[var] = str(threads)
        km.start_kernel(env=env)
        _WARM[kernel_name] = km
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        reply = kc.execute_interactive(
            _RESET.format(cwd=cwd, threads=int(threads or os.cpu_count() or 1)), timeout=120
        )
        ok = reply["content"]["status"] == "ok"
    except Exception:
        ok = False
    finally:
        kc.stop_channels()
    if not ok:
        _drop_warm(kernel_name)
        return None
    return km


def _drop_warm(kernel_name: str) -> None:
    km = _WARM.pop(kernel_name, None)
    if km is not None:
        try:
            km.shutdown_kernel(now=True)
        except Exception:
            pass


def execute_run(
    notebook: str,
    params: dict,
    run_dir: str,
    kernel_name: str = "python3",
    *,
    threads: int | None = 1,
    warm: bool = False,
    cell_timeout: float | None = None,
) -> dict:
    """Execute ``notebook`` with ``params`` into the run folder ``run_dir`` with
    :func:`execute`; never raises. The sweep's runs, the robustness harness's (through the
    sweep's Dask workers) and ``twolayer run`` are each one call.

    The folder receives the executed notebook (``notebook.ipynb``) and the results
    (``results.json``, the run's ``results_path``), or, when the run fails, ``error.json``
    (its parameters, notebook and error) and no results. The executed notebook is written to a
    temporary name and renamed when the run ends (success or failure), so a killed run leaves
    no ``notebook.ipynb``.

    Args:
        notebook: the chapter's ``.ipynb``.
        params: its parameters (``results_path`` is set here).
        run_dir: the run folder (created).
        kernel_name: the Jupyter kernel.
        threads: BLAS and torch threads of the run (``None``: the environment's).
        warm: reuse this process's kernel, reset between runs; a run that fails drops it.
        cell_timeout: seconds a cell may run (``None``: no limit).

    Returns:
        ``{"run_id", "status": "done" | "failed", "seconds", "error"}``: ``"done"`` only when
        the notebook ran to its end and wrote results that record ``params`` (:func:`is_done`).
    """
    import papermill as pm

    rd = Path(run_dir)
    rd.mkdir(parents=True, exist_ok=True)
    for stale in (rd / RESULTS, rd / ERROR):
        stale.unlink(missing_ok=True)
    partial = rd / ".partial.ipynb"
    start = time.perf_counter()
    env_backup = {}
    if threads:
        # one kernel per Dask worker: keep BLAS/torch to `threads` threads so workers don't fight
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env_backup[var] = os.environ.get(var)
            os.environ[var] = str(threads)
    status, error = "done", None
    cwd = str(Path(notebook).resolve().parent)
    try:
        km = _warm_kernel(kernel_name, threads, cwd) if warm else None
        execute(
            notebook,
            partial,
            params,
            results_path=rd / RESULTS,
            kernel_name=kernel_name,
            cell_timeout=cell_timeout,
            kernel_manager=km,
        )
        if not is_done(rd, params):
            status, error = "failed", "the notebook finished without writing a valid results.json"
    except pm.PapermillExecutionError as exc:
        status, error = "failed", f"{exc.ename}: {exc.evalue}"
    except Exception as exc:  # a broken kernel, a disk error, ...
        status, error = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        if warm and status == "failed":
            _drop_warm(kernel_name)  # a failed run may leave the kernel in any state
        for var, val in env_backup.items():
            if val is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = val
    if partial.exists():
        os.replace(partial, rd / EXECUTED)
    seconds = time.perf_counter() - start
    if status == "failed":
        (rd / RESULTS).unlink(missing_ok=True)
        try:
            atomic_write_json(rd / ERROR, {"params": params, "notebook": notebook, "error": error})
        except OSError:
            pass
    return {"run_id": rd.name, "status": status, "seconds": seconds, "error": error}
