"""Stage 3's local landscape, measured along a trajectory of Algorithm 1 (Paper B, Lemma 5,
Lemma 6, Lemma 8, Lemma 10 and Theorem 2).

The optimality gap ``zeta = L_lambda(theta) - min_mu L_lambda(mu)`` (eq. (4)) is estimated
against :func:`twolayer.paper_b.features.min_measure`, an optimum over measures computed
without the network (a refined grid Lasso), so that the gap of the trained network is never
measured against the network itself. Since that optimum is an upper bound of the true
minimum, the gaps here are lower estimates of ``zeta``, accurate to the optimum's resolution.

Used by the chapter ``paper_b/stage3`` (and ``paper_b/certificates`` for its short run).
"""

from __future__ import annotations

import math

import numpy as np

from . import features as feat
from . import population as pop
from .algorithm1 import Trajectory
from .kernels import kappa2
from .teacher import Teacher

KAPPA2_ONE = float(kappa2(1.0))


def visible_threshold(L: float) -> float:
    """``sqrt(L / kappa_2(1))``: a neuron of mass ``mu`` adds ``mu^2 kappa_2(1)`` to the square
    loss on its own, so one of smaller mass is invisible at loss ``L`` (Theorem 2's
    "vanished" at that accuracy)."""
    return math.sqrt(max(L, 0.0) / KAPPA2_ONE)


def optima(teacher: Teacher, lams, grid: int, levels: int | None = None, *, resolve=None) -> list:
    """:func:`~twolayer.paper_b.features.min_measure` at every ``lambda`` of ``lams``;
    ``resolve``: the accuracy asked of each (one value per ``lambda``, refined until reached;
    ``None``: the default refinement only)."""
    targets = [None] * len(lams) if resolve is None else list(np.broadcast_to(resolve, len(lams)))
    return [
        feat.min_measure(teacher, lam, grid=grid, levels=levels, resolve=t)
        for lam, t in zip(lams, targets)
    ]


def gaps(traj: Trajectory, opts: list) -> np.ndarray:
    """``zeta`` at every recorded step: ``L_lambda`` minus the optimum of its epoch."""
    a = traj.arrays()
    return a["reg_loss"] - np.array([opts[k].value for k in a["epoch"]])


def lemma6_window(zeta, lam, resolution=0.0, c_lo: float = 1.0, *, c_hi: float = 1.0) -> np.ndarray:
    """Lemma 6's hypothesis ``Omega(lambda^2) <= zeta <= O(lambda^(9/5))`` with the hidden
    constants ``c_lo`` and ``c_hi`` (1: the book's reading), at the points where ``zeta`` is
    resolved (at least 10 times the optimum's ``resolution``): a boolean mask."""
    zeta, lam = np.asarray(zeta, dtype=float), np.asarray(lam, dtype=float)
    return (
        (zeta >= c_lo * lam**2)
        & (zeta <= c_hi * lam**1.8)
        & (zeta >= 10 * np.asarray(resolution, dtype=float))
    )


def resolution_along(traj: Trajectory, opts: list) -> np.ndarray:
    """The resolution of the optimum of each recorded step's epoch."""
    return np.array([opts[k].resolution for k in traj.arrays()["epoch"]])


def epoch_table(
    traj: Trajectory,
    teacher: Teacher,
    opts: list,
    p_norm: float | None = None,
    *,
    rho: float | None = None,
) -> list[dict]:
    """One row per epoch (its end unless said): ``lambda``, ``L``, ``L / lambda^2``, the gaps
    at the start and the end, the visible threshold and neurons, the largest angle of a
    visible neuron, the vanished (invisible) mass, Lemma 8's far-away mass (and F.5's bound
    ``(zeta/lambda + 2 lambda ||p||^2) / rho_eta`` when ``p_norm`` and ``rho`` are given), the
    largest single term ``mass_j delta_j^2``, the nearest visible neuron's angle for the worst
    teacher, the average-neuron errors ``||v_i - a*_i w*_i||`` and, as printed,
    ``||v_i - w*_i||``, and the optimum's mass, loss and largest atom displacement."""
    Us = teacher.W / np.linalg.norm(teacher.W, axis=1, keepdims=True)
    rows = []
    for k, ((lam, start), (_, end)) in enumerate(zip(traj.starts, traj.snapshots)):
        opt = opts[k]
        L = pop.loss(end, teacher)
        thr = visible_threshold(L)
        m = feat.mass(end)
        _, dl = feat.partition(end, teacher)
        vis = m > thr
        z_end = pop.regularized_loss(end, teacher, lam) - opt.value
        V = feat.average_neurons(end, teacher)
        row = {
            "epoch": k,
            "lambda": lam,
            "L": L,
            "L / lambda^2": L / lam**2,
            "zeta start": pop.regularized_loss(start, teacher, lam) - opt.value,
            "zeta end": z_end,
            "optimum resolution": opt.resolution,
            "visible threshold": thr,
            "visible neurons": int(vis.sum()),
            "max angle visible": float(dl[vis].max()) if vis.any() else 0.0,
            "vanished mass": float(m[~vis].sum()),
            "far mass": float(m @ dl**2),
            "max mass delta^2": float(np.max(m * dl**2)),
            "nearest angle": float(feat.nearest_angle_per_teacher(end, teacher, thr).max()),
            "avg neuron error": float(
                np.linalg.norm(V - teacher.a[:, None] * teacher.W, axis=1).max()
            ),
            "avg neuron error (printed)": float(np.linalg.norm(V - teacher.W, axis=1).max()),
            "optimum mass": opt.mass(),
            "optimum loss": opt.loss(teacher),
            "optimum displacement": float(
                np.arccos(np.clip(np.abs(opt.U @ Us.T), 0, 1)).min(1).max()
            ),
        }
        if p_norm is not None and rho is not None:
            row["F.5 bound"] = (max(z_end, 0.0) / lam + 2 * lam * p_norm**2) / rho
            row["F.4 bound"] = 5 * lam**2 * p_norm**2 + 4 * max(z_end, 0.0)
        rows.append(row)
    return rows


def lemma10_along(traj: Trajectory, teacher: Teacher, zeta) -> dict:
    """Lemma 10 at every recorded network (``traj.nets``): the radius ``(zeta + lambda^2)^(1/3)``
    (F.6's corollary, hidden constant 1), the smallest ratio over teachers of the signed mass
    within it to ``|a*_i| / 2``, and the largest ratio of the measured half-mass radius
    (:func:`~twolayer.paper_b.features.half_mass_radius`) to it."""
    a = traj.arrays()
    if len(traj.nets) != len(a["epoch"]):
        raise ValueError("run stage3 with keep_nets=True")
    radius = (np.maximum(np.asarray(zeta, dtype=float), 0.0) + a["lam"] ** 2) ** (1 / 3)
    ratio = np.empty(len(radius))
    half = np.empty(len(radius))
    for j, net in enumerate(traj.nets):
        ratio[j] = np.min(feat.signed_mass_near(net, teacher, radius[j]) / (np.abs(teacher.a) / 2))
        half[j] = np.max(feat.half_mass_radius(net, teacher)) / radius[j]
    return {"radius": radius, "mass_ratio": ratio, "half_radius_ratio": half}
