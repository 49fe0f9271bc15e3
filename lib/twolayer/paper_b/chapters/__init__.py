"""Paper B's chapters as modules: each ``<chapter>.py`` declares the page's parameters once
(``SPEC``, a :class:`~twolayer.page.contract.ChapterSpec`), computes its experiment
(``compute``) and states its checks as functions returning
:class:`~twolayer.page.checks.Claim` objects, which the page records and the tests call on
inputs where the statement is false (``tests/failing_cases``). See ``CONTRIBUTING.md``.

Here: Paper B's Assumptions 1-3 as hypotheses, shared by every chapter
(:func:`assumptions`)."""

from __future__ import annotations

from ...page.checks import make_hypothesis
from .. import teacher as tmod


def assumptions(teachers) -> list:
    """Paper B's Assumptions 1-3 for ``teachers`` (one or a list; the worst case counts) as
    :class:`~twolayer.page.checks.Hypothesis` objects ``assumption_1``, ``assumption_2``,
    ``assumption_3``, each with a ``detail`` saying what its value is, computed without a page
    (a chapter module passes them as ``applies=`` to every theorem check that needs them)."""
    v = tmod.assumption_values(teachers)
    h1, h2, h3 = v["r_over_d"] < 1.0, v["Delta"] > 0.0, v["kappa_rel"] > tmod.KAPPA_RELATIVE_FLOOR
    many = isinstance(teachers, (list, tuple)) and len(teachers) > 1
    if many:
        details = (
            "largest r / d over the teachers",
            "smallest Delta over the teachers (radians)",
            "smallest kappa / |lambda_1(H)| over the teachers",
        )
    else:
        details = (
            "r / d",
            "Delta, the smallest angle between two teacher neurons (radians)",
            "kappa / |lambda_1(H)|, smallest over largest |eigenvalue| of H in S_*",
        )
    return [
        make_hypothesis(
            "assumption_1",
            title="Assumption 1",
            statement="b-asm-1",
            value=v["r_over_d"],
            bound=1.0,
            op="<",
            reason="" if h1 else f"r / d = {v['r_over_d']:.3g}: S_* is all of R^d",
            detail=details[0],
        ),
        make_hypothesis(
            "assumption_2",
            title="Assumption 2",
            statement="b-asm-2",
            value=v["Delta"],
            bound=0.0,
            op=">",
            reason="" if h2 else "two teacher neurons are parallel (Delta = 0)",
            detail=details[1],
        ),
        make_hypothesis(
            "assumption_3",
            title="Assumption 3",
            statement="b-asm-3",
            value=v["kappa_rel"],
            bound=tmod.KAPPA_RELATIVE_FLOOR,
            op=">",
            reason=""
            if h3
            else f"rank H < r for {v['deficient']} of {v['count']} teachers "
            f"(kappa / |lambda_1(H)| down to {v['kappa_rel']:.1e}, "
            "rounding)",
            detail=details[2],
        ),
    ]


def assumption_hypotheses(contract, teachers) -> list:
    """Record :func:`assumptions` for ``teachers`` as hypotheses of ``contract`` (a
    :class:`~twolayer.page.contract.Contract`, which glues each one's sentence) and return
    them."""
    return [contract.record_hypothesis(h) for h in assumptions(teachers)]
