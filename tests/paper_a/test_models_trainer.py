"""Tests of twolayer.paper_a.models and twolayer.paper_a.trainer: the network, its closed-form
gradient and batched gradient descent."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from twolayer.paper_a import data, metrics
from twolayer.paper_a.losses import get_loss
from twolayer.paper_a.models import LeakyNetwork, TwoLayerNet, second_layer
from twolayer.paper_a.trainer import (
    DivergenceError,
    TrainResult,
    _Steps,
    gradient_descent,
    log_spaced_steps,
)

F64 = torch.float64
ACTIVATIONS = ["leaky_relu", "smoothed_leaky_relu"]
LOSS_NAMES = ["logistic", "exp"]


def small_problem(n=6, d=5, seed=0):
    X, y = data.nearly_orthogonal(n, d, seed).torch()
    return X, y


def hand_forward(net: LeakyNetwork, W: torch.Tensor, x: torch.Tensor) -> float:
    """sum_j a_j phi(<w_j, x>) with a loop over neurons."""
    m = net.m1 + net.m2
    total = 0.0
    for j in range(m):
        a_j = (1.0 if j < net.m1 else -1.0) / math.sqrt(m)
        total += a_j * float(net.phi(torch.dot(W[j], x).reshape(1)))
    return total


# --- the fixed second layer -----------------------------------------------------------------------


def test_second_layer_values():
    a = second_layer(3, 2)
    s = 1 / math.sqrt(5)
    assert a.dtype == F64
    assert torch.equal(a, torch.tensor([s, s, s, -s, -s], dtype=F64))
    assert float(a.sum()) == pytest.approx(1 / math.sqrt(5), rel=1e-15)
    # ||a||^2 = 1 for every (m1, m2)
    assert float((second_layer(7, 4) ** 2).sum()) == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("m1,m2", [(0, 2), (2, 0), (-1, 3), (1.5, 2), (True, 2), (2, "3")])
def test_second_layer_bad_sizes_raise(m1, m2):
    with pytest.raises(ValueError, match="m1|m2"):
        second_layer(m1, m2)


@pytest.mark.parametrize(
    ("m1", "m2", "message"),
    [
        (0, 2, "m1 must be a positive integer, got 0"),
        (2, 0, "m2 must be a positive integer, got 0"),
        (2, "3", "m2 must be a positive integer, got '3'"),
    ],
)
def test_second_layer_bad_size_messages(m1, m2, message):
    """The message names the offending width and shows it with repr."""
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        second_layer(m1, m2)


def test_second_layer_made_on_the_requested_device():
    """``a`` is built on ``device`` in ``dtype`` (the meta device exists on every machine)."""
    a = second_layer(2, 1, dtype=torch.float32, device="meta")
    assert a.device.type == "meta"
    assert a.dtype == torch.float32 and a.shape == (3,)


@pytest.mark.parametrize("m1", [2.5, True])
def test_leaky_network_rejects_non_integer_widths(m1):
    with pytest.raises(ValueError):
        LeakyNetwork(m1, 2)


def test_leaky_network_a_follows_like():
    net = LeakyNetwork(2, 1)
    like = torch.zeros(1, dtype=torch.float32)
    assert net.a(like).dtype == torch.float32
    assert torch.equal(net.a(), second_layer(2, 1))
    assert (net.m, net.gamma) == (3, 0.5)


# --- initialization -------------------------------------------------------------------------------


def test_init_shapes_determinism_and_scale():
    net = LeakyNetwork(3, 2)
    W = net.init(4, 0.5, seed=7)
    assert W.shape == (5, 4) and W.dtype == F64
    assert torch.equal(W, net.init(4, 0.5, seed=7))
    assert not torch.equal(W, net.init(4, 0.5, seed=8))
    assert torch.allclose(W, 0.5 * net.init(4, 1.0, seed=7), rtol=1e-15, atol=0)
    Wb = net.init(4, torch.tensor([1.0, 2.0, 3.0], dtype=F64), seed=7, batch=3)
    unit = net.init(4, 1.0, seed=7, batch=3)
    assert Wb.shape == (3, 5, 4)
    for b, s in enumerate([1.0, 2.0, 3.0]):
        assert torch.allclose(Wb[b], s * unit[b], rtol=1e-15, atol=0)


def test_init_gaussian_statistics():
    net = LeakyNetwork(50, 50)
    W = net.init(100, 0.3, seed=0)  # 10^4 entries of N(0, 0.09)
    N = W.numel()
    assert abs(float(W.mean())) <= 5 * 0.3 / math.sqrt(N)
    # sample variance of N(0, s^2): sd s^2 sqrt(2/N); 5 sigma
    assert abs(float((W**2).mean()) - 0.09) <= 5 * 0.09 * math.sqrt(2 / N)


# --- forward --------------------------------------------------------------------------------------


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_forward_equals_hand_loop(act):
    net = LeakyNetwork(3, 2, act, gamma=0.3)
    X, y = small_problem()
    W = net.init(X.shape[1], 1.0, seed=1)
    f = net.forward(W, X)
    assert f.shape == (X.shape[0],)
    expected = torch.tensor([hand_forward(net, W, X[i]) for i in range(X.shape[0])], dtype=F64)
    torch.testing.assert_close(f, expected, rtol=1e-13, atol=1e-15)
    torch.testing.assert_close(net(W, X), f, rtol=0, atol=0)
    torch.testing.assert_close(net.margins(W, X, y), y * f, rtol=0, atol=0)
    assert net.preactivations(W, X).shape == (5, X.shape[0])


def test_forward_is_batched():
    net = LeakyNetwork(2, 2, "smoothed_leaky_relu", 0.2)
    X, _ = small_problem()
    W = net.init(X.shape[1], 1.0, seed=2, batch=3)
    f = net.forward(W, X)
    assert f.shape == (3, X.shape[0])
    for b in range(3):
        torch.testing.assert_close(f[b], net.forward(W[b], X), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("c", [0.01, 0.5, 3.0, 1e3])
def test_leaky_relu_network_is_one_homogeneous(c):
    net = LeakyNetwork(3, 3, "leaky_relu", 0.1)
    X, _ = small_problem()
    W = net.init(X.shape[1], 1.0, seed=3)
    torch.testing.assert_close(net.forward(c * W, X), c * net.forward(W, X), rtol=1e-13, atol=0)


def test_smoothed_network_is_not_homogeneous():
    # the check above can fail: the smoothed leaky ReLU is not homogeneous
    net = LeakyNetwork(3, 3, "smoothed_leaky_relu", 0.1)
    X, _ = small_problem()
    W = net.init(X.shape[1], 1.0, seed=3)
    assert not torch.allclose(net.forward(3 * W, X), 3 * net.forward(W, X), rtol=1e-6)


# --- closed-form gradient -------------------------------------------------------------------------


def autograd_risk_and_grad(net, W, X, y, loss):
    Wg = W.clone().requires_grad_(True)
    L = loss.empirical_risk(net.margins(Wg, X, y))
    (G,) = torch.autograd.grad(L.sum(), Wg)  # configurations are independent
    return L.detach(), G


def assert_rel_close(a, b, rel):
    scale = float(b.abs().max())
    assert float((a - b).abs().max()) <= rel * scale, (float((a - b).abs().max()), scale)


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("loss_name", LOSS_NAMES)
def test_loss_and_grad_matches_autograd(act, loss_name):
    net = LeakyNetwork(3, 2, act, gamma=0.25)
    X, y = small_problem(n=7, d=5, seed=4)
    W = net.init(5, torch.tensor([0.1, 1.0, 2.0], dtype=F64), seed=5, batch=3)
    # keep preactivations and margins inside |.| < 20 where torch's softplus is exact (see
    # test_activations / test_losses for the bug beyond)
    assert float(net.preactivations(W, X).abs().max()) < 20
    loss = get_loss(loss_name)
    L, logL, G = net.loss_and_grad(W, X, y, loss)
    L_ref, G_ref = autograd_risk_and_grad(net, W, X, y, loss)
    assert L.shape == (3,) and logL.shape == (3,) and G.shape == W.shape
    torch.testing.assert_close(L, L_ref, rtol=1e-14, atol=0)
    torch.testing.assert_close(logL, torch.log(L_ref), rtol=1e-13, atol=1e-15)
    for b in range(3):
        assert_rel_close(G[b], G_ref[b], 1e-12)


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_loss_and_grad_matches_autograd_for_real_valued_labels(act):
    """``grad L = -(1/n) sum_i g_i y_i (a * phi'(W x_i)) x_i^T`` is the chain rule through
    ``q_i = y_i f(x_i)`` for any real ``y_i``: it never uses ``y_i^2 = 1``. Labels 2, -1/2, ...
    (not +-1) check that ``y`` enters as a factor, against autograd."""
    net = LeakyNetwork(3, 2, act, gamma=0.25)
    X, _ = small_problem(n=6, d=5, seed=4)
    y = torch.tensor([2.0, -0.5, 1.5, -3.0, 0.25, -1.0], dtype=F64)
    W = net.init(5, torch.tensor([0.3, 1.0], dtype=F64), seed=5, batch=2)
    loss = get_loss("logistic")
    L, _, G = net.loss_and_grad(W, X, y, loss)
    L_ref, G_ref = autograd_risk_and_grad(net, W, X, y, loss)
    torch.testing.assert_close(L, L_ref, rtol=1e-14, atol=0)
    for b in range(2):
        assert_rel_close(G[b], G_ref[b], 1e-12)


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_loss_and_grad_single_config(act):
    net = LeakyNetwork(2, 2, act, gamma=0.5)
    X, y = small_problem()
    W = net.init(X.shape[1], 1.0, seed=6)
    L, logL, G = net.loss_and_grad(W, X, y, get_loss("logistic"))
    L_ref, G_ref = autograd_risk_and_grad(net, W, X, y, get_loss("logistic"))
    assert L.shape == () and G.shape == W.shape
    assert_rel_close(G, G_ref, 1e-12)


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("loss_name", LOSS_NAMES)
def test_normalized_gradient_is_grad_over_loss(act, loss_name):
    net = LeakyNetwork(3, 2, act, gamma=0.25)
    X, y = small_problem(n=7, d=5, seed=4)
    W = net.init(5, torch.tensor([0.1, 1.0, 2.0], dtype=F64), seed=5, batch=3)
    loss = get_loss(loss_name)
    L, logL, G = net.loss_and_grad(W, X, y, loss)
    Ln, logLn, Gn = net.loss_and_grad(W, X, y, loss, normalized=True)
    torch.testing.assert_close(Ln, L, rtol=0, atol=0)
    torch.testing.assert_close(logLn, logL, rtol=0, atol=0)
    for b in range(3):
        assert_rel_close(Gn[b], G[b] / L[b], 1e-12)


def separating_weights(net: LeakyNetwork, X, y):
    """v_j = s, u_j = -s with s = sum_i y_i x_i: on nearly orthogonal data y_k <s, x_k> > 0 and
    then y_k f(x_k) > 0 for the leaky ReLU network (both signs of <s, x_k> work out)."""
    s = (y[:, None] * X).sum(0)
    return torch.cat([s.expand(net.m1, -1), (-s).expand(net.m2, -1)]).clone()


def test_normalized_gradient_finite_when_loss_underflows():
    net = LeakyNetwork(2, 3, "leaky_relu", 0.5)
    X, y = small_problem(n=5, d=400, seed=7)
    W = separating_weights(net, X, y)
    q = net.margins(W, X, y)
    assert float(q.min()) > 0
    W = W * (1000.0 / float(q.min()))  # every margin >= 1000: e^{-q} underflows
    loss = get_loss("exp")
    L, logL, Gn = net.loss_and_grad(W, X, y, loss, normalized=True)
    assert float(L) == 0.0
    assert math.isfinite(float(logL)) and torch.all(torch.isfinite(Gn))
    # grad L / L = -sum_i softmax(-q)_i y_i (a * phi'(W x_i)) x_i^T
    q = net.margins(W, X, y)
    w = torch.softmax(-q, dim=-1)
    Z = net.preactivations(W, X)
    expected = -((net.phi.grad(Z) * (w * y)[None, :] * net.a(W)[:, None]) @ X)
    # log-space weights carry a relative error of a few eps * max q (see test_losses)
    assert_rel_close(Gn, expected, 8 * torch.finfo(F64).eps * float(q.max()))
    assert float(logL) == pytest.approx(float(torch.logsumexp(-q, 0) - math.log(5)), rel=1e-14)


# --- gradient descent -----------------------------------------------------------------------------


def gd_setup(B=3, act="leaky_relu", n=8, d=20, seed=0):
    net = LeakyNetwork(3, 2, act, gamma=0.3)
    X, y = small_problem(n=n, d=d, seed=seed)
    W0 = net.init(d, torch.tensor([0.05, 0.2, 1.0][:B], dtype=F64), seed=seed + 1, batch=B)
    return net, X, y, W0


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("normalized", [False, True])
def test_batched_run_equals_separate_runs(act, normalized):
    net, X, y, W0 = gd_setup(act=act)
    lr = torch.tensor([0.05, 0.1, 0.2], dtype=F64)
    res = gradient_descent(
        net, W0, X, y, lr=lr, steps=15, normalized=normalized, record_steps=[0, 5, 15]
    )
    assert res.W.shape == W0.shape
    for b in range(3):
        one = gradient_descent(
            net,
            W0[b],
            X,
            y,
            lr=float(lr[b]),
            steps=15,
            normalized=normalized,
            record_steps=[0, 5, 15],
        )
        assert one.W.shape == W0[b].shape
        torch.testing.assert_close(res.W[b], one.W, rtol=1e-12, atol=1e-14)
        for k in ["loss", "log_loss", "min_margin"]:
            np.testing.assert_allclose(res.history[k][:, b], one.history[k], rtol=1e-12, atol=1e-14)


def test_one_step_by_hand():
    net, X, y, W0 = gd_setup()
    loss = get_loss("logistic")
    _, _, G = net.loss_and_grad(W0, X, y, loss)
    res = gradient_descent(net, W0, X, y, lr=0.3, steps=1, record_steps=[0, 1])
    # the trainer applies W + lr (C X) as one fused GEMM: equal up to float64 rounding
    torch.testing.assert_close(res.W, W0 - 0.3 * G, rtol=1e-13, atol=1e-15)
    # normalized GD with lr is plain GD with lr / L(W0)
    L0, _, _ = net.loss_and_grad(W0, X, y, loss)
    resn = gradient_descent(net, W0, X, y, lr=0.3, steps=1, normalized=True, record_steps=[1])
    torch.testing.assert_close(
        resn.W, W0 - (0.3 / L0).reshape(-1, 1, 1) * G, rtol=1e-13, atol=1e-15
    )


def test_float_lr_equals_constant_lr_tensor():
    net, X, y, W0 = gd_setup()
    a = gradient_descent(net, W0, X, y, lr=0.1, steps=10)
    b = gradient_descent(net, W0, X, y, lr=torch.full((3,), 0.1, dtype=F64), steps=10)
    assert torch.equal(a.W, b.W)
    for k in a.history:
        assert np.array_equal(a.history[k], b.history[k])


def test_per_config_lr_is_applied_per_config():
    net, X, y, W0 = gd_setup()
    W0 = W0[:1].expand(3, -1, -1).clone()  # three copies of one initialization
    res = gradient_descent(net, W0, X, y, lr=torch.tensor([0.01, 0.1, 0.5], dtype=F64), steps=3)
    assert not torch.equal(res.W[0], res.W[1]) and not torch.equal(res.W[1], res.W[2])
    same = gradient_descent(net, W0, X, y, lr=0.1, steps=3)
    torch.testing.assert_close(res.W[1], same.W[1], rtol=0, atol=0)


def test_record_steps_honoured_and_history_shapes():
    net, X, y, W0 = gd_setup()

    def fro(W):
        return torch.linalg.matrix_norm(W)  # (B,)

    def svals(W):
        return metrics.singular_values(W)  # (B, min(m, d))

    import time

    start = time.perf_counter()
    res = gradient_descent(
        net,
        W0,
        X,
        y,
        lr=0.1,
        steps=6,
        record_steps=[6, 0, 3, 3],
        metrics={"fro": fro, "svals": svals},
    )
    elapsed = time.perf_counter() - start
    assert isinstance(res, TrainResult)
    assert res.steps.tolist() == [0, 3, 6]
    assert set(res.history) == {"loss", "log_loss", "min_margin", "fro", "svals"}
    for k in ["loss", "log_loss", "min_margin", "fro"]:
        assert res.history[k].shape == (3, 3)
    assert res.history["svals"].shape == (3, 3, 5)
    # step 0 is W0; step 3 is the end of a 3-step run; step 6 is the final W
    np.testing.assert_allclose(
        res.history["fro"][0], torch.linalg.matrix_norm(W0).numpy(), rtol=1e-15
    )
    three = gradient_descent(net, W0, X, y, lr=0.1, steps=3, record_steps=[3])
    np.testing.assert_allclose(res.history["loss"][1], three.final("loss"), rtol=1e-14)
    np.testing.assert_allclose(
        res.final("fro"), torch.linalg.matrix_norm(res.W).numpy(), rtol=1e-14
    )
    L, logL, _ = net.loss_and_grad(W0, X, y, get_loss("logistic"))
    np.testing.assert_allclose(res.history["loss"][0], L.numpy(), rtol=1e-15)
    np.testing.assert_allclose(res.history["log_loss"][0], logL.numpy(), rtol=1e-15)
    np.testing.assert_allclose(
        res.history["min_margin"][0], net.margins(W0, X, y).min(-1).values.numpy(), rtol=1e-15
    )
    assert 0 < res.wall_time <= elapsed  # the run's own duration, not a timestamp


def test_single_config_history_shapes_and_default_record_steps():
    net, X, y, W0 = gd_setup()
    res = gradient_descent(
        net, W0[0], X, y, lr=0.1, steps=100, metrics={"svals": lambda W: metrics.singular_values(W)}
    )
    assert np.array_equal(res.steps, log_spaced_steps(100))
    k = len(res.steps)
    assert res.W.shape == W0[0].shape
    assert res.history["loss"].shape == (k,)
    assert res.history["svals"].shape == (k, 5)


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_loss_decreases_on_separable_data(act):
    # n = 6 Gaussian points in d = 400 > n are linearly separable almost surely; with a small
    # step size every GD step is a descent step
    net = LeakyNetwork(5, 5, act, gamma=0.5)
    X, y = small_problem(n=6, d=400, seed=11)
    W0 = net.init(400, 1e-3, seed=0)
    res = gradient_descent(net, W0, X, y, lr=0.05, steps=200, record_steps=list(range(0, 201, 20)))
    loss = res.history["loss"]
    assert np.all(np.diff(loss) < 0)
    assert loss[-1] < loss[0]
    assert res.history["min_margin"][-1] > 0  # zero training error at the end


def test_divergence_for_huge_learning_rate():
    # two copies of the same input with opposite labels: no W separates them, so a huge step
    # blows the logistic loss up by far more than the default growth bound of 1e8
    net = LeakyNetwork(3, 3, "leaky_relu", 0.5)
    X = torch.tensor([[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0]], dtype=F64)
    y = torch.tensor([1.0, -1.0, 1.0], dtype=F64)
    W0 = net.init(3, 0.1, seed=0, batch=2)
    with pytest.raises(DivergenceError) as info:
        gradient_descent(net, W0, X, y, lr=torch.tensor([1e-3, 1e12], dtype=F64), steps=5)
    e = info.value
    assert isinstance(e, FloatingPointError)
    assert e.step == 1 and e.config == 1 and e.quantity.startswith("loss")
    assert "step 1" in str(e) and "loss" in str(e) and "configuration 1" in str(e)
    assert "lr" in str(e)


@pytest.mark.parametrize("where", ["X", "W0", "y"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_divergence_for_non_finite_input(where, bad):
    net, X, y, W0 = gd_setup()
    X, y, W0 = X.clone(), y.clone(), W0.clone()
    if where == "X":
        X[2, 3] = bad
    elif where == "y":
        y[1] = bad
    else:
        W0[2, 1, 0] = bad
    with pytest.raises(DivergenceError) as info:
        gradient_descent(net, W0, X, y, lr=0.1, steps=3)
    e = info.value
    assert e.step == 0 and e.quantity == "loss"
    assert "step 0" in str(e) and "loss" in str(e)
    if where == "W0":
        assert e.config == 2


def test_divergence_on_overflowing_weights():
    net, X, y, W0 = gd_setup()
    with pytest.raises(DivergenceError) as info:
        gradient_descent(net, W0, X, y, lr=1e308, steps=3)
    assert info.value.step == 1 and f"step {info.value.step}" in str(info.value)


@pytest.mark.parametrize("steps", [-1, 2.5, True, "3"])
def test_bad_steps_raise(steps):
    net, X, y, W0 = gd_setup()
    with pytest.raises(ValueError, match="steps"):
        gradient_descent(net, W0, X, y, steps=steps)


@pytest.mark.parametrize(
    "lr",
    [
        0.0,
        -0.1,
        float("inf"),
        float("nan"),
        torch.tensor([0.1, 0.0, 0.1], dtype=F64),
        torch.tensor([0.1, 0.1], dtype=F64),
    ],
)
def test_bad_lr_raises(lr):
    net, X, y, W0 = gd_setup()
    with pytest.raises(ValueError, match="lr"):
        gradient_descent(net, W0, X, y, lr=lr, steps=2)


@pytest.mark.parametrize(
    ("lr", "message"),
    [
        (torch.tensor([0.1, 0.2], dtype=F64), "lr has 2 entries for 3 configurations"),
        (
            torch.full((3, 1), 0.1, dtype=F64),
            "lr must be a float or a (B,) tensor, got shape (3, 1)",
        ),
        (
            torch.full((1, 3), 0.1, dtype=F64),
            "lr must be a float or a (B,) tensor, got shape (1, 3)",
        ),
    ],
)
def test_bad_lr_shape_messages(lr, message):
    """A (B,) lr of the wrong length is reported by its length; any other shape (here 2-D,
    even with B entries) by the shape itself. B = 3 configurations."""
    net, X, y, W0 = gd_setup()
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        gradient_descent(net, W0, X, y, lr=lr, steps=2)


def test_lr_off_the_host_is_read_back_before_validation():
    """An lr tensor on another device is copied to the host once, before it is checked; a
    meta tensor (no data, available on every machine) makes that copy fail with torch's
    ``NotImplementedError``, the copy being the first thing done with it."""
    net, X, y, W0 = gd_setup()
    with pytest.raises(NotImplementedError):
        gradient_descent(net, W0, X, y, lr=torch.full((3,), 0.1, device="meta"), steps=2)


def test_divergence_monitor_of_a_run_keeps_the_run_dtype():
    """The per-step program records bad values in the run's dtype (float64 here, while the
    default dtype is float32): a loss beyond float32's range is kept as it is."""
    net, X, y, W0 = gd_setup()
    lr_t = torch.full((3, 1, 1), 0.1, dtype=F64)
    run = _Steps(net, W0, X, y, get_loss("logistic"), lr_t, False, 1e8)
    assert torch.get_default_dtype() == torch.float32
    assert run.monitor.bad_value.dtype == F64
    assert torch.equal(run.monitor.bad_value, torch.zeros(3, dtype=F64))


@pytest.mark.parametrize("rec", [[0, 4], [-1, 2]])
def test_record_steps_out_of_range_raise(rec):
    net, X, y, W0 = gd_setup()
    with pytest.raises(ValueError, match="record_steps"):
        gradient_descent(net, W0, X, y, steps=3, record_steps=rec)


def test_zero_steps_records_initial_state():
    net, X, y, W0 = gd_setup()
    res = gradient_descent(net, W0, X, y, steps=0)
    assert res.steps.tolist() == [0]
    assert torch.equal(res.W, W0)


# --- log_spaced_steps -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "steps,num", [(0, 50), (1, 50), (2, 50), (10, 5), (1000, 50), (12345, 20), (7, 100)]
)
def test_log_spaced_steps_properties(steps, num):
    s = log_spaced_steps(steps, num)
    assert s.dtype.kind == "i"
    assert s[0] == 0 and s[-1] == steps
    assert np.all(np.diff(s) > 0)  # sorted, unique
    # by hand where the grid is short: 0, 1, then steps^(k/(num-1)) rounded, duplicates dropped;
    # (10, 5): 10^(k/4) = 1, 1.78, 3.16, 5.62, 10 -> 1, 2, 3, 6, 10; (7, 100): the ratio
    # 7^(1/99) = 1.02 is finer than every integer gap, so every integer up to 7 appears
    by_hand = {
        (0, 50): [0],
        (1, 50): [0, 1],
        (2, 50): [0, 1, 2],
        (10, 5): [0, 1, 2, 3, 6, 10],
        (7, 100): [0, 1, 2, 3, 4, 5, 6, 7],
    }
    if (steps, num) in by_hand:
        assert s.tolist() == by_hand[(steps, num)]
    if steps >= 1:
        assert s[1] == 1
    assert len(s) <= num + 1  # 0 plus at most num log-spaced points
    if steps >= 2:
        # geometric grid g_{k+1} = rho g_k, rho = steps^(1/(num-1)), rounded to s_k = round(g_k):
        # s_{k+1} <= rho (s_k + 1/2) + 1/2 for consecutive points (duplicates only drop points)
        rho = steps ** (1.0 / (max(num, 2) - 1))
        assert np.all(s[2:] <= rho * s[1:-1] + (rho + 1) / 2 + 1e-9)


def test_log_spaced_steps_negative_raises():
    with pytest.raises(ValueError):
        log_spaced_steps(-1)


# --- TwoLayerNet ----------------------------------------------------------------------------------


def test_glorot_uniform_bounds_and_variance():
    d, m = 10, 400
    net = TwoLayerNet(d, m, seed=0, dtype=F64)
    r1, r2 = math.sqrt(6 / (d + m)), math.sqrt(6 / (m + 1))
    W, a = net.W.detach(), net.a.detach()
    assert W.shape == (m, d) and a.shape == (m,)
    assert float(W.abs().max()) <= r1 and float(a.abs().max()) <= r2
    # P(max |W| < 0.9 r1) = 0.9^(m d) < 1e-180 and P(max |a| < 0.9 r2) = 0.9^m < 1e-18:
    # the bound is tight
    assert float(W.abs().max()) >= 0.9 * r1 and float(a.abs().max()) >= 0.9 * r2
    # U(-r, r) has E u^2 = r^2/3 and Var u^2 = 4 r^4 / 45; a 5-sigma interval
    N = W.numel()
    assert abs(float((W**2).mean()) - r1**2 / 3) <= 5 * math.sqrt(4 * r1**4 / (45 * N))


def test_glorot_init_scale_multiplies():
    one = TwoLayerNet(6, 8, seed=3, dtype=F64)
    small = TwoLayerNet(6, 8, seed=3, dtype=F64, init_scale=1 / 50)
    torch.testing.assert_close(small.W.detach(), one.W.detach() / 50, rtol=1e-15, atol=0)
    torch.testing.assert_close(small.a.detach(), one.a.detach() / 50, rtol=1e-15, atol=0)


def test_gaussian_init():
    net = TwoLayerNet(100, 100, init="gaussian", init_scale=0.2, seed=1, dtype=F64)
    W = net.W.detach()
    N = W.numel()
    assert abs(float((W**2).mean()) - 0.04) <= 5 * 0.04 * math.sqrt(2 / N)


def test_bad_init_raises():
    with pytest.raises(ValueError, match="init"):
        TwoLayerNet(3, 4, init="he")


def test_bias_optional():
    with_b = TwoLayerNet(3, 4)
    assert with_b.b.shape == (4,) and torch.all(with_b.b == 0)
    assert with_b.c.shape == () and float(with_b.c.detach()) == 0
    assert len(list(with_b.parameters())) == 4
    no_b = TwoLayerNet(3, 4, bias=False)
    assert no_b.b is None and no_b.c is None
    assert len(list(no_b.parameters())) == 2


@pytest.mark.parametrize("activation", ["relu", "leaky_relu", "smoothed_leaky_relu"])
@pytest.mark.parametrize("bias", [True, False])
def test_two_layer_forward_by_hand(activation, bias):
    net = TwoLayerNet(4, 5, activation=activation, gamma=0.2, bias=bias, seed=2, dtype=F64)
    if bias:
        with torch.no_grad():
            net.b.copy_(torch.linspace(-0.5, 0.5, 5, dtype=F64))
            net.c.fill_(0.7)
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(0), dtype=F64)
    out = net(x).detach()
    assert out.shape == (6,)
    W, a = net.W.detach(), net.a.detach()
    b = net.b.detach() if bias else torch.zeros(5, dtype=F64)
    c = float(net.c.detach()) if bias else 0.0
    phi = {
        "relu": lambda z: max(z, 0.0),
        "leaky_relu": lambda z: max(z, 0.2 * z),
        "smoothed_leaky_relu": lambda z: 0.2 * z + 0.8 * math.log((1 + math.exp(z)) / 2),
    }[activation]
    for i in range(6):
        expected = c + sum(float(a[j]) * phi(float(W[j] @ x[i]) + float(b[j])) for j in range(5))
        assert float(out[i]) == pytest.approx(expected, rel=1e-12, abs=1e-14)


def test_two_layer_deterministic_by_seed():
    a, b, c = TwoLayerNet(5, 7, seed=4), TwoLayerNet(5, 7, seed=4), TwoLayerNet(5, 7, seed=5)
    assert torch.equal(a.W, b.W) and torch.equal(a.a, b.a)
    assert not torch.equal(a.W, c.W)
    assert a.W.dtype == torch.float32


def test_per_configuration_data_sets_equal_separate_runs():
    """X of shape (B, n, d): each configuration trains on its own data set."""
    from twolayer.paper_a import data

    net = LeakyNetwork(2, 2, "leaky_relu", 0.5)
    sets = [data.nearly_orthogonal(6, 30, seed=k) for k in range(3)]
    Xb = torch.as_tensor(np.stack([s.X for s in sets]))
    yb = torch.as_tensor(np.stack([s.y for s in sets]))
    W0 = net.init(30, 0.1, seed=0, batch=3)
    res = gradient_descent(
        net, W0, Xb, yb, loss="exp", lr=0.1, steps=40, normalized=True, record_steps=[0, 40]
    )
    for b, s in enumerate(sets):
        X, y = s.torch()
        one = gradient_descent(
            net, W0[b], X, y, loss="exp", lr=0.1, steps=40, normalized=True, record_steps=[0, 40]
        )
        torch.testing.assert_close(res.W[b], one.W, rtol=1e-12, atol=1e-14)
