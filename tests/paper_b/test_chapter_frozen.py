"""``twolayer.paper_b.chapters.frozen``: its parameters, the page's parameters cell, what the
page states about its setup recomputed from what ran, and the gates of its comparison."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from twolayer.core.params import ParameterError
from twolayer.paper_b import population as pop
from twolayer.paper_b.chapters import frozen

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "name, value, words",
    [
        ("m_alg", 31, "m_alg"),  # odd: the symmetric initialization needs pairs
        ("ms_frozen", [8, 30, 20], "ms_frozen"),  # not increasing
        ("d", 2, "d"),  # must exceed r
        ("lam0", 0.0, "lam0"),
        ("m_star", 9, "m_star"),
        ("epochs", 0, "epochs"),
    ],
)
def test_a_bad_parameter_stops_naming_it(name, value, words):
    with pytest.raises(ParameterError, match=words):
        frozen.SPEC.params("smoke", **{name: value})


def test_unknown_parameter_is_named():
    with pytest.raises(ParameterError, match="'widht'"):
        frozen.SPEC.params("smoke", widht=3)


@pytest.fixture(scope="module")
def run():
    P = frozen.SPEC.params("smoke", d=8, ms_frozen=[4, 8, 16], m_alg=8, epochs=3, steps=20)
    return P, frozen.compute(P)


def test_setup_as_the_page_states_it(run):
    P, R = run
    # the widths, the schedule lambda_k = lambda_0 / 2^k, one loss per epoch after Stage 2
    assert R.widths.tolist() == [4.0, 8.0, 16.0]
    assert R.lam_k.tolist() == [0.02, 0.01, 0.005]
    assert len(R.algorithm1_losses) == len(R.pilot_losses) == P.epochs + 1
    # the teacher: r-dimensional, r + 1 unit neurons (the page's m_* default)
    assert R.teacher.W.shape == (P.r + 1, P.d)
    assert np.allclose(np.linalg.norm(R.teacher.W, axis=1), 1.0)
    assert np.linalg.matrix_rank(R.teacher.W) == P.r
    # the frozen loss is the minimum over the output layer on Stage 1's features: no other
    # output layer on the same features does better (checked on 200 random ones)
    from twolayer.core import seeds
    from twolayer.paper_b import algorithm1 as alg
    from twolayer.paper_b import random_features as rf

    full0 = alg.symmetric_init(P.d, 16, seeds.derive(P.seed, "init"))
    W1 = alg.stage1(rf.nested(full0, 4), R.teacher).W
    rng = np.random.default_rng(0)
    best = min(pop.loss(pop.Net(rng.normal(size=4) * 0.3, W1), R.teacher) for _ in range(200))
    assert R.frozen_losses[0] <= best
    assert np.all(R.frozen_losses >= 0) and np.all(np.diff(R.frozen_losses) <= 1e-10)


def test_the_pilot_is_another_initialization(run):
    """The gate's prediction comes from a run other than the one it gates."""
    P, R = run
    assert not np.array_equal(R.pilot_losses, R.algorithm1_losses)
    c = float((R.pilot_losses[1:-1] / R.lam_k[:-1] ** 2).max())
    assert frozen.predicted_final_loss(P, R) == pytest.approx(c * (0.02 / 4) ** 2)


def test_a_stalled_run_is_judged_not_excused(run):
    """A run whose own losses stall does not turn the gate off: only the pilot sets it."""
    P, R = run
    import dataclasses

    stalled = dataclasses.replace(R, algorithm1_losses=np.full_like(R.algorithm1_losses, 1.0))
    assert frozen.stage3_long_enough(P, stalled).holds == frozen.stage3_long_enough(P, R).holds


def test_one_epoch_has_no_prediction():
    P = frozen.SPEC.params("smoke", epochs=1)
    R = frozen.Result(None, [], np.array([8.0]), np.array([1.0]), np.zeros(2), np.array([0.02]),
                      np.zeros(1), np.zeros(2))  # fmt: skip
    assert math.isinf(frozen.predicted_final_loss(P, R))
    assert frozen.stage3_long_enough(P, R).holds is False
