"""Log-log slopes and their bootstrap spread (twolayer.paper_b.fits)."""

import numpy as np
import pytest

from twolayer.paper_b import fits


def test_loglog_slope_exact_power_and_rejects_non_positive():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    assert fits.loglog_slope(x, 3 * x**-1.5) == pytest.approx(-1.5)
    with pytest.raises(ValueError):
        fits.loglog_slope(x, [1.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        fits.loglog_slope([1.0], [1.0])


def test_bootstrap_spread_shrinks_with_repetitions_and_covers_truth():
    rng = np.random.default_rng(0)
    x = np.array([10.0, 20.0, 40.0, 80.0])

    def est(reps):
        Y = x[:, None] ** -1.0 * np.exp(0.1 * rng.standard_normal((4, reps)))
        return fits.bootstrap(lambda Y: fits.loglog_slope(x, Y.mean(-1)), [Y], seed=1)

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
