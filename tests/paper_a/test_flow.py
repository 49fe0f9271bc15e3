"""Tests of twolayer.paper_a.flow: loss-normalized GD as a time change of gradient flow."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import torch

from twolayer.paper_a import data, flow, kkt, losses, models, trainer


def test_span_coordinates_preserve_inner_products():
    X = np.random.default_rng(0).standard_normal((5, 30))
    Xc, Q = flow.span_coordinates(X)
    assert (
        Xc.shape == (5, 5) and np.allclose(Xc @ Xc.T, X @ X.T) and np.allclose(Q.T @ Q, np.eye(5))
    )


def test_log_flow_time_is_riemann_sum():
    logL = np.log(np.array([[1.0], [0.5], [0.25]]))
    t = np.exp(flow.log_flow_time(logL, 0.1))
    assert t[0, 0] == 0 and np.allclose(t[1:, 0], [0.1, 0.1 + 0.2])


def test_log_flow_time_of_integer_float32_and_table_inputs():
    """``t_k = sum_{j<k} lr_b / L_jb`` in each column (configuration; steps down the first
    axis), against a direct sum (``math.fsum`` of ``lr_b e^{-log L_jb}``), to 1e-14 in
    ``log t``: for log-losses given as a list of ints, steps given in float32 (one per
    configuration, or one number; their values exactly, not their logarithm rounded to
    float32 again), and the same log-losses as a pandas table of a nullable integer dtype
    (which NumPy reads as an array of objects)."""
    import pandas as pd

    log_loss = [[0, 1], [-1, 3], [-2, -5], [2, 0]]

    def direct(lr):
        lr = np.broadcast_to(np.asarray(lr, dtype=np.float64), (2,))
        out = np.full((4, 2), -np.inf)
        for b in range(2):
            for k in range(1, 4):
                terms = [float(lr[b]) * math.exp(-log_loss[j][b]) for j in range(k)]
                out[k, b] = math.log(math.fsum(terms))
        return out

    lr32 = np.array([0.1, 0.3], dtype=np.float32)
    for lr in (lr32, np.float32(0.1), 2):
        np.testing.assert_allclose(flow.log_flow_time(log_loss, lr), direct(lr), rtol=0, atol=1e-14)
    table = pd.DataFrame(log_loss, dtype="Int64")
    assert np.asarray(table).dtype == object
    np.testing.assert_allclose(flow.log_flow_time(table, lr32), direct(lr32), rtol=0, atol=1e-14)


def test_normalized_flow_checkpoints_and_history():
    ds = data.constructed_gram(6, 6, seed=0, gamma=0.5)
    net = models.LeakyNetwork(2, 1, gamma=0.5)
    W0 = net.init(6, torch.tensor([1e-3, 1.0]), seed=0, batch=2)
    X, y = ds.torch()
    run = flow.normalized_flow(net, W0, X, y, loss="exp", lr=0.5, checkpoints=[10, 50])
    assert list(run.checkpoints) == [0, 10, 50] and run.W.shape == (3, 2, 3, 6)
    assert run.log_loss.shape == (51, 2) and np.all(np.diff(run.log_time[1:], axis=0) > 0)
    same = trainer.gradient_descent(
        net, W0, X, y, loss="exp", lr=0.5, steps=50, normalized=True, record_steps=[50]
    )
    assert torch.allclose(run.W[-1], same.W)  # segments change nothing
    step, t = run.first_below(math.log(2) / 6)
    assert np.all(step > 0) and np.all(np.isfinite(t))


def test_torch_loop_records_the_flow_time(monkeypatch):
    """The torch loop (here forced) returns ``log t_k`` with ``t_k = sum_{j<k} lr / L_j``, the
    gradient-flow time, summed here directly from its own recorded losses; and the NumPy loop's
    run of the same problem gives the same times to rounding."""
    ds = data.constructed_gram(6, 6, seed=0, gamma=0.5)
    net = models.LeakyNetwork(2, 1, gamma=0.5)
    W0 = net.init(6, torch.tensor([1e-3, 1.0]), seed=0, batch=2)
    X, y = ds.torch()
    fast = flow.normalized_flow(net, W0, X, y, loss="exp", lr=0.5, checkpoints=[12])
    monkeypatch.setattr(flow, "NUMPY_LOOP", False)
    run = flow.normalized_flow(net, W0, X, y, loss="exp", lr=0.5, checkpoints=[12])
    t = np.cumsum(0.5 / np.exp(run.log_loss[:-1]), axis=0)
    assert run.log_time.shape == (13, 2) and np.all(run.log_time[0] == -np.inf)
    np.testing.assert_allclose(run.log_time[1:], np.log(t), rtol=0, atol=1e-12)
    np.testing.assert_allclose(run.log_time[1:], fast.log_time[1:], rtol=0, atol=1e-10)


@pytest.mark.parametrize("checkpoints", [[], [-1, 3], [2, -4]])
def test_normalized_flow_rejects_checkpoints_that_are_not_step_numbers(checkpoints):
    ds = data.constructed_gram(4, 5, seed=0, gamma=0.5)
    net = models.LeakyNetwork(1, 1, gamma=0.5)
    X, y = ds.torch()
    W0 = net.init(5, torch.tensor([1e-3]), seed=0, batch=1)
    with pytest.raises(ValueError, match=r"^checkpoints must be non-negative step numbers$"):
        flow.normalized_flow(net, W0, X, y, loss="exp", lr=0.5, checkpoints=checkpoints)


LR_MESSAGE = "lr must be a positive number or one positive number per configuration"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"W0": torch.zeros(3, 5, dtype=torch.float64)}, "W0 must have shape (B, m, d)"),
        ({"lr": [[0.5, 0.5]]}, LR_MESSAGE),  # two dimensions
        ({"lr": [0.5, 0.5, 0.5]}, LR_MESSAGE),  # three steps for two configurations
        ({"lr": [0.5]}, LR_MESSAGE),  # one step in a list is not one for all
        ({"lr": [0.5, float("inf")]}, LR_MESSAGE),
        ({"lr": float("nan")}, LR_MESSAGE),
        ({"lr": 0.0}, LR_MESSAGE),
        ({"lr": [0.5, -0.1]}, LR_MESSAGE),
    ],
)
def test_normalized_flow_rejects_bad_weights_and_steps(kwargs, message):
    ds = data.constructed_gram(4, 5, seed=0, gamma=0.5)
    net = models.LeakyNetwork(1, 1, gamma=0.5)
    X, y = ds.torch()
    args = {"W0": net.init(5, torch.tensor([1e-3, 1.0]), seed=0, batch=2), "lr": 0.5, **kwargs}
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        flow.normalized_flow(net, args["W0"], X, y, loss="exp", lr=args["lr"], checkpoints=[2])


@pytest.mark.parametrize("numpy_loop", [True, False])
def test_normalized_flow_reads_its_inputs_as_given(numpy_loop, monkeypatch):
    """The same run, whether the loss is named or given as the loss object, the checkpoints as
    integers or as whole floats (the step numbers come back as integers), and ``W0`` as a
    contiguous tensor or as a transposed view of other memory (both loops)."""
    monkeypatch.setattr(flow, "NUMPY_LOOP", numpy_loop)
    ds = data.constructed_gram(4, 5, seed=0, gamma=0.5)
    net = models.LeakyNetwork(1, 1, gamma=0.5)
    X, y = ds.torch()
    W0 = net.init(5, torch.tensor([1e-2, 1.0]), seed=0, batch=2)
    ref = flow.normalized_flow(net, W0, X, y, loss="logistic", lr=0.5, checkpoints=[3, 8])
    view = W0.transpose(1, 2).contiguous().transpose(1, 2)  # same values, other strides
    assert not view.is_contiguous() and torch.equal(view, W0)
    runs = [
        flow.normalized_flow(
            net, W0, X, y, loss=losses.get_loss("logistic"), lr=0.5, checkpoints=[3, 8]
        ),
        # labels as a list of integers: read in W0's float64
        flow.normalized_flow(
            net, W0, X, [int(v) for v in y], loss="logistic", lr=0.5, checkpoints=[3, 8]
        ),
        flow.normalized_flow(net, W0, X, y, loss="logistic", lr=0.5, checkpoints=[8.0, 3.0]),
        flow.normalized_flow(net, view, X, y, loss="logistic", lr=0.5, checkpoints=[3, 8]),
    ]
    for run in runs:
        assert run.checkpoints.tolist() == [0, 3, 8] and run.checkpoints.dtype.kind == "i"
        assert torch.equal(run.W, ref.W) and np.array_equal(run.log_loss, ref.log_loss)
    # data given in float32 are read in W0's float64: the run of the same numbers in float64
    X32 = X.to(torch.float32)
    run = flow.normalized_flow(net, W0, X32, y, loss="logistic", lr=0.5, checkpoints=[3, 8])
    ref = flow.normalized_flow(net, W0, X32.double(), y, loss="logistic", lr=0.5, checkpoints=[8])
    assert run.W.dtype == torch.float64 and torch.equal(run.W[-1], ref.W[-1])
    # float32 weights: the data and labels are read in float32 too (the run of the float32
    # numbers)
    W32 = W0.to(torch.float32)
    run = flow.normalized_flow(net, W32, X, y, loss="logistic", lr=0.5, checkpoints=[3])
    ref = flow.normalized_flow(net, W32, X32, y.float(), loss="logistic", lr=0.5, checkpoints=[3])
    assert run.W.dtype == torch.float32 and torch.equal(run.W, ref.W)
    # one step per configuration, given as integers: the same run as with floats, and the
    # steps come back as floats
    ref = flow.normalized_flow(net, W0, X, y, loss="logistic", lr=[1.0, 2.0], checkpoints=[3])
    run = flow.normalized_flow(net, W0, X, y, loss="logistic", lr=[1, 2], checkpoints=[3])
    assert torch.equal(run.W, ref.W) and np.array_equal(run.log_time, ref.log_time)
    assert run.lr.dtype == np.float64 and run.lr.tolist() == [1.0, 2.0]


@pytest.mark.slow  # 2.5 s (conftest.SLOW_SECONDS)
def test_flow_converges_to_problem3_optimum():
    ds = data.constructed_gram(6, 6, seed=1, gamma=0.5)
    net = models.LeakyNetwork(2, 2, gamma=0.5)
    sol = kkt.solve_problem3(ds.X, ds.y, 2, 2, gamma=0.5)
    X, y = ds.torch()
    run = flow.normalized_flow(
        net, net.init(6, 0.01, seed=0, batch=1), X, y, loss="exp", lr=0.5, checkpoints=[200, 2000]
    )
    dists = []
    for k in (1, 2):
        W = run.W[k, 0]
        W = W / net.margins(W, X, y).min()
        dists.append(float(np.linalg.norm(W.numpy() - sol.W) / np.linalg.norm(sol.W)))
    assert dists[1] < dists[0] / 4 and dists[1] < 0.02  # the 1/s rate predicts a factor 10


def _problem(seed=1, n=6, m1=2, m2=2, gamma=0.5):
    ds = data.constructed_gram(n, n, seed=seed, gamma=gamma)
    net = models.LeakyNetwork(m1, m2, gamma=gamma)
    sol = kkt.solve_problem3(ds.X, ds.y, m1, m2, gamma=gamma)
    return ds, net, sol


def test_normalized_flow_matches_trainer_per_configuration_steps_and_data():
    ds, net, _ = _problem()
    X, y = ds.torch()
    Xb = torch.stack([X, 2 * X])
    yb = torch.stack([y, y])
    W0 = net.init(6, 0.1, seed=2, batch=2)
    lr = np.array([0.5, 0.125])
    run = flow.normalized_flow(net, W0, Xb, yb, loss="logistic", lr=lr, checkpoints=[30])
    ref = trainer.gradient_descent(
        net,
        W0,
        Xb,
        yb,
        loss="logistic",
        lr=torch.as_tensor(lr),
        steps=30,
        normalized=True,
        record_steps=np.arange(31),
    )
    assert torch.allclose(run.W[-1], ref.W, rtol=1e-12, atol=1e-14)
    assert np.allclose(run.log_loss, ref.history["log_loss"], rtol=1e-12)
    assert run.s.shape == (2, 2) and np.allclose(run.s[-1], 30 * lr)
    with np.testing.assert_raises(ValueError):
        flow.normalized_flow(net, W0, Xb, yb, loss="exp", lr=np.array([0.5, -1.0]), checkpoints=[3])


def test_continue_flow_equals_one_run():
    ds, net, _ = _problem()
    X, y = ds.torch()
    W0 = net.init(6, 0.3, seed=0, batch=2)
    one = flow.normalized_flow(net, W0, X, y, loss="exp", lr=0.5, checkpoints=[10, 40])
    two = flow.continue_flow(
        flow.normalized_flow(net, W0, X, y, loss="exp", lr=0.5, checkpoints=[10]),
        net,
        X,
        y,
        loss="exp",
        checkpoints=[5, 40],
    )  # 5 <= 10 is ignored
    assert list(two.checkpoints) == [0, 10, 40]
    assert torch.allclose(one.W, two.W) and np.allclose(one.log_time[1:], two.log_time[1:])
    assert flow.continue_flow(one, net, X, y, loss="exp", checkpoints=[20]) is one  # nothing to add


def test_steps_for_tolerance():
    # deviations 0.1 at step 100, falling like 1/s: 0.01 / 2 is reached at step 2000
    assert flow.steps_for_tolerance([0.05, 0.1], 0.01, 100) == 2000
    # already below tol / factor: no extension (the answer is "no more steps")
    assert flow.steps_for_tolerance([0.001], 0.01, 100) == 100
    assert flow.steps_for_tolerance(np.array([[0.1], [0.02]]), np.array([[0.1], [0.01]]), 10) == 40
    with np.testing.assert_raises(ValueError):
        flow.steps_for_tolerance([np.nan], 0.01, 100)


def test_steps_for_tolerance_factor_empty_inputs_and_messages():
    """``ceil(steps * factor * max(dev / tol))``, at least ``steps``, by hand: 0.1 at step 100
    reaches 0.01 / factor at step 1000 with ``factor = 1`` and 500 with ``factor = 1/2`` (any
    positive factor is accepted: below 1 trusts a rate faster than ``1/s``); no deviation
    asks for no more steps; the deviations and tolerances are read as numbers (numeric strings,
    fractions, decimals); NaN deviations and non-positive tolerances or factors are refused."""
    assert flow.steps_for_tolerance([0.1], 0.01, 100, factor=1) == 1000
    assert flow.steps_for_tolerance([0.1], 0.01, 100, factor=0.5) == 500
    assert flow.steps_for_tolerance([], 0.01, 100) == 100
    assert flow.steps_for_tolerance(np.zeros((0, 3)), [0.1, 0.2, 0.3], 7, factor=3.0) == 7
    assert flow.steps_for_tolerance(["0.05", "0.1"], "0.01", 100) == 2000
    exact = [Fraction(1, 20), Fraction(1, 10)]
    assert flow.steps_for_tolerance(exact, Decimal("0.01"), 100) == 2000
    nan_msg = "a deviation is NaN: the run does not separate every training set"
    with pytest.raises(ValueError, match=rf"^{re.escape(nan_msg)}$"):
        flow.steps_for_tolerance([0.1, np.nan], 0.01, 100)
    msg = "^tolerances and factor must be positive$"
    for tol, factor in [(0.0, 2.0), (-0.01, 2.0), ([0.01, 0.0], 2.0), (0.01, 0.0), (0.01, -1.0)]:
        with pytest.raises(ValueError, match=msg):
            flow.steps_for_tolerance([0.1, 0.1], tol, 100, factor)


def test_flow_to_tolerance_reaches_tol_from_the_measured_rate():
    ds, net, sol = _problem()
    X, y = ds.torch()
    Xt = np.random.default_rng(0).standard_normal((200, 6))
    W0 = net.init(6, 1.0, seed=0, batch=2)

    def dev(W):
        return kkt.deviations(net, W, ds.X, ds.y, sol=sol, X_test=Xt)["dist_to_convex"]

    run, total = flow.flow_to_tolerance(
        net, W0, X, y, loss="exp", lr=0.5, steps=200, deviations=dev, tolerances=0.01
    )
    assert total > 200 and run.checkpoints[-1] == total
    assert np.all(dev(run.W[-1]) <= 0.01)
    # a loose tolerance needs no extension
    run2, total2 = flow.flow_to_tolerance(
        net, W0, X, y, loss="exp", lr=0.5, steps=200, deviations=dev, tolerances=0.4
    )
    assert total2 == 200 and run2.checkpoints[-1] == 200


def test_rate_slopes():
    s = np.geomspace(1, 1000, 30)
    v = np.stack([3 / s, np.full_like(s, 0.2)], axis=1)
    sl = flow.rate_slopes(s, v)
    assert abs(sl[0] + 1) < 1e-12 and abs(sl[1]) < 1e-12  # a constant is not a 1/s rate
    assert np.isnan(flow.rate_slopes(np.array([1.0, 10.0]), np.array([0.1, 0.01]), 0.1))


def test_settled_below_and_first_below():
    log_loss = np.log(np.array([[1.0, 1.0], [0.1, 1.0], [0.5, 1.0], [0.1, 1.0]]))
    run = flow.FlowRun(
        np.array([0]), torch.zeros(1, 2, 1, 1), log_loss, flow.log_flow_time(log_loss, 1.0), 1.0
    )
    step, t = run.settled_below(0.2)
    assert list(step) == [3, -1] and np.isinf(t[1])  # the second never gets there
    first, _ = run.first_below(0.2)
    assert list(first) == [1, -1]


def test_distance_history_and_normalization():
    ds, net, sol = _problem()
    X, y = ds.torch()
    W0 = torch.stack([torch.as_tensor(3 * sol.W), -torch.as_tensor(sol.W)])
    run = flow.FlowRun(np.array([0]), W0[None], np.zeros((1, 2)), np.zeros((1, 2)), 1.0)
    dist = flow.distance_history(run, net, ds.X, ds.y, W_star=sol.W)
    assert dist.shape == (1, 2) and dist[0, 0] < 1e-7 and np.isnan(dist[0, 1])


def test_certify_run_skips_checkpoints_that_do_not_separate():
    ds, net, sol = _problem()
    X, y = ds.torch()
    z_star, _ = kkt.max_margin_separator(ds.X, ds.y)
    W0 = -torch.as_tensor(sol.W)[None]  # every margin is -1 at the start
    run = flow.normalized_flow(net, W0, X, y, loss="exp", lr=0.5, checkpoints=[200])
    Xt = np.random.default_rng(0).standard_normal((100, 6))
    table = flow.certify_run(run, net, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    assert list(table.step) == [200] and table.dist_to_convex.iloc[0] < 0.1


def test_phase_diagram_certifies_where_the_assumption_holds():
    net = models.LeakyNetwork(2, 2, gamma=0.9)
    dims = {4: [4, 10**8]}
    tab = flow.phase_diagram(
        net, [4], dims, 1, loss="exp", init_scale=1.0, steps=300, tol=0.05, n_test=500, seed=0
    )
    hi = tab[tab.d == 10**8].iloc[0]
    lo = tab[tab.d == 4].iloc[0]
    assert hi.holds and hi["all items"] and hi.steps >= 300
    assert not lo.holds  # d = n: far outside the assumption
    assert flow.first_dimension(tab, "holds") == {4: 10**8}


def test_first_dimension():
    import pandas as pd

    tab = pd.DataFrame(
        {"n": [4] * 6, "d": [1, 1, 10, 10, 100, 100], "ok": [True, True, False, True, True, True]}
    )
    assert flow.first_dimension(tab, "ok") == {4: 100.0}
    tab.loc[5, "ok"] = False  # the largest d fails: no such dimension
    assert np.isnan(flow.first_dimension(tab, "ok")[4])


def test_initializations_layout_and_scale():
    net = models.LeakyNetwork(2, 1, gamma=0.5)
    W = flow.initializations(net, 5, 100, 2.0, mults=[0.1, 1.0], directions=3, seed=4)
    assert W.shape == (6, 3, 5)
    # run b is direction b // 2 at scale mults[b % 2]: same direction, ten times larger
    assert torch.allclose(W[1], 10 * W[0]) and not torch.allclose(W[2], 10 * W[0])
    big = flow.initializations(net, 5, 100, 2.0, mults=[1.0], directions=2000, seed=0)
    assert abs(float(big.std()) - 2.0 / math.sqrt(100)) < 0.01  # N(0, scale^2/d)


def test_deviation_function_rows():
    ds, net, sol = _problem()
    Xt = np.random.default_rng(0).standard_normal((50, 6))
    dev = flow.deviation_function(net, ds.X, ds.y, sol, X_test=Xt, kkt_residual=True)
    W = torch.stack([torch.as_tensor(2 * sol.W), torch.as_tensor(sol.W + 0.1)])
    out = dev(W)
    assert out.shape == (len(kkt.DEVIATIONS) + 1, 2)
    assert np.all(out[:, 0] < 1e-6) and np.all(out[[3, 5], 1] > 1e-3)  # the optimum, and not


def test_leak_sweep_converges_and_reports_item7():
    table, curves = flow.leak_sweep(
        6,
        6,
        [(1, 1), (1, 2)],
        [0.5, 1.0],
        gap=0.9,
        loss="exp",
        init_scale=1.0,
        steps=200,
        tol=0.05,
        n_test=200,
        seed=0,
    )
    assert len(table) == 4 and set(curves) == {(g, 1, m) for g in (0.5, 1.0) for m in (1, 2)}
    assert (table.deviation <= 0.05).all() and (table.ratio <= 1).all()
    assert (table.wstar_z_ratio <= table.z_bound + 1e-7).all()
    linear = table[(table.gamma == 1.0) & (table.m2 == 1)].iloc[0]
    assert abs(linear.wstar_z_ratio - 1) < 1e-6  # gamma = 1, m1 = m2: z is z*, bound 1


@pytest.mark.parametrize("loss", ["exp", "logistic"])
def test_numpy_loop_agrees_with_the_torch_loop(loss, monkeypatch):
    ds, net, _ = _problem()
    X, y = ds.torch()
    W0 = net.init(6, torch.tensor([0.01, 1.0, 30.0]), seed=5, batch=3)
    fast = flow.normalized_flow(net, W0, X, y, loss=loss, lr=0.5, checkpoints=[7, 300])
    monkeypatch.setattr(flow, "NUMPY_LOOP", False)
    slow = flow.normalized_flow(net, W0, X, y, loss=loss, lr=0.5, checkpoints=[7, 300])
    ref = trainer.gradient_descent(
        net, W0, X, y, loss=loss, lr=0.5, steps=300, normalized=True, record_steps=[300]
    )
    assert torch.equal(slow.W[-1], ref.W)  # the torch loop is the trainer's update exactly
    assert torch.allclose(fast.W, slow.W, rtol=1e-12, atol=0)
    assert np.allclose(fast.log_loss, slow.log_loss, rtol=1e-12, atol=1e-12)
    # a single step comes back as a number (FlowRun.lr: a float, or an array of one per
    # configuration), as from the torch loop
    assert isinstance(fast.lr, float) and isinstance(slow.lr, float) and fast.lr == 0.5


@pytest.mark.parametrize("numpy_loop", [True, False])
def test_flow_step_is_the_autograd_step_of_log_loss(numpy_loop, monkeypatch):
    """One step of the NumPy loop is ``W_b - lr_b grad log L_b(W_b)`` in every configuration,
    with ``grad log L`` from autograd (``log L = logsumexp(-q) - log n``, the exponential
    loss, ``a = (1, -1)/sqrt 2``): for one data set per configuration ``(B, n, d)``, one step
    per configuration, real labels of several magnitudes (the margins are ``y_i f(x_i)``, so
    the gradient carries ``y_i``, not ``1/y_i``), and a configuration whose loss is over 600
    orders of magnitude below the others' (each ``log L`` is its own log-sum-exp)."""
    rng = np.random.default_rng(3)
    B, n, d, gamma = 3, 4, 6, 0.5
    net = models.LeakyNetwork(1, 1, gamma=gamma)
    X = rng.standard_normal((B, n, d))
    y = rng.choice([-1.0, 1.0], (B, n)) * rng.uniform(0.5, 2.0, (B, n))
    W0 = 0.5 * rng.standard_normal((B, 2, d))
    # configuration 1: w_1 = -w_2 = 3000 z with <z, x_i> = sign(y_i), so every margin is
    # 3000 (1 + gamma) |y_i| / sqrt 2 > 1500: L_1 < e^-1500, next to L_0, L_2 ~ 1
    z = np.linalg.pinv(X[1]) @ np.sign(y[1])
    W0[1] = 3000 * np.stack([z, -z])
    lr = np.array([0.5, 0.25, 2.0])
    Wt, Xt, yt = torch.as_tensor(W0), torch.as_tensor(X), torch.as_tensor(y)
    monkeypatch.setattr(flow, "NUMPY_LOOP", numpy_loop)
    assert flow._numpy_ok(net, losses.get_loss("exp"), Wt, Xt)
    run = flow.normalized_flow(net, Wt, Xt, yt, loss="exp", lr=lr, checkpoints=[1])
    one = flow.normalized_flow(net, Wt, Xt, yt, loss="exp", lr=0.25, checkpoints=[1])

    W = Wt.clone().requires_grad_(True)
    a = torch.tensor([1.0, -1.0], dtype=torch.float64) / math.sqrt(2)
    q = yt * (a @ torch.nn.functional.leaky_relu(W @ Xt.transpose(-1, -2), gamma))
    log_L = torch.logsumexp(-q, dim=-1) - math.log(n)
    (grad,) = torch.autograd.grad(log_L.sum(), W)
    q, log_L = q.detach(), log_L.detach()
    assert float(q[1].min()) > 1500 and float(log_L[1]) < -1500
    np.testing.assert_allclose(run.log_loss[0], log_L.numpy(), rtol=1e-13)
    expected = W0 - lr[:, None, None] * grad.numpy()
    np.testing.assert_allclose(run.W[1].numpy(), expected, rtol=1e-12, atol=1e-12)
    # one step for every configuration (a number, not a list)
    np.testing.assert_allclose(one.W[1].numpy(), W0 - 0.25 * grad.numpy(), rtol=1e-12, atol=1e-12)


def test_numpy_loop_takes_phi_prime_one_at_the_kink():
    """Where ``<w_j, x_i> = 0`` exactly, the step takes ``phi'(0) = 1`` (the convention of
    :func:`twolayer.paper_a.activations.leaky_relu_grad`, which the torch loop uses): one
    step by hand from ``W`` with both rows orthogonal to ``x_1 = e_1`` (``x_2 = e_2``,
    labels 1, exponential loss), ``w_j + lr a_j sum_i s_i y_i phi'(<w_j, x_i>) x_i`` with
    ``s = softmax(-q)``."""
    gamma, lr = 0.5, 0.5
    net = models.LeakyNetwork(1, 1, gamma=gamma)
    X = torch.eye(2, dtype=torch.float64)
    y = torch.ones(2, dtype=torch.float64)
    W0 = torch.tensor([[[0.0, 1.0], [0.0, -1.0]]], dtype=torch.float64)
    run = flow.normalized_flow(net, W0, X, y, loss="exp", lr=lr, checkpoints=[1])
    # q_1 = f(x_1) = 0 (both neurons at the kink), q_2 = (phi(1) - phi(-1)) / sqrt 2
    q2 = (1 + gamma) / math.sqrt(2)
    s1, s2 = 1 / (1 + math.exp(-q2)), math.exp(-q2) / (1 + math.exp(-q2))
    r = lr / math.sqrt(2)
    expected = [[r * s1, 1 + r * s2], [-r * s1, -1 - gamma * r * s2]]
    np.testing.assert_allclose(run.W[1, 0].numpy(), expected, rtol=1e-14, atol=1e-15)
    assert run.log_loss[0, 0] == pytest.approx(math.log((1 + math.exp(-q2)) / 2), rel=1e-14)


@pytest.mark.filterwarnings("ignore:(overflow|invalid value) encountered:RuntimeWarning")
@pytest.mark.parametrize("numpy_loop", [True, False])
def test_flow_reports_the_first_configuration_that_diverged(numpy_loop, monkeypatch):
    """Configurations 1 and 2 take a step of 1e308 from ``W = 0`` on the single point
    ``x = (2, 2)`` (label 1): by hand, step 0 has ``q = 0``, so ``W_1 = 1e308 a_j x`` (entries
    ``+-1.41e308``, finite) whose pre-activations ``+-5.7e308`` overflow: at step 1 the loss
    is not finite while the weights are; at step 2 the weights are NaN, and so is the loss.
    The error names the checkpoint, the first configuration that diverged (not the healthy
    configuration 0 before it, nor configuration 2 after it) and its loss; the NumPy loop and
    the torch loop (the trainer's update) report the same."""
    monkeypatch.setattr(flow, "NUMPY_LOOP", numpy_loop)
    net = models.LeakyNetwork(1, 1, gamma=0.5)
    X = torch.tensor([[2.0, 2.0]], dtype=torch.float64)
    y = torch.ones(1, dtype=torch.float64)
    W0 = torch.zeros(3, 2, 2, dtype=torch.float64)
    W0[0] = torch.tensor([[0.3, -0.1], [0.2, 0.4]])
    lr = np.array([0.5, 1e308, 1e308])
    w1 = 1e308 * math.sqrt(2)  # 1e308 a_1 x_1 = 1e308 * 2 / sqrt 2
    assert math.isfinite(w1) and math.isinf(2 * w1 * 2)  # finite weights, overflowing w.x
    assert flow._numpy_ok(net, losses.get_loss("exp"), W0, X)
    healthy = flow.normalized_flow(net, W0[:1], X, y, loss="exp", lr=0.5, checkpoints=[5])
    assert np.all(np.isfinite(healthy.log_loss)) and bool(torch.isfinite(healthy.W).all())
    for checkpoints, step in (([1], 1), ([5], 5)):  # a divergence is seen at a checkpoint
        with pytest.raises(trainer.DivergenceError) as info:
            flow.normalized_flow(net, W0, X, y, loss="exp", lr=lr, checkpoints=checkpoints)
        err = info.value
        assert (err.step, err.quantity, err.config) == (step, "loss or weights", 1)
        assert not math.isfinite(err.value)
        assert step == 1 or math.isnan(err.value)  # NaN weights: NaN loss
        assert str(err).startswith(
            f"gradient descent diverged at step {step}: loss or weights = {err.value!r} in "
            "configuration 1;"
        )


def test_smoothed_activation_takes_the_torch_loop():
    ds, _, _ = _problem()
    X, y = ds.torch()
    net = models.LeakyNetwork(2, 2, phi="smoothed_leaky_relu", gamma=0.5)
    W0 = net.init(6, 0.3, seed=1, batch=2)
    run = flow.normalized_flow(net, W0, X, y, loss="logistic", lr=0.5, checkpoints=[50])
    ref = trainer.gradient_descent(
        net, W0, X, y, loss="logistic", lr=0.5, steps=50, normalized=True, record_steps=[50]
    )
    # no NumPy path for it: the dispatch says "torch", and the torch loop is the trainer's
    # update (the same operations; other shapes may round differently on other kernels, so to
    # rounding: 50 steps of a few ulp each, far below 1e-12)
    assert not flow._numpy_ok(net, losses.get_loss("logistic"), W0, X)
    torch.testing.assert_close(run.W[-1], ref.W, rtol=1e-12, atol=1e-14)


def test_rate_slopes_window_points_and_shapes():
    """The window is the last ``decades`` of ``s`` with its left end included, each column
    needs two finite positive points there, and a 1-D input gives a number."""
    # slope -2 up to s = 100, then -1: the last decade (the default) reads -1, a wider or a
    # narrower-based window would not
    s = np.geomspace(1, 1000, 301)
    v = np.where(s < 100, s**-2.0, 0.01 / s)
    assert flow.rate_slopes(s, v) == pytest.approx(-1.0, abs=1e-9)
    assert flow.rate_slopes(s, v, 2.0) < -1.2
    # the window's left end counts: two points exactly, a slope of -1
    sl = flow.rate_slopes(np.array([1.0, 10.0, 100.0, 1000.0]), np.array([1.0, 0.1, 0.01, 0.001]))
    assert np.ndim(sl) == 0 and sl == pytest.approx(-1.0, abs=1e-12)
    # s = 0 and values that are 0 or missing are left out, not logged
    whole = flow.rate_slopes(np.array([0.0, 1.0, 10.0]), np.array([1.0, 1.0, 0.1]), np.inf)
    assert whole == pytest.approx(-1.0, abs=1e-12)
    zero = flow.rate_slopes(np.array([10.0, 100.0, 1000.0]), np.array([0.0, 0.01, 0.001]), 2.0)
    assert zero == pytest.approx(-1.0, abs=1e-12)
    gap = flow.rate_slopes(np.array([10.0, 100.0, 1000.0]), [None, 0.01, 0.001], 2.0)
    assert gap == pytest.approx(-1.0, abs=1e-12)
    # (K, B) gives one slope per column, (K, 1) an array of one
    assert flow.rate_slopes(s, np.stack([v, v], axis=1)).shape == (2,)
    assert flow.rate_slopes(s, v[:, None]).shape == (1,)


def test_settled_and_first_below_read_the_right_step_and_time():
    """At the threshold itself a loss is not below it; a configuration below from step 0
    settles at step 0; each time is read from its own step and column."""
    thr = 0.2
    at, low, high = math.log(thr), math.log(0.1), math.log(1.0)
    log_loss = np.array(
        [
            [low, high, high],
            [low, at, low],
            [low, low, at],
        ]
    )
    log_time = np.log(np.arange(1, 10, dtype=float).reshape(3, 3) * 10.0)
    run = flow.FlowRun(np.array([0]), torch.zeros(1, 3, 1, 1), log_loss, log_time, 1.0)
    step, t = run.settled_below(thr)
    assert list(step) == [0, 2, -1]
    assert t[0] == pytest.approx(10.0) and t[1] == pytest.approx(80.0) and np.isinf(t[2])
    first, t1 = run.first_below(thr)
    assert list(first) == [0, 2, 1]
    assert list(t1) == pytest.approx([10.0, 80.0, 60.0])


def test_span_coordinates_rank_zero_one_and_deficient_data():
    """``Q`` has ``r = rank X`` columns: a single point ``(3, 4)`` spans the line of ``(0.6,
    0.8)`` (``X Q = +-5``), a zero data set spans nothing (``r = 0``), and three points of
    rank 2 in ``R^4`` (``x_3 = x_1 + x_2``) give two coordinates; float32 data come back in
    float64."""
    Xc, Q = flow.span_coordinates([[3, 4]])
    sign = np.sign(Q[0, 0])
    np.testing.assert_allclose(sign * Q, [[0.6], [0.8]], rtol=1e-15)
    np.testing.assert_allclose(sign * Xc, [[5.0]], rtol=1e-15)
    Xc, Q = flow.span_coordinates(np.zeros((2, 3)))
    assert Xc.shape == (2, 0) and Q.shape == (3, 0)
    X = np.array([[1.0, 2.0, 0.0, -1.0], [0.0, 1.0, 3.0, 1.0], [1.0, 3.0, 3.0, 0.0]])
    Xc, Q = flow.span_coordinates(X.astype(np.float32))  # these values are exact in float32
    assert Xc.shape == (3, 2) and Q.shape == (4, 2)
    assert Xc.dtype == np.float64 and Q.dtype == np.float64
    np.testing.assert_allclose(Q.T @ Q, np.eye(2), atol=1e-15)
    # every point lies in span Q (X = X Q Q^T) and inner products are kept
    np.testing.assert_allclose(Xc @ Q.T, X, atol=1e-14)
    np.testing.assert_allclose(Xc @ Xc.T, X @ X.T, atol=1e-13)
    # float32 input: Q is an orthonormal basis to float64 precision, not float32's
    Q32 = flow.span_coordinates(np.float32([[1.0, 2.0, 3.0]]))[1]
    assert abs(float(Q32[:, 0] @ Q32[:, 0]) - 1) < 1e-14


def test_span_coordinates_of_two_points_in_a_million_dimensions():
    """The coordinates exist for d far above n (their purpose): two orthogonal points
    ``(3, 4, 0, ...)`` and ``(0, 0, 5, 0, ...)`` in ``R^1000000`` have coordinates of norm 5 and
    inner product 0, and ``Q`` is ``d x 2`` (a ``d x d`` basis would need 8 TB)."""
    d = 1_000_000
    X = np.zeros((2, d))
    X[0, :2] = 3.0, 4.0
    X[1, 2] = 5.0
    Xc, Q = flow.span_coordinates(X)
    assert Q.shape == (d, 2) and Xc.shape == (2, 2)
    np.testing.assert_allclose(Xc @ Xc.T, [[25.0, 0.0], [0.0, 25.0]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(Xc @ Q.T, X, rtol=0, atol=1e-12)


def test_distance_history_worked_example():
    """Leaky ReLU ``gamma = 1/2``, ``a = (1, -1)/sqrt 2``, ``X = I_2``, labels 1, ``W* =
    [[1, 1], [-1, -1]]`` given as integers (``||W*|| = 2``). ``W = 3 W*`` has margins
    ``(3 + 3/2)/sqrt 2`` on both points, so ``W~ = (2 sqrt 2 / 3) W*`` and the distance is
    ``1 - 2 sqrt 2 / 3``. ``W = [[1, 0], [0, -1]]`` has margins ``1/sqrt 2`` and
    ``(1/2)/sqrt 2``, so ``W~ = 2 sqrt 2 W`` and ``||W~ - W*||^2 = 2 (2 sqrt 2 - 1)^2 + 2``."""
    net = models.LeakyNetwork(1, 1, gamma=0.5)
    X, y = np.eye(2), np.ones(2)
    W_star = [[1, 1], [-1, -1]]
    Ws = torch.tensor([[[3.0, 3.0], [-3.0, -3.0]], [[1.0, 0.0], [0.0, -1.0]]], dtype=torch.float64)
    expected = [1 - 2 * math.sqrt(2) / 3, math.sqrt(2 * (2 * math.sqrt(2) - 1) ** 2 + 2) / 2]
    run = flow.FlowRun(np.array([0]), Ws[None], np.zeros((1, 2)), np.zeros((1, 2)), 1.0)
    dist = flow.distance_history(run, net, X, y, W_star=W_star)
    assert dist.shape == (1, 2)
    np.testing.assert_allclose(dist[0], expected, rtol=1e-14)


def test_certify_run_rows_times_and_selection():
    """A hand-made run (steps 0, 3, 7 at step ``lr = 1/4``; gradient-flow time ``t = 10^(k +
    2b)`` at step ``k`` of configuration ``b``) whose weights are multiples of Problem (3)'s
    optimum ``W*``: ``0`` (every margin 0: not separated, skipped), ``W*/2`` (smallest margin
    1/2: separated), ``-W*`` (skipped), ``2 W*``, ``W*``, ``3 W*``. Kept rows: one per
    separated checkpoint and configuration, with ``s = k/4`` and ``log10_t = k + 2b``; each
    certificate is that of ``W*`` (``dist_to_convex ~ 0``, ``z_ratio = ||z(W*)|| / ||z*||``
    for the ``z*`` given). ``every_checkpoint=False`` keeps the last checkpoint, ``configs``
    the configurations asked for."""
    ds, net, sol = _problem()
    z_star, _ = kkt.max_margin_separator(ds.X, ds.y)
    Xt = np.random.default_rng(0).standard_normal((50, 6))
    Wstar = torch.as_tensor(sol.W)
    W = torch.stack(
        [
            torch.stack([0 * Wstar, Wstar / 2]),
            torch.stack([-Wstar, 2 * Wstar]),
            torch.stack([Wstar, 3 * Wstar]),
        ]
    )
    log_time = np.log(10.0) * (np.arange(8)[:, None] + 2 * np.arange(2)[None, :])
    run = flow.FlowRun(np.array([0, 3, 7]), W, np.zeros((8, 2)), log_time, 0.25)

    def table(**kwargs):
        return flow.certify_run(run, net, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt, **kwargs)

    full = table()
    assert list(zip(full.config, full.step, strict=True)) == [(1, 0), (1, 3), (0, 7), (1, 7)]
    np.testing.assert_allclose(full.s, [0.0, 0.75, 1.75, 1.75], rtol=0, atol=0)
    np.testing.assert_allclose(full.log10_t, [2.0, 5.0, 7.0, 9.0], rtol=1e-14)
    assert (full.dist_to_convex < 1e-6).all()
    z_ratio = np.linalg.norm(sol.z) / np.linalg.norm(z_star)
    np.testing.assert_allclose(full.z_ratio, z_ratio, rtol=1e-6)
    last = table(every_checkpoint=False)
    assert list(zip(last.config, last.step, strict=True)) == [(0, 7), (1, 7)]
    ones = table(configs=[1])
    assert list(zip(ones.config, ones.step, strict=True)) == [(1, 0), (1, 3), (1, 7)]
    zero_last = table(configs=[0], every_checkpoint=False)
    assert list(zip(zero_last.config, zero_last.step, strict=True)) == [(0, 7)]


def test_deviation_function_without_kkt_residual_by_default():
    """By default the rows are the items of ``kkt.DEVIATIONS`` only, equal to
    ``kkt.deviations`` row by row (the KKT residual is an extra row on request)."""
    ds, net, sol = _problem()
    Xt = np.random.default_rng(0).standard_normal((50, 6))
    W = torch.stack([torch.as_tensor(2 * sol.W), torch.as_tensor(sol.W + 0.1)])
    out = flow.deviation_function(net, ds.X, ds.y, sol, X_test=Xt)(W)
    dev = kkt.deviations(net, W, ds.X, ds.y, sol=sol, X_test=Xt)
    assert out.shape == (len(kkt.DEVIATIONS), 2)
    np.testing.assert_array_equal(out, np.stack([dev[key] for key in kkt.DEVIATIONS]))
