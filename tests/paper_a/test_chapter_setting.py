"""The chapter module of ``paper_a/setting``: its parameters, the page's parameters cell, and
what the page says about its setup, recomputed by an independent route from what actually ran
(at a tiny size): the network's second layer, the activations' formulas, the laws of the two
data models, the sweep's grid and draws, Theorem 3.2's assumption read from each draw, the
book's explicit ``d_suff`` and bounds (from the lemma's formulas, by hand), and the gate of
the scaling observation."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import norm as gaussian

from twolayer.core.params import ParameterError
from twolayer.paper_a import assumptions
from twolayer.paper_a.chapters import setting as ch

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "notebooks" / "paper_a" / "setting.md"
TINY = dict(ns=[4, 8], draws=4, num_ratios=4, d_data=60, aniso=0.5, device="cpu")


@functools.cache
def _tiny():
    torch.set_num_threads(1)
    P = ch.SPEC.params("smoke", **TINY)
    return P, ch.compute(P)


# --- parameters ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values, name",
    [
        ({"gamma": 0.0}, "gamma"),
        ({"gamma_figure": 1.5}, "gamma_figure"),
        ({"ns": [8, 4]}, "ns"),
        ({"ns": [1, 4]}, "ns"),
        ({"draws": 1}, "draws"),
        ({"ratio_min": 10.0, "ratio_max": 5.0}, "ratio_max"),
        ({"num_ratios": 2}, "num_ratios"),
        ({"delta": 0.5}, "delta"),
        ({"aniso": 1.0}, "aniso"),
        ({"gram": "exact"}, "gram"),
        ({"dtype": "float32"}, "dtype"),
        ({"d_data": 1}, "d_data"),
        ({"not_a_parameter": 1}, "not_a_parameter"),
    ],
)
def test_bad_parameter_stops_naming_it(values, name):
    with pytest.raises(ParameterError) as err:
        ch.SPEC.params("smoke", **values)
    assert repr(name) in str(err.value)


def test_defaults_in_every_profile_and_the_derived_grid():
    for profile in ("smoke", "book", "paper"):
        P = ch.SPEC.params(profile)
        assert P.profile == profile and P.gamma == 0.9 and P.delta == 1e-4
        # ratio_max: 0.6 x the largest d_suff / (n^2 log n); ratio_min: ratio_max / 300
        top = max(_d_suff_by_hand(n, P.gamma, P.delta) / (n * n * math.log(n)) for n in P.ns)
        assert P.ratio_max == pytest.approx(0.6 * top, rel=1e-12)
        assert P.ratio_min == pytest.approx(P.ratio_max / 300, rel=1e-12)
    assert ch.SPEC.params("smoke").aniso == 0.0 and ch.SPEC.params("book").aniso == 0.8


# --- the book's explicit Lemma 3.3, from the formulas of its box -------------------------------


def _forced(n, d, gamma, delta, s=1.0):
    """Whether the box's two bounds (each with delta/2) force the assumption at (n, d)."""
    t = s / math.sqrt(d) + math.sqrt(2 * s * math.log(4 * n / delta))
    r_min, r_max = math.sqrt(d) - t, math.sqrt(d) + t
    p = r_max * math.sqrt(2 * s * math.log(2 * n * (n - 1) / delta))
    return r_min > 0 and n <= gamma**3 / 3 * r_min**2 / p * r_min**2 / r_max**2


def _d_suff_by_hand(n, gamma, delta):
    lo, hi = 1, 1 << 40
    while hi - lo > 1:  # the smallest d at which the bounds force the assumption
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _forced(n, mid, gamma, delta) else (mid, hi)
    return hi


@pytest.mark.parametrize("n, gamma", [(4, 0.9), (16, 0.9), (8, 0.5)])
def test_d_suff_is_the_smallest_dimension_the_bounds_force(n, gamma):
    d = assumptions.sufficient_dimension(n, gamma, 1e-4)
    assert d == _d_suff_by_hand(n, gamma, 1e-4)
    assert _forced(n, d, gamma, 1e-4) and not _forced(n, d - 1, gamma, 1e-4)
    # the box's growth: 18 / gamma^6 n^2 log(n^2 / delta), to within a factor 2 at these n
    assert 0.5 < d / (18 / gamma**6 * n * n * math.log(n * n / 1e-4)) < 2


def test_the_sweep_grid_and_draws_as_the_page_states_them():
    P, R = _tiny()
    L = R.lemma
    rows = L.sweeps["isotropic"].rows
    ratios = np.geomspace(P.ratio_min, P.ratio_max, P.num_ratios)
    for n in P.ns:
        expected = sorted({max(2, round(r * n * n * math.log(n))) for r in ratios})
        assert sorted(rows[rows.n == n].d.unique()) == expected
        assert (rows[rows.n == n].groupby("d").size() == P.draws).all()
        at = L.at_suff[L.at_suff.n == n]
        assert len(at) == P.draws and set(at.d) == {_d_suff_by_hand(n, P.gamma, P.delta)}
    # Theorem 3.2's assumption, read from each draw by the box's formula
    for frame in (rows, L.at_suff, L.sweeps["anisotropic"].rows):
        by_hand = P.gamma**3 / 3 * frame.R_min**4 / (frame.p * frame.R_max**2)
        np.testing.assert_array_equal(frame.holds.to_numpy(), (frame.n <= by_hand).to_numpy())
    # the anisotropic sweep: s = ||Sigma||_2 = 1 + aniso, and Sigma has trace d
    assert L.sweeps["anisotropic"].s == 1 + P.aniso
    spec = assumptions.two_level_spectrum(101, P.aniso)
    assert spec.sum() == pytest.approx(101) and spec.max() == 1 + P.aniso


def test_the_gram_matrices_have_the_gaussian_law():
    """Draws at d = 4000: norms within a few units of sqrt(d), inner products of order
    sqrt(d) (Lemma 3.3's scales), over 64 data sets of 8 points."""
    rows = pd.DataFrame(
        assumptions.lemma33_sweep([8], None, 64, 0.9, seed=3, dims={8: [4000]}, gram="wishart")
    )
    assert abs(float(np.median(rows.R_max**2 + rows.R_min**2)) / 2 / 4000 - 1) < 0.05
    # p / sqrt(d) is the max of 28 |N(0, 1)|-like variables: median about 2.4
    assert 1.5 < float(np.median(rows.p / math.sqrt(4000))) < 3.5


def test_the_explicit_bounds_on_hand_made_draws():
    rows = pd.DataFrame([{"n": 4, "d": 100, "p": 30.0, "R_max": 11.0, "max_norm_dev": 2.0}])
    t = 1 / 10 + math.sqrt(2 * math.log(4 * 4 / 1e-4))
    assert ch.norm_excess(rows, 1e-4 / 2, 1.0) == pytest.approx(2.0 / t)
    pb = math.sqrt(2 * math.log(2 * 6 / (1e-4 / 2)))
    assert ch.inner_product_excess(rows, 1e-4 / 2, 1.0) == pytest.approx(30 / (pb * 11))


# --- the network, the activations and the data ----------------------------------------------------


def test_the_network_and_the_activations():
    P, R = _tiny()
    N, A = R.network, R.activations
    np.testing.assert_allclose(N.a, [5**-0.5] * 3 + [-(5**-0.5)] * 2, rtol=1e-15)
    assert N.homog_err < 1e-12 and N.smooth_err > 1e-3
    # phi(0) = 0, phi' in [gamma, 1] reached at the grid's ends, max |phi''| = (1 - gamma)/4 at 0
    g = P.gamma_figure
    assert A.phi0 <= 1e-15
    assert A.slope_min == pytest.approx(g + (1 - g) / (1 + math.exp(50)), abs=1e-15)
    assert A.slope_max == pytest.approx(1 - (1 - g) / (1 + math.exp(50)), abs=1e-15)
    assert A.curvature_max == pytest.approx((1 - g) / 4, rel=1e-12)
    z = torch.tensor([-3.0, 0.5, 2.0], dtype=torch.float64)
    by_hand = g * z + (1 - g) * torch.log((1 + torch.exp(z)) / 2)
    torch.testing.assert_close(A.smooth(z), by_hand, rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(A.leaky(z), torch.maximum(z, g * z))


def test_the_data_models_have_the_stated_laws():
    P, R = _tiny()
    D = R.data
    gmm, xor = D.gmm, D.xor
    # mixture: x = y mu + z, ||mu|| = d^0.3, z ~ N(0, I_d)
    assert np.linalg.norm(D.mu) == pytest.approx(P.d_data**0.3, rel=1e-12)
    noise = gmm.X - gmm.y[:, None] * D.mu
    assert abs(noise.mean()) < 4 / math.sqrt(noise.size)
    assert noise.var() == pytest.approx(1.0, abs=4 * math.sqrt(2 / noise.size))
    assert set(np.unique(gmm.y)) == {-1.0, 1.0}
    # XOR: mu_1 orthogonal to mu_2, equal norms, y = sign(|<mu_1, x>| - |<mu_2, x>|)
    m1, m2 = xor.info["mu1"], xor.info["mu2"]
    assert abs(m1 @ m2) < 1e-9 * (m1 @ m1) and m1 @ m1 == pytest.approx(m2 @ m2)
    y = np.where(np.abs(xor.X @ m1) >= np.abs(xor.X @ m2), 1.0, -1.0)
    np.testing.assert_array_equal(y, xor.y)
    # the projections of the figure are unit vectors, e2 orthogonal to mu
    assert np.linalg.norm(D.e2) == pytest.approx(1) and abs(D.e2 @ D.e1) < 1e-12
    # the fresh-sample statistics: Phi(-1) for the unit mean, 5 binomial SD plus one sample
    b = D.bayes["unit"]
    assert b.theory == pytest.approx(gaussian.cdf(-1.0), rel=1e-12)
    n = ch.N_FRESH_GMM
    assert b.slack == pytest.approx(5 * math.sqrt(b.theory * (1 - b.theory) / n) + 1 / n)
    assert D.linear_errors.shape == (20,) and D.linear_bound == 5 * math.sqrt(0.25 / 5000)
    assert D.xor_label_flips == 0


# --- the checks ---------------------------------------------------------------------------------


def test_the_scaling_gate_is_the_design_and_the_interval_width():
    P = ch.SPEC.params("smoke")
    assert ch.resolves(P, (0.2, 1.6)) and not ch.resolves(P, (0.2, 1.8))
    assert not ch.resolves(P, (math.nan, 1.0))
    assert not ch.resolves(ch.SPEC.params("smoke", ns=[4, 16]), (0.2, 1.0))


def test_the_checks_their_kinds_and_statements():
    P, R = _tiny()
    groups = (
        ch.NETWORK_CHECKS,
        ch.ACTIVATION_CHECKS,
        ch.DATA_CHECKS,
        ch.LEMMA_CHECKS,
        ch.SCALING_CHECKS,
    )
    claims = [c for g in groups for c in ch.claims(P, R, g)]
    assert all(c.detail for c in claims)
    evidence = {c.name: c.statement for c in claims if c.kind in ("theorem", "observation")}
    assert evidence == {
        "gmm_bayes_error_unit_mean": "a-sec-5#gmm",
        "xor_linear_error_half": "a-sec-5#xor",
        "assumption_holds_at_d_suff": "book-lem-d-suff",
        "norms_sqrt_d_plus_sqrt_log_n": "a-lem-3-3#norms",
        "inner_products_sqrt_d_log_n": "a-lem-3-3#inner-products",
        "norms_sqrt_d_plus_sqrt_log_n_anisotropic": "a-lem-3-3#norms",
        "inner_products_sqrt_d_log_n_anisotropic": "a-lem-3-3#inner-products",
        "d50_needs_the_log_factor": "book-obs-lemma33-log",
        "anisotropic_d50_needs_the_log_factor": "book-obs-lemma33-log",
    }
    # every book statement named is a prf label of the page
    text = PAGE.read_text(encoding="utf-8")
    for st in set(evidence.values()):
        label = st.partition("#")[0]
        assert label.startswith("a-") or f":label: {label}\n" in text
    # the bounds of the theorem checks hold on the tiny run (no false alarm at this size)
    for c in claims:
        if c.kind == "theorem":
            assert c.outcome() is not False, c.name
