"""Tests of twolayer.paper_a.metrics against hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from twolayer.paper_a import data, metrics
from twolayer.paper_a.models import LeakyNetwork

F64 = torch.float64


# --- singular values, stable rank, numerical rank -------------------------------------------------


def test_singular_values_hand_case_and_order():
    W = torch.tensor([[3.0, 0.0, 0.0], [0.0, -4.0, 0.0]], dtype=F64)
    s = metrics.singular_values(W)
    assert s.shape == (2,)
    torch.testing.assert_close(s, torch.tensor([4.0, 3.0], dtype=F64), rtol=1e-15, atol=1e-15)
    R = torch.randn(4, 6, 3, generator=torch.Generator().manual_seed(0), dtype=F64)
    sv = metrics.singular_values(R)
    assert sv.shape == (4, 3)
    assert torch.all(sv[..., :-1] >= sv[..., 1:])


@pytest.mark.parametrize("k", [1, 2, 5, 17])
def test_stable_rank_of_identity_is_k(k):
    assert float(metrics.stable_rank(torch.eye(k, dtype=F64))) == pytest.approx(k, rel=1e-14)


def test_stable_rank_of_rank_one_is_one():
    u = torch.tensor([1.0, -2.0, 0.5], dtype=F64)
    v = torch.tensor([3.0, 0.0, 1.0, 4.0], dtype=F64)
    assert float(metrics.stable_rank(torch.outer(u, v))) == pytest.approx(1.0, rel=1e-13)


def test_stable_rank_of_diag_3_4():
    # ||W||_F^2 = 9 + 16, ||W||_2^2 = 16
    W = torch.tensor([[3.0, 0.0], [0.0, 4.0]], dtype=F64)
    assert float(metrics.stable_rank(W)) == pytest.approx(25 / 16, rel=1e-14)
    assert float(metrics.stable_rank(W.numpy())) == pytest.approx(25 / 16, rel=1e-14)  # NumPy input


def test_stable_rank_of_zero_is_zero():
    assert float(metrics.stable_rank(torch.zeros(3, 4, dtype=F64))) == 0.0
    assert float(metrics.stable_rank(np.zeros((2, 2)))) == 0.0


def test_stable_rank_batched():
    W = torch.stack(
        [
            torch.eye(3, dtype=F64),
            torch.diag(torch.tensor([3.0, 4.0, 0.0], dtype=F64)),
            torch.zeros(3, 3, dtype=F64),
        ]
    )
    sr = metrics.stable_rank(W)
    assert sr.shape == (3,)
    torch.testing.assert_close(sr, torch.tensor([3.0, 25 / 16, 0.0], dtype=F64), rtol=1e-14, atol=0)
    W2 = torch.randn(2, 3, 5, 4, generator=torch.Generator().manual_seed(1), dtype=F64)
    sr2 = metrics.stable_rank(W2)
    assert sr2.shape == (2, 3)
    # in [1, rank W] and equal to sum s^2 / s_1^2
    s = metrics.singular_values(W2)
    torch.testing.assert_close(sr2, (s**2).sum(-1) / s[..., 0] ** 2, rtol=1e-12, atol=0)
    assert torch.all(sr2 >= 1) and torch.all(sr2 <= 4)


def test_numerical_rank_with_tol():
    W = torch.diag(torch.tensor([1.0, 1e-3, 1e-8], dtype=F64))
    assert int(metrics.numerical_rank(W, tol=1e-9)) == 3
    assert int(metrics.numerical_rank(W)) == 2  # default tol 1e-6
    assert int(metrics.numerical_rank(W, tol=1e-2)) == 1
    # relative to sigma_1: scaling W does not change it
    assert int(metrics.numerical_rank(1e6 * W, tol=1e-6)) == 2
    assert int(metrics.numerical_rank(torch.zeros(3, 3, dtype=F64))) == 0
    batch = torch.stack([W, torch.eye(3, dtype=F64)])
    assert metrics.numerical_rank(batch).tolist() == [2, 3]


@pytest.mark.parametrize("tol", [0.0, 1.0, -1e-3, 2.0])
def test_numerical_rank_bad_tol_raises(tol):
    with pytest.raises(ValueError, match="tol"):
        metrics.numerical_rank(torch.eye(2, dtype=F64), tol=tol)


# --- margins --------------------------------------------------------------------------------------


def toy():
    net = LeakyNetwork(2, 2, "leaky_relu", 0.3)
    ds = data.nearly_orthogonal(6, 300, 2)
    X, y = ds.torch()
    s = (y[:, None] * X).sum(0)
    W = torch.stack([s, 0.5 * s, -s, -2 * s])  # separates nearly orthogonal data (y_k <s, x_k> > 0)
    return net, W, X, y


def test_margins_by_hand():
    net = LeakyNetwork(1, 1, "leaky_relu", 0.5)
    W = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=F64)
    X = torch.tensor([[2.0, 1.0], [-1.0, 3.0]], dtype=F64)
    y = torch.tensor([1.0, -1.0], dtype=F64)
    # f(x) = (phi(x_1) - phi(x_2)) / sqrt(2), phi = max(z/2, z)
    f = torch.tensor([(2.0 - 1.0), (-0.5 - 3.0)], dtype=F64) / math.sqrt(2)
    torch.testing.assert_close(metrics.margins(net, W, X, y), y * f, rtol=1e-15, atol=0)
    torch.testing.assert_close(
        metrics.margins(net, W.numpy(), X.numpy(), y.numpy()), y * f, rtol=1e-15, atol=0
    )
    nm = metrics.normalized_margins(net, W, X, y)
    torch.testing.assert_close(nm, y * f / math.sqrt(2), rtol=1e-15, atol=0)  # ||W||_F = sqrt 2


@pytest.mark.parametrize("c", [1e-3, 0.5, 7.0, 1e4])
def test_normalized_margins_invariant_under_scaling(c):
    net, W, X, y = toy()
    base = metrics.normalized_margins(net, W, X, y)
    torch.testing.assert_close(
        metrics.normalized_margins(net, c * W, X, y), base, rtol=1e-13, atol=0
    )
    # ... whereas unnormalized margins scale by c
    torch.testing.assert_close(
        metrics.margins(net, c * W, X, y), c * metrics.margins(net, W, X, y), rtol=1e-13, atol=0
    )


def test_normalized_margins_batched():
    net, W, X, y = toy()
    Wb = torch.stack([W, 3 * W, -W])
    nm = metrics.normalized_margins(net, Wb, X, y)
    assert nm.shape == (3, 6)
    for b in range(3):
        torch.testing.assert_close(
            nm[b], metrics.normalized_margins(net, Wb[b], X, y), rtol=1e-14, atol=0
        )


def test_normalize_by_margin_gives_min_margin_one():
    net, W, X, y = toy()
    q = metrics.margins(net, W, X, y)
    assert float(q.min()) > 0
    Wn = metrics.normalize_by_margin(net, W, X, y)
    assert Wn.shape == W.shape
    assert float(metrics.margins(net, Wn, X, y).min()) == pytest.approx(1.0, rel=1e-13)
    torch.testing.assert_close(Wn, W / q.min(), rtol=1e-15, atol=0)
    Wb = torch.stack([W, 5 * W])
    Wbn = metrics.normalize_by_margin(net, Wb, X, y)
    assert Wbn.shape == Wb.shape
    torch.testing.assert_close(
        metrics.margins(net, Wbn, X, y).min(-1).values, torch.ones(2, dtype=F64), rtol=1e-13, atol=0
    )


def test_normalize_by_margin_raises_on_misclassified_data():
    net, W, X, y = toy()
    y_bad = y.clone()
    y_bad[0] = -y_bad[0]
    with pytest.raises(ValueError, match="separated"):
        metrics.normalize_by_margin(net, W, X, y_bad)
    with pytest.raises(ValueError, match="separated"):  # one bad configuration in a batch
        metrics.normalize_by_margin(net, torch.stack([W, -W]), X, y)


def test_normalize_by_margin_not_strict_gives_nan_where_not_separated():
    """``strict=False`` (the runs of a batch, some not yet separating the data; the former
    ``flow.normalised_by_margin``): the separating ``W`` as with ``strict=True``, NaN for the
    others, including a zero smallest margin."""
    net, W, X, y = toy()
    Wb = torch.stack([W, -W, 2 * W, torch.zeros_like(W)])
    out = metrics.normalize_by_margin(net, Wb, X, y, strict=False)
    assert out.shape == Wb.shape
    q = metrics.margins(net, W, X, y).min()
    torch.testing.assert_close(out[0], W / q, rtol=1e-15, atol=0)
    torch.testing.assert_close(out[2], W / q, rtol=1e-15, atol=0)  # W / min margin: scale-free
    assert torch.isnan(out[1]).all() and torch.isnan(out[3]).all()
    torch.testing.assert_close(
        metrics.normalize_by_margin(net, W, X, y, strict=False),
        metrics.normalize_by_margin(net, W, X, y),
        rtol=0,
        atol=0,
    )


def test_normalize_by_margin_zero_smallest_margin_with_nonzero_weights():
    """A smallest margin of exactly 0 at ``W != 0`` is not a separation: ``strict=False`` gives
    NaN everywhere (not ``W / 0``, which would be inf and NaN mixed), ``strict=True`` raises.
    Leaky ReLU, ``a = (1, -1)/sqrt 2``, ``W = [[1, 0], [0, 0]]``, ``x_1 = e_1``, ``x_2 = e_2``,
    ``y = (1, 1)``: ``f(x_1) = phi(1)/sqrt 2 > 0`` and ``f(x_2) = (phi(0) - phi(0))/sqrt 2 = 0``."""
    net = LeakyNetwork(1, 1, "leaky_relu", 0.5)
    W = torch.tensor([[1.0, 0.0], [0.0, 0.0]], dtype=F64)
    X = torch.eye(2, dtype=F64)
    y = torch.ones(2, dtype=F64)
    torch.testing.assert_close(
        metrics.margins(net, W, X, y),
        torch.tensor([1 / math.sqrt(2), 0.0], dtype=F64),
        rtol=1e-15,
        atol=0,
    )
    out = metrics.normalize_by_margin(net, W, X, y, strict=False)
    assert out.shape == W.shape and torch.isnan(out).all()
    with pytest.raises(ValueError, match="separated"):
        metrics.normalize_by_margin(net, W, X, y)
