"""The module of chapter ``paper_b/stage2`` (:mod:`twolayer.paper_b.chapters.stage2`): its
parameters, and what the page states about its setup, recomputed by another route at a tiny
size."""

from __future__ import annotations

import ast
import functools
import math
from pathlib import Path

import numpy as np
import pytest

from twolayer import chapters
from twolayer.core.params import ParameterError
from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import early_stages as es
from twolayer.paper_b import population as pop
from twolayer.paper_b.chapters import stage2 as chapter

ROOT = Path(__file__).resolve().parents[2]


def parameters_cell(md: Path) -> dict:
    """The values the page's papermill ``parameters`` cell assigns (literal_eval of each)."""
    text = md.read_text()
    start = text.index(":tags: [parameters")
    body = text[text.index("\n", start) + 1 : text.index("```", start)]
    out = {}
    for node in ast.parse(body).body:
        target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
        out[target.id] = ast.literal_eval(node.value)
    return out


# --- parameters -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("m", 41),  # odd: the symmetric initialization needs pairs
        ("d", 2),  # d must exceed r = 2
        ("lam", 0.0),
        ("lams", [0.1, 0.01, 0.5]),  # not increasing
        ("m_star", 9),
        ("teacher", "prototype"),
        ("eps0_teachers", 0),
        ("lam_scale", -1.0),
    ],
)
def test_bad_parameter_is_named(name, value):
    with pytest.raises(ParameterError, match=repr(name)):
        chapter.SPEC.params("smoke", **{name: value})


def test_unknown_parameter_is_refused():
    with pytest.raises(ParameterError, match="seeed"):
        chapter.SPEC.params("smoke", seeed=1)


def test_profiles_fill_the_open_parameters():
    P = chapter.SPEC.params("book")
    assert (P.d, P.m, P.eps0_teachers, P.ms_eps0) == (20, 100, 8, [16, 64, 256])
    assert chapter.SPEC.params("smoke").eps0_teachers == 3


def test_stage3_lambda_0_is_the_stage3_pages():
    # the page states at which lambda_0 the Stage 3 chapter runs: that chapter's parameters
    # cell sets it, and none of its profiles changes it
    cell = parameters_cell(ROOT / "notebooks/paper_b/stage3.md")
    assert cell["lam0"] == chapter.STAGE3_LAM0
    profiles = chapters.spec("paper_b/stage3").profiles
    assert all("lam0" not in values for values in profiles.values())


# --- setup fidelity at a tiny size -------------------------------------------------------------


@functools.cache
def tiny():
    P = chapter.SPEC.params(
        "smoke",
        d=6,
        m=8,
        sub_steps=50,
        grid=20,
        lams=[0.01, 0.1, 0.5],
        ms_eps0=[4, 8],
        eps0_teachers=2,
    )
    return P, chapter.compute(P)


def test_teacher_is_the_pages():
    P, R = tiny()
    W = R.tch.W
    assert W.shape == (3, P.d)  # m* = r + 1 for a random teacher
    np.testing.assert_allclose(np.linalg.norm(W, axis=1), 1.0, atol=1e-12)
    assert np.linalg.matrix_rank(W, tol=1e-9) == P.r
    assert len(R.eps0_teacher_list) == P.eps0_teachers


def test_stage1_is_one_step_on_the_population_loss():
    # W^(1) = W^(0) - grad_W L_1(theta^(0)) with eta_0 = lambda_0 = 1 (Lemma 3): the
    # gradient by central differences of the closed-form loss plus the weight decay
    P, R = tiny()
    from twolayer.core import seeds

    net0 = alg.symmetric_init(P.d, P.m, seeds.derive(P.seed, "init"))
    assert np.allclose(net0(np.random.default_rng(0).standard_normal((50, P.d))), 0)
    h, (i, j) = 1e-6, (1, 2)

    def L1(w):
        W = net0.W.copy()
        W[i, j] = w
        net = pop.Net(net0.a, W, net0.alpha, net0.beta)
        return pop.loss(net, R.tch) + 0.5 * (net.a @ net.a + np.sum(W**2))

    w0 = net0.W[i, j]
    grad = (L1(w0 + h) - L1(w0 - h)) / (2 * h)
    assert R.net1.W[i, j] == pytest.approx(w0 - grad, rel=1e-5, abs=1e-8)


def test_eps0_is_the_coverage_by_brute_force():
    P, R = tiny()
    worst = 0.0
    for ws in R.tch.W:
        best = math.pi
        for w in R.net1.W:
            c = abs(w @ ws) / (np.linalg.norm(w) * np.linalg.norm(ws))
            best = min(best, math.acos(min(c, 1.0)))
        worst = max(worst, best)
    assert R.eps0 == pytest.approx(worst, abs=1e-9)


def test_lasso_is_the_loss_with_claim_b1_offsets_plus_the_penalty():
    # a^T G a - 2 b^T a + c + lam sum ||w_i|| |a_i| against a Monte Carlo estimate of
    # E[(f - y~)^2] for the network (a, W^(1), alpha^, beta^) plus the penalty
    P, R = tiny()
    rng = np.random.default_rng(1)
    a = rng.standard_normal(P.m) * 0.3
    net = pop.Net(a, R.net1.W, 0.0, None)
    net.alpha, net.beta = pop.alpha_hat(net), pop.beta_hat(net)
    X = rng.standard_normal((400_000, P.d))
    sq = (net(X) - R.tch.y_tilde(X)) ** 2
    pen = P.lam * np.sum(np.linalg.norm(R.net1.W, axis=1) * np.abs(a))
    lasso = alg.lasso_objective(a, R.G, R.b, R.c, weights=R.wts, lam=P.lam)
    assert abs(lasso - (sq.mean() + pen)) <= 4 * sq.std() / math.sqrt(len(sq))


def test_subgradient_trace_follows_the_stated_rule():
    # a <- a - eta (2 G a - 2 b + lam w sign(a)), eta = 1 / (2 lambda_max(G)), sub_steps steps
    # from a^(1); the guarantee (||a_0 - a_ref||^2 + eta^2 sum ||g_t||^2) / (2 eta T)
    P, R = tiny()
    G, b, c, w = R.G, R.b, R.c, R.wts
    eta = 1 / (2 * max(np.linalg.eigvals(G).real))
    assert R.trace.eta == pytest.approx(eta, rel=1e-10)
    a = R.net1.a.copy()
    vals, sq = [], []
    for _ in range(P.sub_steps):
        vals.append(a @ G @ a - 2 * b @ a + c + P.lam * np.sum(w * np.abs(a)))
        g = 2 * G @ a - 2 * b + P.lam * w * np.sign(a)
        sq.append(g @ g)
        a = a - eta * g
    vals.append(a @ G @ a - 2 * b @ a + c + P.lam * np.sum(w * np.abs(a)))
    np.testing.assert_allclose(R.trace.values, vals, rtol=1e-10)
    T = np.arange(1, P.sub_steps + 1)
    bound = (np.sum((R.net1.a - R.a_ref) ** 2) + eta**2 * np.cumsum(sq)) / (2 * eta * T)
    np.testing.assert_allclose(R.trace.bound, bound, rtol=1e-9)


def test_stage2_network_is_balanced_and_zeta_is_its_gap():
    P, R = tiny()
    np.testing.assert_allclose(np.abs(R.net2.a), np.linalg.norm(R.net2.W, axis=1), atol=1e-12)
    L = pop.loss(R.net2, R.tch) + 0.5 * P.lam * (R.net2.a @ R.net2.a + np.sum(R.net2.W**2))
    assert R.zeta == pytest.approx(L - R.min_mu, abs=1e-12)


def test_eps0_sweep_runs_the_scaled_schedule():
    # lambda = lam_scale sqrt(eps0) in every run, one run per (width, teacher)
    P, R = tiny()
    sw = R.eps_sweep
    assert sw["eps0"].shape == (len(P.ms_eps0), P.eps0_teachers)
    np.testing.assert_allclose(sw["lam"], P.lam_scale * np.sqrt(sw["eps0"]), rtol=1e-12)


def test_zero_threshold_is_where_stage2_stops_keeping_neurons():
    # the page's lambda_zero, checked by the conic solver on either side of it
    P, R = tiny()
    below, _ = alg.stage2(R.net1, R.tch, 0.9 * R.thr)
    above, info = alg.stage2(R.net1, R.tch, 1.1 * R.thr)
    assert es.count_kept(info["a"], R.net1.W, R.tch) == 0
    assert np.sum(np.abs(below.a) > 1e-6) > 0


def test_lambda_sweep_runs_the_listed_lambdas():
    P, R = tiny()
    assert [row["lambda"] for row in R.sweep] == P.lams
    assert R.lam_paper == pytest.approx(math.sqrt(R.eps0))


# --- the checks on hand-made inputs ------------------------------------------------------------


def test_ratio_statistic_reads_a_slope():
    # zeta ~ eps0^p over two widths: q = (eps0_wide / eps0_narrow)^(p - 1)
    E = np.array([[0.4, 0.3], [0.1, 0.075]])
    for p, expect in ((2.0, 0.25), (1.0, 1.0), (0.5, 2.0)):
        assert math.exp(chapter.ratio_growth(E, E**p)) == pytest.approx(expect)


def test_rate_check_needs_the_resolution():
    P = chapter.SPEC.params("smoke")  # 3 teachers: not enough
    E = np.array([[0.3] * 3, [0.1] * 3])
    sweep = {"eps0": E, "zeta": E**2, "lam": 0.05 * np.sqrt(E), "threshold": E * 0 + 1}

    class R:
        eps_sweep = sweep

    claim = chapter.zeta_falls_with_eps0(P, R, [])
    assert claim.outcome() is None
    P8 = chapter.SPEC.params("smoke", eps0_teachers=8, ms_eps0=[16, 256])
    E8 = np.tile(np.array([[0.3], [0.1]]), 8) * np.exp(
        0.05 * np.random.default_rng(0).standard_normal((2, 8))
    )
    R.eps_sweep = {"eps0": E8, "zeta": E8**2, "lam": 0.05 * np.sqrt(E8), "threshold": E8 * 0 + 1}
    assert chapter.zeta_falls_with_eps0(P8, R, []).outcome() is True
    big = chapter.SPEC.params("smoke", eps0_teachers=8, ms_eps0=[16, 256], lam_scale=0.3)
    assert chapter.zeta_falls_with_eps0(big, R, []).outcome() is None
    # widths spanning a factor 8 (16 and 128) do not resolve the rate: not applicable
    narrow = chapter.SPEC.params("smoke", eps0_teachers=8, ms_eps0=[16, 128])
    assert chapter.zeta_falls_with_eps0(narrow, R, []).outcome() is None
    ok, why = chapter.sweep_resolution(narrow, R)
    assert not ok and "factor 8" in why
