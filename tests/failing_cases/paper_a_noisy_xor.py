"""Failing cases of the noisy-XOR chapter: hand-made runs (:func:`planted`), as the page's
sweep would record them if a statement failed, summarized by the page's own statistics and
checked by the chapter's own check functions, which must return ``False``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from twolayer.core import stats
from twolayer.paper_a import xor
from twolayer.paper_a.chapters import noisy_xor as chapter

from . import Case

CHAPTER = "paper_a/noisy_xor"


def planted(
    P,
    *,
    held_loss_ratio: float = 1e-6,
    held_disagreement: float = 0.0,
    held_error: float = 0.5,
    low_d_error: float = 0.5,
    control_error: float = 0.2,
) -> chapter.Result:
    """Runs on ``P``'s grid where only the largest ``d`` satisfies the assumption (``n /
    n_max = 0.5`` there, 3 below): the runs under the assumption end with ``loss_ratio =
    held_loss_ratio``, a boundary that disagrees with the linear rule on a fraction
    ``held_disagreement`` of the test points and test error ``held_error``; below the
    assumption the error is ``low_d_error`` at every ``d`` but the smallest (0.25); the control's
    error is ``control_error``. Errors get a small spread over the seeds (the intervals have a
    width)."""
    rows, d_max = [], max(P.dims)
    jitter = 0.004 * (np.arange(P.seeds) - (P.seeds - 1) / 2)
    for s in P.init_scales:
        for d in P.dims:
            held = d == d_max
            for k in range(P.seeds):
                err = held_error if held else (0.25 if d == P.dims[0] else low_d_error)
                rows.append(
                    {
                        "d": d,
                        "seed": k,
                        "init_scale": float(s),
                        "ratio": 0.5 if held else 3.0,
                        "holds": held,
                        "train_error": 0.0,
                        "test_error": err + jitter[k],
                        "linear_agreement": 1 - held_disagreement if held else 0.6,
                        "loss_ratio": held_loss_ratio if held else 2.0,
                        "steps": P.steps,
                    }
                )
    runs = pd.DataFrame(rows)
    table = xor.summarize(runs, P.conf, P.n_test, P.seeds)
    low = pd.DataFrame(
        [
            {"init_scale": float(s), "test_error": control_error + jitter[k]}
            for s in P.init_scales
            for k in range(P.seeds)
        ]
    )
    low_table = pd.DataFrame(
        [
            dict(zip(("init", "error", "ci_low", "ci_high"), (s, *stats.t_interval(g.test_error))))
            for s, g in low.groupby("init_scale")
        ]
    )
    return chapter.Result(runs, table, low, low_table)


SMOKE = chapter.SPEC.params("smoke")

CASES = {
    "high_dim_loss_below_log2_over_n": Case(
        "the runs under the assumption end with n L / log 2 = 1.5: a training point is still "
        "misclassified (training stopped too early)",
        lambda: chapter.high_dim_loss_below_log2_over_n(SMOKE, planted(SMOKE, held_loss_ratio=1.5)),
    ),
    "high_dim_boundary_linear": Case(
        "under the assumption the boundary disagrees with sign<z, x> on twice tol of the "
        "test points (not linear)",
        lambda: chapter.high_dim_boundary_linear(
            SMOKE, planted(SMOKE, held_disagreement=2 * SMOKE.tol)
        ),
    ),
    "high_dim_error_is_half": Case(
        "under the assumption the networks learned XOR: test error 0.3",
        lambda: chapter.high_dim_error_is_half(SMOKE, planted(SMOKE, held_error=0.3)),
    ),
    "low_dim_learns_xor": Case(
        "the low-dimensional control stays at chance (test error 1/2)",
        lambda: chapter.low_dim_learns_xor(SMOKE, planted(SMOKE, control_error=0.5)),
    ),
    "error_at_chance_before_assumption": Case(
        "below the assumption the error stays at 0.3 at every d: chance only where the "
        "assumption holds (factor 1)",
        lambda: chapter.error_at_chance_before_assumption(SMOKE, planted(SMOKE, low_d_error=0.3)),
    ),
}
