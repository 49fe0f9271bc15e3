"""The chapter module of "Certificates and the structure of minima"
(``twolayer.paper_b.chapters.certificates``): its parameters, what the page says about its
setup (recomputed by independent routes), and the checks' power on inputs where their
statement fails."""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np
import pytest
from failing_cases.paper_b_certificates import near_teacher

from helpers import ROOT
from twolayer.core.params import ParameterError
from twolayer.page.checks import labels_in
from twolayer.paper_b import population as pop
from twolayer.paper_b.chapters import certificates as ch

PAGE = ROOT / "notebooks" / "paper_b" / "certificates.md"


@functools.cache
def tiny():
    return ch.SPEC.params(
        "smoke",
        m=6,
        epochs=2,
        steps=10,
        record_every=1,
        lasso_grid=40,
        measures=5,
        mc_n=2000,
        grid=200,
    )


@functools.cache
def tiny_run():
    P = tiny()
    c = ch.certificate(P)
    return c, ch.stage3(P, c.teacher)


# --- parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("ell", 3),
        ("ells", [2, 3, 4]),
        ("ells", [2, 4]),
        ("m", 7),
        ("d", 1),
        ("lam0", 0.0),
        ("eta", 1.5),
        ("close_factor", 0.0),
        ("grid", 10),
    ],
)
def test_bad_parameter_is_named(name, value):
    with pytest.raises(ParameterError, match=name):
        ch.SPEC.params("smoke", **{name: value})


def test_smoke_profile_values():
    P = ch.SPEC.params("smoke")
    assert (P.d, P.ell, P.ells, P.lam0, P.eta, P.close_factor) == (
        3,
        4,
        [2, 4, 6, 10, 20, 30],
        0.04,
        0.1,
        1.0,
    )
    assert (P.grid, P.mc_n, P.measures, P.m, P.epochs, P.steps, P.record_every) == (
        1440,
        100_000,
        50,
        40,
        4,
        100,
        25,
    )


# --- setup fidelity ---------------------------------------------------------------------------


def test_teacher_is_the_prototype():
    """Three unit neurons at 60 degrees from each other in a plane, a* = (1, -1, 1)."""
    c, _ = tiny_run()
    t = c.teacher
    assert t.a.tolist() == [1.0, -1.0, 1.0] and t.d == tiny().d
    assert np.allclose(np.linalg.norm(t.W, axis=1), 1.0)
    assert np.linalg.matrix_rank(t.W, tol=1e-10) == 2
    cos = t.W @ t.W.T
    assert cos[0, 1] == pytest.approx(0.5) and cos[1, 2] == pytest.approx(0.5)
    assert cos[0, 2] == pytest.approx(-0.5)


def test_certificate_grids():
    c, _ = tiny_run()
    P = tiny()
    assert len(c.theta) == P.grid
    assert np.allclose(np.diff(c.theta), math.pi / P.grid) and c.theta[0] == pytest.approx(
        math.pi / (2 * P.grid)
    )
    B = c.teacher.info["basis"]
    assert np.allclose(c.Wg @ B @ B.T, c.Wg)  # the circle lies in S_*
    assert len(c.side) == 2 * c.teacher.m


def test_monte_carlo_directions():
    c, _ = tiny_run()
    mc = ch.monte_carlo(tiny(), c)
    assert len(mc.W) == c.teacher.m + 3 + (2 if tiny().d > 2 else 0)
    assert np.allclose(np.linalg.norm(mc.W, axis=1), 1.0)
    assert np.allclose(mc.W[: c.teacher.m], c.C.U)


def _loss_closed_form(net: pop.Net, t, lam: float) -> float:
    """``L_lambda = E[(f - y~)^2] + lambda/2 (||a||^2 + ||W||_F^2)`` (Paper B, eq. (2)-(3)),
    written out with the arc-cosine kernel, independently of the library."""

    def k1(u, v):
        nu, nv = np.linalg.norm(u, axis=1), np.linalg.norm(v, axis=1)
        c = np.clip((u / nu[:, None]) @ (v / nv[:, None]).T, -1, 1)
        return np.outer(nu, nv) * (np.sqrt(1 - c**2) + (np.pi - np.arccos(c)) * c) / (2 * np.pi)

    s2pi = math.sqrt(2 * math.pi)
    alpha_star = t.a @ np.linalg.norm(t.W, axis=1) / s2pi
    beta_star = 0.5 * t.a @ t.W
    # g = f - y~ = sum a_i relu(w_i.x) - sum a*_j relu(w*_j.x) + (alpha + alpha*) + (beta + beta*).x
    A = np.concatenate([net.a, -t.a])
    V = np.concatenate([net.W, t.W])
    c0, c1 = net.alpha + alpha_star, net.beta + beta_star
    e_rr = A @ k1(V, V) @ A
    e_r = A @ np.linalg.norm(V, axis=1) / s2pi
    e_rx = 0.5 * A @ V
    L = e_rr + 2 * c0 * e_r + 2 * e_rx @ c1 + c0**2 + c1 @ c1
    return float(L + 0.5 * lam * (net.a @ net.a + np.sum(net.W**2)))


def test_stage3_schedule_loss_and_steps():
    """lambda_k = lambda_0 / 2^k, epoch k runs steps 2^k steps, the recorded L_lambda is eq.
    (2) on the recorded weights, and one step is theta - eta grad L_lambda (central
    differences of the independent closed form)."""
    P = tiny()
    c, run = tiny_run()
    assert run.lams.tolist() == [P.lam0 / 2**k for k in range(P.epochs)]
    tr = run.tr
    assert [int(tr["step"][tr["epoch"] == k].max()) for k in range(P.epochs)] == [10, 30]
    assert len(run.traj.nets) == len(tr["step"]) == 10 + 1 + 20 + 1
    for k in (0, 5, 20):
        net, lam = run.traj.nets[k], tr["lam"][k]
        assert tr["reg_loss"][k] == pytest.approx(_loss_closed_form(net, c.teacher, lam), rel=1e-9)
    # one gradient step (record_every = 1: consecutive records are consecutive steps)
    k = 3
    net, nxt, lam = run.traj.nets[k], run.traj.nets[k + 1], tr["lam"][k]
    theta, m, d = net.flat(), P.m, P.d
    h = 1e-6
    grad = np.zeros_like(theta)
    for i in range(len(theta)):
        e = np.zeros_like(theta)
        e[i] = h
        grad[i] = (
            _loss_closed_form(pop.Net.unflat(theta + e, m, d), c.teacher, lam)
            - _loss_closed_form(pop.Net.unflat(theta - e, m, d), c.teacher, lam)
        ) / (2 * h)
    assert np.allclose(nxt.flat(), theta - P.eta * grad, atol=1e-8)


def test_lemma9_measures_and_optimum():
    P = tiny()
    c, run = tiny_run()
    l9 = ch.lemma9(P, c, run)
    assert l9.source == ["random"] * P.measures + ["Stage 3"] * len(run.traj.nets)
    assert l9.rho == c.rho_sphere and l9.lams.tolist() == run.lams.tolist()
    # the measure of a network is sum_j a_j ||w_j|| delta_{wbar_j}: its mass
    net = run.traj.nets[-1]
    k = P.measures + len(run.traj.nets) - 1
    assert l9.mass[k] == pytest.approx(np.sum(np.abs(net.a) * np.linalg.norm(net.W, axis=1)))
    assert l9.teacher_mass == 3.0


def test_lemma7_radius_and_masks():
    P = tiny()
    c, run = tiny_run()
    l7 = ch.lemma7(P, c, run)
    for s, lam, z in zip(l7.snaps, l7.lam, l7.zeta, strict=True):
        assert s["delta_close"] == pytest.approx(P.close_factor * (max(z, 0) + lam**2) ** (1 / 3))
    assert np.all(l7.resolved == (l7.zeta >= 10 * l7.resolution))
    assert not np.any(l7.applies & ~l7.resolved) and not np.any(l7.covered & ~l7.resolved)
    assert len(l7.fd) == int(l7.covered.sum())


def test_split_pair_constants():
    """The book's split-pair lemma with its constants: L = a*^2 delta^3 / (3 pi) for the pair
    and a*^2 delta^2 / 4 for one rotated atom, to O(delta)."""
    c, _ = tiny_run()
    sp = ch.split_pair(tiny(), c, 0)
    a2 = c.teacher.a[0] ** 2
    assert np.allclose(sp.pair / (a2 * sp.deltas**3 / (3 * math.pi)), 1, atol=0.02)
    assert np.allclose(sp.single / (a2 * sp.deltas**2 / 4), 1, atol=0.01)


def test_test_function_orders():
    tf = ch.test_function(tiny(), tiny_run()[0])
    assert tf.ells == [4, 8, 16, 32, 64]
    tf2 = ch.test_function(ch.SPEC.params("smoke", ells=[2, 4, 6]), tiny_run()[0])
    assert tf2.ells == [4, 8, 16]


# --- the checks decide -------------------------------------------------------------------------


def _orthogonal_atom(c, rho):
    B = c.teacher.info["basis"]
    n = np.eye(c.teacher.d)[:, 0] - B @ (B.T @ np.eye(c.teacher.d)[:, 0])
    n /= np.linalg.norm(n)
    return ch.lemma9_table(c.C, rho, c.teacher, [(n[None, :], np.array([1.0]))], source=["x"])


def test_sphere_rho_is_attained_off_the_plane():
    """Definition 1 on the sphere: an atom orthogonal to S_* has eta = 0 and delta = pi/2, so
    Lemma 9 (2) is an equality at rho = 4/pi^2, which the sphere's rho reaches; the circle's
    rho violates it."""
    c, _ = tiny_run()
    assert c.rho_sphere == pytest.approx(4 / math.pi**2, rel=1e-9)
    t = _orthogonal_atom(c, c.rho_sphere)
    assert t["lhs2"][0] == pytest.approx(0, abs=1e-12)
    assert t["lhs2"][0] - t["rhs2"][0] <= 1e-12
    t = _orthogonal_atom(c, c.rho_circle)
    assert t["lhs2"][0] - t["rhs2"][0] > 0.5


@pytest.mark.parametrize("per_teacher, shift", [(1, 0), (1, 1), (2, 1), (3, 2)])
def test_f17_corrected_sum_is_the_derivative_printed_is_not(per_teacher, shift):
    """On hand-made networks near the teacher: the corrected sum always matches the fitted
    derivative; the printed one does when student neuron i is the only neuron of teacher i's
    cell, and misses when the neurons of a cell are not the ones the printed index names."""
    c, _ = tiny_run()
    net = near_teacher(c.teacher, per_teacher, shift)
    d = ch.directional_derivative(net, c.teacher, 0.01, 0.1)
    fd, corrected, printed = d.fd, d.corrected, d.printed
    allow = ch.fd_allowance([d], 1)
    R = replace(
        _blank_l7(),
        fd=np.array([fd]),
        fd_allowance=allow,
        fd_corrected=np.array([corrected]),
        covered=np.array([True]),
        inner=np.array([corrected]),
        printed=np.array([printed]),
    )
    assert ch.lemma_f17_corrected_is_derivative(None, R).outcome() is True
    exact = per_teacher == 1 and shift == 0
    assert ch.lemma_f17_printed_fails(None, R).outcome() is (not exact)
    assert bool(abs(printed - fd) <= allow[0]) is exact


def _blank_l7():
    e = np.zeros(0)
    b = np.zeros(0, dtype=bool)
    return ch.Lemma7([], e, e, e, e, e, e, b, b, b, e, e, e, e, 0, 0.0, 0.0, 0.0)


def test_lemma7_check_uses_the_upper_estimate_of_zeta():
    """A ratio just above 1/8 with the grid gap falls below it with zeta + resolution."""
    R = replace(
        _blank_l7(),
        inner=np.array([0.13e-3]),
        zeta=np.array([1e-3]),
        resolution=np.array([0.1e-3]),
        applies=np.array([True]),
        resolved=np.array([True]),
    )
    assert R.ratio[0] > 1 / 8
    assert ch.lemma7_inner_product_at_least_zeta_over_8(None, R).outcome() is False


def test_readings_follow_the_run():
    R = _blank_l7()
    assert "not compared" in ch.lemma_f17_reading(R)
    assert "not measured" in ch.lemma7_reading(R)[0]
    assert ch.lemma7_inner_product_at_least_zeta_over_8(None, R).outcome() is None
    assert ch.lemma_f17_printed_fails(None, R).outcome() is None
    R = replace(
        R,
        covered=np.array([True]),
        inner=np.array([2.0]),
        printed=np.array([3.0]),
        fd=np.array([2.0]),
        fd_corrected=np.array([2.0]),
    )
    assert "0.5 times its size" in ch.lemma_f17_reading(R)


def test_statements_named_by_the_checks_have_boxes():
    """Every statement a check of the module names is a prf label of some page, and the
    book's own lemma is a box on this page."""
    labels = labels_in(ROOT)
    names = {
        "b-def-1",
        "b-lem-f-1",
        "b-lem-9",
        "b-lem-f-3",
        "b-claim-1",
        "book-lem-split-pair",
        "b-lem-7",
        "b-lem-f-17",
    }
    assert names <= labels
    assert ":label: book-lem-split-pair" in PAGE.read_text(encoding="utf-8")


def test_fitted_derivative_is_exact_on_quartics_and_estimates_truncation():
    """A degree-4 fit recovers the slope of any quartic exactly; the degree-2 fit's slope of
    ``c t^3`` on ``t = k h`` is ``c h^2 sum k^4 / sum k^2`` (least squares on a symmetric
    grid), so the truncation estimate is that; the standard error of noiseless values is 0."""
    h, c = 1e-2, 3.0
    k = np.arange(-10, 11, dtype=float)
    t = k * h
    slope, se, trunc = ch.fitted_derivative(0.5 + 2.0 * t + c * t**3 - 7 * t**4, h)
    assert slope == pytest.approx(2.0, rel=1e-10)
    assert se == pytest.approx(0.0, abs=1e-8)
    assert trunc == pytest.approx(c * h**2 * np.sum(k**4) / np.sum(k**2), rel=1e-8)
    rng = np.random.default_rng(0)
    noisy = [
        ch.fitted_derivative(2.0 * t + 1e-6 * rng.standard_normal(t.size), h) for _ in range(400)
    ]
    slopes, ses = np.array([n[0] for n in noisy]), np.array([n[1] for n in noisy])
    # the standard error matches the spread of the slope over noise draws (within 15%)
    assert np.std(slopes) == pytest.approx(np.mean(ses), rel=0.15)
    with pytest.raises(ValueError, match="2K"):
        ch.fitted_derivative([1.0, 2.0, 3.0, 4.0], h)


def test_derivative_check_holds_where_neurons_are_nearly_parallel():
    """The book profile with ``lam0 = 0.01`` (seed 21000) ends Stage 3 with student neurons
    within 1e-6 rad of their teachers, where angles computed from cosines are a staircase in
    small steps: the corrected sum must still lie within the fitted derivative's allowance at
    every network compared, the allowance must stay small enough to tell the printed sum
    apart (median below 1e-3 of the sum), and the printed sum must fail."""
    P = ch.SPEC.params("book", lam0=0.01, seed=21000)
    c = ch.certificate(P)
    l7 = ch.lemma7(P, c, ch.stage3(P, c.teacher))
    assert l7.covered.sum() > 100
    assert ch.lemma_f17_corrected_is_derivative(P, l7).outcome() is True
    assert np.median(l7.fd_allowance / np.abs(l7.fd_corrected)) < 1e-3
    assert ch.lemma_f17_printed_fails(P, l7).outcome() is True
