"""Tests of twolayer.paper_a.lowrank: Theorem 4.2's constants, our (A2) bound and stable-rank
bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from twolayer.paper_a import losses, lowrank, metrics, models, trainer


def test_constructed_data_meets_the_condition_exactly():
    for ratio in (0.2, 0.5, 1.0):
        ds = lowrank.constructed_data(8, 40, seed=3, gamma=0.5, ratio=ratio)
        c = lowrank.data_constants(ds.X, 0.5)
        assert ds.X.shape == (8, 40) and set(np.unique(ds.y)) <= {-1.0, 1.0}
        assert c.R_min == pytest.approx(1.0) and c.R_max == pytest.approx(1.2)
        assert c.condition_ratio == pytest.approx(ratio, rel=1e-9)
        assert c.data_condition == (c.condition_ratio <= 1.0)
        assert c.e11c_condition  # implied by the data condition (5 C_R R^2 >= 8)
        assert c.rho < 1
    with pytest.raises(ValueError):
        lowrank.constructed_data(8, 4, seed=0, gamma=0.5)
    with pytest.raises(ValueError):
        lowrank.constructed_data(8, 40, seed=0, gamma=0.0)


def test_constants_formulas():
    X = np.array([[2.0, 0.0, 0.0], [0.0, 1.0, 0.1], [0.0, 0.0, 1.0]])
    c = lowrank.data_constants(X, 0.5, H=0.25)
    assert c.R_max == pytest.approx(2.0) and c.R_min == pytest.approx(1.0)
    assert c.p == pytest.approx(0.1)
    assert c.C_R == pytest.approx(10 * 4 / 0.25 + 10)
    assert c.step_bound == pytest.approx(0.25 / (5 * 3 * 4 * 4 * c.C_R))
    assert c.condition_ratio == pytest.approx(5 * c.C_R * 4 * 3 * 0.1 / 0.25)
    assert not c.data_condition
    assert c.as_dict()["step_bound"] == c.step_bound
    # Gaussian data at moderate d violate the condition (it needs d of order 1e9 for n = 10)
    g = np.random.default_rng(0).standard_normal((10, 2000))
    assert lowrank.data_constants(g, 0.5).condition_ratio > 1


def test_default_smoothness_is_the_smoothed_leaky_relus():
    """``data_constants``' default ``H`` is the smoothness of Section 4's activation,
    ``sup_z |phi''(z)|`` over every leak (largest as ``gamma -> 0``), here by double autograd on
    a grid through ``z = 0``; it enters the step bound (A1) through ``max(1, H)``."""
    from twolayer.paper_a import activations

    z = torch.linspace(-6.0, 6.0, 1201, dtype=torch.float64, requires_grad=True)
    (d1,) = torch.autograd.grad(
        activations.smoothed_leaky_relu(z, 1e-12).sum(), z, create_graph=True
    )
    (d2,) = torch.autograd.grad(d1.sum(), z)
    X = np.array([[2.0, 0.0, 0.0], [0.0, 1.0, 0.1], [0.0, 0.0, 1.0]])
    assert lowrank.data_constants(X, 0.5).H == pytest.approx(float(d2.abs().max()), rel=1e-9)


def test_gaussian_stable_rank_law_and_lower_bound():
    for m, d in ((5, 400), (50, 1000), (300, 300)):
        law = lowrank.gaussian_stable_rank(m, d)
        assert min(m, d) / 4 * (1 - 1e-12) <= law <= min(m, d)
        lo = lowrank.gaussian_stable_rank_lower(m, d, 1e-3)
        W = torch.randn((8, m, d), generator=torch.Generator().manual_seed(m), dtype=torch.float64)
        sr = metrics.stable_rank(W).numpy()
        assert (sr >= lo).all() and (sr <= min(m, d)).all()
        assert np.abs(sr / law - 1).max() < 0.25


def _setup(n=6, d=120, m=16, gamma=0.5, seed=0):
    ds = lowrank.constructed_data(n, d, seed=seed, gamma=gamma)
    X, y = ds.torch()
    net = models.LeakyNetwork(m // 2, m - m // 2, phi="smoothed_leaky_relu", gamma=gamma)
    return ds, X, y, net, lowrank.data_constants(ds.X, gamma)


def test_grad_at_zero_is_rank_one_with_the_closed_form_norm():
    ds, X, y, net, c = _setup()
    _, _, G = net.loss_and_grad(
        torch.zeros((16, 120), dtype=torch.float64), X, y, losses.get_loss("logistic")
    )
    assert float(torch.linalg.matrix_norm(G)) == pytest.approx(
        lowrank.grad_at_zero_norm(ds.X, ds.y, 0.5), rel=1e-12
    )
    assert float(metrics.stable_rank(G)) == pytest.approx(1.0, abs=1e-12)


def test_init_bound_gives_the_step1_bound():
    ds, X, y, net, c = _setup()
    alpha = c.step_bound
    g0 = lowrank.grad_at_zero_norm(ds.X, ds.y, 0.5)
    b = lowrank.init_bound(16, 120, c, alpha, grad0=g0, eps=0.05, delta=1e-3)
    # (A2)(a) by Monte Carlo: omega_f is the scale at which ||W0||_2 R_max <= 1/50 (hence
    # |f(x_k; W0)| <= 1/50) with probability >= 1 - delta = 0.999 for W0 with N(0, omega^2)
    # entries; Gaussian concentration (||G||_2 <= sqrt m + sqrt d + t) makes it tight up to
    # t / (sqrt m + sqrt d) = 26 %, so at twice omega_f it fails on every draw
    R_max = float(np.linalg.norm(ds.X, axis=1).max())
    G = np.random.default_rng(7).standard_normal((1000, 16, 120))
    spec = np.linalg.norm(G, ord=2, axis=(1, 2)) * R_max
    assert np.mean(spec * b.omega_f <= 1 / 50) >= 1 - 1e-3
    assert np.mean(spec * 2 * b.omega_f <= 1 / 50) == 0
    W0 = net.init(120, b.omega, seed=1, batch=32)
    lr = torch.full((32,), alpha, dtype=torch.float64)
    real = lowrank.init_condition(net, W0, X, y, lr=lr, gamma=0.5, eps=0.05)
    assert (
        real["holds"].all()
        and (real["f_max"] <= 1 / 50).all()
        and (real["step_ratio"] <= 0.05).all()
    )
    res = trainer.gradient_descent(
        net,
        W0,
        X,
        y,
        lr=alpha,
        steps=1,
        record_steps=[0, 1],
        metrics={"stable_rank": metrics.stable_rank},
    )
    assert (res.history["stable_rank"][1] <= lowrank.step1_bound(0.05)).all()
    # 100 times larger: the condition fails and the rank stays high
    W_big = W0 * 1e3
    real = lowrank.init_condition(net, W_big, X, y, lr=lr, gamma=0.5, eps=0.05)
    assert not real["holds"].any()
    _, _, G = net.loss_and_grad(W_big, X, y, losses.get_loss("logistic"))
    res = trainer.gradient_descent(
        net,
        W_big,
        X,
        y,
        lr=alpha,
        steps=1,
        record_steps=[0, 1],
        metrics={"stable_rank": metrics.stable_rank},
    )
    lower = lowrank.step1_lower_bound(W_big, G, lr)
    assert (res.history["stable_rank"][1] >= lower * (1 - 1e-12)).all()
    assert (lower > lowrank.step1_bound(0.05)).all()
    with pytest.raises(ValueError):
        lowrank.init_bound(16, 120, c, alpha, grad0=g0, eps=1.5)


def test_bounds_formulas():
    assert lowrank.step1_bound(0.0) == 1.0
    assert lowrank.step1_bound(0.1) == pytest.approx((1.1 / 0.9) ** 2)
    assert lowrank.trajectory_bound(0.5, 0.0, 0.0) == pytest.approx(4.0)  # 1/gamma^2
    assert lowrank.trajectory_bound(0.5, 0.1, 0.05) > lowrank.trajectory_bound(0.5, 0.0, 0.05)
    assert math.isinf(lowrank.trajectory_bound(0.5, 1.0, 0.05))
    assert math.isinf(lowrank.trajectory_bound(0.1, 0.0, 0.2))  # eta >= 1


@pytest.mark.parametrize("lr_mult", [1.0, 1e3, 1e6])
def test_trajectory_bound_holds_for_any_step(lr_mult):
    ds, X, y, net, c = _setup(seed=2)
    alpha = c.step_bound
    g0 = lowrank.grad_at_zero_norm(ds.X, ds.y, 0.5)
    b = lowrank.init_bound(16, 120, c, alpha, grad0=g0)
    W0 = net.init(120, b.omega, seed=3, batch=4)
    res = trainer.gradient_descent(
        net,
        W0,
        X,
        y,
        lr=alpha * lr_mult,
        steps=60,
        metrics={"stable_rank": metrics.stable_rank, "log_ratio": lowrank.loss_ratio(net, X, y)},
    )
    sr = res.history["stable_rank"]
    assert (sr[1:] <= lowrank.trajectory_bound(0.5, c.rho, 0.05)).all()
    assert (res.history["min_margin"][1:] > 0).all()  # Lemma E.11(c): interpolation from step 1
    # the loss-ratio metric is log max_ij g_i/g_j
    q = net.margins(res.W, X, y)
    g = torch.sigmoid(-q)
    direct = torch.log(g.max(dim=-1).values / g.min(dim=-1).values)
    np.testing.assert_allclose(res.history["log_ratio"][-1], direct.numpy(), rtol=1e-8, atol=1e-12)


def test_steps_to_reach_a_target_already_met():
    """The bound starts at ``L1`` (t = 1): a target at or above it is met at t = 1 whatever
    kappa is; below it, ``1 + (1/target - 1/L1) / kappa`` (inf for kappa = 0)."""
    assert lowrank.steps_to_reach(0.5, 0.5, 0.0) == 1.0
    assert lowrank.steps_to_reach(0.5, 0.7, 0.0) == 1.0
    assert lowrank.steps_to_reach(0.5, 0.25, 0.0) == math.inf
    assert lowrank.steps_to_reach(0.5, 0.25, 0.5) == pytest.approx(5.0)


# --- hand computations of the stated formulas, boundaries and defaults ---------------------------

# delta = 2 exp(-2) makes the deviation t = sqrt(2 log(2/delta)) exactly 2
DELTA_T2 = 2.0 * math.exp(-2.0)


def test_gaussian_stable_rank_lower_by_hand():
    """``((sqrt(md) - 1 - t) / (sqrt m + sqrt d + t))^2`` at m = 16, d = 9, t = 2 is 1; 0 when
    the Frobenius lower bound ``sqrt(md) - 1 - t`` is negative."""
    assert lowrank.gaussian_stable_rank_lower(16, 9, DELTA_T2) == pytest.approx(1.0, rel=1e-12)
    # m = 64, d = 36, t = 2: (48 - 3)^2 / (8 + 6 + 2)^2 = 2025 / 256
    assert lowrank.gaussian_stable_rank_lower(64, 36, DELTA_T2) == pytest.approx(
        2025 / 256, rel=1e-12
    )
    # m = d = 1: sqrt(md) - 1 - t = -2 < 0, the Frobenius bound says nothing: the bound is 0
    assert lowrank.gaussian_stable_rank_lower(1, 1, DELTA_T2) == 0.0


def _consts_r3_h2():
    """R_max = 3, H = 2 (the other constants play no part in init_bound)."""
    return lowrank.DataConstants(n=2, R_min=1.0, R_max=3.0, p=0.0, gamma=0.5, H=2.0)


def test_init_bound_by_hand():
    """Our (A2) at m = 16, d = 9, t = 2 (S = 9, F = 14), R_max = 3, H = 2: ``omega_f =
    1/(50 R_max S) = 1/1350``; ``lip = R_max^2 S (1/4 + H/(2 sqrt m)) = 81/2`` and
    ``omega_step = eps lr grad0 / (F + lr lip) = 0.25 / 34.25 = 1/137`` (eps = lr = 1/2)."""
    b = lowrank.init_bound(16, 9, _consts_r3_h2(), 0.5, grad0=1.0, eps=0.5, delta=DELTA_T2)
    assert b.omega_f == pytest.approx(1 / 1350, rel=1e-12)
    assert b.omega_step == pytest.approx(1 / 137, rel=1e-12)
    assert b.omega == pytest.approx(1 / 1350, rel=1e-12)
    # the record keeps the eps and delta it was computed for
    assert b.eps == 0.5 and b.delta == DELTA_T2


def test_init_bound_defaults_and_eps_boundaries():
    """The defaults are eps = 0.05, delta = 1e-3; eps must lie in the open interval (0, 1)."""
    c = _consts_r3_h2()
    default = lowrank.init_bound(16, 9, c, 0.5, grad0=1.0)
    assert default == lowrank.init_bound(16, 9, c, 0.5, grad0=1.0, eps=0.05, delta=1e-3)
    assert default.eps == 0.05 and default.delta == 1e-3
    with pytest.raises(ValueError, match=r"^eps must lie in \(0, 1\), got 0\.0$"):
        lowrank.init_bound(16, 9, c, 0.5, grad0=1.0, eps=0.0)
    with pytest.raises(ValueError, match=r"^eps must lie in \(0, 1\), got 1\.0$"):
        lowrank.init_bound(16, 9, c, 0.5, grad0=1.0, eps=1.0)


def test_trajectory_bound_by_hand():
    """``((sqrt(s) + eta)/(1 - eta))^2`` at gamma = 1/2, rho = 0.6, eps = 0.1: ``s = 16``,
    ``eta = 0.1 * 2 / (0.5 * 0.9) = 4/9``, bound ``((4 + 4/9) / (5/9))^2 = 64``; ``inf`` once
    ``eta >= 1`` (here eta = 1 and eta = 3/2 at gamma = 1, rho = 0)."""
    assert lowrank.trajectory_bound(0.5, 0.6, 0.1) == pytest.approx(64.0, rel=1e-12)
    assert lowrank.trajectory_bound(0.5, 0.6, 0.0) == pytest.approx(16.0, rel=1e-12)  # s
    assert math.isinf(lowrank.trajectory_bound(1.0, 0.0, 0.5))  # eta = 0.5 / 0.5 = 1
    assert math.isinf(lowrank.trajectory_bound(1.0, 0.0, 0.6))  # eta = 0.6 / 0.4 = 3/2


def test_step1_lower_bound_by_hand():
    """``((||W0||_F - s)/(||W0||_2 + s))^2``, ``s = lr ||G||_F``: W0 = diag(3, 4) (norms 5 and 4),
    ||G||_F = 1, lr = 1/3 gives (14/13)^2; lr = 6 (s > ||W0||_F) gives 0."""
    W0 = torch.diag(torch.tensor([3.0, 4.0], dtype=torch.float64)).expand(2, 2, 2)
    G = torch.tensor([[0.6, 0.0], [0.0, 0.8]], dtype=torch.float64).expand(2, 2, 2)
    lower = lowrank.step1_lower_bound(W0, G, [1 / 3, 6.0])
    np.testing.assert_allclose(lower, [(14 / 13) ** 2, 0.0], rtol=1e-13, atol=0)
    single = lowrank.step1_lower_bound(W0[0], G[0], 1 / 3)
    np.testing.assert_allclose(single, [(14 / 13) ** 2], rtol=1e-13, atol=0)


# --- init_condition against an independent computation (explicit network, autograd) ---------------


def _f_explicit(W, X, gamma):
    """Paper A, eq. (2) with a_j = +-1/sqrt(m) (m/2 each) and the smoothed leaky ReLU
    ``phi(z) = gamma z + (1 - gamma) log((1 + e^z)/2)``: shape (..., n)."""
    m = W.shape[-2]
    a = torch.cat([torch.ones(m // 2), -torch.ones(m - m // 2)]).to(W) / math.sqrt(m)
    Z = W @ X.T
    phi = gamma * Z + (1 - gamma) * torch.log((1 + torch.exp(Z)) / 2)
    return torch.einsum("j,...jn->...n", a, phi)


def _grad_autograd(W, X, y, gamma):
    """grad of ``L(W) = (1/n) sum_i log(1 + exp(-y_i f(x_i; W)))`` by autograd."""
    W = W.detach().clone().requires_grad_(True)
    L = torch.log1p(torch.exp(-y * _f_explicit(W, X, gamma))).mean(dim=-1).sum()
    (G,) = torch.autograd.grad(L, W)
    return G


def _fro(A):
    """Frobenius norm over the last two axes, from its definition."""
    return torch.sqrt((A**2).sum(dim=(-2, -1)))


def test_init_condition_values_match_an_independent_computation():
    """f_max = max_k |f(x_k; W0)| per configuration and the (A2)(b) ratio
    ``(||W0||_F + lr ||grad L(W0) - grad L(0)||_F) / (lr ||grad L(0)||_F)``, with the gradients
    by autograd of the explicit loss, for a Python-float step size 1/3."""
    ds, X, y, net, c = _setup()
    scale = torch.tensor([1e-3, 1e-2, 1e-1], dtype=torch.float64)
    W0 = net.init(120, scale, seed=5, batch=3)
    lr = 1 / 3
    real = lowrank.init_condition(net, W0, X, y, lr=lr, gamma=0.5, eps=0.05)
    f_max = _f_explicit(W0, X, 0.5).abs().max(dim=-1).values.numpy()
    G = _grad_autograd(W0, X, y, 0.5)
    G0 = _grad_autograd(torch.zeros_like(W0), X, y, 0.5)
    ratio = ((_fro(W0) + lr * _fro(G - G0)) / (lr * _fro(G0))).numpy()
    assert real["f_max"].shape == (3,) and real["step_ratio"].shape == (3,)
    np.testing.assert_allclose(real["f_max"], f_max, rtol=1e-10, atol=0)
    np.testing.assert_allclose(real["step_ratio"], ratio, rtol=1e-10, atol=0)
    assert f_max[0] < f_max[1] < f_max[2]  # the three configurations differ
    np.testing.assert_array_equal(real["holds"], (f_max <= 1 / 50) & (ratio <= 0.05))
    # one configuration (m, d), not batched, gives the same numbers as in the batch
    one = lowrank.init_condition(net, W0[1], X, y, lr=lr, gamma=0.5, eps=0.05)
    np.testing.assert_allclose(one["f_max"], f_max[1], rtol=1e-12)
    np.testing.assert_allclose(one["step_ratio"], [ratio[1]], rtol=1e-12)


def test_init_condition_thresholds_are_inclusive():
    """(A2) keeps |f(x_k; W0)| <= 1/50 and the ratio <= eps, both bounds included: with
    leaky ReLU, a = (1, 1, -1, -1)/2 and one weight c on x_1 = e_1, f(x_1) = c/2 exactly."""
    net = models.LeakyNetwork(2, 2, phi="leaky_relu", gamma=0.5)
    X = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([1.0, -1.0], dtype=torch.float64)
    W0 = torch.zeros((4, 4, 3), dtype=torch.float64)
    W0[:, 0, 0] = torch.tensor([0.04, 0.0396, 0.06, 2.0], dtype=torch.float64)
    # f_max = 1/50 (the bound itself), 0.0198 (in (1/51, 1/50)), 0.03 and 1 (above 1/50)
    real = lowrank.init_condition(net, W0, X, y, lr=0.1, gamma=0.5, eps=1e12)
    np.testing.assert_allclose(real["f_max"], [0.02, 0.0198, 0.03, 1.0], rtol=1e-14)
    assert real["f_max"][0] == 1 / 50
    np.testing.assert_array_equal(real["holds"], [True, True, False, False])
    # eps equal to the largest realized ratio: that configuration still satisfies (b)
    eps = float(real["step_ratio"][:2].max())
    again = lowrank.init_condition(net, W0[:2], X, y, lr=0.1, gamma=0.5, eps=eps)
    np.testing.assert_array_equal(again["holds"], [True, True])


def test_lowrank_computes_on_the_device_of_w0():
    """On PyTorch's ``meta`` device (a stand-in for a GPU, tensors without data) init_condition
    and step1_lower_bound, given a Python-float step size, compute everything on W0's device:
    the only failure is the final copy of the results to the host."""
    meta = torch.device("meta")
    net = models.LeakyNetwork(2, 2, phi="smoothed_leaky_relu", gamma=0.5)
    W0 = torch.empty((3, 4, 5), dtype=torch.float64, device=meta)
    X = torch.empty((2, 5), dtype=torch.float64, device=meta)
    y = torch.empty((2,), dtype=torch.float64, device=meta)
    with pytest.raises(NotImplementedError):  # the copy to the host, the last step
        lowrank.init_condition(net, W0, X, y, lr=0.1, gamma=0.5, eps=0.05)
    with pytest.raises(NotImplementedError):  # the copy to the host, the last step
        lowrank.step1_lower_bound(W0, W0, 0.1)


# --- item 1 under (A1): smoothness, proxy-PL constant and rate by hand -----------------------


def test_smoothness_by_hand():
    """``beta = R_max^2 (1/4 + H / sqrt m)`` at R_max = 3, H = 2, m = 16:
    ``9 (1/4 + 2/4) = 27/4``; and at m = 4 (``H / sqrt m = 1``): ``9 * 5/4 = 45/4``."""
    c = _consts_r3_h2()
    assert lowrank.smoothness(c, 16) == pytest.approx(27 / 4, rel=1e-12)
    assert lowrank.smoothness(c, 4) == pytest.approx(45 / 4, rel=1e-12)


def test_proxy_pl_constant_by_hand_and_at_rho_one_and_above():
    """``mu = gamma R_min^2 (1 - rho) / (R_max sqrt(n (1 + rho)))`` at n = 2, R_min = 2,
    R_max = 3, p = 1, gamma = 1/2: ``rho = n p / R_min^2 = 1/2``, the numerator is
    ``1/2 * 4 * 1/2 = 1`` and the denominator ``3 sqrt(2 * 3/2) = 3 sqrt 3``, so
    ``mu = 1 / (3 sqrt 3) = sqrt(3) / 9``. Without near-orthogonality (``rho = 1`` and
    ``rho = 3/2 < 2``) there is no constant: 0, never a negative number."""
    c = lowrank.DataConstants(n=2, R_min=2.0, R_max=3.0, p=1.0, gamma=0.5, H=0.25)
    assert c.rho == 0.5
    assert lowrank.proxy_pl_constant(c) == pytest.approx(math.sqrt(3) / 9, rel=1e-12)
    at_one = lowrank.DataConstants(n=2, R_min=2.0, R_max=3.0, p=2.0, gamma=0.5, H=0.25)
    above = lowrank.DataConstants(n=2, R_min=2.0, R_max=3.0, p=3.0, gamma=0.5, H=0.25)
    assert at_one.rho == 1.0 and above.rho == 1.5
    assert lowrank.proxy_pl_constant(at_one) == 0.0
    assert lowrank.proxy_pl_constant(above) == 0.0


def test_risk_rate_by_hand_and_at_the_descent_lemma_boundary():
    """``kappa = lr (1 - lr beta / 2) mu^2 / (2 log 2)^2``: with ``mu = 2 log 2`` the last factor
    is 1, so lr = 1/2, beta = 2 gives ``1/2 * (1 - 1/2) = 1/4`` and lr = 1/4, beta = 2 gives
    ``1/4 * 3/4 = 3/16``. Once ``lr beta >= 2`` the rate is 0 whatever ``mu``: at
    ``lr beta = 2`` exactly (even for ``mu = 1e200``, whose square overflows a float) and at
    ``lr beta = 5/2`` (the formula would be negative there)."""
    mu = 2.0 * math.log(2.0)
    assert lowrank.risk_rate(0.5, 2.0, mu) == pytest.approx(1 / 4, rel=1e-12)
    assert lowrank.risk_rate(0.25, 2.0, mu) == pytest.approx(3 / 16, rel=1e-12)
    assert lowrank.risk_rate(1.0, 2.0, 1e200) == 0.0
    assert lowrank.risk_rate(1.0, 2.5, mu) == 0.0
    assert lowrank.risk_rate(4.0, 1.0, mu) == 0.0


# --- the metrics recorded along gradient descent, on a worked example -----------------------------


def _metric_example():
    """Leaky ReLU (gamma = 1/2), a = (1, -1)/sqrt 2, x_1 = (1, 0), x_2 = (1, 1), y = (1, -1) and
    w_1 = (1, 0), w_2 = (1/2, -1): the preactivations are <w_1, x_i> = (1, 1) and
    <w_2, x_i> = (1/2, -1/2), so phi' = (1, 1) and (1, 1/2), phi = (1, 1) and (1/2, -1/4)."""
    net = models.LeakyNetwork(1, 1, phi="leaky_relu", gamma=0.5)
    X = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    y = torch.tensor([1.0, -1.0], dtype=torch.float64)
    W = torch.tensor([[1.0, 0.0], [0.5, -1.0]], dtype=torch.float64)
    return net, X, y, W


def test_metrics_by_hand_batched_and_single():
    """The three metrics on :func:`_metric_example`, batched over (W, 2W) and for one W:

    * margins ``y_i f(x_i)``: ``f(x_1) = (1 - 1/2)/sqrt 2``, ``f(x_2) = (1 + 1/4)/sqrt 2``; at 2W
      both double (leaky ReLU is 1-homogeneous);
    * Fact E.7: with ``A[:, i] = a * phi'(W x_i)`` = ``(1, -1)/sqrt 2`` and ``(1, -1/2)/sqrt 2``,
      ``||grad f_i||^2 = ||A_i||^2 ||x_i||^2 = 1 * 1`` and ``5/8 * 2``, so the persistence
      ``min_i ||grad f_i||^2 / (gamma ||x_i||)^2 = min(1 / (1/4), (5/4) / (1/2)) = 5/2``;
      ``<grad f_1, grad f_2> = <A_1, A_2> <x_1, x_2> = 3/4 * 1`` gives the ratio 3/4 (phi' is
      scale-free: the same at 2W);
    * Lemma E.3: ``grad L = -(1/2)(g_1 A_1 x_1^T - g_2 A_2 x_2^T)`` written out as a matrix,
      ``g_i = 1/(1 + e^{q_i})``, divided by ``R_max`` (here 3) times the mean of the ``g_i``.
    One configuration ``(m, d)`` (no batch axis) gives the row of the batch."""
    net, X, y, W = _metric_example()
    Wb = torch.stack([W, 2 * W])
    r2 = math.sqrt(2.0)
    q = torch.tensor([[0.5 / r2, -1.25 / r2], [1.0 / r2, -2.5 / r2]], dtype=torch.float64)
    margins = lowrank.margins_metric(net, X, y)
    torch.testing.assert_close(margins(Wb), q, rtol=1e-14, atol=0)
    torch.testing.assert_close(margins(W), q[0], rtol=1e-14, atol=0)
    gram = lowrank.gradient_gram_metric(net, X)
    expect = torch.tensor([[2.5, 0.75], [2.5, 0.75]], dtype=torch.float64)
    torch.testing.assert_close(gram(Wb), expect, rtol=1e-14, atol=0)
    torch.testing.assert_close(gram(W), expect[0], rtol=1e-14, atol=0)
    A1 = torch.tensor([1.0, -1.0], dtype=torch.float64) / r2
    A2 = torch.tensor([1.0, -0.5], dtype=torch.float64) / r2
    bound = []
    for b in range(2):
        g1, g2 = (1.0 / (1.0 + torch.exp(q[b]))).tolist()
        G = -0.5 * (g1 * torch.outer(A1, X[0]) - g2 * torch.outer(A2, X[1]))
        bound.append(float(_fro(G)) / (3.0 * (g1 + g2) / 2))
    metric = lowrank.gradient_bound_metric(net, X, y, 3.0)
    torch.testing.assert_close(
        metric(Wb), torch.tensor(bound, dtype=torch.float64), rtol=1e-13, atol=0
    )
    torch.testing.assert_close(
        metric(W), torch.tensor(bound[0], dtype=torch.float64), rtol=1e-13, atol=0
    )


def test_metrics_take_the_dtype_of_w():
    """The metrics compute in W's dtype whatever the dtype of the data: float32 points (exact
    here) with float64 weights, and float64 labels, or integer labels, with float32 weights give
    the numbers of the float64 computation, in W's dtype."""
    net, X, y, W = _metric_example()
    r2 = math.sqrt(2.0)
    q = torch.tensor([0.5 / r2, -1.25 / r2], dtype=torch.float64)
    X32, W32 = X.to(torch.float32), W.to(torch.float32)

    def metrics(X, y, W):
        return {
            "margins": lowrank.margins_metric(net, X, y)(W),
            "gram": lowrank.gradient_gram_metric(net, X)(W),
            "bound": lowrank.gradient_bound_metric(net, X, y, 3.0)(W),
        }

    ref = metrics(X, y, W)
    torch.testing.assert_close(ref["margins"], q, rtol=1e-14, atol=0)
    # float32 points, float64 weights
    out = metrics(X32, y, W)
    for k in ref:
        assert out[k].dtype == torch.float64, k
        torch.testing.assert_close(out[k], ref[k], rtol=1e-14, atol=0)
    # float64 (or integer) labels and points, float32 weights
    for labels in (y, y.to(torch.int64)):
        out = metrics(X, labels, W32)
        for k in ref:
            assert out[k].dtype == torch.float32, k
            torch.testing.assert_close(out[k], ref[k].to(torch.float32), rtol=1e-6, atol=0)


def test_loss_ratio_by_hand_batched_single_and_in_w_dtype():
    """``log max_ij g_i / g_j``, ``g_i = sigmoid(-q_i)``, on a worked example: leaky ReLU
    (gamma = 1/2), a = (1, -1)/sqrt 2, w_1 = (sqrt 2, 0), w_2 = 0, so
    ``f(x) = phi(sqrt 2 x_1)/sqrt 2``; with L = log 3, x = (L, 0), (0, 1), (-2L, 0) and
    y = (1, -1, 1) the margins are (L, 0, -L) (the last one on the leaky slope), so
    g = (1/(1 + 3), 1/2, 3/(3 + 1)) = (1/4, 1/2, 3/4) and the ratio is 3. At 2W the margins
    double (1-homogeneous): g = (1/10, 1/2, 9/10), ratio 9; at W = 0 every g is 1/2, ratio 1.
    One configuration (no batch axis) gives a scalar; float32 weights with float64 data give
    the same number in float32 (the data follow W)."""
    net = models.LeakyNetwork(1, 1, phi="leaky_relu", gamma=0.5)
    L = math.log(3.0)
    X = torch.tensor([[L, 0.0], [0.0, 1.0], [-2.0 * L, 0.0]], dtype=torch.float64)
    y = torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64)
    W = torch.tensor([[math.sqrt(2.0), 0.0], [0.0, 0.0]], dtype=torch.float64)
    metric = lowrank.loss_ratio(net, X, y)
    expect = torch.tensor([math.log(3.0), math.log(9.0), 0.0], dtype=torch.float64)
    torch.testing.assert_close(
        metric(torch.stack([W, 2 * W, torch.zeros_like(W)])), expect, rtol=1e-13, atol=1e-15
    )
    single = metric(W)
    assert single.shape == ()
    torch.testing.assert_close(single, expect[0], rtol=1e-13, atol=0)
    out32 = metric(W.to(torch.float32))
    assert out32.dtype == torch.float32 and out32.shape == ()
    torch.testing.assert_close(out32, expect[0].to(torch.float32), rtol=1e-5, atol=0)


def test_gradient_gram_metric_leaves_out_orthogonal_pairs():
    """The near-orthogonality ratio runs over the pairs with ``<x_i, x_k> != 0`` only: for
    orthogonal points there is no pair and the ratio is 0, even for a diverged configuration
    (NaN weights, whose gradient Gram entries are NaN; its persistence is NaN)."""
    net = models.LeakyNetwork(1, 1, phi="smoothed_leaky_relu", gamma=0.5)
    X = torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    W = torch.stack([torch.eye(2, dtype=torch.float64), torch.full((2, 2), math.nan)])
    out = lowrank.gradient_gram_metric(net, X)(W)
    assert out[0, 0] >= 1 and torch.isnan(out[1, 0])
    np.testing.assert_array_equal(out[:, 1].numpy(), [0.0, 0.0])


def test_gradient_gram_metric_differentiable_with_orthogonal_pairs():
    """The metric is a smooth function of ``W`` (smoothed leaky ReLU, unique min and max) whose
    autograd gradient is finite and is its derivative even when a pair of points is orthogonal
    (``x_1 . x_2 = 0``, left out of the ratio): the entries left out must not divide by
    ``<x_i, x_k> = 0`` in the backward pass either. Checked against central differences."""
    net = models.LeakyNetwork(2, 2, phi="smoothed_leaky_relu", gamma=0.5)
    X = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], dtype=torch.float64)
    W0 = net.init(2, 1.0, seed=3)
    metric = lowrank.gradient_gram_metric(net, X)
    for k in range(2):
        W = W0.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(metric(W)[k], W)
        assert torch.isfinite(grad).all(), k
        h = 1e-6
        central = torch.empty_like(W0)
        for idx in np.ndindex(*W0.shape):
            E = torch.zeros_like(W0)
            E[idx] = h
            central[idx] = (metric(W0 + E)[k] - metric(W0 - E)[k]) / (2 * h)
        torch.testing.assert_close(grad, central, rtol=1e-6, atol=1e-8)
