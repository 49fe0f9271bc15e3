"""The exercises of ``notebooks/paper_a/setting.md``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from twolayer.paper_a import assumptions
from twolayer.paper_a.chapters import setting

from . import Asserted

CHAPTER = "paper_a/setting"

#: the page's default leak, against which ``ex-setting-gamma`` compares
GAMMA_PAGE = setting.SPEC.defaults["gamma"]


def _half_points(P, gamma: float) -> dict:
    """``d_50 / (n^2 log n)`` per ``n`` of the isotropic sweep at ``gamma`` (the other
    parameters as in ``P``, the grid placed by the page for that ``gamma``): the part of
    :func:`~twolayer.paper_a.chapters.setting.lemma33` the exercise reads (its bootstrap fit
    and its draws at ``d_suff`` are left out)."""
    Q = setting.SPEC.params(P.profile, seed=P.seed, num_ratios=P.num_ratios, gamma=gamma)
    ratios = np.geomspace(Q.ratio_min, Q.ratio_max, Q.num_ratios)
    rows = assumptions.lemma33_sweep(Q.ns, ratios, Q.draws, Q.gamma, seed=Q.seed, gram=Q.gram)
    return setting._sweep(pd.DataFrame(rows), 1.0).d50


def _gamma_pair(P) -> dict:
    """The half points at ``P.gamma`` and at the page's default leak."""
    return {"exercise": _half_points(P, P.gamma), "page": _half_points(P, GAMMA_PAGE)}


def _growth_exponent(P, R) -> float:
    """The mean over ``n`` of ``log(d_50 at gamma / d_50 at 0.9) / log(0.9 / gamma)``: 6 for
    a threshold that scales like ``gamma^-6``."""
    ex, page = R["exercise"], R["page"]
    logs = [math.log(ex[n] / page[n]) for n in P.ns]
    return float(np.mean(logs) / math.log(GAMMA_PAGE / P.gamma))


def _gamma_check(P, R) -> bool:
    grid_brackets = all(np.isfinite(R["exercise"][n]) for n in P.ns)
    return grid_brackets and 5.0 <= _growth_exponent(P, R) <= 7.0


def _aniso_check(P, R) -> bool:
    if "anisotropic" not in R.lemma.sweeps:  # aniso = 0: no anisotropic sweep
        return False
    bounds = [
        setting.norms_sqrt_d_plus_sqrt_log_n,
        setting.inner_products_sqrt_d_log_n,
        setting.norms_sqrt_d_plus_sqrt_log_n_anisotropic,
        setting.inner_products_sqrt_d_log_n_anisotropic,
    ]
    hold = all(f(P, R).outcome() is True for f in bounds)
    iso, an = R.lemma.sweeps["isotropic"].d50, R.lemma.sweeps["anisotropic"].d50
    return hold and all(an[n] > iso[n] for n in P.ns)


def _lemma_only(P):
    return setting.Result(lemma=setting.lemma33(P))


EXERCISES = {
    "ex-setting-gamma": Asserted(
        params={"gamma": 0.5, "num_ratios": 12},
        says="d_50 / (n^2 log n) grows like gamma^-6 (exponent 5 to 7 on average over n, "
        "against gamma = 0.9) and the grid still brackets the transition for every n",
        check=_gamma_check,
        run=_gamma_pair,
    ),
    "ex-setting-aniso": Asserted(
        params={"aniso": 0.95},
        says="the norm and inner-product bounds hold for both covariances, and the "
        "anisotropic d_50 lies above the isotropic one for every n",
        check=_aniso_check,
        run=_lemma_only,
    ),
}
