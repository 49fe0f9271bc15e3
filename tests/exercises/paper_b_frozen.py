"""The exercises of ``notebooks/paper_b/frozen.md``."""

from __future__ import annotations

from twolayer.paper_b.chapters import frozen as ch

from . import Asserted

CHAPTER = "paper_b/frozen"

#: the seed at which Stage 3 recovers from an uncovered teacher (``ex-frozen-small-width``)
RECOVERS = 5


def _with(P, **changes):
    """The parameters ``P`` with ``changes``, validated as the page would."""
    values = {k: P[k] for k in ch.SPEC.defaults if k not in ("profile", "results_path")}
    return ch.SPEC.params(P.profile, **{**values, **changes})


def _outcome(P, R):
    return ch.algorithm1_beats_widest_frozen(P, R, ch.hypotheses(P, R)).outcome()


def _small_width_run(P) -> dict:
    """The page's run at ``P.seed`` and at :data:`RECOVERS`."""
    Q = _with(P, seed=RECOVERS)
    return {"stalls": (P, ch.compute(P)), "recovers": (Q, ch.compute(Q))}


def _small_width_check(P, R) -> bool:
    """At both seeds ``theorem2_width`` fails and the comparison does not apply; at the first
    Algorithm 1's loss stalls (above half its Stage 2 loss, above the widest frozen model's),
    at the second it falls by more than a factor 100."""
    (Ps, Rs), (Pr, Rr) = R["stalls"], R["recovers"]
    uncovered = all(
        not ch.theorem2_width(Q, S).holds and _outcome(Q, S) is None
        for Q, S in ((Ps, Rs), (Pr, Rr))
    )
    stalls = (
        Rs.algorithm1_final > 0.5 * Rs.algorithm1_losses[0]
        and Rs.algorithm1_final > Rs.frozen_losses[-1]
    )
    recovers = Rr.algorithm1_final < 0.01 * Rr.algorithm1_losses[0]
    return uncovered and stalls and recovers


def _epochs_check(P, R) -> bool:
    """``epochs = 2``: the width holds, ``stage3_long_enough`` decides (it fails, so the
    comparison does not apply); one more epoch, or ``lam0 = 0.005``, makes it hold and the
    comparison apply (and hold)."""
    decided = (
        ch.theorem2_width(P, R).holds
        and not ch.stage3_long_enough(P, R).holds
        and _outcome(P, R) is None
    )
    fixes = []
    for Q in (_with(P, epochs=P.epochs + 1), _with(P, lam0=0.005)):
        S = ch.compute(Q)
        fixes.append(ch.stage3_long_enough(Q, S).holds and _outcome(Q, S) is True)
    return decided and all(fixes)


EXERCISES = {
    "ex-frozen-small-width": Asserted(
        params={"m_alg": 8, "seed": 1, "epochs": 4, "steps": 100},
        says="theorem2_width fails at seeds 1 and 5 (comparison not applicable); the loss "
        "stalls at seed 1 and falls more than 100-fold at seed 5",
        check=_small_width_check,
        run=_small_width_run,
    ),
    "ex-frozen-epochs": Asserted(
        params={"epochs": 2},
        says="stage3_long_enough decides (fails at 2 epochs); epochs = 3 or lam0 = 0.005 "
        "makes the comparison apply",
        check=_epochs_check,
    ),
}
