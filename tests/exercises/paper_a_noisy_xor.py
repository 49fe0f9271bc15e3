"""The exercises of ``notebooks/paper_a/noisy_xor.md``."""

from __future__ import annotations

import math

from twolayer.paper_a.chapters import noisy_xor

from . import Asserted

CHAPTER = "paper_a/noisy_xor"

THEOREM_CHECKS = (
    noisy_xor.high_dim_loss_below_log2_over_n,
    noisy_xor.high_dim_boundary_linear,
    noisy_xor.high_dim_error_is_half,
)


def _beta_check(P, R) -> bool:
    nowhere = not noisy_xor.hyp_near_orthogonality(P, R).holds
    shaded_empty = math.isnan(noisy_xor.d_assumption(R))
    return nowhere and shaded_empty and all(f(P, R).outcome() is None for f in THEOREM_CHECKS)


def _gamma_check(P, R) -> bool:
    at_chance = all(r.ci_low <= 0.5 <= r.ci_high for r in R.low_table.itertuples())
    return at_chance and noisy_xor.low_dim_learns_xor(P, R).outcome() is None


EXERCISES = {
    "ex-noisy-xor-beta": Asserted(
        params={"beta": 0.4, "steps": 100},
        says="no d of the grid satisfies the assumption for every training set: the shaded "
        "region is empty and the three theorem checks are not applicable",
        check=_beta_check,
    ),
    "ex-noisy-xor-gamma": Asserted(
        params={"gamma": 1.0, "steps": 100},
        says="the control's error interval contains 1/2 at every initialization and "
        "low_dim_learns_xor is not applicable",
        check=_gamma_check,
    ),
}
