"""Paper A's chapters take ``device`` and ``dtype``: their library code paths keep device
discipline, and their contracts reject a bad device or dtype by name.

* One step (or one batch) of each chapter's computation runs on PyTorch's ``meta`` device
  inside :class:`~twolayer.core.device.DeviceGuard`: no host read, no device mix. Where a
  function reads its results back to the host by design (the flow's checkpoints, the
  trainer's records, xor's final measurement, ``lowrank.init_condition``), only its device
  part is tested, as said in each test.
* Each Paper A chapter's contract (its module's ``SPEC``,
  no kernel) rejects a malformed device, CUDA where none exists, and a dtype it does not
  offer, with a message naming the parameter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from twolayer import chapters
from twolayer.core.device import DeviceGuard
from twolayer.core.params import ParameterError
from twolayer.paper_a import flow, lowrank, metrics, onestep, rankdecay, trainer
from twolayer.paper_a.losses import get_loss
from twolayer.paper_a.models import LeakyNetwork

META = torch.device("meta")
F64, F32 = torch.float64, torch.float32
ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = {
    # chapter: the dtypes it accepts (float32 only where its smoke profile passed in float32)
    "figure1": ("float64", "float32"),
    "gradient_flow": ("float64",),
    "kkt_not_max_margin": ("float64",),
    "noisy_xor": ("float64", "float32"),
    "one_step_low_rank": ("float64",),
    "real_images": ("float32", "float64"),
    "setting": ("float64",),
}


def meta(*shape, dtype=F64):
    return torch.empty(*shape, device=META, dtype=dtype)


def one_step_under_guard(net, W, X, y, loss="logistic", normalized=False, fns=()):
    """The trainer's step (its first evaluation caches ``a`` on the device), then one more step
    and every metric under the guard."""
    lr_t = trainer._lr_tensor(0.1, W.shape[0], W.dtype, W.device)
    run = trainer._Steps(net, W, X, y, get_loss(loss), lr_t, normalized, 1e8)
    run.evaluate(0)
    run.update()
    with DeviceGuard(META):
        L, _, q = run.evaluate(1)
        run.update()
        values = {name: fn(W) for name, fn in dict(fns).items()}
    assert L.device == META and q.device == META
    assert all(v.device == META and v.dtype == W.dtype for v in values.values())
    return values


# --- figure1: rankdecay.run's step and metric closures ------------------------------------------


@pytest.mark.parametrize("dtype", [F64, F32])
def test_rankdecay_step_and_metrics_on_meta(dtype):
    """rankdecay.run draws data and W0 on the host and moves them (one copy each, not under
    the guard); the training step and its three metrics stay on the device."""
    cfg = rankdecay.config(
        d=12, n=10, m=6, gamma=0.1, beta=0.1, init_scale=0.02, lr=0.01, steps=5, seed=0,
        n_test=7, records=3, dtype=str(dtype).replace("torch.", ""),
    )  # fmt: skip
    net = rankdecay._network(cfg)
    W = meta(3, cfg["m"], cfg["d"], dtype=dtype)
    X, y, Xt, yt = (
        meta(10, 12, dtype=dtype),
        meta(10, dtype=dtype),
        meta(7, 12, dtype=dtype),
        meta(7, dtype=dtype),
    )
    values = one_step_under_guard(net, W, X, y, fns=rankdecay.run_metrics(net, X, y, Xt, yt=yt))
    assert set(values) == {"stable_rank", "test_accuracy", "train_accuracy"}
    assert values["test_accuracy"].shape == (3,)


def test_rankdecay_config_dtype_is_part_of_the_key():
    kw = dict(
        d=12, n=10, m=6, gamma=0.1, beta=0.1, init_scale=0.02, lr=0.01, steps=5, seed=0,
        n_test=7, records=3,
    )  # fmt: skip
    c64, c32 = rankdecay.config(**kw), rankdecay.config(**kw, dtype="float32")
    assert c64["dtype"] == "float64" and c32["dtype"] == "float32"
    assert rankdecay.store_key(c64) != rankdecay.store_key(c32)
    assert rankdecay._group_key(c64) != rankdecay._group_key(c32)
    with pytest.raises(ValueError, match="dtype"):
        rankdecay.config(**kw, dtype="float16")


def test_rankdecay_float32_runs_in_float32():
    kw = dict(
        d=12, n=10, m=6, gamma=0.1, beta=0.1, lr=0.01, steps=20, seed=0, n_test=7, records=4,
    )  # fmt: skip
    cfgs = [rankdecay.config(**kw, init_scale=s, dtype="float32") for s in (0.02, 1.0)]
    (_, a32, _), _ = rankdecay.run(cfgs)
    (_, a64, _), _ = rankdecay.run([{**c, "dtype": "float64"} for c in cfgs])
    assert a32["stable_rank"].dtype == np.float32
    np.testing.assert_allclose(a32["stable_rank"], a64["stable_rank"], rtol=1e-4)


# --- noisy_xor and gradient_flow / kkt: flow.normalized_flow's torch loop -----------------------


@pytest.mark.parametrize("per_config_data", [False, True])
@pytest.mark.parametrize("act", ["leaky_relu", "smoothed_leaky_relu"])
def test_normalized_flow_steps_on_meta(per_config_data, act):
    """The torch loop of normalized_flow (xor.train_and_test runs it with one data set per
    configuration; gradient_flow and kkt_not_max_margin with shared data) makes no host read
    and no device mix between checkpoints: under the guard the first host read is the
    finiteness check at the first checkpoint (step 4), after five evaluations of the loss.
    (It reads that check, and returns the checkpoints, on the host by design.)"""
    net = LeakyNetwork(3, 2, act, 0.3)
    W = meta(4, 5, 6)
    X = meta(*((4,) if per_config_data else ()), 8, 6)
    y = meta(*((4,) if per_config_data else ()), 8)
    net.a(W)  # the second layer's one copy to the device, cached (as in any run)
    with pytest.raises(AssertionError, match="host read") as err, DeviceGuard(META) as guard:
        flow.normalized_flow(net, W, X, y, loss="logistic", lr=0.5, checkpoints=[4])
    assert "got a tensor" not in str(err.value)
    assert guard.ops.count("logsumexp") == 5  # steps 0-4 evaluated before the first read


def test_flow_checkpoints_come_back_to_the_host_and_continue_on_the_data_device():
    net = LeakyNetwork(3, 2, "smoothed_leaky_relu", 0.3)
    g = torch.Generator().manual_seed(0)
    X = torch.randn(6, 5, generator=g, dtype=F64)
    y = torch.tensor([1.0, -1, 1, -1, 1, 1], dtype=F64)
    W0 = net.init(5, 0.1, seed=1, batch=2)
    run = flow.normalized_flow(net, W0, X, y, loss="exp", lr=0.2, checkpoints=[5, 20])
    assert run.W.device.type == "cpu"
    more = flow.continue_flow(run, net, X, y, loss="exp", checkpoints=[40])
    assert more.W.shape[0] == run.W.shape[0] + 1
    # float32 data and weights: the loop runs in float32 (the NumPy fast path is float64 only)
    r32 = flow.normalized_flow(
        net, W0.to(F32), X.to(F32), y.to(F32), loss="exp", lr=0.2, checkpoints=[20]
    )
    assert r32.W.dtype == F32
    torch.testing.assert_close(r32.W[-1].double(), run.W[-1], rtol=1e-4, atol=1e-6)


# --- one_step_low_rank: onestep.run_batch's step and metric closures ----------------------------


@pytest.mark.parametrize("dtype", [F64, F32])
def test_onestep_step_and_metrics_on_meta(dtype):
    """run_batch's training step and all five metric closures (stable rank, Lemma E.4's loss
    ratio, the margins, Fact E.7, Lemma E.3) on meta; init_condition and step1_lower_bound read
    their few numbers back to the host by design (once, before the run)."""
    net = LeakyNetwork(3, 3, "smoothed_leaky_relu", 0.3)
    W, X, y = meta(2, 6, 9, dtype=dtype), meta(5, 9, dtype=dtype), meta(5, dtype=dtype)
    fns = {
        "stable_rank": metrics.stable_rank,
        "log_loss_ratio": lowrank.loss_ratio(net, X, y),
        "margins": lowrank.margins_metric(net, X, y),
        "fact_e7": lowrank.gradient_gram_metric(net, X),
        "grad_bound_e3": lowrank.gradient_bound_metric(net, X, y, 2.0),
    }
    values = one_step_under_guard(net, W, X, y, fns=fns)
    assert values["margins"].shape == (2, 5) and values["fact_e7"].shape == (2, 2)
    # the device part of init_condition and of the first-step ratio
    lr = torch.full((2,), 0.1, dtype=dtype, device=META)
    with DeviceGuard(META):
        _, _, G0 = net.loss_and_grad(W, X, y, get_loss("logistic"))
        r = torch.linalg.matrix_norm(W) / (lr * torch.linalg.matrix_norm(G0))
    assert r.device == META


def test_onestep_run_batch_float64_default_and_float32():
    s = onestep.setup(6, 60, 8, 0.3, seed=0)
    kw = dict(steps=5, seed=0, records=3)
    b64 = onestep.run_batch(s, [s.omega_A2], [s.alpha], **kw)
    b32 = onestep.run_batch(s, [s.omega_A2], [s.alpha], **kw, dtype="float32")
    assert b64.history["stable_rank"].dtype == np.float64
    assert b32.history["stable_rank"].dtype == np.float32
    np.testing.assert_allclose(b32.history["stable_rank"], b64.history["stable_rank"], rtol=1e-3)


# --- every chapter's contract: device and dtype ---------------------------------------------------


def _validate(chapter, **values):
    """The parameters cell's defaults with ``values`` applied, validated by the chapter
    module's SPEC (what the page's contract does)."""
    return chapters.spec(f"paper_a/{chapter}").params("smoke", **values)


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_chapter_takes_device_and_dtype(chapter):
    P = _validate(chapter)
    assert P.device == "auto" and P.dtype == CHAPTERS[chapter][0]
    assert _validate(chapter, device="cpu").device == "cpu"
    for dt in CHAPTERS[chapter]:
        assert _validate(chapter, dtype=dt).dtype == dt


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
@pytest.mark.parametrize("device", ["gpu", "cuda:x", 0, None])
def test_chapter_rejects_a_bad_device(chapter, device):
    with pytest.raises(ParameterError, match="parameter 'device' must be"):
        _validate(chapter, device=device)


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_chapter_rejects_cuda_where_there_is_none(chapter, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ParameterError, match="parameter 'device' asks for 'cuda'.*not available"):
        _validate(chapter, device="cuda")


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
@pytest.mark.parametrize("dtype", ["float16", "double", 64, "float32"])
def test_chapter_rejects_a_bad_dtype(chapter, dtype):
    if dtype in CHAPTERS[chapter]:
        return
    with pytest.raises(ParameterError, match="parameter 'dtype'") as err:
        _validate(chapter, dtype=dtype)
    if dtype == "float32":  # a page that rejects float32 says why
        assert (
            "float64" in str(err.value)
            and "verified in float64" in str(err.value)
            or ("float32's rounding" in str(err.value))
        )


def test_xor_train_and_test_float32_follows_float64():
    """noisy_xor's runs in float32: the same errors as in float64 on a small batch."""
    from twolayer.paper_a import xor

    net = LeakyNetwork(4, 4, "leaky_relu", 0.3)
    b = xor.xor_batch(12, [8, 400], 2, 50, beta=0.25, gamma=0.3, seed=0)
    kw = dict(tol=0.2)
    r64 = xor.train_and_test(net, b, "logistic", [0.1, 1.0], steps=80, seed=0, **kw)
    r32 = xor.train_and_test(
        net, b, "logistic", [0.1, 1.0], steps=80, seed=0, dtype="float32", **kw
    )
    assert (r32.steps == r64.steps).all()
    np.testing.assert_allclose(r32.test_error, r64.test_error, atol=0.05)
    np.testing.assert_allclose(r32.train_error, r64.train_error, atol=0.05)
