"""The exercises of ``notebooks/paper_b/samples.md``.

Both exercises are about the gradient study; the end-to-end runs, which neither reads, are
shortened (``epochs = 1``, ``steps = 10``) to keep the runs short."""

from __future__ import annotations

import math

from twolayer.paper_b.chapters import samples as ch

from . import Asserted

CHAPTER = "paper_b/samples"

SHORT = {"epochs": 1, "steps": 10}


def _exponent(P, R):
    return ch.error_scales_as_d_over_sqrt_n(P, R, ch.assumptions(P, R)).outcome()


def _two_dims_check(P, R) -> bool:
    """Two dimensions: the exponent is fitted, with a finite standard error (three
    repetitions), but its check does not apply, for want of three dimensions."""
    se, _ = ch.exponent_se(R.study)
    return (
        R.est is not None
        and math.isfinite(se)
        and not ch.exponent_resolves(P)[0]
        and _exponent(P, R) is None
    )


def _one_rep_check(P, R) -> bool:
    """One repetition: the law's sanity check applies and holds, the exponent has no standard
    error and its check does not apply."""
    return (
        ch.gradient_error_matches_law(P, R).outcome() is True
        and ch.exponent_se(R.study) == (math.inf, 0)
        and _exponent(P, R) is None
    )


EXERCISES = {
    "ex-samples-exponent": Asserted(
        params={"ds": [8, 32], **SHORT},
        says="error_scales_as_d_over_sqrt_n becomes not applicable (two dimensions), though "
        "the exponent is fitted",
        check=_two_dims_check,
    ),
    "ex-samples-reps": Asserted(
        params={"reps": 1, **SHORT},
        says="the law's check applies and holds; the exponent has no standard error and its "
        "check does not apply",
        check=_one_rep_check,
    ),
}
