"""The bootstrap spread of a statistic over repetitions (twolayer.paper_b.fits); the log-log
slope it is used with is tested in tests/core/test_stats.py."""

import math
import re

import numpy as np
import pytest

from twolayer.core import stats
from twolayer.paper_b import fits

INF = float("inf")


def assert_no_spread(e, value, reps):
    """The degenerate estimate: the statistic itself, an infinite standard error, the interval
    (-inf, inf), and the number of repetitions -- every field checked by name."""
    assert e.value == value
    assert e.se == INF
    assert e.lo == -INF
    assert e.hi == INF
    assert e.reps == reps
    assert isinstance(e.reps, int)


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


def test_covers_is_a_closed_interval():
    """covers(target, width) is |value - target| <= width: the closed interval
    [value - width, value + width]. With dyadic numbers (exact in binary) the ends are hit
    exactly: 1.5 is 0.5 from 1.0 and 2.0, so both ends are covered, 0.5 + 2^-20 is not."""
    e = fits.Estimate(value=1.5, se=0.25, lo=1.0, hi=2.0, reps=4)
    assert e.covers(1.0, 0.5) and e.covers(2.0, 0.5)
    assert not e.covers(1.0 - 2.0**-20, 0.5) and not e.covers(2.0 + 2.0**-20, 0.5)
    assert e.covers(1.5, 0.0)  # a zero width covers the value itself
    assert not e.covers(1.5 + 2.0**-20, 0.0)


def test_bootstrap_single_repetition_has_infinite_spread():
    """With one repetition there is nothing to resample (documented): the estimate is the
    statistic with se = inf and the interval (-inf, inf), for one repetition."""
    e = fits.bootstrap(lambda Y: float(Y.mean()), [np.ones((3, 1))])
    assert_no_spread(e, 1.0, 1)


def test_bootstrap_rejects_a_mismatch_in_the_number_of_repetitions():
    msg = "every array needs the same number of repetitions (last axis)"
    with pytest.raises(ValueError, match=rf"^{re.escape(msg)}$"):
        fits.bootstrap(lambda A, B: 0.0, [np.ones((2, 3)), np.ones((2, 4))])


def test_bootstrap_two_repetitions_is_the_exact_two_point_resampling_law():
    """Two repetitions (the smallest number that can be resampled) are bootstrapped: for the
    mean of x = (0, 1) a resample's mean is 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4 (by
    hand), so the 95% interval is [0, 1] and the standard error is sqrt(1/8) (the variance
    1/4 of one draw over two draws)."""
    e = fits.bootstrap(lambda x: float(x.mean()), [np.array([0.0, 1.0])], seed=0)
    assert e.value == 0.5 and e.reps == 2
    assert e.lo == 0.0 and e.hi == 1.0
    assert e.se == pytest.approx(math.sqrt(1 / 8), abs=0.04)


def test_bootstrap_resamples_every_repetition_uniformly_with_one_shared_index():
    """The resamples are draws with replacement from all the repetitions 0..reps-1, with
    equal probability 1/reps each, of size reps, and one index shared by every array: a
    statistic that records the repetitions it receives (array a holds its own indices,
    array b = 10 a) sees every index, at a frequency within 5 standard deviations of 1/reps
    (2000 draws, plus the data itself, which holds each index once), and b = 10 a on every
    resample."""
    reps, n_boot = 5, 400
    a = np.arange(reps, dtype=float)
    seen = []

    def record(a_, b_):
        assert a_.shape == (reps,)
        np.testing.assert_array_equal(b_, 10 * a_)
        seen.append(a_.copy())
        return 0.0

    fits.bootstrap(record, [a, 10 * a], n_boot=n_boot, seed=0)
    draws = np.concatenate(seen).astype(int)
    assert draws.size == reps * (n_boot + 1)
    freq = np.bincount(draws, minlength=reps) / draws.size
    assert freq.size == reps
    sd = math.sqrt((1 / reps) * (1 - 1 / reps) / draws.size)
    np.testing.assert_allclose(freq, 1 / reps, atol=5 * sd)


def test_bootstrap_defaults_draw_400_resamples_with_seed_0():
    """The default number of resamples is 400: a statistic counting its calls on resamples
    (told apart from the data, 50 distinct repetitions in order, which a resample repeats
    with probability 50!/50^50) is called 400 times. The default seed is 0, checked by its
    properties: two calls without a seed agree (a fixed, not an entropy-drawn seed), and they
    agree with seed=0 but not with seed=1 (so the seed does reach the resampling)."""
    reps = 50
    data = np.arange(reps, dtype=float)
    calls = {"data": 0, "resample": 0}

    def count(x):
        calls["data" if np.array_equal(x, data) else "resample"] += 1
        return float(x.mean())

    fits.bootstrap(count, [data])
    assert calls == {"data": 1, "resample": 400}

    def mean(x):
        return float(x.mean())

    default = fits.bootstrap(mean, [data])
    assert fits.bootstrap(mean, [data]) == default
    assert fits.bootstrap(mean, [data], seed=0) == default
    assert fits.bootstrap(mean, [data], seed=1) != default
    # an explicit seed is reproducible too
    assert fits.bootstrap(mean, [data], seed=7) == fits.bootstrap(mean, [data], seed=7)


def test_bootstrap_skips_resamples_where_the_statistic_raises_and_goes_on():
    """Documented: a resample on which the statistic raises ValueError (a log of a
    non-positive mean) is skipped, and resampling goes on. For x = (3, -1) the resample
    means are 3, 1, -1 with probabilities 1/4, 1/2, 1/4; log(-1) raises, so the kept
    resamples give log 3 and 0 = log 1 with conditional probabilities 1/3, 2/3 (by hand): the
    interval is [0, log 3] and the standard error is log 3 * sqrt(2/9)."""

    def log_mean(x):
        return math.log(x.mean())

    e = fits.bootstrap(log_mean, [np.array([3.0, -1.0])], seed=0)
    assert e.value == 0.0 and e.reps == 2
    assert e.lo == 0.0 and e.hi == pytest.approx(math.log(3.0), rel=1e-12)
    assert e.se == pytest.approx(math.log(3.0) * math.sqrt(2 / 9), abs=0.05)


def finite_on(k, data, fail):
    """A statistic that is finite on the data and on exactly its first k resamples (told
    apart from the data as in the defaults test), with the values 1, 2, ..., k there, and
    after that either NaN or raises ValueError (``fail``)."""
    count = [0]

    def stat(x):
        if np.array_equal(x, data):
            return 0.0
        count[0] += 1
        if count[0] <= k:
            return float(count[0])
        if fail == "nan":
            return float("nan")
        raise ValueError("no statistic on this resample")

    return stat


@pytest.mark.parametrize("fail", ["nan", "raise"])
def test_bootstrap_needs_half_of_the_resamples_finite(fail):
    """With fewer than half of the n_boot resamples giving a finite statistic the spread is
    not estimated (the degenerate estimate, every field checked); with exactly
    floor(n_boot / 2) finite ones it is, from those alone. n_boot = 7 is odd, so the boundary
    count 3 = floor(7 / 2) is below 7 / 2: it is bootstrapped, and 2 is not. On the values
    1, 2, 3 (by hand) the sample standard deviation is 1, and linear-interpolated percentiles
    are 1 + 0.025 * 2 = 1.05 and 1 + 0.975 * 2 = 2.95."""
    data = np.arange(50, dtype=float)
    e = fits.bootstrap(finite_on(3, data, fail), [data], n_boot=7, seed=0)
    assert e.value == 0.0 and e.reps == 50
    assert e.se == pytest.approx(1.0, rel=1e-12)
    assert e.lo == pytest.approx(1.05, rel=1e-12)
    assert e.hi == pytest.approx(2.95, rel=1e-12)

    e = fits.bootstrap(finite_on(2, data, fail), [data], n_boot=7, seed=0)
    assert_no_spread(e, 0.0, 50)


def test_bootstrap_reads_integer_repetitions_as_real_numbers():
    """Integer observations (counts) enter the statistic as real numbers: the second moment
    of counts 4e9 is 1.6e19 (by hand), above the int64 range (about 9.22e18) where integer
    arithmetic would wrap around; every resample gives the same value, so se = 0."""
    counts = np.full(3, 4_000_000_000, dtype=np.int64)
    e = fits.bootstrap(lambda x: float(np.mean(x**2)), [counts], n_boot=20, seed=0)
    assert e.value == pytest.approx(1.6e19, rel=1e-12)
    assert e.lo == pytest.approx(1.6e19, rel=1e-12) and e.hi == pytest.approx(1.6e19, rel=1e-12)
    assert e.se == 0.0
