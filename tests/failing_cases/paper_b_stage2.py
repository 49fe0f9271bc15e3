"""Failing cases of ``paper_b/stage2`` (:mod:`twolayer.paper_b.chapters.stage2`): for every
theorem and observation check, an input where its statement is false."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from failing_cases import Case
from twolayer.page.checks import make_hypothesis
from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import early_stages as es
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod
from twolayer.paper_b.chapters import stage2 as chapter

CHAPTER = "paper_b/stage2"


@functools.cache
def _tiny():
    """A small Stage 1 network and its Stage 2 Lasso (d = 8, m = 12, lambda = 0.02)."""
    P = chapter.SPEC.params("smoke", d=8, m=12, sub_steps=400)
    tch = tmod.make("random", P.d, 2, 3, seed=5)
    net1 = alg.stage1(alg.symmetric_init(P.d, P.m, 6), tch)
    G, b, c, wts = alg.stage2_problem(net1.W, tch)
    a_ref, v_ref = alg.stage2_cvxpy(G, b, c, wts, lam=P.lam)
    return P, tch, net1, (G, b, c, wts), a_ref, v_ref


def _wrong_subgradient():
    """The subgradient method with the quadratic term's factor 2 dropped (``G a - 2 b`` for
    ``2 G a - 2 b``): it converges to a point that is not the Lasso's optimum, so its best gap
    stays put while the guarantee computed from its steps falls like 1/T."""
    P, tch, net1, (G, b, c, wts), a_ref, v_ref = _tiny()
    eta = 1.0 / (2 * np.linalg.eigvalsh(G)[-1])
    a = np.array(net1.a, dtype=np.float64)
    values = [alg.lasso_objective(a, G, b, c, weights=wts, lam=P.lam)]
    sq = []
    for _ in range(P.sub_steps):
        g = G @ a - 2 * b + P.lam * wts * np.sign(a)
        sq.append(g @ g)
        a = a - eta * g
        values.append(alg.lasso_objective(a, G, b, c, weights=wts, lam=P.lam))
    values = np.asarray(values)
    T = np.arange(1, P.sub_steps + 1)
    bound = (np.sum((net1.a - a_ref) ** 2) + eta**2 * np.cumsum(sq)) / (2 * eta * T)
    best_gap = np.minimum.accumulate(values) - v_ref
    R = SimpleNamespace(trace=chapter.Trace(values, best_gap, bound, T, eta))
    return chapter.subgradient_guarantee_holds(P, R)


def _unbalanced():
    """Stage 2's network left unbalanced, ``(a_i, w_i) -> (2 a_i, w_i / 2)``: the same function,
    a larger weight decay ``lambda/2 (||a||^2 + ||W||^2)`` than the Lasso penalty."""
    P, tch, net1, _, _, v_ref = _tiny()
    net2, _ = alg.stage2(net1, tch, P.lam)
    skew = pop.Net(2 * net2.a, net2.W / 2, net2.alpha, net2.beta)
    R = SimpleNamespace(loss_reg=pop.regularized_loss(skew, tch, P.lam), v_ref=v_ref)
    return chapter.balanced_loss_equals_lasso_objective(P, R)


def _stage2_skipped():
    """Stage 2 returns the Stage 1 network unchanged: the loss ratio is exactly 1."""
    P, tch, net1, *_ = _tiny()
    L1 = pop.loss(net1, tch)
    R = SimpleNamespace(loss1=L1, loss2=L1, thr=es.zero_threshold(net1.W, tch))
    return chapter.stage2_reduces_loss(P, R)


def _zeta_flat():
    """A sweep where ``zeta`` does not fall while ``eps0`` falls fourfold with the width (as
    Stage 2 at a fixed lambda would give: the penalty term does not shrink): ``zeta / eps0``
    grows; 8 teachers, ``lam_scale = 0.05``, the hypotheses hold."""
    P = chapter.SPEC.params("smoke", eps0_teachers=8, ms_eps0=[16, 64, 256])
    rng = np.random.default_rng(3)
    eps0 = np.array([[0.32], [0.16], [0.08]]) * np.exp(0.1 * rng.standard_normal((3, 8)))
    zeta = 4e-3 * np.exp(0.1 * rng.standard_normal((3, 8)))
    lam = P.lam_scale * np.sqrt(eps0)
    sweep = {"eps0": eps0, "zeta": zeta, "lam": lam, "threshold": np.full((3, 8), 0.3)}
    R = SimpleNamespace(eps_sweep=sweep)
    hyps = [make_hypothesis("assumption_1", True, title="Assumption 1")]
    hyps.append(chapter.stage2_lambda_regime(P, R))
    return chapter.zeta_falls_with_eps0(P, R, hyps)


CASES = {
    "subgradient_guarantee_holds": Case(
        "a subgradient with the factor 2 of the quadratic term dropped", _wrong_subgradient
    ),
    "balanced_loss_equals_lasso_objective": Case(
        "Stage 2's network left unbalanced (a doubled, W halved)", _unbalanced
    ),
    "stage2_reduces_loss": Case("Stage 2 skipped: the Stage 1 network unchanged", _stage2_skipped),
    "zeta_falls_with_eps0": Case(
        "zeta flat while eps0 falls fourfold over the widths (zeta / eps0 grows)", _zeta_flat
    ),
}
