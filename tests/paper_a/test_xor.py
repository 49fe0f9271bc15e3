"""Tests of twolayer.paper_a.xor: noisy 2-XOR batches, training, intervals (chapter noisy_xor)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from twolayer.paper_a import models, xor


def test_xor_batch_shapes_and_assumption():
    b = xor.xor_batch(6, [3, 10**9], 2, 50, beta=0.25, gamma=0.5, seed=0)
    assert b.X.shape == (4, 6, 8) and b.y.shape == (4, 6)
    assert b.X_test.shape == (4, 50, 8) and b.y_test.shape == (4, 50)
    assert list(b.info.d) == [3, 3, 10**9, 10**9] and list(b.info.seed) == [0, 1, 0, 1]
    assert not b.info.holds[b.info.d == 3].any() and b.info.holds[b.info.d == 10**9].all()
    # d = 3: one noise coordinate beyond the two of mu; the padding stays zero
    assert np.all(b.X[:2, :, 3:].numpy() == 0)
    again = xor.xor_batch(6, [3, 10**9], 2, 50, beta=0.25, gamma=0.5, seed=0)
    assert np.array_equal(again.X.numpy(), b.X.numpy())
    with pytest.raises(ValueError):
        xor.xor_batch(6, [], 2, 50, beta=0.25, gamma=0.5, seed=0)


def test_train_and_test_linear_in_high_dimension_not_in_low():
    net = models.LeakyNetwork(4, 4, gamma=0.5)
    hi = xor.xor_batch(10, [10**9], 3, 2000, beta=0.25, gamma=0.5, seed=1)
    res = xor.train_and_test(net, hi, "exp", [1e-3, 1.0], steps=200, seed=1, tol=0.05)
    assert len(res) == 6 and set(res.init_scale) == {1e-3, 1.0}
    assert (res.train_error == 0).all() and (res.loss_ratio < 1).all()
    assert (1 - res.linear_agreement <= 0.05).all()
    assert abs(res.test_error.mean() - 0.5) <= xor.chance_slack(2000, 6, 0.05)
    # low dimension, many samples: the network learns XOR (the answer to "linear?" is "no")
    lo = xor.xor_batch(100, [2], 2, 2000, beta=0.25, gamma=0.5, seed=2)
    res_lo = xor.train_and_test(net, lo, "exp", [1e-3], steps=300, seed=2)
    assert res_lo.test_error.max() < 0.3 and res_lo.linear_agreement.max() < 0.9
    with pytest.raises(ValueError):
        xor.train_and_test(net, lo, "exp", [], steps=10, seed=2)


def test_chance_slack():
    assert xor.chance_slack(2500, 4, 0.01) == pytest.approx(5 * 0.5 / 100 + 0.01)


def test_summarise_and_first_d_at_chance():
    import pandas as pd

    runs = pd.DataFrame(
        {
            "d": [2, 2, 64, 64, 10**9, 10**9],
            "seed": [0, 1] * 3,
            "init_scale": [1.0] * 6,
            "ratio": [9.0, 9.0, 3.0, 3.0, 0.5, 0.5],
            "holds": [False] * 4 + [True] * 2,
            "train_error": [0.1, 0.1, 0, 0, 0, 0],
            "test_error": [0.1, 0.12, 0.5, 0.5, 0.49, 0.51],
            "linear_agreement": [0.5, 0.6, 1, 1, 1, 1],
            "loss_ratio": [3, 3, 0, 0, 0, 0],
        }
    )
    table = xor.summarize(runs, 0.95, n_test=1000, num_seeds=2)
    assert list(table.d) == [2, 64, 10**9] and list(table.at_chance) == [False, True, True]
    assert list(table.assumption_holds) == [0, 0, 1]
    assert xor.first_d_at_chance(table) == {1.0: 64.0}
    runs.loc[5, "test_error"] = 0.9  # the largest d is not at chance: no such dimension
    assert np.isnan(xor.first_d_at_chance(xor.summarize(runs, 0.95, 1000, 2))[1.0])


def test_tex_number():
    assert xor.tex_number(10**9) == "10^{9}" and xor.tex_number(64) == "64"
    assert xor.tex_number(1000) == "10^{3}" and xor.tex_number(100) == "100"


def test_measurement_in_chunks_is_bitwise_the_whole(monkeypatch):
    """The test sets are shared by the scales and measured in chunks (the paper profile's
    would take 16 GB repeated per scale): the numbers do not depend on the chunking."""
    from twolayer.paper_a import models

    net = models.LeakyNetwork(4, 4, gamma=0.5)
    b = xor.xor_batch(12, [2, 8, 400], 3, 300, beta=0.25, gamma=0.5, seed=0)
    whole = xor.train_and_test(net, b, "logistic", [0.01, 1.0], steps=150, seed=0, tol=0.01)
    monkeypatch.setattr(xor, "CHUNK_BYTES", 2**16)  # several runs per chunk, several chunks
    chunked = xor.train_and_test(net, b, "logistic", [0.01, 1.0], steps=150, seed=0, tol=0.01)
    assert whole.equals(chunked)
    monkeypatch.setattr(xor, "CHUNK_BYTES", 1)  # one run per chunk
    assert whole.equals(
        xor.train_and_test(net, b, "logistic", [0.01, 1.0], steps=150, seed=0, tol=0.01)
    )
    # each run is tested on its own data set: scale s, data set i is row s * B + i
    B = len(b.info)
    assert (whole.d.to_numpy()[:B] == whole.d.to_numpy()[B:]).all()


def test_measure_worked_example_per_run():
    """``_measure`` on three hand-made runs of a network with ``m1 = 2, m2 = 1, gamma = 1/2``
    (``f = (phi(<w_1,x>) + phi(<w_2,x>) - phi(<w_3,x>)) / sqrt 3``, ``z = (w_1 + w_2 - w_3) /
    sqrt 3``) on the points (4, 1), (-4, 1), (1, 4), (1, -4) with the XOR labels +, +, -, -
    (``|x_1| >= |x_2|``), each run on its own copy (default ``data_index``):

    * ``w = e_1, 0, 0``: ``sign f = sign x_1 = +, -, +, +`` = the linear rule; 3 of 4 wrong;
    * ``w = e_1, -e_1, 0``: ``f ~ |x_1| / 2 > 0``, ``z = 0`` so ``sign <z, x> = 0``: 2 of 4
      wrong, agreement 0;
    * ``w = e_1, -e_1, e_2``: ``f ~ |x_1| / 2 - phi(x_2) = 1, 1, -3.5, 2.5``, ``z ~ -e_2``,
      ``sign <z, x> = -, -, -, +``: 1 of 4 wrong, agreement 2 of 4.

    The training sets are the same points, so train and test errors coincide; every value is
    one per run, not pooled over the runs."""
    net = models.LeakyNetwork(2, 1, gamma=0.5)
    pts = torch.tensor([[4.0, 1.0], [-4.0, 1.0], [1.0, 4.0], [1.0, -4.0]], dtype=torch.float64)
    e1, e2, zero = [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]
    neg_e1 = [-1.0, 0.0]
    W = torch.tensor([[e1, zero, zero], [e1, neg_e1, zero], [e1, neg_e1, e2]], dtype=torch.float64)
    X = pts.repeat(3, 1, 1)
    y = torch.tensor([1.0, 1.0, -1.0, -1.0], dtype=torch.float64).repeat(3, 1)
    m = xor._measure(net, W, X, y, X.clone(), y.numpy().copy())
    assert set(m) == {"train_error", "test_error", "linear_agreement"}
    for key, expected in [
        ("train_error", [0.75, 0.5, 0.25]),
        ("test_error", [0.75, 0.5, 0.25]),
        ("linear_agreement", [1.0, 0.0, 0.5]),
    ]:
        assert m[key].shape == (3,)
        np.testing.assert_allclose(m[key], expected, rtol=0, atol=1e-15)


class _SpyNetwork:
    """A network that records the shapes ``(W, X)`` of every evaluation."""

    def __init__(self, net):
        self.net, self.m1, self.calls = net, net.m1, []

    def __call__(self, W, X):
        self.calls.append((tuple(W.shape), tuple(X.shape)))
        return self.net(W, X)


@pytest.mark.parametrize(
    "chunk_bytes,sizes",
    [
        # one run holds 8 bytes x 10 test points x max(k = 3, m = 4) = 320 bytes
        (1000, [3, 3, 1]),  # floor(1000 / 320) = 3 runs per chunk
        (500, [1] * 7),  # floor(500 / 320) = 1
        (1, [1] * 7),  # a run larger than the budget is still measured, alone
    ],
)
def test_measure_chunks_respect_the_budget(monkeypatch, chunk_bytes, sizes):
    """The test outputs are computed in consecutive chunks of ``floor(CHUNK_BYTES / (8 n_test
    max(k, m)))`` runs (at least one): float64 test outputs or hidden activations of a chunk
    fit the budget. Seven runs with ``m = 4`` neurons, ``k = 3`` coordinates, ``n_test = 10``
    test points (5 training points: the one evaluation on the whole training batch is told
    apart by its 5 rows); each chunk tests its runs on their own data sets."""
    g = torch.Generator().manual_seed(0)
    R, n, n_test, k = 7, 5, 10, 3
    spy = _SpyNetwork(models.LeakyNetwork(2, 2, gamma=0.5))
    W = torch.randn((R, 4, k), generator=g, dtype=torch.float64)
    X = torch.randn((R, n, k), generator=g, dtype=torch.float64)
    y = torch.sign(torch.randn((R, n), generator=g, dtype=torch.float64))
    Xt = torch.randn((R, n_test, k), generator=g, dtype=torch.float64)
    yt = np.sign(torch.randn((R, n_test), generator=g, dtype=torch.float64).numpy())
    monkeypatch.setattr(xor, "CHUNK_BYTES", chunk_bytes)
    m = xor._measure(spy, W, X, y, Xt, yt)
    test_calls = [c for c in spy.calls if c[1][1] == n_test]
    assert test_calls == [((s, 4, k), (s, n_test, k)) for s in sizes]
    assert [c for c in spy.calls if c[1][1] == n] == [((R, 4, k), (R, n, k))]
    # the per-run numbers are those of each run alone on its own test set
    for i in range(R):
        f = np.sign(spy.net(W[i], Xt[i]).numpy())
        assert m["test_error"][i] == np.mean(f != yt[i])
