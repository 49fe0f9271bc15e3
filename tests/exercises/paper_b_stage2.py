"""The exercises of ``notebooks/paper_b/stage2.md``."""

from __future__ import annotations

import numpy as np

from twolayer.paper_b.chapters import stage2 as ch

from . import Asserted

CHAPTER = "paper_b/stage2"


def _lam_scale_check(P, R) -> bool:
    """``lam_scale = 1``: ``stage2_lambda_regime`` fails; most runs of the sweep keep no
    neuron, and there ``zeta`` (the zero network's gap) is 0 up to the grid; the rate's check
    is not applicable, with ``lam_scale`` above 0.1 among its reasons."""
    sw = R.eps_sweep
    kept, zeta = np.asarray(sw["kept"]), np.asarray(sw["zeta"])
    none = kept == 0
    hyps = ch.assumptions(P, R) + [ch.stage2_lambda_regime(P, R)]
    _, why = ch.sweep_resolution(P, R)
    return (
        not ch.stage2_lambda_regime(P, R).holds
        and none.sum() > none.size / 2
        and bool(np.all(np.abs(zeta[none]) < 1e-6))
        and ch.zeta_falls_with_eps0(P, R, hyps).outcome() is None
        and "lam_scale" in why
    )


def _width_check(P, R) -> bool:
    """``d = 20``: the zero thresholds lie between 0.25 and 0.45; at ``lambda = sqrt(eps0)``
    no run of the sweep keeps a neuron at width 16, some do at width 128, and the main run at
    the profile's ``m = 40`` keeps none (``sqrt(eps0)`` above its threshold)."""
    sw = R.eps_sweep
    thr = np.append(np.asarray(sw["threshold"]).ravel(), R.thr)
    kept = np.asarray(sw["kept"])
    return (
        bool(np.all((thr > 0.25) & (thr < 0.45)))
        and bool(np.all(kept[0] == 0))
        and bool(np.any(kept[-1] > 0))
        and R.lam_paper > R.thr
        and R.kept_paper == 0
    )


EXERCISES = {
    "ex-stage2-lam-scale": Asserted(
        params={"lam_scale": 1.0},
        says="stage2_lambda_regime fails; most sweep runs keep no neuron (zeta ~ 0 there); "
        "zeta_falls_with_eps0 is not applicable",
        check=_lam_scale_check,
    ),
    "ex-stage2-width": Asserted(
        params={"d": 20, "lam_scale": 1.0},
        says="thresholds 0.25-0.45 at d = 20; sqrt(eps0) keeps no neuron at widths 16 and 40, "
        "some at 128",
        check=_width_check,
    ),
}
