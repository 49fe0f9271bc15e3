"""Stage 1 of Algorithm 1: one gradient step finds the teacher subspace (Lemma 3 and
Lemma C.1 of Paper B). The chapter page ``notebooks/paper_b/stage1.md``
({ref}`chapter-paperb-stage1`) runs it in three steps, each a function here:

* :func:`make_teachers`: the teachers of the dimension study (one shape in every ``R^d``) and
  of the ``epsilon_0``-net study (``net_seeds`` per ``r``), and :func:`assumptions`, Paper B's
  Assumptions 1-3 on them (the hypotheses);
* :func:`step_study`: the step at every ``d`` against the limits of the book's derivation
  (``book-lem-stage1-limits``);
* :func:`net_study`: the coverage of the teacher directions against the width (Lemma 3 (i),
  ``book-obs-stage1-net``).

Every check of the page is a function named like the check, returning a
:class:`~twolayer.page.checks.Claim`; :func:`net_reading` and :func:`net_takeaway` write the
page's sentences from the measured numbers and the checks' outcomes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core import seeds, stats
from ...core.params import Choice, Constraint, Int, ListOf, Optional
from ...page.checks import Claim, Hypothesis
from ...page.contract import ChapterSpec
from .. import early_stages as es
from .. import teacher as tmod
from . import assumptions as paper_assumptions

# --- parameters ----------------------------------------------------------------------------


def _m_star_ok(P):
    # every r of the page must support the teacher width (None: a default per r)
    return P.m_star is None or all(
        tmod.m_star_range(P.teacher, r)[0] <= P.m_star <= tmod.m_star_range(P.teacher, r)[1]
        for r in {P.r, *P.rs}
    )


SPEC = ChapterSpec(
    chapter="paper_b/stage1",
    spec={
        "teacher": Choice(
            "random",
            "degenerate",
            explore=True,
            doc="random teachers (Assumptions 1-3 hold) or degenerate ones "
            "(rank H = r - 1: Assumption 3 fails)",
        ),
        "r": Choice(2, 3, explore=True, doc="dimension of S_* in the dimension study"),
        "rs": ListOf(
            Choice(2, 3),
            increasing=True,
            explore=[[2], [3], [2, 3]],
            doc="dimensions of S_* in the epsilon_0-net study",
        ),
        "m_star": Optional(
            Int(2, 6),
            explore=(2, 4),
            doc="teacher neurons (None: r + 1, or r(r+1)/2 for the degenerate teacher)",
        ),
        "ds": ListOf(
            Int(4, 5000),
            min_len=3,
            increasing=True,
            explore=[[8, 32, 128], [10, 20, 40, 80], [6, 12, 24]],
            doc="input dimensions of the subspace and Lemma C.1 study",
        ),
        "m_sweep_d": Int(
            20, 20000, explore=(40, 400), doc="student width in that study (made even)"
        ),
        "d_net": Int(4, 5000, explore=(6, 60), doc="input dimension of the epsilon_0-net study"),
        "ms": ListOf(
            Int(4, 20000),
            min_len=3,
            increasing=True,
            explore=[[16, 64, 256], [8, 32, 128, 512], [20, 60, 180]],
            doc="student widths of the epsilon_0-net study",
        ),
        "net_seeds": Int(
            1, 100, explore=(3, 12), doc="teachers and initializations per width and r"
        ),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "teacher": "random",
        "r": 3,
        "rs": [2, 3],
        "m_star": None,
        "ds": None,
        "m_sweep_d": None,
        "d_net": None,
        "ms": None,
        "net_seeds": None,
    },
    profiles={
        "smoke": {
            "ds": [10, 40, 160],
            "m_sweep_d": 200,
            "d_net": 20,
            "ms": [16, 64, 256, 1024],
            "net_seeds": 6,
        },
        "book": {
            "ds": [10, 20, 40, 80, 160, 320],
            "m_sweep_d": 400,
            "d_net": 20,
            "ms": [16, 32, 64, 128, 256, 512, 1024],
            "net_seeds": 8,
        },
        "paper": {
            "ds": [10, 20, 40, 80, 160, 320, 640, 1280],
            "m_sweep_d": 2000,
            "d_net": 40,
            "ms": [16, 32, 64, 128, 256, 512, 1024, 2048],
            "net_seeds": 12,
        },
    },
    constraints=[
        Constraint(
            "m_star",
            _m_star_ok,
            "must lie in the teacher's range for every r of "
            "the page (random: r..4 for r = 2, r..6 for r = 3; degenerate: "
            "r(r+1)/2..)",
        ),
        Constraint(
            "teacher",
            lambda P: (
                P.teacher != "degenerate"
                or P.m_star is None
                or 3 not in {P.r, *P.rs}
                or P.m_star >= 6
            ),
            "degenerate with r = 3 needs m_star >= 6 (or None)",
        ),
        Constraint("ds", lambda P: P.ds[0] > max(P.r, *P.rs), "must exceed r"),
        Constraint("d_net", lambda P: P.d_net > max(P.rs), "must exceed r"),
    ],
)

LIMIT_SAMPLES = 200_000  # draws of z ~ N(0, I_r) for the predicted limits
SE_MULTIPLE = 5  # bootstrap standard errors allowed to a median (false alarm < 1e-5 per d)
SLOPE_SE_MULTIPLE = 3  # standard errors of a fitted slope on the strict side
RATE_FRACTION = 0.25  # a refining net falls at least this fraction of the rate 1/(r-1)


# --- the teachers --------------------------------------------------------------------------


@dataclass
class Teachers:
    """The page's teachers.

    Attributes:
        m_star_of: teacher width per ``r`` (``P.m_star``, or the default of
            :func:`~twolayer.paper_b.early_stages.default_m_star`).
        dimension: the dimension study's teacher shape (``r = P.r``) in every ``R^d`` of
            ``P.ds``.
        net: per ``r`` of ``P.rs``, the ``P.net_seeds`` teachers of the net study in
            ``R^{d_net}``.
    """

    m_star_of: dict
    dimension: list
    net: dict

    def every(self) -> list:
        """All teachers of the page, dimension study first."""
        return self.dimension + [t for ts in self.net.values() for t in ts]


def make_teachers(P) -> Teachers:
    """The teachers of both studies (seeds derived from ``P.seed``).

    Args:
        P: the page's validated parameters.

    Returns:
        :class:`Teachers`.
    """
    m_star_of = {r: P.m_star or es.default_m_star(P.teacher, r) for r in {P.r, *P.rs}}
    t_seed = seeds.derive(P.seed, "teacher")
    dimension = [tmod.make(P.teacher, d, P.r, m_star_of[P.r], seed=t_seed) for d in P.ds]
    net = {
        r: es.teachers(
            P.teacher,
            P.d_net,
            r,
            m_star_of[r],
            repeats=P.net_seeds,
            seed=P.seed,
            purpose="net-teacher",
        )
        for r in P.rs
    }
    return Teachers(m_star_of, dimension, net)


def assumptions(T: Teachers) -> list[Hypothesis]:
    """Paper B's Assumptions 1-3 (``b-asm-1`` to ``b-asm-3``) for the worst of all the
    page's teachers.

    Args:
        T: the page's teachers (:func:`make_teachers`).

    Returns:
        ``[assumption_1, assumption_2, assumption_3]``, the hypotheses of the checks.
    """
    return paper_assumptions(T.every())


# --- the step against d ----------------------------------------------------------------------


@dataclass
class StepStudy:
    """Stage 1's step at every ``d`` (the dimension study).

    Attributes:
        d: the dimensions ``P.ds`` (float array).
        m: the student width (``P.m_sweep_d`` made even).
        sweep: one row per ``d`` (:func:`~twolayer.paper_b.early_stages.dimension_sweep`):
            medians over the distinct neurons and their bootstrap standard errors.
        off_limit: the predicted limit ``c`` of ``sqrt(d)`` x the median off-subspace
            fraction (``book-lem-stage1-limits`` (1)).
        norm_limit: the predicted limit of the median ``||w_i^(1)||`` (item (2)).
        error_slope: log-log slope against ``d`` of the median relative distance to the
            corrected ``4 a_i sigma_2^2 H wbar_i``.
        error_slope_se: its standard error (from the medians' bootstrap standard errors).
        off_slope: log-log slope against ``d`` of the median off-subspace fraction.
    """

    d: np.ndarray
    m: int
    sweep: pd.DataFrame
    off_limit: float
    norm_limit: float
    error_slope: float
    error_slope_se: float
    off_slope: float


def step_study(P, T: Teachers) -> StepStudy:
    """Stage 1 (``lambda_0 = eta_0 = 1``: ``theta^(1) = -grad L(theta^(0))``) at every ``d``
    of ``P.ds``, width ``P.m_sweep_d`` (made even), and the ``d -> infinity`` limits of the
    book's derivation for the teacher shape (``z ~ N(0, I_r)``, ``LIMIT_SAMPLES`` draws).

    Args:
        P: the page's validated parameters.
        T: the page's teachers (:func:`make_teachers`).

    Returns:
        :class:`StepStudy`.
    """
    dd = np.array(P.ds, dtype=float)
    sweep = pd.DataFrame(
        es.dimension_sweep(
            P.ds,
            P.m_sweep_d + P.m_sweep_d % 2,
            P.teacher,
            P.r,
            m_star=T.m_star_of[P.r],
            seed=P.seed,
        )
    )
    limits = es.limit_medians(T.dimension[0], LIMIT_SAMPLES, P.seed)
    # the slope's standard error from the bootstrap standard errors of the medians
    x = np.log(dd) - np.log(dd).mean()
    y_se = sweep["se median err corrected"] / sweep["median err corrected"]
    slope = stats.fit_slope(dd, sweep["median err corrected"])
    slope_se = float(np.sqrt(np.sum((x / np.sum(x * x)) ** 2 * y_se**2)))
    return StepStudy(
        d=dd,
        m=P.m_sweep_d + P.m_sweep_d % 2,
        sweep=sweep,
        off_limit=limits["off_sqrt_d"],
        norm_limit=limits["norm"],
        error_slope=slope,
        error_slope_se=slope_se,
        off_slope=stats.fit_slope(dd, sweep["median off"]),
    )


def excess(P, S: StepStudy, measured, se, *, limit) -> np.ndarray:
    """``|measured - limit|`` over its allowance, per ``d``: ``SE_MULTIPLE`` bootstrap
    standard errors of the median over the neurons (a false alarm has chance below 1e-5 per
    ``d`` if the limit were exact) plus the relative ``O(r/d)`` corrections of the expansion
    (``book-lem-stage1-limits``).

    Args:
        P: the page's parameters (``P.r``).
        S: the step study (its ``d``).
        measured, se: the measured medians and their standard errors, per ``d``.
        limit: the predicted limit.

    Returns:
        The ratio per ``d`` (the check holds when every one is at most 1).
    """
    return np.asarray(np.abs(measured - limit) / (SE_MULTIPLE * se + P.r / S.d * limit))


def alpha_beta_stay_zero(P, S: StepStudy) -> Claim:
    """Lemma 3 (ii): ``alpha_1 = 0`` and ``beta_1 = 0``. A sanity check: the network is zero
    at the symmetric initialization and the preprocessed target has ``E[y~] = 0`` and
    ``E[y~ x] = 0``, so the gradients in ``alpha`` and ``beta`` vanish identically; only
    rounding remains, for every teacher and initialization.

    Args:
        P: the page's parameters.
        S: the step study.

    Returns:
        The claim ``max_d |alpha_1| + ||beta_1|| <= 1e-12``.
    """
    return Claim(
        "alpha_beta_stay_zero",
        "sanity",
        value=float(S.sweep["|alpha1| + ||beta1||"].max()),
        bound=1e-12,
        op="<=",
        statement="b-lem-3#2",
        detail="largest |alpha_1| + ||beta_1|| over the dimensions d (zero by construction)",
    )


def a1_bounded_by_2kappa2_norm1_over_sqrt_m(P, S: StepStudy) -> Claim:
    """Lemma 3 (ii)'s ``|a_i^(1)| <= O_*(1/sqrt m)`` with its constant: ``a_i^(1) = 2 ||w_i||
    sum_j a*_j kappa_2(wbar_i . w*_j)`` and ``0 <= kappa_2 <= kappa_2(1)`` give ``|a_i^(1)|
    <= 2 kappa_2(1) ||a*||_1 / sqrt m`` for every initialization. A sanity check (it holds
    for every input; rounding only).

    Args:
        P: the page's parameters.
        S: the step study.

    Returns:
        The claim ``max |a_1| sqrt(m) / (2 kappa_2(1) ||a*||_1) <= 1 + 1e-12``.
    """
    return Claim(
        "a1_bounded_by_2kappa2_norm1_over_sqrt_m",
        "sanity",
        value=float(S.sweep["max |a1| sqrt(m) / bound"].max()),
        bound=1 + 1e-12,
        op="<=",
        statement="b-lem-3#2",
        detail="largest |a_1| sqrt(m) / (2 kappa_2(1) ||a*||_1), worst d (holds for every "
        "initialization)",
    )


def w1_norm_matches_limit(P, S: StepStudy, asm: list[Hypothesis]) -> Claim:
    """``book-lem-stage1-limits`` (2), the explicit form of Lemma 3 (ii)'s ``||w_i^(1)|| =
    Theta_*(1)``: at every ``d`` the median norm is the ``d``-free limit ``4 sigma_2^2
    median ||H_S z||``, within :func:`excess`'s allowance.

    Args:
        P: the page's parameters.
        S: the step study.
        asm: Assumptions 1-3.

    Returns:
        The claim ``max_d excess <= 1``.
    """
    return Claim(
        "w1_norm_matches_limit",
        "theorem",
        value=excess(P, S, S.sweep["median norm"], S.sweep["se median norm"], limit=S.norm_limit),
        bound=1.0,
        op="<=",
        statement="book-lem-stage1-limits#2",
        applies=asm,
        detail="|median ||w_1|| - limit| / (5 se + (r/d) limit), worst d",
    )


def off_subspace_matches_limit(P, S: StepStudy, asm: list[Hypothesis]) -> Claim:
    """``book-lem-stage1-limits`` (1), Lemma C.1's error term made explicit: ``sqrt(d)`` x
    the median fraction of a neuron's norm outside ``S_*`` is the predicted ``c`` at every
    ``d``, within :func:`excess`'s allowance.

    Args:
        P: the page's parameters.
        S: the step study.
        asm: Assumptions 1-3.

    Returns:
        The claim ``max_d excess <= 1``.
    """
    return Claim(
        "off_subspace_matches_limit",
        "theorem",
        value=excess(
            P, S, S.sweep["sqrt(d) median off"], S.sweep["se sqrt(d) median off"], limit=S.off_limit
        ),
        bound=1.0,
        op="<=",
        statement="book-lem-stage1-limits#1",
        applies=asm,
        detail="|sqrt(d) median off-subspace fraction - c| / (5 se + (r/d) c), worst d",
    )


def lemma_c1_corrected_error_rate(P, S: StepStudy, asm: list[Hypothesis]) -> Claim:
    """``book-lem-stage1-limits`` (3), the corrected Lemma C.1 with its rate and constant:
    the median relative distance of ``w_i^(1)`` to ``4 a_i sigma_2^2 H wbar_i`` is ``c /
    sqrt(d)`` (the out-of-subspace fraction, to leading order) at every ``d``, within
    :func:`excess`'s allowance. A wrong factor or sign, or a slower rate, leaves
    ``sqrt(d)`` x the error away from ``c``.

    Args:
        P: the page's parameters.
        S: the step study.
        asm: Assumptions 1-3.

    Returns:
        The claim ``max_d excess <= 1``.
    """
    root = np.sqrt(S.d)
    return Claim(
        "lemma_c1_corrected_error_rate",
        "theorem",
        value=excess(
            P,
            S,
            root * S.sweep["median err corrected"],
            root * S.sweep["se median err corrected"],
            limit=S.off_limit,
        ),
        bound=1.0,
        op="<=",
        statement="b-lem-c-1",
        applies=asm,
        detail="|sqrt(d) median error to the corrected form - c| / (5 se + (r/d) c), worst d",
    )


def lemma_c1_printed_form_false(P, S: StepStudy, asm: list[Hypothesis]) -> Claim:
    """The erratum: the relative distance to the printed ``-2 a_i sigma_2^2 H wbar_i`` does
    not vanish (it is 3/2). A sanity check: per neuron ``|err_printed - 3/2| <= 5/2
    err_corrected`` (the triangle inequality), so it follows from
    :func:`lemma_c1_corrected_error_rate`, which is the evidence.

    Args:
        P: the page's parameters.
        S: the step study.
        asm: Assumptions 1-3.

    Returns:
        The claim ``min_d median err_printed >= 1``.
    """
    return Claim(
        "lemma_c1_printed_form_false",
        "sanity",
        value=float(S.sweep["median err printed"].min()),
        bound=1.0,
        op=">=",
        statement="b-lem-c-1",
        applies=asm,
        detail="smallest median relative distance to the printed form, over d (follows "
        "from the corrected form's check)",
    )


def printed_distance_triangle(P, S: StepStudy) -> Claim:
    """Per neuron, ``|err_printed - 3/2| <= 5/2 err_corrected``: the triangle inequality
    (the printed and corrected vectors differ by 3/2 of the corrected one). An identity.

    Args:
        P: the page's parameters.
        S: the step study.

    Returns:
        The claim ``max (|err_printed - 3/2| - 5/2 err_corrected) <= 1e-12``.
    """
    return Claim(
        "printed_distance_triangle",
        "sanity",
        value=float(S.sweep["triangle excess"].max()),
        bound=1e-12,
        op="<=",
        detail="largest |err_printed - 3/2| - 5/2 err_corrected over neurons and d",
    )


# --- the epsilon_0-net against m ---------------------------------------------------------------


@dataclass
class NetStudy:
    """The coverage ``max_i min_j angle(w*_i, w_j^(1))`` after Stage 1 (Lemma 3 (i)).

    Attributes:
        m: the widths ``P.ms`` (float array).
        coverage_in: per ``r``, the coverage inside ``S_*`` (projected neurons), an array
            ``(len(ms), net_seeds)``.
        coverage_full: per ``r``, the coverage in ``R^d``, same shape.
        slope: per ``r``, the log-log slope of the mean coverage inside ``S_*`` against
            ``m`` with its bootstrap standard error over the teachers
            (:class:`~twolayer.paper_b.fits.Estimate`).
    """

    m: np.ndarray
    coverage_in: dict
    coverage_full: dict
    slope: dict

    @property
    def rs(self) -> list:
        return list(self.slope)


def net_study(P, T: Teachers) -> NetStudy:
    """Stage 1 at every width of ``P.ms`` for every teacher of the net study, and the
    fitted slopes (bootstrap over the teachers).

    Args:
        P: the page's validated parameters.
        T: the page's teachers (:func:`make_teachers`).

    Returns:
        :class:`NetStudy`.
    """
    cov = {r: es.coverage_sweep(P.ms, T.net[r], P.seed) for r in P.rs}
    est = {r: es.slope_estimate(P.ms, cov[r]["in"], seeds.derive(P.seed, "boot", r)) for r in P.rs}
    return NetStudy(
        m=np.array(P.ms, dtype=float),
        coverage_in={r: cov[r]["in"] for r in P.rs},
        coverage_full={r: cov[r]["full"] for r in P.rs},
        slope=est,
    )


def resolved(N: NetStudy) -> list:
    """The ``r`` whose slope the sweep resolves: ``SLOPE_SE_MULTIPLE`` standard errors below
    half the predicted ``|slope| = 1/(r-1)`` (decided by the spread only, never by the
    slope)."""
    return [r for r in N.rs if SLOPE_SE_MULTIPLE * N.slope[r].se < 0.5 / (r - 1)]


def resolves(P, N: NetStudy) -> tuple[bool, str]:
    """Whether the sweep can resolve a slope at all (3 or more teachers and widths, and at
    least one ``r`` resolved), and why not."""
    ok = P.net_seeds >= 3 and len(P.ms) >= 3 and bool(resolved(N))
    why = (
        f"{P.net_seeds} teachers and {len(P.ms)} widths cannot resolve a slope: 3 standard "
        "errors "
        + ", ".join(f"{SLOPE_SE_MULTIPLE * N.slope[r].se:.2f} (r = {r})" for r in N.rs)
        + " against half the predicted |slope|"
    )
    return ok, why


def epsilon_net_refines_with_m(P, N: NetStudy, asm3: Hypothesis) -> Claim:
    """Lemma 3 (i): with ``m >= (1/eps_0)^{O(r)}`` every teacher neuron has a student neuron
    within ``eps_0``, so the coverage falls with the width at a rate: for every resolved ``r``
    the fitted slope plus 3 standard errors (the strict side) is below a quarter of the
    predicted ``-1/(r-1)``. A net that stalls (a degenerate teacher: slopes of a few
    hundredths) fails it; slope ``< 0`` alone would not tell it from a stall.

    Args:
        P: the page's parameters.
        N: the net study.
        asm3: Assumption 3 (the gate, with the sweep's resolution).

    Returns:
        The claim ``max_r (slope + 3 se + 1/(4(r-1))) < 0``.
    """
    ok, why = resolves(P, N)
    return Claim(
        "epsilon_net_refines_with_m",
        "observation",
        value=[
            N.slope[r].value + SLOPE_SE_MULTIPLE * N.slope[r].se + RATE_FRACTION / (r - 1)
            for r in resolved(N)
        ]
        or None,
        bound=0.0,
        op="<",
        statement="b-lem-3#1",
        applies=[asm3] if ok else (False, why),
        detail="slope of coverage against m + 3 SE + 1/(4(r-1)) (a quarter of the predicted "
        "rate), worst resolved r",
    )


def slope_gap_se(N: NetStudy) -> float:
    """The standard error of ``slope(r=3) - slope(r=2)`` (infinite without both)."""
    both = {2, 3} <= set(N.rs)
    return math.hypot(N.slope[2].se, N.slope[3].se) if both else math.inf


def epsilon_net_width_grows_with_r(P, N: NetStudy, asm3: Hypothesis) -> Claim:
    """``book-obs-stage1-net`` (1): the coverage falls like ``m^{-1/(r-1)}``, more slowly for
    ``r = 3`` than for ``r = 2`` (the width needed grows with ``r``). The predicted gap of the
    slopes is ``1 - 1/2 = 1/2``; the check needs ``r = 2`` and ``r = 3``, Assumption 3, and 3
    combined standard errors below half of it (decided by the spread only), and compares the
    gap minus 3 standard errors with 0 (the strict side).

    Args:
        P: the page's parameters.
        N: the net study.
        asm3: Assumption 3.

    Returns:
        The claim ``slope(3) - slope(2) - 3 se > 0``.
    """
    both = {2, 3} <= set(N.rs)
    gap_se = slope_gap_se(N)
    ok, _ = resolves(P, N)
    return Claim(
        "epsilon_net_width_grows_with_r",
        "observation",
        value=(N.slope[3].value - N.slope[2].value - SLOPE_SE_MULTIPLE * gap_se) if both else None,
        bound=0.0,
        op=">",
        statement="book-obs-stage1-net#1",
        applies=(
            both and ok and asm3.holds and SLOPE_SE_MULTIPLE * gap_se < 0.25,
            "needs r = 2 and r = 3, Assumption 3, and 3 standard errors of the slopes' "
            f"difference ({SLOPE_SE_MULTIPLE * gap_se:.2f}) below half the predicted gap 1/2",
        ),
        detail="slope(r=3) - slope(r=2) - 3 combined standard errors",
    )


def epsilon_net_stalls_without_assumption_3(P, N: NetStudy, asm3: Hypothesis) -> Claim:
    """``book-obs-stage1-net`` (2): without Assumption 3 the step cannot reach the directions
    outside the range of ``H``, so the coverage does not refine at the rate of a density on
    the sphere: for every resolved ``r`` the slope minus 3 standard errors stays above half
    of ``-1/(r-1)`` (the strict side). Applies only where Assumption 3 fails.

    Args:
        P: the page's parameters.
        N: the net study.
        asm3: Assumption 3 (the check applies where it does not hold).

    Returns:
        The claim ``min_r (slope - 3 se + 1/(2(r-1))) > 0``.
    """
    ok, why = resolves(P, N)
    return Claim(
        "epsilon_net_stalls_without_assumption_3",
        "observation",
        value=[
            N.slope[r].value - SLOPE_SE_MULTIPLE * N.slope[r].se + 0.5 / (r - 1)
            for r in resolved(N)
        ]
        or None,
        bound=0.0,
        op=">",
        statement="book-obs-stage1-net#2",
        applies=(
            ok and not asm3.holds,
            "Assumption 3 holds: the net refines (above)" if asm3.holds else why,
        ),
        detail="fitted slope - 3 standard errors + 1/(2(r-1)), worst resolved r",
    )


def full_angle_never_below_projected(P, N: NetStudy) -> Claim:
    """Projecting on ``S_*`` can only shrink an angle to a vector of ``S_*``: an identity.

    Args:
        P: the page's parameters.
        N: the net study.

    Returns:
        The claim ``min (coverage in R^d - coverage in S_*) >= -1e-12``.
    """
    return Claim(
        "full_angle_never_below_projected",
        "sanity",
        value=min(float((N.coverage_full[r] - N.coverage_in[r]).min()) for r in N.rs),
        bound=-1e-12,
        op=">=",
        detail="smallest coverage in R^d minus coverage inside S_* (rad)",
    )


# --- the page's sentences ----------------------------------------------------------------------


def _list_text(xs) -> str:
    xs = [str(x) for x in xs]
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def setup_text(P) -> str:
    """The studies' sizes, for the page (values, not parameter names)."""
    return (
        f"The dimension study embeds one teacher shape ($r = {P.r}$) in $\\mathbb R^d$ for "
        f"$d$ = {_list_text(P.ds)}, with {P.m_sweep_d + P.m_sweep_d % 2} student neurons; the "
        f"$\\varepsilon_0$-net study draws {P.net_seeds} teachers in $\\mathbb R^{{{P.d_net}}}$ "
        f"for each $r$ of {_list_text(P.rs)}, with widths $m$ = {_list_text(P.ms)}."
    )


def step_reading(P, S: StepStudy, applies: bool = True) -> str:
    """The sentence after the step's figure: the measured ranges beside the limits, and how
    the checks compare them (``applies``: whether Assumptions 1-3 hold, so that they do)."""
    off = S.sweep["sqrt(d) median off"]
    nrm = S.sweep["median norm"]
    err = np.sqrt(S.d) * S.sweep["median err corrected"]
    return (
        f"In numbers: $\\sqrt d$ times the median off-subspace fraction lies between "
        f"{off.min():.3f} and {off.max():.3f} over the $d$ of the table, against the "
        f"predicted {S.off_limit:.3f}; the median norm between {nrm.min():.3f} and "
        f"{nrm.max():.3f}, against the predicted {S.norm_limit:.3f} (Lemma 3 (ii)'s "
        f"$\\Theta(1)$, with the limit free of $d$); and $\\sqrt d$ times the median relative "
        f"error of the corrected Lemma C.1 between {err.min():.3f} and {err.max():.3f}, "
        f"against the same {S.off_limit:.3f} (its log-log slope against $d$ is "
        f"{S.error_slope:.2f}, against $-1/2$). "
        + (
            "The checks (table at the end) hold each to its limit within "
            f"{SE_MULTIPLE} bootstrap standard errors of the median (the spread over the "
            "neurons) plus the relative $O(r/d)$ corrections of the expansion."
            if applies
            else "The checks against these limits do not apply here: the book's derivation "
            "assumes Assumptions 1-3, which these teachers fail."
        )
    )


def printed_range_text(S: StepStudy) -> str:
    """The range of the median relative distance to the printed form, over ``d``."""
    lo, hi = (
        f"{v:.3f}"
        for v in (S.sweep["median err printed"].min(), S.sweep["median err printed"].max())
    )
    return f"{lo} at every $d$ of the table" if lo == hi else f"between {lo} and {hi}"


def net_reading(P, N: NetStudy, refines, grows, *, stalls, holds3: bool) -> str:
    """The paragraph after the net figure, decided from the coverage and the checks'
    outcomes (``True``/``False``/``None``: holds, fails, does not apply).

    Args:
        P: the page's parameters.
        N: the net study.
        refines, grows, stalls: outcomes of :func:`epsilon_net_refines_with_m`,
            :func:`epsilon_net_width_grows_with_r` and
            :func:`epsilon_net_stalls_without_assumption_3`.
        holds3: whether Assumption 3 holds.

    Returns:
        MyST Markdown.
    """
    falls_in = {r: bool(np.all(np.diff(N.coverage_in[r].mean(1)) < 0)) for r in N.rs}
    every = [r for r in N.rs if falls_in[r]]
    not_every = [r for r in N.rs if not falls_in[r]]
    steps = ""
    if every and not not_every:
        steps = ", at every step of the sweep"
    elif not_every:
        steps = (
            ", though not at every step for $r$ = "
            + _list_text(not_every)
            + " (the mean over the teachers fluctuates, and small widths sit before the "
            "asymptotic regime)"
        )
    if refines:
        in_text = (
            "Inside $S_*$ the coverage falls with the width at a rate (the check holds the "
            "fitted slope plus 3 standard errors below a quarter of the predicted $-1/(r-1)$ "
            "for every resolved $r$; slopes in the printout above)" + steps
        )
    elif refines is False:
        in_text = (
            "Inside $S_*$ the fitted slope plus 3 standard errors is not below a quarter of "
            "the predicted $-1/(r-1)$ for every resolved $r$: the sweep does not show the "
            "coverage refining with the width"
        )
    elif not holds3:
        in_text = {
            True: "Without Assumption 3 the coverage inside $S_*$ does not refine at the "
            "rate $m^{-1/(r-1)}$ of a density on the sphere: for every resolved $r$ the "
            "fitted slope minus 3 standard errors stays above half of $-1/(r-1)$ (slopes in "
            "the printout above)",
            False: "Without Assumption 3 the coverage inside $S_*$ still refines at close to "
            "the rate $m^{-1/(r-1)}$ for some $r$ (the check that it stalls fails)",
            None: "Without Assumption 3, the sweep does not resolve a slope inside $S_*$ (its "
            "check does not apply here; slopes in the printout above)",
        }[stalls]
    else:
        in_text = (
            "Inside $S_*$ the sweep does not resolve a slope (its check does not apply here; "
            "slopes in the printout above)"
        )
    if grows:
        r_text = (
            " The slope for $r = 3$ is shallower than for $r = 2$, by more than 3 standard "
            "errors: for the same $\\varepsilon_0$ a teacher subspace of dimension 3 needs "
            "many more neurons, as $(1/\\varepsilon_0)^{O(r)}$ says."
        )
    elif grows is False:
        r_text = (
            " The slope for $r = 3$ is not shallower than for $r = 2$ by 3 standard errors: "
            "the sweep does not show the width growing with $r$."
        )
    elif {2, 3} <= set(N.rs) and holds3:
        r_text = (
            " The sweep does not resolve the difference between the slopes for $r = 2$ and "
            "$r = 3$ (its check does not apply here), so it cannot show the width growing "
            "with $r$."
        )
    else:
        r_text = ""
    parts = []
    for r in N.rs:
        ci, cf = N.coverage_in[r].mean(1), N.coverage_full[r].mean(1)
        mono = "falling at every step" if np.all(np.diff(cf) < 0) else "not monotonically"
        gap = cf - ci
        parts.append(
            f"for $r = {r}$ the coverage in $\\mathbb R^d$ goes from {cf[0]:.3f} to "
            f"{cf[-1]:.3f} rad ({mono}), {float(gap.min()):.3f} to {float(gap.max()):.3f} "
            "rad above the coverage inside $S_*$"
        )
    return (
        in_text
        + "."
        + r_text
        + " In $\\mathbb R^d$ the angle also contains the out-of-subspace part of the "
        "nearest neuron (a fraction of order $1/\\sqrt d$ of its norm): " + "; ".join(parts) + "."
    )


def net_takeaway(refines, stalls, holds3: bool) -> str:
    """The takeaway bullet on the net, decided from the checks' outcomes."""
    if holds3:
        return (
            "- The neurons form an $\\varepsilon_0$-net of the teacher directions that "
            "refines with the width, as $m\\sim(1/\\varepsilon_0)^{r-1}$ predicts"
            + ("" if refines else " (not resolved by this page's sweep)")
            + "; without Assumption 3 they do not (exercise below)."
        )
    return (
        "- Without Assumption 3 (this page's degenerate teachers) the neurons do not form a "
        "refining $\\varepsilon_0$-net: the step only reaches the range of $H$"
        + ("" if stalls else " (not resolved by this page's sweep)")
        + "."
    )
