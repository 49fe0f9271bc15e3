"""The exercises of ``notebooks/paper_a/real_images.md``."""

from __future__ import annotations

from twolayer.paper_a.chapters import real_images as ri

from . import Asserted, NotAsserted

CHAPTER = "paper_a/real_images"


def _min_sr(R, scale: float) -> float:
    """The smallest stable rank of the run at ``scale``."""
    return float(R.min_stable_ranks[R.init_scales.index(scale)])


def _scale_check(P, R) -> bool:
    pair = R.ratio  # min SR of Glorot's over that of small_scale (0.2)
    paper_pair = _min_sr(R, 1.0) / _min_sr(R, 0.02)
    between = _min_sr(R, 0.02) < _min_sr(R, 0.2) < _min_sr(R, 1.0)
    not_held = ri.small_init_min_rank_far_below_default(P, R).outcome() is None
    return pair < paper_pair and between and not_held


def _multiclass_check(P, R) -> bool:
    small, default = R.row_small["min_stable_rank"], R.row_def["min_stable_rank"]
    not_held = ri.small_init_min_rank_far_below_default(P, R).outcome() is None
    return small >= 1.5 and small < default and not_held


EXERCISES = {
    "ex-real-images-rise": NotAsserted(
        "five runs of the book profile (30 000 steps each, a minute or two apiece); the "
        "smoke profile's 1 000 steps end before any rise"
    ),
    "ex-real-images-scale": Asserted(
        params={"small_scale": 0.2},
        says="the ratio of the smallest stable ranks for the pair (0.2, 1) is below the "
        "paper's pair's (1/50, 1), the smallest rank at 0.2 lies between those of 0.02 and 1, "
        "and the profile's min_rank_ratio is not applied to this pair",
        check=_scale_check,
    ),
    "ex-real-images-multiclass": Asserted(
        params={"loss": "cross_entropy"},
        says="the small initialization's smallest stable rank stays at 1.5 or more, below the "
        "default's, and the two-class min_rank_ratio is not applied",
        check=_multiclass_check,
    ),
}
