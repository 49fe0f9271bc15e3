"""Failing cases of the Figure 1 chapter: a hand-made :class:`~twolayer.paper_a.chapters.
figure1.Result` (:func:`planted`) in which one of the paper's (or the book's) trends goes the
other way, as a real run would record it if the statement failed; the chapter's own check
function must decide it and return ``False``."""

from __future__ import annotations

import numpy as np

from twolayer.paper_a.chapters import figure1 as chapter

from . import Case

CHAPTER = "paper_a/figure1"


def planted(
    P,
    *,
    left_slopes=None,
    right_slope: float = 0.4,
    row_slope: dict | None = None,
    glorot_slope: float = 0.15,
    slow_decay: bool = False,
    acc_small_minus_glorot: float = 0.0,
    acc_fall: float = 0.05,
) -> chapter.Result:
    """A Result for parameters ``P`` whose relative minima follow power laws: the left panel
    ``min SR / SR(0) = 0.5 (d / d_0)^slope`` with one slope per run (``left_slopes``, default
    -0.15 with a small spread), the grid ``0.9 scale^right_slope`` (``row_slope[d]`` overrides a
    row) times ``(d / d_0)^glorot_slope`` in Glorot's column; the right panel's curves reach
    their minimum at step 1 (or, ``slow_decay``, linearly over the whole run); the smallest
    scale's test accuracy is Glorot's plus ``acc_small_minus_glorot`` and falls by ``acc_fall``
    from the smallest to the largest d."""
    K = P.num_seeds
    scales, dims, gd = chapter.scales_of(P), list(P.dims), chapter.grid_dims_of(P)
    S, D, G = len(scales), len(dims), len(gd)
    steps = np.unique(np.geomspace(1, P.steps, 12).round().astype(int))
    steps = np.concatenate([[0], steps])
    T = len(steps)
    jitter = 1 + 0.01 * np.arange(K)  # runs differ a little: the intervals have a width
    if left_slopes is None:
        left_slopes = [-0.15 - 0.005 * k for k in range(K)]
    left_rel = np.array([[0.5 * (d / dims[0]) ** s for s in left_slopes] for d in dims])
    grid_rel = np.empty((G, S, K))
    for i, d in enumerate(gd):
        for j, sc in enumerate(scales):
            slope = (row_slope or {}).get(d, right_slope)
            v = 0.9 * sc**slope
            if sc == 1.0:
                v *= (d / gd[0]) ** glorot_slope
            grid_rel[i, j] = np.minimum(v * jitter, 1.0)
    t = steps / steps[-1]
    curve = np.where(
        steps[None, None, None, :] == 0,
        1.0,
        (1 - (1 - grid_rel[..., None]) * t) if slow_decay else grid_rel[..., None] + 0 * t,
    )
    if slow_decay:  # the minimum is reached at the end
        grid_rel = curve[..., -1]
    acc = np.empty((G, S, K))
    for i in range(G):
        base = 0.85 - acc_fall * i / max(G - 1, 1)
        for j in range(S):
            acc[i, j] = (
                base + (acc_small_minus_glorot if j == S - 1 else 0.0) + 0.002 * np.arange(K)
            )
    ones = np.ones((G, S, K, T))
    return chapter.Result(
        run_seeds=list(range(K)),
        scales=scales,
        dims=dims,
        grid_dims=gd,
        steps=steps,
        left_stable_rank=np.concatenate(
            [np.ones((D, K, 1)), np.repeat(left_rel[..., None], T - 1, axis=-1)], axis=-1
        ),
        left_loss=np.full((D, K, T), 0.5),
        left_relative_min=left_rel,
        grid_stable_rank=curve,
        grid_loss=0.5 * ones,
        grid_test_accuracy_curve=acc[..., None] * ones,
        grid_relative_min=grid_rel,
        grid_test_accuracy=acc,
        grid_train_accuracy=np.ones((G, S, K)),
        configs_total=K * (D + G * S),
        configs_computed=K * (D + G * S),
    )


SMOKE = chapter.SPEC.params("smoke")
BOOK = chapter.SPEC.params("book")

CASES = {
    "left_faster_in_higher_dimension": Case(
        "every run's relative minimum rises with d (slopes +0.10 to +0.11, resolved)",
        lambda: chapter.left_faster_in_higher_dimension(
            SMOKE, planted(SMOKE, left_slopes=[0.10, 0.105, 0.11])
        ),
    ),
    "right_faster_with_smaller_init": Case(
        "at d_right a smaller scale ends at a higher relative rank (slope -0.3 vs log scale)",
        lambda: chapter.right_faster_with_smaller_init(
            SMOKE, planted(SMOKE, row_slope={SMOKE.d_right: -0.3})
        ),
    ),
    "min_rank_increases_with_init": Case(
        "one row of the heat map (the smallest d) falls with the scale",
        lambda: chapter.min_rank_increases_with_init(
            SMOKE, planted(SMOKE, row_slope={SMOKE.dims[0]: -0.2})
        ),
    ),
    "glorot_scale_reverses_d_trend": Case(
        "book-size runs at step 0.16 whose Glorot column falls with d (slope -0.04)",
        lambda: chapter.glorot_scale_reverses_d_trend(BOOK, planted(BOOK, glorot_slope=-0.04)),
    ),
    "init_scale_beats_training_longer": Case(
        "the rank decays linearly over the run: the smaller scale at T/10 is still above the "
        "larger one at T",
        lambda: chapter.init_scale_beats_training_longer(SMOKE, planted(SMOKE, slow_decay=True)),
    ),
    "small_init_accuracy_not_worse": Case(
        "the smallest scale's networks are 0.1 less accurate than Glorot's at every d",
        lambda: chapter.small_init_accuracy_not_worse(
            BOOK, planted(BOOK, acc_small_minus_glorot=-0.1)
        ),
    ),
    "accuracy_falls_with_d": Case(
        "the test accuracy rises by 0.05 from the smallest to the largest d",
        lambda: chapter.accuracy_falls_with_d(BOOK, planted(BOOK, acc_fall=-0.05)),
    ),
}
