"""The exercises of ``notebooks/paper_b/stage1.md``.

The chapter has no ``compute``: :func:`_page` runs its three steps in the page's order."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from twolayer.paper_b.chapters import stage1 as ch

from . import Asserted

CHAPTER = "paper_b/stage1"

#: the coverage (rad) at which ``ex-stage1-width`` reads the width
TARGET = 0.1


def _page(P) -> SimpleNamespace:
    """The page's steps: the teachers and their assumptions, the step study, the net study."""
    T = ch.make_teachers(P)
    return SimpleNamespace(T=T, asm=ch.assumptions(T), S=ch.step_study(P, T), N=ch.net_study(P, T))


def _degenerate_check(P, R) -> bool:
    """Assumption 3 fails; the checks of the limits and of the net's refinement do not apply,
    Lemma 3 (ii)'s identities hold, the stall check applies and holds, and the coverage inside
    ``S_*`` stays near 1 rad at the widest width, with slopes near 0."""
    asm, S, N = R.asm, R.S, R.N
    limits = [
        ch.w1_norm_matches_limit(P, S, asm),
        ch.off_subspace_matches_limit(P, S, asm),
        ch.lemma_c1_corrected_error_rate(P, S, asm),
        ch.lemma_c1_printed_form_false(P, S, asm),
        ch.epsilon_net_refines_with_m(P, N, asm[2]),
    ]
    return (
        not asm[2].holds
        and all(c.outcome() is None for c in limits)
        and ch.alpha_beta_stay_zero(P, S).outcome() is True
        and ch.epsilon_net_stalls_without_assumption_3(P, N, asm[2]).outcome() is True
        and all(N.coverage_in[r].mean(1)[-1] > 0.8 for r in N.rs)
        and all(abs(N.slope[r].value) < 0.1 for r in N.rs)
    )


def _width_at_target(m, coverage, slope) -> float:
    """The width at which the mean coverage reaches :data:`TARGET`: interpolated (log-log)
    between the widths that bracket it, else extrapolated from the widest at ``slope``."""
    below = np.flatnonzero(coverage <= TARGET)
    if below.size == 0:
        return float(m[-1] * (coverage[-1] / TARGET) ** (1 / -slope))
    i = int(below[0])
    if i == 0:
        return float(m[0])
    x = np.log(m[i - 1 : i + 1])
    y = np.log(coverage[i - 1 : i + 1])
    return float(np.exp(np.interp(np.log(TARGET), y[::-1], x[::-1])))


def _width_check(P, R) -> bool:
    """``r = 3``: slope near -1/2, 0.1 rad not reached at the widest width, reached (at that
    slope) between one and four times it; ``r = 2``: slope near -1, 0.1 rad reached by a
    width of a few dozen to a few hundred."""
    N = R.N
    c3, c2 = N.coverage_in[3].mean(1), N.coverage_in[2].mean(1)
    s3, s2 = N.slope[3].value, N.slope[2].value
    w3, w2 = _width_at_target(N.m, c3, s3), _width_at_target(N.m, c2, s2)
    return (
        -0.65 < s3 < -0.35
        and c3[-1] > TARGET
        and N.m[-1] < w3 < 4 * N.m[-1]
        and -1.3 < s2 < -0.7
        and 30 < w2 < 300
    )


EXERCISES = {
    "ex-stage1-degenerate": Asserted(
        params={"teacher": "degenerate"},
        says="Assumption 3 fails: the limits' and the net's checks do not apply, the stall "
        "check holds; the coverage stays near 1 rad",
        check=_degenerate_check,
        run=_page,
    ),
    "ex-stage1-width": Asserted(
        params={},
        says="r = 3: coverage ~ m^(-1/2), 0.1 rad beyond m = 1024 (1000-4000); r = 2: ~ m^(-1), "
        "0.1 rad within a hundred or so",
        check=_width_check,
        run=_page,
    ),
}
