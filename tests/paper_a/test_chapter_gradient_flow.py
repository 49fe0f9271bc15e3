"""``twolayer.paper_a.chapters.gradient_flow``: its parameters, the page's parameters cell, what
the page states about its setup recomputed by another route from what ran, and the sentences
the module decides for the page."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from twolayer.core.params import ParameterError
from twolayer.paper_a import flow, kkt
from twolayer.paper_a.chapters import gradient_flow as gf

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "name, value",
    [
        ("n", 1),
        ("d", 4),  # below n = 8
        ("dtype", "float32"),  # the page's tolerances were verified in float64 only
        ("gap", 3.0),  # open interval (0, 3)
        ("gamma", 0.0),
        ("gammas", [0.9, 0.5]),  # not increasing
        ("tol", 0.0),
        ("loss", "hinge"),
        ("phase_ns", [2]),
    ],
)
def test_a_bad_parameter_stops_naming_it(name, value):
    with pytest.raises(ParameterError, match=name):
        gf.SPEC.params("smoke", **{name: value})


def test_unknown_parameter_is_named():
    with pytest.raises(ParameterError, match="'gapp'"):
        gf.SPEC.params("smoke", gapp=0.5)


# --- the setup, recomputed ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    P = gf.SPEC.params("smoke", n=5, d=9, m1=2, m2=3, directions=20, steps=200, n_test=2000)
    S = gf.target(P)
    T = gf.train(P, S)
    return P, S, T


def test_the_data_are_the_constructed_near_orthogonal_set(tiny):
    P, S, _ = tiny
    G = S.X @ S.X.T
    norms = np.sqrt(np.diag(G))
    # norms uniform in [1, 1.2]; every off-diagonal inner product +-c, the same c
    assert S.X.shape == (P.n, P.d) and np.all((norms >= 1) & (norms <= 1.2))
    off = np.abs(G[~np.eye(P.n, dtype=bool)])
    assert np.allclose(off, off[0])
    # c chosen so that n / n_max = gap, n_max = (gamma^3/3)(R_min^2/p)(R_min^2/R_max^2)
    n_max = P.gamma**3 / 3 * norms.min() ** 4 / (off[0] * norms.max() ** 2)
    assert P.n / n_max == pytest.approx(P.gap, rel=1e-9)
    assert S.asm.ratio == pytest.approx(P.gap, rel=1e-9)
    # the span coordinates keep every inner product; labels are +-1
    assert np.allclose(S.Xc @ S.Xc.T, G, atol=1e-12)
    assert set(np.unique(S.y)) <= {-1.0, 1.0}
    # the step 1 / R_max^2
    assert S.lr == pytest.approx(1 / norms.max() ** 2, rel=1e-12)


def test_the_network_and_the_test_points(tiny):
    P, S, _ = tiny
    m = P.m1 + P.m2
    a = S.net.a().numpy()
    assert np.allclose(a, [1 / math.sqrt(m)] * P.m1 + [-1 / math.sqrt(m)] * P.m2)
    x = np.array([1.0, -2.0])
    assert np.allclose(S.net.phi(torch.as_tensor(x)).numpy(), [1.0, -2.0 * P.gamma])
    # X_test ~ N(0, I_k): mean 0 and variance 1 within 5 standard errors
    Z = S.X_test
    assert Z.shape == (P.n_test, S.Xc.shape[1])
    se = 1 / math.sqrt(Z.size)
    assert abs(Z.mean()) < 5 * se and abs(Z.var() - 1) < 5 * math.sqrt(2) * se


def test_the_convex_optimum_beats_every_feasible_point_tried(tiny):
    """``W*`` is the optimum of Problem (3): no point on the segment to a feasible point (here
    ``(c z*, -c z*)``, feasible by the paper's construction) has a smaller objective."""
    P, S, _ = tiny
    m1, m2, g = P.m1, P.m2, P.gamma
    m = m1 + m2
    c = math.sqrt(m) / min(m1 + g * m2, m2 + g * m1)
    v_f, u_f = c * S.z_star, -c * S.z_star

    def cons(v, u):
        pos = (m1 * S.Xc @ v - g * m2 * S.Xc @ u) / math.sqrt(m)
        neg = (m2 * S.Xc @ u - g * m1 * S.Xc @ v) / math.sqrt(m)
        return np.where(S.y > 0, pos, neg)

    def obj(v, u):
        return m1 / 2 * v @ v + m2 / 2 * u @ u

    assert cons(v_f, u_f).min() >= 1 - 1e-9
    assert cons(S.sol.v, S.sol.u).min() >= 1 - 1e-7
    for t in np.linspace(0.05, 1, 20):
        v, u = (1 - t) * S.sol.v + t * v_f, (1 - t) * S.sol.u + t * u_f
        assert obj(v, u) >= obj(S.sol.v, S.sol.u) - 1e-9


def test_the_initialization_law_and_the_runs(tiny):
    P, S, T = tiny
    k = S.Xc.shape[1]
    W0 = T.W0.numpy().reshape(P.directions, 3, P.m1 + P.m2, k)
    # 3 runs per direction, at 0.001, 1 and 10 times the default N(0, init_scale^2/d I)
    assert T.B == 3 * P.directions
    for b, mult in enumerate(gf.MULTS):
        var = (mult * P.init_scale) ** 2 / P.d
        entries = W0[:, b].ravel()
        assert abs(entries.var() / var - 1) < 5 * math.sqrt(2 / entries.size)
        assert np.allclose(W0[:, b] / mult, W0[:, 1])  # one direction, three scales
    # the run took at least `steps` steps, and starts from W0
    assert T.total_steps >= P.steps and T.run.checkpoints[-1] == T.total_steps
    assert torch.equal(T.run.W[0], T.W0)


def _exp_log_loss(S, W) -> float:
    """``log (1/n) sum_i exp(-y_i f(x_i; W))``, ``f = sum_j a_j leaky(w_j.x)``, by hand."""
    Z = W @ S.Xc.T
    phi = np.where(Z >= 0, Z, S.net.gamma * Z)
    m1, m = S.net.m1, S.net.m
    f = (phi[:m1].sum(0) - phi[m1:].sum(0)) / math.sqrt(m)
    return float(np.log(np.mean(np.exp(-S.y * f))))


def test_the_recorded_loss_and_flow_time_are_the_formulas(tiny):
    P, S, T = tiny
    run = T.run
    for i, step in enumerate(run.checkpoints):
        for b in (0, 4, T.B - 1):
            got = run.log_loss[step, b]
            assert got == pytest.approx(_exp_log_loss(S, run.W[i, b].numpy()), rel=1e-10, abs=1e-10)
    # gradient-flow time t_k = sum_{j<k} lr / L_j
    t = np.concatenate([[0.0], np.cumsum(S.lr / np.exp(run.log_loss[:-1, 0]))])
    assert np.allclose(np.exp(run.log_time[1:60, 0]), t[1:60], rtol=1e-10)


def test_one_step_is_the_normalised_gradient_step(tiny):
    """``W <- W - lr grad L / L``, with the gradient from torch's autograd on the loss formula."""
    P, S, T = tiny
    W0 = T.W0[5:6].clone()
    one = flow.normalized_flow(S.net, W0, torch.as_tensor(S.Xc), torch.as_tensor(S.y), loss="exp",
                               lr=S.lr, checkpoints=[1])  # fmt: skip
    W = W0[0].clone().requires_grad_(True)
    X, y = torch.as_tensor(S.Xc), torch.as_tensor(S.y)
    Z = W @ X.T
    phi = torch.where(Z >= 0, Z, P.gamma * Z)
    f = (phi[: P.m1].sum(0) - phi[P.m1 :].sum(0)) / math.sqrt(P.m1 + P.m2)
    torch.log(torch.exp(-y * f).mean()).backward()
    assert torch.allclose(one.W[-1, 0], W0[0] - S.lr * W.grad, atol=1e-12)


def test_the_certificate_normalises_by_the_smallest_margin(tiny):
    P, S, T = tiny
    row = T.final.iloc[0]
    W = T.run.W[-1, int(row.config)].numpy()
    Z = W @ S.Xc.T
    phi = np.where(Z >= 0, Z, P.gamma * Z)
    q = S.y * (phi[: P.m1].sum(0) - phi[P.m1 :].sum(0)) / math.sqrt(P.m1 + P.m2)
    Wn = W / q.min()
    assert row.dist_to_convex == pytest.approx(
        np.linalg.norm(Wn - S.sol.W) / np.linalg.norm(S.sol.W), rel=1e-9
    )
    assert row.margin_max_dev == pytest.approx(np.abs(q / q.min() - 1).max(), rel=1e-9, abs=1e-12)


def test_the_trained_runs_pass_and_the_page_order_of_claims(tiny):
    P, S, T = tiny
    hyp = gf.near_orthogonality(P, S)
    reached = gf.loss_below_log2_over_n(P, T)
    assert hyp.holds and reached.holds
    claims = gf.training_claims(P, S, T, hyp, reached=reached)
    assert [c.outcome() for c in claims] == [True] * len(claims)
    kinds = {c.name: c.kind for c in claims}
    assert kinds["item2_sign_pattern"] == "theorem"
    assert kinds["item7_z_ratio"] == "sanity"  # implied by item 5 and the bound at W*
    assert kinds["distance_falls_like_one_over_s"] == "observation"


def test_the_discretisation_compares_at_the_stated_time(tiny):
    P, S, T = tiny
    D = gf.discretisation(P, S, T)
    assert D.s == pytest.approx(min(50.0, P.steps * S.lr / 4))
    assert 0 < D.step_gap < D.to_go


# --- why item 7's bound at W* is a sanity check -------------------------------------------------


def test_item7_bound_holds_at_the_convex_optimum_on_any_data():
    """Item 7's bound holds at Problem (3)'s optimum for data far outside the assumption too:
    at W* it cannot fail, so the page keeps it as a sanity check."""
    rng = np.random.default_rng(3)
    for _ in range(8):
        X = rng.standard_normal((5, 5)) + 2 * rng.standard_normal(5)  # separable
        y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
        m1, m2, g = int(rng.integers(1, 4)), int(rng.integers(1, 4)), float(rng.uniform(0.1, 1))
        sol = kkt.solve_problem3(X, y, m1, m2, gamma=g)
        z_star, _ = kkt.max_margin_separator(X, y)
        ratio = np.linalg.norm(sol.z) / np.linalg.norm(z_star)
        assert ratio <= 2 / (min(m1, m2) / max(m1, m2) + g) + 1e-7


# --- the sentences the module decides ------------------------------------------------------------


def test_factor_text_never_rounds_a_factor_to_one():
    assert gf.factor_text(1.4) == "1.4"
    assert gf.factor_text(2993.1) == "2993"
    assert gf.factor_text(float("nan")) == "nan"


def _phase_with_factor(d_items: int, d_asm: int) -> gf.Phase:
    rows = []
    for dd in (10, 14, 20):
        rows.append({"n": 4, "d": dd, "holds": dd >= d_asm, "all items": dd >= d_items})
    return gf.Phase({4: np.array([10, 14, 20])}, pd.DataFrame(rows))


def test_phase_sentences_follow_the_factor():
    P = gf.SPEC.params("smoke")
    small = gf.phase_texts(P, _phase_with_factor(14, 20))  # factor 20/14 = 1.43
    assert "1.4" in small["phase_factor_text"]
    assert "or more times smaller" not in small["phase_takeaway_text"]
    assert "factor of at least 1.4" in small["phase_takeaway_text"]
    assert gf.items_hold_below_assumption(P, _phase_with_factor(14, 20)).outcome() is True
    equal = gf.phase_texts(P, _phase_with_factor(20, 20))  # factor 1: not below
    assert equal["phase_not_below_text"].startswith("At n = 4 they do not")
    assert "not shown to hold below" in equal["phase_conclusion_text"]
    assert gf.items_hold_below_assumption(P, _phase_with_factor(20, 20)).outcome() is False
    assert "$" not in "".join(small.values()) + "".join(equal.values())


def test_reading_sentences_follow_the_numbers():
    P = gf.SPEC.params("smoke")
    ordered = pd.DataFrame({"config": [0, 1, 2], "dist_to_convex": [0.001, 0.01, 0.05]})
    T = gf.Training(None, None, 0, ordered)
    assert "50 times closer" in gf.reading_figure(P, T)
    unordered = ordered.assign(dist_to_convex=[0.05, 0.01, 0.001])
    assert "not ordered" in gf.reading_figure(P, gf.Training(None, None, 0, unordered))
    assert "10 times less" in gf.reading_discretisation(P, gf.Discretisation(50.0, 0.01, 0.1))
    assert "factor of 2" in gf.reading_discretisation(P, gf.Discretisation(50.0, 0.06, 0.1))
    assert "too large" in gf.reading_discretisation(P, gf.Discretisation(50.0, 0.2, 0.1))
