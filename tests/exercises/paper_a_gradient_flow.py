"""The exercises of ``notebooks/paper_a/gradient_flow.md``."""

from __future__ import annotations

from twolayer.paper_a.chapters import gradient_flow as gf

from . import Asserted

CHAPTER = "paper_a/gradient_flow"

#: the statements whose theorem checks need Theorem 3.2's assumption
NEEDS_ASSUMPTION = ("a-thm-3-2", "a-thm-3-4", "a-cor-3-5")


def _main_runs(P):
    """The page's first two steps: the data and ``W*`` (:func:`~gf.target`), and the flow
    from every initialization (:func:`~gf.train`); the discretisation, the sweep over leaks
    and the phase diagram are not read."""
    S = gf.target(P)
    return S, gf.train(P, S)


def _main_checks(P, S, T) -> list:
    """Every check of ``W*`` and of the trained runs, as the page records them."""
    hyp, reached = gf.near_orthogonality(P, S), gf.loss_below_log2_over_n(P, T)
    return gf.target_claims(P, S, hyp) + gf.training_claims(P, S, T, hyp, reached=reached)


def _gap_check(P, R) -> bool:
    S, T = R
    checks = {c.name: c for c in _main_checks(P, S, T)}
    covered = [
        c
        for c in checks.values()
        if c.kind == "theorem" and (c.statement or "").split("#")[0] in NEEDS_ASSUMPTION
    ]
    return (
        not gf.near_orthogonality(P, S).holds
        and len(covered) > 0
        and all(c.outcome() is None for c in covered)
        and checks["thm31_direction_is_kkt_point"].outcome() is True
        and checks["distance_falls_like_one_over_s"].outcome() is True
        and float(T.final.dist_to_convex.max()) <= P.tol
    )


def _linear_check(P, S) -> bool:
    return abs(S.z_bound - 1.0) <= 1e-12 and abs(S.wstar_z_ratio - 1.0) <= gf.SOLVER_TOL


def _with_page_tol(P):
    """The main runs at ``P`` and the steps they take at the profile's own ``tol``."""
    P0 = gf.SPEC.params(P.profile, seed=P.seed)
    return _main_runs(P), gf.train(P0, gf.target(P0)).total_steps


def _tol_check(P, out) -> bool:
    (S, T), steps_page = out
    longer = T.total_steps / steps_page  # tol is five times smaller than the profile's
    every = _main_checks(P, S, T)
    return 4.0 <= longer <= 6.0 and all(c.outcome() is True for c in every)


EXERCISES = {
    "ex-gradient-flow-gap": Asserted(
        params={"gap": 2.5},
        says="the assumption fails and every theorem check of Theorems 3.2, 3.4 and "
        "Corollary 3.5 is not applicable; thm31_direction_is_kkt_point passes; the distances "
        "to W* fall like 1/s to below tol",
        check=_gap_check,
        run=_main_runs,
    ),
    "ex-gradient-flow-linear": Asserted(
        params={"gamma": 1.0, "m1": 2, "m2": 2},
        says="item 7's bound 2/(kappa + gamma) is 1 and ||z|| / ||z*|| at W* is 1 to the "
        "solver's 1e-7",
        check=_linear_check,
        run=gf.target,
    ),
    "ex-gradient-flow-tol": Asserted(
        params={"tol": 0.02},
        says="a five times smaller tol (0.02 against 0.1) makes the run 4 to 6 times longer "
        "and every check of W* and of the trained runs passes",
        check=_tol_check,
        run=_with_page_tol,
    ),
}
