"""Parameter sweeps of chapter notebooks, in parallel on Dask.

``python -m twolayer.tools.sweep NOTEBOOK --grid '{"seed": [0, 1], "gamma": [0.5, 0.9]}' --out DIR``
or :func:`run_sweep` executes the notebook once per point of the grid (the Cartesian product of
the grid's lists, plus the ``fixed`` parameters), each run with the notebook runner
(:func:`twolayer.tools.runner.execute_run`), on a local Dask cluster by default or on any
running Dask scheduler given by address (a cluster, SLURM through dask-jobqueue, ...).

The output folder holds, per run, ``runs/<run_id>/`` with the executed notebook
(``notebook.ipynb``, kept for inspection) and the notebook's ``results.json``; and, for the
whole sweep, ``sweep.json`` (what was asked) and the tidy table ``table.parquet`` /
``table.csv`` (one row per run: ``run_id``, ``status``, the parameters, the metrics flattened
with dotted names, ``checks_passed``: no check failed, not-applicable ones included), which
figure pages read.

Guarantees:

* **resumable** -- a run counts as done only when its ``results.json`` exists, parses and
  records the run's parameters; the notebook writes it atomically as its last act, so a run
  killed half-way leaves nothing that counts as done, and a re-run of the sweep executes only
  the runs that are not done;
* **failures are isolated** -- a failing run is reported with its notebook and error (also in
  ``runs/<run_id>/error.json``) and does not stop the others;
* **one sweep per folder** -- a second sweep on the same folder while one is running stops at
  once with a clear message (an advisory ``flock`` on ``sweep.lock``);
* **loopback by default** -- the local cluster's scheduler, workers and dashboard listen on
  127.0.0.1 unless another address is named.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import hashlib
import itertools
import json
import os
import sys
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.io import atomic_write_bytes, atomic_write_csv, atomic_write_json, to_jsonable
from .runner import ERROR, EXECUTED, RESULTS, execute_run, is_done


class SweepError(RuntimeError):
    """A sweep cannot start (bad grid, busy folder, unreachable scheduler)."""


# --- the grid -------------------------------------------------------------------------------


def expand_grid(grid: Mapping[str, Iterable], fixed: Mapping[str, Any] | None = None) -> list[dict]:
    """Cartesian product of ``grid``'s lists (in key order), each merged over ``fixed``."""
    fixed = dict(fixed or {})
    if not isinstance(grid, Mapping) or not grid:
        raise SweepError("the grid must be a non-empty mapping of parameter name -> list of values")
    keys = list(grid)
    values = []
    for k in keys:
        v = grid[k]
        if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
            raise SweepError(f"grid[{k!r}] must be a list of values, got {v!r}")
        v = list(v)
        if not v:
            raise SweepError(f"grid[{k!r}] is empty")
        values.append(v)
    overlap = set(keys) & set(fixed)
    if overlap:
        raise SweepError(f"parameters both swept and fixed: {sorted(overlap)}")
    if "results_path" in keys or "results_path" in fixed:
        raise SweepError("results_path is set by the sweep for each run")
    return [{**fixed, **dict(zip(keys, combo))} for combo in itertools.product(*values)]


def run_id(params: Mapping[str, Any]) -> str:
    """A stable name for a run: a hash of its parameters (order-independent)."""
    blob = json.dumps(to_jsonable(dict(params)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# --- the table ----------------------------------------------------------------------------------


def _flatten(prefix: str, obj: Any, out: dict) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(obj, list):
        out[prefix] = json.dumps(obj)
    else:
        out[prefix] = obj


def gather(out_dir: str | os.PathLike, runs: list[dict] | None = None) -> Any:
    """Collect every run of the sweep in ``out_dir`` into one tidy table (a pandas DataFrame),
    written atomically to ``table.parquet`` and ``table.csv``. Rows are sorted by ``run_id``
    so that a resumed sweep and a clean sweep give the same table."""
    import pandas as pd

    out = Path(out_dir)
    if runs is None:
        runs = json.loads((out / "sweep.json").read_text())["runs"]
    rows = []
    for params in runs:
        rid = run_id(params)
        rd = out / "runs" / rid
        row: dict[str, Any] = {"run_id": rid}
        _flatten("", {k: v for k, v in params.items()}, row)
        if is_done(rd, params):
            res = json.loads((rd / RESULTS).read_text())
            row["status"] = "done"
            m: dict[str, Any] = {}
            _flatten("", res["metrics"], m)
            row.update({f"metrics.{k}": v for k, v in m.items()})
            # null = not applicable at these parameters (a theorem outside its hypotheses)
            row["checks_passed"] = all(v is None or bool(v) for v in res["checks"].values())
        else:
            row["status"] = "failed" if (rd / ERROR).exists() else "missing"
        rows.append(row)
    df = pd.DataFrame(rows).sort_values("run_id", kind="stable").reset_index(drop=True)
    import io as _io

    buf = _io.BytesIO()
    df.to_parquet(buf, index=False)
    atomic_write_bytes(out / "table.parquet", buf.getvalue())
    atomic_write_csv(out / "table.csv", df.to_dict("records"))
    return df


def read_table(out_dir: str | os.PathLike):
    """The tidy table of a sweep folder (Parquet); a clear :class:`SweepError` if there is none."""
    import pandas as pd

    path = Path(out_dir) / "table.parquet"
    if not path.exists():
        raise SweepError(
            f"no sweep table at {path}: run `python -m twolayer.tools.sweep NOTEBOOK "
            f"--grid ... --out {out_dir}` first"
        )
    return pd.read_parquet(path)


# --- the sweep ----------------------------------------------------------------------------------


@contextmanager
def _folder_lock(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    fh = open(out / "sweep.lock", "a+")
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise SweepError(
                    f"another sweep is running on {out} (sweep.lock is held); "
                    "wait for it to finish or use another --out folder"
                ) from None
            raise
        yield
    finally:
        fh.close()


@dataclass
class SweepReport:
    out_dir: Path
    total: int
    skipped: int = 0
    done: list[str] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)
    table: Any = None

    def summary(self) -> str:
        lines = [
            f"sweep in {self.out_dir}: {self.total} runs, {self.skipped} already done, "
            f"{len(self.done)} executed now, {len(self.failed)} failed"
        ]
        for f in self.failed:
            lines.append(
                f"  FAILED {f['run_id']} {f['params']}: {f['error']} (notebook: {f['notebook']})"
            )
        return "\n".join(lines)


def _local_client(n_workers: int | None):
    from dask.distributed import Client, LocalCluster

    n = n_workers or max(1, min(os.cpu_count() or 1, 4))
    cluster = LocalCluster(
        n_workers=n,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=40,
    )
    return Client(cluster), cluster


def client_for(scheduler: str | None = None, n_workers: int | None = None):
    """``(client, closer)``: a client of the scheduler at ``scheduler``, else of a new local
    cluster on 127.0.0.1; ``closer()`` closes what was opened here."""
    if scheduler:
        from dask.distributed import Client

        try:
            client = Client(scheduler, timeout="20s")
        except OSError as exc:
            raise SweepError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        return client, client.close
    client, cluster = _local_client(n_workers)

    def close():
        client.close()
        cluster.close()

    return client, close


def submit_runs(
    client,
    jobs: list[tuple[str, dict, Path]],
    kernel_name: str = "python3",
    progress: bool = False,
    *,
    desc: str = "runs",
    warm: bool = False,
):
    """Execute ``(notebook, params, run_dir)`` jobs on ``client``; yield ``(job, result)`` as
    each finishes, ``result`` as :func:`~twolayer.tools.runner.execute_run` returns it (a
    worker that died gives a failed result, never an exception)."""
    from dask.distributed import as_completed
    from tqdm import tqdm

    futures = {
        client.submit(execute_run, str(nb), p, str(rd), kernel_name, warm=warm, pure=False): (
            nb,
            p,
            rd,
        )
        for nb, p, rd in jobs
    }
    bar = tqdm(total=len(futures), desc=desc, disable=not progress, file=sys.stderr)
    for fut in as_completed(futures):
        job = futures[fut]
        try:
            res = fut.result()
        except Exception as exc:  # the worker process died, ...
            res = {
                "run_id": Path(job[2]).name,
                "status": "failed",
                "seconds": None,
                "error": f"{type(exc).__name__}: {exc}",
            }
        bar.update(1)
        yield job, res
    bar.close()


def run_sweep(
    notebook: str | os.PathLike,
    grid: Mapping[str, Iterable],
    out_dir: str | os.PathLike,
    fixed: Mapping[str, Any] | None = None,
    *,
    scheduler: str | None = None,
    client=None,
    n_workers: int | None = None,
    progress: bool | None = None,
    kernel_name: str = "python3",
) -> SweepReport:
    """Run ``notebook`` over ``grid`` (see the module docstring); return a :class:`SweepReport`.

    ``client``: an existing ``dask.distributed.Client``; else ``scheduler`` (an address such
    as ``tcp://10.0.0.5:8786``) is connected to; else a local cluster of ``n_workers`` worker
    processes on 127.0.0.1 is started and closed afterwards."""
    nb = Path(notebook).resolve()
    if not nb.exists():
        raise SweepError(f"notebook {notebook} does not exist")
    out = Path(out_dir).resolve()
    runs = expand_grid(grid, fixed)
    if progress is None:
        progress = sys.stderr.isatty()
    with _folder_lock(out):
        atomic_write_json(
            out / "sweep.json",
            {"notebook": str(nb), "grid": dict(grid), "fixed": dict(fixed or {}), "runs": runs},
        )
        todo = [p for p in runs if not is_done(out / "runs" / run_id(p), p)]
        report = SweepReport(out, total=len(runs), skipped=len(runs) - len(todo))
        if todo:
            close = None
            if client is None:
                client, close = client_for(scheduler, n_workers)
            try:
                jobs = [(str(nb), p, out / "runs" / run_id(p)) for p in todo]
                for (_, p, rd), res in submit_runs(
                    client, jobs, kernel_name, progress, desc=f"sweep {nb.stem}"
                ):
                    if res["status"] == "done":
                        report.done.append(res["run_id"])
                    else:
                        report.failed.append(
                            {
                                "run_id": res["run_id"],
                                "params": p,
                                "error": res["error"],
                                "notebook": str(Path(rd) / EXECUTED),
                            }
                        )
            finally:
                if close is not None:
                    close()
        report.table = gather(out, runs)
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m twolayer.tools.sweep",
        description="Run a chapter notebook over a parameter grid with papermill on Dask.",
    )
    ap.add_argument("notebook", help="the .ipynb to execute (e.g. notebooks/paper_a/setting.ipynb)")
    ap.add_argument(
        "--grid",
        required=True,
        help="JSON object of parameter -> list of values, e.g. '{\"seed\": [0, 1]}'",
    )
    ap.add_argument("--out", required=True, help="output folder (re-use it to resume)")
    ap.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a fixed parameter for every run (value parsed as JSON, else a string)",
    )
    ap.add_argument(
        "--scheduler", help="address of a running Dask scheduler (default: local cluster)"
    )
    ap.add_argument("--workers", type=int, default=None, help="local cluster size")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    try:
        grid = json.loads(args.grid)
    except ValueError as exc:
        ap.error(f"--grid is not valid JSON: {exc}")
    fixed = {}
    for item in args.param:
        if "=" not in item:
            ap.error(f"--param {item!r} must look like NAME=VALUE")
        k, v = item.split("=", 1)
        try:
            fixed[k] = json.loads(v)
        except ValueError:
            fixed[k] = v
    try:
        report = run_sweep(
            args.notebook,
            grid,
            args.out,
            fixed=fixed,
            scheduler=args.scheduler,
            n_workers=args.workers,
            progress=False if args.no_progress else None,
        )
    except SweepError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.summary())
    print(f"table: {report.out_dir / 'table.parquet'} ({len(report.table)} rows)")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
