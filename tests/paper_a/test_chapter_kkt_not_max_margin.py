"""The chapter module of ``paper_a/kkt_not_max_margin``: its parameters, the page's parameters
cell, and what the page says about its setup, recomputed by an independent route from what
actually ran (at a tiny size): the three points, the printed multipliers and the closed forms,
the network and its initialization, the loss-normalized gradient descent with step 1 on the
exponential loss, the extension of the runs by their ``1/s`` rate, and the hypothesis."""

from __future__ import annotations

import functools
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from twolayer.core import seeds
from twolayer.core.params import ParameterError
from twolayer.paper_a import flow, kkt
from twolayer.paper_a.chapters import kkt_not_max_margin as ch

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "notebooks" / "paper_a" / "kkt_not_max_margin.md"
TINY = dict(num_eps=3, m_half=1, init_mults=[0.5, 2.0], steps=100, tol=0.1, eps=0.01, device="cpu")


@functools.cache
def _tiny():
    torch.set_num_threads(1)
    P = ch.SPEC.params("smoke", **TINY)
    return P, ch.compute(P)


# --- parameters ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values, name",
    [
        ({"eps": 0.0}, "eps"),
        ({"eps": 1.0}, "eps"),
        ({"eps_min": 0.3, "eps_max": 0.1}, "eps_max"),
        ({"dtype": "float32"}, "dtype"),
        ({"m_half": 0}, "m_half"),
        ({"loss": "hinge"}, "loss"),
        ({"init_mults": [1.0, 0.1]}, "init_mults"),
        ({"steps": 10}, "steps"),
        ({"tol": 0.0}, "tol"),
        ({"num_eps": 1}, "num_eps"),
        ({"not_a_parameter": 1}, "not_a_parameter"),
    ],
)
def test_bad_parameter_stops_naming_it(values, name):
    with pytest.raises(ParameterError) as err:
        ch.SPEC.params("smoke", **values)
    assert repr(name) in str(err.value)


def test_defaults_are_valid_in_every_profile():
    for profile in ("smoke", "book", "paper"):
        P = ch.SPEC.params(profile)
        assert P.profile == profile and P.eps == 0.0125 and P.m_half == 2


# --- the example ----------------------------------------------------------------------------------


def test_the_three_points_and_the_grid_as_the_page_states_them():
    P, R = _tiny()
    A = R.algebra
    # unit points, <x_1, x_2> = -eps, x_3 orthogonal to both; labels (+1, -1, -1)
    G = A.X @ A.X.T
    np.testing.assert_allclose(G, [[1, -P.eps, 0], [-P.eps, 1, 0], [0, 0, 1]], atol=1e-15)
    assert A.y.tolist() == [1.0, -1.0, -1.0]
    # a log grid from eps_min to eps_max with num_eps values
    e = A.table.eps.to_numpy()
    assert len(e) == P.num_eps and e[0] == pytest.approx(P.eps_min)
    assert e[-1] == pytest.approx(P.eps_max)
    assert np.allclose(np.diff(np.log(e)), np.log(e[1] / e[0]))


def test_the_printed_multipliers_and_the_closed_forms():
    P, R = _tiny()
    A = R.algebra
    a = 8 / (4 * P.eps + 5)
    np.testing.assert_allclose(A.lam_cf, [a, a, 8 / 5], rtol=1e-15)
    # z* separates with every margin exactly 1; Clarabel's z and z* agree with the closed forms
    np.testing.assert_allclose(A.y * (A.X @ A.z_star_cf), 1.0, rtol=1e-14)
    np.testing.assert_allclose(A.sol.z, A.z_cf, atol=1e-7)
    np.testing.assert_allclose(A.z_star, A.z_star_cf, atol=1e-7)
    # the margins of z by hand: 6 (1 + eps)/(4 eps + 5) and 6/5 (and y_1 z.x_1 as the second)
    m = A.y * (A.X @ A.z_cf)
    np.testing.assert_allclose(m, [6 * (1 + P.eps) / (4 * P.eps + 5)] * 2 + [6 / 5], rtol=1e-14)
    assert A.nmargin_zstar == pytest.approx(1 / np.linalg.norm(A.z_star_cf))


def test_the_table_is_kkt_three_point_table_plus_the_solver_margins():
    P, R = _tiny()
    tab = R.algebra.table
    ref = kkt.three_point_table(tab.eps.to_numpy(), P.m_half)
    for k, row in enumerate(ref):
        for col, value in row.items():
            assert tab[col].iloc[k] == value, (col, k)
    # the solver's own margins: y_i <z, x_i> of Clarabel's z, re-solved here
    for k, e in enumerate(tab.eps):
        X, y = kkt.three_point_example(e)
        sol = kkt.solve_problem3(X, y, P.m_half, P.m_half, gamma=0.5)
        assert tab.solver_margin2.iloc[k] == pytest.approx(-(X[1] @ sol.z), abs=1e-9)
        assert tab.solver_margin3.iloc[k] == pytest.approx(-(X[2] @ sol.z), abs=1e-9)


# --- the network, its initialization and the flow -------------------------------------------------


def test_the_initialization_law_and_scale():
    P = ch.SPEC.params("smoke", m_half=64, init_mults=[1.0, 100.0], init_scale=0.5)
    W0 = ch.initial_weights(P, device="cpu").numpy()
    assert W0.shape == (2, 128, 3) and W0.dtype == np.float64
    # w_j ~ N(0, (mult init_scale)^2 / 3 I_3): 384 entries per run, variance within 30%
    for b, mult in enumerate(P.init_mults):
        assert W0[b].var() == pytest.approx((mult * P.init_scale) ** 2 / 3, rel=0.3)
        assert abs(W0[b].mean()) < 4 * mult * P.init_scale / math.sqrt(3 * 384)
    # the draw comes from the seed derived for "init", and a new seed gives a new draw
    g = torch.Generator().manual_seed(seeds.derive(P.seed, "init"))
    raw = torch.randn((2, 128, 3), generator=g, dtype=torch.float64).numpy()
    np.testing.assert_allclose(W0[0], raw[0] * 0.5 / math.sqrt(3), rtol=1e-15)
    other = ch.initial_weights(ch.SPEC.params("smoke", seed=1), device="cpu")
    assert not torch.equal(other, ch.initial_weights(ch.SPEC.params("smoke"), device="cpu"))


def _f(W, X, m_half, gamma=0.5):
    """The network by hand: sum_j a_j max(w_j.x, gamma w_j.x), a_j = +-1/sqrt(m)."""
    m = 2 * m_half
    a = torch.tensor([1 / math.sqrt(m)] * m_half + [-1 / math.sqrt(m)] * m_half, dtype=W.dtype)
    Z = W @ X.T
    return a @ torch.maximum(Z, gamma * Z)


def test_the_runs_are_normalised_gradient_descent_on_the_exponential_loss():
    P, R = _tiny()
    A, F = R.algebra, R.flow
    X, y = torch.as_tensor(A.X), torch.as_tensor(A.y)
    assert F.run.W.shape[1] == len(P.init_mults) and F.run.W.shape[2] == 2 * P.m_half
    assert F.run.checkpoints[0] == 0 and F.run.checkpoints[1] == 1
    # the recorded log-loss is log( mean_i exp(-y_i f(x_i; W)) ) on the recorded weights
    for k, step in enumerate(F.run.checkpoints):
        for b in range(F.run.W.shape[1]):
            L = torch.exp(-y * _f(F.run.W[k, b], X, P.m_half)).mean()
            assert F.run.log_loss[step, b] == pytest.approx(math.log(float(L)), abs=1e-10)
    # step 1 from W0: W1 = W0 - 1 * grad L(W0) / L(W0) (autograd on the hand-made network)
    for b in range(F.run.W.shape[1]):
        W0 = F.run.W[0, b].clone().requires_grad_(True)
        L = torch.exp(-y * _f(W0, X, P.m_half)).mean()
        (g,) = torch.autograd.grad(L, W0)
        np.testing.assert_allclose(F.run.W[1, b], (W0 - g / L).detach(), atol=1e-12)


def test_the_runs_are_extended_by_their_own_rate_to_half_the_tolerances():
    P, R = _tiny()
    A, F = R.algebra, R.flow
    k = int(np.flatnonzero(F.run.checkpoints == P.steps)[0])
    # the deviations at `steps`, recomputed: the margin-normalized distance to W* and the angle
    # of z(W) to z, against tolerances (tol, angle(z, z*)/2); runs extended by 2 x the worst
    # ratio (a 1/s rate reaching half the tolerance)
    worst = 0.0
    Ws = torch.as_tensor(A.sol.W)
    for b in range(F.run.W.shape[1]):
        W = F.run.W[k, b]
        q = A.y * _f(W, torch.as_tensor(A.X), P.m_half).numpy()
        Wn = W / q.min()
        dist = float(torch.linalg.norm(Wn - Ws) / torch.linalg.norm(Ws))
        z = (W[: P.m_half].sum(0) - W[P.m_half :].sum(0)).numpy() / math.sqrt(2 * P.m_half)
        cos = z @ A.sol.z / np.linalg.norm(z) / np.linalg.norm(A.sol.z)
        ang = math.acos(min(1.0, cos))
        worst = max(worst, dist / P.tol, ang / (A.angle_z_zstar / 2))
    assert F.total_steps == max(P.steps, math.ceil(P.steps * 2 * worst))
    assert F.run.checkpoints[-1] == F.total_steps


def test_settled_fraction_reads_theorem_3_4_within_the_run():
    log2_3 = math.log(2) / 3
    losses = np.array([[1.0, 1.0], [0.5 * log2_3, 2.0], [2 * log2_3, 1.0], [0.1, 0.5 * log2_3]])
    run = flow.FlowRun(np.array([0, 3]), None, np.log(losses), np.zeros_like(losses), 1.0)
    # run 0 settles at step 3 of 4 recorded losses (3/4); run 1 only at its last step
    np.testing.assert_allclose(ch.settled_fraction(run, 3), [3 / 4, 3 / 4])
    up = flow.FlowRun(np.array([0, 3]), None, np.log(losses[::-1]), np.zeros_like(losses), 1.0)
    assert ch.settled_fraction(up, 3).max() == 1.0  # back above log 2 / n at the end


def test_the_hypothesis_is_theorem_3_2s_assumption_eps_at_most_1_72():
    P = ch.SPEC.params("smoke")

    def hyp(eps):
        X, _ = kkt.three_point_example(eps)
        return ch.near_orthogonality(P, ch.Result(algebra=SimpleNamespace(X=X)))

    assert hyp(1 / 72 * 0.999).holds and hyp(1 / 72 * 0.999).reason == ""
    assert not hyp(1 / 72 * 1.001).holds and "above 1/72" in hyp(1 / 72 * 1.001).reason


def test_every_check_passes_at_the_tiny_size_and_only_five_count_as_evidence():
    P, R = _tiny()
    h = ch.near_orthogonality(P, R)
    claims = ch.algebra_claims(P, R) + ch.flow_claims(P, R, h)
    assert all(c.outcome() for c in claims), [c.name for c in claims if not c.outcome()]
    assert all(c.detail for c in claims)
    evidence = {c.name for c in claims if c.kind in ("theorem", "observation")}
    assert evidence == {
        "multipliers_match_printed",
        "z_x2_differs_from_z_x3",
        "thm34_loss_below_log2_over_n",
        "flow_reaches_convex_optimum",
        "flow_converges_to_z_not_zstar",
    }


def test_the_verdict_follows_the_check():
    P, R = _tiny()
    assert ch.flow_verdict(P, R, True) == "the flow converges to $z$"
    assert "does not apply" in ch.flow_verdict(P, R, None)
    assert "do not tell" in ch.flow_verdict(P, R, False)
