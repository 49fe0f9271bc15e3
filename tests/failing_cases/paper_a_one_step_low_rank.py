"""Failing cases of ``paper_a/one_step_low_rank``: for each theorem and observation check, a
smoke-size run of the chapter module (computed once, about a second) with one quantity replaced
by what a run contradicting the statement would record, or an initialization drawn outside the
statement; the chapter module's check must come out decided and false."""

from __future__ import annotations

import copy
import dataclasses
import functools

import numpy as np
import torch

from failing_cases import Case
from twolayer.paper_a import metrics
from twolayer.paper_a.chapters import one_step_low_rank as ch

CHAPTER = "paper_a/one_step_low_rank"


@functools.cache
def _base():
    """The chapter at the smoke profile, on the CPU in float64 (every hypothesis holds)."""
    torch.set_num_threads(1)
    P = ch.SPEC.params("smoke", device="cpu")
    return P, ch.compute(P)


def _copy():
    """``(P, R)`` with ``R`` a deep copy of the smoke run (a case may change it)."""
    P, R = _base()
    return P, copy.deepcopy(R)


def _with_history(R, **changes):
    """``R`` with the main batch's history entries replaced."""
    h = {**R.runs.batch.history, **changes}
    R.runs = dataclasses.replace(R.runs, batch=dataclasses.replace(R.runs.batch, history=h))
    return R


# --- Lemma E.1 and the stable rank at initialization --------------------------------------------


def _init_twice_the_scale():
    # the initialization drawn at twice the omega the runs record (a multiplier off by 2)
    P, R = _copy()
    B, net = R.runs.batch, R.setup.problem.net
    W0 = net.init(P.d, torch.as_tensor(2 * B.omega), seed=123, batch=B.omega.size)
    spectral0 = torch.linalg.matrix_norm(W0, ord=2).numpy()
    R.runs = dataclasses.replace(R.runs, batch=dataclasses.replace(B, spectral0=spectral0))
    return ch.init_spectral_norm_E1(P, R)


def _rank_one_init():
    # every neuron a multiple of one Gaussian row: W0 = omega g v^T has stable rank 1
    P, R = _copy()
    gen = torch.Generator().manual_seed(7)
    g = torch.randn(R.runs.kind.size, P.m, 1, generator=gen, dtype=torch.float64)
    v = torch.randn(R.runs.kind.size, 1, P.d, generator=gen, dtype=torch.float64)
    sr = R.runs.sr.copy()
    sr[0] = metrics.stable_rank(R.setup.omega * g * v).numpy()
    return ch.init_stable_rank_lower_bound(P, _with_history(R, stable_rank=sr))


# --- item 3 and Lemma E.11 ----------------------------------------------------------------------


def _rank_stays_at_init():
    # the stable rank keeps its initial value after step 1 (no rank-one step dominates)
    P, R = _copy()
    sr = R.runs.sr.copy()
    sr[1:] = sr[0]
    return ch.trajectory_stable_rank_bound(P, _with_history(R, stable_rank=sr))


def _untrained_margins():
    # an untrained network (W_t = W0): the margins at t >= 1 are those at initialization,
    # tiny and of both signs
    P, R = _copy()
    h = R.runs.history
    mm = h["min_margin"].copy()
    mm[1:] = h["margins"][0].min(axis=-1)
    assert (mm[1:, R.runs.main] < 0).any(), "the draw has no misclassified point at init"
    return ch.interpolates_from_step1(P, _with_history(R, min_margin=mm))


def _one_margin_falls():
    # one point pushed the wrong way: its margin falls between the last two recorded steps
    P, R = _copy()
    margins = R.runs.history["margins"].copy()
    b = int(np.flatnonzero(R.runs.main)[0])
    margins[-1, b, 0] = margins[-2, b, 0] - 1e-6
    return ch.margins_increase(P, _with_history(R, margins=margins))


def _loss_five_times_slower():
    # the loss after step 1 falls five times slower than measured: 1/L grows at about 0.8 of
    # the guaranteed rate kappa
    P, R = _copy()
    loss = R.runs.history["loss"].copy()
    t1 = int(np.flatnonzero(R.runs.steps == 1)[0])
    loss[t1 + 1 :] = loss[t1] + (loss[t1 + 1 :] - loss[t1]) / 5
    return ch.risk_rate_under_A1(P, _with_history(R, loss=loss))


# --- beyond (A1) --------------------------------------------------------------------------------


def _second_rung_bounces():
    # the ladder's second step ends above the first (a step so large that the loss bounces)
    P, R = _copy()
    loss = R.runs.history["loss"].copy()
    first, second = R.runs.ladder[:2]
    loss[-1, second] = 2 * loss[-1, first]
    return ch.larger_steps_smaller_loss(P, _with_history(R, loss=loss))


def _ladder_misclassifies():
    # a ladder run misclassifies a point at one recorded step after the first
    P, R = _copy()
    mm = R.runs.history["min_margin"].copy()
    mm[5, R.runs.ladder[0]] = -0.01
    return ch.ladder_interpolates(P, _with_history(R, min_margin=mm))


def _large_step_keeps_rank():
    # a larger step whose realized (A2) holds, yet whose stable rank returns to SR(0)
    P, R = _copy()
    sr = R.runs.sr.copy()
    b = R.runs.ladder[0]
    sr[1:, b] = sr[0, b]
    return ch.trajectory_bound_any_step(P, _with_history(R, stable_rank=sr))


# --- the initialization sweep -------------------------------------------------------------------


def _small_r_keeps_rank():
    # one step from r <= 1/2 leaves the stable rank at its initial value
    P, R = _copy()
    sw = R.sweep
    small = sw.r <= 0.5
    R.sweep = dataclasses.replace(sw, sr1=np.where(small, sw.sr0, sw.sr1))
    return ch.one_step_low_rank_below_half_step(P, R)


def _large_r_drops_to_one():
    # one step from r >= 2 brings the stable rank down to 1.05 (as if the step were larger)
    P, R = _copy()
    sw = R.sweep
    R.sweep = dataclasses.replace(sw, sr1=np.where(sw.r >= 2, 1.05, sw.sr1))
    return ch.one_step_keeps_rank_above_twice_step(P, R)


# --- the sizes ----------------------------------------------------------------------------------


def _size_with_rank_one_init():
    # at the size with the largest concentration bound, the initialization has rank one
    P, R = _copy()
    rows = R.sizes.rows.copy()
    rows.loc[rows["lower"].idxmax(), "SR(0)"] = 1.0
    R.sizes = dataclasses.replace(R.sizes, rows=rows)
    return ch.sweep_init_stable_rank_lower_bound(P, R)


def _size_trajectory_climbs():
    # at the widest size the larger step's trajectory climbs back to its initial stable rank
    P, R = _copy()
    rows = R.sizes.rows.copy()
    long = rows[rows.kind == "trajectory"]
    k = long["SR(0)"].idxmax()
    rows.loc[k, "max SR(t>=1)"] = rows.loc[k, "SR(0)"]
    assert rows.loc[k, "SR(0)"] > rows.loc[k, "C"], "SR(0) of the widest size is below C"
    R.sizes = dataclasses.replace(R.sizes, rows=rows)
    return ch.sweep_trajectory_bound(P, R)


CASES = {
    "init_spectral_norm_E1": Case(
        "W0 drawn at twice the recorded omega: ||W0||_2 about 1.7 times the bound",
        _init_twice_the_scale,
    ),
    "init_stable_rank_lower_bound": Case(
        "a rank-one initialization (every neuron a multiple of one row): SR(0) = 1",
        _rank_one_init,
    ),
    "trajectory_stable_rank_bound": Case(
        "the stable rank stays at its initial value (about 12) after step 1, above C",
        _rank_stays_at_init,
    ),
    "interpolates_from_step1": Case(
        "an untrained network: the margins at t >= 1 are the init's, of both signs",
        _untrained_margins,
    ),
    "margins_increase": Case(
        "one margin falls by 1e-6 between the last two recorded steps",
        _one_margin_falls,
    ),
    "risk_rate_under_A1": Case(
        "the loss falls five times slower than measured: 1/L grows at 0.8 of kappa",
        _loss_five_times_slower,
    ),
    "larger_steps_smaller_loss": Case(
        "the ladder's second step ends at twice the first step's loss",
        _second_rung_bounces,
    ),
    "ladder_interpolates": Case(
        "a ladder run misclassifies a point (margin -0.01) at a recorded step t >= 1",
        _ladder_misclassifies,
    ),
    "trajectory_bound_any_step": Case(
        "a larger step with realized (A2) whose stable rank returns to SR(0), above C",
        _large_step_keeps_rank,
    ),
    "one_step_low_rank_below_half_step": Case(
        "one step from r <= 1/2 leaves the stable rank at SR(0), about 12",
        _small_r_keeps_rank,
    ),
    "one_step_keeps_rank_above_twice_step": Case(
        "one step from r >= 2 brings the stable rank down to 1.05",
        _large_r_drops_to_one,
    ),
    "sweep_init_stable_rank_lower_bound": Case(
        "a size whose initialization has rank one: SR(0) = 1 below its lower bound",
        _size_with_rank_one_init,
    ),
    "sweep_trajectory_bound": Case(
        "the widest size's larger step climbs back to its SR(0), above that size's C",
        _size_trajectory_climbs,
    ),
}
