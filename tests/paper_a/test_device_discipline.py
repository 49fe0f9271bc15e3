"""Device discipline of Paper A's trainer, tested without a GPU.

* A training step runs on PyTorch's ``meta`` device, where every host synchronisation raises
  (``.item()``, ``bool(tensor)``, ``.cpu()``, ``.numpy()``: a meta tensor has no data). A guard
  (:class:`twolayer.core.device.DeviceGuard`, a ``TorchDispatchMode``) also fails on every
  operator that mixes devices, copies between devices or reads a scalar, which ``meta`` alone
  does not catch (a matrix product of a meta and a CPU tensor does not raise).
* On the CPU the trainer gives the same bits as the trainer before the change (kept below as
  :func:`reference_gradient_descent`, which synchronised three times per step), including the
  :class:`DivergenceError`'s step, configuration, quantity and value.
* float32 works and follows float64 to float32 accuracy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from twolayer.core.device import DeviceGuard, default_device, where
from twolayer.paper_a import data, metrics, trainer
from twolayer.paper_a.losses import get_loss
from twolayer.paper_a.models import LeakyNetwork
from twolayer.paper_a.trainer import DivergenceError, gradient_descent, log_spaced_steps

F64, F32 = torch.float64, torch.float32
META = torch.device("meta")
ACTIVATIONS = ["leaky_relu", "smoothed_leaky_relu"]


# --- the trainer as it was (commit ab4c2c9): three host synchronisations per step ----------------


def reference_gradient_descent(
    net,
    W0,
    X,
    y,
    loss="logistic",
    lr=0.1,
    steps=1000,
    normalized=False,
    record_steps=None,
    metrics=None,
    max_loss_growth=1e8,
):
    loss = get_loss(loss) if isinstance(loss, str) else loss
    single = W0.ndim == 2
    W = (W0.unsqueeze(0) if single else W0).clone(memory_format=torch.contiguous_format)
    B, m, d = W.shape
    W_rows = W.view(B * m, d)
    X = X.to(dtype=W.dtype, device=W.device)
    y = y.to(dtype=W.dtype, device=W.device)
    lr_t = torch.as_tensor(lr, dtype=W.dtype, device=W.device)
    if lr_t.ndim == 1:
        lr_t = lr_t.reshape(B, 1, 1)
    rec = (
        log_spaced_steps(steps)
        if record_steps is None
        else np.unique(np.asarray(record_steps, int))
    )
    rec_set = {int(s) for s in rec}
    metrics = dict(metrics or {})
    hist = {k: [] for k in ["loss", "log_loss", "min_margin", *metrics]}

    def check(step, name, values):
        bad = ~torch.isfinite(values)
        if torch.any(bad):
            cfg = int(torch.nonzero(bad.reshape(B, -1).any(dim=1))[0])
            raise DivergenceError(
                step, name, float(values.reshape(B, -1)[cfg][bad.reshape(B, -1)[cfg]][0]), cfg
            )

    L0 = None
    n = X.shape[-2]
    shared_data = X.ndim == 2
    for t in range(steps + 1):
        L, logL, C, q = net.loss_and_coef(W, X, y, loss, normalized=normalized)
        check(t, "loss", L)
        if L0 is None:
            L0 = L.clone()
        grown = L > max_loss_growth * torch.clamp(L0, min=1e-300)
        if torch.any(grown):
            cfg = int(torch.nonzero(grown)[0])
            raise DivergenceError(
                t,
                f"loss (grew more than {max_loss_growth:g}x from {float(L0[cfg]):.3g})",
                float(L[cfg]),
                cfg,
            )
        if t in rec_set:
            check(t, "weights", W)
            hist["loss"].append(L.detach().cpu().numpy())
            hist["log_loss"].append(logL.detach().cpu().numpy())
            hist["min_margin"].append(q.min(dim=-1).values.cpu().numpy())
            for name, fn in metrics.items():
                v = fn(W)
                check(t, name, v)
                hist[name].append(v.detach().cpu().numpy())
        if t == steps:
            break
        if shared_data:
            W_rows.addmm_((C * lr_t).reshape(B * m, n), X)
        else:
            W.baddbmm_(C * lr_t, X)
    history = {k: np.stack(v) for k, v in hist.items()}
    if single:
        history = {k: v[:, 0] for k, v in history.items()}
        W = W[0]
    return W, rec, history


def meta_problem(
    B=4, m1=3, m2=2, n=6, d=7, dtype=F64, per_config_data=False, act="smoothed_leaky_relu"
):
    net = LeakyNetwork(m1, m2, act, 0.3)
    W = torch.empty(B, m1 + m2, d, device=META, dtype=dtype)
    X = torch.empty(*((B,) if per_config_data else ()), n, d, device=META, dtype=dtype)
    y = torch.empty(*((B,) if per_config_data else ()), n, device=META, dtype=dtype)
    return net, W, X, y


# --- the step on the meta device ------------------------------------------------------------------


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("loss_name", ["logistic", "exp"])
@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("per_config_data", [False, True])
@pytest.mark.parametrize("dtype", [F64, F32])
def test_step_runs_on_meta_without_host_reads(act, loss_name, normalized, per_config_data, dtype):
    net, W, X, y = meta_problem(dtype=dtype, per_config_data=per_config_data, act=act)
    lr_t = trainer._lr_tensor(torch.tensor([0.1, 0.2, 0.3, 0.4]), 4, dtype, META)
    run = trainer._Steps(net, W, X, y, get_loss(loss_name), lr_t, normalized, 1e8)
    run.evaluate(0)  # the first evaluation caches the second layer on the device
    run.update()
    with DeviceGuard(META) as guard:
        for t in range(1, 6):
            L, _, q = run.evaluate(t)
            run.update()
    assert L.device == META and L.shape == (4,) and q.shape[-1] == X.shape[-2]
    assert run.monitor.first_bad.device == META and run.monitor.bad_value.device == META
    # one step is a fixed, short program (no per-neuron or per-sample loop)
    assert 0 < len(guard.ops) / 5 < 80
    # ... and the divergence flag can only be read from the host, which meta forbids
    with pytest.raises((RuntimeError, NotImplementedError)):
        run.poll()


def test_guard_catches_what_meta_alone_misses():
    W = torch.empty(3, 4, device=META)
    with pytest.raises(AssertionError, match="on cpu"), DeviceGuard(META):
        W @ torch.zeros(4, 2)  # meta does not raise for this device mix
    with pytest.raises((AssertionError, RuntimeError)), DeviceGuard(META):
        bool(W.sum() > 0)


def test_whole_run_on_meta_reads_the_device_only_when_polling(monkeypatch):
    """The loop of gradient_descent (not only the step) is free of host reads: with the poll
    replaced by a counter and nothing recorded, a run on meta completes."""
    polls = []
    monkeypatch.setattr(trainer._Steps, "poll", lambda self: polls.append(1))
    net, W, X, y = meta_problem()
    res = gradient_descent(net, W, X, y, lr=0.1, steps=25, record_steps=[], check_every=10)
    assert res.W.device == META and res.steps.size == 0
    assert res.where() == {"device": "meta", "dtype": "float64"}
    assert len(polls) == 4  # steps 0, 10, 20 and the last one (25)
    assert res.history["loss"].shape == (0, 4)


def test_the_device_is_read_at_steps_0_k_2k_and_the_last(monkeypatch):
    """The documented schedule of host reads: every ``check_every`` steps counting from step 0
    (default 100), and at the last step; the poll is told apart by the step of the evaluation
    that precedes it."""
    seen, polls = [], []
    evaluate = trainer._Steps.evaluate

    def spy(self, t):
        seen.append(t)
        return evaluate(self, t)

    monkeypatch.setattr(trainer._Steps, "evaluate", spy)
    monkeypatch.setattr(trainer._Steps, "poll", lambda self: polls.append(seen[-1]))
    net, X, y, W = problem(B=1)  # on the CPU: 201 steps on meta take seconds
    gradient_descent(net, W, X, y, lr=0.1, steps=21, record_steps=[], check_every=10)
    assert polls == [0, 10, 20, 21]
    polls.clear()
    gradient_descent(net, W, X, y, lr=0.1, steps=201, record_steps=[])
    assert polls == [0, 100, 200, 201]


def test_second_layer_cached_per_device_and_dtype():
    net = LeakyNetwork(3, 2)
    w32 = torch.zeros(1, dtype=F32)
    a32 = net.a(w32)
    assert a32 is net.a(w32) and a32.dtype == F32  # no copy on later calls
    assert net.a(torch.zeros(1, dtype=F64)) is net.a()  # the float64 CPU original itself
    am = net.a(torch.empty(1, device=META))
    assert am.device == META and am is net.a(torch.empty(2, device=META))
    torch.testing.assert_close(a32.double(), net.a(), rtol=1e-7, atol=0)


def test_init_places_weights_on_the_device():
    net = LeakyNetwork(2, 2)
    W = net.init(5, torch.tensor([1.0, 2.0]), seed=0, batch=2, dtype=F32, device=META)
    assert W.device == META and W.dtype == F32 and W.shape == (2, 4, 5)


def test_metrics_follow_w_device_and_dtype():
    net = LeakyNetwork(2, 2)
    X, y = data.nearly_orthogonal(5, 8, seed=0).torch()  # CPU float64
    W = torch.empty(3, 4, 8, device=META, dtype=F32)
    Xm, ym = X.to(META, F32), y.to(META, F32)
    net.a(W)  # cache the second layer on the device
    with DeviceGuard(META):
        q = metrics.margins(net, W, Xm, ym)
        assert q.device == META and q.dtype == F32
        assert metrics.stable_rank(W).device == META
        assert metrics.normalized_margins(net, W, Xm, ym).device == META
    # CPU data given with device weights are moved once, outside any step
    assert metrics.margins(net, W, X, y).device == META


# --- CPU: the same bits as before -----------------------------------------------------------------


def problem(B=3, act="leaky_relu", n=8, d=20, seed=0):
    net = LeakyNetwork(3, 2, act, gamma=0.3)
    X, y = data.nearly_orthogonal(n, d, seed).torch()
    W0 = net.init(d, torch.tensor([0.05, 0.2, 1.0][:B], dtype=F64), seed=seed + 1, batch=B)
    return net, X, y, W0


def assert_same(new, ref):
    W, rec, hist = ref
    assert torch.equal(new.W, W)
    assert np.array_equal(new.steps, rec)
    assert set(new.history) == set(hist)
    for k in hist:
        assert np.array_equal(new.history[k], hist[k], equal_nan=True), k


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("loss_name", ["logistic", "exp"])
def test_bitwise_equal_to_reference(act, normalized, loss_name):
    net, X, y, W0 = problem(act=act)
    lr = torch.tensor([0.05, 0.1, 0.2], dtype=F64)
    fns = {"stable_rank": metrics.stable_rank, "svals": metrics.singular_values}
    kw = dict(loss=loss_name, lr=lr, steps=60, normalized=normalized, metrics=fns)
    assert_same(
        gradient_descent(net, W0, X, y, **kw, check_every=7),
        reference_gradient_descent(net, W0, X, y, **kw),
    )


def test_bitwise_equal_single_config_and_per_config_data():
    net, X, y, W0 = problem()
    kw = dict(lr=0.1, steps=60, record_steps=[0, 1, 17, 60])
    assert_same(
        gradient_descent(net, W0[1], X, y, **kw), reference_gradient_descent(net, W0[1], X, y, **kw)
    )
    sets = [data.nearly_orthogonal(8, 20, seed=k) for k in range(3)]
    Xb = torch.as_tensor(np.stack([s.X for s in sets]))
    yb = torch.as_tensor(np.stack([s.y for s in sets]))
    kw = dict(loss="exp", lr=0.1, steps=40, normalized=True)
    assert_same(
        gradient_descent(net, W0, Xb, yb, **kw), reference_gradient_descent(net, W0, Xb, yb, **kw)
    )


def divergence_cases():
    net, X, y, W0 = problem()
    Xc = torch.tensor([[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0]], dtype=F64)
    yc = torch.tensor([1.0, -1.0, 1.0], dtype=F64)
    net3 = LeakyNetwork(3, 3, "leaky_relu", 0.5)
    Wc = net3.init(3, 0.1, seed=0, batch=3)
    Xn = X.clone()
    Xn[2, 3] = float("nan")
    Wn = W0.clone()
    Wn[2, 1, 0] = float("inf")
    yield "grown", (net3, Wc, Xc, yc), dict(lr=torch.tensor([1e-3, 1e12, 1e12], dtype=F64), steps=5)
    yield (
        "grown_between_records",
        (net3, Wc, Xc, yc),
        dict(lr=torch.tensor([1e-3, 1e-3, 1e12], dtype=F64), steps=400, record_steps=[0, 400]),
    )
    # the exponential loss on conflicting labels grows geometrically: first bad step 17
    net_s = LeakyNetwork(3, 3, "smoothed_leaky_relu", 0.5)
    Ws = net_s.init(3, 0.1, seed=0, batch=3)
    slow = dict(loss="exp", steps=300, record_steps=[0, 300], max_loss_growth=1e3)
    yield (
        "slow_growth",
        (net_s, Ws, Xc, yc),
        dict(lr=torch.tensor([1e-3, 6.0, 1e-3], dtype=F64), **slow),
    )
    # configuration 2 diverges (step 3) before configuration 1 (step 9)
    W1 = Ws[1:2].expand(3, -1, -1).clone()
    yield (
        "later_config_first",
        (net_s, W1, Xc, yc),
        dict(lr=torch.tensor([1e-3, 7.0, 20.0], dtype=F64), **slow),
    )
    # at step 2 configuration 0 has grown and configuration 1 is infinite: the infinite one is named
    yield (
        "tie_nonfinite_first",
        (net_s, W1, Xc, yc),
        dict(lr=torch.tensor([100.0, 200.0, 1e-3], dtype=F64), **slow),
    )
    yield "nan_data", (net, W0, Xn, y), dict(lr=0.1, steps=3)
    yield "inf_weights", (net, Wn, X, y), dict(lr=0.1, steps=3)
    yield "overflow", (net, W0, X, y), dict(lr=1e308, steps=3)
    yield (
        "overflow_between_records",
        (net, W0, X, y),
        dict(lr=torch.tensor([0.1, 1e306, 1e308], dtype=F64), steps=250, record_steps=[0, 250]),
    )
    yield "growth_below_one", (net, W0, X, y), dict(lr=0.1, steps=3, max_loss_growth=0.5)


@pytest.mark.parametrize("case", list(divergence_cases()), ids=lambda c: c[0])
@pytest.mark.parametrize("check_every", [1, 100, 10_000])
def test_divergence_error_is_the_reference_one(case, check_every):
    _, (net, W0, X, y), kw = case
    with pytest.raises(DivergenceError) as ref:
        reference_gradient_descent(net, W0, X, y, **kw)
    with pytest.raises(DivergenceError) as new:
        gradient_descent(net, W0, X, y, **kw, check_every=check_every)
    r, e = ref.value, new.value
    assert (e.step, e.config, e.quantity) == (r.step, r.config, r.quantity)
    assert e.value == r.value or (math.isnan(e.value) and math.isnan(r.value))
    assert str(e) == str(r)


def test_divergence_in_metric_and_weights_named():
    net, X, y, W0 = problem()
    bad = {"exploding": lambda W: torch.where(torch.arange(W.shape[0]) == 1, float("inf"), 0.0)}
    with pytest.raises(DivergenceError) as info:
        gradient_descent(net, W0, X, y, lr=0.1, steps=10, record_steps=[0, 5], metrics=bad)
    assert (info.value.step, info.value.config, info.value.quantity) == (0, 1, "exploding")


def test_check_every_validated():
    net, X, y, W0 = problem()
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="check_every"):
            gradient_descent(net, W0, X, y, steps=2, check_every=k)


# --- float32 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("normalized", [False, True])
def test_float32_follows_float64(normalized):
    net, X, y, W0 = problem(act="smoothed_leaky_relu")
    kw = dict(
        lr=0.1,
        steps=100,
        normalized=normalized,
        record_steps=[0, 10, 50, 100],
        metrics={"stable_rank": metrics.stable_rank},
    )
    r64 = gradient_descent(net, W0, X, y, **kw)
    r32 = gradient_descent(net, W0.to(F32), X, y, **kw)
    assert r32.W.dtype == F32 and r32.where() == {"device": "cpu", "dtype": "float32"}
    assert r64.where() == {"device": "cpu", "dtype": "float64"}
    assert r32.history["loss"].dtype == np.float32
    # float32 rounding (6e-8) amplified by at most a few hundred steps of a smooth map
    rel = float((r32.W.double() - r64.W).abs().max() / r64.W.abs().max())
    assert rel < 1e-4
    np.testing.assert_allclose(r32.history["stable_rank"], r64.history["stable_rank"], rtol=1e-4)
    np.testing.assert_allclose(r32.history["loss"], r64.history["loss"], rtol=1e-4)


# --- per-step traces without per-step host reads --------------------------------------------------


def test_trace_equals_recording_every_step():
    net, X, y, W0 = problem()
    every = gradient_descent(
        net, W0, X, y, lr=0.1, steps=30, normalized=True, record_steps=range(31)
    )
    traced = gradient_descent(
        net,
        W0,
        X,
        y,
        lr=0.1,
        steps=30,
        normalized=True,
        record_steps=[0, 30],
        trace=("log_loss", "min_margin", "loss"),
    )
    assert torch.equal(every.W, traced.W)
    for k in ("loss", "log_loss", "min_margin"):
        assert traced.trace[k].shape == (31, 3)
        assert np.array_equal(traced.trace[k], every.history[k])
    one = gradient_descent(net, W0[0], X, y, lr=0.1, steps=5, trace=["log_loss"])
    assert one.trace["log_loss"].shape == (6,)
    with pytest.raises(ValueError, match="trace"):
        gradient_descent(net, W0, X, y, steps=2, trace=("stable_rank",))


def test_traced_run_on_meta_has_no_host_reads(monkeypatch):
    monkeypatch.setattr(trainer._Steps, "poll", lambda self: None)
    net, W, X, y = meta_problem()
    with pytest.raises((RuntimeError, NotImplementedError)):  # only the final transfer reads
        gradient_descent(net, W, X, y, lr=0.1, steps=20, record_steps=[], trace=("log_loss",))
    # the loop itself: the step plus the trace copy run under the guard
    lr_t = trainer._lr_tensor(0.1, 4, F64, META)
    run = trainer._Steps(net, W, X, y, get_loss("logistic"), lr_t, True, 1e8)
    buf = torch.empty((5, 4), dtype=F64, device=META)
    run.evaluate(0)
    run.update()
    with DeviceGuard(META):
        for t in range(1, 5):
            _, logL, q = run.evaluate(t)
            buf[t].copy_(logL)
            buf[t].copy_(q.min(dim=-1).values)
            run.update()


def test_divergence_monitor_alone():
    mon = trainer.DivergenceMonitor(3, F64, "cpu", nonfinite_first=False)
    mon.update(0, torch.tensor([1.0, 2.0, 3.0], dtype=F64), torch.tensor([True, True, True]))
    assert mon.first() is None
    mon.update(
        1, torch.tensor([1.0, 9.0, float("nan")], dtype=F64), torch.tensor([True, False, False])
    )
    mon.update(2, torch.tensor([7.0, 1.0, 1.0], dtype=F64), torch.tensor([False, True, True]))
    assert mon.first() == (1, 1, 9.0)  # earliest step, lowest configuration
    mon.nonfinite_first = True
    t, cfg, v = mon.first()
    assert (t, cfg) == (1, 2) and math.isnan(v)


def test_device_helpers():
    assert default_device("auto") == default_device(None)
    assert default_device("cpu") == torch.device("cpu")
    assert where(torch.zeros(2, dtype=F32)) == {"device": "cpu", "dtype": "float32"}
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            default_device("cuda")
