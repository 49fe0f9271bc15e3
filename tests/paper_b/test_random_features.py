"""The first layer frozen after Stage 1 (twolayer.paper_b.random_features)."""

import math

import numpy as np
import pytest

from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import random_features as rf
from twolayer.paper_b import teacher as tmod


def test_nested_widths_share_features_and_reject_odd():
    full = alg.symmetric_init(8, 20, 0)
    small = rf.nested(full, 6)
    assert np.array_equal(small.W[:3], full.W[:3]) and np.array_equal(small.W[3:], full.W[10:13])
    assert np.allclose(small.a[:3], -small.a[3:])
    with pytest.raises(ValueError):
        rf.nested(full, 7)
    with pytest.raises(ValueError):
        rf.nested(full, 22)


def test_frozen_best_loss_is_the_unpenalized_lasso_and_falls_with_width():
    t = tmod.prototype(10, 0)
    full = alg.symmetric_init(10, 64, 0)
    rows = rf.frozen_sweep(t, full, [8, 16, 64])
    L = [r["frozen best L"] for r in rows]
    assert L[0] >= L[1] >= L[2] > 0
    net1 = alg.stage1(rf.nested(full, 16), t)
    G, b, c, w = alg.stage2_problem(net1.W, t)
    _, v = alg.stage2_cvxpy(G, b, c, w, lam=1e-9)
    assert v == pytest.approx(rows[1]["frozen best L"], abs=1e-6)
    # the teacher's own directions as features fit exactly: a case with loss 0
    assert rf.frozen_best_loss(t.W, t) < 1e-10


def test_local_slopes_and_extrapolation():
    ms = np.array([10.0, 20.0, 40.0])
    assert np.allclose(rf.local_slopes(ms, 5 * ms**-2.0), -2.0)
    assert rf.width_at(40.0, 1e-3, 1e-5, -2.0) == pytest.approx(400.0)
    assert rf.width_at(40.0, 1e-3, 1e-5, 0.1) == math.inf  # no decay: never reached


def test_width_at_a_flat_or_rising_law_is_never():
    """A power law with slope 0 (or above) never reaches a lower target: ``inf``, not a
    division by zero; with slope -1 the width scales as loss_last / target."""
    assert rf.width_at(10.0, 1.0, 0.5, 0.0) == math.inf
    assert rf.width_at(10.0, 1.0, 0.5, 0.3) == math.inf
    assert rf.width_at(10.0, 1.0, 0.25, -1.0) == pytest.approx(40.0)
