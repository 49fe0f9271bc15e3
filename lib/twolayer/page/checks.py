"""Checks of three kinds, hypotheses, and how a page shows them.

Every claim a page makes is recorded as one :class:`Check`:

``theorem``
    a statement of a paper (or a lemma the book states and proves). It *applies* only where
    its hypotheses hold, computed from the page's data and parameters; where they hold, a
    false result stops the notebook (a finding, never a threshold to relax); where they do
    not, the check is recorded as not applicable (``None``) with the reason.
``observation``
    what this page measured at its parameters (a trend, a factor, a crossing), asserted only
    in a robust form (a direction with a margin derived from the spread over seeds, or a
    statement over seeds with its confidence); the prose quotes the measured value through
    MyST-NB ``glue``.
``sanity``
    identities, solver accuracy, internal consistency: kept and shown apart, never evidence.

A check compares a measured ``value`` with a ``bound`` through ``op`` (``"<="``, ``"<"``,
``">="``, ``">"``, ``"=="``, ``"in"`` for a closed interval ``(lo, hi)``), or takes an explicit
``holds``. An array ``value`` is held to the bound elementwise and reported by its worst
element. ``statement`` names the ``prf`` label of the statement checked, optionally with an
item after ``#`` (``"a-thm-3-2#5"``): the check table links it, the claims index groups by it.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.fmt import fmt
from ..core.io import to_jsonable

KINDS = ("theorem", "observation", "sanity")
OPS = ("<=", "<", ">=", ">", "==", "in")
GLUE_PREFIX = "application/papermill.record/"


class CheckFailed(AssertionError):
    """A claim made on the page is false for this run."""


@dataclass
class Hypothesis:
    """Whether a theorem's hypotheses hold for this page's data and parameters."""

    name: str
    holds: bool
    title: str = ""  # "Theorem 3.2" -- used in the sentence the page shows
    statement: str | None = None
    value: Any = None
    bound: Any = None
    op: str | None = None
    reason: str = ""  # why it does not hold (or what it measured when it does)
    detail: str = ""  # what ``value`` is, one line (the check table shows it)

    @property
    def margin(self) -> float | None:
        """How far ``value`` is inside its bound, in ``value``'s unit (see :func:`margin`)."""
        return margin(self.value, self.op, self.bound)

    @property
    def factor(self) -> float | None:
        """How many times inside its bound (see :func:`factor`)."""
        return factor(self.value, self.op, self.bound)

    def sentence(self) -> str:
        """One sentence for the page, as MyST Markdown."""
        what = self.title or self.name
        ref = f" ({_ref(self.statement)})" if self.statement else ""
        measured = ""
        if self.value is not None and self.bound is not None and self.op:
            measured = f": {fmt(self.value)} {_op_text(self.op)} {_fmt_bound(self.bound, self.op)}"
        if self.holds:
            return f"The hypotheses of {what}{ref} hold for these parameters{measured}."
        why = f" {self.reason.rstrip('.')}." if self.reason else ""
        return (
            f"**{what}{ref} does not cover these parameters**{measured}.{why} Its checks "
            "below are recorded as not applicable."
        )

    def details(self) -> dict:
        return {
            "holds": bool(self.holds),
            "title": self.title,
            "statement": self.statement,
            "value": to_jsonable(self.value),
            "bound": to_jsonable(self.bound),
            "op": self.op,
            "reason": self.reason,
            "detail": self.detail,
            "margin": to_jsonable(self.margin),
            "factor": to_jsonable(self.factor),
        }


@dataclass
class Check:
    name: str
    kind: str
    passed: bool | None  # None: not applicable
    value: Any = None
    bound: Any = None
    op: str | None = None
    statement: str | None = None
    applies: bool = True
    reason: str = ""
    detail: str = ""
    hypotheses: list[str] = field(default_factory=list)

    @property
    def margin(self) -> float | None:
        """How far ``value`` is inside its bound, in ``value``'s unit (see :func:`margin`);
        ``None`` when not applicable or without a numeric bound."""
        return None if self.passed is None else margin(self.value, self.op, self.bound)

    @property
    def factor(self) -> float | None:
        """How many times inside its bound (see :func:`factor`)."""
        return None if self.passed is None else factor(self.value, self.op, self.bound)

    def details(self) -> dict:
        return {
            "kind": self.kind,
            "value": to_jsonable(self.value),
            "bound": to_jsonable(self.bound),
            "op": self.op,
            "applies": self.applies,
            "reason": self.reason,
            "statement": self.statement,
            "hypotheses": list(self.hypotheses),
            "detail": self.detail,
            "margin": to_jsonable(self.margin),
            "factor": to_jsonable(self.factor),
        }


@dataclass(frozen=True)
class Claim:
    """One check as a chapter module computes it, before a page records it.

    A chapter's check functions (``twolayer.<paper>.chapters.<chapter>``) return a
    ``Claim``; the page records it with :meth:`twolayer.page.contract.Contract.record`, and a
    test calls the same function on an input where the statement is false and asserts that
    :meth:`outcome` is ``False`` (the failing-case table, ``tests/failing_cases``). The fields
    are those of :meth:`~twolayer.page.contract.Contract.theorem`: ``kind`` is one of
    ``KINDS``; ``holds`` or ``value op bound`` decides it; ``applies`` is a
    :class:`Hypothesis`, a list of them, a bool or ``(bool, reason)``.
    """

    name: str
    kind: str
    value: Any = None
    bound: Any = None
    op: str | None = None
    holds: Any = None
    statement: str | None = None
    applies: Any = True
    detail: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")
        if self.holds is None and self.op is None:
            raise ValueError(f"check {self.name!r}: give holds, or value, bound and op")

    def evaluate(self) -> Check:
        """The :class:`Check` this claim records: not applicable (``passed=None``) where
        ``applies`` fails, else decided by ``holds`` or ``value op bound``."""
        ok_applies, reason, hyps = applies_of(self.applies)
        if not ok_applies:
            return Check(
                self.name, self.kind, None, None, self.bound, self.op, self.statement, False,
                reason, self.detail, hyps,
            )  # fmt: skip
        value = self.value() if callable(self.value) else self.value
        holds = self.holds() if callable(self.holds) else self.holds
        if holds is None:
            holds, value = compare(value, self.op, self.bound)
        return Check(
            self.name, self.kind, bool(holds), value, self.bound, self.op, self.statement,
            True, "", self.detail, hyps,
        )  # fmt: skip

    def outcome(self) -> bool | None:
        """``True``/``False`` where it applies, ``None`` where it does not."""
        return self.evaluate().passed


def make_hypothesis(
    name: str,
    holds=None,
    *,
    title: str,
    statement: str | None = None,
    value=None,
    bound=None,
    op: str | None = None,
    reason: str = "",
    detail: str = "",
) -> Hypothesis:
    """A :class:`Hypothesis` decided by ``holds`` or ``value op bound``, without a page (a
    chapter module computes it; the page records it with
    :meth:`~twolayer.page.contract.Contract.record_hypothesis`)."""
    if holds is None:
        if op is None:
            raise ValueError("give holds, or value, bound and op")
        holds, value = compare(value, op, bound)
    return Hypothesis(name, bool(holds), title, statement, value, bound, op, reason, detail)


def applies_of(applies) -> tuple[bool, str, list[str]]:
    """Normalize ``applies``: a :class:`Hypothesis`, a list of them (all must hold), a bool,
    or ``(bool, reason)``; return ``(applies, reason when not, hypothesis names)``."""
    if isinstance(applies, Hypothesis):
        applies = [applies]
    if isinstance(applies, list):
        names = [h.name for h in applies]
        bad = [h for h in applies if not h.holds]
        reason = "; ".join(
            f"{h.title or h.name}: {h.reason or 'hypothesis does not hold'}" for h in bad
        )
        return not bad, reason, names
    if isinstance(applies, tuple):
        ok, reason = applies
        return bool(ok), ("" if ok else reason), []
    return bool(applies), ("" if applies else "not applicable at these parameters"), []


# --- evaluation ----------------------------------------------------------------------------------


def _scalar_or_array(value):
    if hasattr(value, "detach"):  # a torch tensor, without importing torch
        value = value.detach().cpu().numpy()
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (int, float, np.number)) for v in value)
    ):
        return np.asarray(value, dtype=float)
    return value


def compare(value, op: str, bound) -> tuple[bool, Any]:
    """``(holds, reported value)`` of ``value op bound``; an array is reported by its worst
    element (largest for ``<``/``<=``, smallest for ``>``/``>=``, farthest outside for
    ``in``). A NaN never holds."""
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}; got {op!r}")
    v = _scalar_or_array(value)
    if isinstance(v, np.ndarray) or isinstance(v, (int, float, np.number)):
        a = np.atleast_1d(np.asarray(v, dtype=float))
        if a.size == 0:
            raise ValueError("an empty value cannot be checked")
        if np.isnan(a).any():
            worst = float("nan")
            return False, worst
        if op == "in":
            lo, hi = bound
            ok = bool(np.all((a >= lo) & (a <= hi)))
            dist = np.maximum(lo - a, a - hi)
            worst = a[int(np.argmax(dist))]
        elif op in ("<=", "<"):
            worst = a.max()
            ok = bool(worst <= bound) if op == "<=" else bool(worst < bound)
        elif op in (">=", ">"):
            worst = a.min()
            ok = bool(worst >= bound) if op == ">=" else bool(worst > bound)
        else:
            ok = bool(np.all(a == bound))
            worst = a[int(np.argmax(a != bound))] if not ok else a[0]
        worst = worst.item() if hasattr(worst, "item") else worst
        if isinstance(v, (int, np.integer)) or (isinstance(v, np.ndarray) and v.dtype.kind in "iu"):
            worst = int(worst)
        return ok, worst
    if op == "==":
        return bool(v == bound), v
    raise TypeError(f"cannot compare a {type(value).__name__} with op {op!r}")


def _number(x) -> float | None:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.number)):
        return None
    x = float(x)
    return None if math.isnan(x) else x


def margin(value, op: str | None, bound) -> float | None:
    """How far a (reported, scalar) ``value`` is inside its bound, in ``value``'s unit:
    ``bound - value`` for ``<``/``<=``, ``value - bound`` for ``>``/``>=``, the distance to the
    nearer end for ``in``; negative outside. ``None`` without a numeric value and bound (an
    ``==`` check, a boolean ``holds``)."""
    v = _number(value)
    if v is None or op not in ("<", "<=", ">", ">=", "in"):
        return None
    if op == "in":
        lo, hi = (_number(b) for b in bound)
        return None if lo is None or hi is None else min(v - lo, hi - v)
    b = _number(bound)
    if b is None:
        return None
    return b - v if op in ("<", "<=") else v - b


def factor(value, op: str | None, bound) -> float | None:
    """How many times inside its bound a positive ``value`` is, against a positive bound:
    ``bound / value`` for ``<``/``<=``, ``value / bound`` for ``>``/``>=`` (below 1: outside);
    ``None`` otherwise. A theorem check whose factor exceeds 10^6 in every run cannot bind."""
    v = _number(value)
    if v is None or op not in ("<", "<=", ">", ">="):
        return None
    b = _number(bound)
    if b is None or v <= 0 or b <= 0:
        return None
    return b / v if op in ("<", "<=") else v / b


# --- formatting -----------------------------------------------------------------------------------


def _op_text(op: str | None) -> str:
    return {"<=": "≤", "<": "<", ">=": "≥", ">": ">", "==": "=", "in": "in"}.get(op or "", "")


def _fmt_bound(bound, op) -> str:
    if bound is None:
        return "—"
    if op == "in":
        lo, hi = bound
        return f"[{fmt(lo)}, {fmt(hi)}]"
    return fmt(bound)


KIND_NAMES = {
    "thm": "Theorem",
    "lem": "Lemma",
    "cor": "Corollary",
    "def": "Definition",
    "asm": "Assumption",
    "claim": "Claim",
    "fig": "Figure",
    "prop": "Proposition",
    "fact": "Fact",
    "cond": "Condition",
    "alg": "Algorithm",
    "eq": "Equation",
    "prob": "Problem",
    "ex": "Example",
    "rem": "Remark",
    "sec": "Section",
    "app": "Appendix",
    "obs": "Observation",
}


BOOK_TITLES = {
    "book-lem-d-suff": "Book, explicit Lemma 3.3",
    "book-obs-frozen-features": "Book, frozen first layer",
    "book-lem-stage1-limits": "Book, Stage 1 limits",
    "book-obs-stage1-net": "Book, the net's rate",
    "book-obs-gf-rate": "Book, the flow's rate",
    "book-lem-split-pair": "Book, the split pair",
    "book-obs-lemma33-log": "Book, the log factor of Lemma 3.3",
    "book-obs-figure1-glorot": "Book, Glorot's scale at step 0.16",
    "book-obs-figure1-accuracy": "Book, Figure 1's accuracy",
    "book-obs-xor-chance": "Book, XOR at chance",
    "book-obs-xor-low-dim": "Book, XOR in low dimension",
    "book-obs-real-images-scale": "Book, the floor grows with the scale",
    "book-prop-any-step-rank": "Book, the stable-rank bound at every step size",
    "book-obs-one-step-ladder": "Book, larger steps beyond (A1)",
    "book-obs-one-step-init-sweep": "Book, where one step to low rank stops",
    "book-obs-gf-below-assumption": "Book, below the assumption",
}  # the book's own statements


def statement_title(label: str) -> str:
    """The reader's name of a statement label, by the book's convention
    ``<paper>-<kind>-<number>``: ``a-thm-3-2`` is "Paper A, Theorem 3.2", ``b-lem-c-1``
    "Paper B, Lemma C.1", ``book-lem-d-suff`` "Book, Lemma d-suff"; an item after ``#`` is
    appended in parentheses. Other labels are returned as they are."""
    label, _, item = label.partition("#")
    parts = label.split("-")
    out = BOOK_TITLES.get(label, label)
    if (
        label not in BOOK_TITLES
        and len(parts) >= 3
        and parts[0] in ("a", "b", "book")
        and parts[1] in KIND_NAMES
    ):
        who = "Book" if parts[0] == "book" else f"Paper {parts[0].upper()}"
        rest = parts[2:]
        short = all(p.isdigit() or (p.isalpha() and len(p) == 1) for p in rest)
        if short:  # 3-2 -> 3.2, c-1 -> C.1
            number = ".".join(p.upper() if p.isalpha() else p for p in rest)
        else:  # words: e-11 stays, three-points -> "three points"
            number = " ".join(rest)
        out = f"{who}, {KIND_NAMES[parts[1]]} {number}"
    return out + (f" ({item})" if item else "")


@functools.lru_cache(maxsize=8)
def _labels_under(root: str) -> frozenset[str]:
    out: set[str] = set()
    for p in sorted(Path(root).glob("book/*.md")) + sorted(Path(root).glob("notebooks/*/*.md")):
        out.update(re.findall(r"^:label:\s*(\S+)", p.read_text(encoding="utf-8"), flags=re.M))
    return frozenset(out)


def labels_in(root: str | Path) -> frozenset[str]:
    """The ``prf`` labels the pages under ``root`` define (``:label:`` lines of ``book/*.md``
    and ``notebooks/*/*.md``), so that links go only to them."""
    return _labels_under(str(Path(root).resolve()))


def book_root(start: str | Path | None = None) -> Path | None:
    """The checkout's root (the folder with ``_toc.yml`` and ``book/``) holding ``start``
    (default: the working directory, a chapter's folder when a page runs); ``None`` outside a
    checkout (e.g. on Colab)."""
    here = Path(start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "_toc.yml").is_file() and (d / "book").is_dir():
            return d
    return None


def book_labels() -> frozenset[str] | None:
    """The ``prf`` labels the book's pages define (``:label:`` lines), read from the checkout
    that holds the working directory; ``None`` outside a checkout (e.g. on Colab)."""
    root = book_root()
    return None if root is None else labels_in(root)


def _ref(statement: str | None, markdown: bool = True) -> str:
    """A link to the statement's ``prf`` block, titled by :func:`statement_title`; the title
    alone where the book has no block with that label (e.g. a figure of a paper)."""
    if not statement:
        return "—"
    label, _, item = statement.partition("#")
    title = statement_title(label)
    labels = book_labels() if markdown else None
    if not markdown or (labels is not None and label not in labels):
        return title + (f" ({item})" if item else "")
    return f"{{prf:ref}}`{title} <{label}>`" + (f" ({item})" if item else "")


def _esc(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _html(text: str) -> str:
    import html

    return html.escape(str(text))


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#+!|~^$])")
_INLINE_MATH = re.compile(r"(\$[^$\n]+\$)")


def _md_text(text: str) -> str:
    """Plain text (a check's ``detail``) as MyST Markdown that shows it as written: every
    character Markdown would read escaped, except inside ``$...$``, which stays math; for a
    cell of a Markdown table (``|`` escaped, one line)."""
    parts = _INLINE_MATH.split(" ".join(str(text).split()))
    return "".join(
        part.replace("|", "\\|") if k % 2 else _MD_SPECIAL.sub(r"\\\1", part)
        for k, part in enumerate(parts)
    )


def result_text(c: Check) -> str:
    if c.passed is None:
        return "not applicable" + (f": {c.reason}" if c.reason else "")
    return "pass" if c.passed else "FAIL"


def bound_text(bound, op) -> str:
    """``≤ 1``, ``in [0.5, 2]``, or ``—`` without a bound."""
    return "—" if bound is None else f"{_op_text(op)} {_fmt_bound(bound, op)}".strip()


TABLE_HEAD = (
    "kind",
    "check",
    "statement",
    "what is measured",
    "measured",
    "bound",
    "margin",
    "result",
)


def margin_text(m: float | None, f: float | None) -> str:
    """The margin column: how far inside the bound, in the measured value's unit, and the
    factor when value and bound are positive (``0.12 (1.5×)``); ``—`` without one."""
    if m is None:
        return "—"
    return fmt(m) + (f" ({fmt(f)}×)" if f is not None else "")


def table(checks: list[Check], hypotheses: list[Hypothesis]) -> dict[str, str]:
    """The end-of-page table: a MIME bundle with MyST Markdown (the book resolves the
    statement links), HTML (Jupyter, Colab) and plain text. One row per hypothesis and check:
    its kind, name, statement, what the measured number is (its ``detail``), the number, the
    bound it is held to, the margin (how far inside the bound, in the number's unit, and the
    factor) and the result."""
    order = {k: i for i, k in enumerate(("hypothesis",) + KINDS)}
    rows = [
        (
            "hypothesis",
            h.name,
            h.statement,
            h.detail,
            h.value,
            h.bound,
            h.op,
            margin_text(h.margin, h.factor),
            "holds" if h.holds else "does not hold" + (f": {h.reason}" if h.reason else ""),
        )
        for h in hypotheses
    ]
    rows += [
        (
            c.kind,
            c.name,
            c.statement,
            c.detail,
            c.value,
            c.bound,
            c.op,
            margin_text(c.margin, c.factor),
            result_text(c),
        )
        for c in checks
    ]
    rows.sort(key=lambda r: order[r[0]])
    cells = [
        (kind, name, st, detail, fmt(value), bound_text(bound, op), mar, res)
        for kind, name, st, detail, value, bound, op, mar, res in rows
    ]
    md, plain, html = render_rows(TABLE_HEAD, cells, "twolayer-checks")
    counts = summary_counts(checks)
    line = (
        f"{counts['theorem']} theorem checks ({counts['theorem_na']} not applicable here), "
        f"{counts['observation']} observations, {counts['sanity']} sanity checks "
        "(identities and solver accuracy: shown, never counted as evidence)."
    )
    return {
        "text/markdown": line + "\n\n" + "\n".join(md) + "\n",
        "text/html": f"<p>{_html(line)}</p>" + "".join(html),
        "text/plain": line + "\n" + "\n".join(plain),
    }


def render_rows(head, rows, table_class: str) -> tuple[list[str], list[str], list[str]]:
    """The lines of a check-style table, as MyST Markdown (the statement linked), plain text
    and HTML: ``rows`` of ``(kind, name, statement, what is measured, *texts)``, the texts
    already formatted. Used by :func:`table` and the paper-scale table
    (:mod:`twolayer.page.paperscale`)."""
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    plain = list(md)
    html = [
        f'<table class="{table_class}"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
    ]
    for kind, name, st, what, *texts in rows:
        what = " ".join(str(what).split()) or "—"
        # each check's row is the target of the claims index's links: ``#check-<name>``
        anchor = (
            f'<span id="check-{_html(name)}"></span>' if table_class == "twolayer-checks" else ""
        )
        md_cells = [
            kind,
            f"{anchor}`{name}`",
            _ref(st),
            _md_text(what),
            *(_esc(t) for t in texts),
        ]
        md.append("| " + " | ".join(md_cells) + " |")
        plain_cells = [kind, name, _ref(st, markdown=False), what, *texts]
        plain.append("| " + " | ".join(_esc(x) for x in plain_cells) + " |")
        html_cells = [
            _html(kind),
            f"{anchor}<code>{_html(name)}</code>",
            _html(_ref(st, markdown=False)),
            _html(what),
            *(_html(t) for t in texts),
        ]
        html.append("<tr>" + "".join(f"<td>{x}</td>" for x in html_cells) + "</tr>")
    html.append("</tbody></table>")
    return md, plain, html


def summary_counts(checks: list[Check]) -> dict[str, int]:
    out = {k: sum(c.kind == k for c in checks) for k in KINDS}
    out["theorem_na"] = sum(c.kind == "theorem" and c.passed is None for c in checks)
    return out


# --- glue (MyST-NB's protocol, without importing myst_nb) -----------------------------------------


def glue(name: str, value: Any, markdown: bool = False) -> None:
    """Store ``value`` under ``name`` for ``{glue:text}`` / ``{glue:md}`` in the page's prose,
    as ``myst_nb.glue`` does with ``display=False``; a no-op outside IPython."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython is in every Jupyter kernel
        return
    if get_ipython() is None:
        return
    if markdown:
        bundle, meta = {"text/markdown": str(value), "text/plain": str(value)}, {}
    else:
        from IPython.core.formatters import format_display_data

        bundle, meta = format_display_data(_plain(value))
    meta = dict(meta)
    meta["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=meta)


def _plain(value):
    """numpy/torch scalars as Python numbers, so ``{glue:text}`name:.3f``` can format them."""
    v = _scalar_or_array(value)
    if isinstance(v, np.ndarray) and v.size == 1:
        v = v.reshape(()).item()
    if isinstance(v, np.generic):
        v = v.item()
    return v


def display_bundle(bundle: dict[str, str]) -> None:
    """Show a MIME bundle in a kernel, or its text outside one."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover
        get_ipython = None  # noqa: N806
    if get_ipython is not None and get_ipython() is not None:
        display(bundle, raw=True)
    else:
        print(bundle.get("text/plain", ""))
