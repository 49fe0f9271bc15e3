"""Tests of twolayer.paper_a.kkt: Problems (1) and (3), multipliers, z, z*, the three-point example."""
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
    sol = kkt.solve_problem3(ds.X, ds.y, 3, 2, 0.5)
    return ds, sol


def test_problem3_optimum_is_kkt_point_of_problem1(problem):
    ds, sol = problem
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    res = kkt.problem1_kkt_residual(net, sol.W, ds.X, ds.y, sol.lam)
    assert max(res.values()) < TOL, res


def test_item2_formula_and_its_inverse(problem):
    ds, sol = problem
    v, u = kkt.vu_from_multipliers(sol.lam, ds.X, ds.y, 5, 0.5)
    assert np.allclose(v, sol.v, atol=TOL) and np.allclose(u, sol.u, atol=TOL)
    lam, res = kkt.multipliers_from_vu(sol.v, sol.u, ds.X, ds.y, 5, 0.5)
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
    c = kkt.certify(net, 7.5 * sol.W, ds.X, ds.y, sol, z_star, Xt)
    assert c["dist_to_convex"] < 1e-9 and c["margin_max_dev"] < TOL and c["row_collapse"] < 1e-12
    assert c["rank_ratio"] < 1e-9 and c["lambda_in_range"] and c["sign_agreement"] == 1.0
    with pytest.raises(ValueError):
        kkt.certify(net, -sol.W, ds.X, ds.y, sol, z_star, Xt)


def test_kappa_and_bound():
    assert kkt.kappa(3, 2) == pytest.approx(2 / 3) and kkt.kappa(2, 2) == 1
    assert kkt.z_bound(2, 2, 1.0) == pytest.approx(1.0)


@pytest.mark.parametrize("eps", [1e-3, 1 / 72, 0.3])
def test_three_point_multipliers(eps):
    X, y = kkt.three_point_example(eps)
    sol = kkt.solve_problem3(X, y, 1, 1, kkt.THREE_POINT_GAMMA)
    assert np.allclose(sol.lam, kkt.three_point_multipliers(eps), atol=TOL)
    assert np.allclose(kkt.three_point_kkt_system(eps), kkt.three_point_multipliers(eps), atol=1e-12)
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
    assert math.isclose(np.linalg.norm(kkt.weights_from_vu(v, u, 3, 2)) ** 2,
                        3 * v @ v + 2 * u @ u)
