"""Tests of twolayer.paper_a.kkt: Problems (1) and (3), multipliers, z, z*, the three-point
example."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from twolayer.paper_a import assumptions, data, kkt, models

TOL = 1e-7  # Clarabel runs to 1e-10 gaps


@pytest.fixture(scope="module")
def problem():
    ds = data.constructed_gram(8, 12, seed=3, gamma=0.5, ratio=0.9)
    sol = kkt.solve_problem3(ds.X, ds.y, 3, 2, gamma=0.5)
    return ds, sol


def test_problem3_optimum_is_kkt_point_of_problem1(problem):
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    res = kkt.problem1_kkt_residual(net, sol.W, ds.X, ds.y, lam=sol.lam)
    assert max(res.values()) < TOL, res


def test_item2_formula_and_its_inverse(problem):
    ds, sol = problem
    v, u = kkt.vu_from_multipliers(sol.lam, ds.X, ds.y, 5, gamma=0.5)
    assert np.allclose(v, sol.v, atol=TOL) and np.allclose(u, sol.u, atol=TOL)
    lam, res = kkt.multipliers_from_vu(sol.v, sol.u, ds.X, ds.y, m=5, gamma=0.5)
    assert res < TOL and np.allclose(lam, sol.lam, atol=1e-6)


def test_theorem32_items_at_the_optimum(problem):
    ds, sol = problem
    lo, hi = kkt.multiplier_bounds(ds.X, 0.5)
    assert np.all(sol.lam > lo) and np.all(sol.lam < hi)
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    q = net.margins(torch.as_tensor(sol.W), torch.as_tensor(ds.X), torch.as_tensor(ds.y)).numpy()
    assert np.allclose(q, 1, atol=TOL)
    z_star, mu = kkt.max_margin_separator(ds.X, ds.y)
    assert np.all(ds.y * (ds.X @ z_star) >= 1 - TOL)
    assert np.allclose(z_star, (mu * ds.y) @ ds.X, atol=1e-6)
    ratio = np.linalg.norm(sol.z) / np.linalg.norm(z_star)
    assert 1 - TOL <= ratio <= kkt.z_bound(3, 2, 0.5)
    Xt = np.random.default_rng(0).standard_normal((2000, ds.d))
    f = net(torch.as_tensor(sol.W), torch.as_tensor(Xt)).numpy()
    assert np.array_equal(np.sign(f), np.sign(Xt @ sol.z))


def test_certify_at_the_optimum_and_scale_invariance(problem):
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    z_star, _ = kkt.max_margin_separator(ds.X, ds.y)
    Xt = np.random.default_rng(1).standard_normal((500, ds.d))
    c = kkt.certify(net, 7.5 * sol.W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    # dist_to_convex = |1 / min q - 1| at a multiple of W*: as small as the solver makes the
    # optimum's margins 1 (1e-10, or 1e-8 where _solve falls back to Clarabel's defaults), so
    # bounded by TOL like margin_max_dev; the rows of W* coincide by construction (exact 0)
    assert c["dist_to_convex"] < TOL and c["margin_max_dev"] < TOL and c["row_collapse"] < 1e-12
    assert c["rank_ratio"] < 1e-9 and c["lambda_in_range"] and c["sign_agreement"] == 1.0
    with pytest.raises(ValueError):
        kkt.certify(net, -sol.W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)


def test_kappa_and_bound():
    assert kkt.kappa(3, 2) == pytest.approx(2 / 3) and kkt.kappa(2, 2) == 1
    assert kkt.z_bound(2, 2, 1.0) == pytest.approx(1.0)


@pytest.mark.parametrize("eps", [1e-3, 1 / 72, 0.3])
def test_three_point_multipliers(eps):
    X, y = kkt.three_point_example(eps)
    sol = kkt.solve_problem3(X, y, 1, 1, gamma=kkt.THREE_POINT_GAMMA)
    assert np.allclose(sol.lam, kkt.three_point_multipliers(eps), atol=TOL)
    assert np.allclose(
        kkt.three_point_kkt_system(eps), kkt.three_point_multipliers(eps), atol=1e-12
    )
    marg = y * (X @ sol.z)
    assert marg[1] == pytest.approx(6 * (1 + eps) / (4 * eps + 5), abs=TOL)
    assert marg[2] == pytest.approx(6 / 5, abs=TOL) and marg[1] > marg[2]


def test_three_point_assumption_boundary():
    assert assumptions.near_orthogonality(kkt.three_point_example(1 / 72 * 0.999)[0], 0.5).holds
    assert not assumptions.near_orthogonality(kkt.three_point_example(1 / 72 * 1.001)[0], 0.5).holds
    with pytest.raises(ValueError):
        kkt.three_point_example(0.0)


def test_projection_onto_span():
    X = np.random.default_rng(0).standard_normal((3, 7))
    W = np.random.default_rng(1).standard_normal((4, 7))
    Pw = kkt.project_rows_onto_span(W, X)
    assert np.allclose(Pw @ X.T, W @ X.T) and np.allclose(kkt.project_rows_onto_span(Pw, X), Pw)


def test_z_from_weights_matches_z_when_collapsed(problem):
    _, sol = problem
    assert np.allclose(kkt.z_from_weights(sol.W, 3), sol.z)
    v, u = kkt.group_means(sol.W, 3)
    assert np.allclose(v, sol.v) and np.allclose(u, sol.u)
    assert math.isclose(np.linalg.norm(kkt.weights_from_vu(v, u, 3, 2)) ** 2, 3 * v @ v + 2 * u @ u)


def test_deviations_match_certify_and_are_nan_without_separation(problem):
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    z_star, _ = kkt.max_margin_separator(ds.X, ds.y)
    Xt = np.random.default_rng(2).standard_normal((300, ds.d))
    rng = np.random.default_rng(3)
    W = torch.as_tensor(sol.W + 0.05 * rng.standard_normal(sol.W.shape))
    dev = kkt.deviations(net, torch.stack([W, -W]), ds.X, ds.y, sol=sol, X_test=Xt)
    c = kkt.certify(net, W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    for key in ("margin_max_dev", "row_collapse", "rank_ratio", "dist_to_convex"):
        assert dev[key][0] == pytest.approx(c[key], rel=1e-10), key
    assert dev["sign_disagreement"][0] == pytest.approx(1 - c["sign_agreement"])
    assert all(np.isnan(v[1]) for v in dev.values())  # -W does not separate


def test_certify_reports_sign_pattern_and_slacks(problem):
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    z_star, _ = kkt.max_margin_separator(ds.X, ds.y)
    Xt = np.random.default_rng(1).standard_normal((100, ds.d))
    c = kkt.certify(net, sol.W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    assert c["sign_pattern_min"] > 0 and c["z_slack"] < 1e-7 and c["sign_pattern_slack"] < 1e-7
    # push u past zero on a positive point: the data stay separated, but item 2's signs fail
    # there (the answer is "no")
    i = int(np.flatnonzero(ds.y > 0)[0])
    x = ds.X[i]
    u = sol.u + (0.1 - sol.u @ x) * x / (x @ x)
    W = kkt.weights_from_vu(sol.v, u, 3, 2)
    assert (
        float(net.margins(torch.as_tensor(W), torch.as_tensor(ds.X), torch.as_tensor(ds.y)).min())
        > 0
    )
    bad = kkt.certify(net, W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    assert bad["sign_pattern_min"] < 0 and bad["sign_pattern_slack"] > 0


def test_kkt_residual_zero_at_a_kkt_point_positive_elsewhere(problem):
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    assert kkt.kkt_residual(net, 4.0 * sol.W, ds.X, ds.y)["residual"] < 1e-7
    # rows that have not collapsed: not a KKT point (the answer is "no")
    rng = np.random.default_rng(0)
    W = sol.W + 0.3 * rng.standard_normal(sol.W.shape)
    q = net.margins(torch.as_tensor(W), torch.as_tensor(ds.X), torch.as_tensor(ds.y))
    assert float(q.min()) > 0
    assert kkt.kkt_residual(net, W, ds.X, ds.y)["residual"] > 0.01
    with pytest.raises(ValueError):
        kkt.kkt_residual(net, -sol.W, ds.X, ds.y)


def test_angle_is_accurate_for_tiny_angles():
    assert kkt.angle([1.0, 0.0], [0.0, 2.0]) == pytest.approx(math.pi / 2)
    assert kkt.angle([1.0, 0.0], [1.0, 1e-9]) == pytest.approx(1e-9, rel=1e-6)
    assert kkt.angle([1.0, 2.0], [2.0, 4.0]) == 0.0  # parallel: no angle


@pytest.mark.parametrize("eps", [1e-3, 0.3])
def test_three_point_closed_forms_match_the_solvers(eps):
    X, y = kkt.three_point_example(eps)
    z, z_star = kkt.three_point_closed_forms(eps)
    sol = kkt.solve_problem3(X, y, 2, 2, gamma=kkt.THREE_POINT_GAMMA)
    zs, mu = kkt.max_margin_separator(X, y)
    assert np.allclose(sol.z, z, atol=TOL) and np.allclose(zs, z_star, atol=TOL)
    assert np.all(mu > 0)  # every constraint of the max-margin problem is active
    assert kkt.angle(z, z_star) > 0


def test_three_point_table():
    rows = kkt.three_point_table([1e-3, 0.1], m_half=1)
    assert [r["holds"] for r in rows] == [True, False]  # 0.1 > 1/72: the answer is "no"
    for r in rows:
        assert r["err_printed"] < TOL and r["err_system"] < TOL and r["err_closed_form"] < TOL
        assert r["margin2"] > r["margin3"] and r["nmargin_z"] < r["nmargin_zstar"]
        assert 1 < r["z_ratio"] <= kkt.z_bound(1, 1, kkt.THREE_POINT_GAMMA)


# --- against their definitions, computed here row by row (mutation testing found the formulas
# of kkt_residual, certify's newer measures and deviations unpinned) --------------------------


def _perturbed(sol, scale=0.05, seed=5):
    rng = np.random.default_rng(seed)
    return 2.0 * sol.W + scale * rng.standard_normal(sol.W.shape)


def _reference_residual(net, W, X, y):
    from scipy.optimize import nnls

    Wt, Xt, yt = (torch.as_tensor(np.asarray(a, dtype=np.float64)) for a in (W, X, y))
    q = net.margins(Wt, Xt, yt).numpy()
    Wn = np.asarray(W) / q.min()
    a = net.a(torch.as_tensor(Wn)).numpy()
    cols = []
    for i in range(len(y)):
        pre = Wn @ X[i]
        dphi = np.where(pre >= 0, 1.0, net.gamma)  # phi'(0) = 1, as the library's convention
        cols.append((y[i] * (a * dphi)[:, None] * X[i][None, :]).ravel())
    lam, res = nnls(np.array(cols).T, Wn.ravel())
    stat = res / np.linalg.norm(Wn)
    slack = lam @ (q / q.min() - 1) / lam.sum()
    return stat, slack


def test_kkt_residual_matches_its_definition(problem):
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    W = _perturbed(sol)
    got = kkt.kkt_residual(net, W, ds.X, ds.y)
    stat, slack = _reference_residual(net, W, ds.X, ds.y)
    assert got["stationarity"] == pytest.approx(stat, rel=1e-9)
    assert got["slackness"] == pytest.approx(slack, rel=1e-9, abs=1e-15)
    assert got["residual"] == max(got["stationarity"], got["slackness"])
    assert got["stationarity"] > 1e-3 and got["slackness"] > 0  # not a KKT point
    with pytest.raises(ValueError, match="^W does not separate the training data$"):  # zero margin
        kkt.kkt_residual(net, 0.0 * sol.W, ds.X, ds.y)


@pytest.mark.parametrize("scale", [0.05, 20.0])
def test_kkt_residual_matches_its_definition_at_any_data_scale(problem, scale):
    """The residuals are defined for any separating ``W``, however the multipliers sum: data
    scaled by 20 make them sum far below 1 (``||W~||^2 = sum_i lambda_i y_i f(x_i; W~)`` by
    Euler's identity), by 0.05 far above."""
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    W, X = _perturbed(sol), scale * ds.X
    got = kkt.kkt_residual(net, W, X, ds.y)
    stat, slack = _reference_residual(net, W, X, ds.y)
    assert got["stationarity"] == pytest.approx(stat, rel=1e-9)
    assert got["slackness"] == pytest.approx(slack, rel=1e-9, abs=1e-15)


def test_certify_newer_measures_match_their_definitions(problem):
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    z_star, _ = kkt.max_margin_separator(ds.X, ds.y)
    Xt = np.random.default_rng(2).standard_normal((300, ds.d))
    W = _perturbed(sol, scale=0.2)
    c = kkt.certify(net, W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    q = net.margins(torch.as_tensor(W), torch.as_tensor(ds.X), torch.as_tensor(ds.y)).numpy()
    Wn = W / q.min()
    v, u = Wn[:3].mean(axis=0), Wn[3:].mean(axis=0)
    norms = np.array([np.linalg.norm(x) for x in ds.X])
    signs = np.minimum(ds.y * (ds.X @ v), -ds.y * (ds.X @ u)) / norms
    assert c["sign_pattern_min"] == pytest.approx(signs.min(), rel=1e-10)
    # the same with the roles of v and u exchanged at their minima (whichever term is smaller)
    for seed in range(6):
        Wk = _perturbed(sol, scale=0.5, seed=seed)
        ck = kkt.certify(net, Wk, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
        qk = net.margins(torch.as_tensor(Wk), torch.as_tensor(ds.X), torch.as_tensor(ds.y))
        Wk = Wk / qk.min().item()
        vk, uk = Wk[:3].mean(axis=0), Wk[3:].mean(axis=0)
        sk = [min(yi * (x @ vk), -yi * (x @ uk)) / np.linalg.norm(x) for x, yi in zip(ds.X, ds.y)]
        assert ck["sign_pattern_min"] == pytest.approx(min(sk), rel=1e-10)
    slack = max(np.linalg.norm(v - sol.v), np.linalg.norm(u - sol.u))
    assert c["sign_pattern_slack"] == pytest.approx(slack, rel=1e-10)
    delta = Wn - sol.W
    assert c["dist_op"] == pytest.approx(np.linalg.norm(delta, 2), rel=1e-10)
    f_star = net(torch.as_tensor(sol.W), torch.as_tensor(Xt)).numpy()
    guaranteed = np.mean(np.abs(f_star) > c["dist_op"] * np.linalg.norm(Xt, axis=1))
    assert c["sign_margin_bound"] == pytest.approx(guaranteed)
    assert 0 < c["sign_margin_bound"] < 1  # the perturbation leaves some points unguaranteed
    lo, hi = kkt.multiplier_bounds(ds.X, 0.5)
    lam, _ = kkt.multipliers_from_vu(v, u, ds.X, ds.y, m=5, gamma=0.5)
    assert c["lambda_in_range"] == bool(lam.min() > lo and lam.max() < hi)
    assert c["lambda_min"] == pytest.approx(lam.min()) and c["lambda_max"] == pytest.approx(
        lam.max()
    )


def test_deviations_equal_certify_run_by_run(problem):
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    z_star, _ = kkt.max_margin_separator(ds.X, ds.y)
    Xt = np.random.default_rng(3).standard_normal((200, ds.d))
    Ws = np.stack([_perturbed(sol, 0.1, s) for s in range(3)] + [-sol.W])
    dev = kkt.deviations(net, Ws, ds.X, ds.y, sol=sol, X_test=Xt)
    for b in range(3):
        c = kkt.certify(net, Ws[b], ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
        for k in ("margin_max_dev", "row_collapse", "rank_ratio", "dist_to_convex"):
            assert dev[k][b] == pytest.approx(c[k], rel=1e-9, abs=1e-14), k
        assert dev["sign_disagreement"][b] == pytest.approx(1 - c["sign_agreement"])
    assert all(np.isnan(dev[k][3]) for k in kkt.DEVIATIONS)  # -W* does not separate


def test_z_slack_away_from_the_optimum(problem):
    """``z_slack = ||W~ - W*||_F / ||z*||`` at a W far from W* (W~ = W over its smallest
    margin), by hand; and what it promises: ``z(W) = (m1 v - m2 u) / sqrt(m)`` is
    1-Lipschitz in ``W`` for the Frobenius norm, so ``|z_ratio(W) - z_ratio(W*)| <= z_slack``."""
    ds, sol = problem
    m1, m2 = 3, 2
    net = models.LeakyNetwork(m1, m2, gamma=0.5)
    z_star, _ = kkt.max_margin_separator(ds.X, ds.y)
    Xt = np.random.default_rng(1).standard_normal((50, ds.d))
    rng = np.random.default_rng(7)
    W = sol.W + 0.3 * rng.standard_normal(sol.W.shape) @ np.diag(np.ones(ds.d))
    c = kkt.certify(net, torch.as_tensor(W), ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    q = net.margins(torch.as_tensor(W), torch.as_tensor(ds.X), torch.as_tensor(ds.y))
    Wn = W / float(q.min())
    expected = np.linalg.norm(Wn - sol.W) / np.linalg.norm(z_star)
    assert c["z_slack"] == pytest.approx(expected, rel=1e-9)

    def z_of(M):
        v, u = M[:m1].mean(0), M[m1:].mean(0)
        return (m1 * v - m2 * u) / math.sqrt(m1 + m2)

    dz = np.linalg.norm(z_of(Wn)) - np.linalg.norm(z_of(sol.W))
    assert abs(dz) / np.linalg.norm(z_star) <= c["z_slack"]


def test_solvers_reach_the_tight_tolerance_they_ask_for():
    """``_solve`` asks Clarabel for gaps and feasibility of 1e-10: complementary slackness
    ``mu_i (y_i z.x_i - 1)`` of the max-margin separator and ``lambda_i (margin_i - 1)`` of
    Problem (3), both computed here from the returned primal and dual, are below 1e-10 (at
    Clarabel's default tolerances, 1e-8, they come out near 2e-10 on these instances)."""
    for seed in range(3):
        ds = data.constructed_gram(8, 12, seed=seed, gamma=0.5, ratio=0.9)
        z, mu = kkt.max_margin_separator(ds.X, ds.y)
        assert np.abs(mu * (ds.y * (ds.X @ z) - 1)).max() < 1e-10
        sol = kkt.solve_problem3(ds.X, ds.y, 3, 2, gamma=0.5)
        net = models.LeakyNetwork(3, 2, gamma=0.5)
        q = net.margins(torch.as_tensor(sol.W), torch.as_tensor(ds.X), torch.as_tensor(ds.y))
        assert np.abs(sol.lam * (q.numpy() - 1)).max() < 1e-10


def test_the_solver_named_is_the_one_called():
    ds = data.constructed_gram(8, 12, seed=0, gamma=0.5, ratio=0.9)
    with pytest.raises(RuntimeError, match="convex solver NO_SUCH_SOLVER finished"):
        kkt.max_margin_separator(ds.X, ds.y, solver="NO_SUCH_SOLVER")
    with pytest.raises(RuntimeError, match="convex solver NO_SUCH_SOLVER finished"):
        kkt.solve_problem3(ds.X, ds.y, 3, 2, gamma=0.5, solver="NO_SUCH_SOLVER")


def _deviations_example():
    """m1 = 2, m2 = 1, gamma = 1/2, x_1 = e_1 (y = +1), x_2 = e_2 (y = -1) in R^3 (so
    min(m, d) = 3), and test points on which ``W1 = sqrt3 diag(1, -4, 1/2)`` is known by hand."""
    r3 = math.sqrt(3)
    net = models.LeakyNetwork(2, 1, gamma=0.5)
    X, y = np.eye(3)[:2], np.array([1.0, -1.0])
    # the reference W*: rows v*, v*, u*
    v, u = r3 * np.array([0.5, -2.0, 0.0]), r3 * np.array([0.0, 0.0, 0.5])
    sol = kkt.Problem3Solution(v=v, u=u, lam=np.ones(2), m1=2, m2=1, gamma=0.5)
    Xt = np.array([[1.0, 0.0, 0.0], [1.0, 0.4, 0.0], [-1.0, -0.15, 0.0], [0.0, 0.0, 1.0]])
    return net, X, y, sol, Xt, r3 * np.diag([1.0, -4.0, 0.5])


def test_deviations_worked_example():
    """:func:`kkt.deviations` by hand, row by row. ``W1 = sqrt3 diag(1, -4, 1/2)``: margins
    ``(1, 2)`` (``y_2 f(e_2) = -gamma (-4)``), so ``W~ = W1`` and ``margin_max_dev = 1``;
    singular values ``sqrt3 (4, 1, 1/2)``: ``rank_ratio = 1/8``; its rows 1, 2 lie
    ``sqrt3 ||(1/2, 2, 0)||`` from their mean ``v* = sqrt3 (1/2, -2, 0)``:
    ``row_collapse = sqrt(2 * 4.25 / 17.25) = sqrt(17/69)`` and ``dist_to_convex =
    sqrt(8.5 / 8.75) = sqrt(34/35)``; ``f(x) = phi(x1) + phi(-4 x2) - phi(x3/2)`` and
    ``z.x = x1 - 4 x2 - x3/2`` disagree in sign on the test points 2 and 4 of 4 (``f = 0.2,
    z.x = -0.6`` and ``f = 0.1, z.x = -0.4``): ``sign_disagreement = 1/2``. ``2 W*``: margins
    ``(2, 4)``, collapsed, rank 2, so 1 and zeros. ``sqrt3 diag(1, 0, 1/2)``: margin 0 on
    ``x_2`` (not strictly separating): NaN everywhere. A single ``(m, d)`` matrix is a batch of
    one."""
    net, X, y, sol, Xt, W1 = _deviations_example()
    Ws = np.stack([W1, 2 * sol.W, math.sqrt(3) * np.diag([1.0, 0.0, 0.5])])
    dev = kkt.deviations(net, Ws, X, y, sol=sol, X_test=Xt)
    expected = {
        "margin_max_dev": [1.0, 1.0],
        "row_collapse": [math.sqrt(17 / 69), 0.0],
        "rank_ratio": [0.125, 0.0],
        "dist_to_convex": [math.sqrt(34 / 35), 0.0],
        "sign_disagreement": [0.5, 0.0],
    }
    assert set(dev) == set(expected)
    for k, want in expected.items():
        assert dev[k].shape == (3,), k
        assert dev[k][:2] == pytest.approx(want, rel=1e-12, abs=1e-15), k
        assert np.isnan(dev[k][2]), k
    one = kkt.deviations(net, W1, X, y, sol=sol, X_test=Xt)
    for k, want in expected.items():
        assert one[k].shape == (1,) and one[k][0] == pytest.approx(want[0], rel=1e-12), k


def test_deviations_sign_test_at_the_end_of_the_float_range():
    """Item 6 compares signs only, and the deviations are invariant under ``(X, W) -> (t X,
    W / t)``: at ``t = 5e-308`` (``W`` up to ``1.4e308``) the margin, rank and sign deviations
    of the worked example are unchanged, the sign test included (``z = (m1 v - m2 u) / sqrt m``
    stays finite: up to ``8e307``)."""
    net, X, y, sol, Xt, W1 = _deviations_example()
    t = 5e-308
    dev = kkt.deviations(net, W1 / t, t * X, y, sol=sol, X_test=1e-300 * Xt)
    assert dev["margin_max_dev"][0] == pytest.approx(1.0, rel=1e-12)
    assert dev["rank_ratio"][0] == pytest.approx(0.125, rel=1e-12)
    assert dev["sign_disagreement"][0] == 0.5
