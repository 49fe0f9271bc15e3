"""The failing-case table: for every theorem and observation check of every chapter, an input
where the statement is false, and the check, computed by the chapter module's own function
(the code the page runs), returns ``False``.

A check that counts as evidence must be able to fail. Each chapter with a module
(``twolayer.<paper>.chapters.<chapter>``) has a file here, ``<paper>_<chapter>.py``, with::

    CHAPTER = "paper_b/frozen"
    CASES = {
        "check_name": Case("what makes the statement false", lambda: frozen.check(P, R)),
    }

where the lambda builds the input (an untrained network, a multiplier off by a factor, a
planted misaligned neuron, data outside the hypothesis with the gate forced, ...) and returns
the chapter's :class:`~twolayer.page.checks.Claim` for it. ``tests/notebooks/
test_failing_cases.py`` asserts that each case's claim is decided and false, and that every
theorem and observation check a chapter records in the smoke build has a case here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from helpers import chapter_table
from twolayer.page.checks import Claim


@dataclass(frozen=True)
class Case:
    """An input where a check's statement is false: ``why`` says what makes it false, in one
    line; ``make()`` returns the chapter's claim computed on it."""

    why: str
    make: Callable[[], Claim]


def table() -> dict[tuple[str, str], Case]:
    """Every case, keyed by ``(chapter, check name)``."""
    return chapter_table(__name__, __path__, "CASES", "failing cases")


def chapters() -> set[str]:
    """The chapters that have a file of failing cases."""
    return {k[0] for k in table()}
