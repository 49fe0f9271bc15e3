"""The Lemma 3.3 sweep's analysis helpers in twolayer.paper_a.assumptions, on inputs whose
answers are known by hand (mutation testing found them without a test): the half point of a
fraction curve, the fitted exponent of log n, the per-cell table, the anisotropic spectrum."""

from __future__ import annotations

import math

import numpy as np
import pytest

from twolayer.paper_a import assumptions as As


def test_half_point_interpolates_in_log_x():
    # crossing between 10 and 100, a quarter of the way in log x: 10^1.25
    assert As.half_point([1, 10, 100], [0.0, 0.4, 0.8]) == pytest.approx(10**1.25)
    assert As.half_point([1, 10, 100], [0.0, 0.5, 0.8]) == pytest.approx(10.0)  # on the grid
    assert math.isnan(As.half_point([1, 10, 100], [0.0, 0.2, 0.4]))  # never reaches 1/2
    assert math.isnan(As.half_point([1, 10, 100], [0.6, 0.7, 0.9]))  # already above at the start


def _rows(b, ns=(4, 8, 16), c=3.0):
    """Sweep records whose half point is exactly d50 = c n^2 (log n)^b: fraction 0 below it, 1/2
    at it, 1 above (two draws per cell)."""
    rows = []
    for n in ns:
        d50 = c * n * n * math.log(n) ** b
        for d, holds in (
            (d50 / 4, (False, False)),
            (d50 / 2, (False, False)),
            (d50, (True, False)),
            (2 * d50, (True, True)),
            (4 * d50, (True, True)),
        ):
            for k, h in enumerate(holds):
                rows.append(
                    {
                        "n": n,
                        "d": d,
                        "ratio": d / (n * n * math.log(n)),
                        "draw": k,
                        "p": 1.0 + k,
                        "max_norm_dev": 2.0 + k,
                        "holds": h,
                    }
                )
    return rows


@pytest.mark.parametrize("b", [0.0, 1.0, 2.0])
def test_log_exponent_recovers_a_known_exponent(b):
    fit, (lo, hi) = As.log_exponent(_rows(b), n_boot=50, seed=0)
    assert fit == pytest.approx(b, abs=1e-9)
    assert lo <= fit <= hi and hi - lo < 2


def test_log_exponent_needs_two_sizes_and_a_bracketed_crossing():
    with pytest.raises(ValueError, match="two values of n"):
        As.log_exponent(_rows(1.0, ns=(8,)))
    rows = [{**r, "holds": True} if r["n"] == 8 else r for r in _rows(1.0)]
    b, _ = As.log_exponent(rows, n_boot=10)
    assert math.isnan(b)  # n = 8 holds everywhere: its crossing is not inside the grid


def test_fraction_table_per_cell():
    rows = [
        {"n": 4, "d": 100, "ratio": 0.5, "draw": k, "p": p, "max_norm_dev": m, "holds": h}
        for k, (p, m, h) in enumerate([(2.0, 1.0, True), (4.0, 3.0, False), (3.0, 2.0, True)])
    ]
    t = As.fraction_table(rows)
    assert len(t) == 1
    row = t.iloc[0]
    assert row.fraction == pytest.approx(2 / 3) and row.ratio == 0.5
    assert row.p_scaled == pytest.approx(3.0 / math.sqrt(100 * math.log(4)))
    assert row.norm_dev == pytest.approx(2.0 / math.sqrt(math.log(4)))


@pytest.mark.parametrize("d, aniso", [(10, 0.5), (7, 0.8), (6, 0.0)])
def test_two_level_spectrum(d, aniso):
    s = As.two_level_spectrum(d, aniso)
    h = d // 2
    assert s.shape == (d,) and s.sum() == pytest.approx(d)
    assert s.max() == pytest.approx(1 + aniso) and np.all(s[:h] == 1 + aniso)
    assert np.allclose(s[h:], (d - h * (1 + aniso)) / (d - h)) and s.min() > 0


@pytest.mark.parametrize("aniso", [-0.1, 1.0, 1.5])
def test_two_level_spectrum_rejects(aniso):
    with pytest.raises(ValueError, match="aniso"):
        As.two_level_spectrum(10, aniso)


def test_log_exponent_defaults_order_and_interval():
    rows = _rows(1.0)
    assert As.log_exponent(rows) == As.log_exponent(rows, n_boot=200, seed=0, level=0.95)
    shuffled = [rows[i] for i in np.random.default_rng(0).permutation(len(rows))]
    assert As.log_exponent(shuffled, n_boot=50)[0] == pytest.approx(1.0, abs=1e-9)
    b, (lo50, hi50) = As.log_exponent(rows, n_boot=100, level=0.5)
    _, (lo95, hi95) = As.log_exponent(rows, n_boot=100, level=0.95)
    assert lo95 <= lo50 < hi50 <= hi95  # resampling moves the fit; a wider level, a wider band
    assert As.log_exponent(_rows(1.0, ns=(4, 8)), n_boot=20)[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="^the exponent needs at least two values of n$"):
        As.log_exponent(_rows(1.0, ns=(8,)))
