"""Reference results: every chapter's smoke-profile metrics from the locked build, and the
comparison of a fresh build with them.

``make update-reference`` (``python -m twolayer.tools.reference update``) runs every chapter in the
smoke profile at its own defaults, as the test suite's strict build runs it (a fresh kernel,
one BLAS thread), and again at ``--seeds`` seeds no page uses, and writes
``tests/reference/smoke/<paper>/<chapter>.json``: each metric (nested lists and dicts
flattened to ``name/key/index`` paths) with its value at the defaults, its kind and its
tolerance. The kind says what the metric is, and the tolerance follows from it:

``exact``
    text, booleans, ``None``, and numbers that every seed gives the same integer value
    (counts, sizes, parameters): compared for equality.
``deterministic``
    a float that every seed gives the same value (a closed form, a quadrature, a solver's
    answer on data that do not depend on the seed): equal up to its rounding level, the
    larger of ``RTOL * |value| + ATOL`` (``RTOL = 1e-6``: an iterative solver stops at a
    relative accuracy of 1e-8, and another CPU may take another path to it) and ``K_ROUND``
    (10) times the largest difference measured between arithmetic paths: the chapter run
    again at its defaults with other kernels (``KERNEL_PATHS``: OpenBLAS's Nehalem kernels,
    MKL limited to SSE4.2 and PyTorch without vector units; OpenBLAS's Haswell kernels, MKL
    and PyTorch limited to AVX2). A quantity that amplifies rounding (a ratio over a small
    gap, say) gets the room it needs, measured, not guessed.
``monte-carlo``
    a number that moves with the seed (an estimate from random data or a random
    initialization): within ``K_SPREAD`` standard deviations of its spread over the seeds
    (``K_SPREAD = 3 sqrt 2``: three standard deviations of the difference of two independent
    draws), and never tighter than its rounding level. On the same machine and lock the build
    is bitwise the same; another CPU may change such a metric as much as another draw does,
    never more.

:func:`compare_chapter` and :func:`compare_dir` list every metric of a fresh build's results
that moved (``--all``) or moved beyond its tolerance, naming the chapter, the metric, both
values, the kind and the tolerance. The test ``tests/notebooks/test_reference_results.py``
compares the suite's smoke build with the committed reference; ``make test-latest`` prints
what the newest dependencies move. Entry point (tools layer): imports the library's
foundations and the sweep runner.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import statistics
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.fmt import fmt
from ..core.io import atomic_write_json, repository_root
from ..core.lockfile import summary as lock_summary

ROOT = repository_root()
REFERENCE_DIR = ROOT / "tests" / "reference" / "smoke"
RTOL = 1e-6
ATOL = 1e-9
K_SPREAD = 3 * math.sqrt(2)
K_ROUND = 10.0
# other arithmetic paths, whose differences measure a metric's rounding level: the most
# portable kernels every x86-64 CPU runs, and the AVX2 kernels most CPUs of the last decade run
KERNEL_PATHS = {
    "portable": {
        "OPENBLAS_CORETYPE": "Nehalem",
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
        "ATEN_CPU_CAPABILITY": "default",
    },
    "avx2": {
        "OPENBLAS_CORETYPE": "Haswell",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "ATEN_CPU_CAPABILITY": "avx2",
    },
}
SEED_BASE = 5000  # the seeds of the spread: none of them is a page's default
KINDS = ("exact", "deterministic", "monte-carlo")


# --- metrics as flat paths ---------------------------------------------------------------------


def flatten(metrics: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a/b/0": leaf}``: every leaf of nested dicts and lists, keyed by its path."""
    out: dict[str, Any] = {}
    if isinstance(metrics, dict):
        for k, v in metrics.items():
            out.update(flatten(v, f"{prefix}/{k}" if prefix else str(k)))
    elif isinstance(metrics, (list, tuple)):
        for i, v in enumerate(metrics):
            out.update(flatten(v, f"{prefix}/{i}" if prefix else str(i)))
    else:
        out[prefix] = metrics
    return out


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _same(a: Any, b: Any) -> bool:
    """Equality in which NaN equals NaN."""
    if _number(a) and _number(b) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


# --- the reference -----------------------------------------------------------------------------


def entry(value: Any, others: list[Any], paths: list[Any] = ()) -> dict:
    """One metric's reference from its ``value`` at the defaults, its values at other seeds
    (``others``, where the metric exists there) and its values at the defaults computed with
    the ``KERNEL_PATHS`` (``paths``; empty: not measured): ``{"value", "kind", "tol",
    "spread", "rounding", "seeds"}`` (see the module docstring for the kinds)."""
    nums = [v for v in others if _number(v) and math.isfinite(v)]
    base = {"value": value, "spread": None, "rounding": None, "seeds": len(others)}
    if not _number(value) or not math.isfinite(value):
        return {**base, "kind": "exact", "tol": 0.0}
    floor = RTOL * abs(value) + ATOL
    alt = [p for p in paths if _number(p) and math.isfinite(p)]
    if alt:
        base["rounding"] = max(abs(p - value) for p in alt)
        floor = max(floor, K_ROUND * base["rounding"])
    if len(nums) >= 2 and (len(set(nums + [value])) > 1):
        sd = statistics.stdev(nums + [value])
        return {**base, "kind": "monte-carlo", "tol": max(K_SPREAD * sd, floor), "spread": sd}
    integral = isinstance(value, int) or float(value).is_integer()
    if integral and all(v == value for v in [*nums, *paths]):
        return {**base, "kind": "exact", "tol": 0.0}
    return {**base, "kind": "deterministic", "tol": floor}


def build(default: dict, seeds: list[dict], paths: list[dict] = ()) -> dict[str, dict]:
    """A chapter's reference: :func:`entry` for every metric of ``default`` (the metrics at the
    chapter's defaults), its spread taken over ``seeds`` (the metrics at other seeds), its
    rounding level from ``paths`` (the metrics at the defaults with the ``KERNEL_PATHS``)."""
    flat = flatten(default)
    others = [flatten(m) for m in seeds]
    alts = [flatten(m) for m in paths]
    return {
        k: entry(v, [o[k] for o in others if k in o], [a[k] for a in alts if k in a])
        for k, v in sorted(flat.items())
    }


@dataclass(frozen=True)
class Moved:
    """A metric that differs from its reference: ``beyond`` when by more than ``tol``."""

    chapter: str
    metric: str
    reference: Any
    value: Any
    kind: str
    tol: float
    beyond: bool

    def __str__(self) -> str:
        if self.kind == "missing":
            return (
                f"{self.chapter}: metric {self.metric!r} is in the reference but not in the build"
            )
        if self.kind == "new":
            return (
                f"{self.chapter}: metric {self.metric!r} = {self.value!r} is not in the "
                "reference (make update-reference)"
            )
        diff = ""
        if _number(self.reference) and _number(self.value):
            diff = f", |difference| {fmt(abs(self.value - self.reference))}"
        verdict = "beyond" if self.beyond else "within"
        return (
            f"{self.chapter}: {self.metric}: reference {self.reference!r}, this build "
            f"{self.value!r}{diff}, {verdict} the {self.kind} tolerance {fmt(self.tol)}"
        )


def compare_chapter(chapter: str, reference: dict[str, dict], metrics: dict) -> list[Moved]:
    """Every metric of ``metrics`` (a results file's ``metrics``) that differs from
    ``reference`` (:func:`build`'s output), with missing and new metrics, which always count
    as beyond tolerance."""
    flat = flatten(metrics)
    out = []
    for name, ref in reference.items():
        if name not in flat:
            out.append(Moved(chapter, name, ref["value"], None, "missing", 0.0, True))
            continue
        v, r = flat[name], ref["value"]
        if _same(v, r):
            continue
        if ref["kind"] != "exact" and _number(v) and _number(r):
            beyond = not (abs(v - r) <= ref["tol"])  # NaN against a number: beyond
        else:
            beyond = True
        out.append(Moved(chapter, name, r, v, ref["kind"], ref["tol"], beyond))
    for name in sorted(set(flat) - set(reference)):
        out.append(Moved(chapter, name, None, flat[name], "new", 0.0, True))
    return out


def reference_path(chapter: str, ref_dir: Path = REFERENCE_DIR) -> Path:
    return Path(ref_dir) / f"{chapter}.json"


def load(chapter: str, ref_dir: Path = REFERENCE_DIR) -> dict:
    """The committed reference file of ``chapter`` (``{"meta", "metrics"}``)."""
    return json.loads(reference_path(chapter, ref_dir).read_text())


def compare_dir(results_dir: Path, ref_dir: Path = REFERENCE_DIR) -> list[Moved]:
    """:func:`compare_chapter` for every chapter with a reference; a chapter without results
    in ``results_dir`` is reported as one missing metric ``*``."""
    out = []
    for ref_file in sorted(Path(ref_dir).glob("*/*.json")):
        chapter = f"{ref_file.parent.name}/{ref_file.stem}"
        res = Path(results_dir) / f"{chapter}.json"
        if not res.exists():
            out.append(Moved(chapter, "*", None, None, "missing", 0.0, True))
            continue
        ref = json.loads(ref_file.read_text())["metrics"]
        out += compare_chapter(chapter, ref, json.loads(res.read_text())["metrics"])
    return out


# --- making it ---------------------------------------------------------------------------------


@contextmanager
def environment(extra: dict[str, str | None]):
    """``os.environ`` with ``extra`` (``None``: the variable unset) while the block runs;
    processes started in it inherit it (used here and by ``tests/nbval_update.py``)."""
    old = {k: os.environ.get(k) for k in extra}
    for k, v in extra.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run_jobs(jobs, env, n_workers, progress, desc):
    """``(job, result)`` for each ``(notebook, params, run_dir)``: runs already finished in
    their folder are reused (``result`` ``None``); the others run on a local Dask cluster
    whose workers, and so whose kernels, have ``env`` added to their environment."""
    from .runner import is_done
    from .sweep import client_for, submit_runs

    todo = [job for job in jobs if not is_done(job[2], job[1])]
    out = [(job, None) for job in jobs if job not in todo]
    if not todo:
        return out
    with environment(env):
        client, close = client_for(None, n_workers)
    try:
        out += list(submit_runs(client, todo, progress=progress, desc=desc))
    finally:
        close()
    return out


def update(
    out_dir: Path = REFERENCE_DIR,
    work_dir: Path = ROOT / "runs" / "reference",
    seeds: int = 5,
    only: list[str] | None = None,
    *,
    n_workers: int | None = None,
    progress: bool | None = None,
) -> list[str]:
    """Run every chapter (or ``only``) in the smoke profile at its defaults, at ``seeds`` other
    seeds, and at its defaults again with each of the ``KERNEL_PATHS``, on local Dask clusters with
    one BLAS thread per kernel (as the test suite's build runs), and write each chapter's
    reference (runs already finished in ``work_dir`` are reused: delete it to start over).
    Return the chapters whose run at the defaults failed (their reference is left as it was).
    A seed at which a chapter stops (a failed check) is left out of the spread and named in
    the reference's ``meta.stopped``."""
    from .robustness import chapter_name, chapters
    from .runner import RESULTS

    work = Path(work_dir).resolve()
    if progress is None:
        progress = sys.stderr.isatty()
    native, portable, owner = [], {}, {}
    for nb in chapters(ROOT, only):
        ch = chapter_name(nb)
        sets = [("default", {"profile": "smoke"})]
        sets += [
            (f"seed{SEED_BASE + k}", {"profile": "smoke", "seed": SEED_BASE + k})
            for k in range(seeds)
        ]
        for name, p in sets:
            native.append((str(nb), p, work / ch / name))
            owner[str(work / ch / name)] = (ch, name)
        for path in KERNEL_PATHS:
            rd = work / ch / f"kernels-{path}"
            portable.setdefault(path, []).append((str(nb), {"profile": "smoke"}, rd))
            owner[str(rd)] = (ch, f"kernels-{path}")
    done = _run_jobs(native, {}, n_workers, progress, "reference")
    for path, env in KERNEL_PATHS.items():
        done += _run_jobs(portable[path], env, n_workers, progress, f"{path} kernels")
    runs: dict[str, dict[str, dict]] = {}
    failed: set[str] = set()  # chapters whose run at the defaults failed
    errors: dict[str, list[str]] = {}  # other runs that stopped: left out
    for (_, _, rd), res in done:
        ch, name = owner[str(rd)]
        if res is not None and res["status"] != "done":
            if name == "default":
                failed.add(ch)
            errors.setdefault(ch, []).append(f"{name}: {res['error']}")
            print(f"{ch} ({name}): {res['error']}", file=sys.stderr)
            continue
        runs.setdefault(ch, {})[name] = json.loads((Path(rd) / RESULTS).read_text())["metrics"]
    lock = lock_summary()
    meta = {
        "date": _dt.date.today().isoformat(),
        "machine": f"{platform.machine()} ({platform.processor() or 'cpu'}), "
        f"{os.cpu_count()} cores, Python {platform.python_version()}",
        "lock_sha256": lock["sha256"],
        "lock_matches": lock["matches"],
        "profile": "smoke",
        "seeds": [SEED_BASE + k for k in range(seeds)],
        "kernel_paths": KERNEL_PATHS,
        "rtol": RTOL,
        "atol": ATOL,
        "k_spread": K_SPREAD,
        "k_round": K_ROUND,
    }
    for ch, got in sorted(runs.items()):
        if ch in failed or "default" not in got:
            continue
        others = [m for name, m in sorted(got.items()) if name.startswith("seed")]
        paths = [m for name, m in sorted(got.items()) if name.startswith("kernels-")]
        metrics = build(got["default"], others, paths)
        info = {**meta, "stopped": errors.get(ch, [])}
        atomic_write_json(reference_path(ch, out_dir), {"meta": info, "metrics": metrics})
    return sorted(failed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m twolayer.tools.reference", description=__doc__.split("\n\n")[0]
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("update", help="run every chapter and write the reference")
    up.add_argument("--out", type=Path, default=REFERENCE_DIR)
    up.add_argument("--work", type=Path, default=ROOT / "runs" / "reference")
    up.add_argument("--seeds", type=int, default=5, help="seeds of the spread (default 5)")
    up.add_argument("--chapters", help="comma-separated, e.g. paper_a/setting,paper_b/stage1")
    up.add_argument("--workers", type=int, default=None)
    cmp = sub.add_parser("compare", help="compare a build's results with the reference")
    cmp.add_argument("results", type=Path, help="a build's results folder (_build/results)")
    cmp.add_argument("--reference", type=Path, default=REFERENCE_DIR)
    cmp.add_argument("--all", action="store_true", help="also list metrics within tolerance")
    args = ap.parse_args(argv)
    if args.cmd == "update":
        if args.seeds < 2:
            ap.error("--seeds must be at least 2 (a spread needs two draws)")
        only = args.chapters.split(",") if args.chapters else None
        failed = update(args.out, args.work, args.seeds, only, n_workers=args.workers)
        if failed:
            print("no reference written for: " + ", ".join(failed), file=sys.stderr)
            return 1
        print(f"reference written to {args.out}")
        return 0
    moved = compare_dir(args.results, args.reference)
    shown = [m for m in moved if args.all or m.beyond]
    for m in shown:
        print(m)
    beyond = sum(m.beyond for m in moved)
    print(f"{len(moved)} metrics moved, {beyond} beyond their tolerance")
    return 1 if beyond else 0


if __name__ == "__main__":
    raise SystemExit(main())
