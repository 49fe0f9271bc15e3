"""Cases where the answer is "no" for Paper B's population loss, its gradient and the dual
certificate: a gradient with a wrong term, a certificate that does not interpolate
or exceeds 1 away from the teacher, a loss that ignores a parameter -- each must be told apart
from the right one. Also the review's gaps: a teacher with a linear part (w0, b0) and a
student with a zero-norm neuron."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import fd_grad_regularized
from twolayer.paper_b import certificate as cert
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod


@pytest.fixture(scope="module")
def teacher():
    return tmod.prototype(d=6, seed=0)


def _net(m, d, seed):
    rng = np.random.default_rng(seed)
    return pop.Net(
        rng.standard_normal(m),
        rng.standard_normal((m, d)) / math.sqrt(d),
        0.2,
        0.1 * rng.standard_normal(d),
    )


_fd_grad = fd_grad_regularized


# --- the population gradient ----------------------------------------------------------------


def test_gradient_vanishes_at_the_teacher_and_not_near_it(teacher):
    net = pop.Net(teacher.a.copy(), teacher.W.copy())
    net.alpha, net.beta = pop.alpha_hat(net), pop.beta_hat(net)
    assert pop.grad_norm2(pop.grad(net, teacher)) < 1e-20  # a global minimum (L = 0)
    moved = net.copy()
    moved.W[0] += 0.05 * np.linalg.norm(moved.W[0]) * np.eye(teacher.d)[1]
    g = pop.grad(moved, teacher)
    assert pop.grad_norm2(g) > 1e-6
    # and a small step along -g lowers the loss by about step * |g|^2 (first order)
    step = 1e-4
    after = pop.Net.unflat(moved.flat() - step * g.flat(), teacher.m, teacher.d)
    drop = pop.loss(moved, teacher) - pop.loss(after, teacher)
    assert drop == pytest.approx(step * pop.grad_norm2(g), rel=0.05)


def test_weight_decay_term_of_the_gradient(teacher):
    net = _net(5, teacher.d, 1)
    g0, g1 = pop.grad(net, teacher, 0.0), pop.grad(net, teacher, 0.3)
    assert np.allclose(g1.a - g0.a, 0.3 * net.a) and np.allclose(g1.W - g0.W, 0.3 * net.W)
    assert g1.alpha == g0.alpha and np.array_equal(g1.beta, g0.beta)


def test_finite_difference_comparison_rejects_a_wrong_gradient(teacher):
    """The tolerance the positive test uses (1e-7 relative) separates the right gradient from
    one with any single term wrong: weight decay missed, or the teacher's term dropped."""
    net = _net(5, teacher.d, 2)
    fd = _fd_grad(net, teacher, 0.07)
    scale = max(1.0, np.abs(fd).max())
    assert np.abs(pop.grad(net, teacher, 0.07).flat() - fd).max() < 1e-7 * scale
    assert np.abs(pop.grad(net, teacher, 0.0).flat() - fd).max() > 1e-3 * scale
    far = tmod.prototype(d=teacher.d, seed=1)  # another teacher: the cross term differs
    assert np.abs(pop.grad(net, far, 0.07).flat() - fd).max() > 1e-3 * scale


def test_zero_norm_neuron_has_a_finite_gradient(teacher):
    net = _net(4, teacher.d, 3)
    net.W[1] = 0.0
    g = pop.grad(net, teacher, 0.05)
    assert np.all(np.isfinite(g.flat())) and np.isfinite(pop.loss(net, teacher))
    # the loss does not depend on that neuron's a: its a-gradient is the weight decay alone
    assert g.a[1] == pytest.approx(0.05 * net.a[1])


def test_teacher_with_a_linear_part(teacher):
    """w0 and b0 only shift alpha_* and beta_*: the preprocessed target is unchanged, so the
    population loss is too; the closed forms of E[y] and E[y x] follow Monte Carlo."""
    rng = np.random.default_rng(4)
    lin = tmod.Teacher(teacher.a, teacher.W, w0=rng.standard_normal(teacher.d), b0=0.7)
    net = _net(5, teacher.d, 5)
    assert pop.loss(net, lin) == pytest.approx(pop.loss(net, teacher), rel=1e-12)
    assert lin.alpha_star == pytest.approx(teacher.alpha_star + 0.7)
    assert np.allclose(lin.beta_star, teacher.beta_star + lin.w0)
    X = rng.standard_normal((200_000, teacher.d))
    y = lin(X)
    assert abs(y.mean() - lin.alpha_star) < 5 * y.std() / math.sqrt(len(y))
    yx = y[:, None] * X
    assert np.all(np.abs(yx.mean(0) - lin.beta_star) < 5 * yx.std(0) / math.sqrt(len(y)))
    Xs = X[:1000]
    assert np.allclose(lin.y_tilde(Xs), teacher.y_tilde(Xs))


def test_loss_depends_on_every_parameter(teacher):
    net = _net(5, teacher.d, 6)
    base = pop.loss(net, teacher)
    for k in range(len(net.flat())):
        v = net.flat()
        v[k] += 0.1
        assert pop.loss(pop.Net.unflat(v, 5, teacher.d), teacher) != pytest.approx(
            base, rel=1e-9
        ), k


# --- the dual certificate ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate():
    t = tmod.prototype(4, 0)
    return t, cert.solve(t, 4)


def test_perturbed_certificate_does_not_interpolate(certificate):
    t, C = certificate
    assert C.interpolation_residual() < 1e-12
    for field, delta in (("alpha", 1e-3), ("c", 1e-3)):
        bad = cert.Certificate(**{**C.__dict__, field: getattr(C, field) + delta})
        assert bad.interpolation_residual() > delta / 100, field


def test_certificate_of_another_teacher_does_not_interpolate(certificate):
    t, C = certificate
    other = cert.solve(tmod.prototype(4, 1), 4)
    v = np.abs(other.eta(C.U) - C.signs).max()
    assert v > 1e-2


def test_scaled_certificate_exceeds_one_away_from_the_teachers(certificate):
    """Definition 1 asks |eta| < 1 away from the teacher directions (rho_eta > 0); a
    certificate scaled by 1.5 exceeds 1 there, and rho_eta says so (negative)."""
    t, C = certificate
    th = (np.arange(720) + 0.5) * math.pi / 720
    W = cert.plane_directions(t.info["basis"], th)
    rho, ratio = cert.rho_eta(C, W)
    assert rho > 0 and np.all(np.abs(C.eta(W)) <= 1 + 1e-12)
    big = cert.Certificate(**{**C.__dict__, "alpha": 1.5 * C.alpha, "c": 1.5 * C.c})
    rho_big, _ = cert.rho_eta(big, W)
    assert rho_big < 0


def test_tangent_gradient_vanishes_only_at_the_teachers(certificate):
    t, C = certificate
    assert np.linalg.norm(C.tangent_grad(C.U), axis=1).max() < 1e-10
    th = np.array([0.3, 1.0, 2.2])
    W = cert.plane_directions(t.info["basis"], th)
    owner, delta = cert.angle_to_teachers(W, C.U)
    far = delta > 0.1
    assert far.any() and np.all(np.linalg.norm(C.tangent_grad(W[far]), axis=1) > 1e-4)


def test_descent_direction_is_a_descent_direction_only_when_it_should_be():
    """Lemma F.17: <grad L_lambda, D> > 0 near a point where neurons sit close to the teacher;
    the q weights of a teacher with no close neuron are zero (condition (1) fails)."""
    t = tmod.prototype(4, 0)
    U = t.W / np.linalg.norm(t.W, axis=1, keepdims=True)
    rng = np.random.default_rng(0)
    W = np.concatenate([1.05 * t.W, 0.95 * t.W]) + 0.01 * rng.standard_normal((2 * t.m, t.d))
    net = cert.sign_flip(pop.Net(np.concatenate([t.a, t.a]) / 2, W), t)
    D, owner, q = cert.descent_direction(net, t, 0.3)
    g = pop.grad(net, t, 0.0)
    assert cert.inner(g, D) > 0
    # far neurons: no q at all
    far = pop.Net(net.a, rng.standard_normal(net.W.shape))
    far.W -= (far.W @ U.T) @ U  # orthogonal to every teacher direction
    _, q_far = cert.q_weights(far, t, 0.3)
    assert np.all(q_far == 0)


# --- a general teacher, and the helpers (mutation testing found these) ----------------------


@pytest.fixture(scope="module")
def general_teacher():
    """Teacher neurons of norms other than 1, output weights other than +-1, no symmetry
    (beta_* != 0): the library's teachers all have unit neurons and a* = +-1, where a formula
    with ||w*|| or |a*| in the wrong place gives the same numbers."""
    rng = np.random.default_rng(9)
    U = rng.standard_normal((3, 5))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    W = U * np.array([0.5, 2.0, 1.3])[:, None]
    return tmod.Teacher(np.array([1.5, -0.7, 0.9]), W)


def test_general_teacher_loss_matches_monte_carlo(general_teacher):
    t = general_teacher
    assert np.linalg.norm(t.beta_star) > 0.1
    for seed in range(2):
        net = _net(4, t.d, 20 + seed)
        mean, se = pop.mc_loss(net, t, n=300_000, seed=seed)
        assert abs(mean - pop.loss(net, t)) < 4.5 * se
        parts = (net.alpha - pop.alpha_hat(net)) ** 2 + np.sum((net.beta - pop.beta_hat(net)) ** 2)
        assert pop.loss(net, t) == pytest.approx(parts + pop.loss_ge2(net, t), rel=1e-12)


def test_general_teacher_gradient_matches_finite_differences(general_teacher):
    t = general_teacher
    net = _net(4, t.d, 7)
    fd = _fd_grad(net, t, 0.03)
    g = pop.grad(net, t, 0.03).flat()
    assert np.abs(fd - g).max() < 1e-7 * max(1.0, np.abs(g).max())


def test_grad_norm2_and_net_conversion():
    g = pop.Net([1, 2], [[3, 0], [0, 1]], 0.5, [1, 2])
    assert g.a.dtype == g.W.dtype == g.beta.dtype == np.float64 and isinstance(g.alpha, float)
    assert pop.grad_norm2(g) == pytest.approx(1 + 4 + 9 + 1 + 0.25 + 1 + 4)


def test_mc_loss_is_the_sample_mean_and_its_standard_error(teacher):
    net = _net(3, teacher.d, 4)
    n, seed = 1001, 5
    X = np.random.default_rng(seed).standard_normal((n, teacher.d))
    r2 = (net(X) - teacher.y_tilde(X)) ** 2
    for batch in (n, 100, 7):  # drawn in batches from one generator: the same sample
        mean, se = pop.mc_loss(net, teacher, n, seed, batch=batch)
        assert mean == pytest.approx(r2.mean(), rel=1e-12)
        assert se == pytest.approx(r2.std() / np.sqrt(n), rel=1e-9)
    assert pop.mc_loss(net, teacher, n, seed) == pop.mc_loss(net, teacher, n, seed)


def test_mc_standard_error_of_a_small_residual(teacher):
    """Near the teacher the residual's variance is far below 1: the standard error follows."""
    net = pop.Net(teacher.a.copy(), teacher.W * 1.01)
    net.alpha, net.beta = pop.alpha_hat(net), pop.beta_hat(net)
    n = 2000
    X = np.random.default_rng(3).standard_normal((n, teacher.d))
    r2 = (net(X) - teacher.y_tilde(X)) ** 2
    mean, se = pop.mc_loss(net, teacher, n, 3)
    assert r2.var() < 1e-3 and se == pytest.approx(r2.std() / np.sqrt(n), rel=1e-9)


def test_net_copy_is_deep_and_complete():
    net = _net(3, 4, 0)
    c = net.copy()
    assert np.array_equal(c.flat(), net.flat()) and np.any(c.beta != 0)
    c.a[0] += 1
    c.W[0, 0] += 1
    c.beta[0] += 1
    assert not np.array_equal(c.a, net.a) and not np.array_equal(c.beta, net.beta)
