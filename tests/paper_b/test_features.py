"""Unit tests of twolayer.paper_b.features: the exact Lasso, the network-free optimum over
measures, Lemma 10's masses, eq. (8)'s residual terms and the split pair of Lemma F.6."""

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest

from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import features as feat
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod


def _lasso_problem(seed=0, n=30, k=8):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((k, n))
    G = A.T @ A
    b = A.T @ rng.standard_normal(k)
    return G, b


@pytest.mark.parametrize("lam", [1e-3, 0.1, 1.0])
def test_lasso_active_set_matches_cvxpy_and_kkt(lam):
    G, b = _lasso_problem()
    w = np.linspace(0.5, 1.5, len(b))
    a, info = feat.lasso_active_set(G, b, w, lam)
    assert info["kkt"] < 1e-9
    _, val_ref = feat.solve_weighted_lasso(G, b, 0.0, w, lam=lam)
    assert info["objective"] <= val_ref + 1e-7
    # the optimality conditions: |2(Ga - b)_j| <= lam w_j off the support, equality on it
    g = 2 * (G @ a - b)
    nz = a != 0
    assert np.all(np.abs(g[~nz]) <= lam * w[~nz] * (1 + 1e-9))
    assert np.allclose(g[nz], -lam * w[nz] * np.sign(a[nz]), atol=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_lasso_active_set_with_exactly_dependent_columns(seed):
    """A Gram matrix whose columns repeat exactly (a direction listed twice, and sums of
    others, as on a dense grid): the active set meets a singular block by construction, on
    every machine. The answer is still optimal (the optimality conditions hold, the objective
    is the convex solver's to its accuracy) and no two exactly equal columns are both used
    (the null-space step drops one)."""
    rng = np.random.default_rng(100 + seed)
    B = rng.standard_normal((6, 8))
    A = np.concatenate([B, B[:, :3], B[:, :2] + B[:, 2:4], -B[:, 4:5]], axis=1)
    G, b = A.T @ A, A.T @ rng.standard_normal(6)
    w = np.ones(len(b))
    for lam in (1e-3, 0.05, 0.5):
        a, info = feat.lasso_active_set(G, b, w, lam)
        assert info["kkt"] < 1e-8, (lam, info)
        _, val_ref = feat.solve_weighted_lasso(G, b, 0.0, w, lam=lam)
        assert info["objective"] <= val_ref + 1e-7 * max(1.0, abs(val_ref))
        g = 2 * (G @ a - b)
        nz = a != 0
        assert np.all(np.abs(g[~nz]) <= lam * (1 + 1e-8))
        assert np.allclose(g[nz], -lam * np.sign(a[nz]), atol=1e-8 * lam + 1e-12)


def test_null_step_descends_along_a_null_direction():
    """The step itself: two equal columns both active (the block is singular); the step moves
    mass from one to the other at constant fit, lowers the objective by the penalty it saves
    (here none is saved with equal weights, so a lower weight on the second column makes the
    move worth it) and zeroes one coefficient."""
    col = np.array([1.0, 2.0, 0.5])
    G = np.outer([1.0, 1.0], [1.0, 1.0]) * (col @ col)
    cur = np.array([0.3, 0.2])
    b = np.array([1.0, 1.0]) * 0.5 * (col @ col)
    thr = np.array([1.0, 0.5])
    g = 2 * (G @ cur - b)
    x = feat._null_step(G, cur, g, thr, tol=1e-12)
    assert x is not None and x[0] == 0.0 and x[1] == pytest.approx(0.5)

    def obj(v):
        return v @ G @ v - 2 * b @ v + thr @ np.abs(v)

    assert obj(x) < obj(cur) - 0.1  # saved (1.0 - 0.5) * 0.3 of penalty
    # a non-singular block: no null step
    assert feat._null_step(np.eye(2), cur, g, thr, tol=1e-12) is None


def test_lasso_active_set_large_penalty_gives_zero_and_rejects_zero_penalty():
    G, b = _lasso_problem(1)
    a, info = feat.lasso_active_set(G, b, 1.0, lam=10 * np.abs(2 * b).max())
    assert np.all(a == 0) and info["kkt"] == 0
    with pytest.raises(ValueError, match=r"^lam must be positive$"):
        feat.lasso_active_set(G, b, 1.0, 0.0)


def test_lasso_active_set_not_optimal_when_perturbed():
    # the answer "no": a perturbed solution violates the optimality conditions
    G, b = _lasso_problem(2)
    a, _ = feat.lasso_active_set(G, b, 1.0, 0.05)
    a2 = a.copy()
    a2[np.argmax(np.abs(a))] *= 1.1
    g = 2 * (G @ a2 - b)
    nz = a2 != 0
    assert np.abs(g[nz] + 0.05 * np.sign(a2[nz])).max() > 1e-4


def _lasso_by_sign_patterns(G, b, thr):
    """The independent route: ``min a^T G a - 2 b^T a + thr . |a|`` (``G`` positive definite)
    by enumeration. On a support with signs ``s`` the stationary point solves
    ``G_SS a_S = b_S - thr_S s_S / 2``; the minimizer is the lowest such point whose signs are
    ``s`` (a = 0 included)."""
    n = len(b)
    best_val, best = 0.0, np.zeros(n)
    for signs in itertools.product((-1.0, 0.0, 1.0), repeat=n):
        s = np.array(signs)
        S = s != 0
        if not S.any():
            continue
        x = np.linalg.solve(G[np.ix_(S, S)], b[S] - thr[S] * s[S] / 2)
        if np.all(np.sign(x) == s[S]):
            a = np.zeros(n)
            a[S] = x
            val = a @ G @ a - 2 * b @ a + thr @ np.abs(a)
            if val < best_val:
                best_val, best = val, a
    return best, best_val


def _no_convergence(max_iter):
    """The whole message of lasso_active_set's step limit."""
    message = f"lasso_active_set: no convergence in {max_iter} steps"
    return pytest.raises(RuntimeError, match=rf"^{re.escape(message)}$")


@pytest.mark.parametrize("rtol", [1e-11, 0.0])
def test_lasso_active_set_diagonal_worked_example_counts_its_steps(rtol):
    """A diagonal G decouples the coefficients: a_j = sign(b_j) (|b_j| - thr_j/2)_+ / G_jj with
    thr = lam w = (2, 1, 4): a = ((3 - 1)/2, -(2.75 - 0.5)/1, (5 - 2)/4) = (1, -2.25, 0.75),
    objective -sum (|b_j| - thr_j/2)^2 / G_jj = -(2 + 5.0625 + 2.25) = -9.3125. At a = 0 the
    violations |2 b_j| - thr_j are (4, 4.5, 6): the search adds coefficient 2, then 1, then 0
    (each block solved exactly) and the fourth step finds nothing violated: 4 steps. All of
    it is exact in binary, so rtol = 0 (the conditions to hold exactly) takes the same steps;
    max_iter = 3 is one step short."""
    G = np.diag([2.0, 1.0, 4.0])
    b = np.array([3.0, -2.75, 5.0])
    w = np.array([1.0, 0.5, 2.0])
    for max_iter in (4, 10_000):
        a, info = feat.lasso_active_set(G, b, w, 2.0, rtol=rtol, max_iter=max_iter)
        assert a.tolist() == [1.0, -2.25, 0.75]
        assert info == {"kkt": 0.0, "iterations": 4, "objective": -9.3125}
    with _no_convergence(3):
        feat.lasso_active_set(G, b, w, 2.0, rtol=rtol, max_iter=3)


def test_lasso_active_set_stops_once_the_conditions_hold_to_rtol():
    """thr = lam w = 2 (1, 0.5) = (2, 1), G = diag(1, 2), b = (2, 0.75). At a = 0 the violations
    |2 b_j| - thr_j are (2, 0.5); coefficient 0 enters at (2 - 1)/1 = 1. With rtol = 0.25 the
    tolerance is rtol lam max w = 0.5, which the remaining violation 0.5 does not exceed: the
    search stops after 2 steps at (1, 0), objective 1 - 4 + 2 = -1, and info["kkt"] reports
    that violation over lam max w: 0.5 / 2 = 0.25. With the default rtol coefficient 1 enters
    too, at (0.75 - 0.5)/2 = 0.125, lowering the objective by 0.25^2/2: -1.03125."""
    G = np.diag([1.0, 2.0])
    b = np.array([2.0, 0.75])
    w = np.array([1.0, 0.5])
    a, info = feat.lasso_active_set(G, b, w, 2.0, rtol=0.25)
    assert a.tolist() == [1.0, 0.0]
    assert info == {"kkt": 0.25, "iterations": 2, "objective": -1.0}
    a, info = feat.lasso_active_set(G, b, w, 2.0)
    assert a.tolist() == [1.0, 0.125]
    assert info == {"kkt": 0.0, "iterations": 3, "objective": -1.03125}


@pytest.mark.parametrize("exact", [None, "G", "b", "weights"])
def test_lasso_active_set_solves_the_block_exactly_and_reads_any_real_input(exact):
    """G = [[2, 1], [1, 2.5]], b = (4, 4.5), thr = 2: at a = 0 the violations are (6, 7), so
    coefficient 1 enters at (4.5 - 1)/2.5, then coefficient 0; the block with both solves
    G a = b - 1 = (3, 3.5), a = (1, 1) (check: 2 + 1 = 3, 1 + 2.5 = 3.5), and the third step
    finds 2 (G a - b) = (-2, -2) = -thr: 3 steps, objective 6.5 - 17 + 4 = -6.5. Elimination
    with pivots 2 and 2.5 - 0.5 = 2 is exact in binary, so the answer is exactly (1, 1) (a
    least-squares solve through the SVD is off in the last bits). Data given as exact
    fractions (one argument at a time) are read as these same floats."""
    G = [[2.0, 1.0], [1.0, 2.5]]
    b = [4.0, 4.5]
    w = [1.0, 1.0]
    if exact == "G":
        G = [[Fraction(2), Fraction(1)], [Fraction(1), Fraction(5, 2)]]
    elif exact == "b":
        b = [Fraction(4), Fraction(9, 2)]
    elif exact == "weights":
        w = [Fraction(1), Fraction(1)]
    a, info = feat.lasso_active_set(G, b, w, 2.0)
    assert a.dtype == np.float64 and a.tolist() == [1.0, 1.0]
    assert info == {"kkt": 0.0, "iterations": 3, "objective": -6.5}


def test_lasso_active_set_line_search_stops_where_a_coefficient_crosses_zero():
    """A worked feature-sign search in three variables (thr = (2, 1, 1)), by hand in fractions:
    step 1, violations |2 b| - thr = (10, 18, 11): coefficient 1 enters at (9.5 - 0.5)/9 = 1.
    Step 2, gradient 2 (G a - b) = (12, -1, 8): coefficient 0 enters, negative; the block
    gives (-5/12, 1). Step 3, gradient (2, -1, 14/3): coefficient 2 enters, negative; the
    block's solution (7/3, -5/6, -33/4) flips coefficients 0 and 1, so the candidates are it
    (objective -15.208), the point where coefficient 0 reaches zero (0, 13/18, -5/4)
    (-15.319) and the point where coefficient 1, then exactly 1, reaches zero
    (13/12, 0, -9/2) (-18.75), the lowest. Step 4 re-solves on {0, 2}: (1, 0, -19/4).
    Step 5: gradient (-2, 0, 1) meets the conditions. The minimizer agrees with the
    enumeration over sign patterns; objective 19.125 - 45 + 6.75 = -19.125."""
    G = np.array([[12.0, 0.0, 4.0], [0.0, 9.0, -2.0], [4.0, -2.0, 2.0]])
    b = np.array([-6.0, 9.5, -6.0])
    thr = np.array([2.0, 1.0, 1.0])
    a, info = feat.lasso_active_set(G, b, thr, 1.0)
    ref, val = _lasso_by_sign_patterns(G, b, thr)
    assert np.allclose(ref, [1.0, 0.0, -4.75], rtol=0, atol=1e-14) and val == pytest.approx(-19.125)
    assert np.allclose(a, ref, rtol=0, atol=1e-14)
    assert info["iterations"] == 5 and info["kkt"] < 1e-15
    assert info["objective"] == pytest.approx(-19.125, rel=1e-15)


def test_lasso_active_set_reports_an_unbounded_problem_as_not_converging():
    """b = (3, 0) is not in the range of G = [[1, 1], [1, 1]]: along a = (t, -t) the quadratic
    part vanishes and the objective is -6 t + (1 + 1) t = -4 t (thr = 4 * 0.25 = 1), with no
    minimum. Every step still lowers the objective (a block solve that fails, then a pass of
    coordinate minimization: (2.5, 0), (2.5, -2), (4.5, -2), ...), so the search runs out of
    steps and says so."""
    G = np.array([[1.0, 1.0], [1.0, 1.0]])
    b = np.array([3.0, 0.0])
    for max_iter in (2, 5):
        with _no_convergence(max_iter):
            feat.lasso_active_set(G, b, 0.25, 4.0, max_iter=max_iter)


def test_lasso_active_set_default_step_limit_is_ten_thousand():
    """Another problem with no minimum: A v = 0 for v = (-2, 1, 0, -1), so G = A^T A v = 0,
    and b . v = 4 - 2 + 0 + 1 = 3: along a = t v the objective is -6 t + 0.5 * 4 t = -4 t.
    Its steps (null-space steps and sign crossings, no failed solve) are cheap, so the
    default limit of 10,000 steps is reached in well under a second."""
    A = np.array([[-1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, 0.0, 1.0], [0.0, -1.0, 1.0, -1.0]])
    assert np.all(A @ [-2.0, 1.0, 0.0, -1.0] == 0)
    with _no_convergence(10_000):
        feat.lasso_active_set(A.T @ A, np.array([-2.0, -2.0, -1.0, -1.0]), 1.0, 0.5)


def test_lasso_active_set_ends_at_the_minimizer_after_degenerate_steps():
    """Steps that rounding makes degenerate must neither stop the search early nor keep it
    going forever. (1) rtol = 0 asks the conditions to hold exactly, which the rounded
    solution of G = diag(3, 7) does not: the search stops when nothing lowers the objective,
    at the soft-thresholded a_j = sign(b_j) (|b_j| - thr_j/2) / G_jj. (2) A block solve that
    leaves a coefficient at 5e-17 instead of 0 (here with the default rtol), so that the next
    step is repaired by coordinate minimization and the search goes on to the minimizer,
    which agrees with the enumeration over sign patterns. (3) Two columns equal up to their
    last bit, rtol = 0: moving mass between them changes the objective by less than
    rounding, a step that must not be taken (or the mass goes back and forth forever);
    the minimum is that of one column, min_s 9 s^2 + 6 s + 0.25 |s| = -5.75^2 / 36."""
    # (1)
    G = np.diag([3.0, 7.0])
    a, info = feat.lasso_active_set(G, [1.0, -2.0], [1.0, 3.0], 0.1, rtol=0.0, max_iter=50)
    assert np.allclose(a, [0.95 / 3, -1.85 / 7], rtol=1e-15, atol=0)
    assert info["kkt"] < 1e-14
    assert info["objective"] == pytest.approx(-(0.95**2) / 3 - 1.85**2 / 7, rel=1e-15)
    # (2)
    A = np.array([[2.0, -2.0, 2.0], [2.0, 1.0, -1.0], [-2.0, 2.0, 0.0]])
    G, b, thr = A.T @ A, np.array([-2.0, 5.0, -5.0]), np.array([0.25, 1.0, 1.0])
    a, info = feat.lasso_active_set(G, b, [0.5, 2.0, 2.0], 0.5, max_iter=50)
    ref, val = _lasso_by_sign_patterns(G, b, thr)
    assert np.allclose(a, ref, rtol=0, atol=1e-14) and ref[1] == 0
    assert info["kkt"] < 1e-12 and info["objective"] == pytest.approx(val, rel=1e-14)
    # (3)
    A = np.array([[3.0, 3.0 * (1 - 2.0**-53)]])
    G, b = A.T @ A, A.T @ [-1.0]
    a, info = feat.lasso_active_set(G, b, 0.5, 0.5, rtol=0.0, max_iter=50)
    assert info["kkt"] < 1e-13
    assert info["objective"] == pytest.approx(-(5.75**2) / 36, rel=1e-14)
    assert a.sum() == pytest.approx(-5.75 / 18, rel=1e-14) and np.all(a <= 0)


def test_min_measure_is_an_upper_bound_that_refinement_lowers():
    t = tmod.prototype(6, 0)
    lam = 0.01
    mo = feat.min_measure(t, lam, grid=90)
    # levels never rise; the teacher itself is feasible (value lam ||a*||_1); L >= 0
    assert all(b <= a + 1e-15 for a, b in zip(mo.levels, mo.levels[1:]))
    assert mo.value <= lam * np.abs(t.a).sum()
    assert mo.value == pytest.approx(mo.loss(t) + lam * mo.mass(), abs=1e-12)
    assert mo.levels[-1] < mo.levels[0] and mo.resolution < 1e-8 and mo.kkt < 1e-8
    # it is at least as low as the old cvxpy grid estimate at a finer grid
    assert mo.value <= feat.min_measure_loss(t, lam, grid=360) + 1e-8
    # and a trained network cannot beat it by more than its resolution (here: Stage 2's)
    net = alg.stage2(alg.stage1(alg.symmetric_init(6, 30, 0), t), t, lam)[0]
    assert pop.regularized_loss(net, t, lam) >= mo.value - mo.resolution


def test_local_patch_stays_in_subspace_and_radius():
    t = tmod.random_teacher(9, 3, 3, 1)
    B = t.info["basis"]
    u = t.W[0] / np.linalg.norm(t.W[0])
    P = feat.local_patch(u, B, 0.1, 0.02)
    assert np.allclose(np.linalg.norm(P, axis=1), 1)
    assert np.allclose(P @ B @ B.T, P)  # inside S_*
    ang = np.arccos(np.clip(P @ u, -1, 1))
    assert ang.max() <= 0.1 + 1e-12 and len(P) > 20


def test_signed_mass_near_and_half_mass_radius():
    t = tmod.prototype(5, 0)
    net = pop.Net(t.a, t.W)
    assert np.allclose(feat.signed_mass_near(net, t, 1e-6) / (np.abs(t.a) / 2), 2)
    assert np.allclose(feat.half_mass_radius(net, t), 0, atol=1e-7)
    assert feat.worst_neuron_misalignment(net, t) < 1e-12
    # the answer "no": teacher 0's mass moved 0.3 rad away is not within 0.1 of it
    B = t.info["basis"]
    W = t.W.copy()
    u = W[0] / np.linalg.norm(W[0])
    tang = B @ (B.T @ np.array([-u @ B[:, 1] * B[:, 0] + u @ B[:, 0] * B[:, 1]][0]))
    tang /= np.linalg.norm(tang)
    W[0] = math.cos(0.3) * u + math.sin(0.3) * tang
    moved = pop.Net(t.a, W)
    assert feat.signed_mass_near(moved, t, 0.1)[0] == 0.0
    assert feat.half_mass_radius(moved, t)[0] == pytest.approx(0.3, abs=1e-9)
    assert feat.worst_neuron_misalignment(moved, t) == pytest.approx(0.09, rel=1e-9)


def test_residual_decomposition_needs_a_star():
    t = tmod.prototype(6, 1)  # a* = (1, -1, 1)
    net = alg.stage2(alg.stage1(alg.symmetric_init(6, 20, 1), t), t, 0.02)[0]
    X = np.random.default_rng(0).standard_normal((500, 6))
    R, R1, R2, R3 = feat.residual_terms(net, t, X)
    assert np.abs(R - R1 - R2 - R3).max() < 1e-12
    # as printed (w*_i in R1): R - (R1 + R2 + R3) = (1/2) sum_i (1 - a*_i) |w*_i.x|
    _, P1, P2, P3 = feat.residual_terms(net, t, X, printed=True)
    miss = R - P1 - P2 - P3
    assert np.allclose(miss, np.abs(X @ t.W[1]), atol=1e-12)
    # ... and holds when every a*_i = 1 (the answer "no" to the erratum there)
    t1 = tmod.Teacher(np.ones(3), t.W, info=t.info)
    R, P1, P2, P3 = feat.residual_terms(net, t1, X, printed=True)
    assert np.abs(R - P1 - P2 - P3).max() < 1e-12


def test_split_pair_costs_delta_cubed_single_delta_squared():
    t = tmod.prototype(4, 0)
    d = np.geomspace(1e-3, 1e-2, 5)
    pair = feat.split_pair_loss(t, 0, d)
    single = feat.split_pair_loss(t, 0, d, pair=False)
    sp = np.polyfit(np.log(d), np.log(pair), 1)[0]
    ss = np.polyfit(np.log(d), np.log(single), 1)[0]
    assert sp == pytest.approx(3, abs=0.02) and ss == pytest.approx(2, abs=0.02)
    assert np.all(pair < single)
    assert feat.split_pair_loss(t, 0, [0.0])[0] < 1e-15


def test_min_measure_refines_until_it_resolves_what_is_asked():
    """The refinement loop's contract, on cases that need refinement by construction (no
    assertion depends on the path one machine's Lasso took): with ``levels=0`` a single level
    has no change to measure (resolution infinite), so asking for any finite accuracy must
    refine; the result meets what was asked or stops at ``max_levels``; every level keeps the
    previous support, so the value never rises; and asking for an accuracy already met changes
    nothing."""
    from twolayer.core import seeds
    from twolayer.paper_b import teacher as tmod

    t = tmod.random_teacher(50, 2, 3, seeds.derive(0, "teacher"))
    lam = 0.04 / 2**8
    want = 0.1 * lam**2
    coarse = feat.min_measure(t, lam, grid=720, levels=0)
    assert len(coarse.levels) == 1 and coarse.resolution == math.inf
    asked = feat.min_measure(t, lam, grid=720, levels=0, resolve=want, max_levels=8)
    assert len(asked.levels) >= 2  # infinite resolution after one level: it had to refine
    assert asked.resolution <= want or len(asked.levels) == 9
    assert asked.value <= coarse.value
    assert all(b <= a for a, b in zip(asked.levels, asked.levels[1:]))  # never rises
    assert asked.step < coarse.step  # a finer grid was searched
    # an accuracy that cannot be met stops at max_levels refinements
    capped = feat.min_measure(t, lam, grid=720, levels=0, resolve=-1.0, max_levels=3)
    assert len(capped.levels) == 4
    # asking for an accuracy the default run already has changes nothing
    plain = feat.min_measure(t, lam, grid=720)
    again = feat.min_measure(t, lam, grid=720, resolve=plain.resolution)
    assert again.value == plain.value and len(again.levels) == len(plain.levels)


@pytest.mark.parametrize("lam", [0.0, 0.03])
def test_balanced_objective_is_the_regularized_loss_at_balance(lam):
    """At balance (``|a_j| = ||w_j||``) ``lam/2 (a_j^2 + ||w_j||^2) = lam |a_j| ||w_j||``
    (AM-GM with equality), so the balanced objective is ``L_{>=2} + lam/2 (||a||^2 +
    ||W||_F^2)``; off balance it is smaller than that sum."""
    t = tmod.make("random", 6, 2, 3, seed=2)
    rng = np.random.default_rng(1)
    W = rng.standard_normal((5, 6))
    a = np.linalg.norm(W, axis=1) * np.array([1, -1, 1, -1, 1])
    net = pop.Net(a, W)
    by_hand = pop.loss_ge2(net, t) + lam / 2 * (a @ a + np.sum(W**2))
    assert feat.balanced_objective(net, t, lam) == pytest.approx(by_hand, rel=1e-12)
    off = pop.Net(2 * a, W)
    if lam > 0:
        assert feat.balanced_objective(off, t, lam) < pop.loss_ge2(off, t) + lam / 2 * (
            4 * a @ a + np.sum(W**2)
        )


def _pythagorean_net():
    """Teacher ``a* = (1, -2)``, ``w*_1 = e1``, ``w*_2 = e2`` in ``R^3``, and five student
    neurons with integer (Pythagorean) rows, so every norm and mass ``a_j ||w_j||`` is exact:
    near ``e1``: ``(3,0,4)`` (angle ``atan2(4,3)``, mass 5/16), ``(4,0,3)`` (``atan2(3,4)``,
    5/16), ``(2,0,0)`` (angle 0, 3/16); near ``e2``: ``(0,12,5)`` (``atan2(5,12)``, -13/16),
    ``(0,2,0)`` (angle 0, -3/4). The far neurons come first, so the order must be sorted."""
    t = tmod.Teacher(np.array([1.0, -2.0]), np.array([[1.0, 0, 0], [0, 1.0, 0]]))
    W = np.array([[3.0, 0, 4], [4, 0, 3], [2, 0, 0], [0, 12, 5], [0, 2, 0]])
    a = np.array([1 / 16, 1 / 16, 3 / 32, -1 / 16, -3 / 8])
    return t, pop.Net(a, W)


def test_lemma10_masses_on_a_worked_example():
    """Signed masses ``sign(a*_i) sum_{j in T_i, delta_j <= delta} a_j ||w_j||`` and the
    half-mass radii of :func:`_pythagorean_net`, added up by hand; ``delta`` is a closed
    bound (a neuron exactly at ``delta``, here angle 0, counts) and is read as float64."""
    from fractions import Fraction

    t, net = _pythagorean_net()
    far, mid, tilt = math.atan2(4, 3), math.atan2(3, 4), math.atan2(5, 12)
    # delta = 0: only the neurons exactly on w*_i: 3/16, and -(-3/4)
    np.testing.assert_array_equal(feat.signed_mass_near(net, t, 0.0), [3 / 16, 3 / 4])
    # delta = 0.5 adds (0,12,5) to teacher 2: 3/4 + 13/16 = 25/16
    np.testing.assert_allclose(feat.signed_mass_near(net, t, 0.5), [3 / 16, 25 / 16])
    # one delta per teacher: 0.7 adds (4,0,3) to teacher 1: 3/16 + 5/16 = 1/2
    np.testing.assert_allclose(feat.signed_mass_near(net, t, [0.7, 0.1]), [1 / 2, 3 / 4])
    # an exact fraction a hair below atan2(3,4)'s float is that float once read as float64
    below = Fraction(float(np.arccos(0.8))) - Fraction(1, 2**80)
    assert float(below) == np.arccos(0.8)
    np.testing.assert_allclose(feat.signed_mass_near(net, t, below), [1 / 2, 25 / 16])
    # half of |a*| = (1/2, 1): teacher 1 reaches exactly 3/16 + 5/16 = 1/2 at atan2(3,4)
    # (>= counts equality); teacher 2 has 3/4 < 1 at 0 and 25/16 >= 1 at atan2(5,12)
    np.testing.assert_allclose(feat.half_mass_radius(net, t), [mid, tilt], rtol=1e-14)
    # Lemma 8 (i): sum |a_j| ||w_j|| delta_j^2
    expected = 5 / 16 * far**2 + 5 / 16 * mid**2 + 13 / 16 * tilt**2
    assert feat.far_mass(net, t) == pytest.approx(expected, rel=1e-14)


def test_half_mass_radius_is_inf_where_half_is_never_reached():
    """Teacher 2 of :func:`_pythagorean_net` with only its angle-0 neuron (mass 3/4 < 1):
    no radius holds half of ``|a*_2| = 2``."""
    t, net = _pythagorean_net()
    short = pop.Net(np.r_[net.a[:3], net.a[4]], np.vstack([net.W[:3], net.W[4]]))
    np.testing.assert_allclose(feat.half_mass_radius(short, t), [math.atan2(3, 4), np.inf])


def test_half_mass_radius_sorts_tied_angles_stably():
    """Sixteen neurons exactly on ``+-w*`` (angle 0), masses -1/2, +1/2, ... alternating,
    negative first in index order (total 0), and one of mass 5/4 at ``atan2(3,4)`` listed
    first: the mass within angle 0 is 0 < 1/2, so the half-mass radius is ``atan2(3,4)``.
    Taken in index order (a stable sort of the angles) no partial sum of the tie reaches 1/2;
    an unstable sort may move a positive one ahead and stop at 0."""
    t = tmod.Teacher(np.array([1.0]), np.array([[1.0, 0.0]]))
    sign = np.tile([-1.0, 1.0], 8)
    W = np.vstack([[4.0, 3.0], np.outer(np.tile([1.0, -1.0, -1.0, 1.0], 4), [1.0, 0.0])])
    a = np.r_[1 / 4, 0.5 * sign]
    assert feat.half_mass_radius(pop.Net(a, W), t)[0] == pytest.approx(math.atan2(3, 4))


def test_average_neurons_flip_signs_and_ignore_a_zero_neuron():
    """``v_i = sum_{j in T_i} a_j s_j w_j`` by hand: ``(4,0,3)`` with ``a = 1/2`` and
    ``(-2,0,0)`` (near ``-w*_1``, ``s = -1``) with ``a = 1/4`` give ``v_1 = (2,0,3/2) +
    (1/2,0,0)``; ``(0,-12,5)`` (``s = -1``) with ``a = -1/2`` gives ``v_2 = (0,-6,5/2)``; a
    zero neuron has no mass and adds nothing."""
    t = tmod.Teacher(np.array([1.0, -2.0]), np.array([[2.0, 0, 0], [0, 1.0, 0]]))
    W = np.array([[4.0, 0, 3], [-2, 0, 0], [0, -12, 5], [0, 0, 0]])
    net = pop.Net(np.array([0.5, 0.25, -0.5, 1.0]), W)
    V = feat.average_neurons(net, t)
    np.testing.assert_allclose(V, [[2.5, 0, 1.5], [0, -6, 2.5]], rtol=1e-15, atol=0)


def test_residual_terms_on_a_worked_example():
    """eq. (8) at a hand example: teacher ``a* = (1, -2)``, ``w*_1 = 2 e1``, ``w*_2 = e2``
    (non-unit norms); neurons ``(4,0,3)``, ``(-2,0,0)`` (flipped, ``s = -1``), ``(0,-12,5)``
    (flipped), ``(0,0,3)`` (orthogonal to both teachers: it goes to the first, ``s`` taken
    ``+1``) and a zero neuron. Expected values from the paper's definitions written per
    neuron: ``relu_{>=2}`` of a neuron ``w`` is ``relu(w.x) - ||w||/sqrt(2 pi) - w.x/2``
    (even in ``w``, so the flip leaves ``R`` alone); the flipped rows, the ``v_i`` and
    ``R3 = (2 - 2 - (5/2 + 1/2 - 13/2 + 3/2)) / sqrt(2 pi) = 2 / sqrt(2 pi)`` are by hand.
    ``x = 0`` (every sign 0) gives ``R1 = 0``."""
    t = tmod.Teacher(np.array([1.0, -2.0]), np.array([[2.0, 0, 0], [0, 1.0, 0]]))
    W = np.array([[4.0, 0, 3], [-2, 0, 0], [0, -12, 5], [0, 0, 3], [0, 0, 0]])
    a = np.array([0.5, 0.25, -0.5, 0.5, 1.0])
    net = pop.Net(a, W)
    X = np.vstack([np.zeros(3), np.random.default_rng(3).standard_normal((6, 3))])
    R, R1, R2, R3 = feat.residual_terms(net, t, X)
    c = 1 / math.sqrt(2 * math.pi)

    def ge2(w):
        z = X @ w
        return np.maximum(z, 0) - np.linalg.norm(w) * c - z / 2

    R_hand = sum(aj * ge2(w) for aj, w in zip(a, W)) - ge2(2 * np.eye(3)[0]) + 2 * ge2(np.eye(3)[1])
    owner = [0, 0, 1, 0, 0]
    flipped = np.array([[4.0, 0, 3], [2, 0, 0], [0, 12, -5], [0, 0, 3], [0, 0, 0]])
    # v_1 - a*_1 w*_1 = (2,0,3/2) + (1/2,0,0) + (0,0,3/2) - (2,0,0)
    # v_2 - a*_2 w*_2 = (0,-6,5/2) + (0,2,0)
    dv = np.array([[0.5, 0, 3.0], [0, -4.0, 2.5]])
    sgn_star = np.sign(X @ t.W.T)
    R1_hand = 0.5 * ((X @ dv[0]) * sgn_star[:, 0] + (X @ dv[1]) * sgn_star[:, 1])
    R2_hand = sum(
        0.5 * aj * (X @ w) * (np.sign(X @ w) - sgn_star[:, i])
        for aj, w, i in zip(a, flipped, owner)
    )
    np.testing.assert_allclose(R, R_hand, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(R1, R1_hand, rtol=1e-12, atol=1e-13)
    assert R1[0] == 0.0
    np.testing.assert_allclose(R2, R2_hand, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(R3, np.full(len(X), 2 * c), rtol=1e-14)
    np.testing.assert_allclose(R, R1 + R2 + R3, rtol=1e-12, atol=1e-13)


def test_lasso_active_set_takes_one_step_per_coefficient_when_no_sign_changes():
    """Where every block solution keeps the signs it was given, feature-sign search adds one
    coefficient per step (the most violating one, with the sign opposite to its gradient) and
    stops at the step that finds no violation: nnz + 1 steps. The path is recomputed here
    (entering order, block solves, signs) and found sign-preserving, so the search must take
    5 steps on this positive-definite problem and end at the recomputed minimizer; a line
    search that also tried points beyond the segment took a sixth step here."""
    G = np.array(
        [
            [10.0, 9.0, 6.0, -6.0],
            [9.0, 10.0, 6.0, -6.0],
            [6.0, 6.0, 14.0, -1.0],
            [-6.0, -6.0, -1.0, 6.0],
        ]
    )
    b = np.array([5.0, 2.0, 2.0, -5.0])
    thr = 1.5 * np.array([1.5, 1.5, 1.0, 1.5])
    a = np.zeros(4)
    order = []
    while True:
        g = 2 * (G @ a - b)
        viol = np.where(a != 0, -np.inf, np.abs(g) - thr)
        j = int(np.argmax(viol))
        if viol[j] <= 1e-9:
            break
        order.append(j)
        s = np.sign(a)
        s[j] = -np.sign(g[j])
        S = np.array(order)
        x = np.linalg.solve(G[np.ix_(S, S)], b[S] - thr[S] * s[S] / 2)
        assert np.all(np.sign(x) == s[S])  # the block keeps its signs: no line search
        a = np.zeros(4)
        a[S] = x
    assert len(order) == 4
    got, info = feat.lasso_active_set(G, b, [1.5, 1.5, 1.0, 1.5], 1.5)
    np.testing.assert_allclose(got, a, rtol=1e-12)
    assert info["iterations"] == len(order) + 1
    ref, val = _lasso_by_sign_patterns(G, b, thr)
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def _soft_threshold_diagonal(g, b, lam):
    """Minimizer of ``sum_j g_j a_j^2 - 2 b_j a_j + lam |a_j|`` for a diagonal ``G``: the
    coordinates separate, and each 1-D problem is solved by ``a_j = sign(b_j) max(2 |b_j| -
    lam, 0) / (2 g_j)`` with value ``-max(2 |b_j| - lam, 0)^2 / (4 g_j)``."""
    g, b = np.asarray(g), np.asarray(b)
    t = np.maximum(2 * np.abs(b) - lam, 0.0)
    return np.sign(b) * t / (2 * g), float(-np.sum(t * t / (4 * g)))


def test_solve_weighted_lasso_keeps_a_weak_direction_of_a_small_matrix():
    """``G = diag(0.5, 1e-13)``: the weak eigenvalue is 2e-13 of the largest, far above the
    rounding cut (1e-13 of the largest), so it is a real direction and the answer is the
    separable closed form: ``a = ((1 - 1e-6), (2e-6 - 1e-6) / 2e-13) = (0.999999, 5e6)``,
    value ``c - (1 - 1e-6)^2 / 2 - (1e-6)^2 / 4e-13 = 0.25 - 0.4999990000005 - 2.5``. A cut
    not relative to the largest eigenvalue (``1e-13 * max(ev_max, 1)``, ``1e-13 / ev_max``)
    would drop that direction (``a_2 = 0``)."""
    g, b, lam = np.array([0.5, 1e-13]), np.array([0.5, 1e-6]), 1e-6
    ref, ref_val = _soft_threshold_diagonal(g, b, lam)
    np.testing.assert_allclose(ref, [0.999999, 5e6], rtol=1e-12)
    a, val = feat.solve_weighted_lasso(np.diag(g), b, 0.25, np.ones(2), lam=lam)
    np.testing.assert_allclose(a, ref, rtol=1e-6)
    assert val == pytest.approx(0.25 + ref_val, rel=1e-6)
    assert val == pytest.approx(0.25 - 0.4999990000005 - 2.5, rel=1e-6)


def test_solve_weighted_lasso_cuts_eigenvalues_at_1e13_of_the_largest_as_rounding():
    """An eigenvalue of exactly ``1e-13`` times the largest (``2^43`` and ``1e-13 * 2^43``:
    a diagonal ``G``, whose eigenvalues ``eigh`` returns exactly) counts as rounding: that
    direction is null, ``b``'s component along it is dropped, and the lasso penalty keeps
    ``a_2 = 0``. With ``b = (0, t)``, ``lam = t`` the value is ``c`` itself; keeping the
    direction would give ``a_2 = (2 t - t) / (2 t) = 1/2`` and value ``c - t/4``."""
    t = 1e-13 * 2.0**43
    a, val = feat.solve_weighted_lasso(
        np.diag([2.0**43, t]), np.array([0.0, t]), 3.0, np.ones(2), lam=t
    )
    np.testing.assert_allclose(a, [0.0, 0.0], atol=1e-9)
    assert val == pytest.approx(3.0, abs=1e-9)


def test_solve_weighted_lasso_passes_the_solver_to_cvxpy():
    """The ``solver`` argument reaches cvxpy: an unknown name is refused (cvxpy does not fall
    back on a default solver), and SCS, a second solver, finds the closed form too."""
    import cvxpy as cp

    g, b = np.array([2.0, 1.0]), np.array([1.0, -0.2])
    with pytest.raises(cp.error.SolverError, match="NOT_A_SOLVER"):
        feat.solve_weighted_lasso(np.diag(g), b, 0.0, np.ones(2), lam=0.5, solver="NOT_A_SOLVER")
    ref, ref_val = _soft_threshold_diagonal(g, b, 0.5)
    np.testing.assert_allclose(ref, [0.375, 0.0])
    a, val = feat.solve_weighted_lasso(np.diag(g), b, 0.0, np.ones(2), lam=0.5, solver="SCS")
    np.testing.assert_allclose(a, ref, atol=1e-4)
    assert val == pytest.approx(ref_val, abs=1e-6)
