"""Chapter "Frozen first layer" (``notebooks/paper_b/frozen.md``): the best loss of the
random-features model that Stage 1 leaves when the first layer is frozen, against Algorithm 1
at a small width (Paper B, Theorem 2 and Lemma 5).

``SPEC`` declares the page's parameters once; :func:`compute` runs the experiment;
:func:`hypotheses` and :func:`claims` return what the page records, each check from its own
function so that a test can call it on an input where the statement is false
(``tests/failing_cases/paper_b_frozen.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core import seeds
from ...core.params import Choice, Constraint, Float, Int, ListOf, Optional
from ...page.checks import Claim, Hypothesis, make_hypothesis
from ...page.contract import ChapterSpec
from .. import algorithm1 as alg
from .. import features as feat
from .. import population as pop
from .. import random_features as rf
from .. import teacher as tmod
from ..early_stages import default_m_star
from . import assumptions as paper_assumptions

__all__ = ["SPEC", "Result", "compute", "hypotheses", "claims", "m_star"]


def m_star(P) -> int:
    """The number of teacher neurons: ``P.m_star``, else ``r + 1``."""
    return P.m_star or default_m_star("random", P.r)


SPEC = ChapterSpec(
    chapter="paper_b/frozen",
    spec={
        "d": Int(4, 2000, explore=(8, 30), doc="input dimension"),
        "r": Choice(2, 3, explore=True, doc="dimension of the teacher subspace"),
        "m_star": Optional(Int(2, 6), explore=(2, 4), doc="teacher neurons (None: r + 1)"),
        "ms_frozen": ListOf(
            Int(4, 8000),
            min_len=3,
            increasing=True,
            explore=[[8, 32, 128], [16, 64, 256], [8, 24, 72, 216]],
            doc="widths of the frozen-first-layer models (even)",
        ),
        "m_alg": Int(4, 4000, explore=(16, 64), doc="width of the Algorithm 1 student (even)"),
        "lam0": Float(
            0,
            1,
            lo_open=True,
            explore=(0.005, 0.05),
            doc="Algorithm 1: Stage 2 and first Stage 3 weight decay",
        ),
        "epochs": Int(1, 30, explore=(1, 7), doc="Algorithm 1: Stage 3 epochs"),
        "steps": Int(
            10,
            10**6,
            explore=(100, 400),
            doc="Algorithm 1: steps of the first epoch (doubled every epoch)",
        ),
        "eta": Float(0, 1, lo_open=True, explore=(0.05, 0.2), doc="Algorithm 1: step size"),
    },
    defaults={
        "seed": 0,
        "profile": None,
        "results_path": None,
        "d": None,
        "r": 2,
        "m_star": None,
        "ms_frozen": None,
        "m_alg": None,
        "lam0": 0.02,
        "epochs": None,
        "steps": None,
        "eta": 0.1,
    },
    profiles={
        "smoke": {"d": 12, "ms_frozen": [8, 32, 128], "m_alg": 32, "epochs": 5, "steps": 200},
        "book": {
            "d": 20,
            "ms_frozen": [8, 16, 32, 64, 128, 256, 512, 1024, 2048],
            "m_alg": 32,
            "epochs": 7,
            "steps": 300,
        },
        "paper": {
            "d": 40,
            "ms_frozen": [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
            "m_alg": 40,
            "epochs": 8,
            "steps": 300,
        },
    },
    constraints=[
        Constraint(
            "m_star",
            lambda P: (
                tmod.m_star_range("random", P.r)[0]
                <= m_star(P)
                <= tmod.m_star_range("random", P.r)[1]
            ),
            "must lie in the teacher's range (r..4 for r = 2, r..6 for r = 3)",
        ),
        Constraint(
            "ms_frozen",
            lambda P: all(m % 2 == 0 for m in P.ms_frozen),
            "must be even (symmetric initialization)",
        ),
        Constraint("m_alg", lambda P: P.m_alg % 2 == 0, "must be even"),
        Constraint("d", lambda P: P.d > P.r, "must exceed r"),
    ],
)


@dataclass
class Result:
    """What the page computed.

    Attributes:
        teacher: the random teacher of rank ``r``.
        frozen_rows: per frozen width, ``{"m", "frozen best L", "epsilon_0 (rad)"}``.
        widths: the frozen widths, as floats.
        frozen_losses: the best frozen loss per width (nested feature sets).
        algorithm1_losses: Algorithm 1's loss after Stage 2, then after each Stage 3 epoch.
        lam_k: the Stage 3 weight decays ``lam0 / 2^k``, ``k = 0..epochs-1``.
        nearest_stage1: per teacher neuron, the angle to its nearest Stage 1 neuron (rad).
        pilot_losses: Algorithm 1's losses (Stage 2, then each epoch) from an independent
            initialization of the same width: the run that predicts whether Stage 3 is long
            enough, apart from the run that is judged.
    """

    teacher: tmod.Teacher
    frozen_rows: list
    widths: np.ndarray
    frozen_losses: np.ndarray
    algorithm1_losses: np.ndarray
    lam_k: np.ndarray
    nearest_stage1: np.ndarray
    pilot_losses: np.ndarray

    @property
    def algorithm1_final(self) -> float:
        return float(self.algorithm1_losses[-1])


def _algorithm1(P, net0: pop.Net, teacher) -> tuple[np.ndarray, pop.Net]:
    """Stages 1-3 of Algorithm 1 from ``net0``: the losses after Stage 2 and after each Stage 3
    epoch (lambda halved, steps doubled every epoch), and the Stage 1 network."""
    n1 = alg.stage1(net0, teacher)
    n2, _ = alg.stage2(n1, teacher, P.lam0)
    _, traj = alg.stage3(
        n2, teacher, P.lam0, P.epochs, steps=P.steps, eta=P.eta, record_every=P.steps, grow=2.0
    )
    losses = np.array(
        [pop.loss(n2, teacher)] + [pop.loss(net, teacher) for _, net in traj.snapshots]
    )
    return losses, n1


def compute(P) -> Result:
    """Run the chapter: the frozen sweep on one symmetric initialization of the largest width
    (its first ``m / 2`` pairs for width ``m``, so the feature sets are nested), and Algorithm 1
    at width ``m_alg`` on the same initialization's first pairs.

    Args:
        P: the validated parameters (``SPEC.params(...)`` or the page's ``contract.validate()``).

    Returns:
        a :class:`Result`.
    """
    tch = tmod.random_teacher(P.d, P.r, m_star(P), seeds.derive(P.seed, "teacher"))
    big = max(P.ms_frozen[-1], P.m_alg)
    full0 = alg.symmetric_init(P.d, big, seeds.derive(P.seed, "init"))
    rows = rf.frozen_sweep(tch, full0, P.ms_frozen)
    losses, n1 = _algorithm1(P, rf.nested(full0, P.m_alg), tch)
    pilot0 = alg.symmetric_init(P.d, P.m_alg, seeds.derive(P.seed, "pilot init"))
    pilot, _ = _algorithm1(P, pilot0, tch)
    return Result(
        teacher=tch,
        frozen_rows=rows,
        widths=np.array([r["m"] for r in rows], dtype=float),
        frozen_losses=np.array([r["frozen best L"] for r in rows]),
        algorithm1_losses=losses,
        lam_k=P.lam0 / 2.0 ** np.arange(P.epochs),
        nearest_stage1=feat.angles(n1, tch).min(0),
        pilot_losses=pilot,
    )


# --- hypotheses -------------------------------------------------------------------------------


def theorem2_width(P, R: Result) -> Hypothesis:
    """Theorem 2's width ``m >= m_0``, read on this draw: every teacher neuron has a Stage 1
    neuron within ``Delta / 2`` (closer to it than to any other teacher). Decided by Stage 1,
    before Stage 3 runs."""
    near, half = float(R.nearest_stage1.max()), R.teacher.info["Delta"] / 2
    return make_hypothesis(
        "theorem2_width",
        title="Theorem 2's width (Stage 1 covers every teacher)",
        statement="b-thm-2#loss",
        value=near,
        bound=half,
        op="<",
        reason=""
        if near < half
        else f"Stage 1 at width {P.m_alg} left a teacher {near:.2f} rad from every neuron, "
        f"beyond Delta / 2 = {half:.2f}: the width is below Theorem 2's m_0 for this draw",
        detail="largest angle from a teacher to its nearest Stage 1 neuron (rad)",
    )


def predicted_final_loss(P, R: Result) -> float:
    """Lemma 5's rate ``L = O(lambda_k^2)`` for the last epoch, with the largest constant
    ``L / lambda_k^2`` of the pilot run's earlier epochs (an independent initialization, so that
    the prediction does not use the run it gates); ``inf`` with one epoch."""
    if P.epochs < 2:
        return math.inf
    c_earlier = float((R.pilot_losses[1:-1] / R.lam_k[:-1] ** 2).max())
    return c_earlier * float(R.lam_k[-1]) ** 2


def stage3_long_enough(P, R: Result) -> Hypothesis:
    """Whether Stage 3 runs long enough for the comparison: Lemma 5's rate, with its constant
    from the pilot run (:func:`predicted_final_loss`), puts the last epoch below the widest
    frozen model."""
    predicted, widest = predicted_final_loss(P, R), float(R.frozen_losses[-1])
    return make_hypothesis(
        "stage3_long_enough",
        title="Stage 3 long enough (Lemma 5's rate)",
        statement="b-lem-5",
        value=predicted / widest,
        bound=1.0,
        op="<",
        reason=""
        if predicted < widest
        else (
            "one epoch gives no earlier constant"
            if P.epochs < 2
            else f"the rate predicts {predicted:.1e} after {P.epochs} epochs, not below the "
            f"widest frozen model's {widest:.1e}: more epochs are needed"
        ),
        detail="final loss Lemma 5's rate predicts (constant from an independent pilot run) "
        "over the widest frozen loss",
    )


def hypotheses(P, R: Result) -> list[Hypothesis]:
    """Assumptions 1-3 of the teacher, then :func:`theorem2_width` and
    :func:`stage3_long_enough`, in the page's order."""
    return paper_assumptions(R.teacher) + [theorem2_width(P, R), stage3_long_enough(P, R)]


# --- checks -------------------------------------------------------------------------------------


def frozen_loss_nonincreasing(P, R: Result) -> Claim:
    """Nested feature sets: the best frozen loss cannot increase with the width (sanity: an
    identity of least squares, up to the solver's tolerance)."""
    return Claim(
        "frozen_loss_nonincreasing",
        "sanity",
        value=float(np.diff(R.frozen_losses).max()),
        bound=1e-10,
        op="<=",
        detail="largest rise of the best frozen loss from one width to the next",
    )


def stage2_no_better_than_frozen(P, R: Result) -> Claim:
    """Stage 2 at width ``m_alg`` is a frozen-first-layer model (with a penalty), so it cannot
    beat the best frozen model of the same or a larger width (sanity)."""
    mm, fl = R.widths, R.frozen_losses
    ref = fl[np.searchsorted(mm, P.m_alg)] if P.m_alg <= mm[-1] else fl[-1]
    return Claim(
        "stage2_no_better_than_frozen",
        "sanity",
        value=float(R.algorithm1_losses[0] - ref),
        bound=-1e-10,
        op=">=",
        detail="loss after Stage 2 minus the best frozen loss at width >= m_alg",
    )


def frozen_loss_falls_with_width(P, R: Result) -> Claim:
    """The frozen model's best loss falls with the width, widest over narrowest below 1.
    Sanity, not evidence: the feature sets are nested, so the loss cannot rise
    (:func:`frozen_loss_nonincreasing`), and random directions in ``S_*`` add a new feature
    at every width, so a strict fall follows from the construction."""
    return Claim(
        "frozen_loss_falls_with_width",
        "sanity",
        statement="book-obs-frozen-features",
        value=float(R.frozen_losses[-1] / R.frozen_losses[0]),
        bound=1.0,
        op="<",
        detail="best frozen loss at the widest over at the narrowest width",
    )


def algorithm1_beats_widest_frozen(P, R: Result, applies) -> Claim:
    """The book's observation: training the first layer (Algorithm 1 at width ``m_alg``)
    reaches a loss below the widest frozen model's, where ``applies`` (the teacher's
    assumptions, :func:`theorem2_width`, :func:`stage3_long_enough`) hold."""
    return Claim(
        "algorithm1_beats_widest_frozen",
        "observation",
        statement="book-obs-frozen-features",
        value=R.algorithm1_final / float(R.frozen_losses[-1]),
        bound=1.0,
        op="<",
        applies=applies,
        detail="final loss of Algorithm 1 over the widest frozen model's loss",
    )


def claims(P, R: Result, hyps: list[Hypothesis]) -> list[Claim]:
    """Every check of the page, in its order (``hyps``: :func:`hypotheses`)."""
    return [
        frozen_loss_nonincreasing(P, R),
        stage2_no_better_than_frozen(P, R),
        frozen_loss_falls_with_width(P, R),
        algorithm1_beats_widest_frozen(P, R, hyps),
    ]


# --- the comparison the page reads ----------------------------------------------------------


@dataclass
class Extrapolation:
    """Local log-log slopes of the frozen curve beyond ``4 m_*`` and the widths at which the
    steepest and the shallowest would reach Algorithm 1's final loss (``nan`` when not)."""

    slopes: np.ndarray
    steepest: float
    shallowest: float
    width_if_steepest: float
    width_if_shallowest: float
    count: int  # finite negative slopes


def extrapolate(P, R: Result) -> Extrapolation:
    """How wide the frozen model would have to be to match Algorithm 1: only an extrapolation
    (:func:`~twolayer.paper_b.random_features.width_at`), not a bound."""
    mm, fl = R.widths, R.frozen_losses
    fit = mm >= 4 * m_star(P)
    slopes = rf.local_slopes(mm[fit], fl[fit]) if fit.sum() >= 2 else np.array([np.nan])
    finite = slopes[np.isfinite(slopes) & (slopes < 0)]
    if finite.size and R.algorithm1_final < fl[-1]:
        widths = [
            rf.width_at(mm[-1], fl[-1], R.algorithm1_final, s) for s in (finite.min(), finite.max())
        ]
    else:
        widths = [math.nan, math.nan]
    return Extrapolation(
        slopes=slopes,
        steepest=float(finite.min()) if finite.size else math.nan,
        shallowest=float(finite.max()) if finite.size else math.nan,
        width_if_steepest=widths[0],
        width_if_shallowest=widths[1],
        count=int(finite.size),
    )


def reading(P, R: Result, E: Extrapolation, beats: bool | None) -> str:
    """The page's paragraph on the extrapolation, as MyST Markdown, decided from this run and
    the outcome ``beats`` of :func:`algorithm1_beats_widest_frozen` (``None``: not applicable)."""
    final, widest, top = R.algorithm1_final, float(R.frozen_losses[-1]), int(R.widths[-1])
    if final < widest:
        return (
            "Continued from the widest model at the steepest of these slopes, the frozen "
            f"loss would reach Algorithm 1's final {final:.1e} at $m\\approx$ "
            f"{E.width_if_steepest:.3g}"
            + (
                f"; at the shallowest, at $m\\approx$ {E.width_if_shallowest:.3g}. Neither is "
                "a bound"
                if E.count >= 2
                else " (the only slope measured). It is not a bound"
            )
            + " (the slope may change again beyond the widths tried); what the page checks is "
            f"only that no frozen width up to {top} reaches Algorithm 1's loss (the widest "
            f"reaches {widest:.1e})"
            + ("." if beats else ", and that check does not apply here (see above).")
        )
    return (
        f"Here Algorithm 1's final loss, {final:.1e}, is not below the widest frozen model's "
        f"{widest:.1e}"
        + ("; the comparison does not apply (see the hypotheses above)." if beats is None else ".")
    )


def takeaways(P, R: Result, E: Extrapolation, beats: bool | None) -> str:
    """The page's takeaways (a Markdown list), decided from this run."""
    fl, mm = R.frozen_losses, R.widths
    finite = E.slopes[np.isfinite(E.slopes) & (E.slopes < 0)]
    drift = finite.size >= 2 and (finite.max() - finite.min()) > 0.1 * abs(finite.mean())
    out = [
        "- A frozen first layer is a random-features model in $S_*$: its best loss falls "
        f"from {fl[0]:.1e} to {fl[-1]:.1e} over widths {int(mm[0])} to {int(mm[-1])}"
        + (", at a rate that drifts between widths." if drift else ".")
    ]
    if beats:
        out.append(
            f"- Algorithm 1 at width {P.m_alg} reaches, within {P.epochs} Stage 3 epochs, a "
            "loss that the frozen model does not reach at any width tried here."
        )
    else:
        out.append(
            "- The comparison of Algorithm 1 with the frozen model does not apply to this run "
            "(see its hypotheses above)."
        )
    return "\n".join(out)


def slope_table(P, R: Result, E: Extrapolation):
    """The local slopes between consecutive widths (from ``4 m_*`` on), as a DataFrame."""
    import pandas as pd

    mm = R.widths[R.widths >= 4 * m_star(P)]
    return pd.DataFrame(
        {
            "widths": [f"{int(a)} -> {int(b)}" for a, b in zip(mm[:-1], mm[1:])],
            "local slope of the frozen loss": E.slopes,
        }
    )
