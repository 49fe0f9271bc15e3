"""The first layer frozen after Stage 1: a random-features model inside the teacher subspace
(the comparison of the paper's Section 3 with Damian et al. 2022), the experiment code of
{ref}`chapter-paperb-frozen`.

With ``W = W^(1)`` fixed, the best output layer (and ``alpha, beta``) minimizes the convex
quadratic ``a^T G a - 2 b^T a + c`` of Stage 2 without penalty; its minimum ``c - b^T G^+ b``
is the squared distance of ``f~_*`` to the span of the features
``||w_i|| relu_{>=2}(wbar_i . x)`` (:func:`frozen_best_loss`). Widths share one symmetric
initialization (:func:`nested`), so the feature sets are nested and the best loss cannot
increase with the width.
"""

from __future__ import annotations

import math

import numpy as np

from . import algorithm1 as alg
from . import features as feat
from . import population as pop
from .teacher import Teacher


def nested(net: pop.Net, m: int) -> pop.Net:
    """The first ``m / 2`` symmetric pairs of ``net`` (a symmetric initialization of an even
    width): the network of width ``m`` inside the wider one."""
    if m % 2 or m > len(net.a):
        raise ValueError("m must be even and at most the width of net")
    h, half = m // 2, len(net.a) // 2
    idx = np.r_[0:h, half : half + h]
    return pop.Net(net.a[idx], net.W[idx])


def frozen_best_loss(W: np.ndarray, teacher: Teacher) -> float:
    """``min_{a, alpha, beta} L(a, W, alpha, beta) = c - b^T G^+ b`` (pseudo-inverse on the
    eigenvalues above ``1e-12`` of the largest; the symmetric pairs make ``G`` singular)."""
    G, b, c, _ = alg.stage2_problem(W, teacher)
    ev, Q = np.linalg.eigh(G)
    keep = ev > 1e-12 * ev.max()
    proj = Q[:, keep].T @ b
    return max(c - float(proj @ (proj / ev[keep])), 0.0)


def frozen_sweep(teacher: Teacher, full0: pop.Net, ms) -> list[dict]:
    """For every width of ``ms`` (even, at most the width of ``full0``): Stage 1 on the nested
    initialization, the best frozen loss and the coverage ``eps0`` in ``R^d``."""
    rows = []
    for m in ms:
        net1 = alg.stage1(nested(full0, m), teacher)
        rows.append(
            {
                "m": m,
                "frozen best L": frozen_best_loss(net1.W, teacher),
                "epsilon_0 (rad)": float(feat.angles(net1, teacher).min(0).max()),
            }
        )
    return rows


def local_slopes(ms, losses) -> np.ndarray:
    """Log-log slopes between consecutive widths."""
    ms = np.asarray(ms, dtype=np.float64)
    losses = np.asarray(losses, dtype=np.float64)
    return np.diff(np.log(losses)) / np.diff(np.log(ms))


def width_at(m_last: float, loss_last: float, target: float, slope: float) -> float:
    """The width at which a power law through ``(m_last, loss_last)`` with ``slope < 0``
    reaches ``target`` (``inf`` for a non-negative slope): an extrapolation, not a bound."""
    if slope >= 0:
        return math.inf
    return float(m_last * math.exp((math.log(target) - math.log(loss_last)) / slope))
