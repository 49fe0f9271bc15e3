"""``twolayer.paper_a.chapters.real_images`` (Paper A, Figure 2): its parameters, the page's
parameters cell, what the page states about its setup recomputed by independent routes from
what ran (data, initialization law, loss, step size, widths, steps), and the gates, the
stand-in marking and the paper's numbers of its checks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from failing_cases.paper_a_real_images import planted

from twolayer.core import seeds
from twolayer.core.params import ParameterError
from twolayer.paper_a import sgd
from twolayer.paper_a.chapters import real_images as ch
from twolayer.paper_a.trainer import log_spaced_steps

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "name, value, words",
    [
        ("width", 1, "width"),
        ("dataset", "mnist", "dataset"),
        ("init_scales", [0.02, 0.2], "init_scales"),  # no Glorot scale 1
        ("init_scales", [0.05, 1.0], "init_scales"),  # lacks small_scale 0.02
        ("init_scales", [1.0, 0.02], "init_scales"),  # not increasing
        ("small_scale", 1.0, "small_scale"),
        ("rise_factor", 1.0, "rise_factor"),
        ("lr", 0.0, "lr"),
        ("archive_md5", "xyz", "archive_md5"),
        ("min_rank_ratio", 0.5, "min_rank_ratio"),
    ],
)
def test_a_bad_parameter_stops_naming_it(name, value, words):
    with pytest.raises(ParameterError, match=words):
        ch.SPEC.params("smoke", **{name: value})


def test_the_profiles_derived_ratio_bound():
    assert ch.SPEC.params("smoke").min_rank_ratio == 10.1
    assert ch.SPEC.params("book").min_rank_ratio == 3.9
    # the paper profile: the paper's 74.0 / 3.25 over the tolerance factor 2
    assert ch.SPEC.params("paper").min_rank_ratio == pytest.approx(74.0 / 3.25 / 2, abs=0.01)
    assert ch.SPEC.params("smoke", min_rank_ratio=5.0).min_rank_ratio == 5.0


# --- the setup, recomputed from what ran ----------------------------------------------------------

TINY = dict(n_train=60, n_test=40, width=16, steps=10, batch_size=8, record_points=10)


@pytest.fixture(scope="module")
def tiny():
    P = ch.SPEC.params("smoke", init_scales=[0.02, 1.0], **TINY)
    split = ch.load(P)
    run = ch.train(P, split)
    return P, split, run


def test_the_data_are_the_digits_split_as_stated(tiny):
    P, split, _ = tiny
    from sklearn.datasets import load_digits

    X, digit = load_digits(return_X_y=True)
    assert split.X_train.shape == (P.n_train, 64) and split.X_test.shape == (P.n_test, 64)
    # pixels scaled to [0, 1] (the digits' range is 0..16), rows of the bundled set
    raw = {tuple(r): int(c) for r, c in zip(X / 16.0, digit)}
    for Xs, ys in ((split.X_train, split.y_train), (split.X_test, split.y_test)):
        assert Xs.min() >= 0 and Xs.max() <= 1
        labels = [raw[tuple(r)] for r in Xs]
        # even digits +1, odd -1 (the page's two-class task)
        assert np.array_equal(ys, np.where(np.array(labels) % 2 == 0, 1.0, -1.0))
    # train and test from the same set, disjoint (up to the set's exact duplicate images)
    tr = {tuple(r) for r in split.X_train}
    shared = sum(tuple(r) in tr for r in split.X_test)
    assert shared <= len(X) - len(raw)


def test_widths_runs_and_recorded_steps(tiny):
    P, split, run = tiny
    W = run.params.W
    assert tuple(W.shape) == (len(P.init_scales), P.width, 64)  # one run per scale, m x d
    assert run.steps[0] == 0 and run.steps[-1] == P.steps
    assert len(run.steps) <= P.record_points
    assert np.all(np.diff(run.steps) > 0)
    # one row per record and one column per scale
    assert run.history["stable_rank"].shape == (len(run.steps), len(P.init_scales))


def _first_layer_init(P, d):
    """The initialization by the page's description: W from U(-r, r), r = sqrt(6/(d+m)), a
    from U(-r2, r2), r2 = sqrt(6/(m+1)), both times the scale; biases zero."""
    g = torch.Generator().manual_seed(int(seeds.derive(P.seed, "sgd")))
    UW = torch.rand((P.width, d), generator=g, dtype=torch.float64) * 2 - 1
    Ua = torch.rand((P.width, 1), generator=g, dtype=torch.float64) * 2 - 1
    return UW.numpy(), Ua.numpy()


def test_initialization_law_and_scale(tiny):
    # with a vanishing step size the final weights are the initial ones
    P0 = ch.SPEC.params("smoke", init_scales=[0.02, 1.0], lr=1e-12, **TINY)
    run = ch.train(P0, ch.load(P0))
    W = run.params.W.double().numpy()
    a = run.params.a.double().numpy()
    r = math.sqrt(6 / (64 + P0.width))
    r2 = math.sqrt(6 / (P0.width + 1))
    for k, s in enumerate(P0.init_scales):
        # Glorot uniform times the scale: entries within (-s r, s r), spread over the range
        assert np.abs(W[k]).max() <= s * r * (1 + 1e-6)
        assert np.abs(W[k]).max() >= 0.95 * s * r
        assert np.var(W[k]) == pytest.approx((s * r) ** 2 / 3, rel=0.15)
        assert np.abs(a[k]).max() <= s * r2 * (1 + 1e-6)
        assert np.allclose(run.params.b[k].numpy(), 0, atol=1e-9)
    # the same draw for every scale, multiplied by it
    assert np.allclose(W[0] / 0.02, W[1], rtol=1e-5, atol=1e-7)


def test_recorded_loss_is_the_logistic_loss_of_the_initial_weights(tiny):
    P, split, run = tiny
    P0 = ch.SPEC.params("smoke", init_scales=[0.02, 1.0], lr=1e-12, **TINY)
    run0 = ch.train(P0, split)
    W = run0.params.W.double().numpy()
    b = run0.params.b.double().numpy()
    a = run0.params.a.double().numpy()
    c = run0.params.c.double().numpy()
    for k in range(2):
        F = np.maximum(split.X_train @ W[k].T + b[k], 0) @ a[k][:, 0] + c[k][0]
        loss = np.mean(np.log1p(np.exp(-split.y_train * F)))
        assert run.history["train_loss"][0, k] == pytest.approx(loss, rel=1e-5)
        acc = np.mean(np.where(F >= 0, 1.0, -1.0) == split.y_train)
        assert run.history["train_acc"][0, k] == pytest.approx(acc)


def test_sgd_steps_use_the_stated_step_size_and_minibatches(tiny):
    # replay the run with autograd: W <- W - lr * grad of the mean logistic loss on each
    # minibatch of the seeded schedule (every epoch a permutation of the training images)
    P, split, run = tiny
    seed = seeds.derive(P.seed, "sgd")
    sched = sgd.batch_schedule(P.n_train, P.batch_size, P.steps, seed)
    per_epoch = P.n_train // P.batch_size
    first_epoch = sched[:per_epoch].ravel()
    assert len(set(first_epoch.tolist())) == first_epoch.size  # no image twice in an epoch
    P0 = ch.SPEC.params("smoke", init_scales=[0.02, 1.0], lr=1e-12, **TINY)
    p0 = ch.train(P0, split).params
    X = torch.as_tensor(split.X_train, dtype=torch.float64)
    y = torch.as_tensor(split.y_train, dtype=torch.float64)
    for k in range(2):
        W, b, a, c = (t[k].double().clone().requires_grad_(True) for t in (p0.W, p0.b, p0.a, p0.c))
        for t in range(P.steps):
            idx = torch.as_tensor(sched[t])
            F = torch.relu(X[idx] @ W.T + b) @ a[:, 0] + c[0]
            L = torch.nn.functional.softplus(-y[idx] * F).mean()
            grads = torch.autograd.grad(L, (W, b, a, c))
            with torch.no_grad():
                for w, g in zip((W, b, a, c), grads):
                    w -= P.lr * g
        assert np.allclose(W.detach().numpy(), run.params.W[k].double().numpy(), atol=2e-6)
        assert np.allclose(a.detach().numpy(), run.params.a[k].double().numpy(), atol=2e-6)


def test_compute_summarizes_the_recorded_history():
    P = ch.SPEC.params("smoke", init_scales=[0.02, 1.0], **TINY)
    R = ch.compute(P)
    assert R.dataset == "digits" and R.stand_in
    assert (R.n_train, R.n_test, R.d, R.num_classes) == (60, 40, 64, 2)
    assert R.total_steps == P.steps and R.steps[-1] == P.steps
    sr = R.stable_rank
    for i, row in enumerate(R.rows):
        assert row["min_stable_rank"] == sr[:, i].min()
        assert row["initial_stable_rank"] == sr[0, i]
    assert R.ratio == R.rows[1]["min_stable_rank"] / R.rows[0]["min_stable_rank"]


# --- the checks on planted histories --------------------------------------------------------------


def _planted(P, default, small, *, sep_at=None, d=64, n_train=300, n_test=500):
    """:func:`planted` with the default's curve and the small scale's."""
    curves = {1.0: default, P.small_scale: small}
    return planted(P, curves, sep_at=sep_at, n_train=n_train, n_test=n_test, d=d)


def _drop(start, floor, t_half):
    return lambda t: floor + (start - floor) * np.exp(-np.log(2) * np.asarray(t, float) / t_half)


PAPER = ch.SPEC.params("paper")


def _cifar(default, small, sep_at=None):
    return _planted(PAPER, default, small, sep_at=sep_at, d=3072, n_train=50_000, n_test=10_000)


def test_hypotheses_are_decided_by_the_parameters():
    assert not ch.cifar10_long_run(ch.SPEC.params("book")).holds
    assert not ch.cifar10_long_run(ch.SPEC.params("smoke", dataset="cifar10")).holds
    assert ch.cifar10_long_run(ch.SPEC.params("book", dataset="cifar10")).holds
    # "long" is the run's length, not the profile's name: the book profile cut to 500 steps
    # (where a tenth, 50 steps, ends before the halving) is short
    assert not ch.cifar10_long_run(ch.SPEC.params("book", dataset="cifar10", steps=500)).holds
    assert ch.long_run(ch.SPEC.params("smoke", steps=ch.LONG_RUN_STEPS))
    assert not ch.long_run(ch.SPEC.params("book", steps=ch.LONG_RUN_STEPS - 1))
    assert ch.cifar10_at_paper_scale(PAPER).holds
    off = ch.cifar10_at_paper_scale(ch.SPEC.params("paper", steps=10**5))
    assert not off.holds and "steps" in off.reason
    assert not ch.cifar10_at_paper_scale(ch.SPEC.params("book", dataset="cifar10")).holds


def test_default_late_passes_a_late_curve_and_fails_an_early_one():
    small = _drop(258, 3.25, 2e3)
    late = _cifar(_drop(258, 74, 3e5), small)
    claim = ch.default_rank_halves_late(PAPER, late)
    assert claim.outcome() is True and claim.evaluate().value >= 0.1
    # a curve that loses most of its rank in the first 2% of the run and then creeps down
    # to its minimum at the last record (the old check, "minimum in the second half",
    # passed it)
    early = _cifar(lambda t: _drop(258, 90, 4000)(t) - 16 * np.asarray(t) / 1e6, small)
    assert int(np.argmin(early.stable_rank[:, early.i_def])) == len(early.steps) - 1
    assert ch.default_rank_halves_late(PAPER, early).outcome() is False
    # never halving is no reduction at all
    flat = _cifar(lambda t: np.full(np.shape(t), 258.0), small)
    assert ch.default_rank_halves_late(PAPER, flat).outcome() is False
    # on the stand-in it does not apply
    book = ch.SPEC.params("book")
    R = _planted(book, _drop(35, 8, 400), _drop(35, 1.05, 100))
    assert ch.default_rank_halves_late(book, R).outcome() is None


def test_paper_numbers_hold_a_run_like_the_papers():
    R = _cifar(
        _drop(258, 74, 3e5),
        lambda t: np.where(np.asarray(t) < 4e5, _drop(258, 3.25, 2e3)(t), 12.0),
        sep_at=3e5,
    )
    assert ch.small_init_min_rank_ratio_as_paper(PAPER, R).outcome() is True
    assert ch.small_init_rank_rises_above_10(PAPER, R).outcome() is True
    assert ch.small_init_rank_rises(PAPER, R).outcome() is True
    assert ch.small_init_rank_rises_only_after_separation(PAPER, R).outcome() is True
    # the spread-derived separation does not apply there (the paper's number replaces it)
    assert ch.small_init_min_rank_far_below_default(PAPER, R).outcome() is None
    # a floor that is not below 10 cannot rise "above 10"
    high = _cifar(
        _drop(258, 200, 3e5), lambda t: np.where(np.asarray(t) < 4e5, _drop(258, 11, 2e3)(t), 15.0)
    )
    assert ch.small_init_rank_rises_above_10(PAPER, high).outcome() is False


def test_details_say_stand_in_exactly_when_the_data_are_not_cifar10():
    book = ch.SPEC.params("book")
    R = _planted(book, _drop(35, 8, 400), _drop(35, 1.05, 100))
    claims = ch.setup_checks(book, R) + ch.figure2_checks(book, R)
    claims.append(ch.min_rank_grows_with_scale(book, R))
    assert all(c.detail.startswith("digits stand-in:") for c in claims)
    Rc = _cifar(_drop(258, 74, 3e5), _drop(258, 3.25, 2e3))
    claims = ch.setup_checks(PAPER, Rc) + ch.figure2_checks(PAPER, Rc)
    assert not any(c.detail.startswith("digits stand-in") for c in claims)


def test_the_paper_table_shows_the_papers_numbers_beside_the_runs():
    book = ch.SPEC.params("book")
    R = _planted(book, _drop(35, 8, 400), _drop(35, 1.05, 100))
    t = ch.paper_table(book, R)
    paper = t["paper (CIFAR-10, 10^6 steps)"]
    run = t["this run (digits, 30000 steps)"]
    assert paper[:3] == ["74", "3.25", "22.8"] and paper[3] == "above 10"
    assert float(run[0]) == pytest.approx(R.row_def["min_stable_rank"], rel=1e-2)
    assert float(run[1]) == pytest.approx(R.row_small["min_stable_rank"], rel=1e-2)
    assert float(run[2]) == pytest.approx(R.ratio, rel=1e-2)
    sr_small = R.stable_rank[:, R.i_small]
    peak = sr_small[int(np.argmin(sr_small)) :].max()  # the largest SR after the minimum
    assert float(run[3]) == pytest.approx(peak, rel=1e-2)


def test_scale_check_uses_the_strict_leave_one_out_slope():
    # slopes between pairs: (0.02, 0.2) flat, (0.2, 1) steep: the overall slope is positive
    # but leaving the largest scale out gives 0
    smoke = ch.SPEC.params("smoke")
    steps = log_spaced_steps(smoke.steps, smoke.record_points)
    mins = {0.02: 2.0, 0.2: 2.0, 1.0: 13.0}
    sr = np.stack([np.maximum(np.full(len(steps), mins[s]), 0) for s in smoke.init_scales], 1)
    sr[0] = 35.0
    acc = np.full_like(sr, 0.9)
    R = ch.from_history(smoke, steps, sr, acc, test_acc=acc, n_train=300, n_test=500, d=64)
    assert ch.scale_slope(R) > 0
    assert ch.min_rank_grows_with_scale(smoke, R).outcome() is False


def test_takeaways_follow_the_checks():
    book = ch.SPEC.params("book")
    # the stand-in's shape: the default halves within the first tenth
    R = _planted(book, _drop(35, 8, 400), _drop(35, 1.05, 100))
    checks = {
        "default_rank_halves_late": None,
        "small_init_rank_rises": None,
        "small_init_rank_rises_only_after_separation": None,
    }
    t = ch.takeaways(book, R, checks)["takeaway_default_and_rise"]
    assert "halves early" in t and "CIFAR-10 only" in t and "as the paper says" not in t
    checks = {
        "default_rank_halves_late": True,
        "small_init_rank_rises": True,
        "small_init_rank_rises_only_after_separation": True,
    }
    t = ch.takeaways(PAPER, _cifar(_drop(258, 74, 3e5), _drop(258, 3.25, 2e3)), checks)
    assert "comes down late" in t["takeaway_default_and_rise"]
