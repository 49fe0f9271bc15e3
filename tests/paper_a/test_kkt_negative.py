"""Cases where the answer is "no" for the KKT residual and the certificate of Theorem 3.2:
a KKT residual that returned zeros, or a certificate that ignored its input,
passed every earlier test. Here a random separating W, a perturbed W*, wrong multipliers, an
infeasible W and non-collapsed rows must all be told apart from the optimum; and the solver's
failure and label validation are exercised."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from twolayer.paper_a import data, kkt, models

TOL = 1e-7  # what the positive tests accept at the optimum (Clarabel runs to 1e-10 gaps)


@pytest.fixture(scope="module")
def problem():
    ds = data.constructed_gram(8, 12, seed=3, gamma=0.5, ratio=0.9)
    net = models.LeakyNetwork(3, 2, gamma=0.5)
    sol = kkt.solve_problem3(ds.X, ds.y, 3, 2, gamma=0.5)
    z_star, _ = kkt.max_margin_separator(ds.X, ds.y)
    Xt = np.random.default_rng(1).standard_normal((500, ds.d))
    return ds, net, sol, z_star, Xt


def _residual(net, W, ds, lam):
    return kkt.problem1_kkt_residual(net, W, ds.X, ds.y, lam=lam)


def _feasible(net, W, ds):
    """W rescaled so that its smallest margin is 1 (a feasible point of Problem (1))."""
    q = net.margins(torch.as_tensor(W), torch.as_tensor(ds.X), torch.as_tensor(ds.y))
    assert float(q.min()) > 0, "W must separate the data"
    return np.asarray(W) / float(q.min())


def test_optimum_is_a_kkt_point_and_its_residuals_are_not_trivially_zero(problem):
    ds, net, sol, _, _ = problem
    res = _residual(net, sol.W, ds, sol.lam)
    assert max(res.values()) < TOL
    # the residual is computed, not returned: twice the multipliers double the gradient term
    res2 = _residual(net, sol.W, ds, 2 * sol.lam)
    assert res2["stationarity"] == pytest.approx(1.0, rel=1e-6)  # ||W - 2W|| / ||W||


def test_random_separating_w_is_not_a_kkt_point(problem):
    ds, net, sol, _, _ = problem
    rng = np.random.default_rng(0)
    # a random W rotated towards separating the data: W* plus a large random component
    W = sol.W + 0.5 * np.linalg.norm(sol.W) * rng.standard_normal(sol.W.shape) / np.sqrt(sol.W.size)
    W = _feasible(net, W, ds)
    # its best multipliers (least squares on item 2's form) still leave a large residual
    v, u = kkt.group_means(W, 3)
    lam, _ = kkt.multipliers_from_vu(v, u, ds.X, ds.y, m=5, gamma=0.5)
    for mult in (sol.lam, lam, np.ones(ds.n)):
        res = _residual(net, W, ds, mult)
        assert res["stationarity"] > 0.05, res
    assert _residual(net, W, ds, sol.lam)["feasibility"] == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize("eps", [1e-3, 1e-2, 1e-1])
def test_perturbed_optimum_is_measured_as_such(problem, eps):
    ds, net, sol, z_star, Xt = problem
    rng = np.random.default_rng(int(1 / eps))
    dW = rng.standard_normal(sol.W.shape)
    W = sol.W + eps * np.linalg.norm(sol.W) * dW / np.linalg.norm(dW)
    res = _residual(net, W, ds, sol.lam)
    # stationarity moves linearly with the perturbation: far above the solver's tolerance
    assert res["stationarity"] > eps / 10 and res["stationarity"] > 100 * TOL
    c = kkt.certify(net, W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    assert c["dist_to_convex"] > eps / 10
    assert c["row_collapse"] > eps / 100  # rows of a group no longer coincide
    assert c["rank_ratio"] > eps / 1000  # W* has rank 2; a generic perturbation not
    assert c["margin_max_dev"] > eps / 100  # margins are no longer all equal
    assert c["lambda_residual"] > eps / 1000  # means no longer of item 2's form
    # and each measure grows with the perturbation (compared with a perturbation 10x smaller)
    W_small = sol.W + eps / 10 * np.linalg.norm(sol.W) * dW / np.linalg.norm(dW)
    c_small = kkt.certify(net, W_small, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    for k in ("dist_to_convex", "row_collapse", "margin_max_dev"):
        assert c[k] > 3 * c_small[k], (k, c[k], c_small[k])


def test_wrong_multipliers_leave_a_residual(problem):
    ds, net, sol, _, _ = problem
    rng = np.random.default_rng(5)
    wrong = {
        "permuted": rng.permutation(sol.lam) if not np.allclose(sol.lam, sol.lam[0]) else None,
        "scaled": 1.1 * sol.lam,
        "one_off": sol.lam + np.eye(ds.n)[2] * 0.1 * sol.lam.mean(),
        "zeros": np.zeros(ds.n),
    }
    for name, lam in wrong.items():
        if lam is None:
            continue
        res = _residual(net, sol.W, ds, lam)
        assert res["stationarity"] > 1e-3, (name, res)
    # a negative multiplier is dual infeasible
    neg = sol.lam.copy()
    neg[0] = -0.5
    assert _residual(net, sol.W, ds, neg)["dual"] == pytest.approx(0.5)
    # a multiplier on an inactive constraint violates complementary slackness
    W2 = 2.0 * sol.W  # margins 2: every constraint inactive
    assert _residual(net, W2, ds, sol.lam)["slackness"] == pytest.approx(sol.lam.max(), rel=1e-6)


def test_infeasible_w_has_a_feasibility_residual(problem):
    ds, net, sol, _, _ = problem
    res = _residual(net, 0.5 * sol.W, ds, sol.lam)  # margins 1/2
    # feasibility = 1 - min_i q_i / 2 = 1/2 + (1 - min q) / 2: the optimum's margins are 1 only
    # to the solver's accuracy (1e-10, or 1e-8 where _solve falls back to Clarabel's defaults on
    # another machine), which the optimum's own residual test bounds by TOL
    assert res["feasibility"] == pytest.approx(0.5, abs=TOL)


def test_certify_flags_uncollapsed_rows_and_wrong_multipliers(problem):
    ds, net, sol, z_star, Xt = problem
    W = sol.W.copy()
    W[0] += 0.2 * (W[1] - W[0]) + 0.3 * np.linalg.norm(W[0]) * np.eye(ds.d)[0]
    c = kkt.certify(net, W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    assert c["row_collapse"] > 0.01 and c["dist_to_convex"] > 0.01
    # z of the group means is not z of Problem (3): the ratio to z* moves
    c0 = kkt.certify(net, sol.W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    assert abs(c["z_ratio"] - c0["z_ratio"]) > 1e-4


def test_certify_against_another_problems_optimum_says_far(problem):
    ds, net, sol, z_star, Xt = problem
    other = data.constructed_gram(8, 12, seed=4, gamma=0.5, ratio=0.9)
    sol_other = kkt.solve_problem3(other.X, other.y, 3, 2, gamma=0.5)
    c = kkt.certify(net, sol.W, ds.X, ds.y, sol=sol_other, z_star=z_star, X_test=Xt)
    assert c["dist_to_convex"] > 0.1


def test_multipliers_from_vu_says_no_outside_item2s_form(problem):
    ds, _, sol, _, _ = problem
    rng = np.random.default_rng(2)
    _, res = kkt.multipliers_from_vu(sol.v, sol.u, ds.X, ds.y, m=5, gamma=0.5)
    assert res < TOL
    # a direction outside span{x_i} cannot be written as item 2 prescribes
    Q, _ = np.linalg.qr(ds.X.T)
    out = rng.standard_normal(ds.d)
    out -= Q @ (Q.T @ out)
    if np.linalg.norm(out) > 1e-8:
        _, res = kkt.multipliers_from_vu(sol.v + out, sol.u, ds.X, ds.y, m=5, gamma=0.5)
        assert res > 1e-3
    # and inside the span, a pair not coupled by gamma the way item 2 couples it
    _, res = kkt.multipliers_from_vu(sol.v, -sol.u, ds.X, ds.y, m=5, gamma=0.5)
    assert res > 1e-3


def test_item2_formula_depends_on_every_input(problem):
    ds, _, sol, _, _ = problem
    v, u = kkt.vu_from_multipliers(sol.lam, ds.X, ds.y, 5, gamma=0.5)
    for *args, gamma in (
        (2 * sol.lam, ds.X, ds.y, 5, 0.5),
        (sol.lam, ds.X, -ds.y, 5, 0.5),
        (sol.lam, ds.X, ds.y, 6, 0.5),
        (sol.lam, ds.X, ds.y, 5, 0.3),
    ):
        v2, u2 = kkt.vu_from_multipliers(*args, gamma=gamma)
        assert not (np.allclose(v2, v) and np.allclose(u2, u)), args


def test_z_bound_and_kappa_values():
    # item 7: 2 / (kappa + gamma), kappa = min/max
    assert kkt.kappa(2, 3) == pytest.approx(2 / 3) and kkt.kappa(5, 1) == pytest.approx(0.2)
    assert kkt.z_bound(2, 3, 0.5) == pytest.approx(2 / (2 / 3 + 0.5))
    assert kkt.z_bound(1, 1, 1.0) == pytest.approx(1.0)
    lo, hi = kkt.multiplier_bounds(np.array([[3.0, 0.0], [0.0, 1.0]]), 0.5)
    assert lo == pytest.approx(1 / (2 * 9)) and hi == pytest.approx(3 / (2 * 0.25 * 1))


def test_infeasible_problems_make_the_solver_fail():
    # the same point with both labels: no linear separator exists
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, -1.0, 1.0])
    with pytest.raises(RuntimeError, match="status"):
        kkt.max_margin_separator(X, y)
    # (Problem (3) is still feasible there: its constraints fix each neuron's activation
    # pattern, so it is a restriction of Problem (1) that only near-orthogonal data makes
    # exact.) A zero input asks 0 >= 1 of Problem (3):
    with pytest.raises(RuntimeError, match="status"):
        kkt.solve_problem3(
            np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([1.0, -1.0]), 1, 1, gamma=0.5
        )


@pytest.mark.parametrize(
    "y", [np.array([1.0, 0.0, -1.0]), np.array([1.0, 2.0, -1.0]), np.array([[1.0, -1.0, 1.0]])]
)
def test_labels_must_be_plus_minus_one(y):
    X = np.eye(3)
    with pytest.raises(ValueError, match=r"^y must be a vector with entries in \{-1, \+1\}$"):
        kkt.solve_problem3(X, y, 1, 1, gamma=0.5)
    with pytest.raises(ValueError, match="y must be"):
        kkt.vu_from_multipliers(np.ones(3), X, y, 2, gamma=0.5)


def test_three_point_example_outside_the_assumption_is_not_max_margin():
    """Paper A, Appendix B: for eps > 0 the KKT point's z is not the max-margin separator."""
    X, y = kkt.three_point_example(0.3)
    sol = kkt.solve_problem3(X, y, 1, 1, gamma=kkt.THREE_POINT_GAMMA)
    z_star, _ = kkt.max_margin_separator(X, y)
    cos = sol.z @ z_star / (np.linalg.norm(sol.z) * np.linalg.norm(z_star))
    assert cos < 1 - 1e-4


# --- certify's measures against independent computations (mutation testing found these) ------


def _perturbed(sol, eps, seed):
    rng = np.random.default_rng(seed)
    dW = rng.standard_normal(sol.W.shape)
    return sol.W + eps * np.linalg.norm(sol.W) * dW / np.linalg.norm(dW)


def test_certify_values_match_their_definitions(problem):
    """Each measure of certify() recomputed here from its definition in the docstring, at a
    perturbed optimum (where none of them is trivially 0 or 1)."""
    ds, net, sol, z_star, Xt = problem
    W = _perturbed(sol, 0.05, 11)
    c = kkt.certify(net, W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
    q = net.margins(torch.as_tensor(W), torch.as_tensor(ds.X), torch.as_tensor(ds.y)).numpy()
    Wn = W / q.min()
    qn = q / q.min()
    v, u = Wn[:3].mean(0), Wn[3:].mean(0)
    means = np.concatenate([np.tile(v, (3, 1)), np.tile(u, (2, 1))])
    s = np.linalg.svd(Wn, compute_uv=False)
    delta = Wn - sol.W
    dist_op = np.linalg.norm(delta, 2)
    f_star = net(torch.as_tensor(sol.W), torch.as_tensor(Xt)).numpy()
    f_t = net(torch.as_tensor(Wn), torch.as_tensor(Xt)).numpy()
    z = (3 * v - 2 * u) / np.sqrt(5)
    expected = {
        "margin_max_dev": np.abs(qn - 1).max(),
        "row_collapse": np.linalg.norm(Wn - means, axis=1).max() / np.linalg.norm(Wn),
        "rank_ratio": s[2] / s[0],
        "dist_to_convex": np.linalg.norm(delta) / np.linalg.norm(sol.W),
        "dist_op": dist_op,
        "sign_agreement": np.mean(np.sign(f_t) == np.sign(Xt @ z)),
        "sign_margin_bound": np.mean(np.abs(f_star) > dist_op * np.linalg.norm(Xt, axis=1)),
        "z_ratio": np.linalg.norm(z) / np.linalg.norm(z_star),
    }
    for k, want in expected.items():
        assert c[k] == pytest.approx(want, rel=1e-9, abs=1e-12), k
    lam, res = kkt.multipliers_from_vu(v, u, ds.X, ds.y, m=5, gamma=0.5)
    assert (c["lambda_min"], c["lambda_max"], c["lambda_residual"]) == pytest.approx(
        (lam.min(), lam.max(), res), rel=1e-9
    )
    # a perturbation small enough keeps part of the test set's signs guaranteed, not all
    assert 0 < c["sign_margin_bound"] < 1


def test_certify_rank_ratio_with_few_rows(problem):
    ds, _, _, z_star, Xt = problem
    for m1, m2 in ((1, 1), (2, 1)):  # sigma_3 needs min(m, d) >= 3
        net = models.LeakyNetwork(m1, m2, gamma=0.5)
        sol = kkt.solve_problem3(ds.X, ds.y, m1, m2, gamma=0.5)
        W = _perturbed(sol, 0.05, 3)
        c = kkt.certify(net, W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
        if m1 + m2 < 3:
            assert c["rank_ratio"] == 0.0
        else:
            Wn = (
                W
                / net.margins(torch.as_tensor(W), torch.as_tensor(ds.X), torch.as_tensor(ds.y))
                .min()
                .item()
            )
            s = np.linalg.svd(Wn, compute_uv=False)
            assert c["rank_ratio"] == pytest.approx(s[2] / s[0], rel=1e-9) and s[2] > 0


def test_certify_refuses_a_zero_margin(problem):
    ds, net, sol, z_star, Xt = problem
    with pytest.raises(ValueError, match="^W does not separate the training data$"):
        kkt.certify(net, np.zeros_like(sol.W), ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)


def test_lambda_in_range_needs_both_bounds(problem, monkeypatch):
    ds, net, sol, z_star, Xt = problem
    lam = sol.lam
    for lo, hi, inside in (
        (lam.min() / 2, lam.max() * 2, True),
        (lam.min() / 2, lam.max() / 2, False),  # above the upper bound
        (lam.min() * 2, lam.max() * 2, False),
    ):  # below the lower bound
        monkeypatch.setattr(kkt, "multiplier_bounds", lambda X, g, b=(lo, hi): b)
        c = kkt.certify(net, sol.W, ds.X, ds.y, sol=sol, z_star=z_star, X_test=Xt)
        assert c["lambda_in_range"] is inside, (lo, hi)


def test_multiplier_bounds_formula():
    X = np.array([[3.0, 0.0], [0.0, 2.0]])  # R_max = 3, R_min = 2
    lo, hi = kkt.multiplier_bounds(X, 0.5)
    assert lo == pytest.approx(1 / (2 * 9)) and hi == pytest.approx(3 / (2 * 0.25 * 4))


def test_multipliers_residual_is_relative(problem):
    """The residual of item 2's form is relative: the same for (v, u) scaled by any c > 0."""
    ds, _, sol, _, _ = problem
    v, u = sol.v, -sol.u  # not of item 2's form
    _, res = kkt.multipliers_from_vu(v, u, ds.X, ds.y, m=5, gamma=0.5)
    for c in (1e-4, 3.0):
        _, res_c = kkt.multipliers_from_vu(c * v, c * u, ds.X, ds.y, m=5, gamma=0.5)
        assert res_c == pytest.approx(res, rel=1e-9)
    assert res > 1e-3


def test_three_point_example_configuration_and_range():
    """Paper A, Appendix B's example (our reconstruction): x_1 = e_1 positive, x_2 and x_3
    negative; eps in (0, 1)."""
    X, y = kkt.three_point_example(0.25)
    assert y.tolist() == [1.0, -1.0, -1.0]
    assert np.allclose(X, [[1, 0, 0], [-0.25, np.sqrt(1 - 0.0625), 0], [0, 0, 1]])
    for eps in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"^eps must lie in \(0, 1\)"):
            kkt.three_point_example(eps)


def test_three_point_kkt_system_with_more_neurons():
    """The linear system of item 2 and Problem (3)'s solver agree for m1 = m2 = 2 too."""
    X, y = kkt.three_point_example(0.1)
    sol = kkt.solve_problem3(X, y, 2, 2, gamma=kkt.THREE_POINT_GAMMA)
    assert sol.gamma == kkt.THREE_POINT_GAMMA and (sol.m1, sol.m2) == (2, 2)
    assert np.allclose(kkt.three_point_kkt_system(0.1, m=4), sol.lam, atol=1e-7)
