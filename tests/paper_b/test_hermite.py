"""Hermite coefficients of ReLU (Paper B, Lemma A.1) and Claim B.1."""

import math
import warnings

import numpy as np
import pytest

from twolayer.paper_b import hermite, kernels
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod


def test_hermite_polynomials_orthonormal():
    x, w = np.polynomial.hermite_e.hermegauss(60)
    H = hermite.hermite_normalized(20, x)
    gram = (H * (w / math.sqrt(2 * math.pi))) @ H.T
    assert np.abs(gram - np.eye(21)).max() < 1e-12


def test_closed_form_matches_exact_quadrature():
    q = hermite.relu_coefficients_quadrature(60)
    c = hermite.relu_coefficients(60)
    assert np.abs(q - c).max() < 1e-13


def test_closed_form_matches_scipy_quad():
    from scipy.integrate import quad

    for k in range(0, 16):

        def f(x, k=k):
            return x * hermite.hermite_normalized(k, np.array(x))[k] * math.exp(-x * x / 2)

        v = quad(f, 0, np.inf, epsabs=1e-14, limit=200)[0] / math.sqrt(2 * math.pi)
        assert v == pytest.approx(hermite.relu_coefficient(k), abs=1e-12)


def test_gauss_hermite_exact_for_polynomials_and_converges_for_relu():
    c = hermite.coefficients_gauss_hermite(lambda x: x**3, 5, 10)
    assert np.allclose(c, [0, 3, 0, math.sqrt(6), 0, 0], atol=1e-12)
    errs = [
        np.abs(
            hermite.coefficients_gauss_hermite(kernels.relu, 8, n) - hermite.relu_coefficients(8)
        ).max()
        for n in (20, 150)
    ]
    # a kink: the error falls like 1/nodes, not exponentially
    assert errs[1] < errs[0] / 5 and errs[0] < 2e-2


def test_abs_coefficients():
    q = hermite.coefficients_gauss_hermite(np.abs, 6, 150)
    assert np.allclose(q, [hermite.abs_coefficient(k) for k in range(7)], atol=5e-3)
    assert np.allclose(
        2 * hermite.relu_coefficients_quadrature(6)[2::2],
        [hermite.abs_coefficient(k) for k in (2, 4, 6)],
    )


def test_sum_of_squares_and_kernel_series():
    assert hermite.tail_bound(4000) > 0
    assert hermite.tail_bound(4000) < 1e-5
    t = np.linspace(-1, 1, 41)
    assert (
        np.abs(hermite.kernel_series(t, 400) - kernels.k1(t)).max()
        <= hermite.tail_bound(400) + 1e-14
    )
    assert (
        np.abs(hermite.kernel_series(t, 400, start=2) - kernels.kappa2(t)).max()
        <= hermite.tail_bound(400) + 1e-14
    )


def test_decay_rate_five_quarters():
    k = np.arange(200, 2001, 2)
    c = np.abs([hermite.relu_coefficient(int(i)) for i in k])
    slope = np.polyfit(np.log(k), np.log(c), 1)[0]
    assert abs(slope + 1.25) < 0.01


def test_claim_b1_corrected_exact_literal_off():
    t = tmod.prototype(6, 0)
    rng = np.random.default_rng(0)
    net = pop.Net(
        rng.standard_normal(4), 1.5 * rng.standard_normal((4, 6)), 0.2, rng.standard_normal(6)
    )
    terms = hermite.claim_b1_terms(net, t)
    L = pop.loss(net, t)
    assert terms["sum_corrected"] == pytest.approx(L, rel=1e-12)
    assert terms["sum_literal"] - L == pytest.approx(terms["literal_offset"] ** 2, rel=1e-10)
    m, se = hermite.mc_ge2(net, t, 300_000, 1, literal=True)
    assert abs(m - terms["ge2_literal"]) < 5 * se
    m, se = hermite.mc_ge2(net, t, 300_000, 1, literal=False)
    assert abs(m - terms["ge2_corrected"]) < 5 * se


def test_piecewise_linear_quadrature_gives_abs_and_relu():
    k = 40
    q_abs = hermite.piecewise_linear_coefficients(k, 1.0, -1.0)
    assert np.abs(q_abs - [hermite.abs_coefficient(j) for j in range(k + 1)]).max() < 1e-13
    q_relu = hermite.piecewise_linear_coefficients(k, 1.0, 0.0)
    assert np.abs(q_relu - hermite.relu_coefficients(k)).max() < 1e-13
    # the identity x = relu(x) - relu(-x) has only h_1: a case where most coefficients are 0
    q_id = hermite.piecewise_linear_coefficients(k, 1.0, 1.0)
    assert q_id[1] == pytest.approx(1.0, abs=1e-13)
    assert np.abs(np.delete(q_id, 1)).max() < 1e-13
    # and |x| is not twice ReLU in its odd coefficients: sigma_1(|x|) = 0 != 2 * 1/2
    assert abs(q_abs[1] - 2 * hermite.relu_coefficient(1)) > 0.5


def test_correlated_moments_claim_a1():
    for rho in (0.0, 0.4, -0.9):
        M = hermite.correlated_moments(12, rho)
        assert np.abs(M - np.diag(rho ** np.arange(13))).max() < 1e-11
    # a wrong correlation is detected: E[h_1(x) h_1(y)] = rho, not rho^2
    M = hermite.correlated_moments(4, 0.5)
    assert abs(M[1, 1] - 0.25) > 0.2


def test_lemma_i1_maximum_and_rate():
    for k in (1, 4, 30, 500):
        for p in (1, 2, 3):
            num = hermite.lemma_i1_max(k, p)
            assert num == pytest.approx(hermite.lemma_i1_closed_form(k, p), rel=1e-9)
            assert k ** (p / 2) * num <= (p / math.e) ** (p / 2) + 1e-12
    # the paper's proof says max |cos^k sin| = 1/sqrt(k): false (the constant is e^(-1/2))
    assert hermite.lemma_i1_max(100, 1) < 0.95 / math.sqrt(100)


def test_lemma_i2_corrected_and_printed():
    for beta in (0.05, 0.3, 0.9, 0.999):
        assert hermite.lemma_i2_max(beta) == pytest.approx(
            hermite.lemma_i2_corrected(beta), rel=1e-10
        )
    # the printed bound is false above the crossing, true below it
    assert hermite.lemma_i2_max(0.99) / hermite.lemma_i2_printed(0.99) > 7
    assert hermite.lemma_i2_max(0.99) == pytest.approx(6.05, abs=0.01)
    assert hermite.lemma_i2_printed(0.05) >= hermite.lemma_i2_max(0.05)
    c = hermite.LEMMA_I2_CROSSING
    assert hermite.lemma_i2_printed(c) == pytest.approx(hermite.lemma_i2_corrected(c), rel=1e-12)


def test_mc_second_order_projection_is_sigma2_vHv():
    t = tmod.random_teacher(6, 2, 3, 0)
    rng = np.random.default_rng(0)
    V = np.stack([t.info["basis"][:, 0], rng.standard_normal(6)])
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    mc, se = hermite.mc_second_order(t, V, 300_000, 1, batch=70_000)
    theory = hermite.relu_coefficient(2) * np.einsum("id,de,ie->i", V, t.H(), V)
    assert np.all(np.abs(mc - theory) < 5 * se)
    # H's sign matters: the projection of -f_* has the opposite sign
    neg = tmod.Teacher(-t.a, t.W, info=t.info)
    mc_neg, _ = hermite.mc_second_order(neg, V, 300_000, 1)
    assert np.allclose(mc_neg, -mc)


def test_mc_ge2_batches_give_the_same_draws():
    t = tmod.prototype(5, 0)
    rng = np.random.default_rng(3)
    net = pop.Net(rng.standard_normal(3), rng.standard_normal((3, 5)))
    one = hermite.mc_ge2(net, t, 50_000, 7, batch=50_000)
    many = hermite.mc_ge2(net, t, 50_000, 7, batch=7_000)
    assert one[0] == pytest.approx(many[0], rel=1e-12)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 12, 41])
@pytest.mark.parametrize("a, b", [(1.0, 0.0), (0.0, -1.0), (2.0, 0.5), (-0.3, 1.7)])
def test_piecewise_linear_is_two_relus(k, a, b):
    """``f(x) = a x`` on ``x > 0`` and ``b x`` on ``x < 0`` is ``a relu(x) - b relu(-x)``, and
    ``E[relu(-x) h_j(x)] = (-1)^j sigma_j`` (``h_j`` has the parity of ``j``): its coefficients
    follow from Lemma A.1's closed form, for any slopes and sizes (the defaults are ReLU)."""
    sigma = np.array([hermite.relu_coefficient(j) for j in range(k + 1)])
    sign = (-1.0) ** np.arange(k + 1)
    got = hermite.piecewise_linear_coefficients(k, a, b)
    np.testing.assert_allclose(got, a * sigma - b * sign * sigma, rtol=0, atol=1e-13)
    if (a, b) == (1.0, 0.0):
        np.testing.assert_array_equal(hermite.piecewise_linear_coefficients(k), got)


def test_claim_b1_linear_terms_by_hand():
    """Claim B.1's first two terms for a student with ``a = (1, -2)``, ``w_1 = (3, 4)`` (norm 5),
    ``w_2 = (0, 1)``: ``alpha^ = -(5 - 2) / sqrt(2 pi)`` and ``beta^ = -((3, 4) - 2 (0, 1)) / 2
    = (-3/2, -1)``; with ``alpha = 1`` and ``beta = (1/2, 0)`` the terms are
    ``(1 + 3 / sqrt(2 pi))^2`` and ``2^2 + 1^2 = 5``, and with the third term they add up to
    the loss."""
    t = tmod.prototype(2, 0)
    net = pop.Net(np.array([1.0, -2.0]), np.array([[3.0, 4.0], [0.0, 1.0]]), 1.0, [0.5, 0.0])
    terms = hermite.claim_b1_terms(net, t)
    assert terms["alpha_term"] == pytest.approx((1 + 3 / math.sqrt(2 * math.pi)) ** 2, rel=1e-14)
    assert terms["beta_term"] == pytest.approx(5.0, rel=1e-14)
    total = terms["alpha_term"] + terms["beta_term"] + terms["ge2_corrected"]
    assert total == pytest.approx(pop.loss(net, t), rel=1e-12)


def test_kernel_series_small_polynomial_by_hand():
    """With ``k_max = 2`` the series is ``sigma_0^2 + sigma_1^2 t + sigma_2^2 t^2`` where
    ``sigma_0 = E[relu] = 1/sqrt(2 pi)``, ``sigma_1 = E[x relu] = 1/2`` and ``sigma_2 =
    E[relu (x^2 - 1)] / sqrt(2) = (2 - 1) / sqrt(2 pi) / sqrt(2)``, i.e. ``1/(2 pi) + t/4 +
    t^2/(4 pi)``; the output has the shape of ``t`` (a 2x2 grid of integers, a 0-d scalar)."""
    t = np.array([[0, 1], [-1, 2]])
    expect = np.array(
        [
            [1 / (2 * math.pi), 1 / 4 + 3 / (4 * math.pi)],
            [3 / (4 * math.pi) - 1 / 4, 1 / 2 + 3 / (2 * math.pi)],
        ]
    )
    got = hermite.kernel_series(t, 2)
    assert got.shape == (2, 2)
    np.testing.assert_allclose(got, expect, rtol=1e-13, atol=0)
    got2 = hermite.kernel_series(t, 2, start=2)
    assert got2.shape == (2, 2)
    np.testing.assert_allclose(got2, t**2 / (4 * math.pi), rtol=1e-15, atol=0)
    s = hermite.kernel_series(0.5, 2)
    assert s.shape == ()
    assert float(s) == pytest.approx(
        1 / (2 * math.pi) + 1 / 8 + 1 / (16 * math.pi), rel=1e-15, abs=0
    )


def test_kernel_series_integer_t_is_evaluated_in_floats():
    """The truncated series is the polynomial with coefficients ``sigma_k^2``: at the integer
    ``t = 2`` it equals Horner's evaluation (numpy ``polyval``) at ``2.0``; powers of an int64
    ``2`` would wrap to 0 from ``2^64`` on and lose the largest terms."""
    c = np.array([hermite.relu_coefficient(k) for k in range(71)]) ** 2
    horner = np.polynomial.polynomial.polyval(2.0, c)
    assert float(hermite.kernel_series(2, 70)) == pytest.approx(horner, rel=1e-12, abs=0)
    assert float(hermite.kernel_series([2], 70)[0]) == pytest.approx(horner, rel=1e-12, abs=0)


def test_correlated_moments_two_node_rule_by_hand():
    """With ``nodes = 2`` the rule has ``x, z = +-1`` with weight 1/4 each: exact up to degree 3
    per axis, but ``h_2(x) = (x^2 - 1)/sqrt(2)`` vanishes at both nodes, so ``M[2, 2] = 0``
    instead of ``rho^2``; ``E[x y] = rho`` and the other entries (odd, or
    ``E[y^2 - 1] = rho^2 + (1 - rho^2) - 1``) are 0. The default (``k_max + 1`` nodes, as
    documented) is the exact rule."""
    M = hermite.correlated_moments(2, 0.6, nodes=2)
    np.testing.assert_allclose(M, np.diag([1.0, 0.6, 0.0]), rtol=0, atol=1e-15)
    for k, rho in ((2, 0.6), (4, 0.5), (12, -0.9)):
        np.testing.assert_array_equal(
            hermite.correlated_moments(k, rho), hermite.correlated_moments(k, rho, nodes=k + 1)
        )
    assert hermite.correlated_moments(2, 0.6)[2, 2] == pytest.approx(0.36, abs=1e-14)


def test_lemma_i1_defaults_and_maxima_at_or_past_the_edges():
    """``p`` defaults to 1: ``max cos sin = max sin(2 theta)/2 = 1/2``. ``k = 0``: ``max sin = 1``
    at ``theta = pi/2``, the last grid point. ``k = 1, p = 4``: ``tan^2 theta = 4``, so
    ``cos^2 = 1/5``, ``sin^2 = 4/5`` and the maximum ``16 / (25 sqrt 5)`` lies past
    ``theta = pi/3``. The grid defaults to 20001 points (same result as passing it)."""
    assert hermite.lemma_i1_closed_form(1) == pytest.approx(0.5, rel=1e-15, abs=0)
    assert hermite.lemma_i1_max(1) == pytest.approx(0.5, rel=1e-14, abs=0)
    assert hermite.lemma_i1_max(0, 1) == pytest.approx(1.0, rel=1e-15, abs=0)
    assert hermite.lemma_i1_max(0, 2) == pytest.approx(1.0, rel=1e-15, abs=0)
    assert hermite.lemma_i1_max(1, 4) == pytest.approx(16 / (25 * math.sqrt(5)), rel=1e-12, abs=0)
    for k, p in ((1, 4), (3, 2), (10**6, 1)):
        assert hermite.lemma_i1_max(k, p) == hermite.lemma_i1_max(k, p, grid=20_001)


def test_lemma_i1_narrow_peaks_are_found():
    """For ``p = 1`` the maximum is ``e^{-1/2} k^{-1/2} (1 + O(1/k))`` at ``theta ~ k^{-1/2}``:
    for ``k = 1e9`` and ``1e12`` the peak is narrower than the grid step ``pi / 40000`` and
    lies between the first grid points, so only the bounded search on the neighbours of the
    grid's best point finds it (``cos^k`` in floats is good to about ``k eps ~ 1e-4``). By
    ``theta -> pi/2 - theta`` the same holds for ``cos sin^p`` next to ``pi/2``. At ``k = 1e6``
    the search is tight (``xatol 1e-14``): the result agrees with the closed form to 1e-9,
    which the optimizer's default ``xatol = 1e-5`` misses, and no solver warning is raised."""
    for k in (10**9, 10**12):
        expect = math.exp(-0.5) / math.sqrt(k)
        assert hermite.lemma_i1_max(k, 1) == pytest.approx(expect, rel=1e-3, abs=0)
        assert hermite.lemma_i1_max(1, k) == pytest.approx(expect, rel=1e-3, abs=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        num = hermite.lemma_i1_max(10**6, 1)
    assert num == pytest.approx(hermite.lemma_i1_closed_form(10**6, 1), rel=1e-9, abs=0)


def test_lemma_i2_max_to_machine_precision():
    """On the log scale the objective ``(log k - k ln(1/beta)) / 2`` is concave with second
    derivative ``-1/2`` at its peak, so a search to ``xatol = 1e-12`` gets the maximum to
    rounding; scipy's default ``1e-5`` leaves errors near 1e-13. No solver warning either."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for beta in (0.05, 0.2, math.exp(-1.0), 0.5, 0.9):
            assert hermite.lemma_i2_max(beta) == pytest.approx(
                hermite.lemma_i2_corrected(beta), rel=1e-14, abs=0
            )


@pytest.mark.parametrize("k", [-1, -2, -7])
def test_relu_coefficient_rejects_negative_order(k):
    with pytest.raises(ValueError, match=r"^k must be >= 0$"):
        hermite.relu_coefficient(k)


@pytest.mark.parametrize(("k", "sign"), [(2**54 + 2, 1.0), (2**54 + 4, -1.0)])
def test_relu_coefficient_sign_is_exact_at_huge_even_orders(k, sign):
    """Lemma A.1's sign ``(-1)^{k/2-1}`` is an integer power: for ``k = 2^54 + 2``,
    ``k/2 - 1 = 2^53`` is even (``+``); for ``k = 2^54 + 4`` it is ``2^53 + 1``, odd (``-``).
    In floating point ``k/2`` is rounded (``2^53 + 1`` is not a double), and ``k/2 - 1`` comes
    out ``2^53 - 1`` and ``2^53``: both signs would flip. (At these orders the magnitude loses
    its digits to the cancellation of the log-gammas; only the sign is pinned.)"""
    v = hermite.relu_coefficient(k)
    assert v != 0 and math.copysign(1.0, v) == sign
