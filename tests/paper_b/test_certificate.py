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
