"""The paper scale beside the book's: what a chapter's ``paper`` profile measured, shown on the
chapter's page.

A paper-profile run takes minutes to an hour per chapter on 2 CPU cores, too long for a build.
``make paper-times`` keeps each chapter's executed notebook and results file, and
``make paper-collect`` (:mod:`twolayer.tools.paperscale`) turns them into a small committed
record per chapter, ``book/generated/paper/<paper>/<chapter>.json`` (the run's parameters,
environment, time, peak memory and date, its checks as a tidy table (:func:`check_rows`) and
its scalar metrics) with the run's figures beside it as PNG files. In every chapter's page,
:func:`beside` shows that record next to the page's own run: each check's value at this
build's profile and at the paper's, the run's time and machine, and its figures. Where no
run is recorded it says so (and why, when the measurement recorded a reason).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ..core.fmt import fmt
from .checks import (
    KINDS,
    _html,
    book_root,
    bound_text,
    display_bundle,
    render_rows,
)

GENERATED = Path("book") / "generated" / "paper"


def record_path(chapter: str, root: str | os.PathLike | None = None) -> Path | None:
    """``book/generated/paper/<chapter>.json`` under the book's root (``None`` outside it)."""
    root = Path(root) if root is not None else book_root()
    return None if root is None else root / GENERATED / f"{chapter}.json"


# --- a record's checks (written by twolayer.tools.paperscale, read here) --------------------


def _scalar(v: Any) -> Any:
    """A check's value as one number or short text (lists: their worst entry is not known
    here, so the list's range is kept, as ``"lo .. hi"``). This is the record's storage, not a
    display: :func:`comparison` reads a range back and shows it with
    :func:`twolayer.core.fmt.fmt`, as every other number."""
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
    """The checks of a results file as a tidy table, as a record stores them.

    Args:
        results: a results file's content (``checks`` and ``check_details``).

    Returns:
        One row per check, by name: ``check``, ``kind``, ``statement``, ``applies``, ``value``,
        ``op``, ``bound`` (each one number or short text), ``passed`` and ``detail``.
    """
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
        return f"in {fmt(bound)}"
    return bound_text(bound, op)


def _value(row: dict | None) -> str:
    if row is None:
        return "—"
    value = row.get("value")
    if isinstance(value, str) and " .. " in value:
        try:
            value = [float(x) for x in value.split(" .. ")]
            return f"{fmt(value[0])} to {fmt(value[1])} ({_outcome(row)})"
        except ValueError:
            pass
    return f"{fmt(value)} ({_outcome(row)})"


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
        f"{record.get('machine')} ({where_computed(record.get('environment', {}))}), {took}"
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


def where_computed(env: dict) -> str:
    """Where a run computed, from its results' ``environment``: the device and dtype it
    recorded; a chapter without torch ran NumPy on the CPU.

    Args:
        env: the ``environment`` of a results file or a record.

    Returns:
        ``"cuda:0, float32"``, ``"cpu"`` or ``"NumPy on the CPU"``.
    """
    if "torch" not in env and "device" not in env:
        return "NumPy on the CPU"
    return ", ".join(str(env[k]) for k in ("device", "dtype") if env.get(k)) or "cpu"
