"""Paper B's geometric diagnostics of a student network against its teacher, and the
optimum over measures that the optimality gap ``zeta`` is measured against.

Angles are measured up to sign (``arccos |cos|``): ``w`` and ``-w`` have the same
``relu_{>=2}`` feature, the linear difference being absorbed by ``beta``. ``T_i`` is the set of
student neurons whose nearest teacher (up to sign) is ``i``, ``delta_j`` the angle of neuron
``j`` to that teacher, and a neuron's *mass* is ``|a_j| ||w_j||``.

Used by the chapters ``paper_b/stage2``, ``paper_b/stage3``, ``paper_b/certificates`` and
``paper_b/samples``: :func:`min_measure` (the network-free optimum, an exact active-set Lasso
refined near its atoms), :func:`signed_mass_near` and :func:`half_mass_radius` (Lemma 10),
:func:`residual_terms` (eq. (8)), :func:`split_pair_loss` (Lemma F.6's tightness).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .kernels import kappa2, unit_rows
from .population import Net, loss_ge2
from .teacher import Teacher, angles_up_to_sign


def angles(net: Net, teacher: Teacher) -> np.ndarray:
    """``(m, m_*)`` angles up to sign between every student and every teacher neuron."""
    return angles_up_to_sign(unit_rows(net.W)[0], unit_rows(teacher.W)[0])


def partition(net: Net, teacher: Teacher):
    """``(owner, delta)``: index of each neuron's nearest teacher and the angle to it."""
    A = angles(net, teacher)
    owner = A.argmin(1)
    return owner, A[np.arange(len(owner)), owner]


def mass(net: Net) -> np.ndarray:
    return np.abs(net.a) * np.linalg.norm(net.W, axis=1)


def far_mass(net: Net, teacher: Teacher) -> float:
    """Lemma 8 (i): ``sum_i sum_{j in T_i} |a_j| ||w_j|| delta_j^2``."""
    _, delta = partition(net, teacher)
    return float(mass(net) @ delta**2)


def nearest_angle_per_teacher(net: Net, teacher: Teacher, min_mass: float = 0.0) -> np.ndarray:
    """For every teacher, the smallest angle to a student neuron of mass above ``min_mass``."""
    A = angles(net, teacher)
    keep = mass(net) > min_mass
    if not keep.any():
        return np.full(teacher.m, np.pi / 2)
    return A[keep].min(0)


def average_neurons(net: Net, teacher: Teacher) -> np.ndarray:
    """``v_i = sum_{j in T_i} a_j ||w_j|| s_j wbar_j`` (rows), with ``s_j = sign(wbar_j.w*_i)``
    so that a neuron near ``-w*_i`` counts towards ``+w*_i`` (their ``relu_{>=2}`` features
    coincide). Compare with ``a*_i w*_i``."""
    U, n = unit_rows(net.W)
    Us, _ = unit_rows(teacher.W)
    owner, _ = partition(net, teacher)
    s = np.sign(np.sum(U * Us[owner], 1))
    V = np.zeros_like(teacher.W)
    np.add.at(V, owner, (net.a * n * s)[:, None] * U)
    return V


def average_neuron_error(net: Net, teacher: Teacher) -> np.ndarray:
    """``||v_i - a*_i w*_i||`` for every teacher ``i``."""
    return np.linalg.norm(average_neurons(net, teacher) - teacher.a[:, None] * teacher.W, axis=1)


def subspace_fraction(W: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Per neuron, ``||P_S w|| / ||w||`` for the subspace with orthonormal ``basis`` (d, r)."""
    n = np.linalg.norm(W, axis=1)
    return np.linalg.norm(W @ basis, axis=1) / np.maximum(n, 1e-300)


def sphere_grid(r: int, count: int) -> np.ndarray:
    """About ``count`` unit vectors of ``R^r`` covering the sphere up to sign (``r = 1, 2, 3``):
    a half circle for ``r = 2``, a Fibonacci half sphere for ``r = 3``."""
    if r == 1:
        return np.ones((1, 1))
    if r == 2:
        th = np.pi * np.arange(count) / count
        return np.stack([np.cos(th), np.sin(th)], 1)
    if r == 3:
        i = np.arange(count) + 0.5
        z = i / count  # upper half sphere
        phi = np.pi * (1 + 5**0.5) * i
        rho = np.sqrt(1 - z * z)
        return np.stack([rho * np.cos(phi), rho * np.sin(phi), z], 1)
    raise ValueError("sphere_grid supports r <= 3")


def lasso_quadratic(U: np.ndarray, scale: np.ndarray, teacher: Teacher):
    """For features ``scale_j relu_{>=2}(u_j.x)`` (unit rows ``U``), the quadratic
    ``E[(sum_j a_j scale_j relu_{>=2}(u_j.x) - y~)^2] = a^T G a - 2 b^T a + c``."""
    Us = teacher.W / np.linalg.norm(teacher.W, axis=1, keepdims=True)
    cs = teacher.a * np.linalg.norm(teacher.W, axis=1)
    G = scale[:, None] * kappa2(U @ U.T) * scale[None, :]
    b = scale * (kappa2(U @ Us.T) @ cs)
    return G, b, teacher.target_norm2()


def solve_weighted_lasso(G, b, c, weights, *, lam, solver="CLARABEL"):
    """``min_a a^T G a - 2 b^T a + c + lam sum_j weights_j |a_j|`` with cvxpy; returns
    ``(a, value)``. ``G`` is factored (eigen-decomposition, negative rounding clipped)."""
    import cvxpy as cp

    ev, Q = np.linalg.eigh((G + G.T) / 2)
    keep = ev > 1e-13 * max(ev.max(), 1e-300)
    R = (Q[:, keep] * np.sqrt(ev[keep])).T
    # b lies in the range of G up to rounding; a^T G a - 2 b^T a = ||R a - z||^2 - ||z||^2
    z = np.linalg.lstsq(R.T, b, rcond=None)[0]
    a = cp.Variable(G.shape[0])
    obj = cp.sum_squares(R @ a - z) + lam * cp.sum(cp.multiply(weights, cp.abs(a)))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=solver)
    av = np.asarray(a.value, dtype=np.float64)
    val = float(av @ G @ av - 2 * b @ av + c + lam * np.sum(weights * np.abs(av)))
    return av, val


def min_measure_loss(teacher: Teacher, lam: float, grid: int = 360) -> float:
    """Upper estimate of ``min_mu L_lambda(mu)`` (eq. (4)): the weighted Lasso over a grid of
    directions of ``S_*`` (teacher directions included) with the ``relu_{>=2}`` Gram matrix.
    The exact minimum over measures can only be lower, so gaps computed with it are lower
    estimates of ``zeta`` (and may be slightly negative, by the grid's resolution)."""
    B = teacher.info["basis"]
    Ug = sphere_grid(B.shape[1], grid) @ B.T
    Us = teacher.W / np.linalg.norm(teacher.W, axis=1, keepdims=True)
    U = np.concatenate([Us, Ug])
    G, b, c = lasso_quadratic(U, np.ones(len(U)), teacher)
    _, val = solve_weighted_lasso(G, b, c, np.ones(len(U)), lam=lam)
    return val


def balanced_objective(net: Net, teacher: Teacher, lam: float) -> float:
    """``L_{>=2} + lam sum |a_j| ||w_j||``: what ``L_lambda`` equals once ``alpha, beta`` are
    fitted and the layers balanced (Claim B.1), comparable with ``min_mu L_lambda(mu)``."""
    return loss_ge2(net, teacher) + lam * float(np.sum(mass(net)))


# --- the optimum over measures, estimated without the network ----------------------------------


def lasso_active_set(G, b, weights, lam: float, *, max_iter: int = 10_000, rtol: float = 1e-11):
    """Exact minimizer of ``a^T G a - 2 b^T a + lam sum_j weights_j |a_j|`` (``G`` positive
    semi-definite, ``lam > 0``) by feature-sign search (Lee, Battle, Raina & Ng 2007): an
    active-set method whose every step solves the quadratic on the active set with the signs
    fixed and line-searches through the sign changes, so that the objective falls strictly. A
    singular active block (dependent columns: a dense grid of directions) takes a step along
    its null space instead (``_null_step``), and where no step lowers the objective while
    an optimality condition is violated, a pass of exact coordinate minimization does
    (``_coordinate_pass``), so the answer does not depend on how one machine rounds a
    singular solve. It stops when the optimality conditions hold to ``rtol``
    (``|2 (G a - b)_j| <= lam w_j`` where ``a_j = 0``, ``2 (G a - b)_j = -lam w_j sign(a_j)``
    elsewhere) or when nothing lowers the objective. Returns ``(a, info)``: ``info["kkt"]``
    is the largest violation of those conditions over ``lam max w`` (0 at the exact
    minimizer), ``info["iterations"]`` the steps.
    Used by :func:`min_measure` (chapters ``paper_b/stage3`` and ``paper_b/certificates``)."""
    if not lam > 0:
        raise ValueError("lam must be positive")
    G = np.asarray(G, dtype=np.float64)
    G = (G + G.T) / 2
    b = np.asarray(b, dtype=np.float64)
    thr = lam * np.broadcast_to(np.asarray(weights, dtype=np.float64), b.shape)
    tol = rtol * float(thr.max())
    a = np.zeros(len(b))
    active = np.zeros(len(b), dtype=bool)
    theta = np.zeros(len(b))

    def objective(x, idx):
        """The objective of the vector that is ``x`` on ``idx`` and zero elsewhere."""
        return float(x @ G[np.ix_(idx, idx)] @ x - 2 * b[idx] @ x + thr[idx] @ np.abs(x))

    def gradient(x):
        nz = np.flatnonzero(x)
        return 2 * (G[:, nz] @ x[nz] - b)

    def violation(x, g=None):
        """The largest violations of the optimality conditions on and off the support (``g``:
        the gradient at ``x`` when the caller has it)."""
        g = gradient(x) if g is None else g
        nz = x != 0
        on = np.abs(g[nz] + thr[nz] * np.sign(x[nz])).max(initial=0.0)
        off = np.maximum(np.abs(g[~nz]) - thr[~nz], 0.0).max(initial=0.0)
        return on, off

    it = 0
    while it < max_iter:
        it += 1
        # one gradient per step, for the conditions, the entering coefficient and the null step
        g = gradient(a)
        on, _ = violation(a, g)
        if on <= tol:  # optimal on the active set: add the most violating zero coefficient
            viol = np.where(active, -np.inf, np.abs(g) - thr)
            j = int(np.argmax(viol))
            if viol[j] <= tol:
                break
            active[j] = True
            theta[j] = -np.sign(g[j])
        A = np.flatnonzero(active)
        cur = a[A]
        GA = G[np.ix_(A, A)]
        null = _null_step(GA, cur, g[A], thr[A], tol)
        if null is not None and objective(null, A) < objective(cur, A):
            a = np.zeros_like(a)
            a[A] = null
            active = a != 0
            theta = np.sign(a)
            continue
        rhs = b[A] - thr[A] * theta[A] / 2
        try:
            x_new = np.linalg.solve(GA, rhs)
        except np.linalg.LinAlgError:
            x_new = np.linalg.lstsq(GA, rhs, rcond=None)[0]
        # candidates: the full step and each point where a coefficient crosses zero (set
        # exactly to zero there)
        cands = [x_new]
        for k in np.flatnonzero((cur != 0) & (np.sign(x_new) != np.sign(cur))):
            t = cur[k] / (cur[k] - x_new[k])
            x = cur + t * (x_new - cur)
            x[k] = 0.0
            cands.append(x)
        best, best_val = None, objective(cur, A)
        for x in cands:
            v = objective(x, A)
            if v < best_val:
                best, best_val = x, v
        if best is None:
            # no candidate lowers the objective: optimal to rounding, or a degenerate step
            # (an entering coefficient that the block's solution moves against its sign).
            # Then one pass of exact coordinate minimization over the violated conditions,
            # which lowers the objective wherever one is violated, and the search goes on.
            on, off = violation(a)
            if max(on, off) <= tol:
                break
            nxt = _coordinate_pass(G, b, thr, a, tol)
            nz = np.flatnonzero(a)
            nz2 = np.flatnonzero(nxt)
            if not objective(nxt[nz2], nz2) < objective(a[nz], nz):
                break
            a = nxt
            active = a != 0
            theta = np.sign(a)
            continue
        a = np.zeros_like(a)
        a[A] = best
        active = a != 0
        theta = np.sign(a)
    else:  # pragma: no cover
        raise RuntimeError(f"lasso_active_set: no convergence in {max_iter} steps")
    on, off = violation(a)
    nz = np.flatnonzero(a)
    return a, {
        "kkt": max(on, off) / float(thr.max()),
        "iterations": it,
        "objective": objective(a[nz], nz),
    }


def _coordinate_pass(G, b, thr, a, tol):
    """One pass of exact coordinate minimization of the Lasso objective over the coordinates
    whose optimality condition is violated by more than ``tol``, most violated first; each
    update ``a_k = -soft(c_k, thr_k) / (2 G_kk)`` (``c_k`` the gradient without ``a_k``'s own
    term) lowers the objective strictly where the condition was violated."""
    a = a.copy()
    g = 2 * (G @ a - b)
    sign = np.sign(a)
    viol = np.where(a != 0, np.abs(g + thr * sign), np.maximum(np.abs(g) - thr, 0.0))
    for k in np.argsort(-viol):
        if viol[k] <= tol:
            break
        if not G[k, k] > 0:
            continue
        c = g[k] - 2 * G[k, k] * a[k]
        new = -np.sign(c) * max(abs(c) - thr[k], 0.0) / (2 * G[k, k])
        delta = new - a[k]
        if delta != 0:
            a[k] = new
            g += 2 * G[:, k] * delta
    return a


def _null_step(GA, cur, g, thr, tol, rcond: float = 1e-10):
    """The feature-sign step when the active block ``GA`` is singular (an entering column that
    is a combination of the active ones; a dense grid of directions makes this common), where
    solving the block returns rounding noise and the search could stop short of the optimum.
    Along a null vector ``v`` of ``GA`` the quadratic part is constant, so the objective moves
    linearly, at the one-sided slope ``g . d + sum_k thr_k sign(x_k) d_k`` (``|d_k|`` where
    ``x_k = 0``); take the direction ``d = +-v`` of negative slope up to the first active
    coefficient that reaches zero, and set it to zero there: the objective falls and the
    active set loses a dependent column. ``None`` when ``GA`` is not singular (smallest
    eigenvalue above ``rcond`` times the largest) or no such step exists."""
    if len(cur) < 2:
        return None
    evals, evecs = np.linalg.eigh(GA)
    if not evals[0] <= rcond * max(float(evals[-1]), 1e-300):
        return None
    v = evecs[:, 0]
    nz = cur != 0

    def slope(d):
        return float(g @ d + thr[nz] @ (np.sign(cur[nz]) * d[nz]) + thr[~nz] @ np.abs(d[~nz]))

    d = v if slope(v) <= slope(-v) else -v
    if not slope(d) < -tol:
        return None
    moving = nz & (cur * d < 0)
    if not moving.any():
        return None
    steps = np.full(len(cur), np.inf)
    steps[moving] = -cur[moving] / d[moving]
    k = int(np.argmin(steps))
    x = cur + steps[k] * d
    x[k] = 0.0
    return x


def grid_spacing(r: int, count: int) -> float:
    """The typical angle between neighbouring points of :func:`sphere_grid` ``(r, count)``."""
    if r == 1:
        return math.pi
    if r == 2:
        return math.pi / count
    return math.sqrt(2 * math.pi / count)


def local_patch(u: np.ndarray, basis: np.ndarray, radius: float, step: float) -> np.ndarray:
    """Unit directions of ``S_*`` (orthonormal ``basis`` (d, r)) around the unit ``u`` in it:
    ``cos|o| u + sin|o| T o/|o|`` for offsets ``o`` on the grid of ``step`` in the ball of
    ``radius`` of the tangent space (``T``: an orthonormal basis of ``u^perp`` within
    ``S_*``)."""
    r = basis.shape[1]
    if r == 1:
        return u[None, :]
    P = basis - np.outer(u, u @ basis)
    q, _, _ = np.linalg.svd(P, full_matrices=False)
    T = q[:, : r - 1]
    k = math.floor(radius / step + 1e-9)
    ax = step * np.arange(-k, k + 1)
    O = np.stack(np.meshgrid(*([ax] * (r - 1)), indexing="ij"), -1).reshape(-1, r - 1)
    O = O[np.linalg.norm(O, axis=1) <= radius + 1e-12]
    s = np.linalg.norm(O, axis=1)
    dirs = O @ T.T / np.maximum(s, 1e-300)[:, None]
    return np.cos(s)[:, None] * u[None, :] + np.sin(s)[:, None] * dirs


@dataclass
class MeasureOptimum:
    """A feasible measure ``sum_j c_j delta_{u_j}`` on the unit sphere of ``S_*`` and its
    objective ``value = L(mu) + lam |mu|_1`` (eq. (5)): an upper bound of
    ``min_mu L_lambda(mu)``, independent of any network. ``levels``: the value after the
    coarse grid and after each refinement; ``kkt``: the Lasso's optimality residual on the
    last candidate set (relative to ``lam``); ``step``: the last grid step (radians)."""

    value: float
    U: np.ndarray
    c: np.ndarray
    levels: list
    kkt: float
    step: float
    lam: float = math.nan

    @property
    def resolution(self) -> float:
        """The bound's estimated accuracy: how much the last refinement lowered the value
        (each refinement shrinks the step by a constant factor and the error by more), or,
        if larger, what the Lasso's optimality residual can cost on the last candidate set
        (``2 kkt lam |mu|_1``, by convexity)."""
        change = abs(self.levels[-2] - self.levels[-1]) if len(self.levels) > 1 else math.inf
        return max(change, 2 * self.kkt * self.lam * self.mass())

    def loss(self, teacher: Teacher) -> float:
        """``L(mu)`` alone (without the penalty)."""
        G, b, y2 = lasso_quadratic(self.U, np.ones(len(self.c)), teacher)
        return float(self.c @ G @ self.c - 2 * b @ self.c + y2)

    def mass(self) -> float:
        return float(np.abs(self.c).sum())


def min_measure(
    teacher: Teacher,
    lam: float,
    grid: int = 360,
    levels: int | None = None,
    *,
    factor: int | None = None,
    resolve: float | None = None,
    max_levels: int = 8,
) -> MeasureOptimum:
    """Estimate ``mu_lambda^* = argmin_mu L(mu) + lam |mu|_1`` (eq. (5)) without any network:
    the weighted Lasso (:func:`lasso_active_set`, exact) over ``grid`` directions of ``S_*``
    plus the teacher directions, then ``levels`` times (default 2 for ``r = 2``, 4 for
    ``r = 3``) over the current support and a local grid ``factor`` times finer (default 10
    for ``r = 2``, 4 for ``r = 3``) around each cluster of support atoms. Every candidate set
    contains the previous support, so the value can only fall (a level that rounding makes
    worse is discarded). The value is an upper bound of the minimum over all measures
    (directions outside ``S_*`` are not searched), so gaps computed with it are lower
    estimates of ``zeta``. With ``resolve``, refinement goes on after ``levels`` until the
    optimum's :attr:`~MeasureOptimum.resolution` is at most ``resolve`` (or ``max_levels``
    refinements were made): a page that needs the optimum to a given accuracy asks for it.
    Chapters ``paper_b/stage3`` and ``paper_b/certificates`` (Lemmas 5, 6, 8, 9)."""
    B = teacher.info["basis"]
    r = B.shape[1]
    if factor is None:
        factor = 10 if r <= 2 else 4
    if levels is None:
        levels = 2 if r <= 2 else 4
    Us = teacher.W / np.linalg.norm(teacher.W, axis=1, keepdims=True)
    U = np.concatenate([Us, sphere_grid(r, grid) @ B.T])
    step = grid_spacing(r, grid)
    hist: list[float] = []
    best = None
    level = -1
    while True:
        level += 1
        G, b, y2 = lasso_quadratic(U, np.ones(len(U)), teacher)
        c, info = lasso_active_set(G, b, 1.0, lam)
        value = info["objective"] + y2
        keep = c != 0
        if best is None or value <= best[0]:
            best = (value, U[keep], c[keep], info["kkt"], step)
        hist.append(min(hist[-1], value) if hist else value)
        if level >= levels:
            now = MeasureOptimum(best[0], best[1], best[2], hist, best[3], best[4], float(lam))
            if resolve is None or now.resolution <= resolve or level >= max(levels, max_levels):
                break
        support, weights = best[1], best[2]
        new = step / factor
        patches = [support, Us]
        for center, radius in _clusters(support, weights, 2 * step):
            patches.append(local_patch(center, B, radius + step, new))
        U = _dedupe(np.concatenate(patches))
        step = new
    value, U, c, kkt, step = best
    return MeasureOptimum(float(value), U, c, hist, float(kkt), step, float(lam))


def _clusters(U: np.ndarray, c: np.ndarray, radius: float):
    """Greedy clusters (up to sign) of the atoms ``U`` within ``radius`` of the heaviest
    remaining atom: ``(centre, spread)`` with the mass-weighted mean direction as centre."""
    left = list(np.argsort(-np.abs(c)))
    out = []
    while left:
        i = left[0]
        cos = U[left] @ U[i]
        near = [left[k] for k in range(len(left)) if np.arccos(min(abs(cos[k]), 1.0)) <= radius]
        s = np.sign(U[near] @ U[i])
        s[s == 0] = 1.0
        centre = (np.abs(c[near]) * s) @ U[near]
        centre /= np.linalg.norm(centre)
        spread = float(np.arccos(np.clip(np.abs(U[near] @ centre), 0, 1)).max())
        out.append((centre, spread))
        left = [k for k in left if k not in near]
    return out


def _dedupe(U: np.ndarray, tol: float = 1e-13) -> np.ndarray:
    """Drop directions equal (up to sign) to an earlier one."""
    keep = []
    for i, u in enumerate(U):
        if not keep or np.max(np.abs(U[keep] @ u)) < 1 - tol:
            keep.append(i)
    return U[keep]


# --- Lemma 10 and Theorem 2: mass near each teacher ---------------------------------------------


def signed_mass_near(net: Net, teacher: Teacher, delta) -> np.ndarray:
    """Lemma 10: ``sign(a*_i) mu(T_i(delta))`` for every teacher ``i``, the signed mass
    ``sum_j a_j ||w_j||`` of the neurons of ``T_i`` within angle ``delta`` (scalar or one per
    teacher) of ``w*_i``. Lemma 10 says it is at least ``|a*_i| / 2`` once ``delta >=
    Theta(zeta^(1/3))``. Chapters ``paper_b/stage3`` and ``paper_b/certificates``."""
    owner, dl = partition(net, teacher)
    c = net.a * np.linalg.norm(net.W, axis=1)
    delta = np.broadcast_to(np.asarray(delta, dtype=np.float64), (teacher.m,))
    out = np.zeros(teacher.m)
    for i in range(teacher.m):
        sel = (owner == i) & (dl <= delta[i])
        out[i] = np.sign(teacher.a[i]) * c[sel].sum()
    return out


def half_mass_radius(net: Net, teacher: Teacher) -> np.ndarray:
    """For every teacher, the smallest ``delta`` at which ``sign(a*_i) mu(T_i(delta)) >=
    |a*_i| / 2`` (Lemma 10's radius, measured); ``inf`` where the cell never holds that mass."""
    owner, dl = partition(net, teacher)
    c = net.a * np.linalg.norm(net.W, axis=1)
    out = np.full(teacher.m, np.inf)
    for i in range(teacher.m):
        sel = np.flatnonzero(owner == i)
        sel = sel[np.argsort(dl[sel], kind="stable")]
        cum = np.cumsum(np.sign(teacher.a[i]) * c[sel])
        hit = np.flatnonzero(cum >= abs(teacher.a[i]) / 2)
        if len(hit):
            out[i] = dl[sel[hit[0]]]
    return out


def worst_neuron_misalignment(net: Net, teacher: Teacher) -> float:
    """``max_j |a_j| ||w_j|| delta_j^2``: the largest single term of Lemma 8 (i)'s far-away
    mass. Theorem 2's "every neuron aligns (delta_j -> 0) or vanishes (mass -> 0)" is that
    this goes to 0; Lemma 8 (i) gives it the rate O(zeta/lambda + lambda)."""
    _, dl = partition(net, teacher)
    return float(np.max(mass(net) * dl**2))


# --- eq. (8): the residual decomposition --------------------------------------------------------


def residual_terms(net: Net, teacher: Teacher, X: np.ndarray, printed: bool = False):
    """``(R, R1, R2, R3)`` of eq. (8) at the rows of ``X`` for the measure of ``net`` (after the
    sign flip of Assumption F.1, done here) against the teacher: ``R = f_mu - f_mu*`` with
    ``relu_{>=2}``, ``R1 = 1/2 sum_i (v_i - a*_i w*_i).x sign(w*_i.x)``, ``R2 = 1/2 sum_i
    sum_{j in T_i} a_j w_j.x (sign(w_j.x) - sign(w*_i.x))``, ``R3 = (sum_i a*_i ||w*_i|| -
    sum_j a_j ||w_j||) / sqrt(2 pi)``. ``printed=True`` uses the paper's ``v_i - w*_i`` in
    ``R1``, which breaks the identity ``R = R1 + R2 + R3`` unless every ``a*_i = 1``
    (chapter ``paper_b/stage3``, the erratum of eq. (8))."""
    from .kernels import INV_SQRT_2PI, relu_ge2

    owner, _ = partition(net, teacher)
    Us = teacher.W / np.linalg.norm(teacher.W, axis=1, keepdims=True)
    ns = np.linalg.norm(teacher.W, axis=1)
    s = np.sign(np.sum(net.W * Us[owner], 1))
    s[s == 0] = 1.0
    W = net.W * s[:, None]  # Assumption F.1: w_j.w*_i >= 0
    n = np.linalg.norm(W, axis=1)
    U = W / np.maximum(n, 1e-300)[:, None]
    f_mu = relu_ge2(X @ U.T) @ (net.a * n)
    f_star = relu_ge2(X @ Us.T) @ (teacher.a * ns)
    R = f_mu - f_star
    V = np.zeros_like(teacher.W)
    np.add.at(V, owner, net.a[:, None] * W)
    target = teacher.W if printed else teacher.a[:, None] * teacher.W
    S_star = np.sign(X @ teacher.W.T)
    R1 = 0.5 * np.sum((X @ (V - target).T) * S_star, 1)
    R2 = 0.5 * np.sum((X @ W.T) * net.a * (np.sign(X @ W.T) - S_star[:, owner]), 1)
    R3 = INV_SQRT_2PI * (teacher.a @ ns - net.a @ n) * np.ones(len(X))
    return R, R1, R2, R3


# --- Lemma F.6's tightness: a split pair of neurons ---------------------------------------------


def split_pair_loss(teacher: Teacher, i: int, deltas, pair: bool = True) -> np.ndarray:
    """``L(mu)`` when teacher atom ``i`` of ``mu* = sum a*_j delta_{w*_j}`` is replaced by two
    atoms at angles ``+-delta`` from ``w*_i`` in ``S_*`` (``pair=True``) or by one atom at
    ``delta`` (``pair=False``), their masses chosen to minimize the loss. The pair's loss
    falls like ``delta^3`` (the kink of ReLU: ``kappa_2(cos delta)`` has a ``|delta|^3`` term),
    the single atom's like ``delta^2``: Lemma 10's ``zeta^(1/3)`` cannot be improved (F.6)."""
    B = teacher.info["basis"]
    u = teacher.W[i] / np.linalg.norm(teacher.W[i])
    P = B - np.outer(u, u @ B)
    q, _, _ = np.linalg.svd(P, full_matrices=False)
    tangent = q[:, 0]
    target = teacher.a[i] * np.linalg.norm(teacher.W[i])
    out = []
    for dl in np.atleast_1d(np.asarray(deltas, dtype=np.float64)):
        V = [math.cos(dl) * u + math.sin(dl) * tangent]
        if pair:
            V.append(math.cos(dl) * u - math.sin(dl) * tangent)
        V = np.array(V)
        # the other teacher atoms cancel exactly: fit target * relu_{>=2}(u.x) by the atoms V
        cos_vv = np.clip(V @ V.T, -1, 1)
        cos_vu = np.clip(V @ u, -1, 1)
        G = kappa2(cos_vv)
        b = target * kappa2(cos_vu)
        c = np.linalg.lstsq(G, b, rcond=None)[0]
        y2 = target**2 * float(kappa2(1.0))
        out.append(max(float(c @ G @ c - 2 * b @ c + y2), 0.0))
    return np.array(out)
