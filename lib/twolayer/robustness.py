"""The robustness harness: every chapter on seeds the pages never use and on random valid
parameter sets, with a table per chapter and per check.

``python -m twolayer.robustness`` (``make robustness``) runs, on the sweep runner (papermill
on Dask, a local cluster on 127.0.0.1 or ``--scheduler ADDRESS``):

* for each chapter ``--seeds`` runs at seeds ``seed_base, seed_base + 1, ...`` (the pages use
  seed 0; the default base 1000 is used by no page or test);
* ``--random`` runs at parameter sets drawn from the chapter's own
  :class:`~twolayer.common.contract.Contract`: each parameter with an ``explore`` range is
  drawn with probability 1/2 (at least one per set), and a set that the contract rejects (a
  constraint across parameters) is drawn again. Sets fall inside and outside the theorems'
  hypotheses; outside, the chapter records its theorem checks as not applicable.

Every check of every run is tallied: passed, not applicable, failed (a run stops at its first
false check, which the error names). A run that fails for another reason counts as an error.
The table goes to the terminal, to ``<out>/robustness.json`` and ``.csv``, and with
``--markdown PATH`` to a Markdown file with the date and the machine (the book's
"Robustness" page includes it). The exit status is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from .common.io import atomic_write_bytes, atomic_write_csv, atomic_write_json, to_jsonable

ROOT = Path(__file__).resolve().parents[2]
SEED_BASE = 1000
FAILED_CHECK = re.compile(r"check '([^']+)' failed")


def chapters(root: Path = ROOT, only: list[str] | None = None) -> list[Path]:
    """The chapter notebooks ``notebooks/<paper>/<name>.ipynb`` (``only``:
    ``paper_a/setting``...)."""
    found = sorted((Path(root) / "notebooks").glob("*/*.ipynb"))
    if only:
        names = {
            p.relative_to(Path(root) / "notebooks").with_suffix("").as_posix(): p for p in found
        }
        missing = [o for o in only if o not in names]
        if missing:
            raise SystemExit(f"unknown chapters {missing}; known: {sorted(names)}")
        found = [names[o] for o in only]
    return found


def chapter_name(nb: Path) -> str:
    return f"{nb.parent.name}/{nb.stem}"


# --- drawing parameter sets -----------------------------------------------------------------


def random_parameter_sets(
    nb: Path,
    count: int,
    profile: str,
    sample_seed: int = 0,
    seed_base: int = SEED_BASE,
    max_tries: int = 200,
) -> list[dict]:
    """``count`` valid parameter sets for the chapter ``nb``, drawn from its contract's
    ``explore`` ranges (see the module docstring); deterministic in ``sample_seed``."""
    import numpy as np

    from .common.contract import ParameterError, load_chapter, validate_parameters

    ns, contract, params_src = load_chapter(nb)
    explorable = {
        k: s
        for k, s in contract.spec.items()
        if s.explore is not None and k not in ("seed", "profile", "results_path")
    }
    if not explorable or count == 0:
        return []
    rng = np.random.default_rng([sample_seed, zlib.crc32(chapter_name(nb).encode())])
    out = []
    for j in range(count):
        for _ in range(max_tries):
            names = [k for k in explorable if rng.random() < 0.5] or [
                list(explorable)[int(rng.integers(len(explorable)))]
            ]
            drawn = {k: to_jsonable(explorable[k].sample(rng)) for k in names}
            try:
                validate_parameters(ns, contract, params_src, {"profile": profile, **drawn})
            except ParameterError:
                continue
            out.append({"profile": profile, "seed": seed_base + 10_000 + j, **drawn})
            break
        else:
            raise RuntimeError(f"{chapter_name(nb)}: no valid parameter set in {max_tries} draws")
    return out


# --- tallying -----------------------------------------------------------------------------------


@dataclass
class Tally:
    kind: str = ""
    runs: int = 0
    passed: int = 0
    not_applicable: int = 0
    failed: int = 0
    failing: list = field(default_factory=list)


def tally(chapter: str, results: list[tuple[dict, dict]]) -> tuple[dict[str, Tally], list[dict]]:
    """Per check of one chapter, from ``(params, result)`` pairs, where ``result`` is
    ``{"status", "error", "results"}``; returns the tallies and the runs that errored."""
    checks: dict[str, Tally] = {}
    errors = []
    for params, res in results:
        if res["status"] == "done":
            r = res["results"]
            for name, ok in r["checks"].items():
                t = checks.setdefault(name, Tally(r["check_details"][name]["kind"]))
                t.runs += 1
                if ok is None:
                    t.not_applicable += 1
                elif ok:
                    t.passed += 1
                else:  # a results file is written only when every check passed
                    t.failed += 1
                    t.failing.append(params)
            continue
        m = FAILED_CHECK.search(res.get("error") or "")
        if m:
            kind = (res.get("error") or "").split(" check ")[0].split()[-1]
            t = checks.setdefault(
                m.group(1), Tally(kind if kind in ("theorem", "observation", "sanity") else "")
            )
            t.runs += 1
            t.failed += 1
            t.failing.append(params)
        else:
            errors.append({"chapter": chapter, "params": params, "error": res.get("error")})
    return checks, errors


@dataclass
class Report:
    rows: list[dict]
    errors: list[dict]
    runs: int
    meta: dict

    @property
    def failures(self) -> int:
        return sum(r["failed"] for r in self.rows) + len(self.errors)

    def text(self) -> str:
        lines = [
            f"robustness: {self.runs} runs, {len(self.rows)} (chapter, check) pairs, "
            f"{self.failures} failures"
        ]
        width = max([len(r["chapter"]) + len(r["check"]) for r in self.rows] + [20]) + 3
        lines.append(f"{'chapter / check':{width}s} {'kind':12s} runs pass  n/a fail")
        for r in self.rows:
            lines.append(
                f"{r['chapter'] + ' / ' + r['check']:{width}s} {r['kind']:12s} "
                f"{r['runs']:4d} {r['passed']:4d} {r['not_applicable']:4d} {r['failed']:4d}"
            )
            for p in r["failing"]:
                lines.append(f"{'':{width}s} FAILED at {json.dumps(p)}")
        for e in self.errors:
            lines.append(f"ERROR {e['chapter']} {json.dumps(e['params'])}: {e['error']}")
        return "\n".join(lines)

    def markdown(self) -> str:
        m = self.meta
        head = (
            f"Run on {m['date']} on {m['machine']}: profile `{m['profile']}`, "
            f"{m['seeds']} seeds per chapter (from {m['seed_base']}) and {m['random']} "
            f"random parameter sets per chapter (sample seed {m['sample_seed']}); "
            f"{self.runs} runs, **{self.failures} failures**.\n\n"
        )
        by_chapter: dict[str, list[dict]] = {}
        for r in self.rows:
            by_chapter.setdefault(r["chapter"], []).append(r)
        out = [
            head,
            "| chapter | check | kind | runs | passed | not applicable | failed |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        for ch, rows in by_chapter.items():
            for i, r in enumerate(rows):
                out.append(
                    f"| {ch if i == 0 else ''} | `{r['check']}` | {r['kind']} | {r['runs']} "
                    f"| {r['passed']} | {r['not_applicable']} | {r['failed']} |"
                )
        fails = [(r["chapter"], r["check"], p) for r in self.rows for p in r["failing"]]
        if fails or self.errors:
            out.append("\nFailing parameter sets:\n")
            out += [f"- {c} / `{k}`: `{json.dumps(p)}`" for c, k, p in fails]
            out += [
                f"- {e['chapter']}: error `{e['error']}` at `{json.dumps(e['params'])}`"
                for e in self.errors
            ]
        return "\n".join(out) + "\n"


def run(
    out_dir: str | os.PathLike,
    profile: str = "smoke",
    seeds: int = 20,
    random_sets: int = 2,
    seed_base: int = SEED_BASE,
    sample_seed: int = 0,
    only: list[str] | None = None,
    root: Path = ROOT,
    client=None,
    scheduler: str | None = None,
    n_workers: int | None = None,
    progress: bool | None = None,
    warm: bool = False,
) -> Report:
    """Run the harness (see the module docstring); finished runs in ``out_dir`` are reused.
    ``warm``: one kernel per worker, reset between runs (:func:`twolayer.sweep.execute_run`)."""
    from .sweep import RESULTS, client_for, is_done, run_id, submit_runs

    out = Path(out_dir).resolve()
    jobs, owner = [], {}
    for nb in chapters(root, only):
        ch = chapter_name(nb)
        sets = [{"profile": profile, "seed": seed_base + k} for k in range(seeds)]
        sets += random_parameter_sets(nb, random_sets, profile, sample_seed, seed_base)
        for p in sets:
            rd = out / ch / run_id(p)
            jobs.append((str(nb), p, rd))
            owner[str(rd)] = ch
    todo = [j for j in jobs if not is_done(j[2], j[1])]
    results: dict[str, dict] = {}
    if todo:
        close = None
        if client is None:
            client, close = client_for(scheduler, n_workers)
        try:
            if progress is None:
                progress = sys.stderr.isatty()
            for (_, _, rd), res in submit_runs(
                client, todo, progress=progress, desc="robustness", warm=warm
            ):
                results[str(rd)] = res
        finally:
            if close is not None:
                close()
    per_chapter: dict[str, list] = {}
    for _nb, p, rd in jobs:
        res = results.get(str(rd), {"status": "done", "error": None})
        if res["status"] == "done" and is_done(rd, p):
            res = {"status": "done", "results": json.loads((Path(rd) / RESULTS).read_text())}
        elif res["status"] == "done":
            res = {"status": "failed", "error": "no results.json"}
        per_chapter.setdefault(owner[str(rd)], []).append((p, res))
    rows, errors = [], []
    for ch, res in per_chapter.items():
        tallies, errs = tally(ch, res)
        errors += errs
        for name, t in tallies.items():
            rows.append(
                {
                    "chapter": ch,
                    "check": name,
                    "kind": t.kind,
                    "runs": t.runs,
                    "passed": t.passed,
                    "not_applicable": t.not_applicable,
                    "failed": t.failed,
                    "failing": t.failing,
                }
            )
    meta = {
        "date": _dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}",
        "profile": profile,
        "seeds": seeds,
        "seed_base": seed_base,
        "random": random_sets,
        "sample_seed": sample_seed,
    }
    report = Report(rows, errors, len(jobs), meta)
    atomic_write_json(out / "robustness.json", {"meta": meta, "rows": rows, "errors": errors})
    atomic_write_csv(
        out / "robustness.csv",
        [{k: (json.dumps(v) if isinstance(v, list) else v) for k, v in r.items()} for r in rows],
    )
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m twolayer.robustness", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--profile", default="smoke", choices=("smoke", "book", "paper"))
    ap.add_argument("--seeds", type=int, default=20, help="seeds per chapter (default 20)")
    ap.add_argument("--random", type=int, default=2, help="random parameter sets per chapter")
    ap.add_argument("--seed-base", type=int, default=SEED_BASE)
    ap.add_argument("--sample-seed", type=int, default=0, help="seed of the parameter sampler")
    ap.add_argument("--chapters", help="comma-separated, e.g. paper_a/setting,paper_b/stage1")
    ap.add_argument("--out", default="runs/robustness", help="output folder (re-use it to resume)")
    ap.add_argument("--markdown", help="also write the table as Markdown (the book's page)")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler")
    ap.add_argument("--workers", type=int, default=None, help="local cluster size")
    ap.add_argument(
        "--warm",
        action="store_true",
        help="reuse one kernel per worker, reset between runs (faster; the book uses fresh ones)",
    )
    args = ap.parse_args(argv)
    report = run(
        args.out,
        args.profile,
        args.seeds,
        args.random,
        args.seed_base,
        args.sample_seed,
        args.chapters.split(",") if args.chapters else None,
        scheduler=args.scheduler,
        n_workers=args.workers,
        warm=args.warm,
    )
    print(report.text())
    if args.markdown:
        atomic_write_bytes(Path(args.markdown), report.markdown().encode())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
