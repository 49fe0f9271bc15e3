"""When the bias hurts, noisy 2-XOR (Paper A, Section 5): the chapter
``notebooks/paper_a/noisy_xor`` (page ``chapter-noisy-xor``).

The page declares its parameters here (:data:`SPEC`), trains with :func:`compute` (through
:mod:`twolayer.paper_a.xor`: exact low-dimensional coordinates of high-dimensional noisy XOR,
loss-normalized gradient descent from every initialization scale, every run of the sweep over
``d`` trained for the same number of steps) and records the hypotheses (``hyp_*``) and checks
(one function per check, named like the check) computed here from a :class:`Result`. Every
check function takes ``(P, R)`` and works on a hand-made ``R`` too
(``tests/failing_cases/paper_a_noisy_xor.py``).

Paper A, Section 5: with ``||mu_1|| = ||mu_2|| = d^beta``, ``beta < 1/2``, noisy 2-XOR data
satisfy Theorem 3.2's assumption once ``d >> n^{1/(1-2 beta)} v n^2``; then the limit of
gradient flow has a linear decision boundary (Corollary 3.5, item 6), so its test error is 1/2
(every linear classifier errs on half of the distribution), whatever the initialization. The
low-dimensional control and the dimension at which the error reaches chance are the book's
own observations (``book-obs-xor-low-dim``, ``book-obs-xor-chance``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core import seeds as seeds_
from ...core import stats
from ...core.params import Choice, Device, Float, Int, ListOf
from ...page.checks import Claim, Hypothesis, make_hypothesis
from ...page.contract import ChapterSpec
from .. import models, xor

SPEC = ChapterSpec(
    chapter="paper_a/noisy_xor",
    spec={
        "device": Device(
            doc='where the tensors live; "auto": CUDA when present, else the CPU',
            fixed="machinery: where the tensors live, not the mathematics",
        ),
        "dtype": Choice(
            "float64", "float32", explore=True, doc="floating-point type of the tensors"
        ),
        "n": Int(4, 256, explore=(10, 30), doc="training points of the sweep over d"),
        "dims": ListOf(
            Int(2, 10**12),
            min_len=2,
            increasing=True,
            explore=[
                [2, 1000, 10**9],
                [2, 64, 1000, 10**9],
                [2, 16, 256, 10**4, 10**6, 10**9],
            ],
            doc="dimensions d of the sweep",
        ),
        "beta": Float(
            0,
            0.5,
            hi_open=True,
            explore=(0.0, 0.45),
            doc="cluster-mean norm ||mu_1|| = ||mu_2|| = d^beta",
        ),
        "gamma": Float(0, 1, lo_open=True, explore=(0.2, 1.0), doc="leak of the leaky ReLU"),
        "m_half": Int(1, 256, explore=(4, 16), doc="neurons of each sign, m1 = m2"),
        "loss": Choice("exp", "logistic", explore=True, doc="training loss"),
        "init_scales": ListOf(
            Float(0, 1e3, lo_open=True),
            increasing=True,
            explore=[[0.001, 1.0], [0.01, 0.3], [0.001, 3.0]],
            doc="initialization scales: w_j ~ N(0, scale^2/k I_k) in the k data coordinates",
        ),
        "steps": Int(
            10,
            10**7,
            explore=(250, 3000),
            doc="normalized GD steps before the runs are extended to reach tol",
        ),
        "tol": Float(
            0,
            0.5,
            lo_open=True,
            explore=(0.01, 0.1),
            doc="where the assumption holds, sign f must agree with "
            "sign <z, x> on all but a fraction tol of the test points",
        ),
        "seeds": Int(2, 256, explore=(3, 12), doc="independent training sets per d"),
        "n_test": Int(100, 10**6, explore=(1000, 8000), doc="fresh test points per training set"),
        "n_low": Int(
            4, 10**5, explore=(100, 800), doc="training points of the low-dimensional control"
        ),
        "d_low": Int(2, 64, explore=(2, 4), doc="its dimension"),
        "conf": Float(
            0.5, 1, hi_open=True, explore=(0.9, 0.99), doc="level of the t-intervals over seeds"
        ),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "device": "auto",
        "dtype": "float64",
        "n": None,
        "dims": None,
        "beta": 0.25,
        "gamma": 0.5,
        "m_half": 16,
        "loss": "exp",
        "init_scales": [0.001, 1.0],
        "steps": None,
        "tol": None,
        "seeds": None,
        "n_test": None,
        "n_low": None,
        "d_low": 2,
        "conf": 0.95,
    },
    profiles={
        "smoke": {
            "n": 20,
            "dims": [2, 64, 1000, 10**9],
            "steps": 500,
            "tol": 0.05,
            "seeds": 6,
            "n_test": 2000,
            "n_low": 200,
        },
        "book": {
            "n": 40,
            "dims": [2, 4, 16, 64, 256, 10**3, 10**4, 10**6, 10**8, 10**9],
            "steps": 1500,
            "tol": 0.01,
            "seeds": 8,
            "n_test": 4000,
            "n_low": 400,
        },
        "paper": {
            "n": 64,
            "dims": [
                2,
                4,
                8,
                16,
                32,
                64,
                128,
                256,
                10**3,
                10**4,
                10**5,
                10**6,
                10**7,
                10**8,
                10**9,
                10**10,
            ],
            "steps": 5000,
            "tol": 0.005,
            "seeds": 32,
            "n_test": 20_000,
            "n_low": 1000,
        },
    },
)


# --- the runs ------------------------------------------------------------------------------------


@dataclass
class Result:
    """What the page's runs computed.

    ``runs``: one row per run of the sweep over ``d`` (:func:`twolayer.paper_a.xor.
    train_and_test`: ``d, seed, init_scale, ratio, holds, train_error, test_error,
    linear_agreement, loss_ratio, steps``); ``table``: one row per scale and ``d``
    (:func:`twolayer.paper_a.xor.summarize`); ``low``: the runs of the low-dimensional control;
    ``low_table``: per scale, its mean test error with the ``conf`` t-interval
    (``init, error, ci_low, ci_high``)."""

    runs: pd.DataFrame
    table: pd.DataFrame
    low: pd.DataFrame
    low_table: pd.DataFrame
    batch: xor.XorBatch | None = None  # the sweep's data sets (``keep_weights`` only)
    W0: np.ndarray | None = None  # (runs, m, k) initial weights of the sweep (ditto)
    W: np.ndarray | None = None  # (runs, m, k) final weights of the sweep (ditto)

    def low_err(self) -> dict:
        """``{scale: (mean, low, high)}`` of the control's test error."""
        return {
            r.init: (r.error, r.ci_low, r.ci_high) for r in self.low_table.itertuples(index=False)
        }


def network(P) -> models.LeakyNetwork:
    """The page's network: ``m_half`` neurons of each sign, the leaky ReLU with leak
    ``gamma`` (Paper A, eq. (2))."""
    return models.LeakyNetwork(P.m_half, P.m_half, gamma=P.gamma)


def compute(P, *, device=None, dtype="float64", keep_weights: bool = False) -> Result:
    """Train on the sweep over ``d`` and on the low-dimensional control.

    The sweep: ``seeds`` noisy-XOR training sets of ``n`` points per ``d`` of ``dims`` (exact
    span coordinates), trained by loss-normalized gradient descent from every scale of
    ``init_scales`` for ``steps`` steps; where a training set satisfies Theorem 3.2's
    assumption the runs are extended until the ``1/s`` rate brings their decision boundary
    within ``tol / 2`` of linear, and **every other run is extended by the same number of
    steps** (``equal_steps``): every ``d`` is measured after the same training. The control:
    ``n_low`` points in ``d_low`` dimensions, ``steps`` steps.

    Args:
        P: the page's validated parameters.
        device: where the runs compute (``None``: the CPU).
        dtype: the runs' floating-point type.
        keep_weights: keep the sweep's data sets and initial and final weights in the
            result (for the tests of the page's setup).

    Returns:
        The :class:`Result`.
    """
    net = network(P)
    on_device = {"device": device, "dtype": dtype}
    batch = xor.xor_batch(P.n, P.dims, P.seeds, P.n_test, beta=P.beta, gamma=P.gamma, seed=P.seed)
    kept: dict | None = {} if keep_weights else None
    runs = xor.train_and_test(
        net, batch, P.loss, P.init_scales, steps=P.steps, seed=P.seed, tol=P.tol, equal_steps=True,
        weights=kept, **on_device,
    )  # fmt: skip
    table = xor.summarize(runs, P.conf, P.n_test, P.seeds)
    low_batch = xor.xor_batch(
        P.n_low,
        [P.d_low],
        P.seeds,
        P.n_test,
        beta=P.beta,
        gamma=P.gamma,
        seed=seeds_.derive(P.seed, "control"),
    )
    low = xor.train_and_test(
        net, low_batch, P.loss, P.init_scales, steps=P.steps, seed=P.seed, **on_device
    )
    low_err = {s: stats.t_interval(g.test_error, P.conf) for s, g in low.groupby("init_scale")}
    low_table = pd.DataFrame(
        [{"init": s, "error": v[0], "ci_low": v[1], "ci_high": v[2]} for s, v in low_err.items()]
    )
    if kept is None:
        return Result(runs, table, low, low_table)
    return Result(runs, table, low, low_table, batch, kept["W0"], kept["W"])


# --- the statistics the page reports ----------------------------------------------------------


def high(R: Result) -> pd.DataFrame:
    """The table's rows (scale, ``d``) where every training set satisfies the assumption."""
    return R.table[R.table.assumption_holds == 1]


def high_runs(R: Result) -> pd.DataFrame:
    """The runs whose training set satisfies the assumption."""
    return R.runs[R.runs.holds]


def d_assumption(R: Result) -> float:
    """The smallest ``d`` of the grid at which every training set satisfies the assumption
    (``nan``: none)."""
    by_d = R.runs.groupby("d").holds.all()
    return float(min(by_d[by_d].index)) if by_d.any() else float("nan")


def d_chance(R: Result) -> dict:
    """Per scale, the smallest ``d`` from which on the mean error is at chance
    (:func:`twolayer.paper_a.xor.first_d_at_chance`)."""
    return xor.first_d_at_chance(R.table)


def chance_factors(R: Result) -> list[float]:
    """Per scale, ``d_assumption / d_chance``: how many times smaller than the assumption's
    dimension the error is already at chance."""
    d_asm = d_assumption(R)
    return [d_asm / v for v in d_chance(R).values()]


def error_slack(P, R: Result) -> np.ndarray:
    """For each row of :func:`high`, how far its mean error may lie from 1/2: 5 binomial
    standard deviations of the mean over the seeds plus the fraction of test points on which the
    boundary is not yet linear (:func:`twolayer.paper_a.xor.chance_slack`)."""
    return np.array(
        [xor.chance_slack(P.n_test, P.seeds, r.mean_disagreement) for r in high(R).itertuples()]
    )


# --- hypotheses ----------------------------------------------------------------------------------


def hyp_near_orthogonality(P, R: Result) -> Hypothesis:
    """Theorem 3.2's assumption holds for every training set at some ``d`` of the grid."""
    worst_ratio = R.runs.groupby("d").ratio.max()
    return make_hypothesis(
        "xor_near_orthogonality",
        value=float(worst_ratio.min()),
        bound=1.0,
        op="<=",
        title="Theorem 3.2 (at some d of the grid, for every training set)",
        statement="a-thm-3-2",
        reason=f"at every d of the grid some training set has n / n_max > 1 (the smallest "
        f"worst case is {worst_ratio.min():.3g}); add larger dims",
        detail="smallest over d of the largest n / n_max over the training sets",
    )


def hyp_nonlinear(P, R: Result | None = None) -> Hypothesis:
    """The network is not linear (leak below 1): only then can it represent XOR."""
    return make_hypothesis(
        "nonlinear_network",
        value=P.gamma,
        bound=1.0,
        op="<",
        title="a nonlinear network (leak below 1)",
        statement="book-obs-xor-low-dim",
        reason="gamma = 1: the network is linear and cannot represent XOR",
        detail="the leak gamma",
    )


def hyp_grid_locates_both(P, R: Result) -> Hypothesis:
    """The grid shows, for every scale, where the error reaches chance and where the
    assumption holds for every training set."""
    f = chance_factors(R)
    return make_hypothesis(
        "grid_locates_chance_and_assumption",
        bool(np.isfinite(f).all()),
        title="the grid locates both dimensions",
        statement="book-obs-xor-chance",
        reason="the grid does not show where the error reaches chance or where the "
        "assumption holds for every training set",
        detail="d_chance (per scale) and d_assumption are both on the grid",
    )


def hypotheses(P, R: Result) -> list[Hypothesis]:
    """Every hypothesis the page records (the first is glued above the page's prose)."""
    return [hyp_near_orthogonality(P, R), hyp_nonlinear(P, R), hyp_grid_locates_both(P, R)]


# --- checks --------------------------------------------------------------------------------------


def high_dim_loss_below_log2_over_n(P, R: Result) -> Claim:
    """Theorem 3.4 (with Theorem 3.1): under the assumption the loss ends below ``log(2)/n``,
    so every training point is classified correctly (a point with ``y f <= 0`` alone
    contributes ``log 2 / n``).

    Args:
        P: the page's parameters.
        R: the runs (``loss_ratio = n L / log 2`` of those under the assumption).

    Returns:
        The theorem check; not applicable where no ``d`` of the grid satisfies the assumption.
    """
    return Claim(
        "high_dim_loss_below_log2_over_n",
        "theorem",
        value=high_runs(R).loss_ratio.to_numpy(),
        bound=1.0,
        op="<",
        statement="a-thm-3-4",
        applies=[hyp_near_orthogonality(P, R)],
        detail="largest n L / log 2 at the end, over the runs under the assumption",
    )


def high_dim_boundary_linear(P, R: Result) -> Claim:
    """Corollary 3.5, item 6: the limit's decision boundary is linear; at the end of every run
    under the assumption, ``sign f`` agrees with ``sign <z, x>`` on all but a fraction ``tol`` of
    the test points. (The runs are extended by the ``1/s`` rule to reach ``tol / 2``: a rate
    slower than ``1/s``, or a boundary that does not become linear, fails it.)

    Args:
        P: the page's parameters (``tol``).
        R: the runs.

    Returns:
        The theorem check; not applicable where no ``d`` satisfies the assumption.
    """
    return Claim(
        "high_dim_boundary_linear",
        "theorem",
        value=(1 - high_runs(R).linear_agreement).to_numpy(),
        bound=P.tol,
        op="<=",
        statement="a-cor-3-5",
        applies=[hyp_near_orthogonality(P, R)],
        detail="largest share of test points with sign f ≠ sign⟨z, x⟩, over those runs",
    )


def high_dim_error_is_half(P, R: Result) -> Claim:
    """Paper A, Section 5: so the test error is 1/2, up to the binomial noise of the test sets
    (5 standard deviations of the mean over the seeds) plus the fraction on which the boundary
    is not yet linear; for every ``d`` and scale where every training set satisfies the
    assumption.

    Args:
        P: the page's parameters.
        R: the runs (:func:`high`).

    Returns:
        The theorem check; not applicable where no ``d`` satisfies the assumption.
    """
    h = high(R)
    return Claim(
        "high_dim_error_is_half",
        "theorem",
        value=(np.abs(h.error - 0.5) - error_slack(P, R)).to_numpy(),
        bound=0.0,
        op="<=",
        statement="a-sec-5#xor",
        applies=[hyp_near_orthogonality(P, R)],
        detail="largest |mean test error − 1/2| minus its slack, over d and init",
    )


def low_dim_learns_xor(P, R: Result) -> Claim:
    """The book's observation ``book-obs-xor-low-dim``: the same network, trained the same way
    on more points in low dimension, learns XOR: the whole ``conf`` interval of its test error
    lies below 1/2, the error of every linear rule.

    Args:
        P: the page's parameters (``gamma``, ``conf``).
        R: the control's runs (``low_table``).

    Returns:
        The observation; not applicable for a linear network (``gamma = 1``).
    """
    return Claim(
        "low_dim_learns_xor",
        "observation",
        value=R.low_table.ci_high.tolist(),
        bound=0.5,
        op="<",
        statement="book-obs-xor-low-dim",
        applies=[hyp_nonlinear(P)],
        detail=f"largest upper end of the {P.conf:.0%} interval of the control's error",
    )


def error_at_chance_before_assumption(P, R: Result) -> Claim:
    """The book's observation ``book-obs-xor-chance``: with every run trained for the same
    number of steps, the error is at chance (within 5 binomial standard deviations of 1/2, no
    allowance for a boundary that is not yet linear) from a dimension on that is below the one
    where the assumption holds for every training set: ``d_assumption / d_chance > 1`` for
    every scale (a factor > 1 means at least one grid point below).

    Args:
        P: the page's parameters.
        R: the runs (:func:`chance_factors`).

    Returns:
        The observation; not applicable where the grid does not locate both dimensions.
    """
    return Claim(
        "error_at_chance_before_assumption",
        "observation",
        value=chance_factors(R),
        bound=1.0,
        op=">",
        statement="book-obs-xor-chance",
        applies=[hyp_grid_locates_both(P, R)],
        detail="smallest d_assumption / d_chance over the initializations (equal steps)",
    )


#: the checks in the order the page records them
CHECKS = (
    high_dim_loss_below_log2_over_n,
    high_dim_boundary_linear,
    high_dim_error_is_half,
    low_dim_learns_xor,
    error_at_chance_before_assumption,
)


def claims(P, R: Result) -> list[Claim]:
    """Every check of the page."""
    return [f(P, R) for f in CHECKS]


def metrics(P, R: Result) -> dict:
    """The page's results: the errors by scale and ``d``, under the assumption and of the
    control, the two dimensions of the closing paragraph and the steps every run trained."""
    by_key = {f"{r.init:g}/{r.d}": r for r in R.table.itertuples()}
    h = high(R)
    low_err = R.low_err()
    return {
        "error_by_d": {k: r.error for k, r in by_key.items()},
        "high_dim_error": {k: r.error for k, r in by_key.items() if r.assumption_holds == 1},
        "high_dim_error_ci": [float(h.ci_low.min()), float(h.ci_high.max())] if len(h) else [],
        "low_dim_error": {f"{s:g}": v[0] for s, v in low_err.items()},
        "low_dim_error_ci": {f"{s:g}": list(v[1:]) for s, v in low_err.items()},
        "d_chance": {f"{s:g}": v for s, v in d_chance(R).items()},
        "d_assumption": d_assumption(R),
        "steps_used": int(R.runs.steps.max()),
    }


#: the metrics the page's prose glues under their own names
GLUED_METRICS = ("d_assumption", "steps_used")


# --- what the page says (MyST Markdown: the book renders glued Markdown as MyST) ----------------


def tex_d(x) -> str:
    """A dimension as inline math: ``$d = 10^{9}$`` for a power of ten from 1000 on."""
    return f"$d = {xor.tex_number(x)}$"


def data_text(P) -> str:
    """The data of the sweep, in words and inline math."""
    return (
        f"$n = {P.n}$ training points, cluster means of norm "
        f"$\\lVert\\mu_1\\rVert = \\lVert\\mu_2\\rVert = d^{{\\beta}}$ with "
        f"$\\beta = {P.beta:g}$, leak $\\gamma = {P.gamma:g}$, $m = {2 * P.m_half}$ neurons, "
        f"the {P.loss} loss, {P.seeds} training sets per $d$ and {P.n_test} test points each"
    )


def low_data_text(P) -> str:
    """The control's data."""
    return f"$n = {P.n_low}$ points in $d = {P.d_low}$ dimensions"


def d_chance_text(R: Result) -> str:
    """Per scale, the dimension from which on the error is at chance."""
    return ", ".join(
        (tex_d(v) if np.isfinite(v) else "no $d$") + f" (initialization {s:g})"
        for s, v in d_chance(R).items()
    )


def d_assumption_text(R: Result) -> str:
    """The dimension from which on every training set satisfies the assumption."""
    d = d_assumption(R)
    return tex_d(d) if np.isfinite(d) else "no $d$ of the grid"


def high_error_text(R: Result) -> str:
    """The mean error with its interval at every ``d`` and scale under the assumption."""
    return (
        "; ".join(
            f"{r.error:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}] at {tex_d(r.d)}, "
            f"initialization {r.init:g}"
            for r in high(R).itertuples()
        )
        or "none: no $d$ of the grid satisfies the assumption"
    )


def low_error_text(R: Result) -> str:
    """The control's mean error with its interval, per scale."""
    return "; ".join(
        f"{m_:.3f} [{lo:.3f}, {hi:.3f}] from the initialization {s:g}"
        for s, (m_, lo, hi) in R.low_err().items()
    )


def low_learns_text(passed: bool | None) -> str:
    """Whether the control learns XOR, as its check decided it."""
    if passed:
        return "learns XOR (its whole interval lies below 1/2)"
    return "is not checked here (the check `low_dim_learns_xor` does not apply)"


def chance_before_text(passed: bool | None) -> str:
    """The closing paragraph's first sentence, as the check decided it."""
    if passed:
        return (
            "With every run trained for the same number of steps, the error reaches chance "
            "before the assumption holds."
        )
    return (
        "Whether the error reaches chance before the assumption holds is not decided on this "
        "grid (the check does not apply)."
    )


def chance_takeaway_text(R: Result, passed: bool | None) -> str:
    """The takeaway on where the error reaches chance."""
    f = chance_factors(R)
    if passed:
        return (
            f"With every run trained as long, the transition to chance-level error comes at "
            f"dimensions {float(np.nanmin(f)):,.0f} or more times smaller than the one at "
            "which the assumption holds for every training set."
        )
    return (
        "This grid does not show where the error reaches chance, or where the assumption holds "
        "for every training set: the factor between them is not measured here."
    )


def low_dim_takeaway_text(passed: bool | None) -> str:
    """The takeaway on the control."""
    if passed:
        return (
            "The network is not the problem: in low dimension, trained the same way, it learns XOR."
        )
    return (
        "At these parameters the low-dimensional control is not checked (the check "
        "`low_dim_learns_xor` does not apply), so it does not show that the network could "
        "learn XOR."
    )


def factor_min(R: Result) -> float:
    """The smallest factor ``d_assumption / d_chance`` over the scales (``nan``: none)."""
    f = chance_factors(R)
    return float(np.nanmin(f)) if np.isfinite(f).any() else float("nan")
