"""The chapter module of ``paper_a/one_step_low_rank``: its parameters, and what the page says
about its setup, recomputed by an independent route from what actually ran (at a tiny size):
the data's construction, the constants and step sizes of Theorem 4.2, the initialization's law
and scale, gradient descent on the logistic loss (a NumPy reimplementation from the same
``W0``), the smoothness and proxy-PL constants behind the rate, the sweeps' sizes and counts."""

from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from twolayer.core import seeds
from twolayer.core.params import ParameterError
from twolayer.paper_a.chapters import one_step_low_rank as ch

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "notebooks" / "paper_a" / "one_step_low_rank.md"
TINY = dict(
    n=4,
    d=30,
    m=6,
    steps=20,
    draws=2,
    lr_ladder=[1e4],
    large_lr_scale=1e6,
    init_sweep_points=3,
    sweep_ms=[4, 8],
    sweep_ds=[8, 16],
    sweep_ns=[3, 4],
    sweep_steps=3,
    device="cpu",
)


@functools.cache
def _tiny():
    torch.set_num_threads(1)
    P = ch.SPEC.params("smoke", **TINY)
    return P, ch.compute(P)


# --- parameters ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values, name",
    [
        ({"gamma": 1.5}, "gamma"),
        ({"n": 1}, "n"),
        ({"d": 4, "n": 8}, "d"),
        ({"dtype": "float32"}, "dtype"),
        ({"eps": 0.6}, "eps"),
        ({"lr_ladder": [1e4, 1e2]}, "lr_ladder"),
        ({"sweep_ds": [2, 200]}, "sweep_ds"),
        ({"sweep_ns": [3, 400]}, "sweep_ns"),
        ({"data_ratio": 5000.0}, "data_ratio"),  # rho = n p / R_min^2 >= 1
        ({"large_lr_scale": 0.5}, "large_lr_scale"),
        ({"large_lr_scale": 1e5}, "large_lr_scale"),  # not above lr_ladder's last step
        ({"lr_scale": 20.0, "large_lr_scale": 1e8}, "large_lr_scale"),  # past float64's range
        ({"gamma": 0.95, "lr_scale": 20.0}, "lr_ladder"),  # its 1e6 step, too
        ({"not_a_parameter": 1}, "not_a_parameter"),
    ],
)
def test_bad_parameter_stops_naming_it(values, name):
    with pytest.raises(ParameterError) as err:
        ch.SPEC.params("smoke", **values)
    assert repr(name) in str(err.value)


def test_large_step_is_lowered_where_float64_needs_it():
    """``large_lr_scale = None`` is 1e8 at the defaults and lowered where one step of it would
    push every margin past float64's range (every g_i = 0, Lemma E.3's ratio 0/0)."""
    assert ch.SPEC.params("smoke").large_lr_scale == 1e8
    assert ch.SPEC.params("book").large_lr_scale == 1e8
    P = ch.SPEC.params("smoke", lr_scale=20.0)
    assert P.large_lr_scale == 8e6
    assert ch.first_step_margin(P, P.large_lr_scale) <= ch.MARGIN_CAP
    assert ch.first_step_margin(P, 2 * P.large_lr_scale) > ch.MARGIN_CAP


def test_first_step_margin_is_the_smallest_margin_after_one_step():
    """The predicted smallest margin after one step from a tiny initialization against the
    margins of that step, computed here in NumPy."""
    P = ch.SPEC.params("smoke", **{**TINY, "m": 6})
    S = ch.setup(P).problem
    X, y = S.X.numpy(), S.y.numpy()
    g, phi1 = 0.5, (1 + P.gamma) / 2
    a = np.array([1.0] * (P.m - P.m // 2) + [-1.0] * (P.m // 2)) / math.sqrt(P.m)
    for mult in (1e6, 1e8):
        alpha = mult * S.alpha
        W = alpha * np.outer(a * phi1, (g * y[:, None] * X).sum(axis=0)) / P.n  # -alpha grad L(0)
        Z = X @ W.T
        phi = P.gamma * Z + (1 - P.gamma) * (np.logaddexp(0, Z) - math.log(2))
        q = y * (phi @ a)
        assert ch.first_step_margin(P, mult) == pytest.approx(q.min(), rel=1e-3)


def test_defaults_are_valid_in_every_profile():
    for profile in ("smoke", "book", "paper"):
        P = ch.SPEC.params(profile)
        assert P.profile == profile and P.seed == 0


# --- the data and the constants -----------------------------------------------------------------


def test_constructed_data_have_the_stated_law_and_constants():
    P, R = _tiny()
    S = R.setup.problem
    X, y = S.X.numpy(), S.y.numpy()
    assert X.shape == (P.n, P.d) and set(np.unique(y)) <= {-1.0, 1.0}
    norms = np.linalg.norm(X, axis=1)
    assert norms.min() == pytest.approx(1.0, abs=1e-12)
    assert norms.max() == pytest.approx(1.2, abs=1e-12)
    G = X @ X.T
    off = np.abs(G[~np.eye(P.n, dtype=bool)])
    # every off-diagonal inner product is +-c (the construction), with c set by data_ratio:
    # 5 gamma^-2 C_R R^2 n c / R_min^2 = data_ratio, C_R = 10 R^2 / gamma^2 + 10, R = 1.2
    C_R = 10 * 1.44 / P.gamma**2 + 10
    c = P.data_ratio * P.gamma**2 / (5 * C_R * 1.44 * P.n)
    np.testing.assert_allclose(off, c, rtol=1e-9)
    assert R.setup.consts.C_R == pytest.approx(C_R, rel=1e-12)
    assert R.setup.consts.condition_ratio == pytest.approx(P.data_ratio, rel=1e-9)
    # (A1): gamma^2 / (5 n R_max^2 R^2 C_R max(1, H)) with H = 1/4
    alpha_A1 = P.gamma**2 / (5 * P.n * 1.44 * 1.44 * C_R)
    assert S.alpha_A1 == pytest.approx(alpha_A1, rel=1e-9)
    assert S.alpha == pytest.approx(P.lr_scale * alpha_A1, rel=1e-9)


def _grad_numpy(W, X, y, gamma):
    """The logistic risk and its gradient for f(x; W) = sum_j a_j phi(<w_j, x>), by hand."""
    m = W.shape[0]
    a = np.where(np.arange(m) < m - m // 2, 1.0, -1.0) / math.sqrt(m)
    Z = W @ X.T  # (m, n)
    phi = gamma * Z + (1 - gamma) * (np.logaddexp(0, Z) - math.log(2))
    dphi = gamma + (1 - gamma) / (1 + np.exp(-Z))
    q = y * (a @ phi)
    loss = np.mean(np.logaddexp(0, -q))
    g = 1 / (1 + np.exp(q))  # -l'(q)
    grad = -((a[:, None] * dphi) * (g * y)[None, :]) @ X / len(y)
    return loss, grad, g


def test_gradient_at_zero_and_the_A2_bound_from_their_definitions():
    P, R = _tiny()
    S = R.setup.problem
    X, y = S.X.numpy(), S.y.numpy()
    _, G0, _ = _grad_numpy(np.zeros((P.m, P.d)), X, y, P.gamma)
    assert S.grad0 == pytest.approx(np.linalg.norm(G0), rel=1e-12)
    assert np.linalg.matrix_rank(G0) == 1  # the first step is rank one
    # omega_f: |f(x_k; W0)| <= ||W0||_2 R_max <= 1/50 with ||W0||_2 <= omega S
    t = math.sqrt(2 * math.log(2 / P.delta))
    S_ = math.sqrt(P.m) + math.sqrt(P.d) + t
    assert S.bound.omega_f * 1.2 * S_ == pytest.approx(1 / 50, rel=1e-12)
    assert S.omega_A2 <= S.bound.omega_f
    assert R.setup.omega == pytest.approx(P.init_scale * S.omega_A2, rel=1e-15)


# --- the runs -----------------------------------------------------------------------------------


def test_batch_sizes_steps_and_step_sizes():
    P, R = _tiny()
    runs = R.runs
    assert list(runs.kind) == ["main"] * P.draws + ["large step"] * (len(P.lr_ladder) + 1)
    expected = R.setup.problem.alpha * np.array([1.0] * P.draws + P.lr_ladder + [1e6])
    np.testing.assert_allclose(runs.batch.lr, expected, rtol=1e-15)
    np.testing.assert_allclose(runs.batch.omega, R.setup.omega, rtol=1e-15)
    assert runs.steps[0] == 0 and runs.steps[1] == 1 and runs.steps[-1] == P.steps
    assert np.all(np.diff(runs.steps) > 0)
    assert runs.sr.shape == (runs.steps.size, runs.kind.size)


def _W0(P, R):
    B = R.runs.batch
    return R.setup.problem.net.init(
        P.d, torch.as_tensor(B.omega), seed=seeds.derive(P.seed, "init"), batch=B.omega.size
    ).numpy()


def test_initialization_is_gaussian_at_the_stated_scale():
    P, R = _tiny()
    W0 = _W0(P, R)
    # the draw the runs started from: its stable rank and spectral norm are the recorded ones
    sr0 = np.array([np.sum(W**2) / np.linalg.norm(W, 2) ** 2 for W in W0])
    np.testing.assert_allclose(sr0, R.runs.sr[0], rtol=1e-10)
    np.testing.assert_allclose([np.linalg.norm(W, 2) for W in W0], R.runs.batch.spectral0)
    # law: i.i.d. N(0, omega^2); with 5 * 6 * 30 = 900 entries the sample std is within 10%
    z = W0.ravel() / R.setup.omega
    assert abs(z.std() - 1) < 0.1 and abs(z.mean()) < 0.15
    # a second draw at a larger size: the variance within 3%
    W = R.setup.problem.net.init(400, 1.0, seed=5).numpy()
    assert abs(W.var() - 1) < 0.03


def test_recorded_loss_and_stable_rank_follow_gradient_descent_by_hand():
    P, R = _tiny()
    S, runs = R.setup.problem, R.runs
    X, y = S.X.numpy(), S.y.numpy()
    W0 = _W0(P, R)
    for b in range(runs.kind.size):
        W, lr = W0[b].copy(), runs.batch.lr[b]
        rec = {int(t): k for k, t in enumerate(runs.steps)}
        for t in range(P.steps + 1):
            loss, grad, _ = _grad_numpy(W, X, y, P.gamma)
            if t in rec:
                k = rec[t]
                assert runs.history["loss"][k, b] == pytest.approx(loss, rel=1e-9, abs=1e-300)
                sr = np.sum(W**2) / np.linalg.norm(W, 2) ** 2
                assert runs.sr[k, b] == pytest.approx(sr, rel=1e-8)
                margins = y * _f(W, X, P.gamma)
                np.testing.assert_allclose(
                    runs.history["margins"][k, b], margins, rtol=1e-7, atol=1e-300
                )
            W = W - lr * grad


def _f(W, X, gamma):
    m = W.shape[0]
    a = np.where(np.arange(m) < m - m // 2, 1.0, -1.0) / math.sqrt(m)
    Z = W @ X.T
    return a @ (gamma * Z + (1 - gamma) * (np.logaddexp(0, Z) - math.log(2)))


def test_smoothness_and_proxy_pl_constants_hold_on_random_weights():
    """The rate's constants, checked against their defining inequalities on random W (an
    independent route to beta and mu): ||grad L(W1) - grad L(W2)|| <= beta ||W1 - W2|| and
    ||grad L(W)|| >= mu mean_i g_i."""
    P, R = _tiny()
    S = R.setup.problem
    X, y = S.X.numpy(), S.y.numpy()
    rng = np.random.default_rng(0)
    for scale in (0.01, 0.3, 3.0):
        W1 = scale * rng.standard_normal((P.m, P.d))
        W2 = W1 + 0.1 * scale * rng.standard_normal((P.m, P.d))
        _, G1, g1 = _grad_numpy(W1, X, y, P.gamma)
        _, G2, _ = _grad_numpy(W2, X, y, P.gamma)
        assert np.linalg.norm(G1 - G2) <= R.setup.smoothness * np.linalg.norm(W1 - W2)
        assert np.linalg.norm(G1) >= R.setup.mu * g1.mean()
    a_beta = S.alpha * R.setup.smoothness
    assert R.setup.kappa == pytest.approx(
        S.alpha * (1 - a_beta / 2) * R.setup.mu**2 / (2 * math.log(2)) ** 2, rel=1e-12
    )


def test_risk_rate_growth_is_the_ratio_of_risks_read_the_other_way():
    P, R = _tiny()
    growth = ch.risk_rate_growth(R.setup, R.runs)
    ratio = ch.risk_rate_ratio(R.setup, R.runs)[1:]  # t >= 2
    assert np.array_equal(growth >= 1, ratio <= 1)
    assert ch.risk_rate_under_A1(P, R).outcome() is True


# --- the sweeps ---------------------------------------------------------------------------------


def test_init_sweep_scales_and_draws():
    P, R = _tiny()
    sw, S = R.sweep, R.setup.problem
    top = max(S.bound.omega_f / S.omega_A2, 10.0)
    assert sw.multipliers[0] == 1.0 and sw.multipliers[-1] == pytest.approx(top)
    assert np.allclose(np.diff(np.log(sw.multipliers)), math.log(top) / (P.init_sweep_points - 1))
    np.testing.assert_allclose(sw.multiplier, np.repeat(sw.multipliers, 2))
    np.testing.assert_allclose(sw.omega, sw.multiplier * S.omega_A2, rtol=1e-15)


def test_size_sweep_rows():
    P, R = _tiny()
    rows = R.sizes.rows
    for name, values in (("m", P.sweep_ms), ("d", P.sweep_ds), ("n", P.sweep_ns)):
        part = rows[rows.swept == name]
        assert sorted(set(part[name])) == sorted(values)
        for other, base in (("m", P.m), ("d", P.d), ("n", P.n)):
            if other != name:
                assert set(part[other]) == {base}
        assert (part.kind == "one step").sum() == 2 * len(values)
        assert (part.kind == "trajectory").sum() == len(values)
    assert set(rows[rows.kind == "trajectory"]["steps"]) == {P.sweep_steps}


# --- the checks on the tiny run, and the words the page reads -----------------------------------


def test_every_check_passes_or_does_not_apply_on_the_tiny_run():
    P, R = _tiny()
    names = [n for n in dir(ch) if not n.startswith("_")]
    claims = []
    for n in names:
        f = getattr(ch, n)
        if callable(f) and getattr(f, "__module__", "") == ch.__name__:
            ann = getattr(f, "__annotations__", {}).get("return")
            if ann == "Claim":
                claims.append(f(P, R))
    assert len(claims) >= 25
    for c in claims:
        assert c.outcome() in (True, None), c.name


def test_words_follow_the_numbers():
    P, R = _tiny()
    assert ch.large_step_vs_C_R(P, R).startswith(
        "above" if ch.large_step_log_loss_ratio(P, R) > math.log(R.setup.consts.C_R) else "still"
    )
    assert ch.any_step_scope(P, R) == "every run of the batch"
    planted = dataclasses.replace(R.sweep, sr1=np.where(R.sweep.r <= 0.5, 5.0, R.sweep.sr1))
    text = ch.sweep_sides(P, dataclasses.replace(R, sweep=planted))
    assert "fails" in text or "does not apply" in text
