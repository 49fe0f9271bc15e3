"""Chapter ``paper_b/stage2`` (page ``notebooks/paper_b/stage2.md``, "Stage 2: a convex norm
adjustment"): Lemma 4 of Paper B.

With the first layer frozen after Stage 1, fitting the output weights is a weighted Lasso
(Claim B.1 and the proof of Lemma 4). :func:`compute` runs the page's experiment: the Lasso of
one Stage 1 network solved by the paper's subgradient method and by a conic solver, Stage 2 and
balancing, the optimality gap ``zeta`` against the grid estimate of ``min_mu L_lambda(mu)``,
the sweep of ``zeta`` against ``eps0`` over widths (Lemma 4's rate) and the weight decay above
which Stage 2 keeps no neuron. The hypotheses and checks the page records are the functions
below, each callable on a hand-made :class:`Result` (``tests/failing_cases``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from twolayer.core import seeds
from twolayer.core.params import Choice, Constraint, Float, Int, ListOf, Optional
from twolayer.page.checks import Claim, Hypothesis, make_hypothesis
from twolayer.page.contract import ChapterSpec
from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import early_stages as es
from twolayer.paper_b import features as feat
from twolayer.paper_b import fits
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod
from twolayer.paper_b.chapters import assumptions as paper_assumptions

#: Stage 3's weight decay ``lambda_0`` (``lam0`` of ``notebooks/paper_b/stage3.md``, the same
#: in every profile there; a test compares the two). The page states it where it says at which
#: weight decay the book runs each stage.
STAGE3_LAM0 = 0.04

#: ``zeta_falls_with_eps0`` needs this many teachers per width. Measured at book size
#: (``d = 20``, widths 16, 64, 256, ``lam_scale = 0.05``): with 4 teachers the upper estimate
#: of the ratio ``q`` reaches 1.03 (seed 1) and 1.01 (seed 8); with 8 it stays at or below
#: 0.86 over seeds 0-9 (smoke size, 2 widths x 3 teachers: ``q`` = 0.26, 0.44, 1.39 at seeds 0,
#: 11, 12: one teacher decides it).
MIN_EPS0_TEACHERS = 8

#: ... and a scaled-down schedule ``lambda = s sqrt(eps0)`` with ``s`` at most this. The
#: proof's middle term ``lambda (||a*||_1 - |mu*_lambda|_1) = O(s^2 eps0)`` falls only as fast
#: as ``eps0``; at ``s = 0.3`` it dominates and ``zeta / eps0`` levels off, which Lemma 4
#: allows but which a falling ratio cannot show (measured: ``q`` up to 2.1, seeds 0-7).
MAX_LAM_SCALE = 0.1

#: ... and widths whose widest is at least this many times the narrowest (``eps0`` falls
#: about as ``m^(-1/2)``, so a factor 4 in ``eps0``). The bootstrap standard error of
#: ``log q`` over 8 teachers was 0.26 to 0.54 in the book-profile runs of the robustness
#: page, so the strict side needs ``q`` below about ``exp(-3 x 0.3) = 0.4``: at widths 16 and
#: 128 (a factor 8, ``eps0`` falling 2.9 times) ``q`` was 0.42 with an upper estimate of 1.09
#: (seed 21000), and 1.24 at the smoke sizes with 10 teachers, while every sweep spanning a
#: factor 16 (widths 16-64-256, 8-32-128, 20-80-320) resolved it. Decided by the parameters.
MIN_WIDTH_SPAN = 16


def _m_star(P) -> int:
    return P.m_star or es.default_m_star(P.teacher, P.r)


SPEC = ChapterSpec(
    chapter="paper_b/stage2",
    spec={
        "teacher": Choice(
            "random",
            "degenerate",
            explore=True,
            doc="random teacher (Assumptions 1-3 hold) or degenerate "
            "(rank H = r - 1: Assumption 3 fails)",
        ),
        "r": Choice(2, 3, explore=True, doc="dimension of the teacher subspace"),
        "m_star": Optional(
            Int(2, 6),
            explore=(2, 4),
            doc="teacher neurons (None: r + 1; degenerate: r(r+1)/2)",
        ),
        "d": Int(4, 2000, explore=(8, 40), doc="input dimension"),
        "m": Int(4, 4000, explore=(20, 200), doc="student width (even)"),
        "lam": Float(
            0,
            1,
            lo_open=True,
            explore=(0.002, 0.5),
            doc="Stage 2 weight decay of the main run",
        ),
        "lams": ListOf(
            Float(0, 1, lo_open=True),
            min_len=3,
            increasing=True,
            explore=[[0.005, 0.05, 0.5], [0.001, 0.01, 0.1, 0.3]],
            doc="weight decays of the sweep",
        ),
        "sub_steps": Int(10, 10**6, explore=(1000, 6000), doc="subgradient steps"),
        "grid": Int(
            20,
            5000,
            explore=(60, 400),
            doc="directions of S_* in the estimate of min_mu L_lambda(mu)",
        ),
        "ms_eps0": ListOf(
            Int(4, 4000),
            min_len=2,
            increasing=True,
            explore=[[16, 128], [8, 32, 128], [20, 80, 320]],
            doc="student widths of the zeta-against-eps0 study",
        ),
        # explored below the 8 teachers from which zeta_falls_with_eps0 applies; at the smoke
        # widths (16 and 128, a span below MIN_WIDTH_SPAN) it does not apply whatever the
        # number of teachers (with 10 it failed there before: 1.24 > 1 at seed 21000)
        "eps0_teachers": Int(
            1, 50, explore=(2, 6), doc="teachers (with their initializations) per width"
        ),
        "lam_scale": Float(
            0,
            10,
            lo_open=True,
            explore=(0.01, 1.0),
            doc="the zeta-against-eps0 study runs Stage 2 at "
            "lambda = lam_scale sqrt(eps0) (the paper: 1)",
        ),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "teacher": "random",
        "r": 2,
        "m_star": None,
        "d": None,
        "m": None,
        "lam": 0.02,
        "lams": None,
        "sub_steps": None,
        "grid": None,
        "ms_eps0": None,
        "eps0_teachers": None,
        "lam_scale": 0.05,
    },
    profiles={
        "smoke": {
            "d": 16,
            "m": 40,
            "sub_steps": 1500,
            "lams": [0.005, 0.02, 0.1, 0.5],
            "grid": 80,
            "ms_eps0": [16, 128],
            "eps0_teachers": 3,
        },
        "book": {
            "d": 20,
            "m": 100,
            "sub_steps": 5000,
            "lams": [0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5],
            "grid": 360,
            "ms_eps0": [16, 64, 256],
            "eps0_teachers": MIN_EPS0_TEACHERS,
        },
        "paper": {
            "d": 40,
            "m": 400,
            "sub_steps": 20_000,
            "lams": [0.00125, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5],
            "grid": 720,
            "ms_eps0": [16, 32, 64, 128, 256, 512],
            "eps0_teachers": 8,
        },
    },
    constraints=[
        Constraint(
            "m_star",
            lambda P: (
                tmod.m_star_range(P.teacher, P.r)[0]
                <= _m_star(P)
                <= tmod.m_star_range(P.teacher, P.r)[1]
            ),
            "must lie in the teacher's range (random: r..4 for r = 2, r..6 for "
            "r = 3; degenerate: r(r+1)/2..)",
        ),
        Constraint("m", lambda P: P.m % 2 == 0, "must be even (symmetric initialization)"),
        Constraint("d", lambda P: P.d > P.r, "must exceed r"),
    ],
)


# --- the experiment ------------------------------------------------------------------------------


@dataclass
class Trace:
    """The paper's subgradient method on the Stage 2 Lasso (:func:`es.subgradient_trace`):
    the objective at every iterate (``values``, ``steps + 1`` of them), the best gap to the
    conic optimum ``min_{t<=T} L(a_t) - L(a_ref)`` (``best_gap``), the guarantee of the proof
    of Lemma 4 at ``T = 1..steps`` (``bound``), those ``T`` and the step size ``eta``."""

    values: np.ndarray
    best_gap: np.ndarray
    bound: np.ndarray
    T: np.ndarray
    eta: float


@dataclass
class Result:
    """What the page computed (:func:`compute`), in the page's order."""

    # the main run: teacher, Stage 1, the Lasso and its two solvers
    tch: Any  # the teacher (twolayer.paper_b.teacher.Teacher)
    eps0_teacher_list: list  # the teachers of the eps0 sweep
    net1: Any  # the network after Stage 1
    eps0: float  # its coverage (Lemma 3's eps0), radians
    G: np.ndarray
    b: np.ndarray
    c: float
    wts: np.ndarray  # the Lasso's weights ||w_i||
    a_ref: np.ndarray  # the conic solver's solution
    v_ref: float  # and its objective
    trace: Trace
    # Stage 2 (conic) and balancing
    net2: Any
    a2: np.ndarray  # the solution a before balancing
    min_mu: float  # grid estimate of min_mu L_lambda(mu)
    zeta: float
    v_hat: float  # the Lasso objective at the rescaled teacher a_hat_*
    balance_err: float
    f_same: float
    loss1: float  # L after Stage 1
    loss2: float  # L after Stage 2
    loss_reg: float  # L_lambda after balancing
    kept: int  # neurons kept by Stage 2 at lambda = P.lam
    # Lemma 4 as a rate
    grid_eps0: int
    eps_sweep: dict  # arrays (len(ms_eps0), eps0_teachers): eps0, lam, zeta, kept, threshold
    z_est: fits.Estimate | None  # pooled log-log slope of zeta against eps0
    # the weight decay threshold
    lam_paper: float  # sqrt(eps0)
    kept_paper: int
    thr: float  # lambda_zero of this Stage 1
    thr_pop: float  # lambda_0 over all measures
    zeta_paper: float
    sweep: list  # es.lambda_sweep rows


def compute(P) -> Result:
    """Run the page's experiment at the validated parameters ``P``.

    Args:
        P: the page's parameters (``SPEC.params(...)`` or the page's ``contract.validate()``).

    Returns:
        a :class:`Result`. Every draw derives from ``P.seed``: the teacher from
        ``(seed, "teacher")``, the initialization from ``(seed, "init")``, the sweep's
        teachers from ``(seed, "eps0-teacher", r, s)``, the balancing inputs from
        ``(seed, "balance-inputs")``, the bootstrap from ``(seed, "boot")``.
    """
    tch = tmod.make(P.teacher, P.d, P.r, _m_star(P), seed=seeds.derive(P.seed, "teacher"))
    eps0_teacher_list = es.teachers(
        P.teacher,
        P.d,
        P.r,
        _m_star(P),
        repeats=P.eps0_teachers,
        seed=P.seed,
        purpose="eps0-teacher",
    )
    net1 = alg.stage1(alg.symmetric_init(P.d, P.m, seeds.derive(P.seed, "init")), tch)
    eps0 = es.coverage(tch, net1.W, False)
    G, b, c, wts = alg.stage2_problem(net1.W, tch)
    a_ref, v_ref = alg.stage2_cvxpy(G, b, c, wts, lam=P.lam)
    run = es.subgradient_trace(
        net1.a, G, b, c, weights=wts, lam=P.lam, steps=P.sub_steps, a_ref=a_ref, v_ref=v_ref
    )
    trace = Trace(run["values"], run["best_gap"], run["bound"], run["T"], run["eta"])

    # Stage 2 (conic), balancing, zeta
    net2, info = alg.stage2(net1, tch, P.lam)
    min_mu = feat.min_measure_loss(tch, P.lam, grid=P.grid)
    zeta = pop.regularized_loss(net2, tch, P.lam) - min_mu
    v_hat = alg.lasso_objective(es.rescaled_teacher(net1, tch), G, b, c, weights=wts, lam=P.lam)
    balance_err = float(np.abs(np.abs(net2.a) - np.linalg.norm(net2.W, axis=1)).max())
    X = seeds.rng(P.seed, "balance-inputs").standard_normal((2000, P.d))
    f_same = float(np.abs(net2(X) - pop.Net(info["a"], net1.W, net2.alpha, net2.beta)(X)).max())
    loss1, loss2 = pop.loss(net1, tch), pop.loss(net2, tch)
    loss_reg = pop.regularized_loss(net2, tch, P.lam)
    kept = es.count_kept(info["a"], net1.W, tch)

    # Lemma 4 as a rate. For r = 2 the minimum over measures moves by < 1e-6 between 120 and
    # 360 grid directions, far below zeta: the sweep uses at most 120; r = 3 keeps the grid.
    grid_eps0 = P.grid if P.r == 3 else min(P.grid, 120)
    eps_sweep = es.eps0_sweep(P.ms_eps0, eps0_teacher_list, P.lam_scale, grid_eps0, seed=P.seed)
    try:
        z_est = es.zeta_eps0_slope(eps_sweep, seeds.derive(P.seed, "boot"))
    except ValueError:
        z_est = None

    # the weight decay above which Stage 2 keeps nothing
    lam_paper = math.sqrt(eps0)
    net_p, info_p = alg.stage2(net1, tch, lam_paper)
    kept_paper = es.count_kept(info_p["a"], net1.W, tch)
    thr = es.zero_threshold(net1.W, tch)
    thr_pop = es.population_zero_threshold(tch, P.grid)
    zeta_paper = pop.regularized_loss(net_p, tch, lam_paper) - feat.min_measure_loss(
        tch, lam_paper, grid=grid_eps0
    )
    sweep = es.lambda_sweep(net1, tch, P.lams)
    return Result(
        tch=tch,
        eps0_teacher_list=eps0_teacher_list,
        net1=net1,
        eps0=eps0,
        G=G,
        b=b,
        c=c,
        wts=wts,
        a_ref=a_ref,
        v_ref=v_ref,
        trace=trace,
        net2=net2,
        a2=info["a"],
        min_mu=min_mu,
        zeta=zeta,
        v_hat=v_hat,
        balance_err=balance_err,
        f_same=f_same,
        loss1=loss1,
        loss2=loss2,
        loss_reg=loss_reg,
        kept=kept,
        grid_eps0=grid_eps0,
        eps_sweep=eps_sweep,
        z_est=z_est,
        lam_paper=lam_paper,
        kept_paper=kept_paper,
        thr=thr,
        thr_pop=thr_pop,
        zeta_paper=zeta_paper,
        sweep=sweep,
    )


# --- hypotheses ----------------------------------------------------------------------------------


def assumption_list(teachers) -> list[Hypothesis]:
    """Paper B's Assumptions 1-3 for ``teachers`` (the worst case counts), as hypotheses
    built without a page (:func:`twolayer.paper_b.chapters.assumptions`)."""
    return paper_assumptions(teachers)


def assumptions(P, R) -> list[Hypothesis]:
    """Paper B's Assumptions 1-3 (``b-asm-1..3``) for the main teacher and the sweep's teachers
    (the worst case counts).

    Args:
        P: the parameters (unused; the signature of every hypothesis).
        R: a :class:`Result` (``tch``, ``eps0_teacher_list``).

    Returns:
        ``[assumption_1, assumption_2, assumption_3]``.
    """
    return assumption_list([R.tch] + list(R.eps0_teacher_list))


def lam_ratio(R) -> float:
    """The largest ``lambda / lambda_zero`` over the eps0 sweep."""
    return float(np.max(R.eps_sweep["lam"] / R.eps_sweep["threshold"]))


def stage2_lambda_regime(P, R) -> Hypothesis:
    """Lemma 4's rate is measured only where Stage 2 keeps neurons: ``lambda = lam_scale
    sqrt(eps0)`` below the exact zero threshold ``lambda_zero`` (the page's derivation from the
    Lasso's optimality condition) in every run of the sweep.

    Args:
        P: the parameters.
        R: a :class:`Result` (``eps_sweep``).

    Returns:
        the hypothesis ``stage2_lambda_regime`` (value: the largest ``lambda / lambda_zero``).
    """
    ratio = lam_ratio(R)
    return make_hypothesis(
        "stage2_lambda_regime",
        title="Stage 2's lambda regime",
        statement="b-lem-4",
        value=ratio,
        bound=1.0,
        op="<",
        reason=""
        if ratio < 1
        else "lambda = lam_scale sqrt(eps0) reaches the threshold "
        "above which Stage 2 keeps no neuron: zeta only measures the zero network",
        detail="largest lambda / zero threshold over the eps0 sweep",
    )


# --- checks: the Lasso and the subgradient method ---------------------------------------------


def lasso_convex_gram_psd(P, R) -> Claim:
    """Sanity: ``G`` is a Gram matrix (Claim B.1's ``kappa_2`` kernel), so the Stage 2
    problem is convex; only rounding can make its smallest eigenvalue negative.

    Args:
        P: the parameters.
        R: a :class:`Result` (``G``).

    Returns:
        the sanity claim (value: smallest over largest eigenvalue of ``G``).
    """
    ev = np.linalg.eigvalsh(R.G)
    return Claim(
        "lasso_convex_gram_psd",
        "sanity",
        value=float(ev[0] / ev[-1]),
        bound=-1e-10,
        op=">=",
        detail="smallest over largest eigenvalue of the Gram matrix G",
    )


def cvxpy_is_optimal_reference(P, R) -> Claim:
    """Sanity: the subgradient method never beats the conic solver's optimum (its accuracy is
    about 1e-8)."""
    return Claim(
        "cvxpy_is_optimal_reference",
        "sanity",
        value=float(R.v_ref - R.trace.values.min()),
        bound=1e-7,
        op="<=",
        detail="cvxpy optimum minus the best subgradient objective",
    )


def subgradient_guarantee_holds(P, R) -> Claim:
    """The guarantee of the proof of Lemma 4 (convexity only): at every ``T``,
    ``min_{t<T} L(a_t) - L(a_ref) <= (||a_0 - a_ref||^2 + eta^2 sum_{t<T} ||g_t||^2) /
    (2 eta T)`` (``b-lem-4#subgradient``), up to rounding (1e-9).

    Args:
        P: the parameters.
        R: a :class:`Result` (``trace``: ``best_gap`` with ``steps + 1`` entries, ``bound``).

    Returns:
        the theorem claim (value: the largest best gap minus the guarantee over ``T``).
    """
    return Claim(
        "subgradient_guarantee_holds",
        "theorem",
        statement="b-lem-4#subgradient",
        value=float(np.max(R.trace.best_gap[:-1] - R.trace.bound)),
        bound=1e-9,
        op="<=",
        detail="largest (best gap - guarantee) over the steps T",
    )


def stage2_gap_below_three_quarters_eps0(P, R) -> Claim:
    """Sanity (not evidence): the proof's intermediate claim that after ``T_2`` steps the
    Lasso gap is at most ``3 eps0 / 4`` (``b-lem-4#optimization``). It applies once the
    guarantee's bound at the last step is below ``3 eps0 / 4``, and then
    :func:`subgradient_guarantee_holds` implies it: it cannot fail on its own.

    Args:
        P: the parameters (``sub_steps``).
        R: a :class:`Result` (``trace``, ``eps0``).

    Returns:
        the sanity claim (value: the best gap after all steps).
    """
    bound_T = float(R.trace.bound[-1])
    return Claim(
        "stage2_gap_below_three_quarters_eps0",
        "sanity",
        statement="b-lem-4#optimization",
        value=float(R.trace.best_gap[-1]),
        bound=0.75 * R.eps0,
        op="<=",
        applies=(
            bound_T <= 0.75 * R.eps0,
            f"the guarantee after {P.sub_steps} steps, "
            f"{bound_T:.2g}, is above 3 eps0 / 4: more steps needed",
        ),
        detail="best Lasso gap after all steps (implied by the guarantee, which is below "
        "3 eps0 / 4 there)",
    )


# --- checks: balancing and the optimality gap ---------------------------------------------------


def balanced_layers(P, R) -> Claim:
    """Sanity: balancing is a construction, ``|a_i| = ||w_i||`` up to rounding."""
    return Claim(
        "balanced_layers",
        "sanity",
        value=R.balance_err,
        bound=1e-12,
        op="<=",
        detail="largest | |a_i| - ||w_i|| | after balancing",
    )


def balancing_keeps_function(P, R) -> Claim:
    """Sanity: balancing rescales ``(a_i, w_i) -> (a_i / s, s w_i)``, which keeps ``f``."""
    return Claim(
        "balancing_keeps_function",
        "sanity",
        value=R.f_same,
        bound=1e-10,
        op="<=",
        detail="largest |f after - f before balancing| over 2000 Gaussian inputs",
    )


def balanced_loss_equals_lasso_objective(P, R) -> Claim:
    """The step of the proof of Lemma 4 (``b-lem-4#balancing``): after balancing,
    ``L_lambda(theta)`` of eq. (2) equals the Lasso objective ``L~_{1,lambda}(a)`` at its
    optimum, by AM-GM with equality iff ``|a_i| = ||w_i||``. Two code paths: the closed-form
    loss plus weight decay, against the ``kappa_2`` Gram matrix and the conic solver.

    Args:
        P: the parameters.
        R: a :class:`Result` (``loss_reg``: ``L_lambda`` of the Stage 2 network; ``v_ref``).

    Returns:
        the theorem claim (value: the relative difference, bound 1e-9).
    """
    return Claim(
        "balanced_loss_equals_lasso_objective",
        "theorem",
        statement="b-lem-4#balancing",
        value=abs(R.loss_reg - R.v_ref) / max(1.0, R.v_ref),
        bound=1e-9,
        op="<=",
        detail="|L_lambda(theta) - Lasso optimum| / max(1, Lasso optimum)",
    )


def lasso_optimum_below_rescaled_teacher(P, R) -> Claim:
    """Sanity: an optimum is below any feasible point, the rescaled teacher included."""
    return Claim(
        "lasso_optimum_below_rescaled_teacher",
        "sanity",
        value=R.v_ref - R.v_hat,
        bound=1e-9,
        op="<=",
        detail="Lasso optimum minus the Lasso objective at the rescaled teacher",
    )


def zeta_nonnegative(P, R) -> Claim:
    """Sanity: ``zeta >= 0`` up to the grid's resolution (the grid minimum over measures is
    an upper estimate of the true minimum), 1e-6."""
    return Claim(
        "zeta_nonnegative",
        "sanity",
        value=R.zeta,
        bound=-1e-6,
        op=">=",
        detail="zeta: L_lambda(theta) minus the grid estimate of min over measures",
    )


def stage2_reduces_loss(P, R) -> Claim:
    """The book's observation that Stage 2 lowers the loss of the first step (whose
    ``a^(1) = O(1/sqrt(m))`` barely fits; Lemma 3 (ii)), where Stage 2 keeps neurons
    (``lambda < lambda_zero``); above ``lambda_zero`` the solution is ``a = 0`` and the loss
    is that of the zero network, above the first step's.

    Args:
        P: the parameters (``lam``).
        R: a :class:`Result` (``loss1``, ``loss2``, ``thr``).

    Returns:
        the observation claim (value: ``L`` after Stage 2 over ``L`` after Stage 1, < 1).
    """
    return Claim(
        "stage2_reduces_loss",
        "observation",
        statement="b-lem-4#zeta",
        value=R.loss2 / R.loss1,
        bound=1.0,
        op="<",
        applies=(
            P.lam < R.thr,
            f"lambda = {P.lam:g} is at or above lambda_zero = {R.thr:.3f}: Stage 2 keeps no neuron",
        ),
        detail="loss after Stage 2 over loss after Stage 1",
    )


# --- checks: Lemma 4 as a rate -------------------------------------------------------------------


def ratio_growth(E, Z) -> float:
    """``log q`` with ``q`` the largest ``zeta / eps0`` over the teachers at the widest width
    over the same at the narrowest (rows: widths, columns: teachers). ``zeta = O(eps0)`` keeps
    ``zeta / eps0`` bounded as ``eps0`` falls with the width; ``q < 1``: it falls."""
    E, Z = np.asarray(E, dtype=np.float64), np.asarray(Z, dtype=np.float64)
    return float(np.log(np.max(Z[-1] / E[-1]) / np.max(Z[0] / E[0])))


@dataclass
class RatioEstimate:
    """``q`` (:func:`ratio_growth`), its bootstrap standard error in ``log q`` over the
    teachers, and the upper estimate ``q exp(3 SE)``."""

    q: float
    se_log: float
    upper: float


def ratio_estimate(sweep: dict, seed: int) -> RatioEstimate | None:
    """:func:`ratio_growth` of the eps0 sweep with its bootstrap over the teachers (the
    columns); ``None`` where some ``zeta <= 0`` (the grid is too coarse to give a gap)."""
    E, Z = sweep["eps0"], sweep["zeta"]
    if np.any(np.asarray(Z) <= 0):
        return None
    est = fits.bootstrap(ratio_growth, [E, Z], seed=seed)
    return RatioEstimate(
        math.exp(est.value), est.se, math.exp(est.value + 3 * est.se) if est.se < 1e3 else math.inf
    )


def sweep_resolution(P, R) -> tuple[bool, str]:
    """Whether the sweep can show the rate (decided by the parameters and by ``eps0``, never
    by ``zeta``): at least :data:`MIN_EPS0_TEACHERS` teachers, widths spanning a factor
    :data:`MIN_WIDTH_SPAN`, ``lam_scale`` at most :data:`MAX_LAM_SCALE`, every ``zeta > 0``
    (else the grid is too coarse), and ``eps0`` falling by a factor 2 or more (geometric mean
    over the teachers) from the narrowest to the widest width. Returns ``(holds, reason when
    not)``."""
    E = np.asarray(R.eps_sweep["eps0"], dtype=np.float64)
    fall = float(np.exp(np.mean(np.log(E[0])) - np.mean(np.log(E[-1]))))
    positive = bool(np.all(np.asarray(R.eps_sweep["zeta"]) > 0))
    why = []
    if P.eps0_teachers < MIN_EPS0_TEACHERS:
        why.append(f"{P.eps0_teachers} teachers per width, fewer than {MIN_EPS0_TEACHERS}")
    span = P.ms_eps0[-1] / P.ms_eps0[0]
    if span < MIN_WIDTH_SPAN:
        why.append(
            f"the widths span a factor {span:g}, less than {MIN_WIDTH_SPAN} (too little fall "
            "of eps0 for 3 bootstrap standard errors)"
        )
    if P.lam_scale > MAX_LAM_SCALE:
        why.append(
            f"lam_scale = {P.lam_scale:g} is above {MAX_LAM_SCALE:g}, where the O(lambda^2) "
            "term dominates and zeta / eps0 levels off"
        )
    if fall < 2:
        why.append(f"eps0 falls only {fall:.2g}x from the narrowest to the widest width")
    if not positive:
        why.append("some zeta <= 0 (grid too coarse)")
    return not why, "the sweep cannot resolve the rate: " + "; ".join(why)


def zeta_falls_with_eps0(P, R, hyps: list[Hypothesis] | None = None) -> Claim:
    """Lemma 4's ``zeta_{T_2} = O(eps0)`` along widths (``b-lem-4#zeta``), on the strict side:
    ``zeta / eps0`` does not grow as ``eps0`` falls. The upper estimate (3 bootstrap standard
    errors over the teachers, in ``log q``) of ``q`` = largest ``zeta / eps0`` at the widest
    width over the largest at the narrowest must be at most 1. If ``zeta`` fell more slowly
    than ``eps0`` (a log-log slope below 1), ``q`` would exceed 1.

    Args:
        P: the parameters (``eps0_teachers``, ``lam_scale``, ``seed``).
        R: a :class:`Result` (``eps_sweep``).
        hyps: the hypotheses it needs (Assumptions 1-3 and ``stage2_lambda_regime``);
            ``None`` computes them from ``R``.

    Returns:
        the observation claim (value: the upper estimate of ``q``, bound 1).
    """
    if hyps is None:
        hyps = assumptions(P, R) + [stage2_lambda_regime(P, R)]
    ok, why = sweep_resolution(P, R)
    est = ratio_estimate(R.eps_sweep, seeds.derive(P.seed, "boot")) if ok else None
    return Claim(
        "zeta_falls_with_eps0",
        "observation",
        statement="b-lem-4#zeta",
        value=est.upper if est is not None else None,
        bound=1.0,
        op="<=",
        applies=hyps if ok else (False, why),
        detail="q exp(3 SE): largest zeta/eps0 at the widest width over that at the "
        "narrowest, upper estimate",
    )


# --- checks: the weight decay threshold ------------------------------------------------------


def loss_nondecreasing_in_lambda(P, R) -> Claim:
    """Sanity: for a Lasso the fitted loss is non-decreasing in ``lambda`` (a property of the
    solution path; solver tolerance 1e-7)."""
    Ls = np.asarray([row["L after Stage 2"] for row in R.sweep])
    return Claim(
        "loss_nondecreasing_in_lambda",
        "sanity",
        value=float(np.diff(Ls).min()),
        bound=-1e-7,
        op=">=",
        detail="smallest change of L between consecutive lambdas",
    )


def _lams_and_kept(R):
    lam_all = np.append(np.asarray([row["lambda"] for row in R.sweep]), R.lam_paper)
    kept_all = np.append(np.asarray([row["kept"] for row in R.sweep]), R.kept_paper)
    return lam_all, kept_all


def zero_solution_iff_above_threshold(P, R) -> Claim:
    """Sanity: the threshold is exact (the Lasso's optimality condition): over the sweep and
    the paper's ``lambda``, no neuron is kept exactly where ``lambda >= lambda_zero``
    (lambdas within 1% of it are skipped: the solver's tolerance)."""
    lam_all, kept_all = _lams_and_kept(R)
    away = np.abs(lam_all / R.thr - 1) > 1e-2
    return Claim(
        "zero_solution_iff_above_threshold",
        "sanity",
        value=int(np.sum((kept_all[away] == 0) != (lam_all[away] >= R.thr))),
        bound=0,
        op="==",
        detail="lambdas where 'no neuron kept' and 'lambda >= lambda_zero' disagree",
    )


def paper_lambda_keeps_no_neuron(P, R) -> Claim:
    """Sanity (not evidence): at the paper's ``lambda = sqrt(eps0)`` Stage 2 keeps no neuron.
    It applies when ``sqrt(eps0)`` is above this Stage 1's ``lambda_zero``, and there the
    Lasso's optimality condition, asserted by :func:`zero_solution_iff_above_threshold` (whose
    lambdas include ``sqrt(eps0)``), already implies it."""
    return Claim(
        "paper_lambda_keeps_no_neuron",
        "sanity",
        statement="b-lem-4#zeta",
        value=R.kept_paper,
        bound=0,
        op="==",
        applies=(
            R.lam_paper > R.thr * (1 + 1e-2),
            f"sqrt(eps0) = {R.lam_paper:.3f} is below lambda_zero = "
            f"{R.thr:.3f} at this width: Stage 2 keeps neurons",
        ),
        detail="neurons kept (a_i != 0) at lambda = sqrt(eps0), implied by the threshold",
    )


def zeta_vanishes_above_lambda_0(P, R) -> Claim:
    """Sanity: above the population threshold ``lambda_0`` the zero measure is optimal and
    ``zeta`` vanishes (up to the grid's resolution, 1e-6)."""
    return Claim(
        "zeta_vanishes_above_lambda_0",
        "sanity",
        value=abs(R.zeta_paper),
        bound=1e-6,
        op="<=",
        applies=(
            R.lam_paper > R.thr_pop * (1 + 1e-2),
            f"sqrt(eps0) = {R.lam_paper:.3f} is below lambda_0 = {R.thr_pop:.3f}",
        ),
        detail="|zeta| at lambda = sqrt(eps0)",
    )


# --- the page's sentences, decided from the numbers -------------------------------------------


def slope_reading(z_est: fits.Estimate | None) -> str:
    """The sentence under Fig. ``fig-stage2-zeta-eps0``: the pooled slope and its standard
    error as measured, and where 1 (Lemma 4's rate) and 2 (the proof's first term) lie with
    respect to the interval slope +- 3 SE."""
    if z_est is None:
        return "The sweep gives no slope at these parameters (some $\\zeta\\le0$)."
    fit, se = z_est.value, z_est.se
    lo, hi = fit - 3 * se, fit + 3 * se
    head = (
        f"The pooled log-log slope of $\\zeta$ against $\\varepsilon_0$ is {fit:.2f} with a "
        f"bootstrap standard error of {se:.2f} over the teachers (3 standard errors: "
        f"{lo:.2f} to {hi:.2f}). "
    )
    if lo >= 1:
        rate = (
            "Even 3 standard errors below the fit the slope is at least 1: $\\zeta$ falls at "
            "least as fast as $\\varepsilon_0$, as Lemma 4 says."
        )
    elif hi >= 1:
        rate = (
            "The slope 1 of Lemma 4 lies within 3 standard errors: the slope alone cannot "
            "show that $\\zeta$ falls at least as fast as $\\varepsilon_0$."
        )
    else:
        rate = (
            "Even 3 standard errors above the fit the slope is below 1: at these sizes "
            "$\\zeta$ falls more slowly than $\\varepsilon_0$."
        )
    if hi < 2:
        two = (
            " It is below the slope 2 of the proof's first term $O_*(\\varepsilon_0^2)$ even "
            "3 standard errors above the fit: the proof's other terms are not negligible here."
        )
    elif lo > 2:
        two = " It is above the slope 2 of the proof's first term $O_*(\\varepsilon_0^2)$."
    else:
        two = (
            " The slope 2 of the proof's first term $O_*(\\varepsilon_0^2)$ lies within 3 "
            "standard errors too."
        )
    return head + rate + two


def ratio_reading(P, R, passed: bool | None) -> str:
    """The sentence on ``zeta_falls_with_eps0``: ``q`` and its upper estimate as measured,
    and the check's outcome (``passed``: ``None`` where it does not apply)."""
    est = ratio_estimate(R.eps_sweep, seeds.derive(P.seed, "boot"))
    if est is None:
        return (
            "The ratio $\\zeta/\\varepsilon_0$ is not compared here: some $\\zeta\\le0$ (the "
            "grid is too coarse to give a gap), and the check does not apply."
        )
    head = (
        f"The largest $\\zeta/\\varepsilon_0$ at width {P.ms_eps0[-1]} is {est.q:.2f} times "
        f"the largest at width {P.ms_eps0[0]} (upper estimate, 3 bootstrap standard errors "
        f"over the teachers: {est.upper:.2f}). "
    )
    if passed is None:
        _, why = sweep_resolution(P, R)
        reason = why if not sweep_resolution(P, R)[0] else "see the hypotheses in its row"
        return head + f"The check `zeta_falls_with_eps0` does not apply here ({reason})."
    if passed:
        return head + (
            "Even at its upper estimate the ratio does not grow as $\\varepsilon_0$ falls: "
            "$\\zeta = O(\\varepsilon_0)$ along these widths, as Lemma 4 says."
        )
    return head + "At its upper estimate the ratio grows as $\\varepsilon_0$ falls."


def rate_takeaway(P, R, passed: bool | None) -> str:
    """The takeaway on Lemma 4's rate, decided by ``zeta_falls_with_eps0`` (``passed``)."""
    z = R.z_est
    slope = (
        f"the pooled log-log slope of $\\zeta_{{T_2}}$ against $\\varepsilon_0$ is "
        f"{z.value:.2f} $\\pm$ {z.se:.2f}"
        if z is not None
        else "the sweep gives no slope"
    )
    if passed:
        return (
            "- Lemma 4's rate can be measured along widths once "
            "$\\lambda\\propto\\sqrt{\\varepsilon_0}$ is scaled below the threshold "
            "$\\lambda_{\\rm zero}$: here $\\zeta/\\varepsilon_0$ does not grow from width "
            f"{P.ms_eps0[0]} to width {P.ms_eps0[-1]}, even at its upper estimate, and "
            f"{slope}."
        )
    return (
        "- Lemma 4's rate needs $\\lambda\\propto\\sqrt{\\varepsilon_0}$ scaled below the "
        "threshold $\\lambda_{\\rm zero}$ and enough teachers per width; at these "
        f"parameters the check does not apply (see its row), and {slope}."
    )


def lambda_reading(P, R) -> str:
    """The paragraph after Fig. ``fig-stage2-lambda``: where the paper's ``sqrt(eps0)`` lies
    with respect to ``lambda_zero`` here, and the weight decays at which the book runs Stage 2
    (``P.lam``) and Stage 3 (:data:`STAGE3_LAM0`)."""
    if R.lam_paper > R.thr:
        where_paper = (
            r"The paper's $\sqrt{\varepsilon_0}$ falls below $\lambda_{\rm zero}$ only "
            rf"once $\varepsilon_0 < \lambda_{{\rm zero}}^2 =$ {R.thr**2:.3f} rad, a finer "
            f"net than this width's {R.eps0:.3f} rad."
        )
    else:
        where_paper = (
            r"Here the paper's $\sqrt{\varepsilon_0}$ is already below "
            r"$\lambda_{\rm zero}$, so Stage 2 keeps neurons at the paper's $\lambda$."
        )
    smaller = "smaller " if P.lam < R.lam_paper else ""
    return (
        f"{where_paper} This page runs Stage 2 at a fixed, {smaller}$\\lambda =$ {P.lam:g}; "
        r"{ref}`chapter-paperb-stage3` runs Stage 2 and the first Stage 3 epoch at "
        f"$\\lambda_0 =$ {STAGE3_LAM0:g}. The lemma's constants are hidden, and the rate of "
        r"the previous section is measured with $\lambda\propto\sqrt{\varepsilon_0}$ "
        "scaled down."
    )
