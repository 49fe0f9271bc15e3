"""The claims index: every statement of both papers with what this build verified.

The registry (``book/claims.yml``) lists each statement by the paper's own number; every
check on a page names the statement it checks (``statement="a-thm-3-2#5"``); the results of
one build (``$TWOLAYER_RESULTS_DIR/<chapter>.json``, written by
:meth:`twolayer.common.contract.Contract.finish`) say what passed. :func:`statuses` joins the
three; :func:`index_markdown` and :func:`errata_markdown` render the book's "Claims index"
and "Errata and reconstructions" pages.

Status of a statement:

``verified``        theorem or observation checks name it and passed (sanity checks never count)
``erratum``         printed form false; the corrected form's checks passed
``not applicable``  checks name it, but their hypotheses fail at the build's parameters
``lost``            the available copy of the paper lost it: nothing to check
``not covered``     no theorem or observation check names it yet
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .checks import labels_in, statement_title  # noqa: F401 (labels_in: for the pages)

PAPERS = {"paper_a": "Paper A", "paper_b": "Paper B", "book": "Book"}
EVIDENCE = ("theorem", "observation")


@dataclass
class Statement:
    id: str
    paper: str
    text: str
    source: str = "text"
    role: str = "claim"
    erratum: dict | None = None
    evidence: list = field(default_factory=list)  # (chapter, check, kind, passed, profile)

    @property
    def label(self) -> str:
        return self.id.partition("#")[0]

    @property
    def title(self) -> str:
        return statement_title(self.id)

    @property
    def status(self) -> str:
        if self.source == "lost":
            return "lost"
        ev = [e for e in self.evidence if e[2] in EVIDENCE]
        if not ev:
            return "not covered"
        if any(e[3] is False for e in ev):
            return "failed"
        if all(e[3] is None for e in ev):
            return "not applicable"
        return "erratum" if self.erratum else "verified"


def load_registry(path: str | Path) -> list[Statement]:
    import yaml

    data = yaml.safe_load(Path(path).read_text())
    out, seen = [], set()
    for paper, entries in data.items():
        if paper not in PAPERS:
            continue
        for e in entries:
            if e["id"] in seen:
                raise ValueError(f"{path}: statement {e['id']!r} is listed twice")
            seen.add(e["id"])
            out.append(
                Statement(
                    e["id"],
                    paper,
                    e["text"],
                    e.get("source", "text"),
                    e.get("role", "claim"),
                    e.get("erratum"),
                )
            )
    return out


def load_reconstructions(path: str | Path) -> list[dict]:
    """The registry's ``reconstructions``: what the book had to read back from the papers
    (``what``, ``reading``, ``page``)."""
    import yaml

    return list(yaml.safe_load(Path(path).read_text()).get("reconstructions", []))


def reconstructions_markdown(entries: list[dict]) -> str:
    md = ["| what | the book's reading | where |", "|---|---|---|"]
    for e in entries:
        md.append(f"| {_cell(e['what'])} | {_cell(e['reading'])} | {{doc}}`/{e['page']}` |")
    return "\n".join(md) + "\n"


def load_results(results_dir: str | Path) -> dict[str, dict]:
    """``{chapter: results}`` for every ``<paper>/<name>.json`` under ``results_dir``."""
    root = Path(results_dir)
    out = {}
    for p in sorted(root.glob("*/*.json")):
        out[p.relative_to(root).with_suffix("").as_posix()] = json.loads(p.read_text())
    return out


def statuses(registry: list[Statement], results: dict[str, dict]) -> tuple[list[Statement], list]:
    """Attach each check's outcome to the statement it names; return the registry and the
    checks that name a statement the registry does not list (``(chapter, check, id)``)."""
    by_id = {s.id: s for s in registry}
    by_label: dict[str, list[Statement]] = {}
    for s in registry:
        by_label.setdefault(s.label, []).append(s)
    unknown = []
    for chapter, res in sorted(results.items()):
        profile = res.get("params", {}).get("profile")
        for name, det in res.get("check_details", {}).items():
            sid = det.get("statement")
            if not sid:
                continue
            targets = (
                [by_id[sid]] if sid in by_id else (by_label.get(sid, []) if "#" not in sid else [])
            )
            if not targets:
                unknown.append((chapter, name, sid))
            for s in targets:
                s.evidence.append((chapter, name, det["kind"], res["checks"].get(name), profile))
    return registry, unknown


# --- rendering ---------------------------------------------------------------------------------

STATUS_TEXT = {
    "verified": "✓ verified",
    "erratum": "✗ false as printed; corrected form verified",
    "not applicable": "not applicable at these parameters",
    "lost": "lost in the copy",
    "not covered": "not covered yet",
    "failed": "FAILED",
}


def _cell(text) -> str:
    """Text for a Markdown table cell: pipes escaped, one line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _link(s: Statement, labels: set[str]) -> str:
    item = s.id.partition("#")[2]
    base = statement_title(s.label)
    if s.label in labels:
        base = f"{{prf:ref}}`{base} <{s.label}>`"
    return base + (f" ({item})" if item else "")


def _evidence_text(s: Statement) -> str:
    by_chapter: dict[str, list] = {}
    for chapter, check, kind, passed, profile in s.evidence:
        by_chapter.setdefault(chapter, []).append((check, kind, passed, profile))
    parts = []
    for chapter, checks in by_chapter.items():
        names = ", ".join(
            f"`{c}`" + ("" if k in EVIDENCE else " (sanity)") for c, k, _, _ in checks
        )
        profile = checks[0][3]
        parts.append(f"{{doc}}`/notebooks/{chapter}` ({profile}): {names}")
    return "; ".join(parts) or "—"


def counts(registry: list[Statement]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for s in registry:
        d = out.setdefault(s.paper, {})
        d[s.status] = d.get(s.status, 0) + 1
    return out


def index_markdown(registry: list[Statement], labels: set[str]) -> str:
    """One table per paper: statement (linked), what it says, status, the checks behind it."""
    md = []
    for paper, name in PAPERS.items():
        rows = [s for s in registry if s.paper == paper]
        if not rows:
            continue
        c = counts(rows)
        summary = ", ".join(
            f"{v} {STATUS_TEXT[k].lstrip('✓✗ ')}" for k, v in sorted(c[paper].items())
        )
        md.append(f"## {name}\n\n{len(rows)} statements: {summary}.\n")
        md.append("| statement | what it says | status | checked by |")
        md.append("|---|---|---|---|")
        for s in rows:
            text = _cell(s.text)
            if s.source == "reconstructed":
                text += " *(reconstructed)*"
            if s.role != "claim":
                text += f" *({s.role.replace('-', ' ')})*"
            md.append(
                f"| {_link(s, labels)} | {text} | {STATUS_TEXT[s.status]} | {_evidence_text(s)} |"
            )
        md.append("")
    return "\n".join(md)


def errata_markdown(registry: list[Statement], labels: set[str]) -> str:
    """Each statement printed wrongly: printed, corrected, status of the evidence, where."""
    md = ["| statement | as printed | corrected | evidence |", "|---|---|---|---|"]
    for s in registry:
        if not s.erratum:
            continue
        md.append(
            f"| {_link(s, labels)} | {_cell(s.erratum['printed'])} | "
            f"{_cell(s.erratum['corrected'])} | {STATUS_TEXT[s.status]}: "
            f"{_evidence_text(s)} |"
        )
    return "\n".join(md) + "\n"
