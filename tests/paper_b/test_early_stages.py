"""Studies of Stages 1 and 2 (twolayer.paper_b.early_stages)."""

import math

import numpy as np
import pytest

from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import early_stages as es
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod


def test_first_step_matches_corrected_lemma_c1_not_printed():
    t = tmod.random_teacher(200, 2, 3, 0)
    net0 = alg.symmetric_init(200, 60, 0)
    g = es.first_step_geometry(net0, alg.stage1(net0, t), t)
    assert np.median(g["err_corrected"]) < 0.1  # O(d^-1/2) at d = 200
    assert np.median(g["err_printed"]) == pytest.approx(1.5, abs=0.15)
    assert np.all(np.abs(g["err_printed"] - 1.5) <= 2.5 * g["err_corrected"] + 1e-12)


def test_first_step_geometry_by_hand():
    """``S_* = span(u, e3)`` in ``R^3`` with ``u = (0.6, 0.8, 0)``, teacher rows ``u`` and
    ``e3`` with ``a* = (1, -1)``: ``H = u u^T - e3 e3^T``, so ``H e3 = -e3`` and ``H u = u``.
    ``net0`` has ``wbar = e3, u`` and ``a = pi, -pi/2``; with ``sigma_2^2 = 1/(4 pi)`` the
    corrected targets ``4 a sigma_2^2 H wbar`` are ``-e3`` and ``-u/2``, the printed ones
    ``-2 a sigma_2^2 H wbar`` are ``e3/2`` and ``u/4``. ``net1`` has
    ``w_1 = 4 v - 3 e3`` (``v = (0.8, -0.6, 0)``, a unit vector orthogonal to ``S_*``; norm 5,
    ``||P_perp w_1|| = 4``) and ``w_2 = 3u`` (norm 3, in ``S_*``): ``off = (4/5, 0)``,
    ``err_corrected = (||4v - 2 e3|| / 5, ||3.5 u|| / 3) = (sqrt(20)/5, 7/6)``,
    ``err_printed = (||4v - 3.5 e3|| / 5, ||2.75 u|| / 3) = (sqrt(28.25)/5, 11/12)``. For
    ``w_2`` the computed ``||P_S w|| / ||w||`` is ``1 + 2^-52`` in floating point: ``off`` must
    still be 0 (up to rounding), not the NaN of ``sqrt`` of a negative number."""
    u, e3 = np.array([0.6, 0.8, 0.0]), np.array([0.0, 0.0, 1.0])
    v = np.array([0.8, -0.6, 0.0])
    t = tmod.Teacher(np.array([1.0, -1.0]), np.stack([u, e3]), info={"basis": np.stack([u, e3], 1)})
    net0 = pop.Net(np.array([math.pi, -math.pi / 2]), np.stack([2 * e3, 5 * u]))
    net1 = pop.Net(np.array([0.25, -0.75]), np.stack([4 * v - 3 * e3, 3 * u]))
    g = es.first_step_geometry(net0, net1, t)
    assert g["off"][0] == pytest.approx(0.8, rel=1e-14)
    assert 0.0 <= g["off"][1] <= 1e-7
    np.testing.assert_allclose(g["err_corrected"], [math.sqrt(20) / 5, 7 / 6], rtol=1e-14, atol=0)
    np.testing.assert_allclose(
        g["err_printed"], [math.sqrt(28.25) / 5, 11 / 12], rtol=1e-14, atol=0
    )
    np.testing.assert_allclose(g["norm"], [5.0, 3.0], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(g["a"], [0.25, -0.75])
    assert g["a"] is not net1.a  # a copy


def test_limit_medians_predict_off_fraction_and_norm():
    t = tmod.random_teacher(400, 2, 3, 1)
    lim = es.limit_medians(t, 100_000, 0)
    rows = es.dimension_sweep([400], 400, "random", 2, m_star=3, seed=1)
    r = rows[0]
    assert r["sqrt(d) median off"] == pytest.approx(lim["off_sqrt_d"], rel=0.15)
    assert r["median norm"] == pytest.approx(lim["norm"], rel=0.15)
    assert r["|alpha1| + ||beta1||"] < 1e-12 and r["max |a1| sqrt(m) / bound"] <= 1 + 1e-12
    # a different teacher shape gives a different limit (the prediction is not a constant)
    other = es.limit_medians(tmod.degenerate(400, 2, 3, 1), 100_000, 0)
    assert abs(other["norm"] - lim["norm"]) > 0.05


def test_coverage_refines_with_width_only_under_assumption_3():
    ms = [16, 128, 1024]
    good = es.coverage_sweep(ms, es.teachers("random", 20, 2, 3, repeats=3, seed=0, purpose="t"), 0)
    bad = es.coverage_sweep(
        ms, es.teachers("degenerate", 20, 2, 3, repeats=3, seed=0, purpose="t"), 0
    )
    assert good["in"].mean(1)[-1] < 0.2 * good["in"].mean(1)[0]
    assert bad["in"].mean(1)[-1] > 0.5  # the net does not form
    # the two coverages by hand: S_* = span(e1, e2) in R^3, teachers e1 and e2; a student
    # w1 = (sqrt 3, 1, 2) is pi/6 from e1 inside S_* but arccos(sqrt(3/8)) from it in R^3, and
    # w2 = (0, -1, sqrt 3) is on -e2 inside S_* but pi/3 from it in R^3 (angles up to sign):
    # in S_*, max(pi/6, 0); in R^3, max(arccos sqrt(3/8), min(arccos sqrt(1/8), pi/3)) = pi/3
    t3 = tmod.Teacher(np.ones(2), np.eye(3)[:2], info={"basis": np.eye(3)[:, :2]})
    W = np.array([[math.sqrt(3), 1.0, 2.0], [0.0, -1.0, math.sqrt(3)]])
    assert es.coverage(t3, W, True) == pytest.approx(math.pi / 6, rel=1e-12)
    assert es.coverage(t3, W, False) == pytest.approx(math.pi / 3, rel=1e-12)
    est = es.slope_estimate(ms, good["in"], 0)
    assert est.value < -0.5


def test_subgradient_trace_guarantee_and_rescaled_teacher():
    t = tmod.prototype(10, 0)
    net1 = alg.stage1(alg.symmetric_init(10, 30, 0), t)
    G, b, c, w = alg.stage2_problem(net1.W, t)
    a_ref, v_ref = alg.stage2_cvxpy(G, b, c, w, lam=0.02)
    run = es.subgradient_trace(
        net1.a, G, b, c, weights=w, lam=0.02, steps=500, a_ref=a_ref, v_ref=v_ref
    )
    assert np.all(run["best_gap"][:-1] <= run["bound"] + 1e-9)
    # the bound is not vacuous: a wrong optimum (too high) breaks the guarantee's reading
    wrong = es.subgradient_trace(
        net1.a, G, b, c, weights=w, lam=0.02, steps=500, a_ref=a_ref, v_ref=v_ref - 0.5
    )
    assert np.any(wrong["best_gap"][:-1] > wrong["bound"])
    a_hat = es.rescaled_teacher(net1, t)
    assert np.count_nonzero(a_hat) == t.m
    assert alg.lasso_objective(a_hat, G, b, c, weights=w, lam=0.02) >= v_ref - 1e-9


def test_rescaled_teacher_by_hand():
    """``a_hat`` puts ``a*_i / ||w_j||`` on the student row ``j`` closest to teacher row ``i``:
    teachers e1, e2 with ``a* = (3, -2)``; student rows (0, 4) (on e2, norm 4), (2, 0) (on e1,
    norm 2) and (1, 1) (45 degrees from both) give ``a_hat = (-2/4, 3/2, 0)``. Those rows are
    positive multiples of the teachers', so by 1-homogeneity of the ReLU the student with
    ``a_hat`` is the teacher's ReLU part, ``sum_j a_hat_j relu(w_j . x) = sum_i a*_i relu(x_i)``."""
    t = tmod.Teacher(np.array([3.0, -2.0]), np.eye(2))
    W = np.array([[0.0, 4.0], [2.0, 0.0], [1.0, 1.0]])
    a_hat = es.rescaled_teacher(pop.Net(np.ones(3), W), t)
    np.testing.assert_allclose(a_hat, [-0.5, 1.5, 0.0], rtol=1e-15, atol=0)
    X = np.random.default_rng(0).standard_normal((50, 2))
    student = np.maximum(X @ W.T, 0.0) @ a_hat
    np.testing.assert_allclose(student, np.maximum(X, 0.0) @ t.a, rtol=1e-12, atol=1e-12)


def test_count_kept_by_hand():
    """A neuron is kept when its mass ``|a_i| ||w_i||`` is above ``KEPT_TOL ||a*||_1``: a teacher
    with ``||a*||_1 = 4``, rows of norms 2, 1, 3 and 0.5, masses against a threshold of 4e-6."""
    t = tmod.Teacher(np.array([3.0, -1.0]), np.eye(2))
    W = np.array([[2.0, 0.0], [0.0, 1.0], [3.0, 0.0], [0.3, 0.4]])
    thr = es.KEPT_TOL * 4.0
    a = np.array([thr, thr, -thr, 3 * thr])  # masses 2, 1 (not above), 3, 1.5 thresholds
    assert es.count_kept(a, W, t) == 3
    assert es.count_kept(a / 2.5, W, t) == 1  # only the row of norm 3 stays above
    assert es.count_kept(np.zeros(4), W, t) == 0


def test_eps0_sweep_zeta_falls_and_default_m_star():
    ts = es.teachers("random", 12, 2, 3, repeats=3, seed=0, purpose="t")
    sw = es.eps0_sweep([16, 128], ts, 0.05, 90, seed=0)
    assert sw["eps0"].shape == (2, 3)
    assert np.all(sw["lam"] < sw["threshold"])
    assert np.all(sw["zeta"][1] < sw["zeta"][0])
    est = es.zeta_eps0_slope(sw, 0)
    assert est.value > 1
    bad = dict(sw, zeta=-sw["zeta"])
    with pytest.raises(ValueError):
        es.zeta_eps0_slope(bad, 0)
    assert es.default_m_star("random", 3) == 4 and es.default_m_star("degenerate", 3) == 6


def test_lambda_sweep_loss_grows_and_nothing_kept_at_large_lambda():
    t = tmod.prototype(10, 0)
    net1 = alg.stage1(alg.symmetric_init(10, 30, 0), t)
    rows = es.lambda_sweep(net1, t, [0.005, 0.05, 1.0])
    L = [r["L after Stage 2"] for r in rows]
    assert L[0] <= L[1] <= L[2]
    assert rows[-1]["kept"] == 0 and rows[0]["kept"] > 0
    assert math.isfinite(rows[0]["objective"])


def test_coverage_does_not_depend_on_the_teacher_norms():
    """Coverage is made of angles: rescaling the teacher's rows (here to norms 2 and 3) leaves
    the by-hand values pi/6 (in ``S_*``) and pi/3 (in ``R^3``) of the unit teacher unchanged."""
    basis = {"basis": np.eye(3)[:, :2]}
    t = tmod.Teacher(np.ones(2), np.diag([2.0, 3.0, 0.0])[:2], info=basis)
    W = np.array([[math.sqrt(3), 1.0, 2.0], [0.0, -1.0, math.sqrt(3)]])
    assert es.coverage(t, W, True) == pytest.approx(math.pi / 6, rel=1e-12)
    assert es.coverage(t, W, False) == pytest.approx(math.pi / 3, rel=1e-12)


def test_population_zero_threshold_by_hand():
    """``S_* = span(e1, e2)`` in ``R^3``, teacher rows ``0.5 e1`` and ``0.8 e2`` (norms below 1)
    with ``a* = (1, -1)``: ``sum_j a*_j ||w*_j|| kappa2(w . wbar*_j) = 0.5 kappa2(u_1) -
    0.8 kappa2(u_2)``. ``kappa2`` is even, grows with ``|t|`` and vanishes at 0, so the largest
    modulus is ``0.8 kappa2(1)``, reached at ``e2`` only, with ``kappa2(1) = 1/4 - 1/(2 pi)``:
    the threshold is ``1.6 (1/4 - 1/(2 pi))``. The grid of 7 angles ``k pi / 7`` misses
    ``e2``, so the value comes from the teacher directions, which the function adds to it."""
    t = tmod.Teacher(
        np.array([1.0, -1.0]), np.diag([0.5, 0.8, 0.0])[:2], info={"basis": np.eye(3)[:, :2]}
    )
    expected = 1.6 * (0.25 - 1 / (2 * math.pi))
    assert es.population_zero_threshold(t, 7) == pytest.approx(expected, rel=1e-12)
