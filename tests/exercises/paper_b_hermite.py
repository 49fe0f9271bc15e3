"""The exercises of ``notebooks/paper_b/hermite.md``."""

from __future__ import annotations

import numpy as np

from twolayer.paper_b.chapters import hermite as ch

from . import Asserted

CHAPTER = "paper_b/hermite"


def _degenerate_check(P, R) -> bool:
    """Assumption 3 alone fails, with ``kappa / |lambda_1(H)|`` at rounding level; ``H`` has
    rank ``r - 1`` in ``S_*``; along its null direction both the Monte Carlo estimate (within
    3 standard errors) and ``sigma_2 v^T H v`` are 0; ``second_order_projection`` holds."""
    a1, a2, a3 = ch.assumption_hypotheses(R)
    B = R.teacher.info["basis"]
    ev = np.abs(np.linalg.eigvalsh(B.T @ R.teacher.H() @ B))
    rank = int(np.sum(ev > 1e-12 * ev.max()))
    return (
        a1.holds
        and a2.holds
        and not a3.holds
        and a3.value < 1e-12
        and rank == P.r - 1
        and abs(R.theory[0]) < 1e-12 * np.abs(R.theory).max()
        and abs(R.mc[0]) < 3 * R.se[0]
        and ch.second_order_projection(P, R).outcome() is True
    )


def _betas_check(P, R) -> bool:
    """Every ``beta`` below the crossing ``~0.145``, where the printed bound exceeds the true
    maximum: ``lemma_i2_printed_bound_false`` does not apply; on the fine grid the printed
    bound fails at every ``beta`` above the crossing."""
    above = R.grid > R.crossing
    return (
        abs(R.crossing - 0.145) < 1e-3
        and bool(np.all(R.betas < R.crossing))
        and bool(np.all(R.i2_printed > R.i2_max))
        and ch.lemma_i2_printed_bound_false(P, R).outcome() is None
        and bool(above.any())
        and not bool(np.asarray(R.grid_printed_holds)[above].any())
        and ch.lemma_i2_printed_holds_iff_small_beta(P, R).outcome() is True
    )


EXERCISES = {
    "ex-hermite-degenerate": Asserted(
        params={"teacher": "degenerate", "m_star": 6},
        says="Assumption 3 fails (rank H = r - 1); along H's null direction the Monte Carlo "
        "and sigma_2 v^T H v are 0; second_order_projection still holds",
        check=_degenerate_check,
        run=ch.second_order,
    ),
    "ex-hermite-betas": Asserted(
        params={"betas_i2": [0.05, 0.1]},
        says="lemma_i2_printed_bound_false is not applicable (every beta below 0.145); the "
        "grid still shows the printed bound failing above the crossing",
        check=_betas_check,
        run=ch.appendix_i,
    ),
}
