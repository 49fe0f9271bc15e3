"""The module of chapter ``paper_b/samples`` (:mod:`twolayer.paper_b.chapters.samples`): its
parameters, what the page states about its setup (recomputed by another route at a tiny size),
and the exponent's standard error and drift against a simulation and the population."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pytest

from twolayer.core import seeds, stats
from twolayer.core.params import ParameterError
from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import population as pop
from twolayer.paper_b import samples as smp
from twolayer.paper_b import teacher as tmod
from twolayer.paper_b.chapters import samples as chapter

ROOT = Path(__file__).resolve().parents[2]


# --- parameters -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("m1", 41),  # odd
        ("m", 41),
        ("ds", [16, 8, 32]),  # not increasing
        ("ratios", [1, 4]),  # fewer than 3
        ("reps", 0),
        ("lam0", 0.0),
        ("eta", 1.5),
        ("epochs", 0),
        ("mc_n", 10),
    ],
)
def test_bad_parameter_is_named(name, value):
    with pytest.raises(ParameterError, match=repr(name)):
        chapter.SPEC.params("smoke", **{name: value})


def test_profiles_fill_the_open_parameters():
    P = chapter.SPEC.params("book", m1=200)
    assert (P.ds, P.reps, P.m1, P.d_full, P.m) == ([16, 32, 64], 3, 200, [8, 12], 40)


# --- setup fidelity at a tiny size -------------------------------------------------------------


@functools.cache
def tiny():
    P = chapter.SPEC.params(
        "smoke",
        ds=[4, 6, 8],
        ratios=[0.5, 1, 2],
        reps=2,
        m1=6,
        mc_n=2000,
        d_full=[5],
        full_ratios=[0.5, 2],
        m=6,
        epochs=1,
        steps=10,
    )
    return P, chapter.compute(P)


def test_teacher_is_the_prototype():
    # three unit neurons at 60 degrees in a plane, a* = (1, -1, 1)
    t = tmod.prototype(9, 3)
    np.testing.assert_array_equal(t.a, [1.0, -1.0, 1.0])
    np.testing.assert_allclose(np.linalg.norm(t.W, axis=1), 1.0, atol=1e-12)
    assert np.linalg.matrix_rank(t.W, tol=1e-9) == 2
    cos = t.W @ t.W.T
    np.testing.assert_allclose([cos[0, 1], cos[1, 2], cos[0, 2]], [0.5, 0.5, -0.5], atol=1e-12)


def test_samples_are_gaussian_with_population_preprocessing():
    # x ~ N(0, I); y~ = y - alpha_* - beta_*.x with alpha_* = E[y], beta_* = E[y x]: y~ has mean
    # 0 and no linear part, and y = sum a*_j relu(w*_j.x)
    t = tmod.prototype(5, 0)
    X, y = smp.draw(t, 400_000, 1)
    assert np.abs(X.mean(0)).max() < 0.01 and np.abs(np.cov(X.T) - np.eye(5)).max() < 0.01
    f_star = np.maximum(X @ t.W.T, 0) @ t.a
    assert abs(y.mean()) < 4 * y.std() / math.sqrt(len(y))
    assert np.abs(X.T @ y / len(y)).max() < 5 * y.std() / math.sqrt(len(y))
    resid = y - f_star  # the removed affine part: constant and linear in x
    coef, *_ = np.linalg.lstsq(np.c_[np.ones(len(X)), X], resid, rcond=None)
    np.testing.assert_allclose(np.c_[np.ones(len(X)), X] @ coef, resid, atol=1e-9)


def test_initialization_is_symmetric_and_zero():
    # a_i = +-sqrt(d), ||w_i|| = 1 / sqrt(m), pairs (a, w), (-a, w): f = 0 at theta^(0)
    d, m = 6, 8
    net0 = alg.symmetric_init(d, m, 5)
    np.testing.assert_allclose(np.abs(net0.a), math.sqrt(d))
    np.testing.assert_allclose(np.linalg.norm(net0.W, axis=1), 1 / math.sqrt(m))
    np.testing.assert_allclose(net0.a[: m // 2], -net0.a[m // 2 :])
    X = np.random.default_rng(0).standard_normal((100, d))
    np.testing.assert_allclose(net0(X), 0, atol=1e-12)


def test_gradient_error_is_the_pages_formula():
    # the empirical gradient (2/n) sum_s (f(x_s) - y~_s) a_i 1{w_i.x_s > 0} x_s, written out
    # per sample and neuron, against the population gradient estimated by Monte Carlo with
    # the same formula on many inputs: the recorded error is their relative distance
    P, R = tiny()
    i, j, k = 1, 2, 0
    d, n = P.ds[i], int(R.study["n"][i, j])
    assert n == max(round(P.ratios[j] * d * d), 2)
    t = tmod.prototype(d, seeds.derive(P.seed, "teacher"))
    net0 = alg.symmetric_init(d, P.m1, seeds.derive(P.seed, "init", d, k))
    X, y = smp.draw(t, n, seeds.derive(P.seed, "samples", d, k, j))

    def grad_W(X, y):
        G = np.zeros_like(net0.W)
        for x, yy in zip(X, y):
            r = float(net0.a @ np.maximum(net0.W @ x, 0)) - yy
            for q in range(len(net0.a)):
                if net0.W[q] @ x > 0:
                    G[q] += 2 * r * net0.a[q] * x
        return G / len(X)

    Gh = grad_W(X, y)
    Xb, yb = smp.draw(t, 1_500_000, 99)
    act = (Xb @ net0.W.T > 0) * net0.a  # (N, m)
    Gpop = 2 * (act * (-yb)[:, None]).T @ Xb / len(Xb)  # f = 0 at theta^(0)
    err = np.linalg.norm(Gh - Gpop) / np.linalg.norm(Gpop)
    assert R.study["err"][i, j, k] == pytest.approx(err, rel=0.03)


def test_population_loss_is_the_closed_form():
    # the reported population loss is the closed form; check it against Monte Carlo on a net
    t = tmod.prototype(5, 0)
    rng = np.random.default_rng(2)
    net = pop.Net(rng.standard_normal(6) * 0.5, rng.standard_normal((6, 5)) * 0.5, 0.1, None)
    net.beta = rng.standard_normal(5) * 0.1
    X, y = smp.draw(t, 1_000_000, 3)
    sq = (net(X) - y) ** 2
    assert abs(pop.loss(net, t) - sq.mean()) < 4 * sq.std() / math.sqrt(len(sq))
    assert smp.empirical_loss(net, X[:100], y[:100]) == pytest.approx(np.mean(sq[:100]))


def test_end_to_end_rows_are_the_pages_grid():
    P, R = tiny()
    assert [(row["d"], row["n / d^2"]) for row in R.rows] == [
        (d, r) for d in P.d_full for r in P.full_ratios
    ]
    for row in R.rows:
        assert row["n"] == round(row["n / d^2"] * row["d"] ** 2)
        assert row["L / L(population run)"] == pytest.approx(
            row["population loss"] / R.refs[row["d"]]["loss"]
        )


# --- the exponent's standard error and the drift ----------------------------------------------


def test_exponent_se_predicts_the_spread_over_independent_draws():
    # simulated studies: error sqrt(n) = C d e^{s z_dk} with z independent over d and the
    # repetitions k (shared by the ratios of a repetition) and sample noise per cell; the
    # standard deviation of the fitted exponent over many studies against the mean of
    # exponent_se (a delta-method formula): the same within 15 %
    rng = np.random.default_rng(0)
    ds, ratios, K = np.array([8, 16, 32]), np.array([1.0, 4.0, 16.0]), 3
    n = np.round(ratios[None, :] * ds[:, None] ** 2).astype(int)
    slopes, ses = [], []
    for _ in range(1500):
        z = 0.1 * rng.standard_normal((3, 1, K)) + 0.05 * rng.standard_normal((3, 3, K))
        err = 1.4 * ds[:, None, None] * np.exp(z) / np.sqrt(n)[:, :, None]
        study = {"err": err, "n": n, "ds": ds, "ratios": ratios}
        S2 = err**2 * n[:, :, None]
        slopes.append(stats.fit_slope(ds, np.sqrt(S2.mean(axis=(1, 2)))))
        ses.append(chapter.exponent_se(study)[0] ** 2)
    assert math.sqrt(np.mean(ses)) == pytest.approx(np.std(slopes), rel=0.15)
    assert chapter.exponent_se(study)[1] == 3 * (K - 1)


def test_joint_bootstrap_misses_the_variance_of_independent_draws():
    # the old interval's standard error: one repetition index resampled at every d; with
    # repetitions that happen to be ordered alike at every d it sees almost no spread
    ds, ratios = np.array([16, 32, 64]), np.array([1.0, 4.0])
    n = np.round(ratios[None, :] * ds[:, None] ** 2).astype(int)
    level = np.array([0.9, 1.0, 1.1])  # the same order at every d
    err = 1.4 * ds[:, None, None] * level[None, None, :] / np.sqrt(n)[:, :, None]
    study = {"err": err, "n": n, "ds": ds, "ratios": ratios}
    assert smp.d_exponent(study, seed=0).se < 1e-6
    assert chapter.exponent_se(study)[0] > 0.02


def test_drift_shift_and_interval():
    assert chapter.drift_shift([16, 32, 64]) == pytest.approx(-0.051, abs=0.002)
    assert chapter.drift_shift([8, 16, 32]) == pytest.approx(-0.096, abs=0.002)
    assert chapter.t_multiplier(10**6) == pytest.approx(3.0, abs=0.01)
    assert chapter.t_multiplier(6) == pytest.approx(4.90, abs=0.01)


@pytest.mark.slow  # 3.0 s (conftest.SLOW_SECONDS)
def test_kappa_drift_bounds_the_population_constant():
    # C(d)^2 d^2 = 2 E[y~^2 ||x||^2] / mean_i ||g(wbar_i)||^2 - 1 for the symmetric
    # initialization (tr Sigma = 2 sum a_i^2 E[y~^2 ||x||^2] - ||grad||^2 exactly: y~ is even),
    # over 3000 random directions: its exponent over [8, 32] is negative and no lower than the
    # shift of C (1 + KAPPA_DRIFT / d)
    rng = np.random.default_rng(5)
    C = []
    for d in (8, 16, 32):
        t = tmod.prototype(d, 123)
        B = t.info["basis"]
        Z = rng.standard_normal((1_000_000, 2))
        y = t.y_tilde(Z @ B.T)
        Eyx = (d - 2) * np.mean(y**2) + np.mean(y**2 * np.sum(Z * Z, 1))
        g2 = []
        for k in range(3):
            net = alg.symmetric_init(d, 2000, 1000 + k)
            G = pop.grad(net, t, 0.0).W
            g2.append(np.sum(G * G) / np.sum(net.a**2))
        C.append(math.sqrt((2 * Eyx / np.mean(g2) - 1) / d**2))
    shift = stats.fit_slope([8, 16, 32], C)  # the exponent of error sqrt(n) / d
    assert chapter.drift_shift([8, 16, 32]) - 0.01 <= shift < 0
