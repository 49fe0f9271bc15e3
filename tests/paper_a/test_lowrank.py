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
