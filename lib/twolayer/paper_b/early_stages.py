"""Studies of Algorithm 1's early stages (Stage 1's gradient step, Stage 2's norm adjustment),
on the exact population loss: the experiment code of {ref}`chapter-paperb-stage1` and
{ref}`chapter-paperb-stage2`.

Stage 1 (Lemma 3, Lemma C.1):

* :func:`first_step_geometry`: per neuron after the step, the fraction of its norm outside
  ``S_*``, the distance to the corrected ``4 a_i sigma_2^2 H wbar_i`` and to the printed
  ``-2 a_i sigma_2^2 H wbar_i``, its norm and output weight;
* :func:`limit_medians`: the ``d -> infinity`` medians of ``sqrt(d)`` x the off-subspace
  fraction and of ``||w_i^(1)||``, by sampling ``z ~ N(0, I_r)`` (our derivation);
* :func:`dimension_sweep`, :func:`coverage_sweep`: the two sweeps of the chapter.

Stage 2 (Lemma 4):

* :func:`subgradient_trace`: the paper's subgradient method with the quantities of the
  guarantee that the proof of Lemma 4 uses;
* :func:`zero_threshold`: the weight decay above which Stage 2 keeps no neuron (exact, by the
  Lasso's optimality condition at ``a = 0``);
* :func:`rescaled_teacher`, :func:`lambda_sweep`, :func:`eps0_sweep`.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import seeds, stats
from . import algorithm1 as alg
from . import features as feat
from . import fits, hermite
from . import population as pop
from . import teacher as tmod
from .kernels import kappa2

SIGMA2_SQ = hermite.relu_coefficient(2) ** 2  # = 1 / (4 pi)
KAPPA2_ONE = float(kappa2(1.0))  # = 1/4 - 1/(2 pi)


# --- Stage 1 -------------------------------------------------------------------------------------


def first_step_geometry(net0: pop.Net, net1: pop.Net, teacher: tmod.Teacher) -> dict:
    """Per neuron of the step ``net0 -> net1``: ``off`` (``||P_perp w^(1)|| / ||w^(1)||``),
    ``err_corrected`` and ``err_printed`` (relative distances to ``4 a sigma_2^2 H wbar`` and
    to ``-2 a sigma_2^2 H wbar``), ``norm`` (``||w^(1)||``) and ``a`` (``a^(1)``)."""
    frac_in = feat.subspace_fraction(net1.W, teacher.info["basis"])
    wbar0 = net0.W / np.linalg.norm(net0.W, axis=1, keepdims=True)
    Hw = wbar0 @ teacher.H()
    corrected = 4 * net0.a[:, None] * SIGMA2_SQ * Hw
    printed = -2 * net0.a[:, None] * SIGMA2_SQ * Hw
    norm1 = np.linalg.norm(net1.W, axis=1)
    return {
        "off": np.sqrt(np.clip(1 - frac_in**2, 0, 1)),
        "err_corrected": np.linalg.norm(net1.W - corrected, axis=1) / norm1,
        "err_printed": np.linalg.norm(net1.W - printed, axis=1) / norm1,
        "norm": norm1,
        "a": net1.a.copy(),
    }


def limit_medians(teacher: tmod.Teacher, samples: int, seed: int) -> dict:
    """The ``d -> infinity`` medians (our derivation from the closed-form gradient): with
    ``z ~ N(0, I_r)`` the coordinates of ``sqrt(d) wbar`` in ``S_*`` and ``H_S`` the teacher's
    ``H`` there, ``sqrt(d) ||P_perp w^(1)|| / ||w^(1)|| -> |z^T H_S z| / (2 ||H_S z||)`` and
    ``||w^(1)|| -> 4 sigma_2^2 ||H_S z||``."""
    B = teacher.info["basis"]
    HS = B.T @ teacher.H() @ B
    z = seeds.rng(seed, "limit-medians").standard_normal((samples, B.shape[1]))
    Hz = np.linalg.norm(z @ HS, axis=1)
    quad = np.abs(np.einsum("ni,ij,nj->n", z, HS, z))
    return {
        "off_sqrt_d": float(np.median(quad / (2 * np.maximum(Hz, 1e-300)))),
        "norm": float(np.median(4 * SIGMA2_SQ * Hz)),
    }


def median_se(x, n_boot: int = 200, seed: int = 0) -> float:
    """Bootstrap standard error of the median of ``x`` (resampling its entries)."""
    x = np.asarray(x, dtype=np.float64)
    rng = np.random.default_rng(seed)
    meds = np.median(x[rng.integers(0, len(x), (n_boot, len(x)))], axis=1)
    return float(meds.std(ddof=1))


def dimension_sweep(ds, m: int, kind: str, r: int, *, m_star: int, seed: int) -> list[dict]:
    """Stage 1 at every ``d`` of ``ds`` (width ``m``), for the teacher ``tmod.make(kind, d, r,
    m_star, teacher seed)``: the same teacher shape embedded in each ``R^d``. One row per
    ``d``: medians over the distinct neurons (a symmetric pair carries one direction) and
    their bootstrap standard errors, the worst ``|a^(1)|`` against its exact bound, and
    ``alpha_1``, ``beta_1``."""
    rows = []
    t_seed = seeds.derive(seed, "teacher")
    for d in ds:
        t = tmod.make(kind, d, r, m_star, seed=t_seed)
        net0 = alg.symmetric_init(d, m, seeds.derive(seed, "init", d))
        net1 = alg.stage1(net0, t)
        g = first_step_geometry(net0, net1, t)
        half = slice(0, m // 2)  # the second half repeats the first (up to sign)
        off, ec, ep, nrm = (g[k][half] for k in ("off", "err_corrected", "err_printed", "norm"))
        rows.append(
            {
                "d": d,
                "median off": float(np.median(off)),
                "sqrt(d) median off": float(np.median(off) * math.sqrt(d)),
                "se sqrt(d) median off": median_se(off, seed=d) * math.sqrt(d),
                "median err corrected": float(np.median(ec)),
                "se median err corrected": median_se(ec, seed=d),
                "median err printed": float(np.median(ep)),
                "triangle excess": float(np.max(np.abs(ep - 1.5) - 2.5 * ec)),
                "median norm": float(np.median(nrm)),
                "se median norm": median_se(nrm, seed=d),
                "max |a1| sqrt(m) / bound": float(
                    np.abs(g["a"]).max() * math.sqrt(m) / (2 * KAPPA2_ONE * np.abs(t.a).sum())
                ),
                "|alpha1| + ||beta1||": abs(net1.alpha) + float(np.linalg.norm(net1.beta)),
            }
        )
    return rows


def coverage(teacher: tmod.Teacher, W: np.ndarray, project: bool) -> float:
    """``max_i min_j angle(w*_i, w_j)`` up to sign (Lemma 3 (i)'s ``eps0``), in ``R^d`` or,
    with ``project``, between the projections on ``S_*``."""
    B = teacher.info["basis"]
    Ws = teacher.W
    if project:
        W, Ws = W @ B, Ws @ B
    U = W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-300)
    Us = Ws / np.linalg.norm(Ws, axis=1, keepdims=True)
    return float(tmod.angles_up_to_sign(U, Us).min(0).max())


def default_m_star(kind: str, r: int) -> int:
    """The teacher width a page uses when it leaves ``m_star`` open: ``r + 1`` neurons (a
    random teacher), ``r (r + 1) / 2`` (the degenerate one, the fewest that can prescribe
    ``H``), 3 (the prototype)."""
    return {"random": r + 1, "degenerate": r * (r + 1) // 2, "prototype": 3}[kind]


def teachers(
    kind: str, d: int, r: int, m_star: int, *, repeats: int, seed: int, purpose: str
) -> list:
    """``repeats`` independent teachers ``tmod.make(kind, d, r, m_star, .)``, their seeds
    derived from ``(seed, purpose, r, s)``."""
    return [
        tmod.make(kind, d, r, m_star, seed=seeds.derive(seed, purpose, r, s))
        for s in range(repeats)
    ]


def coverage_sweep(ms, teacher_list, seed: int) -> dict:
    """Lemma 3 (i): after Stage 1, the coverage inside ``S_*`` and in ``R^d`` for every width
    of ``ms`` (made even) and every teacher of ``teacher_list`` (one independent
    initialization each). Returns arrays ``(len(ms), len(teacher_list))`` under ``"in"``
    and ``"full"``."""
    cov_in = np.empty((len(ms), len(teacher_list)))
    cov_full = np.empty_like(cov_in)
    for s, t in enumerate(teacher_list):
        r = t.info["r"]
        for i, m in enumerate(ms):
            net0 = alg.symmetric_init(t.d, m + m % 2, seeds.derive(seed, "coverage-init", r, s, m))
            W1 = alg.stage1(net0, t).W
            cov_in[i, s] = coverage(t, W1, True)
            cov_full[i, s] = coverage(t, W1, False)
    return {"in": cov_in, "full": cov_full}


def slope_estimate(ms, cov: np.ndarray, seed: int) -> fits.Estimate:
    """Log-log slope of the mean coverage (over the repeats, the columns) against the width,
    with its bootstrap spread over the repeats."""
    return fits.bootstrap(lambda Y: stats.fit_slope(ms, Y.mean(-1)), [cov], seed=seed)


# --- Stage 2 -------------------------------------------------------------------------------------


def subgradient_trace(
    a0, G, b, c, *, weights, lam: float, steps: int, a_ref, v_ref: float, eta: float | None = None
) -> dict:
    """The paper's subgradient method (Appendix D) for ``steps`` steps from ``a0`` with the
    quantities of the guarantee in the proof of Lemma 4 (convexity only): for every ``T``,
    ``min_{t<T} gap_t <= (||a0 - a_ref||^2 + eta^2 sum_{t<T} ||g_t||^2) / (2 eta T)`` where
    ``gap_t`` is the objective minus the optimum ``v_ref`` at ``a_ref``. ``eta`` defaults to
    ``1 / (2 lambda_max(G))``, one over the smoothness of the quadratic part."""
    if eta is None:
        eta = 1.0 / (2 * np.linalg.eigvalsh(G)[-1])
    a = np.array(a0, dtype=np.float64)
    values = [alg.lasso_objective(a, G, b, c, weights=weights, lam=lam)]
    sq = np.empty(steps)
    for t in range(steps):
        g = 2 * G @ a - 2 * b + lam * weights * np.sign(a)
        sq[t] = g @ g
        a = a - eta * g
        values.append(alg.lasso_objective(a, G, b, c, weights=weights, lam=lam))
    values = np.asarray(values)
    best_gap = np.minimum.accumulate(values) - v_ref
    T = np.arange(1, steps + 1)
    bound = (np.sum((np.asarray(a0) - a_ref) ** 2) + eta**2 * np.cumsum(sq)) / (2 * eta * T)
    return {"values": values, "best_gap": best_gap, "bound": bound, "T": T, "eta": eta}


def zero_threshold(W: np.ndarray, teacher: tmod.Teacher) -> float:
    """The smallest ``lambda`` at which Stage 2 (with ``W^(1) = W`` fixed) keeps no neuron.

    The Lasso ``a^T G a - 2 b^T a + c + lambda sum_i ||w_i|| |a_i|`` is convex, so ``a = 0``
    is optimal iff ``0`` is in its subdifferential there: ``|2 b_i| <= lambda ||w_i||`` for
    every ``i``, i.e. ``lambda >= 2 max_i |sum_j a*_j kappa2(wbar_i . w*_j)|``. For a neuron
    aligned with an isolated teacher this is ``2 kappa2(1) |a*_i|``."""
    _, b, _, n = alg.stage2_problem(W, teacher)
    return float(2 * np.max(np.abs(b) / np.maximum(n, 1e-300)))


KEPT_TOL = 1e-6


def count_kept(a, W: np.ndarray, teacher: tmod.Teacher) -> int:
    """Neurons that Stage 2 keeps: mass ``|a_i| ||w_i||`` above ``KEPT_TOL`` times the
    teacher's ``||a*||_1`` (an interior-point solver leaves ~1e-8 where the optimum is 0)."""
    mass = np.abs(np.asarray(a)) * np.linalg.norm(W, axis=1)
    return int(np.sum(mass > KEPT_TOL * np.abs(teacher.a).sum()))


def rescaled_teacher(net1: pop.Net, teacher: tmod.Teacher) -> np.ndarray:
    """The proof of Lemma 4's ``a_hat_*``: ``a*_i / ||w_j||`` on the student neuron ``j``
    closest (up to sign) to each teacher neuron ``i``, zero elsewhere."""
    A = feat.angles(net1, teacher)
    closest = A.argmin(0)
    a_hat = np.zeros(len(net1.a))
    a_hat[closest] = teacher.a / np.linalg.norm(net1.W[closest], axis=1)
    return a_hat


def lambda_sweep(net1: pop.Net, teacher: tmod.Teacher, lams) -> list[dict]:
    """Stage 2 at every weight decay of ``lams``: the loss ``L`` after it, the neurons kept
    (``a_i != 0``) and the optimum of the Lasso."""
    rows = []
    for lam in lams:
        net2, info = alg.stage2(net1, teacher, lam)
        rows.append(
            {
                "lambda": lam,
                "L after Stage 2": pop.loss(net2, teacher),
                "kept": count_kept(info["a"], net1.W, teacher),
                "objective": info["value"],
            }
        )
    return rows


def population_zero_threshold(teacher: tmod.Teacher, grid: int) -> float:
    """The smallest ``lambda`` at which the zero measure minimizes ``L_lambda(mu)`` over all
    measures on the sphere: ``2 sup_w |sum_j a*_j kappa2(w . w*_j)|`` (the same optimality
    condition as :func:`zero_threshold`, over every direction), the supremum taken over a grid
    of ``S_*`` and the teacher directions (off ``S_*`` every ``|w . w*_j|`` only shrinks)."""
    B = teacher.info["basis"]
    U = np.concatenate(
        [
            teacher.W / np.linalg.norm(teacher.W, axis=1, keepdims=True),
            feat.sphere_grid(B.shape[1], grid) @ B.T,
        ]
    )
    cs = teacher.a * np.linalg.norm(teacher.W, axis=1)
    Us = teacher.W / np.linalg.norm(teacher.W, axis=1, keepdims=True)
    return float(2 * np.max(np.abs(kappa2(U @ Us.T) @ cs)))


def eps0_sweep(ms, teacher_list, lam_scale: float, grid: int, *, seed: int) -> dict:
    """Lemma 4 over widths: for every width of ``ms`` (made even) and every teacher of
    ``teacher_list`` (one independent initialization each), Stage 1, then Stage 2 at the
    paper's schedule scaled down, ``lambda = lam_scale sqrt(eps0)``, and its optimality gap
    ``zeta`` against the grid estimate of ``min_mu L_lambda(mu)``
    (:func:`~twolayer.paper_b.features.min_measure_loss`). Arrays ``(len(ms),
    len(teacher_list))``: ``eps0``, ``lam``, ``zeta``, ``kept`` and ``threshold``
    (:func:`zero_threshold`)."""
    shape = (len(ms), len(teacher_list))
    out = {k: np.empty(shape) for k in ("eps0", "lam", "zeta", "kept", "threshold")}
    for s, t in enumerate(teacher_list):
        for i, m in enumerate(ms):
            net0 = alg.symmetric_init(t.d, m + m % 2, seeds.derive(seed, "eps0-init", s, m))
            net1 = alg.stage1(net0, t)
            eps0 = coverage(t, net1.W, False)
            lam = lam_scale * math.sqrt(eps0)
            net2, info = alg.stage2(net1, t, lam)
            zeta = pop.regularized_loss(net2, t, lam) - feat.min_measure_loss(t, lam, grid=grid)
            out["eps0"][i, s], out["lam"][i, s], out["zeta"][i, s] = eps0, lam, zeta
            out["kept"][i, s] = count_kept(info["a"], net1.W, t)
            out["threshold"][i, s] = zero_threshold(net1.W, t)
    return out


def zeta_eps0_slope(sweep: dict, seed: int) -> fits.Estimate:
    """Lemma 4's ``zeta = O(eps0)`` as a rate: the log-log slope of ``zeta`` against ``eps0``
    pooled over every run of :func:`eps0_sweep`, with its bootstrap spread over the teachers
    (the columns). Raises ``ValueError`` if some ``zeta <= 0`` (the grid estimate of the
    minimum is then too coarse to give a gap)."""
    return fits.bootstrap(
        lambda E, Z: stats.fit_slope(np.ravel(E), np.ravel(Z)),
        [sweep["eps0"], sweep["zeta"]],
        seed=seed,
    )
