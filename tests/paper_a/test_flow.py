"""Tests of twolayer.paper_a.flow: loss-normalised GD as a time change of gradient flow."""
from __future__ import annotations

import math

import numpy as np
import torch

from twolayer.paper_a import data, flow, kkt, models, trainer


def test_span_coordinates_preserve_inner_products():
    X = np.random.default_rng(0).standard_normal((5, 30))
    Xc, Q = flow.span_coordinates(X)
    assert Xc.shape == (5, 5) and np.allclose(Xc @ Xc.T, X @ X.T) and np.allclose(Q.T @ Q, np.eye(5))


def test_log_flow_time_is_riemann_sum():
    logL = np.log(np.array([[1.0], [0.5], [0.25]]))
    t = np.exp(flow.log_flow_time(logL, 0.1))
    assert t[0, 0] == 0 and np.allclose(t[1:, 0], [0.1, 0.1 + 0.2])


def test_normalized_flow_checkpoints_and_history():
    ds = data.constructed_gram(6, 6, seed=0, gamma=0.5)
    net = models.LeakyNetwork(2, 1, gamma=0.5)
    W0 = net.init(6, torch.tensor([1e-3, 1.0]), seed=0, batch=2)
    X, y = ds.torch()
    run = flow.normalized_flow(net, W0, X, y, "exp", 0.5, [10, 50])
    assert list(run.checkpoints) == [0, 10, 50] and run.W.shape == (3, 2, 3, 6)
    assert run.log_loss.shape == (51, 2) and np.all(np.diff(run.log_time[1:], axis=0) > 0)
    same = trainer.gradient_descent(net, W0, X, y, "exp", 0.5, 50, normalized=True, record_steps=[50])
    assert torch.allclose(run.W[-1], same.W)  # segments change nothing
    step, t = run.first_below(math.log(2) / 6)
    assert np.all(step > 0) and np.all(np.isfinite(t))


def test_flow_converges_to_problem3_optimum():
    ds = data.constructed_gram(6, 6, seed=1, gamma=0.5)
    net = models.LeakyNetwork(2, 2, gamma=0.5)
    sol = kkt.solve_problem3(ds.X, ds.y, 2, 2, 0.5)
    X, y = ds.torch()
    run = flow.normalized_flow(net, net.init(6, 0.01, seed=0, batch=1), X, y, "exp", 0.5, [200, 2000])
    dists = []
    for k in (1, 2):
        W = run.W[k, 0]
        W = W / net.margins(W, X, y).min()
        dists.append(float(np.linalg.norm(W.numpy() - sol.W) / np.linalg.norm(sol.W)))
    assert dists[1] < dists[0] / 4 and dists[1] < 0.02  # the 1/s rate predicts a factor 10
