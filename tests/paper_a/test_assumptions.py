"""Tests of twolayer.paper_a.assumptions: Theorem 3.2's assumption and the bounds behind
Lemma 3.3."""

from __future__ import annotations

import math

import numpy as np
import pytest

from twolayer.paper_a import assumptions as As
from twolayer.paper_a import data

# --- near_orthogonality on hand-made data ---------------------------------------------------------


def test_orthogonal_rows():
    X = np.diag([1.0, 2.0, 3.0])
    r = As.near_orthogonality(X, 0.5)
    assert r.n == 3 and r.p == 0.0
    assert (r.R_min, r.R_max) == (1.0, 3.0)
    assert r.n_max == math.inf and r.holds and r.ratio == 0.0


def test_three_point_case_by_hand_fails():
    # x1 = (2,0,0), x2 = (1,3,0), x3 = (0,1,1):
    # ||x|| = 2, sqrt(10), sqrt(2); <x1,x2> = 2, <x1,x3> = 0, <x2,x3> = 3 -> p = 3
    # n_max = (gamma^3/3) (R_min^2/p) (R_min^2/R_max^2) = (1/24)(2/3)(2/10) = 1/180 at gamma = 1/2
    X = np.array([[2.0, 0, 0], [1.0, 3.0, 0], [0, 1.0, 1.0]])
    r = As.near_orthogonality(X, 0.5)
    assert r.p == pytest.approx(3.0, rel=1e-15)
    assert r.R_min == pytest.approx(math.sqrt(2), rel=1e-15)
    assert r.R_max == pytest.approx(math.sqrt(10), rel=1e-15)
    assert r.n_max == pytest.approx(1 / 180, rel=1e-14)
    assert r.ratio == pytest.approx(540.0, rel=1e-14)
    assert r.holds is False


def test_three_point_case_by_hand_holds():
    # x1 = (10,0,0), x2 = (0,10,0), x3 = (0.1,0,10): p = |<x1,x3>| = 1,
    # R_min = 10, R_max = sqrt(100.01); at gamma = 1: n_max = (1/3) * 100 * 100/100.01
    X = np.array([[10.0, 0, 0], [0, 10.0, 0], [0.1, 0, 10.0]])
    r = As.near_orthogonality(X, 1.0)
    assert r.p == pytest.approx(1.0, rel=1e-14)
    assert (r.R_min, r.R_max) == (pytest.approx(10.0), pytest.approx(math.sqrt(100.01)))
    n_max = (1 / 3) * 100 * 100 / 100.01
    assert r.n_max == pytest.approx(n_max, rel=1e-14)
    assert r.ratio == pytest.approx(3 / n_max, rel=1e-14)
    assert r.holds is True


def test_p_uses_absolute_values():
    X = np.array([[1.0, 0.0], [-1.0, 1.0]])  # <x1, x2> = -1
    assert As.near_orthogonality(X, 1.0).p == 1.0


def test_as_dict():
    X = np.array([[2.0, 0, 0], [1.0, 3.0, 0], [0, 1.0, 1.0]])
    d = As.near_orthogonality(X, 0.5).as_dict()
    assert set(d) == {"n", "p", "R_min", "R_max", "gamma", "n_max", "ratio", "holds"}
    assert d["holds"] is False and d["ratio"] == pytest.approx(540.0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("d", [20, 400, 5000])
def test_ratio_and_holds_against_a_direct_computation(seed, d):
    """Theorem 3.2's assumption computed here from its statement, pair by pair (not from the
    library's own fields): n <= (gamma^3/3) (R_min^2/p) (R_min^2/R_max^2)."""
    X = data.nearly_orthogonal(6, d, seed).X
    r = As.near_orthogonality(X, 0.9)
    norms = [float(np.sqrt(x @ x)) for x in X]
    p = max(abs(float(X[i] @ X[j])) for i in range(6) for j in range(6) if i != j)
    n_max = 0.9**3 / 3 * min(norms) ** 2 / p * min(norms) ** 2 / max(norms) ** 2
    assert r.n_max == pytest.approx(n_max, rel=1e-12) and r.p == pytest.approx(p, rel=1e-12)
    assert r.ratio == pytest.approx(6 / n_max, rel=1e-12)
    assert r.holds == (6 <= n_max)
    G = X @ X.T
    ratio = As.assumption_ratio(np.sqrt(np.diag(G))[None], np.array([p]), 6, 0.9)
    assert ratio[0] == pytest.approx(6 / n_max, rel=1e-12)


@pytest.mark.parametrize("gamma", [0.0, -0.5, 1.5])
def test_near_orthogonality_bad_gamma(gamma):
    with pytest.raises(ValueError, match="gamma"):
        As.near_orthogonality(np.eye(3), gamma)


@pytest.mark.parametrize("X", [np.ones((1, 3)), np.ones(3), np.ones((2, 2, 2))])
def test_near_orthogonality_bad_shape(X):
    with pytest.raises(ValueError, match="n >= 2"):
        As.near_orthogonality(X, 0.5)


# --- vectorized statistics ------------------------------------------------------------------------


def test_gram_statistics_by_hand():
    X = np.array([[2.0, 0, 0], [1.0, 3.0, 0], [0, 1.0, 1.0]])
    norms, p, G = As.gram_statistics(X)
    np.testing.assert_allclose(norms, [2, math.sqrt(10), math.sqrt(2)], rtol=1e-15)
    assert float(p) == 3.0
    np.testing.assert_array_equal(G, X @ X.T)


def test_assumption_ratio_vectorised_equals_near_orthogonality():
    rng = np.random.default_rng(0)
    Xs = rng.standard_normal((7, 5, 60))
    norms, p, _ = As.gram_statistics(Xs)
    assert norms.shape == (7, 5) and p.shape == (7,)
    ratios = As.assumption_ratio(norms, p, 5, 0.7)
    assert ratios.shape == (7,)
    expected = [As.near_orthogonality(X, 0.7).ratio for X in Xs]
    np.testing.assert_allclose(ratios, expected, rtol=1e-13)
    # the hand case: 540 at gamma = 1/2
    X = np.array([[2.0, 0, 0], [1.0, 3.0, 0], [0, 1.0, 1.0]])
    n3, p3, _ = As.gram_statistics(X)
    assert float(As.assumption_ratio(n3, p3, 3, 0.5)) == pytest.approx(540.0, rel=1e-14)


# --- the probability bounds -----------------------------------------------------------------------


def test_bounds_by_hand():
    assert As.norm_deviation_bound(10, 100, 0.1) == pytest.approx(
        0.1 + math.sqrt(2 * math.log(200)), rel=1e-15
    )
    assert As.inner_product_bound(10, 0.1) == pytest.approx(math.sqrt(2 * math.log(900)), rel=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_bounds_hold_on_gaussian_draws(seed):
    # each bound fails with probability <= delta = 1e-4 per draw (5 draws: <= 1e-3 overall)
    n, d, delta = 30, 500, 1e-4
    X = np.random.default_rng(seed).standard_normal((n, d))
    norms, p, _ = As.gram_statistics(X)
    assert np.abs(norms - math.sqrt(d)).max() <= As.norm_deviation_bound(n, d, delta)
    assert p <= As.inner_product_bound(n, delta) * norms.max()


def k_factor(n, d, gamma, delta):
    """holds_surely(n, d) <=> d >= D0 K(d)^2 with D0 = 9 n^2 s^2 / gamma^6, u = t / sqrt(d),
    K = (1 + u)^3 / (1 - u)^4 (from n <= (gamma^3/3) rmin^4 / (s rmax^3))."""
    u = As.norm_deviation_bound(n, d, delta / 2) / math.sqrt(d)
    return (1 + u) ** 3 / (1 - u) ** 4


@pytest.mark.parametrize(
    "n,gamma,delta", [(2, 1.0, 0.1), (5, 0.5, 0.05), (20, 0.9, 0.01), (100, 1.0, 0.05)]
)
def test_sufficient_dimension_is_the_smallest(n, gamma, delta):
    d = As.sufficient_dimension(n, gamma, delta)
    assert isinstance(d, int)
    assert As.holds_surely(n, d, gamma, delta)
    assert not As.holds_surely(n, d - 1, gamma, delta)
    # closed form: D0 K(d)^2 <= d < D0 K(d-1)^2 + 1, and
    # D0 = (18 / gamma^6) n^2 log(2 n (n-1) / delta)
    s = As.inner_product_bound(n, delta / 2)
    D0 = 9 * n**2 * s**2 / gamma**6
    assert D0 == pytest.approx(18 / gamma**6 * n**2 * math.log(2 * n * (n - 1) / delta), rel=1e-12)
    assert D0 * k_factor(n, d, gamma, delta) ** 2 <= d * (1 + 1e-12)
    assert d < D0 * k_factor(n, d - 1, gamma, delta) ** 2 + 1


def test_sufficient_dimension_monotone_in_n_and_decreasing_in_gamma():
    ds = [As.sufficient_dimension(n, 0.8, 0.05) for n in [2, 3, 5, 10, 20, 50]]
    assert all(a < b for a, b in zip(ds, ds[1:]))
    dg = [As.sufficient_dimension(10, g, 0.05) for g in [0.3, 0.5, 0.7, 0.9, 1.0]]
    assert all(a > b for a, b in zip(dg, dg[1:]))
    # smaller failure probability needs more dimensions
    assert As.sufficient_dimension(10, 0.8, 1e-6) > As.sufficient_dimension(10, 0.8, 0.1)


def test_sufficient_dimension_needs_two_points():
    with pytest.raises(ValueError):
        As.sufficient_dimension(1, 0.5, 0.1)


def test_assumption_holds_on_draws_at_sufficient_dimension():
    # at d = sufficient_dimension(n, gamma, delta) the assumption holds with probability
    # >= 1 - delta; 5 draws at delta = 1e-4 fail together with probability <= 5e-4
    n, gamma, delta = 5, 1.0, 1e-4
    d = As.sufficient_dimension(n, gamma, delta)
    for seed in range(5):
        assert As.near_orthogonality(data.nearly_orthogonal(n, d, seed).X, gamma).holds


def test_holds_surely_false_for_tiny_d():
    assert not As.holds_surely(10, 4, 1.0, 0.1)  # sqrt(d) - t <= 0


# --- the Lemma 3.3 sweep --------------------------------------------------------------------------

SWEEP = dict(ns=[4, 7], ratios=[0.5, 2.0], draws=2, gamma=0.5)


def test_lemma33_sweep_deterministic_per_seed():
    a = As.lemma33_sweep(seed=3, progress=False, **SWEEP)
    b = As.lemma33_sweep(seed=3, progress=False, **SWEEP)
    c = As.lemma33_sweep(seed=4, progress=False, **SWEEP)
    assert a == b
    assert [r["p"] for r in a] != [r["p"] for r in c]


def test_lemma33_sweep_rows_consistent():
    rows = As.lemma33_sweep(seed=1, progress=False, **SWEEP)
    assert len(rows) == 2 * 2 * 2
    keys = {
        "n",
        "d",
        "ratio",
        "draw",
        "p",
        "R_min",
        "R_max",
        "max_norm_dev",
        "assumption_ratio",
        "holds",
    }
    for r in rows:
        assert set(r) == keys
        n, d = r["n"], r["d"]
        assert d == max(2, round(r["ratio"] * n * n * math.log(n)))
        assert r["ratio"] == pytest.approx(d / (n * n * math.log(n)), rel=1e-15)
        assert r["holds"] == (r["assumption_ratio"] <= 1)
        assert 0 < r["R_min"] <= r["R_max"]
        # any cell can be recomputed alone from its generator (seed, n, d, draw)
        X = np.random.default_rng([1, n, d, r["draw"]]).standard_normal((n, d))
        ref = As.near_orthogonality(X, SWEEP["gamma"])
        assert r["p"] == pytest.approx(ref.p, rel=1e-14)
        assert (r["R_min"], r["R_max"]) == (
            pytest.approx(ref.R_min, rel=1e-14),
            pytest.approx(ref.R_max, rel=1e-14),
        )
        assert r["assumption_ratio"] == pytest.approx(ref.ratio, rel=1e-13)
        assert r["holds"] == ref.holds
        norms = np.linalg.norm(X, axis=1)
        assert r["max_norm_dev"] == pytest.approx(np.abs(norms - math.sqrt(d)).max(), rel=1e-12)
    # the nominal ratios are the requested ones up to rounding of d
    for n, c in [(4, 0.5), (4, 2.0), (7, 0.5), (7, 2.0)]:
        cell = [r for r in rows if r["n"] == n and r["d"] == max(2, round(c * n * n * math.log(n)))]
        assert [r["draw"] for r in cell] == [0, 1]
