"""twolayer.paper_a.assumptions beyond the isotropic defaults (mutation testing found these
paths untested): the anisotropic Gaussian draws of Lemma 3.3's sweep, the explicit bounds with a
covariance of norm sigma_max != 1, the Gram statistics of one point and of small norms, and the
sweep's records for given dimensions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from twolayer.paper_a import assumptions as As


def _reference_stats(n, d, seed, aniso, chunk):
    """Norms and p drawn as the docstring says: chunk coordinates at a time from one
    generator, scaled by the square root of the two-level spectrum."""
    rng = np.random.default_rng(seed)
    scale = np.sqrt(As.two_level_spectrum(d, aniso))
    X = (
        np.concatenate(
            [rng.standard_normal((n, min(chunk, d - s))) for s in range(0, d, chunk)], axis=1
        )
        * scale
    )
    G = X @ X.T
    return np.sqrt(np.diag(G)), float(np.abs(G - np.diag(np.diag(G))).max())


@pytest.mark.parametrize("aniso", [0.0, 0.6])
@pytest.mark.parametrize("chunk", [3, 1 << 18])
def test_gaussian_gram_stats_against_a_direct_draw(monkeypatch, aniso, chunk):
    monkeypatch.setattr(As, "CHUNK", chunk)
    norms, p = As._gaussian_gram_stats(4, 10, [7, 4, 10, 0], aniso)
    ref_norms, ref_p = _reference_stats(4, 10, [7, 4, 10, 0], aniso, chunk)
    assert np.allclose(norms, ref_norms, rtol=1e-12) and p == pytest.approx(ref_p, rel=1e-12)


def test_gaussian_gram_stats_default_is_isotropic_and_aniso_changes_the_draws():
    a = As._gaussian_gram_stats(3, 50, 1)
    b = As._gaussian_gram_stats(3, 50, 1, 0.0)
    c = As._gaussian_gram_stats(3, 50, 1, 0.8)
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]
    assert not np.allclose(b[0], c[0])


def test_anisotropic_norms_concentrate_at_sqrt_d():
    """tr Sigma = d, so E||x||^2 = d: the mean squared norm over many draws is d."""
    norms, _ = As._gaussian_gram_stats(400, 200, 3, 0.9)
    assert np.mean(norms**2) == pytest.approx(200, rel=0.03)


@pytest.mark.parametrize("s", [1.0, 2.0, 0.5])
def test_explicit_bounds_with_sigma_max(s):
    n, d, delta = 8, 1000, 1e-3
    assert As.norm_deviation_bound(n, d, delta, s) == pytest.approx(
        s / math.sqrt(d) + math.sqrt(2 * s * math.log(2 * n / delta))
    )
    assert As.inner_product_bound(n, delta, s) == pytest.approx(
        math.sqrt(2 * s * math.log(2 * (n * (n - 1) / 2) / delta))
    )


def test_gram_statistics_of_one_point_and_small_norms():
    norms, p, G = As.gram_statistics(np.array([[0.3, 0.4]]))
    assert norms == pytest.approx([0.5]) and p.shape == () and p == 0
    norms, p, _ = As.gram_statistics(np.zeros((5, 1, 3)) + 0.1)  # a batch of one-point sets
    assert p.shape == (5,) and np.all(p == 0) and np.allclose(norms, math.sqrt(0.03))
    norms, p, _ = As.gram_statistics(np.array([[0.1, 0.0], [0.0, 0.2], [0.05, 0.05]]))
    assert np.allclose(norms, [0.1, 0.2, math.sqrt(0.005)]) and p == pytest.approx(0.01)


def test_near_orthogonality_records_gamma():
    r = As.near_orthogonality(np.eye(3) + 0.01, 0.7)
    assert r.gamma == 0.7 and r.as_dict()["gamma"] == 0.7


def test_lemma33_sweep_records():
    rows = As.lemma33_sweep(
        [2, 3], None, draws=2, gamma=0.9, seed=5, dims={2: [20, 40], 3: [30]}, progress=False
    )
    assert [(r["n"], r["d"], r["draw"]) for r in rows] == [
        (2, 20, 0),
        (2, 20, 1),
        (2, 40, 0),
        (2, 40, 1),
        (3, 30, 0),
        (3, 30, 1),
    ]
    for r in rows:
        norms, p = As._gaussian_gram_stats(r["n"], r["d"], [5, r["n"], r["d"], r["draw"]])
        assert r["p"] == pytest.approx(p) and r["R_min"] == pytest.approx(norms.min())
        q = As.assumption_ratio(norms, np.array(p), r["n"], 0.9)
        assert r["assumption_ratio"] == pytest.approx(float(q)) and r["holds"] == (q <= 1)
        assert r["ratio"] == pytest.approx(r["d"] / (r["n"] ** 2 * math.log(r["n"])))
    assert any(r["holds"] for r in rows) or any(1 < r["assumption_ratio"] for r in rows)
    # ratios: d = round(ratio n^2 log n), at least 2
    tiny = As.lemma33_sweep([2], [1e-6, 10.0], draws=1, gamma=0.9, seed=0, progress=False)
    assert [r["d"] for r in tiny] == [2, round(10 * 4 * math.log(2))]
    aniso = As.lemma33_sweep(
        [2], None, draws=1, gamma=0.9, seed=5, dims={2: [20]}, progress=False, aniso=0.5
    )
    assert aniso[0]["p"] != rows[0]["p"]
    with pytest.raises(ValueError, match="every n must be at least 2"):
        As.lemma33_sweep([1], [1.0], draws=1, gamma=0.9, seed=0, progress=False)


def test_holds_flag_on_both_sides_of_one():
    """Rows with an assumption ratio below and between 1 and 2 are flagged correctly."""
    rows = As.lemma33_sweep(
        [4], None, draws=8, gamma=0.9, seed=1, dims={4: [200, 2000]}, progress=False
    )
    qs = [r["assumption_ratio"] for r in rows]
    assert any(q <= 1 for q in qs) and any(1 < q <= 2 for q in qs) and any(q > 2 for q in qs)
    assert all(r["holds"] == (r["assumption_ratio"] <= 1) for r in rows)


def test_error_messages():
    with pytest.raises(ValueError, match=r"^X must be an \(n, d\) array with n >= 2$"):
        As.data_statistics(np.ones((1, 3)), 0.5)
    with pytest.raises(ValueError, match="^n must be at least 2$"):
        As.sufficient_dimension(1, 0.5, 0.1)


@pytest.mark.parametrize("aniso", [0.0, 0.6])
def test_wishart_gram_has_the_law_of_the_drawn_data(aniso):
    """The Gram matrix drawn from its law (Bartlett) against the one of drawn data: the same
    distribution of squared norms and of p (two-sample KS tests over 1 500 draws each, fixed
    seeds), and the exact moments E G_ii = tr Sigma = d, E G_ij^2 = tr Sigma^2."""
    from scipy import stats

    n, d, draws = 5, 40, 1500
    w = [As._wishart_gram_stats(n, d, [1, k], aniso) for k in range(draws)]
    c = [As._gaussian_gram_stats(n, d, [2, k], aniso) for k in range(draws)]
    w_sq = np.concatenate([x[0] ** 2 for x in w])
    c_sq = np.concatenate([x[0] ** 2 for x in c])
    assert stats.ks_2samp(w_sq, c_sq).pvalue > 1e-3
    assert stats.ks_2samp([x[1] for x in w], [x[1] for x in c]).pvalue > 1e-3
    # squared norms: mean d, variance 2 tr Sigma^2
    tr2 = float(np.sum(As.two_level_spectrum(d, aniso) ** 2)) if aniso else float(d)
    assert abs(w_sq.mean() - d) < 4 * math.sqrt(2 * tr2 / w_sq.size)
    assert w_sq.var() == pytest.approx(2 * tr2, rel=0.1)


def test_wishart_gram_falls_back_to_the_data_below_n_and_is_seeded():
    # d < n: a singular Wishart; the data are drawn instead (same numbers as "coordinates")
    a, b = As._wishart_gram_stats(6, 4, [3]), As._gaussian_gram_stats(6, 4, [3])
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]
    x, y = As._wishart_gram_stats(6, 10**7, [3]), As._wishart_gram_stats(6, 10**7, [3])
    assert np.array_equal(x[0], y[0]) and x[1] == y[1]  # seeded; d = 10^7 costs O(n^3)
    assert abs(np.mean(x[0] ** 2) / 10**7 - 1) < 0.01


@pytest.mark.parametrize(
    "n, d, aniso, data_drawn",
    [
        (4, 3, 0.0, True),  # d < n: W_4(I, 3) is singular
        (4, 4, 0.0, False),  # d == n: the smallest Wishart Bartlett draws (df >= n)
        (4, 7, 0.0, False),  # n <= d < 2n: still one Wishart W_4(I, 7)
        (4, 7, 0.6, True),  # d_1 = 3 < n: the first part W_4(I, 3) is singular
        (4, 8, 0.6, False),  # d_1 == n and d - d_1 == n: both parts at the boundary
        (4, 9, 0.6, False),  # d_1 == n exactly, d - d_1 = 5 (odd d)
    ],
)
def test_wishart_gram_draws_the_data_exactly_where_a_wishart_part_is_singular(
    n, d, aniso, data_drawn
):
    """Which route ``_wishart_gram_stats`` takes, at the boundaries. Bartlett's decomposition
    draws ``W_n(I, df)`` for ``df >= n`` (``_wishart``); the isotropic Gram matrix is one
    ``W_n(I, d)``, the two-level one ``(1 + aniso) W_n(I, d_1) + s W_n(I, d - d_1)`` with
    ``d_1 = d // 2`` (:func:`two_level_spectrum`). Where a part has fewer than ``n`` degrees of
    freedom the data are drawn instead: the very numbers of
    ``_gaussian_gram_stats(n, d, seed, aniso)`` (the same seed and covariance); elsewhere the
    Gram matrix is drawn from its law, another draw than the data's (``lemma33_sweep``: "the
    two give different draws of the same law"), so the norms differ."""
    seed = [11, n, d, 0]
    norms, p = As._wishart_gram_stats(n, d, seed, aniso)
    data_norms, data_p = As._gaussian_gram_stats(n, d, seed, aniso)
    assert norms.shape == (n,) and np.all(norms > 0) and p >= 0
    if data_drawn:
        assert np.array_equal(norms, data_norms) and p == data_p
    else:
        assert not np.allclose(norms, data_norms)


@pytest.mark.parametrize(
    "n, d, draws",
    [
        (1, 2, 400),  # d_1 = d - d_1 = 1: one variance of each level
        (1, 3, 400),  # d_1 = 1, d - d_1 = 2
        (2, 5, 600),  # odd d: d_1 = 2, d - d_1 = 3; n = 2, so p = |G_12|
        (5, 11, 600),  # odd d: d_1 = 5, d - d_1 = 6
    ],
)
def test_wishart_gram_moments_of_the_two_level_law(n, d, draws):
    """The moments of the anisotropic Gram matrix drawn from its law, against the data's law
    derived by hand. With ``Sigma`` diagonal, ``d_1 = d // 2`` variances ``1 + aniso`` and
    ``d - d_1`` variances ``s = (d - d_1 (1 + aniso)) / (d - d_1)`` (so ``tr Sigma = d``), and
    ``x, y ~ N(0, Sigma)`` independent:

    * ``E ||x||^2 = tr Sigma = d_1 (1 + aniso) + (d - d_1) s = d``, and
      ``Var ||x||^2 = 2 tr Sigma^2`` (a sum of independent ``sigma_k chi^2(1)``);
    * ``E <x, y>^2 = tr Sigma^2 = d_1 (1 + aniso)^2 + (d - d_1) s^2`` (given ``y``,
      ``<x, y> ~ N(0, y' Sigma y)``), and ``E <x, y>^4 = 3 E (y' Sigma y)^2
      = 3 ((tr Sigma^2)^2 + 2 tr Sigma^4)``, so ``Var <x, y>^2 = 2 (tr Sigma^2)^2 + 6 tr Sigma^4``.

    Monte Carlo over ``draws`` seeded draws (``n`` independent squared norms each; for
    ``n = 2``, ``p^2 = <x_1, x_2>^2``), each mean within 5 standard errors. Odd ``d`` and
    ``d_1 = 1`` or ``d - d_1 = 1`` are where a wrong split or a wrong level would show."""
    aniso = 0.9
    d1 = d // 2
    s = (d - d1 * (1 + aniso)) / (d - d1)
    tr1 = d1 * (1 + aniso) + (d - d1) * s
    tr2 = d1 * (1 + aniso) ** 2 + (d - d1) * s**2
    tr4 = d1 * (1 + aniso) ** 4 + (d - d1) * s**4
    assert tr1 == pytest.approx(d)
    out = [As._wishart_gram_stats(n, d, [13, k], aniso) for k in range(draws)]
    sq = np.concatenate([norms**2 for norms, _ in out])
    assert abs(sq.mean() - d) < 5 * math.sqrt(2 * tr2 / sq.size)
    if n == 2:
        p2 = np.array([p for _, p in out]) ** 2
        var = 2 * tr2**2 + 6 * tr4
        assert abs(p2.mean() - tr2) < 5 * math.sqrt(var / p2.size)


def test_lemma33_sweep_gram_choice():
    rows_c = As.lemma33_sweep([4], None, 3, 0.9, seed=0, dims={4: [50]})
    rows_w = As.lemma33_sweep([4], None, 3, 0.9, seed=0, dims={4: [50]}, gram="wishart")
    assert [r["d"] for r in rows_c] == [r["d"] for r in rows_w]
    assert rows_c != rows_w  # other draws of the same law
    with pytest.raises(ValueError, match="gram"):
        As.lemma33_sweep([4], None, 3, 0.9, seed=0, dims={4: [50]}, gram="exact")
