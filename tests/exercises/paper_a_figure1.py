"""The exercises of ``notebooks/paper_a/figure1.md``."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from twolayer.paper_a import rankdecay
from twolayer.paper_a.chapters import figure1

from . import Asserted

CHAPTER = "paper_a/figure1"


def _left_panel(P):
    """The left panel's runs only (``dims`` at ``left_scale`` and ``left_lr``), as
    :func:`~figure1.compute` runs them: the check of the left panel reads nothing else (the
    grid of the heat maps, 27 runs at the smoke profile, is not run)."""
    left = figure1.configs(P).left
    results, _ = rankdecay.compute([c for row in left for c in row], progress=False)
    by_key = {rankdecay.store_key(c): metrics for c, _, metrics in results}
    rel = [[by_key[rankdecay.store_key(c)]["relative_min"] for c in row] for row in left]
    return SimpleNamespace(left_relative_min=np.asarray(rel, dtype=float))


def _reversal_check(P, R) -> bool:
    slope = figure1.trend_left(P, R)["slope"]
    return (
        not figure1.hyp_small_left_init(P).holds
        and figure1.left_faster_in_higher_dimension(P, R).outcome() is None
        and bool(np.isfinite(slope))  # still measured
    )


def _seeds_check(P, R) -> bool:
    observations = [f(P, R) for f in figure1.CHECKS if f(P, R).kind == "observation"]
    return (
        len(observations) > 0
        and all(c.outcome() is None for c in observations)
        and figure1.accuracy_below_bayes(P, R).outcome() is True
    )


EXERCISES = {
    "ex-figure1-reversal": Asserted(
        params={"left_scale": 1.0},
        says="left_faster_in_higher_dimension is not applicable at Glorot's scale, and the "
        "left panel's slope is still measured",
        check=_reversal_check,
        run=_left_panel,
    ),
    "ex-figure1-seeds": Asserted(
        params={"num_seeds": 2, "dims": [50, 200], "d_right": 200},
        says="with two runs every observation is not applicable and the sanity check against "
        "the Bayes accuracy applies and passes",
        check=_seeds_check,
    ),
}
