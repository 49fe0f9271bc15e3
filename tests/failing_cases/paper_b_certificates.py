"""Failing cases of the chapter paper_b/certificates: for each theorem and observation check, an
input where its statement is false, checked by the chapter module's own function."""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from failing_cases import Case
from twolayer.core import seeds
from twolayer.paper_b import certificate as cert
from twolayer.paper_b import landscape as land
from twolayer.paper_b import population as pop
from twolayer.paper_b.chapters import certificates as ch

CHAPTER = "paper_b/certificates"


@functools.cache
def _P():
    return ch.SPEC.params("smoke", mc_n=20_000, measures=20, grid=360)


@functools.cache
def _cert():
    return ch.certificate(_P())


def _unsolved():
    """A certificate built without the interpolation solve: alpha = sign(a*), b = 0, at
    ell = 2 (the large-ell limit used at a small ell): |eta| exceeds 1 next to the teachers."""
    C = _cert().C
    bad = replace(C, ell=2, alpha=C.signs.astype(float), c=np.zeros_like(C.c))
    ms = ch.certificate_measures(bad, _cert().teacher, _P().grid)
    return replace(
        _cert(),
        C=bad,
        rho_circle=ms["rho_circle"],
        rho_sphere=ms["rho_sphere"],
        side=ms["side"],
    )


@functools.cache
def _orders():
    return ch.orders(_P(), _cert())


@functools.cache
def _lemma9():
    """Lemma 9 on 20 random measures and Lemma F.3 at two lambdas (no Stage 3 run)."""
    c, P = _cert(), _P()
    rng = seeds.rng(P.seed, "lemma-9-measures")
    samples = [cert.random_measure(c.teacher, 12, rng) for _ in range(P.measures)]
    t = ch.lemma9_table(c.C, c.rho_sphere, c.teacher, samples, source=["random"] * P.measures)
    lams = np.array([0.04, 0.005])
    return _with_optima(
        ch.Lemma9(
            t["source"],
            t["pair"],
            t["pair_star"],
            t["mass_star"],
            t["mass"],
            t["far"],
            t["lhs1"],
            t["rhs1"],
            t["lhs2"],
            c.rho_sphere,
            lams,
            np.zeros(2),
            np.zeros(2),
            np.zeros(2),
            c.C.p_norm2(),
            float(np.abs(c.teacher.a).sum()),
        ),
        lams,
    )


def _orthogonal_atom(rho: float):
    """Lemma 9 (2) for the measure of one unit atom orthogonal to S_*, held to ``rho``."""
    c = _cert()
    B = c.teacher.info["basis"]
    n = np.eye(c.teacher.d)[:, 0] - B @ (B.T @ np.eye(c.teacher.d)[:, 0])
    n /= np.linalg.norm(n)
    t = ch.lemma9_table(c.C, rho, c.teacher, [(n[None, :], np.array([1.0]))], source=["orthogonal"])
    return replace(_lemma9(), lhs2=t["lhs2"], mass=t["mass"], far=t["far"], rho=rho)


def _with_optima(R, solve_at):
    """``R`` with the network-free optima at ``solve_at`` held to ``R.lams``."""
    c = _cert()
    opts = land.optima(c.teacher, solve_at, 120)
    return replace(
        R,
        opt_mass=np.array([o.mass() for o in opts]),
        opt_loss=np.array([o.loss(c.teacher) for o in opts]),
        opt_far=np.array(
            [cert.lemma9_terms(c.C, c.rho_sphere, c.teacher, o.U, c=o.c)["far"] for o in opts]
        ),
    )


def _l7(**fields):
    """A hand-made :class:`Lemma7` (the fields a check reads; the rest empty)."""
    empty = np.zeros(0)
    base = dict(
        snaps=[],
        epoch=empty,
        lam=empty,
        zeta=empty,
        resolution=empty,
        inner=empty,
        printed=empty,
        resolved=np.zeros(0, dtype=bool),
        applies=np.zeros(0, dtype=bool),
        covered=np.zeros(0, dtype=bool),
        fd=empty,
        fd_allowance=empty,
        fd_corrected=empty,
        fd_printed=empty,
        j=0,
        fd_j=0.0,
        inner_j=0.0,
        allowance_j=0.0,
    )
    base.update(fields)
    return ch.Lemma7(**base)


def near_teacher(t, per_teacher: int, shift: int = 0, seed: int = 3) -> pop.Net:
    """A student with ``per_teacher`` neurons of the teacher's sign within 0.05 rad of each
    direction of the 2-d teacher ``t`` (in S_*); neuron ``k m* + i`` sits next to teacher
    ``(i + shift) mod m*`` (also tests/paper_b/test_chapter_certificates.py)."""
    B = t.info["basis"]
    rng = np.random.default_rng(seed)
    U = t.W / np.linalg.norm(t.W, axis=1, keepdims=True)
    rows, a = [], []
    for _ in range(per_teacher):
        for i0 in range(t.m):
            i = (i0 + shift) % t.m
            ang = math.atan2(U[i] @ B[:, 1], U[i] @ B[:, 0]) + rng.uniform(-0.05, 0.05)
            rows.append((math.cos(ang) * B[:, 0] + math.sin(ang) * B[:, 1]) * 0.9)
            a.append(t.a[i] * 0.9 / per_teacher)
    return pop.Net(np.array(a), np.array(rows), 0.01, 0.01 * B[:, 0])


def _near_teacher(per_teacher: int, seed: int = 3, shift: int = 0) -> pop.Net:
    """:func:`near_teacher` of the page's teacher."""
    return near_teacher(_cert().teacher, per_teacher, shift, seed)


def _printed_holds():
    """m = m* = 3: student neuron i is the only neuron of teacher i's cell, so the printed
    grad_{w_i} is the gradient of the neuron the direction moves: the printed sum is exact."""
    t = _cert().teacher
    lam, zeta = 0.01, 1e-3
    s = cert.lemma7_snapshot(_near_teacher(1), t, lam, zeta, p_norm=math.sqrt(_cert().C.p_norm2()))
    assert s["covered"]
    return _l7(
        inner=np.array([s["inner"]]),
        printed=np.array([s["printed"]]),
        covered=np.array([True]),
    )


def _printed_in_place_of_corrected():
    """Two neurons per teacher, neuron i in teacher i+1's cell: the printed sum (grad_{w_i})
    put where the corrected one goes, against the fitted derivative."""
    t = _cert().teacher
    net = _near_teacher(2, shift=1)
    d = ch.directional_derivative(net, t, 0.01, 0.1)
    fd, printed = d.fd, d.printed
    return _l7(
        fd=np.array([fd]),
        fd_allowance=ch.fd_allowance([d], 1),
        fd_corrected=np.array([printed]),
        fd_printed=np.array([printed]),
        covered=np.array([True]),
    )


CASES = {
    "certificate_nondegenerate_on_circle": Case(
        "a certificate without the interpolation solve (alpha = sign a*, b = 0, ell = 2)",
        lambda: ch.certificate_nondegenerate_on_circle(_P(), _unsolved()),
    ),
    "certificate_nondegenerate_on_sphere": Case(
        "a certificate without the interpolation solve (alpha = sign a*, b = 0, ell = 2)",
        lambda: ch.certificate_nondegenerate_on_sphere(_P(), _unsolved()),
    ),
    "one_sided_curvatures_positive": Case(
        "a certificate without the interpolation solve: |eta| > 1 beside the teachers",
        lambda: ch.one_sided_curvatures_positive(_P(), _unsolved()),
    ),
    "nondegenerate_for_every_ell": Case(
        "the unsolved certificate's rho_eta in place of the smallest order's",
        lambda: ch.nondegenerate_for_every_ell(
            _P(),
            replace(_orders(), rho=np.r_[_unsolved().rho_circle, _orders().rho[1:]]),
        ),
    ),
    "alpha_to_sign_b_to_zero": Case(
        "a table whose distance to (sign a*, 0) grows at the last order",
        lambda: ch.alpha_to_sign_b_to_zero(
            _P(),
            replace(_orders(), alpha_dev=np.r_[_orders().alpha_dev[:-1], 0.1]),
        ),
    ),
    "eta_is_correlation_with_p": Case(
        "eta of the ell = 2 certificate against the Monte Carlo of the ell = 4 p",
        lambda: ch.eta_is_correlation_with_p(
            _P(),
            replace(
                ch.monte_carlo(_P(), _cert()),
                eta=cert.solve(_cert().teacher, 2).eta(ch.monte_carlo(_P(), _cert()).W),
            ),
        ),
    ),
    "lemma9_correlation_bound": Case(
        "the right-hand side with a quarter of ||p|| (a multiplier off by a factor 4)",
        lambda: ch.lemma9_correlation_bound(_P(), replace(_lemma9(), rhs1=_lemma9().rhs1 / 4)),
    ),
    "lemma9_far_mass_bound": Case(
        "(2) with the circle's rho_eta for an atom orthogonal to S_* (eta = 0, delta = pi/2)",
        lambda: ch.lemma9_far_mass_bound(_P(), _orthogonal_atom(_cert().rho_circle)),
    ),
    "lemma_f3_mass": Case(
        "the optimum of a lambda 20 times larger held to lambda",
        lambda: ch.lemma_f3_mass(_P(), _with_optima(_lemma9(), 20 * _lemma9().lams)),
    ),
    "lemma_f3_loss": Case(
        "the optimum of a lambda 20 times larger held to lambda",
        lambda: ch.lemma_f3_loss(_P(), _with_optima(_lemma9(), 20 * _lemma9().lams)),
    ),
    "claim1_far_mass_of_optimum": Case(
        "an 'optimum' with a random measure's far mass (about 1) at lambda = 1e-3",
        lambda: ch.claim1_far_mass_of_optimum(
            _P(),
            replace(_lemma9(), lams=np.array([1e-3, 1e-3]), opt_far=_lemma9().far[:2]),
        ),
    ),
    "test_function_width_exponent": Case(
        "half widths falling like 1/ell",
        lambda: ch.test_function_width_exponent(
            _P(),
            replace(
                ch.test_function(_P(), _cert()),
                slope=float(np.polyfit(np.log([4, 8, 16]), np.log([1 / 4, 1 / 8, 1 / 16]), 1)[0]),
            ),
        ),
    ),
    "split_pair_loss_delta_cubed": Case(
        "losses falling like delta^2 (those of a single rotated atom)",
        lambda: ch.split_pair_loss_delta_cubed(
            _P(),
            replace(
                ch.split_pair(_P(), _cert(), 0),
                pair_slope=ch.split_pair(_P(), _cert(), 0).single_slope,
            ),
        ),
    ),
    "rotated_neuron_loss_delta_squared": Case(
        "losses falling like delta^3 (those of a split pair)",
        lambda: ch.rotated_neuron_loss_delta_squared(
            _P(),
            replace(
                ch.split_pair(_P(), _cert(), 0),
                single_slope=ch.split_pair(_P(), _cert(), 0).pair_slope,
            ),
        ),
    ),
    "lemma7_inner_product_at_least_zeta_over_8": Case(
        "<grad, D> < 0 at a network where the hypotheses hold (printed sums of seed 12)",
        lambda: ch.lemma7_inner_product_at_least_zeta_over_8(
            _P(),
            _l7(
                inner=np.array([-0.0029 * 1e-4, 3e-4]),
                zeta=np.array([1e-4, 1e-4]),
                resolution=np.array([1e-7, 1e-7]),
                applies=np.array([True, True]),
            ),
        ),
    ),
    "lemma_f17_corrected_is_derivative": Case(
        "the printed sum in place of the corrected one (two neurons per teacher)",
        lambda: ch.lemma_f17_corrected_is_derivative(_P(), _printed_in_place_of_corrected()),
    ),
    "lemma_f17_printed_fails": Case(
        "one neuron per teacher, neuron i in teacher i's cell: the printed sum is exact",
        lambda: ch.lemma_f17_printed_fails(_P(), _printed_holds()),
    ),
}
