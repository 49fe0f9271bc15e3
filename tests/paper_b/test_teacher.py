"""Teachers of Paper B and the constants of Assumptions 1-3 (twolayer.paper_b.teacher)."""

import math

import numpy as np
import pytest

from twolayer.paper_b import teacher as tmod


def _by_hand_teachers():
    """Four teachers whose constants are read off by hand.

    ``A``: ``w = e1, e2`` in ``R^3``, ``a = (0.5, -0.25)``: ``H = diag(0.5, -0.25)``, so
    ``r = 2``, ``Delta = pi/2``, ``kappa = 0.25`` and ``kappa / |lambda_1| = 0.5``.
    ``P``: the prototype in ``R^6``: ``H`` has eigenvalues 1.5 and -0.5 (``kappa_rel = 1/3``),
    ``Delta = pi/3``. ``D``: ``w = e1, e2, (e1 + e2)/sqrt 2`` in ``R^4``, ``a = (1, -1/2, 2)``:
    ``H = [[2, 1], [1, 1/2]]`` has determinant 0 (eigenvalues 2.5 and 0, ``rank H = 1``) and
    ``Delta = pi/4``. ``S``: one neuron ``e1`` in ``R^5`` with ``a = 2``: ``r = 1``."""
    A = tmod.Teacher(np.array([0.5, -0.25]), np.eye(3)[:2])
    P = tmod.prototype(6, 0)
    s = 1 / math.sqrt(2)
    D = tmod.Teacher(
        np.array([1.0, -0.5, 2.0]), np.array([[1, 0, 0, 0], [0, 1, 0, 0], [s, s, 0, 0]])
    )
    S = tmod.Teacher(np.array([2.0]), np.eye(5)[:1])
    return A, P, D, S


def test_assumption_values_of_one_teacher_by_hand():
    """One teacher (not in a list): every constant of ``A``; ``kappa_rel = 0.25 / 0.5`` (a
    ``lambda_1`` below 1, so a floor of 1 in the division would show)."""
    A, *_ = _by_hand_teachers()
    v = tmod.assumption_values(A)
    assert v == {
        "r_over_d": pytest.approx(2 / 3, rel=1e-15),
        "Delta": pytest.approx(math.pi / 2, rel=1e-15),
        "kappa_rel": pytest.approx(0.5, rel=1e-15),
        "kappa": pytest.approx(0.25, rel=1e-15),
        "r": 2,
        "rank_H": 2,
        "deficient": 0,
        "count": 1,
    }


def test_assumption_values_worst_case_over_teachers():
    """The worst case over a list takes each constant from a different teacher: ``r / d`` from
    ``A`` (2/3), ``kappa_rel`` from ``P`` (1/3 < 1/2) but ``kappa`` from ``A`` (0.25 < 0.5);
    adding ``D`` and ``S`` brings ``Delta = pi/4``, ``rank H = 1`` and one deficient teacher,
    while the largest ``r`` stays 2 (``S`` has ``r = 1``)."""
    A, P, D, S = _by_hand_teachers()
    v = tmod.assumption_values([A, P])
    assert v["r_over_d"] == pytest.approx(2 / 3, rel=1e-15)
    assert v["Delta"] == pytest.approx(math.pi / 3, rel=1e-12)
    assert v["kappa_rel"] == pytest.approx(1 / 3, rel=1e-12)
    assert v["kappa"] == pytest.approx(0.25, rel=1e-15)
    assert (v["r"], v["rank_H"], v["deficient"], v["count"]) == (2, 2, 0, 2)
    w = tmod.assumption_values([A, P, D, S])
    assert w["r_over_d"] == pytest.approx(2 / 3, rel=1e-15)
    assert w["Delta"] == pytest.approx(math.pi / 4, rel=1e-12)
    assert w["kappa_rel"] == pytest.approx(0.0, abs=1e-14)
    assert w["kappa"] == pytest.approx(0.0, abs=1e-14)
    assert (w["r"], w["rank_H"], w["deficient"], w["count"]) == (2, 1, 1, 4)


def test_assumption_values_floor_is_strict():
    """``H = diag(1, t)`` for ``w = e1, e2``: ``kappa_rel = t`` exactly. At ``t`` equal to
    ``KAPPA_RELATIVE_FLOOR`` the teacher is not rank deficient (the floor is a strict bound);
    just below it, it is."""
    floor = tmod.KAPPA_RELATIVE_FLOOR
    at = tmod.assumption_values(tmod.Teacher(np.array([1.0, floor]), np.eye(2)))
    assert at["kappa_rel"] == floor
    assert at["deficient"] == 0
    below = tmod.assumption_values(tmod.Teacher(np.array([1.0, floor / 2]), np.eye(2)))
    assert below["deficient"] == 1


def _pair(theta, a=(1.0, 1.0), scale=(1.0, 1.0)):
    """Two teacher neurons in the plane at angle ``theta``, of norms ``scale``."""
    W = np.array([[1.0, 0.0], [math.cos(theta), math.sin(theta)]]) * np.asarray(scale)[:, None]
    return tmod.Teacher(np.asarray(a), W)


def test_constants_delta_of_one_and_two_neurons():
    """One neuron has no pair: Delta is pi/2 by convention. Two at 60 or 120 degrees are pi/3
    apart up to sign."""
    one = tmod.Teacher(np.array([2.0]), np.array([[0.0, 3.0]]))
    assert tmod.constants(one)["Delta"] == math.pi / 2
    for theta in (math.pi / 3, 2 * math.pi / 3):
        assert tmod.constants(_pair(theta))["Delta"] == pytest.approx(math.pi / 3, rel=1e-12)


def test_constants_ranks_are_relative_to_the_largest_value():
    """``r`` counts the singular values of the unit directions above 1e-10 times the largest,
    ``rank_H`` the eigenvalues of ``H = sum a_i w_i w_i^T`` above 1e-10 times the largest.
    For two unit directions at angle theta the singular values are ``sqrt(1 +- cos theta)``:
    at theta = 1.5e-10 the small one is 1.06e-10, 7.5e-11 times the largest (sqrt 2): rank 1.
    Directions are what count, not norms: neurons of norms 1e-6 and 1 at right angles span
    rank 2. With ``a = (1000, 1000)`` and theta = 1e-6, H's eigenvalues are
    ``1000 (1 +- cos theta)`` = 2000 and 5e-10, 2.5e-13 times the largest: rank_H 1."""
    assert tmod.constants(_pair(1.5e-10))["r"] == 1
    assert tmod.constants(_pair(math.pi / 2, scale=(1e-6, 1.0)))["r"] == 2
    c = tmod.constants(_pair(1e-6, a=(1000.0, 1000.0)))
    assert c["r"] == 2 and c["rank_H"] == 1
    assert c["H_eigenvalues"][0] == pytest.approx(2000.0, rel=1e-12)
