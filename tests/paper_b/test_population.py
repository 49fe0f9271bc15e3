"""Paper B's closed-form population loss and its hand-written gradient."""

import math

import numpy as np
import pytest
import torch

from twolayer.paper_b import kernels
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod


@pytest.fixture(scope="module")
def teacher():
    return tmod.prototype(d=8, seed=0)


def _random_net(m, d, seed, aligned_with=None):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((m, d)) / math.sqrt(d)
    if aligned_with is not None:  # exactly aligned, anti-aligned and duplicated neurons
        W[0] = 0.7 * aligned_with[0]
        W[1] = -1.3 * aligned_with[1]
        W[2] = 2.0 * W[3]
    return pop.Net(rng.standard_normal(m), W, 0.3, 0.1 * rng.standard_normal(d))


def test_kernel_values_and_derivative():
    t = np.linspace(-1, 1, 2001)
    assert kernels.k1(1.0) == pytest.approx(0.5)
    assert kernels.k1(-1.0) == pytest.approx(0.0, abs=1e-15)
    assert kernels.k1(0.0) == pytest.approx(1 / (2 * math.pi))
    h = 1e-6
    tt = t[1:-1]
    fd = (kernels.k1(tt + h) - kernels.k1(tt - h)) / (2 * h)
    assert np.abs(fd - kernels.k1_prime(tt)).max() < 1e-7
    # kappa2 has no Hermite order 0 or 1: kappa2(0) = 0 and kappa2'(0) = 0
    assert abs(kernels.kappa2(0.0)) < 1e-16
    assert abs((kernels.kappa2(h) - kernels.kappa2(-h)) / (2 * h)) < 1e-9


def test_kernel_matches_monte_carlo():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400_000, 2))
    for t in (-0.9, -0.3, 0.2, 0.8):
        v = np.array([t, math.sqrt(1 - t * t)])
        prod = kernels.relu(x[:, 0]) * kernels.relu(x @ v)
        se = prod.std() / math.sqrt(len(x))
        assert abs(prod.mean() - kernels.k1(t)) < 5 * se
        prod2 = kernels.relu(x[:, 0]) * kernels.relu_ge2(x @ v)
        assert abs(prod2.mean() - kernels.kappa2(t)) < 5 * prod2.std() / math.sqrt(len(x))


def test_symmetric_network_is_zero_and_loss_is_target_norm(teacher):
    W = np.random.default_rng(1).standard_normal((3, teacher.d))
    net = pop.Net(np.array([1.0, 2.0, 3.0, -1.0, -2.0, -3.0]), np.concatenate([W, W]))
    assert pop.loss(net, teacher) == pytest.approx(teacher.target_norm2(), rel=1e-13)


def test_teacher_as_student_has_zero_loss(teacher):
    net = pop.Net(teacher.a, teacher.W)
    net.alpha, net.beta = pop.alpha_hat(net), pop.beta_hat(net)
    assert pop.loss(net, teacher) < 1e-14
    # the preprocessing: E[y] and E[y x] are the closed forms alpha_*, beta_*
    X = np.random.default_rng(2).standard_normal((400_000, teacher.d))
    y = teacher(X)
    assert abs(y.mean() - teacher.alpha_star) < 5 * y.std() / math.sqrt(len(y))
    yx = y[:, None] * X
    assert np.all(np.abs(yx.mean(0) - teacher.beta_star) < 5 * yx.std(0) / math.sqrt(len(y)))


def test_loss_matches_monte_carlo_within_standard_error(teacher):
    for seed in range(3):
        net = _random_net(6, teacher.d, seed, aligned_with=teacher.W)
        mean, se = pop.mc_loss(net, teacher, n=400_000, seed=10 + seed)
        assert abs(mean - pop.loss(net, teacher)) < 4 * se, (mean, se, pop.loss(net, teacher))


def test_decomposition_of_claim_b1(teacher):
    net = _random_net(7, teacher.d, 5, aligned_with=teacher.W)
    L = pop.loss(net, teacher)
    split = (
        (net.alpha - pop.alpha_hat(net)) ** 2
        + np.sum((net.beta - pop.beta_hat(net)) ** 2)
        + pop.loss_ge2(net, teacher)
    )
    assert L == pytest.approx(split, rel=1e-12)


def test_gradient_matches_finite_differences_including_aligned_neurons(teacher):
    net = _random_net(6, teacher.d, 3, aligned_with=teacher.W)
    lam = 0.07
    g = pop.grad(net, teacher, lam).flat()
    v = net.flat()
    m, d = net.W.shape
    h = 1e-6
    fd = np.empty_like(v)
    for i in range(len(v)):
        e = np.zeros_like(v)
        e[i] = h
        fd[i] = (
            pop.regularized_loss(pop.Net.unflat(v + e, m, d), teacher, lam)
            - pop.regularized_loss(pop.Net.unflat(v - e, m, d), teacher, lam)
        ) / (2 * h)
    assert np.abs(fd - g).max() < 1e-7 * max(1.0, np.abs(g).max())
    assert np.all(np.isfinite(g))


def test_gradient_of_alpha_beta_is_claim_f13(teacher):
    net = _random_net(5, teacher.d, 4)
    g = pop.grad(net, teacher)
    assert g.alpha == pytest.approx(2 * (net.alpha - pop.alpha_hat(net)))
    assert np.allclose(g.beta, 2 * (net.beta - pop.beta_hat(net)))


def test_gradient_matches_autograd_of_sampled_loss(teacher):
    """The closed-form gradient is the mean of the autograd gradients of sampled losses."""
    net = _random_net(5, teacher.d, 6, aligned_with=teacher.W)
    lam = 0.05
    exact = pop.grad(net, teacher, lam).flat()
    rng = np.random.default_rng(7)
    Wt = torch.tensor(teacher.W)
    at = torch.tensor(teacher.a)
    grads = []
    for _ in range(40):
        X = torch.tensor(rng.standard_normal((20_000, teacher.d)))
        p = torch.tensor(net.flat(), requires_grad=True)
        m, d = net.W.shape
        a, W, alpha, beta = p[:m], p[m : m + m * d].reshape(m, d), p[m + m * d], p[m + m * d + 1 :]
        f = torch.relu(X @ W.T) @ a + alpha + X @ beta
        y = torch.relu(X @ Wt.T) @ at - teacher.alpha_star - X @ torch.tensor(teacher.beta_star)
        L = ((f - y) ** 2).mean() + lam / 2 * (a @ a + (W**2).sum())
        (gp,) = torch.autograd.grad(L, p)
        grads.append(gp.numpy())
    grads = np.array(grads)
    se = grads.std(0, ddof=1) / math.sqrt(len(grads))
    assert np.all(np.abs(grads.mean(0) - exact) <= 5 * se + 1e-12)


def test_kernels_compute_in_float64_whatever_the_input():
    """k'(t) = (pi - arccos t) / (2 pi) is computed in float64 from a float32 or integer input
    (near t = 1, where teacher-aligned neurons sit, float32 keeps too few digits of arccos):
    the dtype, and the value against math.acos of the same float32-rounded number."""
    from twolayer.paper_b import kernels

    t32 = np.float32(np.cos(1e-3))
    for t in (t32, np.array([t32, 0.5], dtype=np.float32), 1, [0, 1]):
        assert np.asarray(kernels.k1_prime(t)).dtype == np.float64
    theta = math.acos(float(t32))
    assert kernels.k1_prime(t32) == pytest.approx(0.5 - theta / (2 * math.pi), abs=1e-15)


def test_loss_and_grad_default_is_the_plain_loss():
    """Without ``lam`` the gradient is that of the unregularized loss (``lam = 0``)."""
    t = tmod.make("random", 5, 2, 3, seed=4)
    rng = np.random.default_rng(0)
    net = pop.Net(rng.standard_normal(6), rng.standard_normal((6, 5)), 0.1, rng.standard_normal(5))
    L, g = pop.loss_and_grad(net, t)
    g0 = pop.grad(net, t, 0.0)
    assert L == pytest.approx(pop.loss(net, t), rel=1e-12)
    np.testing.assert_allclose(g.a, g0.a, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g.W, g0.W, rtol=1e-12, atol=1e-14)


def test_teacher_arrays_of_one_teacher_is_one_configuration():
    """One teacher without ``batch`` is one configuration; with ``batch`` it is repeated; ``d``
    pads the directions with zeros. The rows are the teacher's unit directions and ``c`` the
    products ``a_j ||w_j||``, computed here from the teacher's own weights."""
    t = tmod.prototype(5, 0)
    norms = np.linalg.norm(t.W, axis=1)
    one = pop.teacher_arrays(t)
    assert one.U.shape == (1, t.m, 5) and one.c.shape == (1, t.m) and one.norm2.shape == (1,)
    np.testing.assert_allclose(one.U[0], t.W / norms[:, None], rtol=1e-15)
    np.testing.assert_allclose(one.c[0], t.a * norms, rtol=1e-15)
    assert pop.teacher_arrays(t, batch=3).U.shape == (3, t.m, 5)
    wide = pop.teacher_arrays(t, d=7)
    assert wide.U.shape == (1, t.m, 7) and np.all(wide.U[0, :, 5:] == 0)


def test_kernels_read_single_precision_in_double():
    """``k(t) = (sqrt(1 - t^2) + (pi - arccos t) t) / (2 pi)``: at t = 1/2 (exact in float32)
    it is ``(sqrt(3)/2 + pi/3) / (2 pi)``, and ``kappa2 = k - 1/(2 pi) - t/4``; a float32
    argument is computed in float64 to the same value (in float32 it would be off by ~1e-8)."""
    k_half = (math.sqrt(3) / 2 + math.pi / 3) / (2 * math.pi)
    for t in (0.5, np.float32(0.5), np.array([0.5], dtype=np.float32)):
        assert float(np.squeeze(kernels.k1(t))) == pytest.approx(k_half, rel=1e-15)
        kappa = float(np.squeeze(kernels.kappa2(t)))
        assert kappa == pytest.approx(k_half - 1 / (2 * math.pi) - 0.125, rel=1e-13)
    assert kernels.k1(np.array([0.5], dtype=np.float32)).dtype == np.float64


def test_a_student_of_another_dimension_is_refused_by_name():
    t = tmod.prototype(5, 0)
    net = pop.Net(np.ones(2), np.ones((2, 3)))
    msg = "the student has d = 3, the teacher d = 5"
    for f in (pop.loss, pop.grad):
        with pytest.raises(ValueError, match=rf"^{msg}$"):
            f(net, t)
