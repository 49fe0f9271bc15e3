"""The chapter "Hermite view of ReLU" ({ref}`chapter-paperb-hermite`,
``notebooks/paper_b/hermite.md``): Paper B's Lemma A.1 (ReLU's Hermite coefficients and their
``k^(-5/4)`` decay), Claim A.1 (correlated Hermite polynomials, the arc-cosine kernel),
Assumptions 1-3 and the teacher's second order, Claim B.1 (the loss split by Hermite order,
printed and corrected) and the technical Lemmas I.1 and I.2 (I.2 false as printed).

The page calls the step functions in the order it narrates them, each returning named fields:
:func:`coefficients`, :func:`decay`, :func:`kernel`, :func:`second_order`, :func:`claim_b1`,
:func:`appendix_i` (:func:`compute` runs them all). Every check the page records is a function
of this module named like the check, returning a :class:`~twolayer.page.checks.Claim`; the
failing cases (``tests/failing_cases/paper_b_hermite.py``) call the same functions on inputs
where the statement is false.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from twolayer.core import seeds, stats
from twolayer.core.params import Choice, Constraint, Float, Int, ListOf
from twolayer.page.checks import Claim, Hypothesis
from twolayer.page.contract import ChapterSpec
from twolayer.paper_b import hermite, kernels
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod
from twolayer.paper_b.chapters import assumptions as paper_assumptions

# --- parameters -----------------------------------------------------------------------------

SPEC = ChapterSpec(
    chapter="paper_b/hermite",
    spec={
        "k_max": Int(
            4,
            200,
            explore=(10, 120),
            doc="highest order compared between quadrature and closed form",
        ),
        "gh_nodes": ListOf(
            Int(4, 150),
            increasing=True,
            explore=[[10, 40, 150], [5, 20, 80], [10, 20, 40, 80]],
            doc="Gauss-Hermite node counts of the convergence study",
        ),
        "k_fit_min": Int(
            10,
            10**5,
            explore=(10, 200),
            doc="smallest even order k of the k^(-5/4) fit",
        ),
        "k_fit_max": Int(
            12, 10**6, explore=(200, 4000), doc="largest even order k of the k^(-5/4) fit"
        ),
        "teacher": Choice(
            "random",
            "degenerate",
            "prototype",
            explore=True,
            doc="the teacher of the last sections: random (Assumptions 1-3 "
            "hold), degenerate (rank H = r - 1: Assumption 3 fails) or the "
            "prototype (r = 2, three neurons at 60 degrees)",
        ),
        "r": Choice(2, 3, explore=True, doc="dimension of the teacher subspace S_*"),
        "m_star": Int(2, 6, explore=(2, 6), doc="number of teacher neurons"),
        "d": Int(4, 1000, explore=(6, 60), doc="input dimension of the teacher and student"),
        "m": Int(1, 1000, explore=(2, 40), doc="student width of the Claim B.1 example"),
        "mc_samples": Int(
            1000,
            10**8,
            explore=(50_000, 2_000_000),
            doc="Monte Carlo inputs for the sampled checks",
        ),
        "ks_i1": ListOf(
            Int(1, 10**5),
            increasing=True,
            explore=[[1, 3, 30, 300], [2, 20, 2000]],
            doc="orders k of Lemma I.1",
        ),
        "betas_i2": ListOf(
            Float(0, 1, lo_open=True, hi_open=True),
            increasing=True,
            explore=[[0.05, 0.1], [0.1, 0.5, 0.99], [0.3, 0.999]],
            doc="values of beta of Lemma I.2",
        ),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "k_max": None,
        "gh_nodes": None,
        "k_fit_min": None,
        "k_fit_max": None,
        "teacher": "random",
        "r": 3,
        "m_star": 4,
        "d": None,
        "m": None,
        "mc_samples": None,
        "ks_i1": [1, 2, 5, 10, 100, 1000],
        "betas_i2": [0.1, 0.5, 0.9, 0.99],
    },
    profiles={
        "smoke": {
            "k_max": 30,
            "gh_nodes": [10, 40, 150],
            "k_fit_min": 20,
            "k_fit_max": 400,
            "d": 8,
            "m": 6,
            "mc_samples": 100_000,
        },
        "book": {
            "k_max": 60,
            "gh_nodes": [5, 10, 20, 40, 80, 150],
            "k_fit_min": 20,
            "k_fit_max": 2000,
            "d": 20,
            "m": 10,
            "mc_samples": 1_000_000,
        },
        "paper": {
            "k_max": 120,
            "gh_nodes": [5, 10, 20, 40, 80, 150],
            "k_fit_min": 20,
            "k_fit_max": 20_000,
            "d": 50,
            "m": 40,
            "mc_samples": 10_000_000,
        },
    },
    constraints=[
        Constraint(
            "k_fit_max",
            lambda P: P.k_fit_max > P.k_fit_min + 2,
            "must exceed k_fit_min + 2",
        ),
        Constraint(
            "gh_nodes",
            lambda P: P.gh_nodes[-1] >= 4 * P.gh_nodes[0],
            "must span a factor 4 (last >= 4 x first)",
        ),
        Constraint(
            "m_star",
            lambda P: (
                tmod.m_star_range(P.teacher, P.r)[0]
                <= P.m_star
                <= tmod.m_star_range(P.teacher, P.r)[1]
            ),
            "must lie in the range the teacher supports (m_star >= r; degenerate: "
            ">= r(r+1)/2; r = 2: <= 4; r = 3: <= 6; prototype: r = 2, m_star = 3)",
        ),
        Constraint("d", lambda P: P.d > P.r, "must exceed r"),
    ],
)

C_DECAY = (2 * math.pi) ** -0.5 * (math.pi / 2) ** -0.25
"""The constant of ``|sigma_k| ~ C k^(-5/4)`` (even ``k``): ``(2 pi)^(-1/2) (pi/2)^(-1/4)``."""

UNIT_ROUNDOFF = 2.0**-53
"""Half the spacing of doubles at 1: the rounding unit of the kernel checks' allowance."""

RHOS_A1 = (0.3, -0.7, 0.95)
"""The three correlations at which Claim A.1 is checked."""

GH_FIT_MIN_NODES = 10
"""The Gauss-Hermite convergence slope is fitted over node counts from here on (past the rule's
first few nodes)."""


# --- Lemma A.1: the coefficients --------------------------------------------------------------


@dataclass
class Coefficients:
    """ReLU's and ``|x|``'s Hermite coefficients up to ``k_max``, by Lemma A.1's closed form
    and by exact half-line quadrature, and Gauss-Hermite's error on the kink."""

    closed: np.ndarray  # sigma_k, Lemma A.1's closed form, k <= k_max
    exact_quad: np.ndarray  # sigma_k by the exact half-line (Gauss-Laguerre) rules
    abs_quad: np.ndarray  # |x|'s coefficients by the same rules on both half lines
    abs_closed: np.ndarray  # |x|'s coefficients by Lemma A.1 (twice ReLU's even ones)
    quad_err: float  # max_k |closed - exact_quad|
    gh_nodes: list  # Gauss-Hermite node counts
    gh_err: list  # max_{k <= 8} |Gauss-Hermite - closed form|, per node count


def coefficients(P) -> Coefficients:
    """Lemma A.1 of Paper B by two routes, and plain Gauss-Hermite on the kink.

    Args:
        P: the page's validated parameters (``k_max``, ``gh_nodes``).

    Returns:
        :class:`Coefficients`.
    """
    closed = hermite.relu_coefficients(P.k_max)
    exact_quad = hermite.relu_coefficients_quadrature(P.k_max)
    abs_quad = hermite.piecewise_linear_coefficients(P.k_max, 1.0, -1.0)
    abs_closed = np.array([hermite.abs_coefficient(k) for k in range(P.k_max + 1)])
    quad_err = float(np.abs(closed - exact_quad).max())
    first9 = hermite.relu_coefficients(8)  # the orders k <= 8 compared, whatever k_max
    gh_err = [
        float(np.abs(hermite.coefficients_gauss_hermite(kernels.relu, 8, n) - first9).max())
        for n in P.gh_nodes
    ]
    return Coefficients(
        closed, exact_quad, abs_quad, abs_closed, quad_err, list(P.gh_nodes), gh_err
    )


def lemma_a1_closed_form_matches_quadrature(P, R: Coefficients) -> Claim:
    """Lemma A.1 (closed form) of Paper B against the exact half-line quadrature: both are
    exact, so they agree to rounding (coefficients are O(1); 1e-13 allows a few hundred ulps).

    Args:
        P: the page's parameters (unused; the signature of every check).
        R: :class:`Coefficients` (``closed``, ``exact_quad``).

    Returns:
        the theorem claim ``max_k |closed - quadrature| <= 1e-13``.
    """
    return Claim(
        "lemma_a1_closed_form_matches_quadrature",
        "theorem",
        value=float(np.abs(np.asarray(R.closed) - np.asarray(R.exact_quad)).max()),
        bound=1e-13,
        op="<=",
        statement="b-lem-a-1#closed-form",
        detail="largest |closed form - exact quadrature| over orders k <= k_max",
    )


def relu_first_coefficients(P, R: Coefficients) -> Claim:
    """Lemma A.1's ``sigma_0 = 1/sqrt(2 pi)``, ``sigma_1 = 1/2`` and ``sigma_k = 0`` for odd
    ``k >= 3``, from the quadrature alone (not the closed form).

    Args:
        P: the page's parameters (unused).
        R: :class:`Coefficients` (``exact_quad``).

    Returns:
        the theorem claim: the largest of the three errors is ``<= 1e-14``.
    """
    q = np.asarray(R.exact_quad)
    first = max(
        abs(q[0] - 1 / math.sqrt(2 * math.pi)),
        abs(q[1] - 0.5),
        float(np.abs(q[3::2]).max(initial=0.0)),
    )
    return Claim(
        "relu_first_coefficients",
        "theorem",
        value=first,
        bound=1e-14,
        op="<=",
        statement="b-lem-a-1#closed-form",
        detail="largest quadrature error of sigma_0, sigma_1 and the odd sigma_k, k >= 3",
    )


def abs_coefficients_twice_relu(P, R: Coefficients) -> Claim:
    """Lemma A.1 for ``|x|``: the quadrature on both half lines against "twice ReLU's even
    coefficients, no odd ones".

    Args:
        P: the page's parameters (unused).
        R: :class:`Coefficients` (``abs_quad``, ``abs_closed``).

    Returns:
        the theorem claim ``max_k |quadrature - closed form| <= 1e-13``.
    """
    return Claim(
        "abs_coefficients_twice_relu",
        "theorem",
        value=float(np.abs(np.asarray(R.abs_quad) - np.asarray(R.abs_closed)).max()),
        bound=1e-13,
        op="<=",
        statement="b-lem-a-1#abs",
        detail="largest |quadrature - twice ReLU's even coefficients| for |x|",
    )


def gauss_hermite_fit(R: Coefficients) -> tuple[bool, float]:
    """Whether the node counts resolve a rate (two counts ``>= 10`` spanning a factor 4) and
    the log-log slope of Gauss-Hermite's error over them (NaN when they do not)."""
    fit = [(n, e) for n, e in zip(R.gh_nodes, R.gh_err, strict=True) if n >= GH_FIT_MIN_NODES]
    resolves = len(fit) >= 2 and fit[-1][0] >= 4 * fit[0][0]
    slope = stats.fit_slope(*zip(*fit, strict=True)) if resolves else float("nan")
    return resolves, slope


def gauss_hermite_error_rate(P, R: Coefficients) -> Claim:
    """Gauss-Hermite quadrature converges only algebraically on ReLU's kink: the log-log
    slope of its error against the node count (``n >= 10``) lies in ``[-1.5, -0.5]`` (about
    -1); an exponentially convergent rule (a smooth integrand) falls below any such interval.

    Args:
        P: the page's parameters (unused).
        R: :class:`Coefficients` (``gh_nodes``, ``gh_err``).

    Returns:
        the observation claim; not applicable without two node counts ``>= 10`` spanning 4x.
    """
    resolves, slope = gauss_hermite_fit(R)
    return Claim(
        "gauss_hermite_error_rate",
        "observation",
        value=slope,
        bound=(-1.5, -0.5),
        op="in",
        applies=(resolves, "fewer than two node counts >= 10 spanning 4x"),
        detail="log-log slope of the Gauss-Hermite error against nodes n >= 10",
    )


def gauss_hermite_reading(R: Coefficients) -> str:
    """The sentence on Gauss-Hermite's rate, decided by the run (its slope where the node
    counts resolve one)."""
    resolves, slope = gauss_hermite_fit(R)
    if not resolves:
        return (
            "the node counts of this run do not resolve Gauss-Hermite's rate on the kink "
            "(fewer than two counts $\\ge 10$ spanning a factor 4)"
        )
    return (
        "Gauss-Hermite's error on the kink falls only like $n^{s}$ with "
        f"$s = {slope:.2f}$, algebraically"
    )


# --- Lemma A.1: the k^(-5/4) decay ------------------------------------------------------------


@dataclass
class Decay:
    """``|sigma_k|`` for even ``k`` up to ``k_fit_max`` and its fitted log-log slope."""

    ks: np.ndarray  # even k = 2, 4, ..., k_fit_max
    coef: np.ndarray  # |sigma_k| (Lemma A.1)
    C: float  # (2 pi)^(-1/2) (pi/2)^(-1/4)
    slope: float  # log-log slope of |sigma_k| over even k in [k_fit_min, k_fit_max]
    k_fit_min: int


def decay(P) -> Decay:
    """Lemma A.1's ``|sigma_k| = Theta(k^(-5/4))`` with its constant.

    Args:
        P: the page's parameters (``k_fit_min``, ``k_fit_max``).

    Returns:
        :class:`Decay`.
    """
    ks = np.arange(2, P.k_fit_max + 1, 2)
    coef = np.abs([hermite.relu_coefficient(int(k)) for k in ks])
    C = (2 * math.pi) ** -0.5 * (math.pi / 2) ** -0.25
    sel = ks >= P.k_fit_min
    slope = stats.fit_slope(ks[sel], coef[sel])
    return Decay(ks, coef, C, slope, P.k_fit_min)


def relative_excess(R: Decay) -> np.ndarray:
    """``k^(5/4) |sigma_k| / C - 1`` for every even ``k`` of ``R``, with the theorem's ``C``."""
    return R.ks**1.25 * R.coef / C_DECAY - 1


def constant_C_with_one_over_k_correction(P, R: Decay) -> Claim:  # noqa: N802 (the paper's C)
    """Lemma A.1's decay with its constant (the book's derivation on the page, from Stirling):
    ``0 < k^(5/4) |sigma_k| / C - 1 <= 1/k`` for even ``k >= 10``, ``C = (2 pi)^(-1/2)
    (pi/2)^(-1/4)``.

    Args:
        P: the page's parameters (unused).
        R: :class:`Decay` (``ks``, ``coef``).

    Returns:
        the theorem claim ``k (k^(5/4) |sigma_k| / C - 1) in [0, 1]`` for every even k >= 10.
    """
    big = R.ks >= 10
    return Claim(
        "constant_C_with_one_over_k_correction",
        "theorem",
        value=relative_excess(R)[big] * R.ks[big],
        bound=(0.0, 1.0),
        op="in",
        statement="b-lem-a-1#decay",
        detail="k (k^(5/4) |sigma_k| / C - 1), farthest out over even k >= 10",
    )


def slope_minus_five_quarters(P, R: Decay) -> Claim:
    """Lemma A.1's ``Theta(k^(-5/4))``: the local slope is ``-5/4 - O(1/k)``, so the fit over
    ``k >= k_fit_min`` lies in ``[-5/4 - 1/k_fit_min, -5/4]``.

    Args:
        P: the page's parameters (``k_fit_min``).
        R: :class:`Decay` (``slope``).

    Returns:
        the theorem claim.
    """
    return Claim(
        "slope_minus_five_quarters",
        "theorem",
        value=R.slope,
        bound=(-1.25 - 1 / P.k_fit_min, -1.25),
        op="in",
        statement="b-lem-a-1#decay",
        detail="fitted log-log slope of |sigma_k| over even k in [k_fit_min, k_fit_max]",
    )


# --- Claim A.1: correlated Hermite polynomials and the arc-cosine kernel ----------------------


@dataclass
class Kernel:
    """Claim A.1 at three correlations, and the arc-cosine kernels against their truncated
    Hermite series on a grid of ``t``."""

    k_a1: int  # highest order of Claim A.1's check
    rhos: tuple  # the correlations
    moments: list  # E[h_j(x) h_k(y)], one (k_a1 + 1)^2 matrix per rho
    t: np.ndarray  # grid of t in [-1, 1]
    K: int  # truncation order of the series (k_max)
    series: np.ndarray  # sum_{k <= K} sigma_k^2 t^k
    series2: np.ndarray  # sum_{2 <= k <= K} sigma_k^2 t^k
    k1: np.ndarray  # the arc-cosine kernel k(t)
    kappa2: np.ndarray  # kappa_2(t) = k(t) - 1/(2 pi) - t/4
    tail: float  # 1/2 - sum_{k <= K} sigma_k^2 (Parseval)


def kernel(P) -> Kernel:
    """Claim A.1 of Paper B (``E[h_j(x) h_k(y)] = rho^k delta_jk``, exact tensor rule) and the
    kernels ``k(t)``, ``kappa_2(t)`` with their series truncated at ``K = k_max``.

    Args:
        P: the page's parameters (``k_max``).

    Returns:
        :class:`Kernel`.
    """
    k_a1 = min(P.k_max, 24)
    moments = [hermite.correlated_moments(k_a1, rho) for rho in RHOS_A1]
    t = np.linspace(-1, 1, 401)
    K = P.k_max
    series, series2 = hermite.kernel_series(t, K), hermite.kernel_series(t, K, start=2)
    return Kernel(
        k_a1,
        RHOS_A1,
        moments,
        t,
        K,
        series,
        series2,
        kernels.k1(t),
        kernels.kappa2(t),
        hermite.tail_bound(K),
    )


def claim_a1_error(R: Kernel) -> float:
    """``max |E[h_j(x) h_k(y)] - rho^k delta_jk|`` over ``j, k`` and the correlations."""
    return max(
        float(np.abs(M - np.diag(rho ** np.arange(R.k_a1 + 1))).max())
        for rho, M in zip(R.rhos, R.moments, strict=True)
    )


def claim_a1_correlated_hermite(P, R: Kernel) -> Claim:
    """Claim A.1 of Paper B by a rule exact for polynomials of this degree: rounding only
    (1e-10 allows for ``h_k``'s growth at the outer nodes).

    Args:
        P: the page's parameters (unused).
        R: :class:`Kernel` (``rhos``, ``moments``).

    Returns:
        the theorem claim.
    """
    return Claim(
        "claim_a1_correlated_hermite",
        "theorem",
        value=claim_a1_error(R),
        bound=1e-10,
        op="<=",
        statement="b-claim-a-1#correlated",
        detail="largest |E[h_j(x) h_k(y)] - rho^k delta_jk| over j, k and three rho",
    )


def tail_upper_bound(K: int, n_sum: int = 10**6) -> float:
    """An upper bound on the series' tail ``sum_{k > K} sigma_k^2`` that does not use the
    coefficients' code: Lemma A.1 gives ``|sigma_k| = (2 pi)^(-1/2) (k-1)^(-1) (binom(k, k/2)
    2^(-k))^(1/2)`` for even ``k``, and ``binom(k, k/2) 2^(-k) <= (pi k / 2)^(-1/2)``, so
    ``sigma_k^2 <= C^2 k^(-1/2) / (k-1)^2``; the sum over even ``K < k <= n_sum`` is explicit,
    the rest is at most ``C^2 ((n+2)/(n+1))^2 n^(-3/2) / 3``.

    Args:
        K: the truncation order.
        n_sum: where the explicit sum stops (even).

    Returns:
        the bound ``B_K`` (about ``1 + 1/(4K)`` times the true tail).
    """
    k = np.arange(K + 1, n_sum + 1, dtype=np.float64)
    k = k[(k % 2 == 0) & (k >= 2)]
    head = float(np.sum(C_DECAY**2 * k**-0.5 / (k - 1) ** 2))
    n = float(n_sum)
    return head + C_DECAY**2 * ((n + 2) / (n + 1)) ** 2 * n**-1.5 / 3


def rounding_allowance(K: int) -> float:
    """What rounding may add to ``kernel - series``: ``K + 1`` terms below 1/2 summed, and the
    kernel's few-ulp evaluation: ``(K + 9) u``, ``u = 2^-53``."""
    return (K + 9) * UNIT_ROUNDOFF


def series_excess(t, residual, K: int) -> tuple[float, float]:
    """How far ``residual = kernel(t) - series_K(t)`` falls outside ``[0, |t|^(K+1) B_K]``
    (the residual is ``sum_{k > K} sigma_k^2 t^k`` with only even ``k``: nonnegative, at most
    ``|t|^(K+1)`` times the tail), worst over ``t``; and the rounding allowance it is held to."""
    t = np.asarray(t, dtype=np.float64)
    e = np.asarray(residual, dtype=np.float64)
    upper = np.abs(t) ** (K + 1) * tail_upper_bound(K)
    outside = np.maximum(np.maximum(e - upper, -e), 0.0)
    return float(outside.max()), rounding_allowance(K)


def kernel_is_hermite_series(P, R: Kernel) -> Claim:
    """Claim A.1 (kernel) of Paper B: ``k(t) = sum_k sigma_k^2 t^k``. The truncated series'
    residual must lie in ``[0, |t|^(K+1) B_K]`` at every ``t`` (``B_K``:
    :func:`tail_upper_bound`, from Lemma A.1's closed form, not from the series' code), up to
    rounding (:func:`rounding_allowance`). A wrong coefficient makes the residual negative
    somewhere; a missing or too small one makes it exceed the tail bound.

    Args:
        P: the page's parameters (unused).
        R: :class:`Kernel` (``t``, ``K``, ``series``, ``k1``).

    Returns:
        the theorem claim: the largest distance outside the interval is at most the rounding
        allowance.
    """
    out, allow = series_excess(R.t, np.asarray(R.k1) - np.asarray(R.series), R.K)
    return Claim(
        "kernel_is_hermite_series",
        "theorem",
        value=out,
        bound=allow,
        op="<=",
        statement="b-claim-a-1#kernel",
        detail="largest distance of k(t) - series outside [0, |t|^(K+1) B_K] over t in [-1, 1]",
    )


def kappa2_is_series_from_order_two(P, R: Kernel) -> Claim:
    """Claim A.1 (kernel) of Paper B for ``kappa_2(t) = sum_{k >= 2} sigma_k^2 t^k``, held to
    the same interval as :func:`kernel_is_hermite_series`.

    Args:
        P: the page's parameters (unused).
        R: :class:`Kernel` (``t``, ``K``, ``series2``, ``kappa2``).

    Returns:
        the theorem claim.
    """
    out, allow = series_excess(R.t, np.asarray(R.kappa2) - np.asarray(R.series2), R.K)
    return Claim(
        "kappa2_is_series_from_order_two",
        "theorem",
        value=out,
        bound=allow,
        op="<=",
        statement="b-claim-a-1#kernel",
        detail="largest distance of kappa_2(t) - series from order 2 outside "
        "[0, |t|^(K+1) B_K] over t in [-1, 1]",
    )


def parseval_half(P, R: Kernel) -> Claim:
    """Parseval: the tail ``1/2 - sum_{k <= K} sigma_k^2`` is positive and below 1/2 (an
    identity; sanity).

    Args:
        P: the page's parameters (unused).
        R: :class:`Kernel` (``tail``).

    Returns:
        the sanity claim.
    """
    return Claim(
        "parseval_half",
        "sanity",
        value=R.tail,
        bound=(1e-300, 0.5),
        op="in",
        detail="tail 1/2 - sum of sigma_k^2 over k <= K",
    )


# --- the teacher, Assumptions 1-3 and its second order ----------------------------------------


@dataclass
class SecondOrder:
    """The page's teacher, and ``E[f_*(x) h_2(v.x)]`` along three unit directions ``v``."""

    teacher: tmod.Teacher
    V: np.ndarray  # rows: smallest-|eigenvalue| eigenvector of H in S_*, random in S_*, in R^d
    mc: np.ndarray  # Monte Carlo means
    se: np.ndarray  # their standard errors
    theory: np.ndarray  # sigma_2 v^T H v


def second_order(P) -> SecondOrder:
    """The teacher of Paper B's Assumptions 1-3 and its second-order information.

    Args:
        P: the page's parameters (``teacher``, ``d``, ``r``, ``m_star``, ``mc_samples``,
            ``seed``).

    Returns:
        :class:`SecondOrder`.
    """
    tch = tmod.make(P.teacher, P.d, P.r, P.m_star, seed=seeds.derive(P.seed, "teacher"))
    B = tch.info["basis"]
    ev, Q = np.linalg.eigh(B.T @ tch.H() @ B)
    rng = seeds.rng(P.seed, "second-order")
    V = np.stack(
        [
            B @ Q[:, np.argmin(np.abs(ev))],
            B @ rng.standard_normal(P.r),
            rng.standard_normal(P.d),
        ]
    )
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    mc_h2, se_h2 = hermite.mc_second_order(
        tch, V, P.mc_samples, seeds.derive(P.seed, "second-order-inputs")
    )
    theory_h2 = hermite.relu_coefficient(2) * np.einsum("id,de,ie->i", V, tch.H(), V)
    return SecondOrder(tch, V, mc_h2, se_h2, theory_h2)


def assumption_hypotheses(R: SecondOrder) -> list[Hypothesis]:
    """Paper B's Assumptions 1-3 for the page's teacher (``assumption_1`` ... ``_3``)."""
    return paper_assumptions(R.teacher)


def teacher_description(P, R: SecondOrder) -> str:
    """The page's teacher in words, with its values (for the prose)."""
    c = R.teacher.info
    kind = {"random": "a random teacher", "degenerate": "a degenerate teacher"}.get(
        P.teacher, "the prototype teacher"
    )
    return f"{kind}, $r = {c['r']}$, $m_* = {R.teacher.m}$, $d = {R.teacher.d}$"


def second_order_projection(P, R: SecondOrder) -> Claim:
    """``E[f_*(x) h_2(v.x)] = sigma_2 v^T H v`` (Claim A.1 of Paper B applied to the teacher,
    the paragraph after Assumption 3); it needs Claim A.1 only, so it holds for every teacher:
    each Monte Carlo estimate within 5 standard errors (a false alarm has chance < 2e-6).

    Args:
        P: the page's parameters (unused).
        R: :class:`SecondOrder` (``mc``, ``se``, ``theory``).

    Returns:
        the theorem claim, worst of the three directions.
    """
    return Claim(
        "second_order_projection",
        "theorem",
        value=np.abs(np.asarray(R.mc) - np.asarray(R.theory)) / np.asarray(R.se),
        bound=5.0,
        op="<=",
        statement="b-claim-a-1#second-order",
        detail="|Monte Carlo - sigma_2 v^T H v| in standard errors, worst of three v",
    )


# --- Claim B.1 --------------------------------------------------------------------------------


@dataclass
class ClaimB1:
    """Claim B.1's terms, printed and corrected, for a student with norm-2 neurons and its
    unit-norm copy, with Monte Carlo estimates."""

    student: pop.Net
    L_closed: float  # the loss L(theta) in closed form
    L_mc: float  # ... by Monte Carlo
    L_se: float  # its standard error
    terms: dict  # hermite.claim_b1_terms(student, teacher)
    lit_mc: float  # E(f>=2 - f*)^2 by Monte Carlo, printed f>=2
    lit_se: float
    cor_mc: float  # ... corrected f>=2
    cor_se: float
    unit_terms: dict  # claim_b1_terms for the student with unit-norm neurons
    L_unit: float  # its loss

    @property
    def gap(self) -> float:
        """The printed right-hand side minus ``L``."""
        return self.terms["sum_literal"] - self.L_closed


def claim_b1_student(P) -> pop.Net:
    """The page's student: positive output weights and neurons of norm 2 (the two readings of
    ``f_{>=2}`` then differ by a constant of order ``m``), ``alpha = 0.3``, random ``beta``."""
    rng = seeds.rng(P.seed, "claim-b1-student")
    W_dir = rng.standard_normal((P.m, P.d))
    return pop.Net(
        np.abs(rng.standard_normal(P.m)) + 0.5,
        2 * W_dir / np.linalg.norm(W_dir, axis=1, keepdims=True),
        0.3,
        0.2 * rng.standard_normal(P.d),
    )


def claim_b1(P, teacher: tmod.Teacher, student: pop.Net | None = None) -> ClaimB1:
    """Claim B.1 of Paper B in closed form and by Monte Carlo.

    Args:
        P: the page's parameters (``m``, ``d``, ``mc_samples``, ``seed``).
        teacher: the page's teacher.
        student: the student (default: :func:`claim_b1_student`).

    Returns:
        :class:`ClaimB1`.
    """
    student = claim_b1_student(P) if student is None else student
    L_closed = pop.loss(student, teacher)
    L_mc, L_se = pop.mc_loss(student, teacher, P.mc_samples, seed=seeds.derive(P.seed, "mc-loss"))
    terms = hermite.claim_b1_terms(student, teacher)
    mc_seed = seeds.derive(P.seed, "mc-ge2")
    lit_mc, lit_se = hermite.mc_ge2(student, teacher, P.mc_samples, mc_seed, literal=True)
    cor_mc, cor_se = hermite.mc_ge2(student, teacher, P.mc_samples, mc_seed, literal=False)
    unit = pop.Net(
        student.a,
        student.W / np.linalg.norm(student.W, axis=1, keepdims=True),
        0.3,
        student.beta,
    )
    return ClaimB1(
        student,
        L_closed,
        L_mc,
        L_se,
        terms,
        lit_mc,
        lit_se,
        cor_mc,
        cor_se,
        hermite.claim_b1_terms(unit, teacher),
        pop.loss(unit, teacher),
    )


def claim_b1_corrected_exact(P, R: ClaimB1) -> Claim:
    """Claim B.1 of Paper B with the corrected ``f_{>=2} = sum a_i ||w_i|| sigma_{>=2}(wbar_i.x)``:
    ``L`` equals the right-hand side in closed form (two independent code paths: the full loss
    through ``k(t)``, the terms through ``kappa_2``), to rounding.

    Args:
        P: the page's parameters (unused).
        R: :class:`ClaimB1` (``terms``, ``L_closed``).

    Returns:
        the theorem claim (relative error ``<= 1e-12``).
    """
    return Claim(
        "claim_b1_corrected_exact",
        "theorem",
        value=abs(R.terms["sum_corrected"] - R.L_closed) / R.L_closed,
        bound=1e-12,
        op="<=",
        statement="b-claim-b-1",
        detail="relative error of the corrected right-hand side against L (closed forms)",
    )


def ge2_corrected_matches_mc(P, R: ClaimB1) -> Claim:
    """Claim B.1's third term, corrected reading: Monte Carlo against its closed form (4
    standard errors; a false alarm has chance < 1e-4).

    Args:
        P: the page's parameters (unused).
        R: :class:`ClaimB1`.

    Returns:
        the theorem claim.
    """
    return Claim(
        "ge2_corrected_matches_mc",
        "theorem",
        value=abs(R.cor_mc - R.terms["ge2_corrected"]) / R.cor_se,
        bound=4.0,
        op="<=",
        statement="b-claim-b-1",
        detail="|Monte Carlo - closed form| in standard errors, corrected third term",
    )


def ge2_printed_matches_mc(P, R: ClaimB1) -> Claim:
    """Claim B.1's third term, printed reading: Monte Carlo against the closed form the book
    derives for it (the corrected term plus ``c^2``), 4 standard errors.

    Args:
        P: the page's parameters (unused).
        R: :class:`ClaimB1`.

    Returns:
        the theorem claim.
    """
    return Claim(
        "ge2_printed_matches_mc",
        "theorem",
        value=abs(R.lit_mc - R.terms["ge2_literal"]) / R.lit_se,
        bound=4.0,
        op="<=",
        statement="b-claim-b-1",
        detail="|Monte Carlo - closed form| in standard errors, printed third term",
    )


def claim_b1_printed_gap_is_visible(P, R: ClaimB1) -> Claim:
    """Claim B.1 as printed fails: for this student its right-hand side exceeds ``L`` by more
    than 10 Monte Carlo standard errors of ``L`` (an observation: the claim is that the printed
    form fails, measured against the resolution a sampled check of ``L`` would have).

    Args:
        P: the page's parameters (unused).
        R: :class:`ClaimB1` (``terms``, ``L_closed``, ``L_se``).

    Returns:
        the observation claim.
    """
    return Claim(
        "claim_b1_printed_gap_is_visible",
        "observation",
        value=R.gap / R.L_se,
        bound=10.0,
        op=">",
        statement="b-claim-b-1",
        detail="printed right-hand side minus L, in Monte Carlo standard errors of L",
    )


def closed_form_loss_matches_mc(P, R: ClaimB1) -> Claim:
    """The library's closed-form loss against sampling (solver accuracy; sanity)."""
    return Claim(
        "closed_form_loss_matches_mc",
        "sanity",
        value=abs(R.L_mc - R.L_closed) / R.L_se,
        bound=4.0,
        op="<=",
        detail="|Monte Carlo - closed-form loss| in standard errors",
    )


def claim_b1_printed_off_by_c_squared(P, R: ClaimB1) -> Claim:
    """By construction the printed reading adds exactly ``c^2`` (sanity)."""
    return Claim(
        "claim_b1_printed_off_by_c_squared",
        "sanity",
        value=abs(R.gap - R.terms["literal_offset"] ** 2) / max(1.0, R.L_closed),
        bound=1e-12,
        op="<=",
        detail="|printed excess - c^2| / max(1, L)",
    )


def claim_b1_printed_ok_for_unit_neurons(P, R: ClaimB1) -> Claim:
    """With unit-norm neurons ``c = 0`` and the printed reading is exact (sanity)."""
    return Claim(
        "claim_b1_printed_ok_for_unit_neurons",
        "sanity",
        value=abs(R.unit_terms["sum_literal"] - R.L_unit) / R.L_unit,
        bound=1e-12,
        op="<=",
        detail="relative error of the printed right-hand side with unit-norm neurons",
    )


# --- Appendix I: Lemmas I.1 and I.2 -----------------------------------------------------------


@dataclass
class AppendixI:
    """Lemma I.1's maxima (rows: ``p`` = 1, 2, 3 outer, ``k`` of ``ks_i1`` inner) and Lemma
    I.2's, and where the printed bound of I.2 holds on a fine grid of ``beta``."""

    i1_k: np.ndarray
    i1_p: np.ndarray
    i1_max: np.ndarray  # max_theta |cos^k sin^p| (numerical)
    i1_closed: np.ndarray  # (k/(k+p))^(k/2) (p/(k+p))^(p/2)
    i1_scaled: np.ndarray  # k^(p/2) max
    i1_rate: np.ndarray  # (p/e)^(p/2)
    betas: np.ndarray
    i2_max: np.ndarray  # max_k sqrt(k) beta^(k/2) (numerical)
    i2_corrected: np.ndarray  # (e ln(1/beta))^(-1/2)
    i2_printed: np.ndarray  # 1/sqrt(2 ln(2/beta))
    grid: np.ndarray  # betas in (0, 1), away from the crossing by 1e-6
    grid_printed_holds: np.ndarray  # printed bound >= true maximum, per grid beta
    crossing: float  # 4^(-1/(e-2)): the printed bound holds iff beta <= crossing


def appendix_i(P) -> AppendixI:
    """Lemmas I.1 and I.2 of Paper B, numerically and in closed form.

    Args:
        P: the page's parameters (``ks_i1``, ``betas_i2``).

    Returns:
        :class:`AppendixI`.
    """
    rows = [(k, p) for p in (1, 2, 3) for k in P.ks_i1]
    i1_max = np.array([hermite.lemma_i1_max(k, p) for k, p in rows])
    i1_closed = np.array([hermite.lemma_i1_closed_form(k, p) for k, p in rows])
    i1_scaled = np.array([k ** (p / 2) * mx for (k, p), mx in zip(rows, i1_max, strict=True)])
    i1_rate = np.array([(p / math.e) ** (p / 2) for _, p in rows])
    betas = np.array(P.betas_i2, dtype=float)
    grid = np.linspace(0.001, 0.999, 999)
    grid = grid[np.abs(grid - hermite.LEMMA_I2_CROSSING) > 1e-6]
    holds = np.array([hermite.lemma_i2_printed(b) >= hermite.lemma_i2_max(b) for b in grid])
    return AppendixI(
        np.array([k for k, _ in rows]),
        np.array([p for _, p in rows]),
        i1_max,
        i1_closed,
        i1_scaled,
        i1_rate,
        betas,
        np.array([hermite.lemma_i2_max(b) for b in P.betas_i2]),
        np.array([hermite.lemma_i2_corrected(b) for b in P.betas_i2]),
        np.array([hermite.lemma_i2_printed(b) for b in P.betas_i2]),
        grid,
        holds,
        hermite.LEMMA_I2_CROSSING,
    )


def lemma_i1_closed_form(P, R: AppendixI) -> Claim:
    """The numerical maximum of ``cos^k sin^p`` (grid plus bounded search) against the closed
    form at ``tan^2 theta = p/k`` (the book's calculus): the search's accuracy, an identity
    (sanity; the lemma's content is :func:`lemma_i1_rate`).

    Args:
        P: the page's parameters (unused).
        R: :class:`AppendixI`.

    Returns:
        the sanity claim.
    """
    return Claim(
        "lemma_i1_closed_form",
        "sanity",
        value=float(np.abs(R.i1_max / R.i1_closed - 1).max()),
        bound=1e-9,
        op="<=",
        detail="largest relative error of the numerical maximum against the closed form",
    )


def lemma_i1_rate(P, R: AppendixI) -> Claim:
    """Lemma I.1 of Paper B with explicit constants: ``k^(p/2) max_theta |cos^k sin^p| <=
    (p/e)^(p/2)`` (the closed form's limit, approached as ``k`` grows; 1e-9 for the search).

    Args:
        P: the page's parameters (unused).
        R: :class:`AppendixI` (``i1_scaled``, ``i1_rate``).

    Returns:
        the theorem claim, largest over the rows.
    """
    return Claim(
        "lemma_i1_rate",
        "theorem",
        value=float((R.i1_scaled / R.i1_rate).max()),
        bound=1 + 1e-9,
        op="<=",
        statement="b-lem-i-1",
        detail="k^(p/2) max / (p/e)^(p/2), largest over the rows",
    )


def lemma_i2_corrected_max(P, R: AppendixI) -> Claim:
    """Lemma I.2 of Paper B, corrected: ``max_{k > 0} k^(1/2) beta^(k/2) = (e
    ln(1/beta))^(-1/2)`` (numerical maximum over real ``k``, to the search's accuracy).

    Args:
        P: the page's parameters (unused).
        R: :class:`AppendixI` (``i2_max``, ``i2_corrected``).

    Returns:
        the theorem claim on the corrected form.
    """
    return Claim(
        "lemma_i2_corrected_max",
        "theorem",
        value=float(np.abs(R.i2_max / R.i2_corrected - 1).max()),
        bound=1e-9,
        op="<=",
        statement="b-lem-i-2",
        detail="worst relative error of the numerical maximum vs (e ln(1/beta))^(-1/2)",
    )


def lemma_i2_printed_bound_false(P, R: AppendixI, applies=None) -> Claim:
    """Lemma I.2 of Paper B as printed fails above ``beta_c = 4^(-1/(e-2))``: at the largest
    ``beta`` of the page the true maximum exceeds the printed bound (an observation: the claim
    is that the printed form fails). Applies when that ``beta`` exceeds ``beta_c``.

    Args:
        P: the page's parameters (unused).
        R: :class:`AppendixI` (``betas``, ``i2_max``, ``i2_printed``, ``crossing``).
        applies: override the gate (a failing case forces it).

    Returns:
        the observation claim: true maximum over printed bound ``> 1``.
    """
    i = int(np.argmax(R.betas))
    b_top = float(R.betas[i])
    gate = (
        b_top > R.crossing,
        f"every beta is <= 4^(-1/(e-2)) = {R.crossing:.3f}, "
        "where the printed bound happens to hold",
    )
    return Claim(
        "lemma_i2_printed_bound_false",
        "observation",
        value=float(R.i2_max[i] / R.i2_printed[i]),
        bound=1.0,
        op=">",
        statement="b-lem-i-2",
        applies=gate if applies is None else applies,
        detail="true maximum over the printed bound, at the largest beta",
    )


def lemma_i2_printed_holds_iff_small_beta(P, R: AppendixI) -> Claim:
    """Lemma I.2 of Paper B, corrected: the printed bound holds exactly where ``beta <=
    beta_c`` (on a fine grid of ``beta``, away from ``beta_c`` by 1e-6 where the two sides
    cross).

    Args:
        P: the page's parameters (unused).
        R: :class:`AppendixI` (``grid``, ``grid_printed_holds``, ``crossing``).

    Returns:
        the theorem claim: the number of grid points where the two disagree is 0.
    """
    return Claim(
        "lemma_i2_printed_holds_iff_small_beta",
        "theorem",
        value=int(np.sum(np.asarray(R.grid_printed_holds) != (R.grid <= R.crossing))),
        bound=0,
        op="==",
        statement="b-lem-i-2",
        detail="grid betas where 'printed bound holds' and 'beta <= beta_c' disagree",
    )


def lemma_i2_reading(P, R: AppendixI) -> str:
    """The sentence after Lemma I.2's tables, decided by the run: the factor at the largest
    ``beta`` when it exceeds ``beta_c``, else the example ``beta = 0.99``."""
    i = int(np.argmax(R.betas))
    b_top = float(R.betas[i])
    i2_max, i2_printed = float(R.i2_max[i]), float(R.i2_printed[i])
    if b_top > R.crossing:
        return (
            f"At $\\beta =$ {b_top:g}, the largest $\\beta$ of the page, "
            f"$\\max_k k^{{1/2}}\\beta^{{k/2}} =$ {i2_max:.2f} against the printed "
            f"{i2_printed:.2f}: {i2_max / i2_printed:.2f} times the printed bound."
        )
    return (
        f"Every $\\beta$ of the page is at most {R.crossing:.3f}, where "
        "the printed bound happens to hold; at $\\beta = 0.99$, for instance, "
        f"$\\max_k k^{{1/2}}\\beta^{{k/2}} =$ {hermite.lemma_i2_max(0.99):.2f} against "
        f"the printed {hermite.lemma_i2_printed(0.99):.2f}."
    )


# --- everything at once -----------------------------------------------------------------------


@dataclass
class Result:
    """Every step of the page."""

    coefficients: Coefficients
    decay: Decay
    kernel: Kernel
    second_order: SecondOrder
    claim_b1: ClaimB1
    appendix_i: AppendixI


def compute(P) -> Result:
    """Run every step of the page, in its order.

    Args:
        P: the page's validated parameters (``SPEC.params(...)``).

    Returns:
        :class:`Result`.
    """
    so = second_order(P)
    return Result(coefficients(P), decay(P), kernel(P), so, claim_b1(P, so.teacher), appendix_i(P))


def checks(P, R: Result) -> list[Claim]:
    """Every check of the page, in the page's order."""
    c, dk, k, so, b1, ai = (
        R.coefficients,
        R.decay,
        R.kernel,
        R.second_order,
        R.claim_b1,
        R.appendix_i,
    )
    return [
        lemma_a1_closed_form_matches_quadrature(P, c),
        relu_first_coefficients(P, c),
        abs_coefficients_twice_relu(P, c),
        gauss_hermite_error_rate(P, c),
        constant_C_with_one_over_k_correction(P, dk),
        slope_minus_five_quarters(P, dk),
        claim_a1_correlated_hermite(P, k),
        kernel_is_hermite_series(P, k),
        kappa2_is_series_from_order_two(P, k),
        parseval_half(P, k),
        second_order_projection(P, so),
        claim_b1_corrected_exact(P, b1),
        ge2_corrected_matches_mc(P, b1),
        ge2_printed_matches_mc(P, b1),
        claim_b1_printed_gap_is_visible(P, b1),
        closed_form_loss_matches_mc(P, b1),
        claim_b1_printed_off_by_c_squared(P, b1),
        claim_b1_printed_ok_for_unit_neurons(P, b1),
        lemma_i1_closed_form(P, ai),
        lemma_i1_rate(P, ai),
        lemma_i2_corrected_max(P, ai),
        lemma_i2_printed_bound_false(P, ai),
        lemma_i2_printed_holds_iff_small_beta(P, ai),
    ]
