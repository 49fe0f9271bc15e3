"""Unit tests of twolayer.paper_b.certificate (Paper B's dual certificate, test function,
Lemma 7)."""

import math

import numpy as np
import pytest

from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import certificate as cert
from twolayer.paper_b import kernels
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod


def test_kappa_matches_series_and_derivatives():
    t = np.linspace(-0.95, 0.95, 9)
    for ell in (2, 4, 10):
        assert np.allclose(cert.kappa(t, ell), cert.kappa_series(t, ell, 4000), atol=1e-6)
        h = 1e-6
        fd1 = (cert.kappa(t + h, ell) - cert.kappa(t - h, ell)) / (2 * h)
        assert np.allclose(cert.kappa(t, ell, 1), fd1, rtol=1e-6, atol=1e-6)
        fd2 = (cert.kappa(t + h, ell, 1) - cert.kappa(t - h, ell, 1)) / (2 * h)
        assert np.allclose(cert.kappa(t, ell, 2), fd2, rtol=1e-5, atol=1e-5)
        assert cert.kappa(1.0, ell) == pytest.approx(1.0, abs=1e-12)
    # kappa_2 is kappa2 normalized
    assert np.allclose(cert.kappa(t, 2), kernels.kappa2(t) / kernels.kappa2(1.0), atol=1e-12)


def test_kappa_clips_rounding_outside_the_interval():
    """``t`` a cosine rounded just outside ``[-1, 1]`` (one ulp) is read as ``+-1``: the values
    equal those at ``+-1`` and ``kappa''`` is ``+inf`` there (the series ``sum k (k - 1)
    sigma_k^2 t^(k-2)`` diverges at ``t = +-1``: ``sigma_k^2 ~ k^(-5/2)`` and only even ``k >= 2``
    contribute, so ``t^(k-2) = 1`` at both ends), never NaN from ``sqrt(1 - t^2)``."""
    for ell in (2, 4):
        for edge in (1.0, -1.0):
            out = np.nextafter(edge, 2 * edge)
            assert abs(out) > 1
            for deriv in (0, 1):
                assert cert.kappa(out, ell, deriv) == cert.kappa(edge, ell, deriv)
            assert cert.kappa(out, ell, 2) == math.inf
            assert cert.kappa(np.array([out, 0.5]), ell, 2)[0] == math.inf


def test_kappa_computes_in_double_precision():
    """A single-precision or integer ``t`` is evaluated in double precision: the same values
    (to 1e-14) as the float64 number it represents, for ``kappa''`` too (its ``1 - t^2`` in
    single precision would be off by about 1e-8)."""
    t32 = np.array([0.3, -0.7, 0.95], dtype=np.float32)
    t64 = t32.astype(np.float64)
    for deriv in (0, 1, 2):
        v = cert.kappa(t32, 4, deriv)
        assert v.dtype == np.float64
        assert np.allclose(v, cert.kappa(t64, 4, deriv), rtol=1e-14, atol=0)
    assert np.array_equal(cert.kappa(np.array([0, -1]), 4), cert.kappa(np.array([0.0, -1.0]), 4))


def test_relu_ge_removes_low_orders():
    from numpy.polynomial.hermite_e import hermegauss

    from twolayer.paper_b import hermite as herm

    x, w = hermegauss(200)
    w = w / math.sqrt(2 * math.pi)
    H = herm.hermite_normalized(5, x)
    f = cert.relu_ge(x, 4)
    assert np.all(np.abs(H[:4] @ (w * f)) < 2e-3)  # kink: quadrature converges slowly
    assert abs(cert.Z2(4) - (0.5 - np.sum(herm.relu_coefficients(3) ** 2))) < 1e-15


@pytest.mark.parametrize("ell", [2, 4, 10])
def test_certificate_interpolates_and_inventory_values(ell):
    t = tmod.prototype(5, 0)
    C = cert.solve(t, ell)
    assert C.interpolation_residual() < 1e-12
    th = (np.arange(3600) + 0.5) * math.pi / 3600
    rho, _ = cert.rho_eta(C, cert.plane_directions(t.info["basis"], th))
    # INVENTORY: rho = 0.027, 0.89, 2.71 and ||p|| = 10.4, 16.8, 41.3 for ell = 2, 4, 10
    ref = {2: (0.027, 10.4), 4: (0.89, 16.8), 10: (2.71, 41.3)}[ell]
    assert rho == pytest.approx(ref[0], rel=0.02)
    assert math.sqrt(C.p_norm2()) == pytest.approx(ref[1], rel=0.01)


def test_certificate_system_and_rhs():
    """The returned system is the one solved: ``rhs`` is ``(sign a*_1..m, 0 ... 0)`` (the values
    ``eta(u_i) = sign a*_i``, then ``m (r - 1)`` zero tangent derivatives), and ``matrix @ (alpha,
    c) = rhs``; the tangent bases are ``(m, d, r - 1)``, orthonormal, orthogonal to ``u_j`` and
    in ``S_*`` (the span of ``info['basis']``)."""
    t = tmod.prototype(4, 1)
    C = cert.solve(t, 4)
    m, d = t.W.shape
    r = t.info["basis"].shape[1]
    expected = np.concatenate([np.sign(t.a), np.zeros(m * (r - 1))])
    assert isinstance(C.rhs, np.ndarray) and np.array_equal(C.rhs, expected)
    assert np.allclose(C.matrix @ np.concatenate([C.alpha, C.c.ravel()]), C.rhs, atol=1e-10)
    assert C.T.shape == (m, d, r - 1)
    B = t.info["basis"]
    for u, Tj in zip(C.U, C.T, strict=True):
        assert np.allclose(Tj.T @ Tj, np.eye(r - 1), atol=1e-12)
        assert np.allclose(u @ Tj, 0, atol=1e-12)
        assert np.allclose(B @ (B.T @ Tj), Tj, atol=1e-12)


def test_rho_eta_excludes_rows_within_min_delta():
    """Rows at angle ``<= min_delta`` from a teacher direction (equality included) are left
    out: their ratio is NaN (a float array), the others are ``(1 - |eta|) / delta^2``, and the
    minimum is over the kept rows only."""
    t = tmod.prototype(3, 1)
    C = cert.solve(t, 4)
    B = t.info["basis"]
    W = cert.plane_directions(B, [0.2, 0.9, 2.0, 2.7])
    _, delta = cert.angle_to_teachers(W, C.U)
    md = float(np.sort(delta)[1])  # exactly the second smallest angle: excluded, like the first
    rho, ratio = cert.rho_eta(C, W, min_delta=md)
    assert ratio.dtype == np.float64 and ratio.shape == (4,)
    out = delta <= md
    assert out.sum() == 2 and np.all(np.isnan(ratio[out]))
    expected = (1 - np.abs(C.eta(W[~out]))) / delta[~out] ** 2
    assert np.allclose(ratio[~out], expected, rtol=1e-12)
    assert rho == pytest.approx(expected.min(), rel=1e-12)


def test_tangent_gradient_matches_finite_differences():
    t = tmod.prototype(3, 1)
    C = cert.solve(t, 4)
    B = t.info["basis"]
    for th in (0.3, 1.1, 2.5):
        w = cert.plane_directions(B, [th])[0]
        tau = cert.plane_directions(B, [th + math.pi / 2])[0]
        h = 1e-5
        fd = (C.eta(np.cos(h) * w + np.sin(h) * tau) - C.eta(np.cos(h) * w - np.sin(h) * tau)) / (
            2 * h
        )
        assert C.tangent_grad(w[None])[0] @ tau == pytest.approx(fd[0], abs=1e-6)


def test_p_represents_eta_monte_carlo():
    t = tmod.prototype(3, 2)
    C = cert.solve(t, 4)
    W = np.concatenate([C.U, np.random.default_rng(0).standard_normal((2, 3))])
    mc, se = cert.mc_identity(C, W, 200_000, 0)
    assert np.all(np.abs(mc - C.eta(W)) <= 4.5 * se)
    X = np.random.default_rng(1).standard_normal((200_000, 3))
    p2 = np.mean(C.p(X) ** 2)
    assert p2 == pytest.approx(C.p_norm2(), rel=0.05)


def test_test_profile_and_half_width():
    assert cert.test_profile(0.0, 4) == pytest.approx(
        sum(abs(c) for c in cert.herm.relu_coefficients(7)[4:8])
    )
    assert cert.half_width(64) < cert.half_width(16) < cert.half_width(4)


def test_sign_flip_keeps_function_and_descent_direction():
    t = tmod.prototype(4, 0)
    net = alg.stage2(alg.stage1(alg.symmetric_init(4, 20, 0), t), t, 0.02)[0]
    nf = cert.sign_flip(net, t)
    X = np.random.default_rng(0).standard_normal((100, 4))
    assert np.allclose(net(X), nf(X), atol=1e-12)
    assert pop.regularized_loss(nf, t, 0.02) == pytest.approx(
        pop.regularized_loss(net, t, 0.02), rel=1e-12
    )
    U = t.W / np.linalg.norm(t.W, axis=1, keepdims=True)
    owner, _ = cert.angle_to_teachers(nf.W, U)
    assert np.all(np.sum(nf.W * U[owner], 1) >= 0)
    D, owner, q = cert.descent_direction(nf, t, 0.3)
    assert np.all(q >= 0) and np.all(D.a == 0)
    for i in range(t.m):
        if np.any((owner == i) & (q > 0)):
            assert np.sum(nf.a[owner == i] * q[owner == i]) == pytest.approx(t.a[i])
    # <g, D> is the directional derivative of L_lambda along D
    g = pop.grad(nf, t, 0.02)
    h = 1e-6
    plus = pop.Net(nf.a + h * D.a, nf.W + h * D.W, nf.alpha + h * D.alpha, nf.beta + h * D.beta)
    minus = pop.Net(nf.a - h * D.a, nf.W - h * D.W, nf.alpha - h * D.alpha, nf.beta - h * D.beta)
    fd = (pop.regularized_loss(plus, t, 0.02) - pop.regularized_loss(minus, t, 0.02)) / (2 * h)
    assert cert.inner(g, D) == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_sign_flip_by_hand():
    """Lemma F.14 on hand-made neurons: ``w_j -> -w_j`` exactly when ``w_j . w*_i < 0`` for
    its owner (a zero inner product is not flipped), ``beta`` gains ``a_j w_j`` of the flipped
    neurons, and the function is unchanged (``relu(z) = relu(-z) + z``)."""
    X = np.random.default_rng(3).standard_normal((50, 2))
    # teacher direction (0.8, 0.6): (1, -1.2) has w.u = +0.08 but w/u sums to -0.75 < 0
    t = tmod.Teacher(np.array([2.0]), np.array([[4.0, 3.0]]))
    W = np.array([[-1.0, 1.2], [1.0, -1.2], [-2.0, -1.0], [0.5, 0.5]])
    net = pop.Net(np.array([0.5, -1.5, 0.25, 3.0]), W, 0.4, np.array([0.3, -0.2]))
    nf = cert.sign_flip(net, t)
    assert np.array_equal(nf.W, [[1.0, -1.2], [1.0, -1.2], [2.0, 1.0], [0.5, 0.5]])
    assert np.array_equal(nf.a, net.a) and nf.alpha == 0.4
    assert np.allclose(nf.beta, [0.3 - 0.5 - 0.5, -0.2 + 0.6 - 0.25], rtol=0, atol=1e-15)
    assert np.allclose(nf(X), net(X), rtol=0, atol=1e-12)
    # teacher direction (1, 1)/sqrt(2): (-2, 2) and (3, -3) are orthogonal to it exactly in
    # floating point (equal coordinates of u): zero counts as aligned, neither is flipped
    t = tmod.Teacher(np.array([-0.5]), np.array([[1.0, 1.0]]))
    W = np.array([[-2.0, 2.0], [3.0, -3.0], [-1.0, -2.0]])
    net = pop.Net(np.array([0.7, -0.3, 1.2]), W, 0.0, np.array([0.1, 0.2]))
    U = t.W / np.linalg.norm(t.W, axis=1, keepdims=True)
    assert np.array_equal(W[:2] @ U[0], [0.0, 0.0])  # the edge case is really there
    nf = cert.sign_flip(net, t)
    assert np.array_equal(nf.W, [[-2.0, 2.0], [3.0, -3.0], [1.0, 2.0]])
    assert np.allclose(nf.beta, [0.1 - 1.2, 0.2 - 2.4], rtol=0, atol=1e-15)
    assert np.allclose(nf(X), net(X), rtol=0, atol=1e-12)


def _q_instance(w0=(0.0, 0.0, 0.0), b0=0.0, alpha=0.4, beta=(0.1, -0.2, 0.3)):
    """Teachers ``2 relu(2 x_1) - 0.5 relu(3 x_2)``; students: two aligned with teacher 0 with
    ``a = 1, 3``, one aligned with teacher 0 of the wrong sign, one aligned with teacher 1, one
    at angle ``arctan(1/2)`` from teacher 1, one orthogonal to both (owner 0 by the tie)."""
    t = tmod.Teacher(
        np.array([2.0, -0.5]), np.array([[2.0, 0.0, 0.0], [0.0, 3.0, 0.0]]), np.array(w0), b0
    )
    a = np.array([1.0, 3.0, -1.0, -2.0, -1.0, 5.0])
    W = np.array(
        [
            [1.0, 0.0, 0.0],
            [0.5, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 2.0, 1.0],
            [0.0, 0.0, 1.0],
        ]
    )
    return t, pop.Net(a, W, alpha, np.array(beta))


def test_q_weights_by_hand():
    """``q_ij = a_j a*_i / sum_{T_{i,+}} a_j^2`` on ``T_{i,+}(delta_close)`` (angle at most
    ``delta_close``, inclusive, and the sign of ``a*_i``), else 0 (proof of Lemma 6): numbers
    by hand, and condition (1) ``sum_j a_j q_ij = a*_i`` of Lemma F.17."""
    t, net = _q_instance()
    # delta_close = 0: exactly aligned neurons (angle 0) are within it
    owner, q = cert.q_weights(net, t, 0.0)
    assert np.array_equal(owner, [0, 0, 0, 1, 1, 0])
    assert np.allclose(q, [2 / 10, 6 / 10, 0, 1 / 4, 0, 0], rtol=1e-15, atol=0)
    for i in range(2):
        assert np.sum(net.a[owner == i] * q[owner == i]) == pytest.approx(t.a[i], rel=1e-15)
    # at angle arctan(1/2) = 0.46: excluded at delta_close = 0.3, included at 0.5
    assert np.array_equal(cert.q_weights(net, t, 0.3)[1], q)
    _, q = cert.q_weights(net, t, 0.5)
    assert np.allclose(q, [2 / 10, 6 / 10, 0, 1 / 5, 1 / 10, 0], rtol=1e-15, atol=0)
    # delta_close equal to that angle (as angle_to_teachers measures it) includes the neuron
    delta = cert.angle_to_teachers(net.W, np.array([[1.0, 0, 0], [0, 1.0, 0]]))[1][4]
    assert delta == pytest.approx(math.atan(0.5), rel=1e-15)
    assert np.array_equal(cert.q_weights(net, t, delta)[1], q)
    # a teacher (along e_3, a* = -1) whose only close neuron has the wrong sign gets no q
    # (and no division by zero)
    t3 = tmod.Teacher(np.array([-1.0]), np.array([[0.0, 0.0, 1.0]]))
    assert np.array_equal(cert.q_weights(net, t3, 0.0)[1], np.zeros(6))


def test_descent_direction_by_hand():
    """Lemma F.17's direction: ``D_a = 0``, ``D_alpha = alpha + alpha_*``, ``D_beta = beta +
    beta_*``, ``D_{w_j} = w_j - q_ij w*_i`` with ``alpha_* = sum a*_i ||w*_i|| / sqrt(2 pi) +
    b0`` and ``beta_* = sum a*_i w*_i / 2 + w0`` worked out by hand."""
    t, net = _q_instance(w0=(0.5, 0.0, -1.0), b0=0.7)
    D, owner, q = cert.descent_direction(net, t, 0.0)
    assert np.array_equal(owner, [0, 0, 0, 1, 1, 0])
    assert np.allclose(q, [0.2, 0.6, 0, 0.25, 0, 0], rtol=1e-15, atol=0)
    assert np.array_equal(D.a, np.zeros(6))
    assert D.alpha == pytest.approx(0.4 + (4 - 1.5) / math.sqrt(2 * math.pi) + 0.7, rel=1e-15)
    # beta_* = (2, -0.75, 0) + (0.5, 0, -1)
    assert np.allclose(D.beta, [0.1 + 2.5, -0.2 - 0.75, 0.3 - 1.0], rtol=1e-15, atol=0)
    W_expected = [
        [1.0 - 0.2 * 2, 0, 0],
        [0.5 - 0.6 * 2, 0, 0],
        [1.0, 0, 0],
        [0, 1.0 - 0.25 * 3, 0],
        [0, 2.0, 1.0],
        [0, 0, 1.0],
    ]
    assert np.allclose(D.W, W_expected, rtol=1e-15, atol=1e-15)


def test_descent_direction_derivative_is_lemma_f17_identity():
    """The directional derivative of ``L_lambda`` along ``D`` (finite differences of
    ``population.regularized_loss``) is steps (a)-(b) of the proof of Lemma F.17:
    ``2 ||R||^2 + lambda ||W||_F^2 - lambda sum_j q_ij w_j . w*_i + 2 sum E[R a_j q_ij w*_i.x
    (sigma'(w*_i.x) - sigma'(w_j.x))]``, whose last sum vanishes when every neuron with
    ``q_ij > 0`` points exactly along ``w*_i``; needs ``sum_j a_j q_ij = a*_i`` for every
    teacher and a teacher without linear part (the paper's). The student's ``beta`` is far from
    ``-beta_*``, so the ``beta`` component counts."""
    t, net = _q_instance(alpha=-0.3, beta=(0.4, 0.9, -0.6))
    rng = np.random.default_rng(5)
    far = rng.standard_normal((3, 3))  # angles 0.56, 0.37, 0.87 > delta_close: q = 0 below
    net = pop.Net(np.r_[net.a, [0.8, -0.6, 1.1]], np.r_[net.W, far], net.alpha, net.beta)
    lam = 0.05
    D, owner, q = cert.descent_direction(net, t, 0.3)
    assert np.allclose(q, [0.2, 0.6, 0, 0.25, 0, 0, 0, 0, 0], rtol=1e-15, atol=0)
    h = 1e-6

    def at(s):
        return pop.regularized_loss(
            pop.Net(net.a, net.W + s * D.W, net.alpha + s * D.alpha, net.beta + s * D.beta),
            t,
            lam,
        )

    fd = (at(h) - at(-h)) / (2 * h)
    expected = (
        2 * pop.loss(net, t)
        + lam * np.sum(net.W**2)
        - lam * np.sum(q * np.sum(net.W * t.W[owner], 1))
    )
    assert fd == pytest.approx(expected, rel=1e-7)


# --- the certificate on the whole sphere, Lemma 9, Lemma 7 at a snapshot ----------------------


def test_full_sphere_directions_and_the_pole_cap():
    t = tmod.prototype(4, 0)
    B = t.info["basis"]
    W = cert.full_sphere_directions(B, 4, 180, 12)
    assert np.allclose(np.linalg.norm(W, axis=1), 1) and len(W) == 180 * 12
    assert len(cert.full_sphere_directions(B, 2, 180, 12)) == 180  # d = r: the circle only
    C = cert.solve(t, 4)
    rho_sphere, _ = cert.rho_eta(C, W)
    rho_circle, _ = cert.rho_eta(C, cert.sphere_directions(B, 720))
    # out of S_*, eta = 0 at angle pi/2 from every teacher: rho <= 4 / pi^2 < rho on the circle
    assert rho_sphere <= 4 / math.pi**2 + 1e-12 < rho_circle


def test_best_certificate_prefers_small_p_over_rho():
    t = tmod.prototype(3, 0)
    C, rho, p = cert.best_certificate(t, ells=(2, 4, 10), count=360, n_phi=12)
    assert C.ell == 4 and rho == pytest.approx(4 / math.pi**2, rel=1e-6)
    assert p == pytest.approx(math.sqrt(C.p_norm2()))


def test_lemma9_terms():
    t = tmod.prototype(3, 1)
    C = cert.solve(t, 4)
    rho = 4 / math.pi**2
    Us = t.W / np.linalg.norm(t.W, axis=1, keepdims=True)
    T = cert.lemma9_terms(C, rho, t, Us, c=t.a)  # mu = mu*
    assert T["loss"] < 1e-12 and T["lhs1"] < 1e-12 and T["far"] < 1e-12
    assert T["pair_star"] == pytest.approx(T["mass_star"])
    rng = np.random.default_rng(0)
    for _ in range(50):
        U, c = cert.random_measure(t, 10, rng)
        T = cert.lemma9_terms(C, rho, t, U, c=c)
        assert T["lhs1"] <= T["rhs1"] * (1 + 1e-12) and T["lhs2"] <= T["rhs2"] + 1e-12
    # the answer "no": with a constant rho far above the certificate's, (2) fails
    U, c = cert.random_measure(t, 10, np.random.default_rng(1))
    T = cert.lemma9_terms(C, 10.0, t, U, c=c)
    assert T["lhs2"] > T["rhs2"]


def test_measure_of_network_and_its_loss():
    t = tmod.prototype(4, 2)
    net = alg.stage2(alg.stage1(alg.symmetric_init(4, 20, 2), t), t, 0.02)[0]
    U, c = cert.measure_of(net)
    assert cert.measure_loss(t, U, c) == pytest.approx(pop.loss_ge2(net, t), rel=1e-10)


def test_lemma7_snapshot():
    t = tmod.prototype(3, 0)
    C = cert.solve(t, 4)
    net = alg.stage2(alg.stage1(alg.symmetric_init(3, 30, 0), t), t, 0.01)[0]
    s = cert.lemma7_snapshot(net, t, 0.01, 2e-4, p_norm=math.sqrt(C.p_norm2()))
    assert set(s) >= {
        "inner",
        "printed",
        "applies",
        "window",
        "small",
        "balanced",
        "no_cancellation",
        "fitted",
        "covered",
    }
    assert s["applies"] == all(
        s[k] for k in ("window", "small", "balanced", "no_cancellation", "fitted", "covered")
    )
    # the answer "no": with zeta = 0 the hypotheses fail (outside Lemma 6's window)
    s0 = cert.lemma7_snapshot(net, t, 0.01, 0.0, p_norm=math.sqrt(C.p_norm2()))
    assert not s0["window"] and not s0["applies"]


def test_lemma10_proof_radius():
    radii = [cert.lemma10_proof_radius(L, 1.0, 3.0) for L in (1e-3, 1e-6, 1e-8, 1e-10)]
    # the answer "no": at a loss of 1e-3 no angle qualifies
    assert radii[0] == math.inf
    assert math.pi / 2 > radii[1] > radii[2] > radii[3] > 0
    # L^(1/3) up to the logarithm of ell: a factor 100 in L is about 100^(1/3) in the radius
    assert 3 < radii[2] / radii[3] < 6
    # a smaller teacher weight needs a smaller loss for the same radius
    assert cert.lemma10_proof_radius(1e-8, 0.5, 3.0) > radii[2]


def _abs_relu_coefficients(k_max):
    """``|sigma_k|``, ``k <= k_max``, of ReLU's normalized Hermite series (Lemma A.1) by the
    ratio ``|sigma_{k+2}| / |sigma_k| = (k - 1) / sqrt((k + 1)(k + 2))`` of ``(k - 3)!! /
    sqrt(2 pi k!)`` from ``|sigma_2| = 1 / sqrt(4 pi)``; ``sigma_0 = 1 / sqrt(2 pi)``,
    ``sigma_1 = 1/2``, odd ``sigma_k = 0`` from ``k = 3``."""
    s = np.zeros(k_max + 1)
    s[:3] = 1 / math.sqrt(2 * math.pi), 0.5, 1 / math.sqrt(4 * math.pi)
    k = np.arange(2, k_max - 1, 2, dtype=float)
    s[4::2] = s[2] * np.cumprod((k - 1) / np.sqrt((k + 1) * (k + 2)))
    return s


def test_lemma10_proof_radius_by_hand():
    """``L = 4e-6``, ``a*_i = 1/2``, ``||a*||_1 = 3``: ``log(16 * 3 / (1/2)) = log 96`` and the
    proof's inequality ``sqrt(L ell) < |a*_i| / 4 sum_{ell <= k < 2 ell} |sigma_k|`` holds
    exactly for ``ell = 1, ..., 14`` among all ``ell`` up to ``ell(lo)`` (a scan over ``ell``,
    the coefficients by their ratio recurrence). ``ceil(5 log 96 / delta^2) <= 14`` iff
    ``delta >= sqrt(5 log 96 / 14) ~ 1.277``: the radius, inside ``(pi/3, pi/2)``. The 40
    geometric bisection steps on ``[lo, pi/2]`` leave it on the grid ``lo (pi/2 / lo)^(j /
    2^40)``, at most one grid step above the exact radius (for ``lo = 0.01`` and ``0.02``)."""
    loss, a_i, a_l1, lo = 4e-6, 0.5, 3.0, 1e-2
    logf = math.log(96.0)
    n_max = math.ceil(5 * logf / lo**2)
    cum = np.concatenate([[0.0], np.cumsum(_abs_relu_coefficients(2 * n_max))])
    n = np.arange(1, n_max + 1)
    holds = np.sqrt(loss * n) < abs(a_i) / 4 * (cum[2 * n] - cum[n])
    assert np.flatnonzero(holds).tolist() == list(range(14))  # ell = 1 .. 14
    exact = math.sqrt(5 * logf / 14)
    for low in (lo, 2 * lo):  # the default lower end of the bracket, and 2 lo
        r = cert.lemma10_proof_radius(loss, a_i, a_l1, low)
        step = (math.pi / 2 / low) ** (2.0**-40)
        assert exact <= r <= exact * step * (1 + 1e-14)
        j = math.log(r / low) / math.log(math.pi / 2 / low) * 2.0**40
        assert abs(j - round(j)) < 1e-2
        # the sign of a*_i does not matter
        assert cert.lemma10_proof_radius(loss, -a_i, a_l1, low) == r


def test_lemma10_proof_radius_fails_at_a_tie():
    """The proof's inequality is strict. ``a*_i = 8``, ``||a*||_1 = 3/4``: ``ell(pi/2) =
    ceil(5 log(1.5) / (pi/2)^2) = ceil(0.82) = 1``, and the right side at ``ell = 1`` is ``8/4
    |sigma_1| = 1`` (``sigma_1 = 1/2``); in doubles ``|sigma_1|`` comes out of the cumulative
    sums one ulp below ``1/2``, so the tie is at the double ``L = (2 |sigma_1|)^2``, where
    ``sqrt(L)`` is exactly the right side: there no ``delta`` qualifies (``inf``), one ulp
    below it ``pi/2`` does (a finite radius)."""
    assert math.ceil(5 * math.log(1.5) / (math.pi / 2) ** 2) == 1
    cum = cert._abs_relu_coefficient_sums(2)
    rhs = 8.0 / 4 * (cum[2] - cum[1])
    assert rhs == pytest.approx(1.0, rel=1e-15)
    tie = rhs * rhs
    assert math.sqrt(tie) == rhs
    assert cert.lemma10_proof_radius(tie, 8.0, 0.75) == math.inf
    assert cert.lemma10_proof_radius(math.nextafter(tie, 0.0), 8.0, 0.75) <= math.pi / 2


def test_eta_grad_at_a_teacher_direction_has_the_radial_derivative():
    """At ``w = u_j`` (a pole: ``kappa''`` is infinite there and ``b_j . u_j = 0``) the
    gradient's radial part is ``d/ds f(s u_j)`` at ``s = 1``, with ``f(w) = sum_i kappa(w.u_i)
    alpha_i + kappa'(w.u_i) (w.b_i)`` unnormalized: a one-sided difference from inside the
    ball (its error falls as ``sqrt(h)``: 1e-4 of the value at ``h = 1e-8``)."""
    from twolayer.paper_b.certificate import kappa

    C = cert.solve(tmod.prototype(6, 0), 4)

    def f(w):
        t = np.clip(C.U @ w, -1, 1)
        return kappa(t, C.ell) @ C.alpha + np.sum(kappa(t, C.ell, 1) * (C.b @ w))

    G, h = C.eta_grad(C.U), 1e-8
    for j, u in enumerate(C.U):
        fd = (3 * f(u) - 4 * f((1 - h) * u) + f((1 - 2 * h) * u)) / (2 * h)
        assert G[j] @ u == pytest.approx(fd, rel=1e-3)


def test_interpolation_residual_is_the_worst_row():
    """The residual is the largest, over the teacher directions one at a time, of
    ``|eta(u_i) - sign a*_i|`` and ``||P grad eta(u_i)||``: about 0 for the solved certificate;
    with its tangent coefficients perturbed, the worst row's tangent gradient (not the norm of
    all rows together)."""
    import dataclasses

    C = cert.solve(tmod.prototype(6, 0), 4)
    assert C.interpolation_residual() < 1e-10
    rng = np.random.default_rng(0)
    C2 = dataclasses.replace(C, c=C.c + 0.01 * rng.standard_normal(C.c.shape))
    rows = [C2.U[i : i + 1] for i in range(len(C2.U))]
    v = max(abs(C2.eta(r)[0] - s) for r, s in zip(rows, C2.signs, strict=True))
    g = max(np.linalg.norm(C2.tangent_grad(r)) for r in rows)
    assert g > v  # the tangent part decides here
    assert C2.interpolation_residual() == pytest.approx(g, rel=1e-12)


def test_head_and_kappa_reject_their_arguments_by_name():
    with pytest.raises(ValueError, match=r"^ell must be >= 2$"):
        cert.head(1)
    with pytest.raises(ValueError, match=r"^deriv must be 0, 1 or 2$"):
        cert.kappa(0.5, 4, 3)


def test_kappa_second_derivative_is_infinite_at_the_poles_without_a_warning():
    """``kappa''`` is ``+inf`` at ``t = +-1`` (the series diverges there), returned as such
    without a division warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cert.kappa(np.array([1.0, -1.0]), 4, 2).tolist() == [math.inf, math.inf]


def test_kappa_series_by_hand():
    """The truncated series with ``ell = 2``: ``sigma_2^2 = 1/(4 pi)``, ``sigma_3 = 0``,
    ``sigma_4^2 = 1/(48 pi)`` (Lemma A.1) and ``Z_2^2 = 1/2 - 1/(2 pi) - 1/4 = (pi - 2)/(4 pi)``,
    so up to ``k_max = 4`` it is ``(t^2 + t^4/12) / (pi - 2)`` (both ends of ``[ell, k_max]``
    included); the output has the shape of ``t`` (2-D, 0-d); ``t`` is read as float64, so a
    ``Decimal`` is accepted like the float it represents."""
    from decimal import Decimal

    def by_hand(t):
        return (t**2 + t**4 / 12) / (math.pi - 2)

    t = np.array([[0.5, -0.3], [1.0, 0.0]])
    v = cert.kappa_series(t, 2, 4)
    assert v.shape == (2, 2)
    assert np.allclose(v, by_hand(t), rtol=1e-14, atol=0)
    assert cert.kappa_series(0.5, 2, 2) == pytest.approx(0.25 / (math.pi - 2), rel=1e-14)
    s = cert.kappa_series(0.5, 2, 3)  # sigma_3 = 0: nothing added
    assert s.shape == () and s == pytest.approx(0.25 / (math.pi - 2), rel=1e-14)
    d = cert.kappa_series([Decimal("0.5"), Decimal("-0.25")], 2, 4)
    assert d.dtype == np.float64
    assert np.allclose(d, by_hand(np.array([0.5, -0.25])), rtol=1e-14, atol=0)


def test_relu_ge_prime_by_hand():
    """``relu_{>=2}'(z) = 1{z > 0} - sigma_1 = 1{z > 0} - 1/2`` and ``relu_{>=4}'(z) = 1{z > 0}
    - 1/2 - sigma_2 sqrt(2) h_1(z) = 1{z > 0} - 1/2 - z / sqrt(2 pi)`` (``sigma_2 = 1/(2
    sqrt(pi))``, ``sigma_3 = 0``), with ``relu'(0) = 0``; only ``h_0 .. h_{ell-2}`` are evaluated,
    so ``z = +-1e100`` gives exactly ``+-1/2`` at ``ell = 2`` without an overflow warning (``h_4(z)
    ~ z^4`` would overflow)."""
    import warnings

    z = np.array([-1.5, 0.0, 0.7])
    assert np.allclose(cert.relu_ge_prime(z, 2), [-0.5, -0.5, 0.5], rtol=0, atol=1e-15)
    expected = np.array([0.0, 0.0, 1.0]) - 0.5 - z / math.sqrt(2 * math.pi)
    assert np.allclose(cert.relu_ge_prime(z, 4), expected, rtol=0, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = cert.relu_ge_prime(np.array([1e100, -1e100]), 2)
    assert big.tolist() == [0.5, -0.5]


def test_relu_ge_functions_read_their_argument_as_float64():
    """``z`` is converted to float64 first: ``Decimal`` values give the float results, and a
    ``Decimal`` below the smallest subnormal (``1e-400``) is read as ``0``, where ``relu'`` is 0:
    ``relu_{>=2}'`` is ``-1/2`` there."""
    from decimal import Decimal

    zf = np.array([0.5, -1.25, 2.0])
    zd = [Decimal(float(v)) for v in zf]  # exact: the same numbers
    for ell in (2, 4):
        v = cert.relu_ge(zd, ell)
        assert v.dtype == np.float64 and np.array_equal(v, cert.relu_ge(zf, ell))
        assert np.array_equal(cert.relu_ge_prime(zd, ell), cert.relu_ge_prime(zf, ell))
    assert cert.relu_ge_prime([Decimal("1e-400")], 2).tolist() == [-0.5]


def _scaled_prototype():
    """``prototype(3, 1)`` with teacher norms ``2, 3, 1/2`` (same directions, same ``S_*``)."""
    t = tmod.prototype(3, 1)
    return tmod.Teacher(t.a, t.W * np.array([[2.0], [3.0], [0.5]]), info=t.info)


def test_lemma9_terms_weighs_teachers_by_their_norms():
    """``mu* = sum a*_i ||w*_i|| delta_{wbar*_i}``: for norms ``2, 3, 1/2`` and ``a* = (1, -1,
    1)`` its masses are ``(2, -3, 1/2)``, ``|mu*|_1 = 5.5`` and ``<eta, mu*> = sum |a*_i|
    ||w*_i|| = 5.5`` (``eta(u_i) = sign a*_i``); ``mu = mu*`` gives zero loss and ``lhs1``."""
    t = _scaled_prototype()
    C = cert.solve(t, 4)
    Us = t.W / np.linalg.norm(t.W, axis=1, keepdims=True)
    T = cert.lemma9_terms(C, 0.1, t, Us, c=[2.0, -3.0, 0.5])
    assert T["mass_star"] == pytest.approx(5.5, rel=1e-14)
    assert T["pair_star"] == pytest.approx(5.5, rel=1e-10)
    assert T["pair"] == pytest.approx(5.5, rel=1e-10) and T["mass"] == 5.5
    assert T["loss"] < 1e-12 and T["lhs1"] < 1e-10


def test_lemma9_terms_reads_measures_as_float64():
    """Atoms ``U`` and masses ``c`` given as ``Decimal`` (exactly the float numbers) give the
    same terms as the floats: both are converted to float64 first."""
    from decimal import Decimal

    t = _scaled_prototype()
    C = cert.solve(t, 4)
    U, c = cert.random_measure(t, 6, np.random.default_rng(2))
    expected = cert.lemma9_terms(C, 0.1, t, U, c=c)
    Ud = [[Decimal(float(x)) for x in row] for row in U]
    cd = [Decimal(float(x)) for x in c]
    assert cert.lemma9_terms(C, 0.1, t, Ud, c=c) == expected
    assert cert.lemma9_terms(C, 0.1, t, U, c=cd) == expected
