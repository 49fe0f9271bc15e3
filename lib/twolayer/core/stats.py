"""The two statistics every chapter shares: a Student-t interval and a least-squares slope.

* :func:`t_interval`: the mean of a few repetitions (seeds, runs) with its Student-t interval.
  Used by ``paper_a/figure1`` (the trends over runs, the accuracy differences) and
  ``paper_a/noisy_xor`` (the test error over training sets).
* :func:`fit_slope`: the least-squares slope of ``y`` against ``x`` on log-log axes (a rate
  ``y ~ c x^k``), or on linear axes for coordinates a caller has already transformed, with its
  standard error where a page needs one; several series at once (one row per seed) when ``y``
  is two-dimensional. Used by ``paper_a/figure1``, ``paper_a/gradient_flow``,
  ``paper_a/kkt_not_max_margin``, ``paper_a/real_images``, ``paper_a/setting`` and
  ``paper_b/stage1``, ``paper_b/stage2``, ``paper_b/stage3``, ``paper_b/hermite``,
  ``paper_b/samples``, ``paper_b/certificates``.

Fewer values than a statistic needs, decided once here: a mean needs one value and a slope two
points, or ``ValueError``; the spread needs one more (two values for an interval, three points
for a slope's standard error), and without it the spread is ``nan`` (an interval ``[nan,
nan]``, a standard error ``nan``): one run gives its number but no interval.
"""

from __future__ import annotations

import math

import numpy as np

AXES = ("loglog", "linear")


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """The mean of ``values`` with its two-sided Student-t interval of coverage ``level``:
    ``mean -+ t_{(1 + level) / 2, k - 1} s / sqrt(k)`` over the ``k`` values, ``s`` their
    sample standard deviation (``ddof=1``).

    Args:
        values: the repetitions (one per seed or run; any shape, read flat), at least one.

        level: the interval's coverage, in ``(0, 1)`` (0.95: a 95% interval).

    Returns:
        ``(mean, low, high)`` as floats; ``low = high = nan`` for a single value (no spread to
        read an interval from).

    Raises:
        ValueError: no values, or ``level`` outside ``(0, 1)``.
    """
    from scipy.stats import t as student

    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if v.size == 0:
        raise ValueError("t_interval needs at least one value, got none")
    mean = float(v.mean())
    if v.size < 2:
        return mean, math.nan, math.nan
    half = float(student.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return mean, mean - half, mean + half


def fit_slope(x, y, *, axes: str = "loglog", stderr: bool = False):
    """Least-squares slope ``k`` of the line ``Y = k X + b`` through the points ``(X, Y)``:
    ``X = log x, Y = log y`` on ``"loglog"`` axes (``y = c x^k``: a rate), ``X = x, Y = y`` on
    ``"linear"`` axes (coordinates the caller transformed, e.g. ``log1p``). The coefficients
    are NumPy's degree-one ``polyfit``; the standard error is the ordinary least-squares one,
    ``sqrt(SSR / (N - 2) / S_xx)`` with ``SSR`` the residual sum of squares of the ``N``
    points and ``S_xx = sum (X - mean X)^2``.

    Args:
        x: the abscissae, one-dimensional, at least two points and not all equal (positive on
        ``"loglog"`` axes).

        y: the ordinates, shape ``(len(x),)``, or ``(rows, len(x))`` for one series per row
        (one per seed) fitted against the same ``x``; positive on ``"loglog"`` axes. A ``nan``
        gives a ``nan`` slope (of its row only).

        axes: ``"loglog"`` (default) or ``"linear"``.

        stderr: also return the slope's standard error (``nan`` with two points: no residual
        degree of freedom).

    Returns:
        the slope (a float; an array of one slope per row for two-dimensional ``y``), or
        ``(slope, standard error)`` with ``stderr=True``.

    Raises:
        ValueError: ``axes`` unknown, shapes that do not match, fewer than two points, a
        constant ``x``, or a non-positive value on ``"loglog"`` axes.
    """
    if axes not in AXES:
        raise ValueError(f"axes must be one of {AXES}, got {axes!r}")
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x must be one-dimensional, got shape {x.shape}")
    if y.ndim not in (1, 2) or y.shape[-1] != x.size:
        raise ValueError(f"y must have shape ({x.size},) or (rows, {x.size}), got {y.shape}")
    if x.size < 2:
        raise ValueError(f"a slope needs at least two points, got {x.size}")
    if axes == "loglog":
        if np.any(x <= 0) or np.any(y <= 0):
            raise ValueError("a log-log slope needs positive x and y")
        x, y = np.log(x), np.log(y)
    if np.ptp(x) == 0:
        raise ValueError("x takes a single value: no slope")
    slope, icpt = np.polyfit(x, y.T, 1)
    if y.ndim == 1:
        slope, icpt = float(slope), float(icpt)
    if not stderr:
        return slope
    if x.size < 3:
        se = math.nan if y.ndim == 1 else np.full(y.shape[0], math.nan)
        return slope, se
    sxx = float(((x - x.mean()) ** 2).sum())
    if y.ndim == 1:
        ssr = float(((y - (slope * x + icpt)) ** 2).sum())
        return slope, math.sqrt(ssr / (x.size - 2) / sxx)
    ssr = ((y - (slope[:, None] * x + icpt[:, None])) ** 2).sum(axis=-1)
    return slope, np.sqrt(ssr / (x.size - 2) / sxx)
