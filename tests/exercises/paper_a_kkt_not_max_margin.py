"""The exercises of ``notebooks/paper_a/kkt_not_max_margin.md``."""

from __future__ import annotations

from twolayer.paper_a.chapters import kkt_not_max_margin as kkt

from . import Asserted

CHAPTER = "paper_a/kkt_not_max_margin"

#: the page's default ``eps``, against which both exercises compare
EPS_PAGE = kkt.SPEC.defaults["eps"]


def _page_eps(P):
    """``P`` with the page's ``eps`` (a two-point grid of ``eps``: the grid's table is not
    read, only the example at ``eps`` and the flow on it)."""
    return kkt.SPEC.params(P.profile, seed=P.seed, init_mults=P.init_mults, num_eps=2)


def _with_page_angle(P):
    """The page's run at ``P``, and the angle between ``z`` and ``z*`` at the page's ``eps``."""
    return kkt.compute(P), kkt.algebra(_page_eps(P)).angle_z_zstar


def _with_page_steps(P):
    """The page's run at ``P``, and the steps the flow takes at the page's ``eps``."""
    P0 = _page_eps(P)
    A0 = kkt.algebra(P0)
    return kkt.compute(P), A0.angle_z_zstar, kkt.train(P0, A0).total_steps


def _eps_check(P, out) -> bool:
    R, angle_page = out
    grows = 3.0 <= R.algebra.angle_z_zstar / angle_page <= 5.0  # eps is 4 times the page's
    h = kkt.near_orthogonality(P, R)
    flow = [
        kkt.thm34_loss_below_log2_over_n(P, R, h),
        kkt.flow_reaches_convex_optimum(P, R, h),
        kkt.flow_converges_to_z_not_zstar(P, R, h),
    ]
    algebra_apply = all(c.outcome() is True for c in kkt.algebra_claims(P, R))
    return grows and not h.holds and all(c.outcome() is None for c in flow) and algebra_apply


def _small_eps_check(P, out) -> bool:
    R, angle_page, steps_page = out
    shrink = angle_page / R.algebra.angle_z_zstar  # eps is 12.5 times smaller
    longer = R.flow.total_steps / steps_page
    h = kkt.near_orthogonality(P, R)
    every = kkt.algebra_claims(P, R) + kkt.flow_claims(P, R, h)
    return (
        10.0 <= shrink <= 15.0
        and 0.75 <= longer / shrink <= 1.33
        and h.holds
        and all(c.outcome() is True for c in every)
    )


EXERCISES = {
    "ex-kkt-eps": Asserted(
        params={"eps": 0.05},
        says="the angle between z and z* is 3 to 5 times the page's (eps 4 times larger); "
        "the assumption fails, the three flow checks are not applicable and every algebraic "
        "check applies and passes",
        check=_eps_check,
        run=_with_page_angle,
    ),
    "ex-kkt-small-eps": Asserted(
        params={"eps": 0.001, "init_mults": [1.0]},
        says="the angle between z and z* shrinks 10 to 15 times, the run takes about as many "
        "times the page's steps (within a third), and every check passes",
        check=_small_eps_check,
        run=_with_page_steps,
    ),
}
