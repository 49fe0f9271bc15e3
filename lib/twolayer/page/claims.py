"""The claims index: every statement of both papers with what this build verified.

The registry (``book/claims.yml``) lists each statement by the paper's own number; every
check on a page names the statement it checks (``statement="a-thm-3-2#5"``); the results of
one build (``$TWOLAYER_RESULTS_DIR/<chapter>.json``, written by
:meth:`twolayer.page.contract.Contract.finish`) say what passed. :func:`statuses` joins the
three; :func:`index_markdown` and :func:`errata_markdown` render the book's "Claims index"
and "Errata and reconstructions" pages.

The checks that *carry* a statement are listed in the registry (``checks: [chapter:check,
...]``); a statement without that list is carried by every theorem and observation check
that names it. Sanity checks never carry a statement, and a check that names one of the book's
own statements (``book-...``) never carries a paper's.

Status of a statement in one build:

* ``verified``: every carrying check applied and passed;
* ``verified on a stand-in``: the same, but a carrying chapter ran on substitute data (the
  registry's ``stand_in``: which parameter says so, and the stand-in);
* ``partly applicable``: the carrying checks that applied passed; others did not apply at
  this profile;
* ``not applicable``: no carrying check applied at this profile;
* ``erratum``: false as printed: the printed form's checks (``erratum.printed_checks``, each
  asserting that the printed form fails) and the corrected form's carrying checks all applied
  and passed (where the corrected form is an identity, its sanity checks,
  ``erratum.identity_checks``);
* ``erratum unconfirmed``: an erratum whose printed or corrected form was not shown in this
  build;
* ``failed``: a carrying check failed;
* ``lost``: the available copy of the paper lost it: nothing to check;
* ``not covered``: no check carries it.

``python -m twolayer.tools.claims RESULTS_DIR`` (:mod:`twolayer.tools.claims`) prints the index
as JSON (statement, status, carrying checks with kind, value, bound, margin and whether they
applied), so that it can be audited without a build.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .checks import labels_in, statement_title  # noqa: F401 (labels_in: for the pages)

PAPERS = {"paper_a": "Paper A", "paper_b": "Paper B", "book": "Book"}
EVIDENCE = ("theorem", "observation")


@dataclass
class Evidence:
    """One check's outcome in one build, as the index uses it."""

    chapter: str
    check: str
    kind: str
    passed: bool | None  # None: not applicable (or not in this build: ``reason`` says)
    profile: str | None = None
    value: object = None
    bound: object = None
    op: str | None = None
    margin: float | None = None
    statement: str | None = None
    reason: str = ""
    stand_in: str | None = None  # the substitute data the chapter ran on, if any

    @property
    def key(self) -> str:
        return f"{self.chapter}:{self.check}"

    def as_json(self) -> dict:
        return {
            "check": self.key,
            "kind": self.kind,
            "passed": self.passed,
            "applies": self.passed is not None,
            "value": self.value,
            "bound": self.bound,
            "op": self.op,
            "margin": self.margin,
            "profile": self.profile,
            "statement": self.statement,
            "reason": self.reason,
            "stand_in": self.stand_in,
        }


@dataclass
class Statement:
    id: str
    paper: str
    text: str
    source: str = "text"
    role: str = "claim"
    erratum: dict | None = None
    checks: list | None = None  # the carrying checks, "chapter:check" (None: every naming one)
    stand_in: dict | None = None  # {"param", "real", "name"}: substitute data, when not real
    evidence: list = field(default_factory=list)  # every check naming it (Evidence)
    carrying: list = field(default_factory=list)  # the checks that carry it (Evidence)
    printed: list = field(default_factory=list)  # erratum: the printed form's checks
    identity: list = field(default_factory=list)  # erratum: a corrected identity's checks

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
        ev = self.carrying or (self.identity if self.erratum else [])
        if not ev:
            return "not covered"
        if any(e.passed is False for e in ev + self.printed):
            return "failed"
        applied = [e for e in ev if e.passed]
        if not applied:
            return "not applicable"
        if len(applied) < len(ev):
            return "partly applicable"
        if self.erratum:
            shown = self.printed and all(e.passed for e in self.printed)
            return "erratum" if shown else "erratum unconfirmed"
        if any(e.stand_in for e in ev):
            return "verified on a stand-in"
        return "verified"


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
                    e.get("checks"),
                    e.get("stand_in"),
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


def _evidence(chapter: str, name: str, res: dict, stand_in: dict | None) -> Evidence:
    det = res.get("check_details", {}).get(name)
    profile = res.get("params", {}).get("profile")
    if det is None:
        return Evidence(chapter, name, "missing", None, profile, reason="not in this build")
    sub = None
    if stand_in:
        ran = res.get("params", {}).get(stand_in["param"])
        if ran != stand_in["real"]:
            sub = f"{stand_in['name']} ({stand_in['param']} = {ran})"
    return Evidence(
        chapter,
        name,
        det["kind"],
        res["checks"].get(name),
        profile,
        det.get("value"),
        det.get("bound"),
        det.get("op"),
        det.get("margin"),
        det.get("statement"),
        det.get("reason", ""),
        sub,
    )


def _split(key: str) -> tuple[str, str]:
    chapter, sep, check = key.rpartition(":")
    if not sep or "/" not in chapter:
        raise ValueError(f"a carrying check is 'paper_x/chapter:check', not {key!r}")
    return chapter, check


def statuses(registry: list[Statement], results: dict[str, dict]) -> tuple[list[Statement], list]:
    """Attach each check's outcome to the statement it names, and the carrying checks to each
    statement (see the module docstring); return the registry and the problems: checks that
    name a statement the registry does not list (``(chapter, check, id)``), and carrying checks
    that cannot carry (``(chapter, check, why)``)."""
    by_id = {s.id: s for s in registry}
    by_label: dict[str, list[Statement]] = {}
    for s in registry:
        by_label.setdefault(s.label, []).append(s)
    unknown = []
    for chapter, res in sorted(results.items()):
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
                s.evidence.append(_evidence(chapter, name, res, s.stand_in))
    for s in registry:
        if s.checks is None:
            s.carrying = [e for e in s.evidence if e.kind in EVIDENCE]
        else:
            s.carrying = []
            for key in s.checks:
                chapter, name = _split(key)
                if chapter not in results:  # a chapter this build did not run
                    s.carrying.append(
                        Evidence(chapter, name, "missing", None, reason="chapter not run")
                    )
                    continue
                e = _evidence(chapter, name, results[chapter], s.stand_in)
                why = _cannot_carry(s, e)
                if why:
                    unknown.append((chapter, name, why))
                s.carrying.append(e)
        s.printed, s.identity = (
            [
                _evidence(chapter, name, results.get(chapter, {}), s.stand_in)
                for chapter, name in map(_split, (s.erratum or {}).get(which, []))
            ]
            for which in ("printed_checks", "identity_checks")
        )
    return registry, unknown


def _cannot_carry(s: Statement, e: Evidence) -> str:
    """Why check ``e`` cannot carry statement ``s`` ('' when it can)."""
    if e.kind == "missing":
        return f"listed for {s.id} but not recorded by its chapter"
    if e.kind not in EVIDENCE:
        return f"a {e.kind} check cannot carry {s.id}"
    if e.statement and e.statement.startswith("book-") and not s.id.startswith("book-"):
        return f"a check of the book's own {e.statement} cannot carry {s.id}"
    return ""


def index_json(registry: list[Statement]) -> list[dict]:
    """The index as data: per statement its id, status and carrying checks."""
    return [
        {
            "statement": s.id,
            "paper": s.paper,
            "status": s.status,
            "carrying": [e.as_json() for e in s.carrying],
            "printed_form": [e.as_json() for e in s.printed],
        }
        for s in registry
    ]


# --- rendering ---------------------------------------------------------------------------------

STATUS_TEXT = {
    "verified": "✓ verified",
    "verified on a stand-in": "✓ verified on a stand-in",
    "partly applicable": "partly applicable at this profile",
    "erratum": "✗ false as printed; corrected form verified",
    "erratum unconfirmed": "false as printed (not shown in this build)",
    "not applicable": "not applicable at this profile",
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


def _check_link(e: Evidence) -> str:
    """The check's name, linked to its row in its chapter's check table (anchor
    ``check-<name>``, set by :func:`twolayer.page.checks.render_rows`)."""
    mark = {True: "", None: " (n/a)", False: " (FAILED)"}[e.passed]
    if e.kind == "missing":
        return f"`{e.check}` ({e.reason})"
    href = f"../notebooks/{e.chapter}.html#check-{e.check}"
    return f'<a href="{href}"><code>{e.check}</code></a>{mark}'


def _evidence_text(s: Statement) -> str:
    by_chapter: dict[str, list[Evidence]] = {}
    for e in s.carrying:
        by_chapter.setdefault(e.chapter, []).append(e)
    parts = []
    for chapter, ev in by_chapter.items():
        names = ", ".join(_check_link(e) for e in ev)
        profile = next((e.profile for e in ev if e.profile), None)
        sub = next((e.stand_in for e in ev if e.stand_in), None)
        where = f" ({profile}" + (f"; on {sub}" if sub else "") + ")" if profile else ""
        parts.append(f"{{doc}}`/notebooks/{chapter}`{where}: {names}")
    if s.printed:
        parts.append("printed form fails: " + ", ".join(_check_link(e) for e in s.printed))
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
