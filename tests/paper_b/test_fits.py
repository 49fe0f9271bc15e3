"""The bootstrap spread of a statistic over repetitions (twolayer.paper_b.fits); the log-log
slope it is used with is tested in tests/core/test_stats.py."""

import numpy as np
import pytest

from twolayer.core import stats
from twolayer.paper_b import fits


def test_bootstrap_spread_shrinks_with_repetitions_and_covers_truth():
    rng = np.random.default_rng(0)
    x = np.array([10.0, 20.0, 40.0, 80.0])

    def est(reps):
        Y = x[:, None] ** -1.0 * np.exp(0.1 * rng.standard_normal((4, reps)))
        return fits.bootstrap(lambda Y: stats.fit_slope(x, Y.mean(-1)), [Y], seed=1)

    few, many = est(4), est(64)
    assert many.se < few.se
    assert many.covers(-1.0, 4 * many.se)
    # a wrong exponent is not covered
    assert not many.covers(-1.7, 4 * many.se)


def test_bootstrap_single_repetition_has_infinite_spread():
    e = fits.bootstrap(lambda Y: float(Y.mean()), [np.ones((3, 1))])
    assert e.value == 1.0 and e.se == float("inf")
    with pytest.raises(ValueError):
        fits.bootstrap(lambda A, B: 0.0, [np.ones((2, 3)), np.ones((2, 4))])
