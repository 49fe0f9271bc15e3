"""Tests of twolayer.paper_a.sgd: batched minibatch SGD on two-layer ReLU networks with biases."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from twolayer.paper_a import metrics, sgd
from twolayer.paper_a.models import TwoLayerNet
from twolayer.paper_a.trainer import DivergenceError

F64 = torch.float64


def toy(n=60, d=5, k=3, seed=0, binary=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if binary:
        y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)
    else:
        y = np.argmax(X[:, :k], axis=1)
    return X, y


def test_init_matches_two_layer_net_and_scales():
    d, m = 7, 11
    p = sgd.glorot_uniform_init(d, m, 1, [1.0, 0.02], seed=3, dtype=F64)
    for i, s in enumerate([1.0, 0.02]):
        net = TwoLayerNet(d, m, init_scale=s, seed=3, dtype=F64)
        torch.testing.assert_close(p.W[i], net.W.detach())
        torch.testing.assert_close(p.a[i, :, 0], net.a.detach())
    assert torch.all(p.b == 0) and torch.all(p.c == 0)
    r = math.sqrt(6 / (d + m))
    assert float(p.W[0].abs().max()) <= r
    # glorot uniform: std r / sqrt(3)
    big = sgd.glorot_uniform_init(300, 400, 1, [1.0], seed=0, dtype=F64)
    assert abs(float(big.W.std()) - math.sqrt(6 / 700) / math.sqrt(3)) < 0.01 * math.sqrt(2 / 700)
    with pytest.raises(ValueError, match="init_scales"):
        sgd.glorot_uniform_init(3, 4, 1, [0.0], seed=0)


def test_forward_matches_two_layer_net():
    X, _ = toy(d=7)
    p = sgd.glorot_uniform_init(7, 11, 1, [1.0], seed=1, dtype=F64)
    p.b += torch.linspace(-0.3, 0.3, 11, dtype=F64)
    p.c += 0.2
    net = TwoLayerNet(7, 11, seed=1, dtype=F64)
    with torch.no_grad():
        net.b.copy_(p.b[0])
        net.c.copy_(p.c[0, 0])
    Xt = torch.as_tensor(X)
    F, _ = sgd.forward(p, Xt)
    torch.testing.assert_close(F[0, :, 0], net(Xt).detach())


@pytest.mark.parametrize("loss, binary, k", [("logistic", True, 1), ("cross_entropy", False, 3)])
def test_closed_form_gradients_match_autograd(loss, binary, k):
    X, y = toy(binary=binary, k=3)
    p = sgd.glorot_uniform_init(5, 9, k, [1.0, 0.3, 2.0], seed=2, dtype=F64)
    p.b += 0.1
    Xt = torch.as_tensor(X)
    yt = torch.as_tensor(y) if binary else torch.as_tensor(y, dtype=torch.long)
    L, g = sgd.loss_and_grad(p, Xt, yt, loss)
    leaves = [t.clone().requires_grad_(True) for t in p.tensors()]
    F, _ = sgd.forward(sgd.Params(*leaves), Xt)
    if loss == "logistic":
        Lref = torch.nn.functional.softplus(-yt * F[..., 0]).mean(dim=1)
    else:
        Lref = torch.stack([torch.nn.functional.cross_entropy(F[b], yt) for b in range(F.shape[0])])
    torch.testing.assert_close(L, Lref.detach())
    grads = torch.autograd.grad(Lref.sum(), leaves)
    for mine, ref in zip(g.tensors(), grads):
        torch.testing.assert_close(mine, ref)


def test_batch_schedule_is_seeded_and_covers_epochs():
    s = sgd.batch_schedule(10, 4, 5, seed=0)
    assert s.shape == (5, 4)
    flat = s.reshape(-1)
    assert sorted(flat[:10]) == list(range(10)) and sorted(flat[10:20]) == list(range(10))
    np.testing.assert_array_equal(s, sgd.batch_schedule(10, 4, 5, seed=0))
    assert not np.array_equal(s, sgd.batch_schedule(10, 4, 5, seed=1))
    with pytest.raises(ValueError, match="batch_size"):
        sgd.batch_schedule(10, 11, 5, seed=0)


def test_batch_schedule_sizes_one_and_n_and_the_full_message():
    """batch_size = 1 (one example per step) and batch_size = n (full batch) are the ends of
    the allowed range [1, n]; with batch_size = 1 and n steps the schedule is one epoch, a
    permutation of range(n). Outside the range the message names the range and the value."""
    one = sgd.batch_schedule(5, 1, 5, seed=2)
    assert one.shape == (5, 1) and sorted(one[:, 0]) == [0, 1, 2, 3, 4]
    full = sgd.batch_schedule(5, 5, 2, seed=2)
    assert [sorted(row) for row in full] == [[0, 1, 2, 3, 4]] * 2
    for bad in (0, 6):
        msg = f"batch_size must lie in [1, n=5], got {bad}"
        with pytest.raises(ValueError, match=rf"^{re.escape(msg)}$"):
            sgd.batch_schedule(5, bad, 3, seed=0)


def test_batch_schedule_of_zero_steps_is_empty_and_draws_nothing():
    """Zero steps need zero rows: an empty (0, batch_size) array of integer row indices, drawn
    without permuting range(n) at all, so even n = 2**62 rows (a permutation of which NumPy
    cannot even allocate) costs nothing."""
    for n, bs in ((10, 4), (1, 1), (2**62, 3)):
        s = sgd.batch_schedule(n, bs, 0, seed=0)
        assert s.shape == (0, bs)
        assert np.issubdtype(s.dtype, np.integer)
    one = sgd.batch_schedule(6, 4, 1, seed=0)
    assert np.issubdtype(one.dtype, np.integer)  # and so are the indices of a real step


def test_batch_schedule_reads_epochs_consecutively():
    """n = 6, batch_size = 4, 3 steps read 12 indices: two epochs, each a permutation of 0..5,
    read consecutively (the 2nd step straddles them); the same seed gives the same schedule."""
    s = sgd.batch_schedule(6, 4, 3, seed=0)
    assert s.shape == (3, 4)
    flat = s.reshape(-1)
    assert sorted(flat[:6]) == sorted(flat[6:]) == list(range(6))
    np.testing.assert_array_equal(s, sgd.batch_schedule(6, 4, 3, seed=0))


def test_glorot_init_checks_sizes_with_the_full_message():
    """d, m and k must be positive integers (Python or NumPy); 0, a float and a bool are
    refused with a message that names the size and repeats the value."""
    good = sgd.glorot_uniform_init(np.int64(2), 3, 1, [1.0], seed=0, dtype=F64)
    assert good.W.shape == (1, 3, 2) and good.a.shape == (1, 3, 1)
    for name in ("d", "m", "k"):
        for bad in (0, -2, 2.5, 2.0, True):
            sizes = {"d": 2, "m": 3, "k": 1, name: bad}
            msg = f"{name} must be a positive integer, got {bad!r}"
            with pytest.raises(ValueError, match=rf"^{re.escape(msg)}$"):
                sgd.glorot_uniform_init(sizes["d"], sizes["m"], sizes["k"], [1.0], seed=0)


def test_glorot_init_reads_scales_as_numbers():
    """init_scales are read as float64 numbers, so scales given as text (e.g. from a CSV file or
    a command line) give the draw of the numbers themselves."""
    ref = sgd.glorot_uniform_init(4, 5, 2, [0.5, 2.0], seed=1, dtype=F64)
    txt = sgd.glorot_uniform_init(4, 5, 2, ["0.5", "2"], seed=1, dtype=F64)
    for mine, want in zip(txt.tensors(), ref.tensors()):
        torch.testing.assert_close(mine, want, rtol=0, atol=0)


def test_loss_and_dF_unknown_loss_full_message():
    F = torch.zeros((1, 2, 1), dtype=F64)
    msg = "loss must be one of ('logistic', 'cross_entropy'), got 'hinge'"
    with pytest.raises(ValueError, match=rf"^{re.escape(msg)}$"):
        sgd.loss_and_dF(F, torch.tensor([1.0, -1.0], dtype=F64), "hinge")


def test_unit_at_exactly_zero_preactivation_gets_no_gradient():
    """relu'(0) = 0 (PyTorch's autograd convention): a hidden unit with W_j = 0 and b_j = 0 has
    Z = 0 on every input, so its gradients (W_j, b_j: relu'(Z) = 0; a_j: relu(Z) = 0) vanish and
    SGD leaves it dead. The other units' gradients still match autograd."""
    X, y = toy(n=12, d=4, binary=True)
    p = sgd.glorot_uniform_init(4, 6, 1, [1.0, 0.5], seed=5, dtype=F64)
    p.W[:, 2, :] = 0.0
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    _, g = sgd.loss_and_grad(p, Xt, yt, "logistic")
    assert torch.all(g.W[:, 2, :] == 0) and torch.all(g.b[:, 2] == 0)
    assert torch.all(g.a[:, 2, :] == 0)
    assert torch.all(g.W[:, [0, 1, 3, 4, 5], :].abs().sum(dim=-1) > 0)  # the others do learn
    leaves = [t.clone().requires_grad_(True) for t in p.tensors()]
    F, _ = sgd.forward(sgd.Params(*leaves), Xt)
    Lref = torch.nn.functional.softplus(-yt * F[..., 0]).mean(dim=1)
    for mine, ref in zip(g.tensors(), torch.autograd.grad(Lref.sum(), leaves)):
        torch.testing.assert_close(mine, ref)


def test_predict_sign_ties_to_plus_one_in_the_dtype_of_F():
    """Logistic: the sign of F with F = 0 read as +1, returned as labels of F's dtype (float64
    here, not the default float32); cross-entropy: the arg-max class."""
    F = torch.tensor([[[-1.5], [0.0], [2.0], [-0.0]]], dtype=F64)
    pred = sgd.predict(F, "logistic")
    assert pred.dtype == F64
    torch.testing.assert_close(pred, torch.tensor([[-1.0, 1.0, 1.0, 1.0]], dtype=F64))
    Fk = torch.tensor([[[0.1, 0.7, 0.2], [0.9, -1.0, 0.0]]], dtype=F64)
    np.testing.assert_array_equal(sgd.predict(Fk, "cross_entropy").numpy(), [[1, 0]])


def test_one_step_is_a_minibatch_gradient_step():
    X, y = toy(binary=True)
    r = sgd.train(
        X,
        y,
        X,
        y,
        config=sgd.SGDConfig(
            init_scales=[1.0, 0.1],
            width=8,
            loss="logistic",
            lr=0.3,
            batch_size=6,
            steps=1,
            seed=4,
            dtype="float64",
            record_steps=[0, 1],
        ),
    )
    p0 = sgd.glorot_uniform_init(5, 8, 1, [1.0, 0.1], seed=4, dtype=F64)
    idx = sgd.batch_schedule(len(y), 6, 1, seed=4)[0]
    _, g = sgd.loss_and_grad(p0, torch.as_tensor(X[idx]), torch.as_tensor(y[idx]), "logistic")
    for w0, gw, w1 in zip(p0.tensors(), g.tensors(), r.params.tensors()):
        torch.testing.assert_close(w1, w0 - 0.3 * gw)
    np.testing.assert_array_equal(r.steps, [0, 1])
    torch.testing.assert_close(
        torch.as_tensor(r.history["stable_rank"][1]), metrics.stable_rank(r.params.W)
    )


def test_history_shapes_accuracy_and_learning():
    X, y = toy(n=200, binary=False, k=3)
    r = sgd.train(
        X[:150],
        y[:150],
        X[150:],
        y[150:],
        config=sgd.SGDConfig(
            init_scales=[1.0, 0.05],
            width=32,
            loss="cross_entropy",
            lr=0.2,
            batch_size=16,
            steps=300,
            seed=0,
            record_steps=[0, 100, 300],
        ),
    )
    for k in ("stable_rank", "train_acc", "test_acc", "train_loss", "test_loss"):
        assert r.history[k].shape == (3, 2)
    # both learn the linear 3-class rule: far above chance (1/3)
    assert np.all(r.history["train_acc"][-1] > 0.8) and np.all(r.history["test_acc"][-1] > 0.7)
    assert np.all(r.history["train_loss"][-1] < r.history["train_loss"][0])
    # at step 0 both configurations share one draw: equal stable rank (scale-invariant)
    np.testing.assert_allclose(
        r.history["stable_rank"][0, 0], r.history["stable_rank"][0, 1], rtol=1e-5
    )
    F, _ = sgd.forward(r.params, torch.as_tensor(X[150:], dtype=torch.float32))
    acc = (F.argmax(-1) == torch.as_tensor(y[150:])).double().mean(dim=1).numpy()
    np.testing.assert_allclose(r.history["test_acc"][-1], acc)


def test_batched_equals_separate_runs_and_reproducible():
    X, y = toy(n=80, binary=True)
    kw = dict(
        width=16,
        loss="logistic",
        lr=0.1,
        batch_size=8,
        steps=50,
        seed=1,
        dtype="float64",
        record_steps=[0, 25, 50],
    )
    both = sgd.train(X, y, X, y, config=sgd.SGDConfig(init_scales=[1.0, 0.02], **kw))
    again = sgd.train(X, y, X, y, config=sgd.SGDConfig(init_scales=[1.0, 0.02], **kw))
    for key in both.history:
        np.testing.assert_array_equal(both.history[key], again.history[key])
    for i, s in enumerate([1.0, 0.02]):
        one = sgd.train(X, y, X, y, config=sgd.SGDConfig(init_scales=[s], **kw))
        for key in both.history:
            np.testing.assert_allclose(both.history[key][:, i], one.history[key][:, 0], rtol=1e-10)


def test_float32_default_and_device():
    X, y = toy(binary=True)
    r = sgd.train(
        X, y, X, y, config=sgd.SGDConfig(width=4, loss="logistic", steps=2, record_steps=[2])
    )
    assert r.params.W.dtype == torch.float32
    assert r.device == ("cuda" if torch.cuda.is_available() else "cpu")


def test_threads_restored():
    before = torch.get_num_threads()
    X, y = toy(binary=True)
    sgd.train(
        X,
        y,
        X,
        y,
        config=sgd.SGDConfig(width=4, loss="logistic", steps=2, record_steps=[2], num_threads=1),
    )
    assert torch.get_num_threads() == before


def test_divergence_names_step_and_quantity():
    X, y = toy(binary=True)
    with pytest.raises(DivergenceError) as err:
        sgd.train(
            X * 1e3,
            y,
            X,
            y,
            config=sgd.SGDConfig(
                width=16, loss="logistic", lr=1e4, batch_size=8, steps=50, seed=0, record_steps=[0]
            ),
        )
    msg = str(err.value)
    assert "step" in msg and "minibatch loss" in msg
    assert err.value.step >= 1
    Xn = X.copy()
    Xn[3, 0] = np.nan
    with pytest.raises(DivergenceError, match="stable_rank|train_acc|loss"):
        sgd.train(
            Xn,
            y,
            X,
            y,
            config=sgd.SGDConfig(
                width=4, loss="logistic", batch_size=60, steps=3, record_steps=[0, 3]
            ),
        )


def test_bad_arguments():
    X, y = toy(binary=True)
    with pytest.raises(ValueError, match="labels in"):
        sgd.train(X, y + 1, X, y, config=sgd.SGDConfig(loss="logistic", steps=1))
    with pytest.raises(ValueError, match="loss must be"):
        sgd.train(X, y, X, y, config=sgd.SGDConfig(loss="hinge", steps=1))
    with pytest.raises(ValueError, match="lr"):
        sgd.train(X, y, X, y, config=sgd.SGDConfig(loss="logistic", lr=-1.0, steps=1))
    with pytest.raises(ValueError, match="record_steps"):
        sgd.train(X, y, X, y, config=sgd.SGDConfig(loss="logistic", steps=3, record_steps=[5]))
    Xc, yc = toy(binary=False)
    with pytest.raises(ValueError, match="integer classes"):
        sgd.train(
            Xc, yc, Xc, yc, config=sgd.SGDConfig(loss="cross_entropy", num_classes=2, steps=1)
        )


def test_separation_and_rise():
    tr = np.array([0.5, 0.8, 0.95, 1.0, 1.0, 1.0])
    te = np.array([0.5, 0.8, 0.92, 0.9, 0.91, 0.9])  # gap 0.03 at index 2: below 3 s.e.
    thr = sgd.accuracy_gap_threshold(tr, te, 300, 1000)
    assert thr[0] == pytest.approx(3 * math.sqrt(0.25 / 300 + 0.25 / 1000))
    assert thr[-1] == pytest.approx(3 * math.sqrt((1 / 300) * (299 / 300) / 300 + 0.09 / 1000))
    assert sgd.separation_index(tr, te, 300, 1000) == 3
    assert sgd.separation_index(tr, tr, 300, 1000) is None
    # a gap that closes again is not a separation
    assert sgd.separation_index([0.5, 1.0, 0.9], [0.5, 0.8, 0.9], 300, 1000) is None
    assert sgd.rise_index([5, 2, 1, 1.5, 2.5, 3]) == 4
    assert sgd.rise_index([5, 2, 1, 1.5]) is None
    assert sgd.halving_index([10, 6, 4.9, 3]) == 2
    assert sgd.halving_index([10, 6, 5, 5.5]) is None  # never below half: the answer is no
    assert sgd.near_min_index([10, 3, 1.05, 1.02, 1.0], 1.1) == 2
    assert sgd.near_min_index([10, 3, 2, 1.5, 1.0], 1.1) == 4  # only the minimum itself


def test_accuracy_gap_threshold_floors_each_variance_at_one_error():
    """Worked example with n_train = 4, n_test = 5: a score of 0 or 1 counts as one error (or
    one success) in the sample, so its variance is (1/n)(1 - 1/n)/n, not 0; 0.5 and 0.6 are
    left alone."""
    thr = sgd.accuracy_gap_threshold([0.0, 0.5, 1.0], [0.0, 0.6, 1.0], 4, 5)
    edge = (1 / 4) * (3 / 4) / 4 + (1 / 5) * (4 / 5) / 5  # 3/64 + 4/125
    mid = 0.5 * 0.5 / 4 + 0.6 * 0.4 / 5  # 1/16 + 6/125
    np.testing.assert_allclose(thr, 3 * np.sqrt([edge, mid, edge]), rtol=1e-12)
    assert thr[0] == pytest.approx(3 * math.sqrt(3 / 64 + 4 / 125), rel=1e-12)


def test_separation_index_z_and_where_the_run_of_excess_starts():
    """n = 100 each, train 0.9 and test 0.72: the standard error is sqrt((0.09 + 0.2016) / 100)
    = 0.054, so the gap 0.18 is 3.33 s.e.: above 3 s.e. (the default), below 4 s.e."""
    assert math.sqrt((0.9 * 0.1 + 0.72 * 0.28) / 100) == pytest.approx(0.054)
    assert sgd.separation_index([0.9], [0.72], 100, 100) == 0
    assert sgd.separation_index([0.9], [0.72], 100, 100, z=4.0) is None
    assert sgd.separation_index([0.9], [0.72], 100, 100, z=3.3) == 0
    # z = 0: any strict excess counts, and equal accuracies (gap 0) are not an excess
    assert sgd.separation_index([0.5, 0.7], [0.5, 0.7], 100, 100, z=0.0) is None
    assert sgd.separation_index([0.5, 0.7], [0.5, 0.69], 100, 100, z=0.0) == 1
    # the answer is the start of the final run of records above the threshold
    hi, lo = 1.0, 0.5  # gap 0.5, far above 3 s.e. with n = 1000
    cases = {
        (hi, hi, hi, hi): 0,  # above from the first record
        (lo, hi, hi): 1,
        (lo, lo, hi): 2,  # only the last record
        (hi, lo, hi): 2,  # a gap that closed once restarts the run
        (hi,): 0,
    }
    for train, start in cases.items():
        assert sgd.separation_index(list(train), [0.5] * len(train), 1000, 1000) == start


def test_near_min_and_rise_ties_and_default_factor():
    """Ties with the factor times the minimum: near_min_index counts them (<=), rise_index does
    not (a rise exceeds the factor); near_min_index's default factor is 1.1."""
    assert sgd.near_min_index([4.0, 2.0, 1.0], 2.0) == 1  # 2 = 2 * 1
    assert sgd.rise_index([2.0, 1.0, 2.0], 2.0) is None  # 2 = 2 * 1 is no rise
    assert sgd.rise_index([2.0, 1.0, 2.0, 2.5], 2.0) == 3
    assert sgd.near_min_index([10.0, 1.5, 1.0]) == 2  # 1.5 is not within 1.1 of 1
    assert sgd.near_min_index([10.0, 1.05, 1.0]) == 1


def test_history_readers_take_numbers_as_text():
    """The readers read their inputs as floats (np.asarray(., float)), so numbers given as text,
    e.g. read from a CSV file, give the answers of the numbers themselves."""
    thr = sgd.accuracy_gap_threshold(["0.5"], ["0.6"], 4, 5)
    np.testing.assert_allclose(thr, [3 * math.sqrt(1 / 16 + 6 / 125)], rtol=1e-12)
    assert sgd.separation_index(["0.9"], ["0.72"], 100, 100) == 0
    assert sgd.rise_index(["5", "2", "1", "1.5", "2.5", "3"]) == 4
    assert sgd.halving_index(["10", "6", "4.9", "3"]) == 2
    assert sgd.near_min_index(["10", "3", "1.05", "1.02", "1.0"], 1.1) == 2


def test_summarize_rows():
    X, y = toy(n=120, binary=True)
    r = sgd.train(
        X[:80],
        y[:80],
        X[80:],
        y[80:],
        config=sgd.SGDConfig(
            init_scales=[0.05, 1.0],
            width=16,
            loss="logistic",
            lr=0.2,
            batch_size=8,
            steps=200,
            seed=0,
        ),
    )
    rows = sgd.summarize(r, 80, 40, z=3.0, rise_factor=1.1)
    assert [row["init_scale"] for row in rows] == [0.05, 1.0]
    for b, row in enumerate(rows):
        sr = r.history["stable_rank"][:, b]
        assert row["min_stable_rank"] == pytest.approx(sr.min())
        assert row["step_of_min"] == r.steps[np.argmin(sr)]
        assert row["initial_stable_rank"] == pytest.approx(sr[0])
        assert row["max_rise_after_min"] >= 1.0
        assert row["separation_step"] is None or row["separation_step"] in r.steps
        assert row["rise_step"] is None or row["rise_step"] > row["step_of_min"]
        half = sgd.halving_index(sr)
        assert row["halving_step"] == (None if half is None else r.steps[half])
        assert row["step_near_min"] <= row["step_of_min"]


@pytest.mark.parametrize("check_every", [1, 7, 100])
def test_divergence_found_late_is_the_one_a_per_step_test_finds(check_every):
    """The divergence test is read every ``check_every`` steps only; the error (step,
    quantity, value, configuration) is the one a test at every step raises."""
    X, y = toy(binary=True)
    kw = dict(
        init_scales=[0.01, 1.0, 30.0],
        width=16,
        loss="logistic",
        lr=30.0,
        batch_size=8,
        steps=60,
        seed=0,
        record_steps=[0],
        max_loss=50.0,
    )
    with pytest.raises(DivergenceError) as every:
        sgd.train(X * 10, y, X, y, config=sgd.SGDConfig(check_every=1, **kw))
    with pytest.raises(DivergenceError) as late:
        sgd.train(X * 10, y, X, y, config=sgd.SGDConfig(check_every=check_every, **kw))
    a, b = every.value, late.value
    assert (a.step, a.quantity, a.config) == (b.step, b.quantity, b.config)
    assert a.value == b.value and a.value > 50.0 and "minibatch loss" in a.quantity


def test_check_every_validated():
    X, y = toy(binary=True)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="check_every"):
            sgd.train(
                X, y, X, y, config=sgd.SGDConfig(width=4, loss="logistic", steps=2, check_every=bad)
            )


@pytest.mark.parametrize("loss", ["logistic", "cross_entropy"])
def test_sgd_step_runs_on_meta_without_host_reads(loss):
    """One SGD step as ``train`` runs it (gather the minibatch, loss and gradient, divergence
    test, update), on PyTorch's meta device under the guard: no host read, no device mix."""
    from twolayer.core.device import DeviceGuard
    from twolayer.paper_a.trainer import DivergenceMonitor

    meta = torch.device("meta")
    k = 1 if loss == "logistic" else 3
    p = sgd.glorot_uniform_init(5, 8, k, [0.1, 1.0], seed=0, device=meta)
    X = torch.empty((60, 5), device=meta)
    y = (
        torch.empty(60, device=meta)
        if loss == "logistic"
        else torch.empty(60, dtype=torch.long, device=meta)
    )
    sched = torch.empty((4, 8), dtype=torch.long, device=meta)
    mon = DivergenceMonitor(2, torch.float32, meta, nonfinite_first=False)
    with DeviceGuard(meta) as guard, torch.no_grad():
        for t in range(2):
            idx = sched[t]
            L, g = sgd.loss_and_grad(p, X[idx], y[idx], loss)
            mon.update(t, L, torch.isfinite(L) & (L <= 1e4))
            for w, gw in zip(p.tensors(), g.tensors()):
                w.sub_(gw, alpha=0.1)
    assert L.shape == (2,) and "mm" in " ".join(guard.ops)


def test_settings_come_as_one_config():
    """The settings are one named object: a dict or loose keywords are refused."""
    X, y = np.zeros((4, 3)), np.array([1, -1, 1, -1])
    with pytest.raises(TypeError, match="SGDConfig"):
        sgd.train(X, y, X, y, config={"loss": "logistic", "steps": 1})
    with pytest.raises(TypeError):
        sgd.train(X, y, X, y, loss="logistic")  # no loose keywords
