"""Failing cases of ``paper_b/stage3``: for every theorem and observation check, an input where
the statement is false, built from one tiny run of the chapter (``d = 8``, ``m = 16``, four
epochs, computed once) with the quantity the statement is about planted as a run that breaks it
would produce, and judged by the chapter module's own check function."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from failing_cases import Case
from twolayer.paper_b import features as feat
from twolayer.paper_b import population as pop
from twolayer.paper_b.chapters import stage3 as ch

CHAPTER = "paper_b/stage3"

TINY = dict(d=8, m=16, epochs=4, steps=40, grid=40, record_every=10)


@functools.lru_cache(maxsize=1)
def _run():
    P = ch.SPEC.params("smoke", **TINY)
    return P, ch.compute(P)


def _with_table(R, **columns):
    """``R`` with the per-epoch table's ``columns`` replaced."""
    table = R.table.copy()
    for name, values in columns.items():
        table[name] = values
    return dataclasses.replace(R, table=table)


def _with_tr(R, **arrays):
    return dataclasses.replace(R, tr={**R.tr, **arrays})


def _with_end_nets(R, nets):
    """``R`` whose epochs end at ``nets``."""
    traj = dataclasses.replace(
        R.traj, snapshots=[(lam, n) for (lam, _), n in zip(R.traj.snapshots, nets)]
    )
    return dataclasses.replace(R, traj=traj)


def _f4():
    P, R = _run()
    # a certificate whose ||p|| is 100 times too small: the bound 5 lambda^2 ||p||^2 + 4 zeta
    # drops below the loss wherever zeta is small
    return ch.lemma_f4_loss_bound(P, dataclasses.replace(R, p_norm=R.p_norm / 100))


def _lemma5():
    P, R = _run()
    L = 0.05 * R.table["lambda"].to_numpy()  # L = O(lambda), not O(lambda^2)
    R = _with_table(R, **{"L": L, "L / lambda^2": L / R.table["lambda"].to_numpy() ** 2})
    return ch.lemma5_loss_over_lambda2_bounded(P, R, applies=True)


def _time():
    P, R = _run()
    # a loss that stalls: it falls like t^(-0.3), so reaching eps takes eps^(-1/0.3)
    loss = 0.05 * (1.0 + R.tr["step"]) ** -0.3
    return ch.thm2_time_to_loss(P, _with_tr(R, loss=loss), applies=True)


def _e3():
    P, R = _run()
    nets = [n.copy() for n in R.traj.nets]
    nets[-1].a[0] *= 1.01  # one neuron's output weight outgrows its input weight
    traj = dataclasses.replace(R.traj, nets=nets)
    return ch.lemma_e3_stays_balanced(P, dataclasses.replace(R, traj=traj))


def _decreases():
    P, R = _run()
    L = R.table["L"].to_numpy()[::-1].copy()  # the loss rises from epoch to epoch
    return ch.loss_decreases_every_epoch(P, _with_table(R, L=L), applies=True)


def _align():
    P, R = _run()
    # a neuron that neither aligns nor vanishes: max_j mass_j delta_j^2 stays at 0.01
    flat = np.full(len(R.table), 0.01)
    return ch.thm2_aligned_or_vanished(
        P, _with_table(R, **{"max mass delta^2": flat}), applies=True
    )


def _covered():
    P, R = _run()
    owner, _ = feat.partition(R.net3, R.teacher)
    net = R.net3.copy()
    net.a[owner == 0] = 0.0  # the network dropped teacher 0
    net.W[owner == 0] = 0.0
    return ch.every_teacher_covered(P, dataclasses.replace(R, net3=net), applies=True)


def _lemma6_exponent():
    P, R = _run()
    # lambda^2 ||grad||^2 = zeta^6 inside the window: faster than zeta^4
    g = np.where(R.zeta > 0, np.maximum(R.zeta, 1e-300) ** 6 / R.tr["lam"] ** 2, 1.0)
    return ch.lemma6_gradient_exponent(P, _with_tr(R, grad_norm2=g), applies=True)


def _lemma6_constant():
    P, R = _run()
    # a flat landscape: the squared gradient 10^-8 times what the run measured
    return ch.lemma6_holds_with_constant_one(P, _with_tr(R, grad_norm2=R.tr["grad_norm2"] * 1e-8))


def _f5():
    P, R = _run()
    # 1000 times the far-away mass the run left (heavy neurons far from every teacher)
    return ch.lemma_f5_far_mass_bound(P, dataclasses.replace(R, far_all=R.far_all * 1e3))


def _far_rate():
    P, R = _run()
    far = 0.1 * R.table["lambda"].to_numpy() ** 0.5  # O(lambda^(1/2)), slower than O(lambda)
    return ch.lemma8_far_mass_rate(P, _with_table(R, **{"far mass": far}), applies=True)


def _scattered(R, angle: float):
    """The networks at the epochs' ends with every neuron turned ``angle`` radians away from
    its teacher, out of ``S_*`` (a network with no mass near any teacher)."""
    Us = R.teacher.W / np.linalg.norm(R.teacher.W, axis=1, keepdims=True)
    out = []
    for n in R.ends_nets:
        owner, _ = feat.partition(n, R.teacher)
        norms = np.linalg.norm(n.W, axis=1)
        signs = np.sign(np.sum(n.W * Us[owner], 1))
        signs[signs == 0] = 1.0
        off = np.zeros_like(Us[owner])
        off[:, -1] = 1.0  # the last coordinate is (almost) out of S_*
        off -= np.sum(off * Us[owner], 1, keepdims=True) * Us[owner]
        off /= np.linalg.norm(off, axis=1, keepdims=True)
        W = (np.cos(angle) * Us[owner] + np.sin(angle) * off) * (signs * norms)[:, None]
        out.append(pop.Net(n.a.copy(), W, n.alpha, n.beta.copy()))
    return out


def _small_loss(R):
    """``R`` whose epochs end at a loss of 1e-12: the proof of Lemma F.6 gives a radius of
    about 0.01 rad."""
    return _with_table(R, L=np.full(len(R.table), 1e-12))


def _lemma10_mass():
    P, R = _run()
    # loss 1e-12, yet every neuron 0.3 rad from its teacher: no mass within the radius
    R = _with_end_nets(_small_loss(R), _scattered(R, 0.3))
    return ch.lemma10_mass_within_proof_radius(P, R)


def _lemma8_close():
    P, R = _run()
    R = _with_end_nets(_small_loss(R), _scattered(R, 0.3))
    return ch.lemma8_close_neuron_within_proof_radius(P, R)


def _eq8_printed():
    P, R = _run()
    # an untrained network (large random weights): R dwarfs the printed form's miss
    rng = np.random.default_rng(0)
    net = pop.Net(rng.standard_normal(P.m) * 10, rng.standard_normal((P.m, P.d)))
    R = dataclasses.replace(
        R,
        residual=feat.residual_terms(net, R.teacher, R.X),
        residual_printed=feat.residual_terms(net, R.teacher, R.X, printed=True),
    )
    return ch.eq8_printed_form_off(P, R)


def _average_rate():
    P, R = _run()
    flat = np.full(len(R.table), 0.3)  # the average neuron stays 0.3 from a*_i w*_i
    return ch.lemma8_average_neuron_rate(
        P, _with_table(R, **{"avg neuron error": flat}), applies=True
    )


def _printed_stalls():
    P, R = _run()
    # what the printed Lemma 8 (iii) predicts: the average neuron converges to w*_i
    small = np.full(len(R.table), 1e-3)
    return ch.lemma8_printed_average_neuron_stalls(
        P, _with_table(R, **{"avg neuron error (printed)": small})
    )


CASES = {
    "lemma_f4_loss_bound": Case("a certificate with ||p|| 100 times too small", _f4),
    "lemma5_loss_over_lambda2_bounded": Case(
        "the loss at each epoch's end is 0.05 lambda_k: L / lambda_k^2 doubles every epoch",
        _lemma5,
    ),
    "thm2_time_to_loss": Case(
        "the loss stalls, falling like t^-0.3: the time to reach eps grows like eps^-3.3", _time
    ),
    "lemma_e3_stays_balanced": Case("one neuron's |a_j| grows 1% past ||w_j||", _e3),
    "loss_decreases_every_epoch": Case("the epochs' end losses in reverse order", _decreases),
    "thm2_aligned_or_vanished": Case(
        "max_j mass_j delta_j^2 stays at 0.01: a neuron neither aligns nor vanishes", _align
    ),
    "every_teacher_covered": Case("the final network has no neuron left in T_0", _covered),
    "lemma6_gradient_exponent": Case(
        "lambda^2 ||grad||^2 = zeta^6 in the window: faster than zeta^4", _lemma6_exponent
    ),
    "lemma6_holds_with_constant_one": Case(
        "the squared gradient 1e-8 times the measured one (a flat landscape)", _lemma6_constant
    ),
    "lemma_f5_far_mass_bound": Case("1000 times the far-away mass the run left", _f5),
    "lemma8_far_mass_rate": Case("far-away mass O(lambda^(1/2)) over the epochs", _far_rate),
    "lemma10_mass_within_proof_radius": Case(
        "loss 1e-12 but every neuron 0.3 rad from its teacher", _lemma10_mass
    ),
    "lemma8_close_neuron_within_proof_radius": Case(
        "loss 1e-12 but no neuron within 0.3 rad of any teacher", _lemma8_close
    ),
    "eq8_printed_form_off": Case(
        "an untrained network: the residual dwarfs the printed form's miss", _eq8_printed
    ),
    "lemma8_average_neuron_rate": Case(
        "the average neuron's error stays 0.3 over the epochs", _average_rate
    ),
    "lemma8_printed_average_neuron_stalls": Case(
        "the average neuron converges to w*_i, as the printed lemma has it", _printed_stalls
    ),
}
