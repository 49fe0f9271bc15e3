"""Failing cases of ``twolayer.paper_a.chapters.setting``."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from failing_cases import Case
from twolayer.paper_a import assumptions, data
from twolayer.paper_a.chapters import setting as chapter

CHAPTER = "paper_a/setting"


@functools.cache
def _params():
    return chapter.SPEC.params("smoke")


def _data_result(bayes=None, X=None, y=None) -> chapter.Result:
    """A :class:`~chapter.DataModels` with the fresh-sample statistics of ``bayes`` or of the
    20 random linear classifiers on ``(X, y)``, the illustrated data left out."""
    lin = None if X is None else chapter.linear_errors(X, y, _directions(X.shape[1]))
    return chapter.Result(
        data=chapter.DataModels(
            gmm=None, xor=None, e1=None, e2=None, u1=None, u2=None,
            bayes={"unit": bayes}, xor_label_flips=0, linear_errors=lin,
            linear_bound=None if y is None else 5 * math.sqrt(0.25 / len(y)),
        )
    )  # fmt: skip


def _directions(d):
    return np.random.default_rng([0, 2]).standard_normal((20, d))


def _noisier_mixture():
    """Mixture samples ``x = y mu + 2 z`` (noise twice the stated one), ``||mu|| = 1``: the
    error of ``sign<mu, x>`` is ``Phi(-1/2) = 0.31``, not ``Phi(-1) = 0.16``."""
    P = _params()
    mu = data.gaussian_mixture(n=2, d=P.d_data, seed=0, beta=0.3).info["mu"]
    mu = mu / np.linalg.norm(mu)
    fresh = data.gaussian_mixture(n=chapter.N_FRESH_GMM, d=P.d_data, seed=1, mu=mu)
    X = fresh.y[:, None] * mu + 2 * (fresh.X - fresh.y[:, None] * mu)
    return chapter.gmm_bayes_error_unit_mean(P, _data_result(chapter.bayes_error(X, fresh.y, mu)))


def _linear_labels():
    """Noisy 2-XOR's points with the linear labels ``sign<mu_1, x>``: a linear classifier
    then does better than chance."""
    P = _params()
    xor = data.noisy_xor(n=chapter.N_FRESH_XOR, d=P.d_data, seed=1, beta=0.3)
    y = np.sign(xor.X @ xor.info["mu1"])
    return chapter.xor_linear_error_half(P, _data_result(X=xor.X, y=y))


def _lemma_result(rows=None, at_suff=None, kind="isotropic", s=1.0, ci=None) -> chapter.Result:
    empty = pd.DataFrame(columns=["n", "d", "p", "R_min", "R_max", "max_norm_dev"])
    sweeps = {kind: chapter.Sweep(rows=empty if rows is None else rows, frac=None, d50={}, s=s)}
    nan = (math.nan, math.nan)
    return chapter.Result(
        lemma=chapter.Lemma33(
            d_suff={}, ratios=None, sweeps=sweeps, at_suff=empty if at_suff is None else at_suff,
            b=math.nan, ci=ci if kind == "isotropic" and ci else nan,
            b_aniso=math.nan if kind == "anisotropic" else None,
            ci_aniso=(ci or nan) if kind == "anisotropic" else None,
        )
    )  # fmt: skip


def _too_small_d_suff():
    """Draws at a hundredth of ``d_suff`` (a sufficient dimension 100 times too small)."""
    P = _params()
    dims = {n: [assumptions.sufficient_dimension(n, P.gamma, P.delta) // 100] for n in P.ns}
    at = pd.DataFrame(
        assumptions.lemma33_sweep(P.ns, None, 4, P.gamma, seed=1, dims=dims, gram="wishart")
    )
    return chapter.assumption_holds_at_d_suff(P, _lemma_result(at_suff=at))


@functools.cache
def _spiked_rows(n: int = 8, d: int = 10_000, draws: int = 3) -> pd.DataFrame:
    """Gaussian data with a spiked covariance, ``tr Sigma = d`` but ``||Sigma||_2 = d/4`` (not
    ``O(1)``: outside Lemma 3.3's hypothesis): one shared direction dominates."""
    lam = np.full(d, 0.75 * d / (d - 1))
    lam[0] = d / 4
    rng = np.random.default_rng(0)
    rows = []
    for k in range(draws):
        X = rng.standard_normal((n, d)) * np.sqrt(lam)
        norms, p = assumptions._norms_and_p(X @ X.T)
        rows.append(
            {"n": n, "d": d, "draw": k, "p": p, "R_min": norms.min(), "R_max": norms.max(),
             "max_norm_dev": float(np.abs(norms - math.sqrt(d)).max())}
        )  # fmt: skip
    return pd.DataFrame(rows)


def _spiked(check, kind: str, s: float):
    """``check`` on the spiked data, judged with ``s`` (the ``||Sigma||_2`` the sweep
    states): the hypothesis ``||Sigma||_2 = O(1)`` fails."""
    return check(_params(), _lemma_result(rows=_spiked_rows(), kind=kind, s=s))


def _n_squared_sweep(kind: str):
    """A sweep whose half points grow like ``n^2`` alone (``b = 0``): each draw satisfies
    the assumption once ``d >= 20 n^2 e^{0.2 g}``, ``g`` standard normal, 64 draws per cell
    on the grid of ``d / (n^2 log n)`` from 0.5 to 50."""
    rng = np.random.default_rng(0)
    rows = []
    for n in (4, 8, 16):
        for r in np.geomspace(0.5, 50, 8):
            d = round(r * n * n * math.log(n))
            for k in range(64):
                threshold = 20 * n * n * math.exp(0.2 * rng.standard_normal())
                rows.append({"n": n, "d": d, "draw": k, "holds": d >= threshold})
    _, ci = assumptions.log_exponent(rows, n_boot=200, seed=0)
    check = (
        chapter.d50_needs_the_log_factor
        if kind == "isotropic"
        else chapter.anisotropic_d50_needs_the_log_factor
    )
    return check(_params(), _lemma_result(kind=kind, ci=ci))


CASES = {
    "gmm_bayes_error_unit_mean": Case(
        "mixture noise twice the stated one: sign<mu, x> errs 0.31, not Phi(-1) = 0.16",
        _noisier_mixture,
    ),
    "xor_linear_error_half": Case(
        "XOR's points with linear labels sign<mu_1, x>: random directions beat chance",
        _linear_labels,
    ),
    "assumption_holds_at_d_suff": Case(
        "draws at a hundredth of d_suff (a sufficient dimension 100 times too small)",
        _too_small_d_suff,
    ),
    "norms_sqrt_d_plus_sqrt_log_n": Case(
        "spiked covariance, ||Sigma||_2 = d/4 judged with s = 1: norms far from sqrt(d)",
        lambda: _spiked(chapter.norms_sqrt_d_plus_sqrt_log_n, "isotropic", 1.0),
    ),
    "inner_products_sqrt_d_log_n": Case(
        "spiked covariance, ||Sigma||_2 = d/4 judged with s = 1: inner products of order d",
        lambda: _spiked(chapter.inner_products_sqrt_d_log_n, "isotropic", 1.0),
    ),
    "norms_sqrt_d_plus_sqrt_log_n_anisotropic": Case(
        "spiked covariance, ||Sigma||_2 = d/4 judged with s = 1.8",
        lambda: _spiked(chapter.norms_sqrt_d_plus_sqrt_log_n_anisotropic, "anisotropic", 1.8),
    ),
    "inner_products_sqrt_d_log_n_anisotropic": Case(
        "spiked covariance, ||Sigma||_2 = d/4 judged with s = 1.8",
        lambda: _spiked(chapter.inner_products_sqrt_d_log_n_anisotropic, "anisotropic", 1.8),
    ),
    "d50_needs_the_log_factor": Case(
        "a sweep whose half points grow like n^2 alone (b = 0)",
        lambda: _n_squared_sweep("isotropic"),
    ),
    "anisotropic_d50_needs_the_log_factor": Case(
        "the anisotropic sweep's half points grow like n^2 alone (b = 0)",
        lambda: _n_squared_sweep("anisotropic"),
    ),
}
