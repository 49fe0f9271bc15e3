"""Tests of twolayer.core.stats: the Student-t interval and the least-squares slope, against
quantiles from a table and from a closed form, scipy's own interval, hand-computed least
squares and the sampling law of the slope."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats as sps

from twolayer.core import stats

# --- t_interval ----------------------------------------------------------------------------------


def test_t_interval_three_values_by_table():
    # mean 2, s = 1; two degrees of freedom have the closed-form quantile
    # t_p = (2p - 1) / sqrt(2 p (1 - p)): t_{0.975, 2} = 4.3026527... (a t table gives 4.303).
    # scipy's quantile is accurate to about 1e-10 relative.
    t975 = 0.95 / math.sqrt(2 * 0.975 * 0.025)
    assert t975 == pytest.approx(4.303, abs=5e-4)
    mean, lo, hi = stats.t_interval([1.0, 2.0, 3.0])
    half = t975 * 1.0 / math.sqrt(3)
    assert mean == 2.0
    assert lo == pytest.approx(2 - half, rel=1e-9) and hi == pytest.approx(2 + half, rel=1e-9)
    # the level is the second argument (noisy_xor's conf): t_{0.95, 2} = 2.920 by the table
    mean, lo, hi = stats.t_interval([1.0, 2.0, 3.0], 0.9)
    t95 = 0.9 / math.sqrt(2 * 0.95 * 0.05)
    assert t95 == pytest.approx(2.920, abs=5e-4)
    assert hi - mean == pytest.approx(t95 / math.sqrt(3), rel=1e-9)


def test_t_interval_two_values_is_cauchy():
    # one degree of freedom: Student's t is the Cauchy law, quantile tan(pi (p - 1/2)); with
    # two values s / sqrt(2) = |a - b| / 2
    for level in (0.5, 0.9, 0.95, 0.99):
        q = math.tan(math.pi * level / 2)
        mean, lo, hi = stats.t_interval([3.0, 7.0], level)
        assert mean == 5.0
        assert hi == pytest.approx(5 + q * 2.0, rel=1e-12)
        assert lo == pytest.approx(5 - q * 2.0, rel=1e-12)


@pytest.mark.parametrize("level", [0.5, 0.8, 0.95, 0.999])
def test_t_interval_agrees_with_scipy_interval(level):
    v = np.random.default_rng(3).normal(1.5, 0.7, 9)
    expected = sps.t.interval(level, len(v) - 1, loc=v.mean(), scale=sps.sem(v))
    mean, lo, hi = stats.t_interval(v, level)
    assert mean == pytest.approx(float(np.mean(v)), rel=1e-15)
    assert (lo, hi) == pytest.approx(expected, rel=1e-13)


def test_t_interval_reads_values_flat_and_single_value_has_no_interval():
    a = stats.t_interval([[1.0, 2.0], [4.0, 7.0]])
    assert a == stats.t_interval([1.0, 2.0, 4.0, 7.0])
    mean, lo, hi = stats.t_interval([5.0])
    assert mean == 5.0 and math.isnan(lo) and math.isnan(hi)


def test_t_interval_reads_single_precision_values_in_double():
    """float32 values (a GPU run's errors) are read in float64: the mean of (1, 1, 2) is 4/3 to
    double precision, not float32's nearest value 1.33333337 (8e-8 away). The float32 inputs
    are exact integers, so only the arithmetic's precision is tested."""
    mean, lo, hi = stats.t_interval(np.array([1.0, 1.0, 2.0], dtype=np.float32))
    assert isinstance(mean, float)
    assert mean == pytest.approx(4 / 3, rel=1e-15)
    # s^2 = ((1/3)^2 * 2 + (2/3)^2) / 2 = 1/3; the half-width is t_{0.975, 2} s / sqrt(3)
    t975 = 0.95 / math.sqrt(2 * 0.975 * 0.025)
    assert hi - mean == pytest.approx(t975 * math.sqrt(1 / 3) / math.sqrt(3), rel=1e-12)


def test_t_interval_rejects_no_values_and_a_bad_level():
    msg = "t_interval needs at least one value, got none"
    with pytest.raises(ValueError, match=rf"^{re.escape(msg)}$"):
        stats.t_interval([])
    for level in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="level must lie in"):
            stats.t_interval([1.0, 2.0], level)


# --- fit_slope ----------------------------------------------------------------------------------


def test_fit_slope_exact_power_laws():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    assert stats.fit_slope(x, 3 * x**-1.5) == pytest.approx(-1.5, rel=1e-13)
    x = np.geomspace(1, 100, 7)
    slope, se = stats.fit_slope(x, 3 * x**1.7, stderr=True)
    assert slope == pytest.approx(1.7, rel=1e-13) and se < 1e-10
    assert isinstance(slope, float) and isinstance(se, float)


def test_fit_slope_by_hand():
    # x = 0..3, y = (1, 3, 2, 5): S_xx = 5, S_xy = 5.5, slope 1.1, intercept 1.1, residuals
    # (-0.1, 0.8, -1.3, 0.6), SSR = 2.7, SE^2 = 2.7 / 2 / 5 = 0.27
    x, y = np.arange(4.0), np.array([1.0, 3.0, 2.0, 5.0])
    slope, se = stats.fit_slope(x, y, axes="linear", stderr=True)
    assert slope == pytest.approx(1.1, rel=1e-14)
    assert se == pytest.approx(math.sqrt(0.27), rel=1e-14)
    # the same points on log-log axes: x = e^(0..3), y = e^(1, 3, 2, 5)
    slope, se = stats.fit_slope(np.exp(x), np.exp(y), stderr=True)
    assert slope == pytest.approx(1.1, rel=1e-13)
    assert se == pytest.approx(math.sqrt(0.27), rel=1e-13)
    # linear axes accept negative values
    assert stats.fit_slope(x, -y, axes="linear") == pytest.approx(-1.1, rel=1e-14)


def test_fit_slope_standard_error_is_the_sampling_spread():
    # y = 2 + 0.5 x + N(0, sigma^2): the slope's standard deviation is sigma / sqrt(S_xx), and
    # SE^2 is an unbiased estimate of its square
    rng = np.random.default_rng(0)
    x, sigma = np.linspace(0.0, 3.0, 8), 0.3
    sxx = float(((x - x.mean()) ** 2).sum())
    Y = 2 + 0.5 * x + sigma * rng.standard_normal((4000, x.size))
    slopes, ses = stats.fit_slope(x, Y, axes="linear", stderr=True)
    assert slopes.shape == ses.shape == (4000,)
    assert np.mean(slopes) == pytest.approx(0.5, abs=4 * sigma / math.sqrt(sxx * 4000))
    assert np.std(slopes) == pytest.approx(sigma / math.sqrt(sxx), rel=0.05)
    assert np.mean(ses**2) == pytest.approx(sigma**2 / sxx, rel=0.05)


def test_fit_slope_one_row_per_seed():
    x = np.array([10.0, 100.0, 1000.0])
    Y = np.array([2 * x**-0.3, 3 * x**0.5, 5 * x**-1.0])
    np.testing.assert_allclose(stats.fit_slope(x, Y), [-0.3, 0.5, -1.0], rtol=1e-13)
    # each row is the fit of that row alone; a nan spoils its own row only
    noisy = Y * np.exp(0.1 * np.random.default_rng(1).standard_normal(Y.shape))
    slopes, ses = stats.fit_slope(x, noisy, stderr=True)
    for row, s, e in zip(noisy, slopes, ses, strict=True):
        s1, e1 = stats.fit_slope(x, row, stderr=True)
        assert s == pytest.approx(s1, rel=1e-12) and e == pytest.approx(e1, rel=1e-12)
    noisy[1, 2] = np.nan
    out = stats.fit_slope(x, noisy)
    assert math.isnan(out[1]) and np.isfinite(out[[0, 2]]).all()


def test_fit_slope_two_points_have_no_standard_error():
    slope, se = stats.fit_slope([1.0, 2.0], [1.0, 2.0], stderr=True)
    assert slope == pytest.approx(1.0, rel=1e-14) and math.isnan(se)
    # three rows of two points: one slope (through both points) and one nan per row
    slopes, ses = stats.fit_slope([1.0, 2.0], [[1.0, 2.0], [1.0, 4.0], [8.0, 1.0]], stderr=True)
    np.testing.assert_allclose(slopes, [1.0, 2.0, -3.0], rtol=1e-14)
    assert isinstance(ses, np.ndarray) and ses.shape == (3,) and np.isnan(ses).all()


@pytest.mark.parametrize(
    ("x", "y", "kw", "message"),
    [
        ([1.0, 2.0, 4.0, 8.0], [1.0, 0.0, 1.0, 1.0], {}, "positive"),
        ([1.0, -2.0, 4.0], [1.0, 2.0, 3.0], {}, "positive"),
        ([1.0], [1.0], {}, "at least two points"),
        ([2.0, 2.0, 2.0], [1.0, 2.0, 3.0], {}, "single value"),
        ([1.0, 2.0, 3.0], [1.0, 2.0], {}, "y must have shape"),
        ([[1.0, 2.0], [3.0, 4.0]], [1.0, 2.0], {}, "x must be one-dimensional"),
        ([1.0, 2.0], np.ones((2, 2, 2)), {}, "y must have shape"),
        ([1.0, 2.0], [1.0, 2.0], {"axes": "semilog"}, "axes must be one of"),
    ],
)
def test_fit_slope_rejects_bad_inputs(x, y, kw, message):
    with pytest.raises(ValueError, match=message):
        stats.fit_slope(x, y, **kw)


def test_fit_slope_reads_single_precision_values_in_double():
    """float32 values (a GPU run's errors) are read in float64. The inputs are exact integers
    and ``y = x^2``, so the log-log slope is 2 and the fit's residuals vanish: in double the
    slope is 2 to about 1e-16; taking the logs in float32 (an ulp of log 4 is 1.2e-7) would
    leave errors near 1e-8."""
    x32 = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    y32 = x32**2  # 1, 4, 9, 16: exact in float32
    for x, y in ((x32, y32), (x32, y32.astype(np.float64)), (x32.astype(np.float64), y32)):
        slope, se = stats.fit_slope(x, y, stderr=True)
        assert isinstance(slope, float)
        assert slope == pytest.approx(2.0, rel=1e-14) and se < 1e-14


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [
        # log 0 = -inf: a zero is refused as well as a negative value
        ([0.0, 1.0, 2.0], [1.0, 2.0, 3.0], "a log-log slope needs positive x and y"),
        ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0], "a log-log slope needs positive x and y"),
        ([2.0, 2.0, 2.0], [1.0, 2.0, 3.0], "x takes a single value: no slope"),
    ],
)
def test_fit_slope_refusals_give_the_whole_message(x, y, message):
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        stats.fit_slope(x, y)
