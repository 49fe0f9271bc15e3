"""The trainer's gaps found by a review of the tests, each with a case where the answer is
"no": recorded margins are those of the step's own W (a trainer recording the previous step's
margins fails here), the float32 path, per-configuration data sets with plain gradient descent
and the logistic loss, divergence named by step and quantity, and a DivergenceError raised
from a user metric."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from twolayer.paper_a import data, models, trainer
from twolayer.paper_a.trainer import DivergenceError, gradient_descent

F64 = torch.float64


def _problem(n=8, d=20, seed=0, B=3):
    net = models.LeakyNetwork(3, 2, "leaky_relu", gamma=0.3)
    X, y = data.nearly_orthogonal(n, d, seed).torch()
    W0 = net.init(d, torch.tensor([0.05, 0.2, 1.0][:B], dtype=F64), seed=seed + 1, batch=B)
    return net, X, y, W0


def _replay(net, W0, X, y, steps, lr, loss="logistic", normalized=False):
    """Plain Python gradient descent from the closed-form gradient: the W of every step."""
    Ws = [W0.clone()]
    W = W0.clone()
    for _ in range(steps):
        _, _, G = net.loss_and_grad(W, X, y, trainer.get_loss(loss), normalized=normalized)
        W = W - lr * G
        Ws.append(W.clone())
    return Ws


@pytest.mark.parametrize("normalized", [False, True])
def test_recorded_margins_and_loss_are_those_of_the_steps_own_weights(normalized):
    net, X, y, W0 = _problem()
    steps = 12
    res = gradient_descent(
        net,
        W0,
        X,
        y,
        loss="logistic",
        lr=0.5,
        steps=steps,
        normalized=normalized,
        record_steps=list(range(steps + 1)),
        metrics={"W": lambda W: W.reshape(W.shape[0], -1).clone()},
    )
    Ws = _replay(net, W0, X, y, steps, 0.5, normalized=normalized)
    loss = trainer.get_loss("logistic")
    for t in range(steps + 1):
        W_t = torch.as_tensor(res.history["W"][t]).reshape(W0.shape)
        torch.testing.assert_close(W_t, Ws[t], rtol=1e-10, atol=1e-12)
        q = net.margins(Ws[t], X, y)
        np.testing.assert_allclose(
            res.history["min_margin"][t], q.min(-1).values.numpy(), rtol=1e-10, atol=1e-12
        )
        np.testing.assert_allclose(
            res.history["loss"][t], loss.empirical_risk(q).numpy(), rtol=1e-10
        )
    # the margins move from step to step, so the previous step's would not pass the above
    mm = res.history["min_margin"]
    assert np.all(np.abs(np.diff(mm, axis=0)) > 1e-6)


def test_a_trainer_recording_the_previous_steps_margins_is_caught():
    """The check above, applied to the history of a deliberately wrong trainer, says no."""
    net, X, y, W0 = _problem()
    res = gradient_descent(net, W0, X, y, lr=0.5, steps=6, record_steps=list(range(7)))
    Ws = _replay(net, W0, X, y, 6, 0.5)
    shifted = np.concatenate([res.history["min_margin"][:1], res.history["min_margin"][:-1]])
    right = [net.margins(W, X, y).min(-1).values.numpy() for W in Ws]
    assert not all(np.allclose(shifted[t], right[t], rtol=1e-10) for t in range(7))


def test_float32_path_follows_float64():
    net, X, y, W0 = _problem()
    r64 = gradient_descent(net, W0, X, y, loss="exp", lr=0.2, steps=50, record_steps=[0, 25, 50])
    r32 = gradient_descent(
        net, W0.float(), X, y, loss="exp", lr=0.2, steps=50, record_steps=[0, 25, 50]
    )
    assert r32.W.dtype == torch.float32 and r32.W.shape == W0.shape
    assert r32.history["loss"].dtype == np.float32
    # 50 steps of float32 rounding (eps 6e-8) stay far below 1e-4 relative; float32 is not
    # float64 (the comparison would pass trivially if the trainer silently upcast)
    torch.testing.assert_close(r32.W.double(), r64.W, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        r32.history["min_margin"], r64.history["min_margin"], rtol=1e-4, atol=1e-6
    )
    assert not torch.equal(r32.W.double(), r64.W)


@pytest.mark.parametrize("loss", ["logistic", "exp"])
def test_per_configuration_data_sets_plain_gd_equal_separate_runs(loss):
    """X of shape (B, n, d) with normalized=False (the batched baddbmm path)."""
    net = models.LeakyNetwork(2, 3, "leaky_relu", 0.5)
    sets = [data.nearly_orthogonal(6, 30, seed=k) for k in range(3)]
    Xb = torch.as_tensor(np.stack([s.X for s in sets]))
    yb = torch.as_tensor(np.stack([s.y for s in sets]))
    W0 = net.init(30, 0.1, seed=0, batch=3)
    lr = torch.tensor([0.05, 0.1, 0.3], dtype=F64)
    res = gradient_descent(net, W0, Xb, yb, loss=loss, lr=lr, steps=30, record_steps=[0, 10, 30])
    for b, s in enumerate(sets):
        X, y = s.torch()
        one = gradient_descent(
            net, W0[b], X, y, loss=loss, lr=float(lr[b]), steps=30, record_steps=[0, 10, 30]
        )
        torch.testing.assert_close(res.W[b], one.W, rtol=1e-12, atol=1e-14)
        for k in ("loss", "min_margin"):
            np.testing.assert_allclose(res.history[k][:, b], one.history[k], rtol=1e-12)
    # and the data sets differ: training on the first set only would give other weights
    wrong = gradient_descent(net, W0, Xb[0], yb[0], loss=loss, lr=lr, steps=30, record_steps=[30])
    assert not torch.allclose(wrong.W[1], res.W[1])


def _xor_like(seed=0):
    # two copies of each point with opposite labels: no network can fit it, so a huge step
    # cannot be rescued by separating the data after one step
    ds = data.nearly_orthogonal(n=4, d=20, seed=seed)
    X = torch.as_tensor(ds.X).repeat(2, 1)
    y = torch.as_tensor(ds.y).repeat(2) * torch.tensor([1.0] * 4 + [-1.0] * 4, dtype=F64)
    return X, y


def test_huge_step_stops_with_divergence_message():
    X, y = _xor_like()
    net = models.LeakyNetwork(2, 2, "leaky_relu", 0.5)
    W0 = net.init(20, 1.0, seed=0)
    with pytest.raises(DivergenceError) as err:
        gradient_descent(net, W0, X, y, loss="exp", lr=1e6, steps=200)
    e = err.value
    # the trainer reports the loss (non-finite, or grown past max_loss_growth), never a gradient
    assert e.step >= 1 and e.config == 0 and e.quantity.startswith("loss"), e.quantity
    assert f"step {e.step}" in str(e) and "loss" in str(e) and "lower the step size" in str(e)


def test_injected_nan_stops_at_step_zero():
    X, y = _xor_like()
    net = models.LeakyNetwork(2, 2, "leaky_relu", 0.5)
    W0 = net.init(20, 1.0, seed=0, batch=3)
    W0[1, 0, 0] = float("nan")
    with pytest.raises(DivergenceError) as err:
        gradient_descent(net, W0, X, y, loss="logistic", lr=0.1, steps=10)
    assert err.value.step == 0 and err.value.config == 1 and err.value.quantity == "loss"
    assert "configuration 1" in str(err.value)


def test_divergence_from_a_user_metric_names_metric_step_and_configuration():
    net, X, y, W0 = _problem()

    def ratio(W):  # finite until step 3, then NaN in configuration 2 only
        out = torch.linalg.matrix_norm(W)
        if ratio.calls >= 3:
            out = out.clone()
            out[2] = float("nan")
        ratio.calls += 1
        return out

    ratio.calls = 0
    with pytest.raises(DivergenceError) as err:
        gradient_descent(
            net,
            W0,
            X,
            y,
            lr=0.1,
            steps=10,
            record_steps=list(range(11)),
            metrics={"fro_ratio": ratio},
        )
    e = err.value
    assert (e.step, e.config, e.quantity) == (3, 2, "fro_ratio") and np.isnan(e.value)
    assert "step 3" in str(e) and "fro_ratio" in str(e) and "configuration 2" in str(e)
    # a finite metric never raises: the same run with the metric fixed completes
    res = gradient_descent(
        net,
        W0,
        X,
        y,
        lr=0.1,
        steps=10,
        record_steps=list(range(11)),
        metrics={"fro": lambda W: torch.linalg.matrix_norm(W)},
    )
    assert res.history["fro"].shape == (11, 3) and np.all(np.isfinite(res.history["fro"]))


# --- edges found by mutation testing -------------------------------------------------------


def test_divergence_in_a_vector_metric_names_the_configuration_and_value():
    net, X, y, W0 = _problem()

    def svals(W):  # (B, k): NaN in configuration 1's second entry from step 2 on
        out = torch.linalg.svdvals(W)[:, :2].clone()
        if svals.calls >= 2:
            out[1, 1] = float("nan")
        svals.calls += 1
        return out

    svals.calls = 0
    with pytest.raises(DivergenceError) as err:
        gradient_descent(
            net, W0, X, y, lr=0.1, steps=5, record_steps=list(range(6)), metrics={"svals": svals}
        )
    e = err.value
    assert (e.step, e.config, e.quantity) == (2, 1, "svals") and np.isnan(e.value)


def test_loss_growth_bound_is_relative_to_the_first_loss():
    """The run stops as soon as L > max_loss_growth * L(0): a bound just below the largest
    growth a run reaches stops it, one just above lets it finish."""
    X, y = _xor_like()
    net = models.LeakyNetwork(2, 2, "leaky_relu", 0.5)
    W0 = net.init(20, 0.3, seed=1)
    free = gradient_descent(
        net,
        W0,
        X,
        y,
        loss="logistic",
        lr=30.0,
        steps=20,
        record_steps=list(range(21)),
        max_loss_growth=float("inf"),
    )
    growth = free.history["loss"].max() / free.history["loss"][0]
    assert growth > 2 and free.history["loss"][0] < 1  # logistic: L(0) < 1 here
    with pytest.raises(DivergenceError) as err:
        gradient_descent(
            net, W0, X, y, loss="logistic", lr=30.0, steps=20, max_loss_growth=0.9 * growth
        )
    assert err.value.quantity.startswith("loss (grew more than")
    assert err.value.value > 0.9 * growth * free.history["loss"][0]
    gradient_descent(
        net, W0, X, y, loss="logistic", lr=30.0, steps=20, max_loss_growth=1.1 * growth
    )


def test_loss_object_defaults_and_float_record_steps():
    net, X, y, W0 = _problem(B=1)
    a = gradient_descent(
        net, W0[0], X, y, loss=trainer.get_loss("exp"), lr=0.1, steps=5, record_steps=[0.0, 5.0]
    )
    b = gradient_descent(net, W0[0], X, y, loss="exp", lr=0.1, steps=5, record_steps=[0, 5])
    torch.testing.assert_close(a.W, b.W, rtol=0, atol=0)
    assert a.steps.dtype.kind == "i" and a.steps.tolist() == [0, 5]
    # the documented defaults: logistic loss, lr 0.1, 1000 steps, 50 log-spaced records
    d = gradient_descent(net, W0[0], X, y, progress=False)
    e = gradient_descent(
        net,
        W0[0],
        X,
        y,
        loss="logistic",
        lr=0.1,
        steps=1000,
        record_steps=trainer.log_spaced_steps(1000, 50),
        progress=False,
    )
    torch.testing.assert_close(d.W, e.W, rtol=0, atol=0)
    assert d.steps.tolist() == e.steps.tolist()


def test_non_contiguous_initial_weights():
    net, X, y, W0 = _problem()
    Wt = W0.transpose(1, 2).contiguous().transpose(1, 2)  # same values, other strides
    assert not Wt.is_contiguous()
    a = gradient_descent(net, Wt, X, y, lr=0.1, steps=5, record_steps=[5])
    b = gradient_descent(net, W0, X, y, lr=0.1, steps=5, record_steps=[5])
    torch.testing.assert_close(a.W, b.W, rtol=0, atol=0)


def test_log_spaced_steps_values():
    assert trainer.log_spaced_steps(100, num=2).tolist() == [0, 1, 100]
    assert trainer.log_spaced_steps(0).tolist() == [0]
    assert trainer.log_spaced_steps(1).tolist() == [0, 1]
    assert trainer.log_spaced_steps(10**6).tolist() == trainer.log_spaced_steps(10**6, 50).tolist()
    assert (
        len(trainer.log_spaced_steps(10**6)) == len(np.unique(np.geomspace(1, 1e6, 50).round())) + 1
    )
    with pytest.raises(ValueError, match="^steps must be non-negative$"):
        trainer.log_spaced_steps(-1)


@pytest.mark.parametrize("lr", [0.0, -1.0, float("inf"), float("nan")])
def test_bad_lr_message(lr):
    net, X, y, W0 = _problem()
    with pytest.raises(ValueError, match="^lr must be positive and finite$"):
        gradient_descent(net, W0, X, y, lr=lr, steps=1)
