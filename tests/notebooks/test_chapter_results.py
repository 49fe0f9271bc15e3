"""Every chapter's results from the strict smoke build of the book (one execution per chapter,
shared with tests/book): the results JSON that ``contract.finish()`` wrote, with the profile
taken from ``$BOOK_PROFILE``, every check passed or not applicable and classified; and the
determinism rerun: the same chapter through papermill, with the same parameters, writes the
same bytes (on representative chapters by default, on every chapter under ``full``).
"""

from __future__ import annotations

import json

import pytest

from helpers import CHAPTERS, NOTEBOOKS, REPRESENTATIVE, execute

KINDS = ("theorem", "observation", "sanity")
RESULT_KEYS = {"params", "metrics", "checks", "check_details", "hypotheses", "environment"}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_results_of_the_book_build(book, chapter):
    res = book.chapter_results(chapter)
    assert set(res) == RESULT_KEYS, sorted(res)
    env = res["environment"]  # where the numbers come from
    assert env["python"].count(".") == 2 and env["numpy"], env
    p = res["params"]
    # the book build runs with profile=None and BOOK_PROFILE=smoke: the profile comes from the
    # environment; the page's own seed; results go to the build's folder, not results_path
    assert p["profile"] == "smoke" and p["seed"] == 0 and p["results_path"] is None, p
    assert res["checks"], "a chapter without checks"
    failed = {k: v for k, v in res["checks"].items() if v not in (True, None)}
    assert not failed, failed  # a false check stops the build before finish()
    details = res["check_details"]
    assert set(details) == set(res["checks"])
    for name, d in details.items():
        assert d["kind"] in KINDS, f"{name}: kind {d['kind']!r} (classify it: {KINDS})"
        # not applicable exactly when the check's hypotheses do not hold, with the reason
        assert (res["checks"][name] is None) == (not d["applies"]), (name, d)
        if not d["applies"]:
            assert d["reason"], f"{name} is not applicable without a reason"
        if d["kind"] == "theorem":
            assert d["statement"], f"theorem check {name} names no statement"
        for h in d.get("hypotheses", []):
            assert h in res["hypotheses"], f"{name}: unknown hypothesis {h!r}"


def test_every_chapter_wrote_results(book):
    written = sorted(
        p.relative_to(book.results).with_suffix("").as_posix()
        for p in book.results.glob("*/*.json")
    )
    assert written == sorted(CHAPTERS)


def _determinism_cases():
    for chapter in CHAPTERS:
        marks = [] if chapter in REPRESENTATIVE else [pytest.mark.full]
        yield pytest.param(chapter, marks=marks, id=chapter)


@pytest.mark.parametrize("chapter", list(_determinism_cases()))
def test_papermill_rerun_writes_the_same_bytes(book, chapter, tmp_path, monkeypatch):
    """The chapter again, through papermill instead of the book's executor, with the same
    parameters (seed 0, smoke, no results_path: the file goes to $TWOLAYER_RESULTS_DIR as in
    the build): byte-identical results."""
    monkeypatch.setenv("TWOLAYER_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("BOOK_PROFILE", "smoke")
    md = NOTEBOOKS[CHAPTERS.index(chapter)]
    execute(md, tmp_path, profile=None)
    again = tmp_path / "results" / f"{chapter}.json"
    first = book.results / f"{chapter}.json"
    assert again.read_bytes() == first.read_bytes(), _diff(first, again)
    assert not list(again.parent.glob(".*.tmp")), "temporary files left behind"


def _diff(a, b) -> str:
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    out = []
    for part in ("params", "metrics", "checks"):
        for k in sorted(set(ra[part]) | set(rb[part])):
            if ra[part].get(k) != rb[part].get(k):
                out.append(f"{part}.{k}: {ra[part].get(k)!r} != {rb[part].get(k)!r}")
    return "results differ:\n" + "\n".join(out[:20])
