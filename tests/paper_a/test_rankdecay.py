"""Tests of the Figure 1 helpers of twolayer.paper_a.rankdecay: configurations, relative curves,
trends over seeds with confidence intervals, and "initialization scale against training
longer". (The runs and the run store are tested in tests/core/test_store.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from twolayer.paper_a import rankdecay
from twolayer.paper_a.models import LeakyNetwork

COMMON = dict(n=10, m=4, gamma=0.1, beta=0.1, steps=5, n_test=20, records=4)


def test_figure1_configs_keys():
    cf = rankdecay.figure1_configs(
        [7, 8], [50, 100], 100, [1.0, 0.1], left_scale=0.02, left_lr=0.01, right_lr=0.16, **COMMON
    )
    left = [k for k in cf if k[0] == "left"]
    grid = [k for k in cf if k[0] == "grid"]
    assert len(left) == 2 * 2 and len(grid) == 2 * 2 * 2  # d_right already in dims
    assert cf[("left", 50, 7)]["init_scale"] == 0.02 and cf[("left", 50, 7)]["lr"] == 0.01
    assert cf[("grid", 100, 0.1, 8)]["lr"] == 0.16 and cf[("grid", 100, 0.1, 8)]["seed"] == 8
    cf = rankdecay.figure1_configs(
        [7], [50], 300, [1.0], left_scale=0.02, left_lr=0.01, right_lr=0.16, **COMMON
    )
    assert ("grid", 300, 1.0, 7) in cf and ("left", 300, 7) not in cf


def test_relative_curves():
    R = {
        ("grid", 50, 1.0, s): ({"stable_rank": np.array([4.0, 2.0, 1.0]) * (s + 1)}, {})
        for s in (0, 1)
    }
    out = rankdecay.relative_curves(R, ("grid", 50, 1.0), [0, 1])
    np.testing.assert_allclose(out, [[1, 0.5, 0.25], [1, 0.5, 0.25]])


def test_log_slopes_power_laws_and_noise():
    x = np.array([10.0, 100.0, 1000.0])
    exact = np.array([[2 * x**-0.3], [3 * x**-0.3], [5 * x**-0.3]])[:, 0]
    t = rankdecay.log_slopes(exact, x)
    assert t["slope"] == pytest.approx(-0.3) and t["ci"] == pytest.approx([-0.3, -0.3])
    # no trend (the answer is no): the interval contains 0
    rng = np.random.default_rng(0)
    flat = np.exp(0.1 * rng.standard_normal((5, 3)))
    t = rankdecay.log_slopes(flat, x)
    assert t["ci"][0] < 0 < t["ci"][1]
    with pytest.raises(ValueError, match="positive"):
        rankdecay.log_slopes(-exact, x)
    with pytest.raises(ValueError):
        rankdecay.log_slopes(exact, x[:2])


def test_record_at_or_before():
    steps = np.array([0, 1, 2, 5, 10, 30])
    assert rankdecay.record_at_or_before(steps, 3.0) == 2
    assert rankdecay.record_at_or_before(steps, 5) == 3
    assert rankdecay.record_at_or_before(steps, -1) == -1


def test_init_vs_steps_both_ways():
    steps = np.array([0, 1, 3, 10, 30, 100])
    seeds = 4
    # the smaller scale falls fast, the larger slowly: one step down in scale wins
    fast = np.tile([1.0, 0.5, 0.2, 0.1, 0.1, 0.1], (seeds, 1))
    slow = np.tile([1.0, 0.99, 0.97, 0.9, 0.8, 0.5], (seeds, 1))
    noise = 1 + 0.01 * np.arange(seeds)[:, None]
    out = rankdecay.init_vs_steps({1.0: slow * noise, 0.1: fast * noise}, steps)
    assert len(out) == 1 and out[0]["larger"] == 1.0 and out[0]["smaller"] == 0.1
    assert out[0]["short_step"] == 10 and out[0]["long_step"] == 100
    assert out[0]["ci"][1] < 0
    # training longer wins (the answer is no): the larger scale falls below the smaller's
    # early value by the end
    late = np.tile([1.0, 0.99, 0.9, 0.6, 0.2, 0.05], (seeds, 1))
    out = rankdecay.init_vs_steps({1.0: late * noise, 0.1: slow * noise}, steps)
    assert out[0]["ci"][0] > 0
    with pytest.raises(ValueError, match="T / 10"):
        rankdecay.init_vs_steps({1.0: slow[:, :2], 0.1: fast[:, :2]}, steps[:2])


def test_log_slopes_by_hand_level_and_errors():
    """Rows ``c x^p`` have slope ``p`` exactly; the interval is the Student-t one at the level
    asked for (two seeds, slopes 1 and 3: mean 2, half-width t_{(1+level)/2, 1} s / sqrt 2);
    a 1-D input is refused with a message naming the shape."""
    from scipy.stats import t as student

    x = np.array([1.0, 2.0, 4.0, 8.0])
    out = rankdecay.log_slopes(np.stack([2 * x, 5 * x**3]), x, level=0.5)
    assert out["per_seed"] == pytest.approx([1.0, 3.0], abs=1e-12)
    half = student.ppf(0.75, 1) * np.std([1.0, 3.0], ddof=1) / np.sqrt(2)
    assert out["slope"] == pytest.approx(2.0) and out["ci"] == pytest.approx([2 - half, 2 + half])
    with pytest.raises(ValueError, match="values must be"):
        rankdecay.log_slopes(x, x)


def test_run_metrics_accuracies_by_hand_for_one_network_and_a_batch():
    """The accuracy metrics are the fraction of points with ``sign f(x) = y``, for one network
    ``W`` (m, d) and for a batch: with ``w_1 = e_1``, ``w_2 = e_2`` and ``a = (1, -1)/sqrt 2``,
    ``sign f(x) = sign(x_1 - x_2)`` (leaky ReLU is increasing); swapping the rows flips it."""
    net = LeakyNetwork(1, 1, phi="leaky_relu", gamma=0.5)
    X = torch.tensor([[2.0, 1.0], [1.0, 2.0], [3.0, 0.0], [0.0, -1.0]], dtype=torch.float64)
    y = torch.ones(4, dtype=torch.float64)  # x_1 - x_2 = 1, -1, 3, 1: 3 of 4 right
    Xt = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, -3.0]], dtype=torch.float64)
    yt = torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64)  # all 3 right
    W = torch.eye(2, dtype=torch.float64)
    fns = rankdecay.run_metrics(net, X, y, Xt, yt=yt)
    assert float(fns["train_accuracy"](W)) == 0.75 and float(fns["test_accuracy"](W)) == 1.0
    batch = torch.stack([W, W.flip(0)])  # the swapped rows: 1 of 4 and 0 of 3 right
    np.testing.assert_array_equal(fns["train_accuracy"](batch).numpy(), [0.75, 0.25])
    np.testing.assert_array_equal(fns["test_accuracy"](batch).numpy(), [1.0, 0.0])
    np.testing.assert_allclose(fns["stable_rank"](batch).numpy(), [2.0, 2.0])  # orthonormal


def test_summarize_reads_the_last_record_of_each_history():
    """The final values are those of the last record: a run whose loss, test and train accuracy
    still change at the last record (1/2 -> 3/4 train accuracy, 0.6 -> 0.7 test accuracy);
    the stable rank 5, 2, 4, 3 has its minimum 2 at the second record (step 2), 2/5 of the
    start."""
    arrays = {
        "steps": np.array([0, 2, 4, 8]),
        "stable_rank": np.array([5.0, 2.0, 4.0, 3.0]),
        "loss": np.array([0.7, 0.6, 0.5, 0.4]),
        "test_accuracy": np.array([0.5, 0.55, 0.6, 0.7]),
        "train_accuracy": np.array([0.25, 0.25, 0.5, 0.75]),
    }
    assert rankdecay.summarize(arrays) == {
        "stable_rank_init": 5.0,
        "stable_rank_final": 3.0,
        "stable_rank_min": 2.0,
        "step_of_min": 2,
        "relative_min": 0.4,
        "final_loss": 0.4,
        "test_accuracy": 0.7,
        "train_accuracy": 0.75,
    }
