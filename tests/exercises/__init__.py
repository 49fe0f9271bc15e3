"""The exercises' table: what each exercise's solution states, and the run that shows it.

Every exercise of every chapter (``:label: ex-...`` in ``notebooks/<paper>/<chapter>.md``) is
listed once, in ``tests/exercises/<paper>_<chapter>.py``::

    CHAPTER = "paper_b/stage2"
    EXERCISES = {
        "ex-stage2-lam-scale": Asserted(
            params={"lam_scale": 1.0},             # changed from the profile's values
            says="stage2_lambda_regime stops holding",   # the solution's statement, in short
            check=lambda P, R: not stage2.stage2_lambda_regime(P, R).holds,
        ),
        "ex-stage2-width": NotAsserted("a derivation from the printed thresholds; no run"),
    }

``Asserted`` runs the chapter module's ``compute`` (or ``run(P)`` when the exercise needs
another entry point) at ``profile`` with ``params`` and asserts ``check(P, R)``;
``tests/notebooks/test_exercises.py`` runs every one, and checks that each exercise's solution
names its parameter set (``name = value`` or ``name=value`` for each changed parameter) or, for
``NotAsserted``, says why it is not run (the solution contains ``Not run:``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from helpers import chapter_table


@dataclass(frozen=True, kw_only=True)
class Asserted:
    """An exercise whose solution states a result that a run shows.

    ``params``: the parameters changed from the profile's values; ``says``: the solution's
    statement in one line (the test's message); ``check(P, R)``: ``True`` when the run shows it;
    ``run(P)``: the chapter's computation (default: the module's ``compute``); ``profile``:
    the profile it runs at (smoke unless the statement needs more)."""

    params: Mapping[str, Any] = field(default_factory=dict)
    says: str
    check: Callable[[Any, Any], bool]
    run: Callable[[Any], Any] | None = None
    profile: str = "smoke"


@dataclass(frozen=True)
class NotAsserted:
    """An exercise whose solution states nothing a run can assert (a derivation, an open
    question, a result that needs the paper's scale): ``why`` says which; the solution says so
    too (``Not run:``)."""

    why: str


def table() -> dict[tuple[str, str], Asserted | NotAsserted]:
    """Every exercise, keyed by ``(chapter, label)``."""
    return chapter_table(__name__, __path__, "EXERCISES", "entries for the exercise")
