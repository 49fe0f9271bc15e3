"""Failing cases of ``twolayer.paper_b.chapters.frozen``."""

from __future__ import annotations

import numpy as np

from failing_cases import Case
from twolayer.paper_b.chapters import frozen

CHAPTER = "paper_b/frozen"


def _stalled_algorithm1():
    """Algorithm 1 stalls above the widest frozen model (its loss after the last epoch,
    3e-4, is above the frozen model's 1e-4), with every hypothesis holding."""
    P = frozen.SPEC.params("smoke")
    R = frozen.Result(
        teacher=None,
        frozen_rows=[],
        widths=np.array([8.0, 32.0, 128.0]),
        frozen_losses=np.array([1e-2, 1e-3, 1e-4]),
        algorithm1_losses=np.array([1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 3e-4]),
        lam_k=P.lam0 / 2.0 ** np.arange(P.epochs),
        nearest_stage1=np.array([0.1, 0.1, 0.1]),
        pilot_losses=np.array([1e-2, 1e-4, 2e-5, 5e-6, 1e-6, 3e-7]),
    )
    return frozen.algorithm1_beats_widest_frozen(P, R, applies=True)


CASES = {
    "algorithm1_beats_widest_frozen": Case(
        "Algorithm 1's final loss is 3 times the widest frozen model's", _stalled_algorithm1
    ),
}
