"""Unit tests of twolayer.paper_b.landscape (Stage 3's gaps, Lemma 6's window, the per-epoch
table and Lemma 10 along a trajectory) and of Stage 3's records (algorithm1.stage3)."""

import numpy as np
import pytest

from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import landscape as land
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod


@pytest.fixture(scope="module")
def short_run():
    t = tmod.prototype(6, 0)
    net2 = alg.stage2(alg.stage1(alg.symmetric_init(6, 20, 0), t), t, 0.04)[0]
    net3, tr = alg.stage3(
        net2, t, 0.04, 3, steps=60, eta=0.1, record_every=20, grow=2.0, keep_nets=True, early=True
    )
    opts = land.optima(t, [lam for lam, _ in tr.starts], grid=90)
    return t, net3, tr, opts


def test_record_steps():
    s = alg.record_steps(100, 40)
    assert s.tolist() == [0, 40, 80, 100]
    e = alg.record_steps(100, 40, early=True)
    assert set(s) <= set(e) and {1, 2, 3, 4, 8, 16, 32} <= set(e.tolist()) and e.max() == 100
    assert alg.epoch_lengths(10, 3, 2.0) == [10, 20, 40]


def test_stage3_records_each_epoch_end_and_nets(short_run):
    t, net3, tr, _ = short_run
    a = tr.arrays()
    assert len(tr.nets) == len(a["epoch"])
    for k, (lam, end) in enumerate(tr.snapshots):
        last = np.flatnonzero(a["epoch"] == k)[-1]
        assert a["reg_loss"][last] == pytest.approx(pop.regularized_loss(end, t, lam), rel=1e-12)
        assert np.array_equal(tr.nets[last].W, end.W)
    assert np.array_equal(net3.W, tr.snapshots[-1][1].W)


def test_gaps_are_against_the_network_free_optimum(short_run):
    _, _, tr, opts = short_run
    z = land.gaps(tr, opts)
    a = tr.arrays()
    assert np.allclose(z, a["reg_loss"] - np.array([opts[k].value for k in a["epoch"]]))
    # the network never beats the optimum by more than its resolution
    res = land.resolution_along(tr, opts)
    assert np.all(z >= -res - 1e-12)


def test_lemma6_window():
    lam = np.array([0.01, 0.01, 0.01, 0.01])
    zeta = np.array([5e-5, 1.5e-4, 3e-4, 1e-3])  # lambda^2 = 1e-4, lambda^1.8 = 2.5e-4
    assert land.lemma6_window(zeta, lam).tolist() == [False, True, False, False]
    # a point the optimum does not resolve is left out
    assert not land.lemma6_window(zeta, lam, resolution=1e-4)[1]


def test_lemma6_window_includes_its_edges():
    """Lemma 6's bounds are non-strict; each edge below is hit exactly in doubles (``0.5^2``,
    ``pow(1, 1.8) = 1`` and ``10 * 2^-6`` are exact). lambda = 1/2: lambda^2 = 1/4 <= 1/2^1.8
    ~ 0.287; lambda = 1, c_lo = 1/2: zeta = 1 = lambda^1.8; 0.38^2 = 0.1444 < 10 * 2^-6 =
    0.15625 < 0.38^1.8 ~ 0.1752, so only the resolution bound is tight there."""
    assert land.lemma6_window([0.25], [0.5]).tolist() == [True]  # zeta = lambda^2
    assert land.lemma6_window([1.0], [1.0], c_lo=0.5).tolist() == [True]  # zeta = lambda^1.8
    on_res = land.lemma6_window([0.15625], [0.38], resolution=2.0**-6)
    assert on_res.tolist() == [True]  # zeta = 10 resolution
    # zeta = 9.5 resolution: not resolved
    assert not land.lemma6_window([0.15625], [0.38], resolution=0.15625 / 9.5)[0]


def test_lemma6_window_reads_its_arguments_as_float64():
    """zeta, lambda and the resolution are converted to float64 first, so ``Decimal`` values
    give the float results. ``Decimal("0.1")`` is read as the double ``0.1 + 5.6e-18``, which
    equals ``c_lo lambda^2`` for ``c_lo = 0.1``, ``lambda = 1`` (an exact comparison would put
    it below); ``10 * 0.03 == 0.3`` in doubles (``0.3 - 1.1e-17``), while ``10 * Decimal("0.03")``
    is exactly ``0.3``; ``0.52^2 = 0.2704 <= 0.3 <= 0.52^1.8 ~ 0.308``."""
    from decimal import Decimal

    assert land.lemma6_window([Decimal("0.1")], [1.0], c_lo=0.1).tolist() == [True]
    assert land.lemma6_window([0.1], [1.0], c_lo=0.1).tolist() == [True]
    assert land.lemma6_window([0.3], [0.52], Decimal("0.03")).tolist() == [True]
    assert land.lemma6_window([0.3], [0.52], 0.03).tolist() == [True]
    zeta = [5e-5, 1.5e-4, 3e-4]  # lambda^2 = 1e-4, lambda^1.8 ~ 2.5e-4
    lam = [Decimal("0.01")] * 3
    assert land.lemma6_window(zeta, lam).tolist() == [False, True, False]


def test_visible_threshold():
    assert land.visible_threshold(land.KAPPA2_ONE * 0.25) == pytest.approx(0.5)
    assert land.visible_threshold(-1.0) == 0.0


def test_epoch_table_and_lemma10(short_run):
    t, _, tr, opts = short_run
    p_norm, rho = 17.0, 0.4
    rows = land.epoch_table(tr, t, opts, p_norm=p_norm, rho=rho)
    assert [r["epoch"] for r in rows] == [0, 1, 2]
    a = tr.arrays()
    for k, r in enumerate(rows):
        lam, end = tr.snapshots[k]
        # Lemma 8 (i) / F.5's left side from the paper's definitions (Section 5, F.5): each
        # neuron j counts |a_j| ||w_j|| delta_j^2, delta_j its angle up to sign to the nearest
        # teacher, the angle taken here by atan2 (orthogonal part against |projection|)
        U = t.W / np.linalg.norm(t.W, axis=1, keepdims=True)
        proj = np.abs(end.W @ U.T)  # (m, m*)
        orth = np.sqrt(np.maximum((end.W**2).sum(1)[:, None] - proj**2, 0.0))
        delta = np.arctan2(orth, proj).min(1)
        terms = np.abs(end.a) * np.linalg.norm(end.W, axis=1) * delta**2
        assert r["far mass"] == pytest.approx(terms.sum(), rel=1e-9, abs=1e-15)
        assert r["max mass delta^2"] == pytest.approx(terms.max(), rel=1e-9, abs=1e-15)
        # F.4 (1) and F.5 written out from the paper, with zeta the end-of-epoch gap read from
        # the trajectory's record (the last recorded L_lambda of the epoch minus the optimum;
        # a gap below the estimated optimum, by its resolution, counts as 0)
        zeta = a["reg_loss"][np.flatnonzero(a["epoch"] == k)[-1]] - opts[k].value
        assert r["zeta end"] == pytest.approx(zeta, rel=1e-12, abs=1e-15)
        z = max(zeta, 0.0)
        assert r["F.5 bound"] == pytest.approx((z / lam + 2 * lam * p_norm**2) / rho, rel=1e-12)
        assert r["F.4 bound"] == pytest.approx(5 * lam**2 * p_norm**2 + 4 * z, rel=1e-12)
        # the printed average-neuron error stays large for the teacher with a* = -1
        assert r["avg neuron error (printed)"] > 1.0 > r["avg neuron error"]
    l10 = land.lemma10_along(tr, t, land.gaps(tr, opts))
    assert l10["radius"].shape == l10["mass_ratio"].shape == (len(tr.nets),)
    # the radius (zeta + lambda^2)^(1/3), by hand: a gap of 7 lambda^2 gives 2 lambda^(2/3),
    # a negative gap (below the optimum's resolution) counts as 0 and gives lambda^(2/3)
    lam_t = a["lam"]
    even = np.arange(len(lam_t)) % 2 == 0
    hand = land.lemma10_along(tr, t, np.where(even, 7 * lam_t**2, -0.5))
    expected = np.where(even, 2.0, 1.0) * lam_t ** (2 / 3)
    np.testing.assert_allclose(hand["radius"], expected, rtol=1e-12)


def test_lemma10_along_needs_the_nets(short_run):
    t, net3, _, _ = short_run
    _, tr = alg.stage3(net3, t, 0.01, 1, steps=5, eta=0.1, record_every=5)
    with pytest.raises(ValueError, match=r"^run stage3 with keep_nets=True$"):
        land.lemma10_along(tr, t, np.zeros(len(tr.epoch)))


def test_lemma10_along_on_a_worked_example():
    """Lemma 10 at two hand-made networks, ``lambda = 10^-3``. Teacher ``a* = (1, -2)``,
    ``w*_1 = e1``, ``w*_2 = e2`` in ``R^3``. Network 1: near ``e1`` masses ``a_j ||w_j||`` 2/5 at
    angle 0.1 and 3/5 at 0.3, near ``e2`` -1/2 at 0.05 and -1 at 0.15; a gap ``zeta = 0.2^3 -
    lambda^2`` gives the radius 0.2, within which the signed masses are 2/5 and 3/2, i.e.
    4/5 and 3/2 of ``|a*_i| / 2``: the ratio is 4/5. The half masses (1/2, 1) are reached at
    0.3 and 0.15, the largest 0.3 = 3/2 of the radius. Network 2 is the teacher itself: ratio
    2, half-mass radius 0. The gaps are given as exact fractions (read as float64), the
    second one negative (counts as 0: radius ``lambda^(2/3)``)."""
    from fractions import Fraction

    t = tmod.Teacher(np.array([1.0, -2.0]), np.array([[1.0, 0, 0], [0, 1.0, 0]]))

    def rot(axis, angle, norm):  # norm (cos, sin) in the plane of e_axis and e3
        w = np.zeros(3)
        w[axis], w[2] = norm * np.cos(angle), norm * np.sin(angle)
        return w

    W = np.array([rot(0, 0.1, 2.0), rot(0, 0.3, 1.0), rot(1, 0.05, 2.0), rot(1, 0.15, 1.0)])
    net1 = pop.Net(np.array([0.2, 0.6, -0.25, -1.0]), W)
    net2 = pop.Net(t.a, t.W)
    lam = 1e-3
    tr = alg.Trajectory(
        epoch=[0, 0],
        lam=[lam, lam],
        step=[0, 1],
        loss=[0, 0],
        reg_loss=[0, 0],
        grad_norm2=[0, 0],
        nets=[net1, net2],
    )
    zeta = [Fraction(8, 1000) - Fraction(lam**2), Fraction(-1, 2)]
    out = land.lemma10_along(tr, t, zeta)
    assert out["radius"].dtype == np.float64
    np.testing.assert_allclose(out["radius"], [0.2, lam ** (2 / 3)], rtol=1e-12)
    np.testing.assert_allclose(out["mass_ratio"], [0.8, 2.0], rtol=1e-12)
    np.testing.assert_allclose(out["half_radius_ratio"], [1.5, 0.0], rtol=1e-12, atol=0)
