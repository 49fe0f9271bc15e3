"""Paper B's geometric diagnostics of a student network against its teacher.

Angles are measured up to sign (``arccos |cos|``): ``w`` and ``-w`` have the same
``relu_{>=2}`` feature, the linear difference being absorbed by ``beta``. ``T_i`` is the set of
student neurons whose nearest teacher (up to sign) is ``i``, ``delta_j`` the angle of neuron
``j`` to that teacher, and a neuron's *mass* is ``|a_j| ||w_j||``.
"""
from __future__ import annotations

import numpy as np

from .kernels import kappa2
from .population import Net, loss_ge2
from .teacher import Teacher
from .teacher import angles_up_to_sign


def _unit(W):
    n = np.linalg.norm(W, axis=1)
    return W / np.maximum(n, 1e-300)[:, None], n


def angles(net: Net, teacher: Teacher) -> np.ndarray:
    """``(m, m_*)`` angles up to sign between every student and every teacher neuron."""
    return angles_up_to_sign(_unit(net.W)[0], _unit(teacher.W)[0])


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
    return float(mass(net) @ delta ** 2)


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
    U, n = _unit(net.W)
    Us, _ = _unit(teacher.W)
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
        z = i / count                          # upper half sphere
        phi = np.pi * (1 + 5 ** 0.5) * i
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


def solve_weighted_lasso(G, b, c, weights, lam, solver="CLARABEL"):
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
    _, val = solve_weighted_lasso(G, b, c, np.ones(len(U)), lam)
    return val


def balanced_objective(net: Net, teacher: Teacher, lam: float) -> float:
    """``L_{>=2} + lam sum |a_j| ||w_j||``: what ``L_lambda`` equals once ``alpha, beta`` are
    fitted and the layers balanced (Claim B.1), comparable with ``min_mu L_lambda(mu)``."""
    return loss_ge2(net, teacher) + lam * float(np.sum(mass(net)))
