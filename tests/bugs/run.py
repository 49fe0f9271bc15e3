"""The planted-bug benchmark (``make bugs``): realistic one-line bugs, kept in
``tests/bugs/bugs.yml``, planted one at a time in a copy of the checkout; for each, the unit
tests (``make unit``'s selection) run, and for a bug they miss, the page it would change runs
at the smoke profile. The report gives caught/total per layer and overall, and is written to
``book/generated/bugs.md`` (shown on the Robustness page) and ``runs/bugs/bugs.json``.

Each entry of ``bugs.yml``::

    - id: B06
      layer: runner | formula | contract | claims | sweep | chapter
      file: lib/twolayer/paper_a/rankdecay.py
      old: 'loss="logistic",'          # must occur exactly once in the file
      new: 'loss="exp",'
      why: Figure 1 trained with the exponential loss instead of the logistic
      page: paper_a/figure1            # optional: the page whose numbers or words it changes

A bug whose ``old`` text no longer occurs exactly once is *stale*: the benchmark stops and
names it, so the set follows the code.

Usage: ``python tests/bugs/run.py [--only B06,B07] [--no-smoke] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BUGS = Path(__file__).with_name("bugs.yml")
UNIT = ["tests/core", "tests/page", "tests/paper_a", "tests/paper_b", "tests/entry_points"]
LAYERS = ("formula", "runner", "chapter", "contract", "claims", "sweep")


def load(path: Path = BUGS) -> list[dict]:
    bugs = yaml.safe_load(path.read_text(encoding="utf-8"))
    seen = set()
    for b in bugs:
        missing = {"id", "layer", "file", "old", "new", "why"} - set(b)
        if missing:
            raise ValueError(f"bug {b.get('id')}: missing {sorted(missing)}")
        if b["id"] in seen:
            raise ValueError(f"bug {b['id']} is listed twice")
        if b["layer"] not in LAYERS:
            raise ValueError(f"bug {b['id']}: layer must be one of {LAYERS}")
        if b["old"] == b["new"]:
            raise ValueError(f"bug {b['id']}: old and new are the same")
        seen.add(b["id"])
    return bugs


def stale(bugs: list[dict], root: Path = ROOT) -> list[str]:
    """The bugs whose ``old`` text does not occur exactly once in their file under ``root``."""
    out = []
    for b in bugs:
        path = root / b["file"]
        n = path.read_text(encoding="utf-8").count(b["old"]) if path.exists() else 0
        if n != 1:
            out.append(f"{b['id']}: {b['file']} has {n} occurrences of {b['old']!r}")
    return out


def _copy_checkout(dest: Path) -> None:
    """The checkout's files as CI sees them (tracked, and untracked but not ignored)."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _env(copy: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy / "lib")  # the copy's library, before the editable install
    env["OMP_NUM_THREADS"] = "1"
    env["BOOK_PROFILE"] = "smoke"
    return env


def _near(copy: Path, bug_file: str) -> list[str]:
    """The unit test files named after the bug's module (``kkt.py``: ``test_kkt*.py``; a chapter
    module ``chapters/x.py``: ``test_chapter_x.py``), tried first: a bug they catch needs no
    full run. The selection stays ``make unit``'s (same markers)."""
    stem = Path(bug_file).stem
    pattern = f"test_chapter_{stem}.py" if "/chapters/" in bug_file else f"test_{stem}*.py"
    return sorted(str(p.relative_to(copy)) for d in UNIT for p in (copy / d).glob(pattern))


def _pytest(copy: Path, paths: list[str], jobs: int) -> tuple[bool, str]:
    cmd = [sys.executable, "-m", "pytest", *paths, "-m", "unit and not slow", "-x", "-q"]
    cmd += ["-p", "no:cacheprovider", "-n", str(jobs)] if jobs > 1 else ["-n", "0"]
    r = subprocess.run(cmd, cwd=copy, env=_env(copy), capture_output=True, text=True)
    failed = [ln for ln in r.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    last = r.stdout.strip().splitlines()[-1:] or [""]
    # exit 5: no test collected (a near selection without unit tests) is not a catch
    return r.returncode not in (0, 5), (failed[0] if failed else last[0])[:200]


def _unit(copy: Path, jobs: int, bug_file: str | None = None) -> tuple[bool, str]:
    """Run ``make unit``'s selection in ``copy`` (the files near ``bug_file`` first):
    ``(caught, first failing test or error)``."""
    near = _near(copy, bug_file) if bug_file else []
    if near:
        caught, by = _pytest(copy, near, 1)
        if caught:
            return caught, by
    return _pytest(copy, UNIT, jobs)


def _smoke(copy: Path, page: str, out: Path) -> tuple[bool, str]:
    """Run ``page`` at the smoke profile in ``copy``: ``(caught, why)``."""
    cmd = [sys.executable, "-m", "twolayer.tools.cli", "run", page, "--profile", "smoke"]
    cmd += ["--root", str(copy), "--out", str(out)]
    r = subprocess.run(cmd, cwd=copy, env=_env(copy), capture_output=True, text=True)
    tail = (r.stderr or r.stdout).strip().splitlines()
    why = next((ln for ln in reversed(tail) if "Error" in ln or "Failed" in ln), tail[-1:] or [""])
    return r.returncode != 0, (why if isinstance(why, str) else why[0])[:200]


def run(bugs: list[dict], smoke: bool = True, jobs: int = 2) -> dict:
    with tempfile.TemporaryDirectory(prefix="twolayer-bugs-") as tmp:
        copy = Path(tmp) / "checkout"
        _copy_checkout(copy)
        problems = stale(bugs, copy)
        if problems:
            raise SystemExit("stale bugs (update tests/bugs/bugs.yml):\n" + "\n".join(problems))
        base, why = _unit(copy, jobs)
        if base:
            raise SystemExit(f"the unit tests fail without any bug: {why}")
        rows = []
        for k, b in enumerate(bugs, 1):
            path = copy / b["file"]
            original = path.read_text(encoding="utf-8")
            path.write_text(original.replace(b["old"], b["new"]), encoding="utf-8")
            t0 = time.perf_counter()
            try:
                caught, by = _unit(copy, jobs, b["file"])
                smoke_caught, smoke_by = None, ""
                if not caught and smoke and b.get("page"):
                    smoke_caught, smoke_by = _smoke(copy, b["page"], Path(tmp) / "runs" / b["id"])
            finally:
                path.write_text(original, encoding="utf-8")
            row = {
                "id": b["id"],
                "layer": b["layer"],
                "why": b["why"],
                "file": b["file"],
                "unit": caught,
                "unit_by": by if caught else "",
                "smoke": smoke_caught,
                "smoke_by": smoke_by,
                "seconds": round(time.perf_counter() - t0, 1),
            }
            rows.append(row)
            mark = "caught" if caught else ("caught at smoke" if smoke_caught else "MISSED")
            print(
                f"[{k}/{len(bugs)}] {b['id']} {b['layer']}: {mark} ({row['seconds']} s)", flush=True
            )
    return {"date": _dt.date.today().isoformat(), "rows": rows}


def summary(report: dict) -> dict:
    rows = report["rows"]
    out = {}
    for layer in LAYERS + ("all",):
        sel = [r for r in rows if layer in ("all", r["layer"])]
        if sel:
            out[layer] = {
                "total": len(sel),
                "unit": sum(r["unit"] for r in sel),
                "unit_or_smoke": sum(bool(r["unit"] or r["smoke"]) for r in sel),
            }
    return out


def markdown(report: dict) -> str:
    s = summary(report)
    a = s["all"]
    lines = [
        f"Run on {report['date']}: {a['total']} planted bugs (`tests/bugs/bugs.yml`), one at a "
        f"time. `make unit` caught **{a['unit']} of {a['total']}** "
        f"({100 * a['unit'] / a['total']:.0f}%); with the smoke run of the page each missed "
        f"bug would change, **{a['unit_or_smoke']} of {a['total']}**.\n",
        "| layer | bugs | caught by `make unit` | caught by unit or the page's smoke run |",
        "|---|---:|---:|---:|",
    ]
    for layer in LAYERS:
        if layer in s:
            v = s[layer]
            lines.append(f"| {layer} | {v['total']} | {v['unit']} | {v['unit_or_smoke']} |")
    missed = [r for r in report["rows"] if not r["unit"]]
    if missed:
        lines.append("\nMissed by `make unit`:\n")
        for r in missed:
            smoke = {True: "caught by the page's smoke run", False: "missed by the smoke run too"}
            lines.append(
                f"- {r['id']} ({r['layer']}, `{r['file']}`): {r['why']}; "
                f"{smoke.get(r['smoke'], 'no page to run')}"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated bug ids")
    ap.add_argument("--no-smoke", action="store_true", help="skip the pages' smoke runs")
    ap.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers (default 2)")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "bugs" / "bugs.json")
    ap.add_argument("--page", type=Path, default=ROOT / "book" / "generated" / "bugs.md")
    args = ap.parse_args(argv)
    bugs = load()
    if args.only:
        wanted = set(args.only.split(","))
        bugs = [b for b in bugs if b["id"] in wanted]
    report = run(bugs, smoke=not args.no_smoke, jobs=args.jobs)
    if args.only and args.out.exists():  # rerun some bugs: merge them into the last full run
        last = json.loads(args.out.read_text(encoding="utf-8"))
        new = {r["id"]: r for r in report["rows"]}
        order = [b["id"] for b in load()]
        rows = {r["id"]: r for r in last["rows"]} | new
        report = {"date": report["date"], "rows": [rows[i] for i in order if i in rows]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    if len(report["rows"]) == len(load()):
        args.page.write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
