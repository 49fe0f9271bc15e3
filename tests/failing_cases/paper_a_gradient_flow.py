"""Failing cases of ``twolayer.paper_a.chapters.gradient_flow``: for every theorem and
observation check of the page, an input where its statement is false, run through the module's
own check function.

Three inputs serve most cases, each built from the smoke profile's data:

* an *untrained* network: the page's large initialization (10 times the default scale) of one
  random direction, stopped at the first step at which it separates the data: a network the
  flow has not shaped yet (its margins barely positive, its rows apart);
* a *correlated* data set: three points in R^3 with inner products as large as their norms,
  outside Theorem 3.2's assumption (n / n_max near 2 000), with the gate forced: the convex
  optimum of Problem (3) is not even feasible for Problem (1) there, and the flow finds
  feasible networks of smaller norm;
* a run stopped in its *transient*, after 100 steps, before the activation patterns freeze.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import torch

from failing_cases import Case
from twolayer.paper_a import flow, models
from twolayer.paper_a.chapters import gradient_flow as gf
from twolayer.paper_a.trainer import log_spaced_steps

CHAPTER = "paper_a/gradient_flow"


@functools.cache
def _smoke():
    P = gf.SPEC.params("smoke")
    return P, gf.target(P)


@functools.cache
def _untrained():
    """The page's large initialization (10 x default) of a random direction, run only until it
    first separates the data (12 steps here): its Training, and the step."""
    P, S = _smoke()
    X, y = torch.as_tensor(S.Xc), torch.as_tensor(S.y)
    W0 = flow.initializations(
        S.net, S.Xc.shape[1], P.d, P.init_scale, mults=[10.0], directions=6, seed=5
    )[3:4]
    probe = flow.normalized_flow(S.net, W0, X, y, loss=P.loss, lr=S.lr, checkpoints=np.arange(60))
    q = S.net.margins(probe.W[:, 0], X, y).min(dim=-1).values
    k = int(np.flatnonzero(q.numpy() > 0)[0])
    run = flow.normalized_flow(S.net, W0, X, y, loss=P.loss, lr=S.lr, checkpoints=[k])
    return gf.training_from_run(P, S, run), k


@functools.cache
def _correlated():
    """Three points in R^3, inner products of the order of their norms (outside the
    assumption), with m1 = 1, m2 = 3, gamma = 0.4, and the flow from three initializations."""
    P = gf.SPEC.params("smoke", n=3, d=3, m1=1, m2=3, gamma=0.4)
    X = np.array([[0.11, -1.2, -0.39], [1.2, -0.84, -0.19], [0.91, 2.6, 1.45]])
    S = gf.target_from_data(P, X, np.array([-1.0, 1.0, -1.0]))
    W0 = S.net.init(3, 1 / np.sqrt(3), seed=0, batch=3)
    Xt, yt = torch.as_tensor(S.Xc), torch.as_tensor(S.y)
    run = flow.normalized_flow(S.net, W0, Xt, yt, loss=P.loss, lr=S.lr, checkpoints=[10, 100, 1000])
    return P, S, gf.Training(W0, run, 1000, None)


def _transient():
    """The page's runs (two directions at the three scales) stopped after 100 steps."""
    P, S = _smoke()
    W0 = flow.initializations(
        S.net, S.Xc.shape[1], P.d, P.init_scale, mults=gf.MULTS, directions=2, seed=5
    )
    X, y = torch.as_tensor(S.Xc), torch.as_tensor(S.y)
    run = flow.normalized_flow(
        S.net, W0, X, y, loss=P.loss, lr=S.lr, checkpoints=log_spaced_steps(100, 24)
    )
    return P, S, gf.Training(W0, run, 100, None)


def _trained_check(check, with_target: bool = False):
    def make():
        P, S = _smoke()
        T, _ = _untrained()
        return check(P, S, T, True) if with_target else check(P, T, True)

    return make


def _wstar_check(check):
    def make():
        P, S, _ = _correlated()
        return check(P, S, True)

    return make


def _untrained_sweep() -> gf.Sweep:
    """A sweep whose one setting (the page's gamma and widths) stopped at the untrained
    network's first separating step: its row as flow.leak_sweep writes it."""
    P, S = _smoke()
    T, k = _untrained()
    c = T.final.iloc[0]
    row = {
        "gamma": P.gamma,
        "m1": P.m1,
        "m2": P.m2,
        "ratio": S.asm.ratio,
        "steps": k,
        "deviation": max(
            c.margin_max_dev,
            c.row_collapse,
            c.rank_ratio,
            c.dist_to_convex,
            1 - c.sign_agreement,
        ),
        "dist_to_convex": c.dist_to_convex,
        "wstar_z_ratio": S.wstar_z_ratio,
        "z_ratio": c.z_ratio,
        "z_slack": c.z_slack,
        "z_bound": S.z_bound,
        "lambda_in_range": c.lambda_in_range,
    }
    table = pd.DataFrame([row])
    table["bound_used"] = table.wstar_z_ratio / table.z_bound
    return gf.Sweep(table, {})


def _sweep_check(check):
    def make():
        P, _ = _smoke()
        return check(P, _untrained_sweep(), True)

    return make


def _short_phase(factor: float) -> gf.Phase:
    """The phase diagram of the smoke network at n = 4, d in {8, 10^8} (one draw each), 100
    steps and tolerance 0.01; ``factor`` is flow_to_tolerance's extension factor (the page's
    2, or 1e-9: no extension)."""
    P, _ = _smoke()
    net = models.LeakyNetwork(P.m1, P.m2, gamma=P.gamma)
    grid = {4: np.array([8, 10**8])}
    table = flow.phase_diagram(
        net,
        [4],
        grid,
        1,
        loss=P.loss,
        init_scale=P.init_scale,
        steps=100,
        tol=0.01,
        n_test=500,
        seed=0,
        factor=factor,
    )
    return gf.Phase(grid, table)


def _kkt_residual_stays():
    P, S = _smoke()
    T, _ = _untrained()
    return gf.thm31_direction_is_kkt_point(P, T, True)


CASES = {
    # --- W* on data outside the assumption (gate forced) ---
    "wstar_is_kkt_point_of_problem1": Case(
        "correlated data: the tiled convex optimum violates Problem (1)'s constraints",
        _wstar_check(gf.wstar_is_kkt_point_of_problem1),
    ),
    "wstar_multipliers_in_range": Case(
        "correlated data: a multiplier of Problem (3) is 15, above item 2's interval",
        _wstar_check(gf.wstar_multipliers_in_range),
    ),
    "wstar_sign_pattern": Case(
        "correlated data: v* has the wrong sign on a training point",
        _wstar_check(gf.wstar_sign_pattern),
    ),
    "wstar_margins_all_one": Case(
        "correlated data: a margin of W* is -1.3, not 1",
        _wstar_check(gf.wstar_margins_all_one),
    ),
    "wstar_z_separates": Case(
        "correlated data: z of W* misclassifies a training point",
        _wstar_check(gf.wstar_z_separates),
    ),
    "item4_no_feasible_point_below_wstar": Case(
        "correlated data: the flow finds feasible networks with half the squared norm of W*",
        lambda: gf.item4_no_feasible_point_below_wstar(*_correlated(), True),
    ),
    # --- an untrained network (first separating step of the large initialization) ---
    "thm34_loss_below_log2_over_n": Case(
        "untrained: margins barely positive, its loss is 7 times log(2)/n",
        lambda: gf.thm34_loss_below_log2_over_n(_smoke()[0], _untrained()[0], True),
    ),
    "thm31_direction_is_kkt_point": Case(
        "untrained: no non-negative multipliers make its direction stationary",
        _kkt_residual_stays,
    ),
    "item1_margins": Case(
        "untrained: its margins range far from the smallest",
        _trained_check(gf.item1_margins),
    ),
    "item2_rows_collapse": Case(
        "untrained: its rows are random, far from their group's mean",
        _trained_check(gf.item2_rows_collapse),
    ),
    "item3_rank_two": Case(
        "untrained: a random 5 x 8 matrix has sigma_3 of the order of sigma_1",
        _trained_check(gf.item3_rank_two),
    ),
    "item5_convex_optimum": Case(
        "untrained: far from the convex optimum", _trained_check(gf.item5_convex_optimum)
    ),
    "item6_linear_boundary": Case(
        "untrained: its rows differ, so sign f disagrees with sign z.x on 20% of test points",
        _trained_check(gf.item6_linear_boundary),
    ),
    "item2_multipliers_in_range": Case(
        "untrained: a multiplier fitted to its group means is 32, outside item 2's interval",
        _trained_check(gf.item2_multipliers_in_range, with_target=True),
    ),
    "item2_sign_pattern": Case(
        "untrained: its group mean v has the wrong sign on training points",
        _trained_check(gf.item2_sign_pattern),
    ),
    "item4_unique_optimum": Case(
        "untrained: it has not reached W*", _trained_check(gf.item4_unique_optimum)
    ),
    # --- a run in its transient ---
    "distance_falls_like_one_over_s": Case(
        "runs stopped after 100 steps, before the activation patterns freeze: slopes -0.8 to -2.2",
        lambda: gf.distance_falls_like_one_over_s(*_transient()),
    ),
    # --- the sweep, one setting stopped untrained ---
    "sweep_all_converge": Case(
        "a setting stopped at its first separating step", _sweep_check(gf.sweep_all_converge)
    ),
    "sweep_lambda_in_range": Case(
        "a setting stopped at its first separating step: multipliers outside the interval",
        _sweep_check(gf.sweep_lambda_in_range),
    ),
    # --- the phase diagram ---
    "phase_items_hold_under_assumption": Case(
        "the draw under the assumption stopped after 100 steps (no extension), tolerance 0.01",
        lambda: gf.phase_items_hold_under_assumption(_smoke()[0], _short_phase(1e-9)),
    ),
    "items_hold_below_assumption": Case(
        "the draw below the assumption (d = 8) is not certified: the items start where the "
        "assumption does (factor 1)",
        lambda: gf.items_hold_below_assumption(_smoke()[0], _short_phase(2.0)),
    ),
}
