"""The paper scale beside the book's: what a chapter's ``paper`` profile measured, shown on the
chapter's page.

A paper-profile run takes minutes to an hour per chapter on 2 CPU cores, too long for a build.
``make paper-times`` (``python -m twolayer.tools.bench --profile paper --keep runs/paper``) keeps
each chapter's executed notebook and results file; :func:`collect` turns them into a small
committed record per chapter, ``book/generated/paper/<paper>/<chapter>.json`` (the run's
parameters, environment, time, peak memory and date, its checks as a tidy table and its
scalar metrics) with the run's figures beside it as PNG files. In a chapter,
:func:`beside` shows that record next to the page's own run: each check's value at this
build's profile and at the paper's, the run's time and machine, and its figures. Where no
run is recorded it says so (and why, when the measurement recorded a reason).

``python -m twolayer.page.paperscale runs/paper`` (``make paper-collect``) runs
:func:`collect`.
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
from typing import Any

from ..core.io import atomic_write_bytes, atomic_write_json
from .checks import (
    KINDS,
    _fmt,
    _html,
    book_root,
    bound_text,
    display_bundle,
    render_rows,
)

GENERATED = Path("book") / "generated" / "paper"
MAX_FIGURES = 8


def record_path(chapter: str, root: str | os.PathLike | None = None) -> Path | None:
    """``book/generated/paper/<chapter>.json`` under the book's root (``None`` outside it)."""
    root = Path(root) if root is not None else book_root()
    return None if root is None else root / GENERATED / f"{chapter}.json"


# --- making the records (after `make paper-times`) ----------------------------------------


def _scalar(v: Any) -> Any:
    """A check's value as one number or short text (lists: their worst entry is not known
    here, so the list's range is shown)."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, list):
        flat = [x for x in _flatten(v) if isinstance(x, (int, float)) and not isinstance(x, bool)]
        if flat:
            lo, hi = min(flat), max(flat)
            return lo if lo == hi else f"{lo:.4g} .. {hi:.4g}"
    return str(v)[:80]


def _flatten(v):
    for x in v:
        if isinstance(x, list):
            yield from _flatten(x)
        else:
            yield x


def check_rows(results: dict) -> list[dict]:
    """The checks of a results file as a tidy table: one row per check."""
    rows = []
    for name, d in sorted(results.get("check_details", {}).items()):
        rows.append(
            {
                "check": name,
                "kind": d.get("kind"),
                "statement": d.get("statement"),
                "applies": bool(d.get("applies")),
                "value": _scalar(d.get("value")),
                "op": d.get("op"),
                "bound": _scalar(d.get("bound")),
                "passed": results.get("checks", {}).get(name),
                "detail": d.get("detail") or "",
            }
        )
    return rows


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


# --- showing a record on its chapter's page ---------------------------------------------------


def _outcome(row: dict) -> str:
    """A check's result as the check table words it."""
    if not row.get("applies"):
        return "not applicable"
    return {True: "pass", False: "FAIL", None: "—"}[row.get("passed")]


def _bound(row: dict) -> str:
    """A record's bound as the check table shows it (a recorded interval ``"lo .. hi"``, as
    :func:`collect` writes a list, back to ``[lo, hi]``)."""
    bound, op = row.get("bound"), row.get("op")
    if isinstance(bound, str) and " .. " in bound:
        try:
            bound = [float(x) for x in bound.split(" .. ")]
        except ValueError:
            pass
    if op == "in" and not (isinstance(bound, (list, tuple)) and len(bound) == 2):
        return f"in {_fmt(bound)}"
    return bound_text(bound, op)


def _value(row: dict | None) -> str:
    if row is None:
        return "—"
    value = row.get("value")
    if isinstance(value, str) and " .. " in value:
        try:
            value = [float(x) for x in value.split(" .. ")]
            return f"{_fmt(value[0])} to {_fmt(value[1])} ({_outcome(row)})"
        except ValueError:
            pass
    return f"{_fmt(value)} ({_outcome(row)})"


COMPARISON_HEAD = (
    "kind",
    "check",
    "statement",
    "what is measured",
    "bound",
    "this page",
    "paper profile",
)


def comparison(contract, record: dict) -> list[dict]:
    """One row per check, in the check table's order (by kind, then as the page records
    them; checks only the paper run has come last): its kind, statement, what it measures (its
    ``detail``), the bound, and the value and result on this page (at ``contract``'s profile)
    and in the recorded paper-profile run."""
    records = contract.check_records
    mine = {r["check"]: r for r in check_rows(contract.results())}
    theirs = {r["check"]: r for r in record.get("checks", [])}
    order = {k: i for i, k in enumerate(KINDS)}
    names = list(records) + sorted(set(theirs) - set(records))
    rows = []
    for name in names:
        a, b = mine.get(name), theirs.get(name)
        c = records.get(name)
        kind = (a or b)["kind"]
        rows.append(
            {
                "kind": kind,
                "check": name,
                "statement": (a or b).get("statement"),
                "what is measured": " ".join(
                    (c.detail if c else (b or {}).get("detail", "")).split()
                )
                or (
                    "a check of an earlier version of this page, which the paper-profile "
                    "record predates (this page no longer records it)"
                    if c is None
                    else "—"
                ),
                "bound": bound_text(c.bound, c.op) if c else _bound(b),
                "this page": _value(a),
                "paper profile": _value(b),
            }
        )
    rows.sort(key=lambda r: order.get(r["kind"], len(order)))
    return rows


def comparison_table(rows: list[dict], caption: str = "") -> dict[str, str]:
    """The rows of :func:`comparison` as a MIME bundle in the check table's format: MyST
    Markdown (statement links), HTML and plain text."""
    cells = [
        (r["kind"], r["check"], r["statement"], *(r[h] for h in COMPARISON_HEAD[3:])) for r in rows
    ]
    md, plain, html = render_rows(COMPARISON_HEAD, cells, "twolayer-checks twolayer-paperscale")
    lead = f"{caption}\n\n" if caption else ""
    return {
        "text/markdown": lead + "\n".join(md) + "\n",
        "text/html": (f"<p>{_html(caption)}</p>" if caption else "") + "".join(html),
        "text/plain": lead + "\n".join(plain),
    }


def summary(record: dict) -> str:
    """One sentence: where and when the paper-profile run ran, how long, how many checks
    passed."""
    rows = record.get("checks", [])
    applied = [r for r in rows if r.get("applies")]
    passed = sum(1 for r in applied if r.get("passed"))
    secs = record.get("seconds")
    took = f"in {secs / 60:.1f} min" if secs else "(time not recorded)"
    mem = record.get("peak_rss_mb")
    return (
        f"The `paper` profile of this chapter ran on {record.get('date')} on "
        f"{record.get('machine')} ({_where(record.get('environment', {}))}), {took}"
        + (f", peak memory {mem:.0f} MB" if mem else "")
        + f": {passed} of {len(applied)} applicable checks passed"
        + (f" ({len(rows) - len(applied)} not applicable)" if len(rows) > len(applied) else "")
        + "."
    )


def differing_params(mine: dict, theirs: dict) -> dict:
    """The recorded run's parameters whose values differ from this page's."""
    skip = {"profile", "results_path"}
    return {k: v for k, v in sorted(theirs.items()) if k not in skip and _jsonish(mine.get(k)) != v}


def _jsonish(v):
    return json.loads(json.dumps(v, default=str))


def beside(contract, root: str | os.PathLike | None = None, show: bool = True):
    """Show, on a chapter's page, its recorded paper-profile run beside this run: a sentence
    (machine, date, time, checks passed), the table of :func:`comparison` and the run's
    figures. Returns the record (``None`` when there is none)."""
    from IPython.display import Image, Markdown, display

    chapter = contract.chapter
    path = record_path(chapter, root)
    profile = contract.params["profile"] if contract.params else None
    if path is None or not path.exists():
        if show:
            display(
                Markdown(
                    "No run of this chapter's `paper` profile is recorded"
                    + (" in this copy of the book." if path is None else " yet.")
                    + " `make paper-times` runs it and `make paper-collect` records it."
                )
            )
        return None
    record = json.loads(path.read_text())
    if not show:
        return record
    lead = summary(record)
    if profile == "paper":
        lead += " This page itself ran at the paper's scale; the two columns should agree."
    diff = differing_params(contract.params or {}, record.get("params", {}))
    if diff:
        lead += (
            " Its parameters, where they differ from this page's: "
            + ", ".join(f"`{k} = {v!r}`" for k, v in diff.items())
            + "."
        )
    display(Markdown(lead))
    display_bundle(
        comparison_table(
            comparison(contract, record),
            f"Checks at this page's profile ({profile}) and at the paper's:",
        )
    )
    figs = record.get("figures", [])
    for k, f in enumerate(figs, 1):
        png = path.with_suffix("") / f["file"]
        if png.exists():
            display(Markdown(f"**Paper profile, figure {k}.** {f['caption']}"))
            display(Image(filename=str(png)))
    return record


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
            where = _where(rec.get("environment", {}))
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


def _where(env: dict) -> str:
    """Device and dtype as the run recorded them; a chapter without torch ran NumPy on the
    CPU."""
    if "torch" not in env and "device" not in env:
        return "NumPy on the CPU"
    return ", ".join(str(env[k]) for k in ("device", "dtype") if env.get(k)) or "cpu"


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m twolayer.page.paperscale",
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
