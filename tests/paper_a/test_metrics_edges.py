"""Edges of twolayer.paper_a.metrics that mutation testing (``make mutate``) found untested:
dtypes are kept (a float32 W stays float32; NumPy and integer inputs become float64), the
margins are computed in W's dtype, and normalize_by_margin refuses a zero margin but accepts a
positive margin below 1."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from twolayer.paper_a import metrics, models


def test_dtypes_are_kept_or_made_float64():
    W32 = torch.randn(3, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float32)
    assert metrics.stable_rank(W32).dtype == torch.float32
    assert metrics.singular_values(W32).dtype == torch.float32
    ints = [[2, 0, 0], [0, 1, 0]]
    s = metrics.singular_values(ints)
    assert s.dtype == torch.float64 and torch.allclose(
        s, torch.tensor([2.0, 1.0], dtype=torch.float64)
    )
    assert metrics.stable_rank(ints) == pytest.approx(5 / 4)


def test_margins_in_the_dtype_of_w():
    net = models.LeakyNetwork(2, 1, gamma=0.5)
    X = np.random.default_rng(0).standard_normal((5, 4))  # float64 data
    y = np.array([1, -1, 1, 1, -1])  # integer labels
    W32 = torch.randn(3, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float32)
    q = metrics.margins(net, W32, X, y)
    assert q.dtype == torch.float32
    q64 = metrics.margins(net, W32.double(), X, y)
    torch.testing.assert_close(q.double(), q64, rtol=1e-5, atol=1e-6)


def test_normalize_by_margin_boundaries():
    net = models.LeakyNetwork(1, 1, gamma=0.5)
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, -1.0])
    W = torch.tensor([[0.5, 0.0], [0.0, 0.5]], dtype=torch.float64)  # margins 0.5/sqrt(2)
    q = metrics.margins(net, W, X, y)
    assert float(q.min()) < 1
    Wn = metrics.normalize_by_margin(net, W, X, y)
    assert float(metrics.margins(net, Wn, X, y).min()) == pytest.approx(1.0)
    message = r"^normalize_by_margin needs min_i y_i f\(x_i; W\) > 0 \(data not separated\)$"
    with pytest.raises(ValueError, match=message):  # a zero margin: nothing to rescale
        metrics.normalize_by_margin(net, torch.zeros(2, 2, dtype=torch.float64), X, y)
