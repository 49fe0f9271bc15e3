"""Every chapter's smoke metrics from the suite's strict build against the committed reference
(``tests/reference/smoke``, written by ``make update-reference``; ``twolayer/tools/reference.py``
says how each metric's kind and tolerance follow from what it is). A mismatch names the
chapter, the metric, both values, the kind and the tolerance."""

from __future__ import annotations

import pytest

from helpers import CHAPTERS
from twolayer.tools import reference as ref


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_smoke_metrics_match_the_reference(book, chapter):
    path = ref.reference_path(chapter)
    assert path.exists(), f"no reference for {chapter}: run `make update-reference`"
    moved = ref.compare_chapter(
        chapter, ref.load(chapter)["metrics"], book.chapter_results(chapter)["metrics"]
    )
    beyond = [str(m) for m in moved if m.beyond]
    assert not beyond, "metrics beyond their tolerance:\n" + "\n".join(beyond)


def test_every_chapter_has_a_reference():
    have = sorted(
        p.relative_to(ref.REFERENCE_DIR).with_suffix("").as_posix()
        for p in ref.REFERENCE_DIR.glob("*/*.json")
    )
    assert have == sorted(CHAPTERS)
