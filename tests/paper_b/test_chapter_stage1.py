"""``twolayer.paper_b.chapters.stage1``: its parameters, the page's parameters cell, what the
page states about its setup (the initialization, the step under loss (2), the teachers, the
coverage) recomputed by independent routes from what ran, and the checks' gates and
sentences."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from twolayer.core import seeds
from twolayer.core.params import ParameterError
from twolayer.page.checks import make_hypothesis
from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import fits
from twolayer.paper_b.chapters import stage1

ROOT = Path(__file__).resolve().parents[2]
TINY = dict(ds=[10, 20, 40], m_sweep_d=40, d_net=8, ms=[8, 32, 128], net_seeds=3)


@pytest.mark.parametrize(
    "name, value",
    [
        ("r", 4),  # only 2 or 3
        ("rs", [3, 2]),  # not increasing
        ("ds", [3, 10, 40]),  # must exceed r
        ("ds", [10, 40]),  # fewer than 3 dimensions
        ("d_net", 3),  # must exceed r
        ("m_star", 7),  # outside the random teacher's range for r = 2
        ("teacher", "prototype"),
        ("net_seeds", 0),
    ],
)
def test_a_bad_parameter_stops_naming_it(name, value):
    with pytest.raises(ParameterError, match=name):
        stage1.SPEC.params("smoke", **{name: value})


def test_unknown_parameter_is_named():
    with pytest.raises(ParameterError, match="'rr'"):
        stage1.SPEC.params("smoke", rr=3)


@pytest.fixture(scope="module")
def run():
    P = stage1.SPEC.params("smoke", **TINY)
    T = stage1.make_teachers(P)
    return P, T, stage1.step_study(P, T), stage1.net_study(P, T)


def test_teachers_as_the_page_states_them(run):
    P, T, _, _ = run
    # one teacher shape (same output weights, same angles) in every R^d of ds, r + 1 neurons
    # of rank r; net_seeds teachers per r of rs in R^{d_net}
    ref = T.dimension[0]
    for t, d in zip(T.dimension, P.ds):
        assert t.W.shape == (P.r + 1, d)
        assert np.linalg.matrix_rank(t.W) == P.r
        assert np.allclose(t.a, ref.a)
        assert np.allclose(t.W @ t.W.T, ref.W @ ref.W.T)
    assert sorted(T.net) == P.rs
    for r, ts in T.net.items():
        assert len(ts) == P.net_seeds
        assert all(t.W.shape == (r + 1, P.d_net) for t in ts)
    hyps = stage1.assumptions(T)
    assert [h.name for h in hyps] == ["assumption_1", "assumption_2", "assumption_3"]
    assert all(h.holds for h in hyps)  # random teachers satisfy Assumptions 1-3


def test_initialization_law():
    # a_i = -a_{i+m/2} in {+-sqrt d}, w_i = w_{i+m/2} of norm 1/sqrt(m), directions uniform
    d, m = 10, 4000
    net = alg.symmetric_init(d, m, 5)
    h = m // 2
    assert np.allclose(np.abs(net.a), math.sqrt(d)) and np.array_equal(net.a[h:], -net.a[:h])
    assert np.array_equal(net.W[h:], net.W[:h])
    assert np.allclose(np.linalg.norm(net.W, axis=1), 1 / math.sqrt(m))
    u = net.W[:h] * math.sqrt(m)
    assert np.abs(u.mean(0)).max() < 4 / math.sqrt(h)  # mean 0
    assert np.allclose(u.T @ u / h, np.eye(d) / d, atol=4 / (d * math.sqrt(h)))  # E uu^T = I/d
    assert abs(np.mean(net.a[:h] > 0) - 0.5) < 4 * 0.5 / math.sqrt(h)  # fair signs


def test_the_step_is_minus_the_gradient_of_loss_2_by_monte_carlo(run):
    """The page's step under loss (2), E[(f - y~)^2] with no factor 1/2, eta_0 = lambda_0 = 1:
    w_i^(1) = 2 a_i E[y~ relu'(w_i.x) x], a_i^(1) = 2 E[y~ relu(w_i.x)], alpha_1 = 2 E[y~] = 0,
    beta_1 = 2 E[y~ x] = 0, by sampling x ~ N(0, I_d); the median norm and off-subspace
    fraction of the sweep's first d are those of these vectors."""
    P, T, S, _ = run
    d, t = P.ds[0], T.dimension[0]
    m = S.m
    net0 = alg.symmetric_init(d, m, seeds.derive(P.seed, "init", d))
    h = m // 2
    rng = np.random.default_rng(12345)
    n, chunks = 200_000, 5
    gw, ga, g1, gx = np.zeros((h, d)), np.zeros(h), 0.0, np.zeros(d)
    for _ in range(chunks):
        X = rng.standard_normal((n, d))
        y = t.y_tilde(X)
        Z = X @ net0.W[:h].T
        gw += ((Z > 0) * y[:, None]).T @ X
        ga += np.maximum(Z, 0).T @ y
        g1 += y.sum()
        gx += y @ X
    N = n * chunks
    W1 = 2 * net0.a[:h, None] * gw / N
    a1 = 2 * ga / N
    net1 = alg.stage1(net0, t)
    norms = np.linalg.norm(W1, axis=1)
    assert np.median(norms) == pytest.approx(S.sweep["median norm"][0], rel=0.03)
    assert np.allclose(W1, net1.W[:h], atol=0.03 * norms.mean())
    assert np.allclose(a1, net1.a[:h], atol=0.03 * np.abs(a1).max())
    assert abs(2 * g1 / N) < 0.03 and np.abs(2 * gx / N).max() < 0.03
    B = t.info["basis"]
    off = np.sqrt(np.clip(1 - (np.linalg.norm(W1 @ B, axis=1) / norms) ** 2, 0, 1))
    assert np.median(off) == pytest.approx(S.sweep["median off"][0], abs=0.02)


def test_predicted_limit_matches_a_large_d_step(run):
    """The limits of the book's derivation against the step itself at a large d (the
    closed-form step, not the formula of the limits)."""
    P, T, S, _ = run
    d, m = 1000, 600
    from twolayer.paper_b import teacher as tmod

    t = tmod.make(P.teacher, d, P.r, T.m_star_of[P.r], seed=seeds.derive(P.seed, "teacher"))
    assert np.allclose(t.W @ t.W.T, T.dimension[0].W @ T.dimension[0].W.T)  # same shape
    net0 = alg.symmetric_init(d, m, 7)
    W1 = alg.stage1(net0, t).W[: m // 2]
    norms = np.linalg.norm(W1, axis=1)
    frac_in = np.linalg.norm(W1 @ t.info["basis"], axis=1) / norms
    off = np.sqrt(1 - frac_in**2)
    assert math.sqrt(d) * np.median(off) == pytest.approx(S.off_limit, rel=0.12)
    assert np.median(norms) == pytest.approx(S.norm_limit, rel=0.12)


def test_coverage_recomputed_by_projection_in_R_d(run):
    """The coverage max_i min_j angle(w*_i, w_j) up to sign, inside S_* through the
    projector B B^T in R^d (the module uses coordinates in S_*), for one teacher and
    width; and the slope is the least-squares slope of the log mean coverage."""
    P, T, _, N = run
    r, s, i = P.rs[-1], 1, 1
    t, m = T.net[r][s], P.ms[i]
    net0 = alg.symmetric_init(t.d, m + m % 2, seeds.derive(P.seed, "coverage-init", r, s, m))
    W1 = alg.stage1(net0, t).W
    proj = t.info["basis"] @ t.info["basis"].T

    def cover(W, Ws):
        worst = 0.0
        for ws in Ws:
            best = min(
                math.acos(min(1.0, abs(w @ ws) / (np.linalg.norm(w) * np.linalg.norm(ws))))
                for w in W
            )
            worst = max(worst, best)
        return worst

    assert cover(W1 @ proj, t.W @ proj) == pytest.approx(N.coverage_in[r][i, s], abs=1e-9)
    assert cover(W1, t.W) == pytest.approx(N.coverage_full[r][i, s], abs=1e-9)
    assert N.coverage_in[r].shape == (len(P.ms), P.net_seeds)
    x, y = np.log(P.ms), np.log(N.coverage_in[r].mean(1))
    slope = np.sum((x - x.mean()) * (y - y.mean())) / np.sum((x - x.mean()) ** 2)
    assert N.slope[r].value == pytest.approx(slope, abs=1e-12)


def _net(P, slopes):
    cov = np.full((len(P.ms), P.net_seeds), 0.3)
    est = {
        r: fits.Estimate(v, se, v - 2 * se, v + 2 * se, P.net_seeds)
        for r, (v, se) in slopes.items()
    }
    return stage1.NetStudy(np.array(P.ms, float), {r: cov for r in est}, {r: cov for r in est}, est)


def test_net_gates_are_decided_by_the_spread_not_the_slope():
    P = stage1.SPEC.params("smoke")
    holds = make_hypothesis("assumption_3", True, title="Assumption 3")
    for v in (-1.0, -0.2, 0.3):  # the same spread: the same gate whatever the slope
        loose = _net(P, {2: (v, 0.3), 3: (v, 0.3)})  # 3 se = 0.9 > 1/2: not resolved
        tight = _net(P, {2: (v, 0.02), 3: (v, 0.02)})
        assert stage1.epsilon_net_refines_with_m(P, loose, holds).outcome() is None
        assert stage1.epsilon_net_width_grows_with_r(P, loose, holds).outcome() is None
        assert stage1.epsilon_net_refines_with_m(P, tight, holds).outcome() is not None
        assert stage1.epsilon_net_width_grows_with_r(P, tight, holds).outcome() is not None
    # the predicted slopes -1 and -1/2 pass both, within their spread
    ok = _net(P, {2: (-1.0, 0.05), 3: (-0.5, 0.05)})
    assert stage1.epsilon_net_refines_with_m(P, ok, holds).outcome() is True
    assert stage1.epsilon_net_width_grows_with_r(P, ok, holds).outcome() is True
    # a stall applies only without Assumption 3
    fails = make_hypothesis("assumption_3", False, title="Assumption 3")
    stall = _net(P, {2: (-0.02, 0.01), 3: (-0.01, 0.01)})
    assert stage1.epsilon_net_stalls_without_assumption_3(P, stall, holds).outcome() is None
    assert stage1.epsilon_net_stalls_without_assumption_3(P, stall, fails).outcome() is True
    assert stage1.epsilon_net_refines_with_m(P, stall, fails).outcome() is None


def test_net_sentences_follow_the_checks():
    P = stage1.SPEC.params("smoke")
    N = _net(P, {2: (-1.0, 0.05), 3: (-0.5, 0.05)})
    shallower = "shallower than for $r = 2$"
    assert shallower in stage1.net_reading(P, N, True, True, stalls=None, holds3=True)
    for grows in (None, False):
        text = stage1.net_reading(P, N, True, grows, stalls=None, holds3=True)
        assert shallower not in text.replace("not shallower", "")
    # the R^d coverage: its direction and its gap to S_* are read from the numbers
    text = stage1.net_reading(P, N, True, True, stalls=None, holds3=True)
    assert "not monotonically" in text  # a constant coverage does not fall
    assert "levels off" not in text
    degenerate = stage1.net_reading(P, N, None, None, stalls=True, holds3=False)
    assert "Without Assumption 3" in degenerate and "slopes for $r = 2$" not in degenerate
    assert "do not form" in stage1.net_takeaway(None, True, False)
