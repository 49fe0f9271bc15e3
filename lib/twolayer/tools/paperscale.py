"""``python -m twolayer.tools.paperscale runs/paper`` (``make paper-collect``): the paper-profile
runs that ``make paper-times`` kept, recorded for the book.

``make paper-times`` (``python -m twolayer.tools.bench --profile paper --keep runs/paper``)
keeps each chapter's executed notebook and results file; :func:`collect` turns them into a
small committed record per chapter, ``book/generated/paper/<paper>/<chapter>.json`` (the run's
parameters, environment, time, peak memory and date, its checks as a tidy table and its scalar
metrics) with the run's figures beside it as PNG files, and :func:`profile_table` writes the
"Execution times" page's table of the paper profile (``book/generated/paper_profile.md``).
Each chapter's page shows its record with :func:`twolayer.page.paperscale.beside`.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import math
import os
import platform
import sys
from pathlib import Path

from ..core.io import atomic_write_bytes, atomic_write_json
from ..page.paperscale import GENERATED, check_rows, where_computed

MAX_FIGURES = 8


def scalar_metrics(results: dict) -> dict:
    """The results' metrics that are single numbers (arrays stay in the run store)."""
    out = {}
    for k, v in sorted(results.get("metrics", {}).items()):
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            out[k] = v
    return out


def notebook_figures(nb_path: str | os.PathLike) -> list[dict]:
    """The captioned figures of an executed notebook, in order: ``{"name", "caption",
    "png"}`` (PNG bytes), from the cells with ``mystnb.figure`` metadata."""
    import nbformat

    nb = nbformat.read(Path(nb_path), as_version=4)
    out = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("mystnb", {}).get("figure")
        if cell.cell_type != "code" or not meta:
            continue
        for o in cell.get("outputs", []):
            png = o.get("data", {}).get("image/png") if "data" in o else None
            if png:
                out.append(
                    {
                        "name": meta.get("name", f"figure-{len(out) + 1}"),
                        "caption": meta.get("caption", ""),
                        "png": base64.b64decode(png),
                    }
                )
                break
    return out


def collect(
    src: str | os.PathLike,
    root: str | os.PathLike,
    progress: dict | None = None,
    machine: str | None = None,
    *,
    date: str | None = None,
    profile: str = "paper",
) -> list[Path]:
    """Write ``book/generated/paper/<paper>/<chapter>.json`` (and its figures,
    ``<chapter>/<name>.png``) for every chapter run in ``src`` (``<paper>/<chapter>.json`` and
    ``.ipynb``, as ``bench --keep`` leaves them). ``progress``: the bench's progress record
    (``{"chapters": {chapter: {"seconds", "rss_mb", "error"}}}``) for the time and memory;
    ``machine`` and ``date``: where and when (default: this machine, and the day the results
    file was written, so a later collect does not re-date a run). Runs of another
    ``profile`` are refused (a smoke run must never pass for the paper's scale). Returns the
    records written."""
    src, root = Path(src), Path(root)
    chapters = (progress or {}).get("chapters", {})
    written = []
    for res_file in sorted(src.glob("*/*.json")):
        chapter = f"{res_file.parent.name}/{res_file.stem}"
        results = json.loads(res_file.read_text())
        ran = results.get("params", {}).get("profile")
        if ran != profile:
            raise ValueError(f"{res_file}: a run of the {ran!r} profile, not {profile!r}")
        timing = chapters.get(chapter, {})
        dest = root / GENERATED / f"{chapter}.json"
        figs = []
        nb = res_file.with_suffix(".ipynb")
        if nb.exists():
            for f in notebook_figures(nb)[:MAX_FIGURES]:
                png = dest.with_suffix("") / f"{f['name']}.png"
                atomic_write_bytes(png, f["png"])
                figs.append({"name": f["name"], "caption": f["caption"], "file": png.name})
        record = {
            "chapter": chapter,
            "profile": results.get("params", {}).get("profile"),
            "date": date or _dt.date.fromtimestamp(res_file.stat().st_mtime).isoformat(),
            "machine": machine or default_machine(),
            "seconds": timing.get("seconds"),
            "peak_rss_mb": timing.get("rss_mb"),
            "params": {k: v for k, v in results.get("params", {}).items() if k != "results_path"},
            "environment": results.get("environment", {}),
            "checks": check_rows(results),
            "metrics": scalar_metrics(results),
            "figures": figs,
        }
        written.append(atomic_write_json(dest, record))
    return written


def default_machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}"


def profile_table(root: str | os.PathLike, progress: dict, note: str = "") -> str:
    """The "Execution times" page's table of the paper profile, one row per chapter: its time,
    peak memory, checks passed and outcome, from the records (``book/generated/paper``) and
    the bench's progress record (which also has the runs that failed or were stopped)."""
    root = Path(root)
    chapters = dict(progress.get("chapters", {}))
    records = {}
    for f in sorted((root / GENERATED).glob("*/*.json")):
        rec = json.loads(f.read_text())
        records[rec["chapter"]] = rec
    dates = sorted({r["date"] for r in records.values()})
    machines = sorted({r["machine"] for r in records.values()})
    lines = []
    if records:
        lines.append(
            f"Measured on {', '.join(dates)} on {'; '.join(machines)}, one chapter per process "
            "with one thread, with `make paper-times` (each chapter once, in a fresh kernel; "
            "peak memory is the kernel's maximum resident set)." + (f" {note}" if note else "")
        )
        lines.append("")
    lines += [
        "| chapter | minutes | peak memory (MB) | checks passed | device, dtype | outcome |",
        "|---|---:|---:|---:|---|---|",
    ]
    for ch in sorted(set(chapters) | set(records)):
        rec, prog = records.get(ch), chapters.get(ch, {})
        secs = (rec or {}).get("seconds") or prog.get("seconds")
        mem = (rec or {}).get("peak_rss_mb") or prog.get("rss_mb")
        if rec is not None:
            applied = [r for r in rec["checks"] if r.get("applies")]
            ok = sum(1 for r in applied if r.get("passed"))
            checks = f"{ok} / {len(applied)}"
            where = where_computed(rec.get("environment", {}))
            outcome = (
                "every applicable check passed"
                if ok == len(applied)
                else "FAILED: " + ", ".join(r["check"] for r in applied if not r.get("passed"))
            )
        else:
            checks, where = "—", "—"
            err = prog.get("error") or "not run"
            if prog.get("timed_out_after"):
                outcome = f"stopped at the cap ({prog['timed_out_after'] / 60:.0f} min)"
                secs = None
            else:
                name, _, rest = err.partition(": ")
                outcome = f"stopped: {name}: {rest.split(':')[0].strip()}" if rest else err
                outcome = outcome[:160]
        lines.append(
            f"| `{ch}` | {'—' if secs is None else f'{secs / 60:.1f}'} | "
            f"{'—' if mem is None else f'{mem:.0f}'} | {checks} | {where} | {outcome} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m twolayer.tools.paperscale",
        description="Record the paper-profile runs kept by `bench --keep` for the book.",
    )
    ap.add_argument("src", help="the folder given to bench --keep (e.g. runs/paper)")
    ap.add_argument("--progress", action="append", default=[], help="bench progress JSON")
    ap.add_argument("--machine", default=None, help="where the runs ran (default: here)")
    ap.add_argument("--date", default=None, help="when (default: today)")
    ap.add_argument("--root", default=".", help="the book's root")
    ap.add_argument("--note", default="", help="a sentence added to the table's lead")
    args = ap.parse_args(argv)
    progress: dict = {"chapters": {}}
    for p in args.progress:
        if Path(p).exists():
            progress["chapters"].update(json.loads(Path(p).read_text()).get("chapters", {}))
    out = collect(args.src, args.root, progress, args.machine, date=args.date)
    for p in out:
        print(p)
    table_md = profile_table(args.root, progress, args.note)
    atomic_write_bytes(Path(args.root) / "book/generated/paper_profile.md", table_md.encode())
    print(table_md)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
