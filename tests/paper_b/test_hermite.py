"""Hermite coefficients of ReLU (Paper B, Lemma A.1) and Claim B.1."""

import math

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
