"""Failing cases of ``twolayer.paper_b.chapters.stage1``: the step study at a tiny size with
the step changed as a wrong statement would have it, and net studies where the coverage
stalls, refines, or does not depend on ``r``."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from failing_cases import Case
from twolayer.core import seeds
from twolayer.page.checks import make_hypothesis
from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import early_stages as es
from twolayer.paper_b import fits
from twolayer.paper_b.chapters import stage1

CHAPTER = "paper_b/stage1"

TINY = dict(ds=[10, 20, 40], m_sweep_d=200, rs=[2], d_net=8, ms=[8, 32, 128], net_seeds=4)


@functools.cache
def _step():
    """The step study at a tiny size, with its (holding) assumptions."""
    P = stage1.SPEC.params("smoke", **TINY)
    T = stage1.make_teachers(P)
    return P, T, stage1.step_study(P, T), stage1.assumptions(T)


def _with_columns(S, columns: dict):
    """``S`` with some columns of its sweep replaced."""
    sweep = S.sweep.copy()
    for name, values in columns.items():
        sweep[name] = values
    return dataclasses.replace(S, sweep=sweep)


def _step_without_factor_2():
    """The proof of Lemma 3 writes ``w_i^(1)`` without the factor 2 of loss (2): every
    ``||w^(1)||`` halves (and so do its medians and their standard errors)."""
    P, _, S, asm = _step()
    S = _with_columns(
        S,
        {
            "median norm": S.sweep["median norm"] / 2,
            "se median norm": S.sweep["se median norm"] / 2,
        },
    )
    return stage1.w1_norm_matches_limit(P, S, asm)


def _untrained_off_subspace():
    """An untrained network (``w^(1) = w^(0)``, no step): the fraction of a neuron's norm
    outside ``S_*`` stays near ``sqrt(1 - r/d)``, not ``c / sqrt(d)``."""
    P, T, S, asm = _step()
    m = S.m
    off, se = [], []
    for d, t in zip(P.ds, T.dimension):
        net0 = alg.symmetric_init(d, m, seeds.derive(P.seed, "init", d))
        g = es.first_step_geometry(net0, net0, t)["off"][: m // 2]
        off.append(float(np.median(g)) * math.sqrt(d))
        se.append(es.median_se(g, seed=d) * math.sqrt(d))
    S = _with_columns(S, {"sqrt(d) median off": off, "se sqrt(d) median off": se})
    return stage1.off_subspace_matches_limit(P, S, asm)


def _printed_form_as_the_step():
    """The step as Lemma C.1 prints it (``-2 a sigma_2^2 H wbar``): its median relative
    distance to the corrected form is 3/2 at every ``d`` instead of ``c / sqrt(d)``."""
    P, _, S, asm = _step()
    S = _with_columns(S, {"median err corrected": S.sweep["median err printed"]})
    return stage1.lemma_c1_corrected_error_rate(P, S, asm)


def _net(teacher: str):
    P = stage1.SPEC.params("smoke", teacher=teacher, r=2, **TINY)
    return P, stage1.net_study(P, stage1.make_teachers(P))


def _stalled_net_with_assumption_3_forced():
    """Degenerate teachers (rank H = r - 1): the coverage stays near 1 rad (slope a few
    hundredths), with Assumption 3 forced to hold."""
    P, N = _net("degenerate")
    forced = make_hypothesis("assumption_3", True, title="Assumption 3 (forced)")
    return stage1.epsilon_net_refines_with_m(P, N, forced)


def _refining_net_with_assumption_3_forced_off():
    """Random teachers, where the coverage refines at about ``m^{-1/(r-1)}``, with
    Assumption 3 forced to fail: the check that the net stalls must fail."""
    P, N = _net("random")
    forced = make_hypothesis("assumption_3", False, title="Assumption 3 (forced off)")
    return stage1.epsilon_net_stalls_without_assumption_3(P, N, forced)


def _equal_slopes_for_r2_and_r3():
    """The coverage falls like ``m^{-1/2}`` for both ``r = 2`` and ``r = 3`` (standard
    errors 0.02): the width needed would not grow with ``r``."""
    P = stage1.SPEC.params("smoke")
    est = fits.Estimate(value=-0.5, se=0.02, lo=-0.54, hi=-0.46, reps=P.net_seeds)
    cov = np.full((len(P.ms), P.net_seeds), 0.3)
    N = stage1.NetStudy(
        m=np.array(P.ms, dtype=float),
        coverage_in={2: cov, 3: cov},
        coverage_full={2: cov, 3: cov},
        slope={2: est, 3: est},
    )
    holds = make_hypothesis("assumption_3", True, title="Assumption 3")
    return stage1.epsilon_net_width_grows_with_r(P, N, holds)


CASES = {
    "w1_norm_matches_limit": Case(
        "the step without loss (2)'s factor 2: every norm halves", _step_without_factor_2
    ),
    "off_subspace_matches_limit": Case(
        "an untrained network: the neurons stay outside S_*", _untrained_off_subspace
    ),
    "lemma_c1_corrected_error_rate": Case(
        "the printed -2 a sigma_2^2 H wbar as the step: relative error 3/2, not c/sqrt(d)",
        _printed_form_as_the_step,
    ),
    "epsilon_net_refines_with_m": Case(
        "degenerate teachers (the net stalls) with Assumption 3 forced",
        _stalled_net_with_assumption_3_forced,
    ),
    "epsilon_net_stalls_without_assumption_3": Case(
        "random teachers (the net refines) with Assumption 3 forced to fail",
        _refining_net_with_assumption_3_forced_off,
    ),
    "epsilon_net_width_grows_with_r": Case(
        "equal slopes for r = 2 and r = 3", _equal_slopes_for_r2_and_r3
    ),
}
