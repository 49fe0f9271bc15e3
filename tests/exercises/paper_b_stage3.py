"""The exercises of ``notebooks/paper_b/stage3.md``."""

from __future__ import annotations

import numpy as np

from twolayer.paper_b.chapters import stage3 as ch

from . import Asserted

CHAPTER = "paper_b/stage3"

#: the page's weight decay, against which ``ex-stage3-lam0`` reads Stage 2's gap
LAM0_PAGE = ch.SPEC.defaults["lam0"]


def _with(P, **changes):
    """The parameters ``P`` with ``changes``, validated as the page would."""
    values = {k: P[k] for k in ch.SPEC.defaults if k not in ("profile", "results_path")}
    return ch.SPEC.params(P.profile, **{**values, **changes})


def _lam0_check(P, R) -> bool:
    """``lam0 = 0.02`` at the book's Stage 1-2 sizes: Lemma 5's precondition is the only
    hypothesis that fails, Stage 2's gap lying between ``0.02^(9/5)`` and ``0.04^(9/5)``; the
    checks gated on it do not apply; the loss still falls at every epoch; Lemmas F.4, F.5 and
    6 hold."""
    H, C = ch.hypotheses(P, R), ch.claims(P, R)
    failing = [name for name, h in H.items() if not h.holds]
    gated = [
        "lemma5_loss_over_lambda2_bounded",
        "thm2_time_to_loss",
        "thm2_aligned_or_vanished",
        "lemma8_far_mass_rate",
        "lemma8_average_neuron_rate",
        "loss_decreases_every_epoch",
        "every_teacher_covered",
    ]
    free = [
        "lemma_f4_loss_bound",
        "lemma_f5_far_mass_bound",
        "lemma6_gradient_exponent",
        "lemma6_holds_with_constant_one",
    ]
    return (
        failing == ["lemma5_precondition"]
        and P.lam0**1.8 < ch.zeta30(R) <= LAM0_PAGE**1.8
        and all(C[name].outcome() is None for name in gated)
        and bool(np.all(np.diff(R.table["L"]) < 0))
        and all(C[name].outcome() is True for name in free)
    )


def _r3_run(P) -> dict:
    """The run at ``r = 3`` and the same run at the page's ``r = 2``, ``m_star = 3``."""
    Q = _with(P, r=2, m_star=3)
    return {"r3": ch.compute(P), "r2": ch.compute(Q), "P2": Q}


def _r3_check(P, R) -> bool:
    """The optimum's resolution is coarser for ``r = 3`` than for ``r = 2`` but below the
    smallest ``lambda_k^2 / 10``; Lemma 6's exponent moves by less than 0.3 and stays far
    below 4; the window holds fewer than four epochs at ``r = 3``, so its check does not
    apply (it applies at ``r = 2``)."""
    R3, R2 = R["r3"], R["r2"]
    res3 = R3.table["optimum resolution"].max()
    res2 = R2.table["optimum resolution"].max()
    p3, se3 = ch.lemma6_fit(R3)
    p2, _ = ch.lemma6_fit(R2)
    return (
        res3 > 3 * res2
        and res3 < float(np.min(R3.lams**2)) / 10
        and abs(p3 - p2) < 0.3
        and p3 + 3 * se3 < 3.5
        and not ch.lemma6_window_hypothesis(P, R3).holds
        and ch.lemma6_gradient_exponent(P, R3).outcome() is None
        and ch.lemma6_gradient_exponent(R["P2"], R2).outcome() is True
    )


def _steps_run(P) -> dict:
    """The run at ``P.steps`` and at twice as many (the profile's)."""
    return {"half": ch.compute(P), "full": ch.compute(_with(P, steps=2 * P.steps))}


def _steps_check(P, R) -> bool:
    """Halving the steps: the gaps at the epochs' ends grow 1.5-fold or more, and so does the
    nearest angle after the first epoch, while ``L / lambda_k^2`` moves by less than 25 % and
    ``L`` stays within 1.3 times the optimum's loss."""
    half, full = R["half"].table, R["full"].table
    zeta = half["zeta end"] / full["zeta end"]
    angle = (half["nearest angle"] / full["nearest angle"]).iloc[1:]
    ratio = half["L / lambda^2"] / full["L / lambda^2"]
    near_opt = half["L"] / half["optimum loss"]
    return (
        bool(np.all(zeta >= 1.5))
        and bool(np.all(angle >= 1.5))
        and bool(np.all(np.abs(np.log(ratio)) < np.log(1.25)))
        and bool(np.all((near_opt > 1) & (near_opt < 1.3)))
    )


EXERCISES = {
    "ex-stage3-lam0": Asserted(
        params={"d": 20, "m": 100, "lam0": 0.02},
        says="Lemma 5's precondition alone fails (Stage 2's gap between 0.02^1.8 and "
        "0.04^1.8); its gated checks do not apply; the loss still falls; F.4, F.5, Lemma 6 hold",
        check=_lam0_check,
    ),
    "ex-stage3-r3": Asserted(
        params={"r": 3, "m_star": 4, "steps": 75},
        says="r = 3: resolution coarser than r = 2's, below lambda^2/10; Lemma 6's exponent "
        "hardly moves; its window has < 4 epochs, so its check does not apply",
        check=_r3_check,
        run=_r3_run,
    ),
    "ex-stage3-steps": Asserted(
        params={"steps": 75},
        says="half the steps: zeta at the epochs' ends and the nearest angle grow >= 1.5x; "
        "L / lambda^2 moves < 25 %",
        check=_steps_check,
        run=_steps_run,
    ),
}
