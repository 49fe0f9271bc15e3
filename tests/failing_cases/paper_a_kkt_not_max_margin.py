"""Failing cases of ``twolayer.paper_a.chapters.kkt_not_max_margin``."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import torch

from failing_cases import Case
from twolayer.paper_a import flow, kkt
from twolayer.paper_a.chapters import kkt_not_max_margin as chapter

CHAPTER = "paper_a/kkt_not_max_margin"
Y = np.array([1.0, -1.0, -1.0])


@functools.cache
def _params():
    return chapter.SPEC.params("smoke", num_eps=2)


def _mirrored(eps: float):
    """Another reading of the lost configuration: ``x_2 = (+eps, sqrt(1 - eps^2), 0)``."""
    return np.array([[1.0, 0, 0], [eps, math.sqrt(1 - eps * eps), 0], [0, 0, 1.0]]), Y


def _orthonormal(eps: float):
    """Orthonormal points (the example at ``eps = 0``): ``z`` is a multiple of ``z*``."""
    return np.eye(3), Y


def _table_claim(check, configuration):
    P = _params()
    table = chapter.example_table([0.01, 0.1], P.m_half, configuration)
    return check(P, chapter.Result(algebra=_hand_algebra(P, table)))


def _hand_algebra(P, table=None) -> chapter.Algebra:
    """The example at ``P.eps`` from the closed forms (no solver): Problem (3)'s optimum from
    the printed multipliers (item 2), ``z* = X^{-1} y``."""
    X, y = kkt.three_point_example(P.eps)
    lam = kkt.three_point_multipliers(P.eps)
    m = 2 * P.m_half
    v, u = kkt.vu_from_multipliers(lam, X, y, m, gamma=chapter.GAMMA)
    sol = kkt.Problem3Solution(v, u, lam, P.m_half, P.m_half, chapter.GAMMA)
    z_cf = (1 + chapter.GAMMA) / 2 * (lam * y) @ X
    z_star = np.linalg.solve(X, y)
    return chapter.Algebra(
        table=pd.DataFrame() if table is None else table,
        X=X,
        y=y,
        sol=sol,
        z_star=z_star,
        lam_cf=lam,
        z_cf=z_cf,
        z_star_cf=z_star,
        angle_z_zstar=kkt.angle(z_cf, z_star),
    )


def _flow_claim(check, W_or_steps):
    """``check`` on a run of ``W_or_steps`` normalized steps from the page's initializations,
    or on planted weights ``(B, m, 3)``; the hypothesis (eps = 0.0125 <= 1/72) holds."""
    P = _params()
    A = _hand_algebra(P)
    if isinstance(W_or_steps, int):
        W0 = chapter.initial_weights(P)
        X, y = torch.as_tensor(A.X), torch.as_tensor(A.y)
        run = flow.normalized_flow(
            chapter.network(P), W0, X, y, loss=P.loss, lr=1.0, checkpoints=[W_or_steps]
        )
    else:
        W = torch.as_tensor(W_or_steps)[None]
        zeros = np.zeros((1, W.shape[1]))
        run = flow.FlowRun(np.array([0]), W, zeros, zeros, 1.0)
    R = chapter.Result(algebra=A, flow=chapter.flow_result(P, A, run))
    near_orth = chapter.near_orthogonality(P, R)
    assert near_orth.holds
    return check(P, R, near_orth)


def _network_at_zstar():
    """Weights whose linear predictor is the max-margin ``z*``: ``v = z*``, ``u = -z*``
    (every neuron of one sign equal), as if the flow had converged to ``z*``."""
    P = _params()
    z_star = np.linalg.solve(*kkt.three_point_example(P.eps))
    return np.stack([z_star] * P.m_half + [-z_star] * P.m_half)[None]


CASES = {
    "multipliers_match_printed": Case(
        "the solver sees x_2 = (+eps, ...), another reading of the lost configuration: its "
        "lambda_1 is 1.74, not the printed 8/(4 eps + 5) = 1.48 at eps = 0.1",
        lambda: _table_claim(chapter.multipliers_match_printed, _mirrored),
    ),
    "z_x2_differs_from_z_x3": Case(
        "orthonormal points: Problem (3)'s z is a multiple of z*, its margins are equal",
        lambda: _table_claim(chapter.z_x2_differs_from_z_x3, _orthonormal),
    ),
    "thm34_loss_below_log2_over_n": Case(
        "a run stopped after one step: its loss is still above log 2 / n",
        lambda: _flow_claim(chapter.thm34_loss_below_log2_over_n, 1),
    ),
    "flow_reaches_convex_optimum": Case(
        "a run stopped after one step: its margin-normalized weights lie 5 ‖W*‖_F from W*",
        lambda: _flow_claim(chapter.flow_reaches_convex_optimum, 1),
    ),
    "flow_converges_to_z_not_zstar": Case(
        "a network whose linear predictor is the max-margin z*: as far from z as z* is",
        lambda: _flow_claim(chapter.flow_converges_to_z_not_zstar, _network_at_zstar()),
    ),
}
