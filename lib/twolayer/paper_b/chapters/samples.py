"""Chapter ``paper_b/samples`` (page ``notebooks/paper_b/samples.md``, "From population to
samples"): Appendix J of Paper B.

:func:`compute` runs the page's two studies: the Stage 1 gradient on ``n = ratio d^2``
samples against the exact population gradient (its relative error, the ``n^{-1/2}`` law and
the ``d``-exponent of ``error sqrt(n)``), and Algorithm 1 end to end on ``n`` samples against
the same schedule on the population loss. The hypotheses and checks the page records are the
functions below, each callable on a hand-made :class:`Result` (``tests/failing_cases``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from twolayer.core import seeds, stats
from twolayer.core.params import Constraint, Float, Int, ListOf
from twolayer.page.checks import Claim, Hypothesis, make_hypothesis
from twolayer.page.contract import ChapterSpec
from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import fits
from twolayer.paper_b import samples as smp
from twolayer.paper_b import teacher as tmod
from twolayer.paper_b.chapters import assumptions as paper_assumptions

#: The drift of the constant of Appendix J's law at finite ``d``: ``error sqrt(n) / d`` tends
#: to a constant ``C`` as ``d`` grows, ``C(d) = C (1 + kappa / d + ...)``, which moves the
#: ``d``-exponent fitted over ``[d_min, d_max]`` below 1 by :func:`drift_shift`. The value
#: bounds the drift of the prototype teacher's population constant, computed without
#: samples from the exact identity ``tr Sigma = 2 sum a_i^2 E[y~^2 ||x||^2] - ||grad||^2``
#: (``y~`` is even) over 10^4 random directions, at ``d`` = 6 to 256: ``C(d)`` = 1.651,
#: 1.581, 1.501, 1.457, 1.432, 1.416, 1.395, 1.368, 1.358 at ``d`` = 6, 8, 12, 16, 24, 32,
#: 64, 128, 256, whose exponents over [6, 24], [8, 32], [16, 64] (-0.105, -0.077, -0.031)
#: lie within the shifts of ``kappa = 1.6`` (-0.124, -0.096, -0.051). It does not depend on
#: the width (a finite width moves ``E C(d)^2`` by a factor ``1 + O(1/m)`` nearly the same at
#: every ``d``: below 0.003 in the exponent at ``m1 >= 40``); the spread of finite widths is
#: in the standard error (:func:`exponent_se`). ``tests/paper_b/test_chapter_samples.py``
#: recomputes it (slow).
KAPPA_DRIFT = 1.6

#: The coverage of ``exponent_interval``: 3 standard errors of a normal law (99.73 %), read
#: with Student's t for the degrees of freedom of the pooled variance.
COVERAGE = 0.9973


SPEC = ChapterSpec(
    chapter="paper_b/samples",
    spec={
        "ds": ListOf(
            Int(4, 400),
            min_len=2,
            increasing=True,
            explore=[[8, 16, 32], [6, 12, 24], [8, 32]],
            doc="input dimensions of the Stage 1 gradient study",
        ),
        "ratios": ListOf(
            Float(0, 1000, lo_open=True),
            min_len=3,
            increasing=True,
            explore=[[0.25, 1, 4, 16], [0.5, 1, 2, 8], [1, 4, 16]],
            doc="sample sizes n / d^2 of the Stage 1 gradient study",
        ),
        "reps": Int(
            1,
            100,
            explore=(2, 5),
            doc="repetitions per (d, n): a fresh initialization and fresh samples",
        ),
        "m1": Int(
            4,
            4000,
            explore=(20, 100),
            doc="width at initialization in the Stage 1 gradient study (even)",
        ),
        "mc_n": Int(
            1000,
            10**8,
            explore=(10_000, 100_000),
            doc="Monte Carlo inputs for each per-sample gradient variance",
        ),
        "d_full": ListOf(
            Int(4, 100),
            min_len=1,
            increasing=True,
            explore=[[6, 8], [6], [8, 10]],
            doc="input dimensions of the end-to-end runs",
        ),
        "full_ratios": ListOf(
            Float(0, 1000, lo_open=True),
            min_len=2,
            increasing=True,
            explore=[[0.5, 16], [1, 4, 16], [0.5, 2, 8]],
            doc="sample sizes n / d^2 of the end-to-end runs",
        ),
        "m": Int(6, 1000, explore=(20, 60), doc="student width of the end-to-end runs (even)"),
        "lam0": Float(
            0,
            1,
            lo_open=True,
            explore=(0.01, 0.04),
            doc="weight decay of Stage 2 and the first epoch",
        ),
        "epochs": Int(1, 20, explore=(2, 5), doc="Stage 3 epochs"),
        "steps": Int(
            10,
            10**6,
            explore=(100, 400),
            doc="gradient steps of the first Stage 3 epoch (doubled every epoch)",
        ),
        "eta": Float(0, 1, lo_open=True, explore=(0.05, 0.2), doc="Stage 3 step size"),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "ds": None,
        "ratios": None,
        "reps": None,
        "m1": None,
        "mc_n": None,
        "d_full": None,
        "full_ratios": None,
        "m": None,
        "lam0": 0.02,
        "epochs": None,
        "steps": None,
        "eta": 0.1,
    },
    profiles={
        "smoke": {
            "ds": [8, 16, 32],
            "ratios": [0.25, 1, 4, 16],
            "reps": 3,
            "m1": 40,
            "mc_n": 20_000,
            "d_full": [8, 10],
            "full_ratios": [0.5, 16],
            "m": 40,
            "epochs": 3,
            "steps": 200,
        },
        "book": {
            "ds": [16, 32, 64],
            "ratios": [0.25, 0.5, 1, 2, 4, 8, 16],
            "reps": 3,
            "m1": 100,
            "mc_n": 50_000,
            "d_full": [8, 12],
            "full_ratios": [0.5, 1, 4, 16],
            "m": 40,
            "epochs": 3,
            "steps": 300,
        },
        "paper": {
            "ds": [16, 32, 64, 128],
            "ratios": [0.25, 0.5, 1, 2, 4, 8, 16],
            "reps": 4,
            "m1": 100,
            "mc_n": 200_000,
            "d_full": [10, 16],
            "full_ratios": [0.5, 1, 4, 16],
            "m": 60,
            "epochs": 4,
            "steps": 400,
        },
    },
    constraints=[
        Constraint("m1", lambda P: P.m1 % 2 == 0, "must be even"),
        Constraint("m", lambda P: P.m % 2 == 0, "must be even"),
    ],
)


# --- the experiment ------------------------------------------------------------------------------


@dataclass
class Result:
    """What the page computed (:func:`compute`)."""

    # Stage 1's gradient on n samples
    study: dict  # smp.gradient_study: err, law (len(ds), len(ratios), reps), n, trace_rel_se
    rms: np.ndarray  # root mean square of err over the repetitions, (len(ds), len(ratios))
    law_rms: np.ndarray  # the same of the law
    teachers: list  # the prototype teachers at ds + d_full (for Assumptions 1-3)
    est: fits.Estimate | None  # smp.d_exponent: the d-exponent of error sqrt(n) (n >= d^2)
    # Algorithm 1 end to end
    refs: dict  # d -> {"loss", "worst nearest angle", "Delta"}: the population runs
    rows: list  # smp.end_to_end rows, with "L / L(population run)"


def compute(P) -> Result:
    """Run the page's two studies at the validated parameters ``P``.

    Args:
        P: the page's parameters (``SPEC.params(...)`` or the page's ``contract.validate()``).

    Returns:
        a :class:`Result`. Every draw derives from ``P.seed``: the teacher's plane from
        ``(seed, "teacher")``, the gradient study's initializations, traces and samples from
        ``(seed, "init" | "trace" | "samples", d, k, ...)`` (:func:`smp.gradient_study`), the
        end-to-end initializations from ``(seed, "end-to-end-init", d)`` and samples from
        ``(seed, "end-to-end", d, j)``, the bootstrap from ``(seed, "boot")``.
    """
    study = smp.gradient_study(P.ds, P.ratios, P.reps, P.m1, mc_n=P.mc_n, seed=P.seed)
    rms = np.sqrt(np.mean(study["err"] ** 2, axis=-1))
    law_rms = np.sqrt(np.mean(study["law"] ** 2, axis=-1))
    teachers = [tmod.prototype(d, seeds.derive(P.seed, "teacher")) for d in P.ds + P.d_full]
    est = smp.d_exponent(study, seed=seeds.derive(P.seed, "boot")) if max(P.ratios) >= 1 else None
    refs, rows = {}, []
    for d in P.d_full:
        t = tmod.prototype(d, seeds.derive(P.seed, "teacher"))
        net0 = alg.symmetric_init(d, P.m, seeds.derive(P.seed, "end-to-end-init", d))
        refs[d] = smp.population_run(t, net0, P.lam0, P.epochs, steps=P.steps, eta=P.eta)
        refs[d]["Delta"] = t.info["Delta"]
        for row in smp.end_to_end(
            t, net0, P.full_ratios, P.lam0, epochs=P.epochs, steps=P.steps, eta=P.eta, seed=P.seed
        ):
            row["L / L(population run)"] = row["population loss"] / refs[d]["loss"]
            rows.append(row)
    return Result(study, rms, law_rms, teachers, est, refs, rows)


# --- the d-exponent's uncertainty ---------------------------------------------------------------


def exponent_se(study: dict, min_ratio: float = 1.0) -> tuple[float, int]:
    """The standard error of the ``d``-exponent of :func:`smp.d_exponent` over independent
    repetitions, and its degrees of freedom.

    The exponent is the least-squares slope of ``log C_d`` against ``log d``, with ``C_d^2``
    the mean over the repetitions ``k`` of ``y_dk`` = the mean over the ratios ``>= min_ratio``
    of ``err^2 n`` (one initialization and its samples). The repetitions at different ``d``
    are independent draws (``seeds.derive(seed, "init", d, k)``), so
    ``Var(log C_d) = Var(y_dk) / (4 K C_d^4)`` at each ``d`` independently (delta method), with
    the relative variance ``Var(y_dk) / C_d^4`` pooled over the ``D`` dimensions (``D (K - 1)``
    degrees of freedom); then ``Var(slope) = Var(log C) / sum_d (log d - mean)^2``. (A
    bootstrap that resamples the same repetition index at every ``d`` treats independent draws
    as paired and can miss most of this variance.)

    Args:
        study: :func:`smp.gradient_study`'s arrays.
        min_ratio: the smallest ``n / d^2`` fitted (as in :func:`smp.d_exponent`).

    Returns:
        ``(standard error, degrees of freedom)``; ``(inf, 0)`` with one repetition.
    """
    sel = np.asarray(study["ratios"]) >= min_ratio
    S2 = (study["err"][:, sel, :] ** 2) * np.asarray(study["n"][:, sel])[:, :, None]
    y = S2.mean(axis=1)  # (D, K)
    D, K = y.shape
    if K < 2:
        return math.inf, 0
    rel_var = float(np.mean(y.var(axis=1, ddof=1) / y.mean(axis=1) ** 2))
    x = np.log(np.asarray(study["ds"], dtype=np.float64))
    sxx = float(np.sum((x - x.mean()) ** 2))
    return math.sqrt(rel_var / (4 * K) / sxx), D * (K - 1)


def drift_shift(ds, kappa: float = KAPPA_DRIFT) -> float:
    """The ``d``-exponent that ``C(d) = C (1 + kappa / d)`` alone gives when fitted over
    ``ds`` (least squares of ``log(1 + kappa / d)`` against ``log d``): negative, about
    ``-kappa (1/d_min - 1/d_max) / log(d_max / d_min)``."""
    ds = np.asarray(ds, dtype=np.float64)
    return stats.fit_slope(np.log(ds), np.log1p(kappa / ds), axes="linear")


def t_multiplier(dof: int, coverage: float = COVERAGE) -> float:
    """Student's t quantile for a two-sided interval of ``coverage`` with ``dof`` degrees of
    freedom (3 for a normal law at 99.73 %)."""
    from scipy.stats import t

    return float(t.ppf(0.5 + coverage / 2, dof)) if dof > 0 else math.inf


def exponent_interval(P, R) -> tuple[float, float]:
    """Appendix J's ``error ~ C d / sqrt(n)`` read at the page's dimensions: the exponent lies
    in ``[1 + drift_shift(ds) - k SE, 1 + k SE]``, with ``SE`` and its degrees of freedom from
    :func:`exponent_se` and ``k`` = :func:`t_multiplier` (the finite-``d`` drift of ``C(d)``
    only lowers the exponent)."""
    se, dof = exponent_se(R.study)
    k = t_multiplier(dof)
    return 1 + drift_shift(P.ds) - k * se, 1 + k * se


# --- hypotheses ----------------------------------------------------------------------------------


def assumptions(P, R) -> list[Hypothesis]:
    """Paper B's Assumptions 1-3 (``b-asm-1..3``) for the prototype teachers at every
    dimension of the page (the worst case counts).

    Args:
        P: the parameters (unused).
        R: a :class:`Result` (``teachers``).

    Returns:
        ``[assumption_1, assumption_2, assumption_3]``.
    """
    return paper_assumptions(R.teachers)


def worst_reference_angle(R) -> float:
    """The worst nearest-neuron angle over ``Delta / 4`` in the population runs."""
    return max(r["worst nearest angle"] / (r["Delta"] / 4) for r in R.refs.values())


def population_run_recovers(P, R) -> Hypothesis:
    """The comparisons with the population run need that run (the reference, not the run
    being judged) to have recovered the teacher: every teacher has a visible neuron within
    ``Delta / 4`` (Stage 3's alignment criterion, ``b-thm-2#align``). With width ``m`` a
    Stage 1 draw can leave a teacher without a nearby neuron (Theorem 2's ``m >= m_0``).

    Args:
        P: the parameters.
        R: a :class:`Result` (``refs``).

    Returns:
        the hypothesis ``population_run_recovers``.
    """
    worst = worst_reference_angle(R)
    return make_hypothesis(
        "population_run_recovers",
        title="the population run recovers the teacher",
        statement="b-thm-2#align",
        value=worst,
        bound=1.0,
        op="<=",
        reason=""
        if worst <= 1
        else "a population run left a teacher without a visible "
        "neuron within Delta/4 (the width is below Theorem 2's m_0 for that draw)",
        detail="worst nearest-neuron angle over Delta/4 in the population runs",
    )


# --- checks: Stage 1's gradient on n samples --------------------------------------------------


def gradient_error_matches_law(P, R) -> Claim:
    """Sanity (not evidence): the root mean square of the relative error is the law
    ``sqrt(tr Sigma / n) / ||grad_W L||_F``, an identity of a mean of ``n`` i.i.d. terms
    (``E err^2 = tr Sigma / (n ||grad||^2)``); it checks the code, not Appendix J. Over the
    cells with ``n >= d^2`` the mean of ``err^2 / law^2`` is 1 within 4 standard errors of
    that mean plus twice the largest relative Monte Carlo error of a trace."""
    r2 = smp.law_ratio(R.study)
    ok = r2.size >= 3
    allow = (
        4 * r2.std(ddof=1) / math.sqrt(r2.size) + 2 * float(R.study["trace_rel_se"].max())
        if ok
        else math.inf
    )
    return Claim(
        "gradient_error_matches_law",
        "sanity",
        statement="b-app-j",
        value=abs(float(r2.mean()) - 1) if ok else None,
        bound=allow,
        op="<=",
        applies=(True, "") if ok else (False, "fewer than 3 cells with n >= d^2"),
        detail="|mean of err^2 / law^2 - 1| over the cells with n >= d^2 (an identity)",
    )


def exponent_resolves(P) -> tuple[bool, str]:
    """The exponent needs three dimensions spanning a factor 4, three repetitions and
    ``n >= d^2`` among the ratios (decided by the parameters)."""
    ok = len(P.ds) >= 3 and P.ds[-1] >= 4 * P.ds[0] and P.reps >= 3 and max(P.ratios) >= 1
    return ok, "needs three dimensions spanning 4x, 3 repetitions and n >= d^2"


def error_scales_as_d_over_sqrt_n(P, R, hyps: list[Hypothesis] | None = None) -> Claim:
    """Appendix J (``b-app-j``): the relative error of the empirical first-step gradient is
    ``~ C d / sqrt(n)``, so ``error sqrt(n) ~ d^p`` with ``p = 1`` (a fixed error needs
    ``n ~ d^2``). The fitted exponent must lie in :func:`exponent_interval`: 1 lowered by the
    finite-``d`` drift of ``C(d)`` (:data:`KAPPA_DRIFT`), widened by ``k`` standard errors
    over the independent initializations and samples (:func:`exponent_se`).

    Args:
        P: the parameters (``ds``, ``reps``, ``ratios``).
        R: a :class:`Result` (``study``, ``est``).
        hyps: Assumptions 1-3; ``None`` computes them from ``R``.

    Returns:
        the theorem claim (value: the fitted exponent).
    """
    ok, why = exponent_resolves(P)
    if hyps is None:
        hyps = assumptions(P, R)
    value = R.est.value if R.est is not None else None
    bound = exponent_interval(P, R) if R.est is not None else (-math.inf, math.inf)
    return Claim(
        "error_scales_as_d_over_sqrt_n",
        "theorem",
        statement="b-app-j",
        value=value,
        bound=bound,
        op="in",
        applies=hyps if ok else (False, why),
        detail="fitted exponent of d in the error x sqrt(n) (n >= d^2); interval: 1 + the "
        "C(d) drift - t SE, 1 + t SE",
    )


def error_at_16d2_below_one(P, R, hyps: list[Hypothesis] | None = None) -> Claim:
    """Appendix J's ``n = Theta(d^2)`` with the book's multiple: at ``n = 16 d^2`` the
    root mean square relative error is below 1 at every dimension, so the empirical step has
    a positive component along the population step (the law gives about ``C / 4 ~ 0.4``;
    an ``n ~ d^{3.4}`` law would give ``C d^{0.7} / 4``, above 1 from ``d ~ 10``).

    Args:
        P: the parameters (``ratios``).
        R: a :class:`Result` (``rms``).
        hyps: Assumptions 1-3; ``None`` computes them from ``R``.

    Returns:
        the theorem claim (value: the worst dimension's error at ``16 d^2``).
    """
    at16 = np.isclose(P.ratios, 16)
    if hyps is None:
        hyps = assumptions(P, R)
    return Claim(
        "error_at_16d2_below_one",
        "theorem",
        statement="b-app-j",
        value=np.asarray(R.rms)[:, at16].ravel() if at16.any() else None,
        bound=1.0,
        op="<",
        applies=hyps if at16.any() else (False, "16 is not among the ratios"),
        detail="RMS relative gradient error at n = 16 d^2, worst dimension",
    )


# --- checks: Algorithm 1 end to end -----------------------------------------------------------


def _by_d(R, which: str) -> list[dict]:
    """The first (smallest ``n``) or last (largest ``n``) row of every dimension."""
    out: dict = {}
    for row in R.rows:
        if which == "first":
            out.setdefault(row["d"], row)
        else:
            out[row["d"]] = row
    return list(out.values())


def first_rows(R) -> list[dict]:
    return _by_d(R, "first")


def last_rows(R) -> list[dict]:
    return _by_d(R, "last")


def fails_below_d2(P, R, recovered: Hypothesis | None = None) -> Claim:
    """Below ``d^2`` samples (the smallest ``n``, when it is ``<= d^2``) Algorithm 1 fails:
    its population loss is at least 5 times the population run's at every dimension (at
    ``16 d^2`` the ratio is about 1: a factor 5 separates the two).

    Args:
        P: the parameters.
        R: a :class:`Result` (``rows``, ``refs``).
        recovered: :func:`population_run_recovers`; ``None`` computes it.

    Returns:
        the observation claim (value: the worst dimension's loss ratio at the smallest n).
    """
    if recovered is None:
        recovered = population_run_recovers(P, R)
    first = first_rows(R)
    small = np.array([row["n / d^2"] <= 1 for row in first])
    ratio = np.array([row["L / L(population run)"] for row in first])
    return Claim(
        "fails_below_d2",
        "observation",
        statement="b-app-j",
        value=ratio[small] if small.any() else None,
        bound=5.0,
        op=">=",
        applies=[recovered] if small.any() else (False, "the smallest n is above d^2"),
        detail="population loss over the population run's at the smallest n, worst d",
    )


def gap_fraction(R) -> np.ndarray:
    """Per dimension, ``log(L_last / L_pop) / log(L_first / L_pop)``: the part of the
    logarithmic gap between the run at the smallest ``n`` and the population run that the run
    at the largest ``n`` leaves open."""
    first = np.array([row["L / L(population run)"] for row in first_rows(R)])
    last = np.array([row["L / L(population run)"] for row in last_rows(R)])
    return np.log(last) / np.log(first)


def recovered_at_largest_n(R) -> np.ndarray:
    """Per dimension, the worst nearest-neuron angle over ``Delta / 4`` of the run at the
    largest ``n`` (at most 1: every teacher has a visible neuron within ``Delta / 4``)."""
    return np.array(
        [row["worst nearest angle"] / (R.refs[row["d"]]["Delta"] / 4) for row in last_rows(R)]
    )


GAP_BOUND = 0.5

#: ``closes_the_gap_at_16d2`` is stated for widths of at least this. Measured over seeds
#: 0-15 at ``n = 16 d^2``, ``d`` in {6, 8, 10}, 3 epochs of 200 steps: the empirical Stage 1
#: left a teacher without a visible neuron within ``Delta / 4`` at the end (and the run then
#: left 0.35 to 0.83 of the gap open) in 3 of 32 runs at ``m = 20``, in none of 24 at
#: ``m = 30`` and none of 32 at ``m = 40``.
MIN_WIDTH = 40


def width_covers_on_samples(P, R=None) -> Hypothesis:
    """The comparison at ``16 d^2`` is stated for widths where the noisier empirical Stage 1
    leaves every teacher a nearby neuron (Theorem 2's ``m >= m_0``, ``b-thm-2#align``): at
    least :data:`MIN_WIDTH` neurons (measured over seeds; decided by the parameters, never by
    the run that is judged).

    Args:
        P: the parameters (``m``).
        R: unused.

    Returns:
        the hypothesis ``width_covers_on_samples``.
    """
    return make_hypothesis(
        "width_covers_on_samples",
        title="Theorem 2's width condition on samples",
        statement="b-thm-2#align",
        value=P.m,
        bound=MIN_WIDTH,
        op=">=",
        reason=""
        if P.m >= MIN_WIDTH
        else f"at m = {P.m} the empirical Stage 1 at 16 d^2 leaves a teacher uncovered in "
        f"some draws (3 of 32 at m = 20); the comparison is stated from m = {MIN_WIDTH}",
        detail="student width m of the end-to-end runs",
    )


def closes_the_gap_at_16d2(
    P, R, recovered: Hypothesis | None = None, width: Hypothesis | None = None
) -> Claim:
    """At ``n >= 16 d^2`` the run closes more than half of the logarithmic gap between the
    failed run at the smallest ``n`` (``<= d^2``) and the population run, at every dimension:
    ``log(L_16 / L_pop) / log(L_small / L_pop) <`` :data:`GAP_BOUND`. Its only hypothesis is
    that the reference, the population run, recovered the teacher; whether the run judged
    here recovered it is part of what is measured, never a gate. It is stated for widths of at
    least :data:`MIN_WIDTH` (:func:`width_covers_on_samples`).

    Args:
        P: the parameters.
        R: a :class:`Result` (``rows``, ``refs``).
        recovered: :func:`population_run_recovers`; ``None`` computes it.
        width: :func:`width_covers_on_samples`; ``None`` computes it.

    Returns:
        the observation claim (value: the worst dimension's fraction of the gap left open).
    """
    if recovered is None:
        recovered = population_run_recovers(P, R)
    if width is None:
        width = width_covers_on_samples(P)
    first, last = first_rows(R), last_rows(R)
    small = np.array([row["n / d^2"] <= 1 for row in first])
    large = np.array([row["n / d^2"] >= 16 for row in last])
    both = small & large
    return Claim(
        "closes_the_gap_at_16d2",
        "observation",
        statement="b-app-j",
        value=gap_fraction(R)[both] if both.any() else None,
        bound=GAP_BOUND,
        op="<",
        applies=[recovered, width]
        if both.any()
        else (False, "needs a smallest n <= d^2 and a largest n >= 16 d^2"),
        detail="log(L_16 / L_pop) / log(L_small / L_pop), worst dimension",
    )


def population_loss_improves_with_n(P, R) -> Claim:
    """More samples help: the population loss at the largest ``n`` is below that at the
    smallest, at every dimension."""
    first, last = first_rows(R), last_rows(R)
    return Claim(
        "population_loss_improves_with_n",
        "observation",
        statement="b-app-j",
        value=np.array([b["population loss"] / a["population loss"] for a, b in zip(first, last)]),
        bound=1.0,
        op="<",
        detail="population loss at the largest over at the smallest n, worst d",
    )


def overfits_at_smallest_n(P, R) -> Claim:
    """At the smallest ``n`` the network fits its samples better than the population
    (overfitting): empirical over population loss below 1 at every dimension."""
    first = first_rows(R)
    return Claim(
        "overfits_at_smallest_n",
        "observation",
        statement="b-app-j",
        value=np.array([row["empirical loss"] / row["population loss"] for row in first]),
        bound=1.0,
        op="<",
        detail="empirical over population loss at the smallest n, worst d",
    )


# --- the page's sentences, decided from the numbers -------------------------------------------


def gradient_reading(P, R, checks: dict) -> str:
    """The paragraph after the gradient study: the law (a sanity check), the fitted exponent
    with its standard error and interval, and the outcome of
    ``error_scales_as_d_over_sqrt_n`` (``checks``: the page's outcomes, ``None`` where a
    check does not apply)."""
    parts = []
    r2 = smp.law_ratio(R.study)
    if checks.get("gradient_error_matches_law") is not None:
        parts.append(
            "The root mean square error matches the law (the mean of "
            "$\\mathrm{err}^2/\\mathrm{law}^2$ over the cells with $n\\ge d^2$ is within "
            f"{abs(float(r2.mean()) - 1):.3f} of 1): an identity of a mean of i.i.d. terms, "
            "shown as a sanity check of the code."
        )
    if R.est is None:
        parts.append("No ratio reaches $n = d^2$: the exponent is not fitted here.")
        return " ".join(parts)
    se, dof = exponent_se(R.study)
    lo, hi = exponent_interval(P, R)
    fit = (
        f"$\\mathrm{{error}}\\cdot\\sqrt n \\propto d^p$ with $p =$ {R.est.value:.3f} "
        f"(standard error {se:.3f} over the independent initializations and samples, "
        f"{dof} degrees of freedom)"
    )
    outcome = checks.get("error_scales_as_d_over_sqrt_n")
    if outcome is None:
        _, why = exponent_resolves(P)
        parts.append(
            f"The fit gives {fit}; the check of Appendix J's exponent 1 does not apply here "
            f"({why})."
        )
    elif outcome:
        parts.append(
            f"The fit gives {fit}, inside [{lo:.3f}, {hi:.3f}]: 1 lowered by the drift of "
            f"$C(d)$ over these dimensions ({-drift_shift(P.ds):.3f}) and widened by "
            f"{t_multiplier(dof):.2f} standard errors. A fixed error needs $n\\propto d^{{2p}}$, "
            "Appendix J's $d^2$."
        )
    else:  # pragma: no cover - a failed theorem check stops the page
        parts.append(f"The fit gives {fit}, outside [{lo:.3f}, {hi:.3f}].")
    return " ".join(parts)


def _ratios_text(values) -> str:
    return ", ".join(f"{x:.2f}" for x in values)


def end_to_end_reading(P, R, checks: dict) -> str:
    """The paragraph after the end-to-end runs, decided from the checks (``checks``: the
    page's outcomes) and the measured ratios; whether the runs at the largest ``n`` recovered
    the teacher is reported as measured."""
    first, last = first_rows(R), last_rows(R)
    ratio_first = np.array([row["L / L(population run)"] for row in first])
    ratio_last = np.array([row["L / L(population run)"] for row in last])
    small = np.array([row["n / d^2"] <= 1 for row in first])
    large = np.array([row["n / d^2"] >= 16 for row in last])
    if checks.get("error_scales_as_d_over_sqrt_n"):
        head = (
            "In short: the error of the empirical first step is $\\approx C d/\\sqrt n$ (the "
            "$d$-exponent measured above), so a given relative error needs $n$ in proportion "
            "to $d^2$. "
        )
    else:
        head = "In short: the error of the empirical first step is measured above. "
    if checks.get("fails_below_d2"):
        below = (
            "End to end, below $d^2$ samples the network fits its samples without learning "
            "the teacher: its population loss is at least "
            f"{ratio_first[small].min():.0f} times the population run's"
        )
    else:
        below = (
            "End to end, at the smallest $n$ the population loss is "
            f"{_ratios_text(ratio_first)} times the population run's (the check that the "
            "algorithm fails below $d^2$ does not apply here)"
        )
    if not large.any():
        at16 = "this page's largest $n$ is below $16d^2$."
    else:
        angle = recovered_at_largest_n(R)[large]
        dims = [row["d"] for row, big in zip(last, large) if big]
        missed = [d for d, a in zip(dims, angle) if a > 1]
        recovered = (
            "every run at $16d^2$ left each teacher a visible neuron within $\\Delta/4$"
            if not missed
            else "the run at $16d^2$ left a teacher without a visible neuron within "
            f"$\\Delta/4$ at $d =$ {', '.join(map(str, missed))} (its noisier empirical "
            "Stage 1 left that teacher uncovered)"
        )
        at16 = (
            f"at $16d^2$ the population loss is {_ratios_text(ratio_last[large])} times the "
            "population run's"
        )
        gap = gap_fraction(R)[large & small]
        outcome = checks.get("closes_the_gap_at_16d2")
        if outcome:
            at16 += f", leaving at most {float(np.max(gap)):.2f} of the logarithmic gap open"
        elif outcome is None:
            at16 += " (the comparison with the gap does not apply here: see its row)"
        at16 += f"; {recovered}."
        if outcome:
            at16 += (
                " The paper leaves Stage 3's sample complexity to \"a large enough "
                'polynomial"; at this scale the multiple of $d^2$ that Stage 1 needs '
                "suffices end to end."
            )
    return head + below + "; " + at16


def takeaway_gradient(P, R, checks: dict) -> str:
    """The first takeaway, decided by ``error_scales_as_d_over_sqrt_n``."""
    text = (
        "- The empirical first-step gradient's error is "
        "$\\sqrt{\\operatorname{tr}\\Sigma/n}/\\|\\nabla_WL\\|_F$ in root mean square (an "
        "identity of a mean of i.i.d. terms)"
    )
    outcome = checks.get("error_scales_as_d_over_sqrt_n")
    if outcome:
        return text + (
            f"; its $d$-exponent, {R.est.value:.2f}, is consistent with 1 once the finite-$d$ "
            "drift of $C(d)$ and its standard error are allowed for: it scales like "
            "$d/\\sqrt n$, and Stage 1 needs $n\\propto d^2$ samples, as Appendix J says."
        )
    return text + (
        "; this page's dimensions and repetitions do not resolve its scaling in $d$ (the "
        "check does not apply)."
    )


def takeaway_end_to_end(P, R, checks: dict) -> str:
    """The second takeaway, decided by ``fails_below_d2`` and ``closes_the_gap_at_16d2``."""
    text = "- End to end, with the population $\\alpha_*, \\beta_*$ in the preprocessing, "
    fails = checks.get("fails_below_d2")
    closes = checks.get("closes_the_gap_at_16d2")
    text += (
        "Algorithm 1 fails below $n\\sim d^2$"
        if fails
        else "this run does not show Algorithm 1 failing below $n\\sim d^2$ (the check does "
        "not apply)"
    )
    if closes:
        last = last_rows(R)
        ratio = max(row["L / L(population run)"] for row in last if row["n / d^2"] >= 16)
        return text + (
            f" and, at $16d^2$, closes more than half of the logarithmic gap to the population "
            f"run (its loss is at most {ratio:.2f} times that run's)."
        )
    return text + "; the comparison at $16d^2$ does not apply here."
