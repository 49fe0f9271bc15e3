"""Paper B teachers, diagnostics and Algorithm 1."""

import math

import numpy as np
import pytest

from helpers import fd_grad_regularized
from twolayer.paper_b import algorithm1 as alg
from twolayer.paper_b import features as feat
from twolayer.paper_b import population as pop
from twolayer.paper_b import teacher as tmod


def test_prototype_constants():
    t = tmod.prototype(10, 3)
    assert t.info["r"] == 2 and t.info["rank_H"] == 2
    assert t.info["Delta"] == pytest.approx(math.pi / 3)
    assert t.info["kappa"] == pytest.approx(0.5)
    assert np.allclose(np.linalg.norm(t.W, axis=1), 1)
    P = t.info["basis"] @ t.info["basis"].T
    assert np.allclose(t.W @ P, t.W)


@pytest.mark.parametrize("r, m_star", [(2, 3), (3, 4), (3, 3)])
def test_random_teacher_meets_assumptions(r, m_star):
    t = tmod.random_teacher(15, r, m_star, seed=2)
    c = tmod.constants(t)
    assert c["r"] == r and c["rank_H"] == r
    assert c["Delta"] >= math.radians(40) - 1e-12 and c["kappa"] >= 0.3
    assert not np.allclose(tmod.random_teacher(15, r, m_star, seed=3).W, t.W)


def test_symmetric_init_is_zero_function():
    net = alg.symmetric_init(12, 10, 0)
    X = np.random.default_rng(0).standard_normal((100, 12))
    assert np.abs(net(X)).max() < 1e-12
    assert np.allclose(np.abs(net.a), math.sqrt(12))
    assert np.allclose(np.linalg.norm(net.W, axis=1), 1 / math.sqrt(10))


def test_stage1_keeps_alpha_beta_zero_and_is_minus_gradient():
    t = tmod.prototype(12, 0)
    net0 = alg.symmetric_init(12, 20, 1)
    net1 = alg.stage1(net0, t)
    assert abs(net1.alpha) < 1e-12 and np.abs(net1.beta).max() < 1e-12
    g = pop.grad(net0, t, 0.0)
    assert np.allclose(net1.W, -g.W)


def test_symmetric_init_takes_every_even_width_and_refuses_the_rest():
    """Two neurons (one pair) are the smallest symmetric network; an odd width or none has no
    pairing and is refused with the whole message."""
    net = alg.symmetric_init(3, 2, 0)
    assert net.a[0] == -net.a[1] and np.array_equal(net.W[0], net.W[1])
    for m in (0, 1, 3, 7):
        with pytest.raises(
            ValueError, match=r"^m must be even and >= 2 for the symmetric initialization$"
        ):
            alg.symmetric_init(3, m, 0)


def test_stage1_steps_every_parameter_along_the_regularized_gradient():
    """From a network that is not symmetric (so every part of the gradient is nonzero, alpha and
    beta included), Stage 1 is ``theta - eta0 grad L_{lam0}``, with the gradient of the
    regularized population loss by central differences."""
    t = tmod.prototype(4, 0)
    rng = np.random.default_rng(5)
    net = pop.Net(rng.standard_normal(3), rng.standard_normal((3, 4)), 0.4, rng.standard_normal(4))
    v = net.flat()
    grad = pop.Net.unflat(fd_grad_regularized(net, t, 0.2), 3, 4)
    assert abs(grad.alpha) > 0.1 and np.abs(grad.beta).min() > 1e-3
    got = alg.stage1(net, t, eta0=0.3, lam0=0.2)
    np.testing.assert_allclose(got.flat(), v - 0.3 * grad.flat(), rtol=1e-7, atol=1e-8)


def test_balance_keeps_function():
    rng = np.random.default_rng(0)
    net = pop.Net(rng.standard_normal(5), rng.standard_normal((5, 4)), 0.1, rng.standard_normal(4))
    net.a[2] = 0.0
    b = alg.balance(net)
    X = rng.standard_normal((50, 4))
    assert np.allclose(net(X), b(X))
    assert np.allclose(np.abs(b.a), np.linalg.norm(b.W, axis=1))
    assert np.all(b.W[2] == 0)


def test_stage2_subgradient_approaches_cvxpy():
    t = tmod.prototype(10, 0)
    net1 = alg.stage1(alg.symmetric_init(10, 30, 0), t)
    G, b, c, w = alg.stage2_problem(net1.W, t)
    a_ref, v_ref = alg.stage2_cvxpy(G, b, c, w, lam=0.02)
    eta = 1 / (2 * np.linalg.eigvalsh(G)[-1])
    _, hist = alg.stage2_subgradient(net1.a, G, b, c, weights=w, lam=0.02, eta=eta, steps=3000)
    assert hist.min() >= v_ref - 1e-7
    assert hist.min() - v_ref < 0.05 * (hist[0] - v_ref)
    # the balanced network's regularized loss equals the Lasso objective
    net2, info = alg.stage2(net1, t, 0.02)
    assert pop.regularized_loss(net2, t, 0.02) == pytest.approx(info["value"], rel=1e-8)


def test_features_on_teacher_itself():
    t = tmod.prototype(8, 0)
    net = pop.Net(t.a, t.W)
    assert feat.far_mass(net, t) < 1e-12
    assert np.abs(feat.average_neuron_error(net, t)).max() < 1e-12
    assert np.allclose(feat.subspace_fraction(net.W, t.info["basis"]), 1)
    flipped = pop.Net(t.a, -t.W)  # up to sign: same relu_{>=2} features
    assert np.abs(feat.nearest_angle_per_teacher(flipped, t)).max() < 1e-7
    assert np.abs(feat.average_neuron_error(flipped, t)).max() < 1e-12


def test_min_measure_loss_bounds():
    t = tmod.prototype(8, 0)
    lam = 0.02
    val = feat.min_measure_loss(t, lam, grid=90)
    # the teacher itself is a feasible measure: value <= lam ||a*||_1
    assert val <= lam * np.abs(t.a).sum() + 1e-9
    # the exact minimum for one teacher neuron (a* = 1, w* = e1), by hand: relu_{>=2} (ReLU
    # without its Hermite orders 0 and 1) has E[relu_{>=2}(z)^2] = E relu^2 - (E relu)^2 -
    # (E z relu)^2 = 1/2 - 1/(2 pi) - 1/4 =: k; the measure c delta_{e1} costs (1 - c)^2 k + lam c,
    # least at c = 1 - lam / (2 k): lam - lam^2 / (4 k). No other measure does better: the
    # first-order condition |2 (1 - c) E[relu_{>=2}(w.x) relu_{>=2}(x_1)]| <= lam holds for
    # every unit w (Cauchy-Schwarz), with equality at e1.
    one = tmod.Teacher(np.ones(1), np.eye(4)[:1], info={"basis": np.eye(4)[:, :2]})
    k = 0.25 - 1 / (2 * math.pi)
    assert feat.min_measure_loss(one, lam, grid=90) == pytest.approx(
        lam - lam**2 / (4 * k), rel=1e-5
    )


def test_short_run_decreases_loss():
    t = tmod.prototype(10, 0)
    net1 = alg.stage1(alg.symmetric_init(10, 20, 0), t)
    net2, _ = alg.stage2(net1, t, 0.02)
    net3, tr = alg.stage3(net2, t, 0.02, 2, steps=200, eta=0.1, record_every=20)
    assert tr.reg_loss[-1] < tr.reg_loss[0]
    assert pop.loss(net3, t) < pop.loss(net2, t)


# --- teachers: Assumptions 1-3 ----------------------------------------------------------------


@pytest.mark.parametrize("r, m_star", [(2, 3), (2, 4), (3, 6)])
def test_degenerate_teacher_breaks_assumption_3_only(r, m_star):
    t = tmod.degenerate(12, r, m_star, seed=1)
    c = tmod.constants(t)
    assert c["r"] == r and c["rank_H"] == r - 1
    assert c["Delta"] >= math.radians(40) - 1e-12
    assert np.abs(t.a).max() == pytest.approx(1.0)
    v = tmod.assumption_values(t)
    assert v["kappa_rel"] < tmod.KAPPA_RELATIVE_FLOOR and v["r_over_d"] < 1 and v["Delta"] > 0
    # a random teacher meets all three
    ok = tmod.assumption_values(tmod.random_teacher(12, r, min(m_star, 4), seed=1))
    assert ok["kappa_rel"] > 0.05
    with pytest.raises(ValueError):
        tmod.degenerate(12, 3, 4, seed=0)  # 4 < r(r+1)/2 = 6


def test_m_star_range_and_make():
    assert tmod.m_star_range("random", 2) == (2, 4)
    assert tmod.m_star_range("degenerate", 3) == (6, 6)
    lo, hi = tmod.m_star_range("prototype", 3)
    assert lo > hi  # no prototype with r = 3
    assert tmod.make("prototype", 8, 2, 3, seed=0).m == 3
    with pytest.raises(ValueError):
        tmod.make("prototype", 8, 3, 3, seed=0)
    with pytest.raises(ValueError):
        tmod.make("other", 8, 2, 3, seed=0)


def test_assumption_hypotheses_record_worst_case():
    from twolayer.page.contract import Contract

    c = Contract(spec={}, profiles={"smoke": {}, "book": {}, "paper": {}}, namespace={})
    from twolayer.paper_b.chapters import assumption_hypotheses

    hs = assumption_hypotheses(c, [tmod.random_teacher(10, 2, 3, 0), tmod.degenerate(10, 2, 3, 0)])
    assert [h.name for h in hs] == ["assumption_1", "assumption_2", "assumption_3"]
    assert hs[0].holds and hs[1].holds and not hs[2].holds
    assert "rank H < r for 1 of 2 teachers" in hs[2].reason


# --- Stage 2: the exact zero threshold ----------------------------------------------------------


def test_stage2_zero_threshold_is_exact():
    from twolayer.paper_b import early_stages as es

    t = tmod.prototype(10, 0)
    net1 = alg.stage1(alg.symmetric_init(10, 40, 0), t)
    thr = es.zero_threshold(net1.W, t)
    _, above = alg.stage2(net1, t, thr * 1.01)
    _, below = alg.stage2(net1, t, thr * 0.9)
    assert es.count_kept(above["a"], net1.W, t) == 0  # nothing kept above the threshold
    assert es.count_kept(below["a"], net1.W, t) > 0  # something kept below it
    # over all directions of S_* the threshold can only be larger
    assert es.population_zero_threshold(t, 180) >= thr - 1e-12


def test_stage3_halves_the_weight_decay_every_epoch_and_doubles_the_steps():
    """Lemma 5's schedule as the page states it: epoch k runs at lambda_0 / 2^k for
    steps * 2^k steps (read from the trajectory's records, not from the code's expression)."""
    from twolayer.core import seeds
    from twolayer.paper_b import teacher as tm

    t = tm.random_teacher(6, 2, 3, seeds.derive(0, "t"))
    net = alg.symmetric_init(6, 8, seeds.derive(0, "init"))
    _, tr = alg.stage3(net, t, 0.04, 3, steps=5, eta=0.05, record_every=1, grow=2.0)
    lam_by_epoch = {k: lam for k, lam in zip(tr.epoch, tr.lam)}
    assert lam_by_epoch == {0: 0.04, 1: 0.02, 2: 0.01}
    steps = [sum(1 for k in tr.epoch if k == e) - 1 for e in range(3)]  # records 0..n per epoch
    assert steps == [5, 10, 20]


# --- Stage 2: the subgradient method on one-dimensional problems solved by hand -------------------


def _scalar_problem(b, lam):
    """``a^2 - 2 b a + lam |a|`` (G = 1, c = 0, weight 1) in the solver's argument form."""
    return np.eye(1), np.array([float(b)]), 0.0, {"weights": np.ones(1), "lam": lam}


def test_stage2_subgradient_history_records_every_step_by_default():
    """With b = lam = 0 and eta = 1/4 a step is a <- a - (2a)/4 = a/2, so a_t = 2^-t and the
    objective is a_t^2 = 4^-t (exact in binary). By default every step is recorded."""
    G, b, c, kw = _scalar_problem(0, 0.0)
    best, hist = alg.stage2_subgradient(np.ones(1), G, b, c, eta=0.25, steps=3, **kw)
    assert hist.tolist() == [1.0, 1 / 4, 1 / 16, 1 / 64]
    assert best.tolist() == [1 / 8]


def test_stage2_subgradient_history_records_multiples_of_record_every_and_the_end():
    """Same halving problem, 7 steps, record_every = 3: the history holds the start, steps 3
    and 6 and the last step 7, i.e. 4^0, 4^-3, 4^-6, 4^-7."""
    G, b, c, kw = _scalar_problem(0, 0.0)
    best, hist = alg.stage2_subgradient(
        np.ones(1), G, b, c, eta=0.25, steps=7, record_every=3, **kw
    )
    assert hist.tolist() == [1.0, 4.0**-3, 4.0**-6, 4.0**-7]
    assert best.tolist() == [2.0**-7]


def test_stage2_subgradient_takes_sign_zero_at_zero():
    """At a = 0 the subgradient uses sign(0) = 0. For a^2 - 2a + |a|/2 from a = 0 with
    eta = 1/4: a1 = 0 - (0 - 2 + 0)/4 = 1/2 (objective 1/4 - 1 + 1/4 = -1/2), then
    a2 = 1/2 - (1 - 2 + 1/2)/4 = 5/8 (objective 25/64 - 5/4 + 5/16 = -35/64), heading to the
    minimizer 3/4 (from 2a - 2 + 1/2 = 0)."""
    G, b, c, kw = _scalar_problem(1, 0.5)
    best, hist = alg.stage2_subgradient(np.zeros(1), G, b, c, eta=0.25, steps=2, **kw)
    assert hist.tolist() == [0.0, -0.5, -35 / 64]
    assert best.tolist() == [5 / 8]


def test_stage2_subgradient_keeps_the_first_best_iterate_as_float():
    """With b = lam = 0 and eta = 1 a step is a <- a - 2a = -a: the iterates 1, -1, 1, ... all
    have objective 1, so no later iterate is strictly better and the best is the start, which
    comes back as a float array even when a0 is a list of integers."""
    G, b, c, kw = _scalar_problem(0, 0.0)
    best, hist = alg.stage2_subgradient([1], G, b, c, eta=1.0, steps=1, **kw)
    assert hist.tolist() == [1.0, 1.0]
    assert best.tolist() == [1.0]
    assert best.dtype == np.float64


# --- stage2 on one neuron along the teacher's: the Lasso solved by hand ---------------------------


def _one_neuron_case():
    """Teacher ``relu(x_1)`` in d = 4 and one student neuron ``w = 2 e_1`` with ``a = 1``.

    The feature is ``||w|| relu_{>=2}(x_1)`` with ``E[relu_{>=2}(x_1)^2] = 1/2 - 1/(2 pi) - 1/4
    =: k``, so Claim B.1's problem is ``G = 4k``, ``b = 2k``, ``c = k``, weight ``||w|| = 2``:
    ``4k a^2 - 4k a + k + 2 lam |a| = k (2a - 1)^2 + 2 lam |a|``. For ``a > 0`` its derivative
    ``8k a - 4k + 2 lam`` vanishes at ``a* = 1/2 - lam/(4k)``, where the value is
    ``lam - lam^2/(4k)``; at the start ``a = 1`` the value is ``k + 2 lam``."""
    teacher = tmod.Teacher(np.ones(1), np.eye(4)[:1])
    net1 = pop.Net(np.ones(1), 2 * np.eye(4)[:1])
    return teacher, net1, 0.25 - 1 / (2 * math.pi), 0.02


def test_stage2_subgradient_default_step_solves_the_scalar_lasso_in_one_step():
    """The default step ``eta = 1/(2 lambda_max(G)) = 1/(8k)`` is the Newton step of the
    quadratic, so one step from ``a = 1`` lands on the minimizer ``a* = 1/2 - lam/(4k)``. The
    balanced network carries ``a s = 2 a* = 1 - lam/(2k) =: g`` as ``a = ||w|| = sqrt(g)``
    along ``e_1`` with Claim B.1's ``alpha^ = -g/sqrt(2 pi)``, ``beta^ = -(g/2) e_1``."""
    t, net1, k, lam = _one_neuron_case()
    net2, info = alg.stage2(net1, t, lam, "subgradient", steps=1)
    a_star = 0.5 - lam / (4 * k)
    assert info["a"] == pytest.approx([a_star], rel=1e-12)
    assert info["history"] == pytest.approx([k + 2 * lam, lam - lam**2 / (4 * k)], rel=1e-12)
    assert info["value"] == pytest.approx(lam - lam**2 / (4 * k), rel=1e-12)
    assert info["G"] == pytest.approx(np.array([[4 * k]]), rel=1e-12)
    assert info["b"] == pytest.approx([2 * k], rel=1e-12)
    assert info["c"] == pytest.approx(k, rel=1e-12)
    assert info["weights"] == pytest.approx([2.0], rel=1e-12)
    g = 1 - lam / (2 * k)
    assert net2.a == pytest.approx([math.sqrt(g)], rel=1e-12)
    assert net2.W == pytest.approx(math.sqrt(g) * np.eye(4)[:1], rel=1e-12, abs=1e-15)
    assert net2.alpha == pytest.approx(-g / math.sqrt(2 * math.pi), rel=1e-12)
    assert net2.beta == pytest.approx(-0.5 * g * np.eye(4)[0], rel=1e-12, abs=1e-15)
    # the balanced network's regularized loss is the Lasso value (a second route)
    assert pop.regularized_loss(net2, t, lam) == pytest.approx(info["value"], rel=1e-9)


def test_stage2_subgradient_uses_the_given_step_and_no_step_by_default():
    """With ``eta = 1/(16k)`` (half the Newton step) one step from ``a = 1`` gives
    ``1 - (8k - 4k + 2 lam)/(16k) = 3/4 - lam/(8k)``. Without ``steps`` no step is taken: the
    solution is the start ``a = 1`` with value ``k + 2 lam``."""
    t, net1, k, lam = _one_neuron_case()
    _, info = alg.stage2(net1, t, lam, "subgradient", eta=1 / (16 * k), steps=1)
    assert info["a"] == pytest.approx([0.75 - lam / (8 * k)], rel=1e-12)
    _, info0 = alg.stage2(net1, t, lam, "subgradient")
    assert info0["a"].tolist() == [1.0]
    assert info0["history"] == pytest.approx([k + 2 * lam], rel=1e-12)
    assert info0["value"] == pytest.approx(k + 2 * lam, rel=1e-12)


def test_stage2_cvxpy_matches_the_hand_minimizer_and_keeps_no_history():
    """The conic solver finds the same ``a* = 1/2 - lam/(4k)``; it has no iterates, so the
    history is ``None``."""
    t, net1, k, lam = _one_neuron_case()
    _, info = alg.stage2(net1, t, lam, "cvxpy")
    assert info["a"] == pytest.approx([0.5 - lam / (4 * k)], rel=1e-6)
    assert info["value"] == pytest.approx(lam - lam**2 / (4 * k), rel=1e-8)
    assert info["history"] is None


def test_stage2_rejects_an_unknown_method():
    t, net1, _, lam = _one_neuron_case()
    with pytest.raises(ValueError, match=r"^method must be 'cvxpy' or 'subgradient'$"):
        alg.stage2(net1, t, lam, "newton")


def test_epoch_lengths_default_is_a_constant_schedule():
    """Without ``grow`` every epoch has ``steps`` steps; ``grow = 1.5`` gives
    ``round(4 * 1.5^k) = 4, 6, 9``."""
    assert alg.epoch_lengths(3, 3) == [3, 3, 3]
    assert alg.epoch_lengths(4, 3, 1.5) == [4, 6, 9]


def test_stage3_takes_no_step_in_an_epoch_of_non_positive_length():
    """An epoch of ``round(steps * grow^k) <= 0`` steps leaves the network as it was and
    records nothing (the loop runs over steps ``0..n``, stopping at ``n``)."""
    t, net1, _, _ = _one_neuron_case()
    for steps in (0, -1):
        out, tr = alg.stage3(net1, t, 0.02, 1, steps=steps, eta=0.1)
        assert out.flat().tolist() == net1.flat().tolist()
        assert tr.snapshots[0][1].flat().tolist() == net1.flat().tolist()
