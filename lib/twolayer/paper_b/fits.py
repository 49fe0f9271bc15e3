"""The spread of a statistic over repetitions, for the Paper B chapters' observations.

A page that asserts a rate (``zeta = O(eps0)``, ``error ~ d / sqrt(n)``, coverage
``~ m^{-1/(r-1)}``) fits a slope on log-log axes (:func:`twolayer.core.stats.fit_slope`) and
derives its margin from the spread over the page's own repetitions (seeds, teachers, sample
draws): :func:`bootstrap` resamples the repetitions (the last axis of every array, with one
shared index) and recomputes the statistic.
Used in {ref}`chapter-paperb-stage1`, {ref}`chapter-paperb-stage2` and
{ref}`chapter-paperb-samples`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Estimate:
    """A statistic, its bootstrap standard error and 95% percentile interval."""

    value: float
    se: float
    lo: float
    hi: float
    reps: int

    def covers(self, target: float, width: float) -> bool:
        return abs(self.value - target) <= width


def bootstrap(stat, arrays, n_boot: int = 400, seed: int = 0) -> Estimate:
    """``stat(*arrays)`` and its spread when the repetitions (the last axis, shared by every
    array) are resampled with replacement ``n_boot`` times. A resample on which ``stat``
    raises ``ValueError`` (e.g. a non-positive value in a log) is skipped; with one
    repetition the standard error is infinite (nothing to resample)."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    reps = arrays[0].shape[-1]
    if any(a.shape[-1] != reps for a in arrays):
        raise ValueError("every array needs the same number of repetitions (last axis)")
    value = float(stat(*arrays))
    if reps < 2:
        return Estimate(value, float("inf"), -float("inf"), float("inf"), reps)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_boot):
        idx = rng.integers(0, reps, reps)
        try:
            out.append(float(stat(*(a[..., idx] for a in arrays))))
        except ValueError:
            continue
    out = np.asarray(out)
    out = out[np.isfinite(out)]
    if out.size < n_boot // 2:
        return Estimate(value, float("inf"), -float("inf"), float("inf"), reps)
    return Estimate(
        value,
        float(out.std(ddof=1)),
        float(np.percentile(out, 2.5)),
        float(np.percentile(out, 97.5)),
        reps,
    )
