"""Exercises that run: every exercise of every page is in the table of ``tests/exercises``;
each solution that states a result is run at its parameter set and its statement asserted;
each solution names that parameter set, or says why it is not run (``Not run:``)."""

from __future__ import annotations

import re

import pytest
from exercises import Asserted, NotAsserted, table

from helpers import CHAPTERS, ROOT
from twolayer import chapters

TABLE = table()
LABEL = re.compile(r"^```\{exercise\}[^\n]*\n:label:\s*(\S+)", re.M)


def page(chapter: str) -> str:
    return (ROOT / "notebooks" / f"{chapter}.md").read_text(encoding="utf-8")


def solution(chapter: str, label: str) -> str:
    """The text of the solution of ``label`` on the chapter's page."""
    text = page(chapter)
    m = re.search(
        r"^```\{solution\}\s+" + re.escape(label) + r"\s*\n(.*?)^```\s*$", text, re.M | re.S
    )
    assert m, f"{chapter}: no solution for {label}"
    return m.group(1)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_exercise_is_in_the_table(chapter):
    labels = LABEL.findall(page(chapter))
    listed = sorted(lab for c, lab in TABLE if c == chapter)
    assert sorted(labels) == listed, (
        f"{chapter}: exercises on the page {sorted(labels)} != in tests/exercises {listed}"
    )


@pytest.mark.parametrize("key", sorted(TABLE), ids=[lab for _, lab in sorted(TABLE)])
def test_solution_names_its_run(key):
    chapter, label = key
    ex, text = TABLE[key], solution(*key)
    if isinstance(ex, NotAsserted):
        assert "Not run:" in text, f"{label}: the solution must say why it is not run (Not run:)"
        return
    flat = re.sub(r"\s+", "", text)
    missing = [k for k in ex.params if not re.search(re.escape(k) + r"=", flat)]
    assert not missing, f"{label}: the solution does not name {missing} (name = value)"


ASSERTED = sorted(k for k, ex in TABLE.items() if isinstance(ex, Asserted))


@pytest.mark.parametrize("key", ASSERTED, ids=[lab for _, lab in ASSERTED])
def test_solution_holds(key):
    chapter, label = key
    ex = TABLE[key]
    mod = chapters.module(chapter)
    P = mod.SPEC.params(ex.profile, **ex.params)
    R = (ex.run or mod.compute)(P)
    assert ex.check(P, R), f"{label}: the run does not show what the solution says: {ex.says}"
