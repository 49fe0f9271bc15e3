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
    for bad in (7, 22):
        with pytest.raises(ValueError, match="^m must be even and at most the width of net$"):
            rf.nested(full, bad)


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


@pytest.mark.parametrize("scale", [1e-4, 1e4])
def test_frozen_best_loss_does_not_depend_on_the_scale_of_the_features(scale):
    """ReLU is positively homogeneous: a neuron scaled by ``c > 0`` is refitted with ``a / c``,
    so the best loss over ``a`` (and the linear term) is the same at every scale of ``W``, the
    pseudo-inverse's cut-off included (it is relative to the largest eigenvalue)."""
    t = tmod.prototype(10, 0)
    W = alg.stage1(rf.nested(alg.symmetric_init(10, 64, 0), 16), t).W
    base = rf.frozen_best_loss(W, t)
    assert rf.frozen_best_loss(scale * W, t) == pytest.approx(base, rel=1e-6, abs=1e-12)


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
