"""Paper B's Algorithm 1 on the exact population loss.

* :func:`~twolayer.paper_b.algorithm1.symmetric_init`: ``a_i = -a_{i+m/2} ~ Unif{+-sqrt(d)}``,
  ``w_i = w_{i+m/2} ~ Unif((1/sqrt m) S^{d-1})``, ``alpha = 0``, ``beta = 0``,
  so ``f(x; theta^(0)) = 0``.
* :func:`stage1`: one gradient step ``theta^(1) = theta^(0) - eta_0 grad L_{lambda_0}``.
* :func:`stage2`: the Lasso-type problem in ``a`` with ``W^(1)`` fixed and ``(alpha, beta)`` at
  their optimum ``(alpha^, beta^)`` (Claim B.1), solved by the paper's subgradient method
  (:func:`stage2_subgradient`) or by cvxpy (:func:`stage2_cvxpy`), then :func:`balance`.
* :func:`stage3`: epochs of full gradient descent on ``L_{lambda_k}`` with ``lambda`` halved
  after every epoch.

Chapters: ``paper_b/stage2``, ``paper_b/stage3``, ``paper_b/frozen``, ``paper_b/certificates``,
``paper_b/samples`` (``paper_b/stage1`` through :mod:`twolayer.paper_b.early_stages`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import features as feat
from . import population as pop
from .population import Net
from .teacher import Teacher


def symmetric_init(d: int, m: int, seed: int) -> Net:
    """Algorithm 1's symmetric initialization of ``m`` (even) neurons in dimension ``d``:
    ``a_i = -a_{i+m/2}``, ``w_i = w_{i+m/2}``, so that the network is zero at ``theta^(0)``."""
    if m < 2 or m % 2:
        raise ValueError("m must be even and >= 2 for the symmetric initialization")
    rng = np.random.default_rng([seed, 3])
    h = m // 2
    a = rng.choice([-1.0, 1.0], size=h) * math.sqrt(d)
    W = rng.standard_normal((h, d))
    W /= np.linalg.norm(W, axis=1, keepdims=True) * math.sqrt(m)
    return Net(np.concatenate([a, -a]), np.concatenate([W, W]))


def stage1(net0: Net, teacher: Teacher, eta0: float = 1.0, lam0: float = 1.0) -> Net:
    """One gradient step on ``L_{lambda_0}`` (Lemma 3 uses ``eta_0 = lambda_0 = 1``, so that
    ``W^(1) = -grad_W L(theta^(0))``)."""
    g = pop.grad(net0, teacher, lam0)
    return Net(
        net0.a - eta0 * g.a,
        net0.W - eta0 * g.W,
        net0.alpha - eta0 * g.alpha,
        net0.beta - eta0 * g.beta,
    )


def stage2_problem(W: np.ndarray, teacher: Teacher):
    """``(G, b, c, weights)`` of ``min_a a^T G a - 2 b^T a + c + lam sum_i ||w_i|| |a_i|``:
    the square loss with ``(alpha, beta) = (alpha^, beta^)`` is ``E[(a^T relu_{>=2}-features -
    y~)^2]`` with features ``||w_i|| relu_{>=2}(wbar_i.x)`` (Claim B.1)."""
    n = np.linalg.norm(W, axis=1)
    U = W / np.maximum(n, 1e-300)[:, None]
    G, b, c = feat.lasso_quadratic(U, n, teacher)
    return G, b, c, n


def lasso_objective(a, G, b, c, *, weights, lam) -> float:
    return float(a @ G @ a - 2 * b @ a + c + lam * np.sum(weights * np.abs(a)))


def stage2_subgradient(a0, G, b, c, *, weights, lam, eta: float, steps: int, record_every: int = 1):
    """The paper's method (Appendix D): subgradient steps ``a <- a - eta (2 G a - 2 b +
    lam weights sign(a))``; returns the best iterate and the objective history."""
    a = np.array(a0, dtype=np.float64)
    best, best_val = a.copy(), lasso_objective(a, G, b, c, weights=weights, lam=lam)
    hist = [best_val]
    for t in range(steps):
        a = a - eta * (2 * G @ a - 2 * b + lam * weights * np.sign(a))
        if (t + 1) % record_every == 0 or t + 1 == steps:
            v = lasso_objective(a, G, b, c, weights=weights, lam=lam)
            hist.append(v)
            if v < best_val:
                best, best_val = a.copy(), v
    return best, np.array(hist)


def stage2_cvxpy(G, b, c, weights, *, lam):
    """Reference solution of the same problem by a conic solver (Clarabel via cvxpy)."""
    return feat.solve_weighted_lasso(G, b, c, weights, lam=lam)


def balance(net: Net) -> Net:
    """Rescale each neuron so that ``|a_i| = ||w_i||`` keeping ``a_i w_i`` (hence ``f``);
    neurons with ``a_i w_i = 0`` become exactly zero."""
    n = np.linalg.norm(net.W, axis=1)
    m = np.abs(net.a) * n
    s = np.sqrt(m)
    U = net.W / np.maximum(n, 1e-300)[:, None]
    return Net(np.sign(net.a) * s, U * s[:, None], net.alpha, net.beta.copy())


def stage2(
    net1: Net,
    teacher: Teacher,
    lam: float,
    method: str = "cvxpy",
    *,
    eta: float | None = None,
    steps: int = 0,
):
    """Stage 2 with ``W = W^(1)`` fixed; returns the balanced network with ``(alpha^, beta^)``
    and a dict with the solution ``a`` and the objective value."""
    G, b, c, wts = stage2_problem(net1.W, teacher)
    if method == "cvxpy":
        a, val = stage2_cvxpy(G, b, c, wts, lam=lam)
        hist = None
    elif method == "subgradient":
        if eta is None:
            eta = 1.0 / (2 * np.linalg.eigvalsh(G)[-1])
        a, hist = stage2_subgradient(net1.a, G, b, c, weights=wts, lam=lam, eta=eta, steps=steps)
        val = hist.min()
    else:
        raise ValueError("method must be 'cvxpy' or 'subgradient'")
    net = Net(a, net1.W.copy(), 0.0, None)
    net.alpha, net.beta = pop.alpha_hat(net), pop.beta_hat(net)
    return balance(net), {
        "a": a,
        "value": val,
        "history": hist,
        "G": G,
        "b": b,
        "c": c,
        "weights": wts,
    }


@dataclass
class Trajectory:
    """Stage 3 records: per recorded step the epoch, ``lambda``, step, ``L``, ``L_lambda`` and
    ``||grad L_lambda||^2`` (and the network itself when :func:`stage3` keeps them); per epoch
    the network at its start and at its end."""

    epoch: list = field(default_factory=list)
    lam: list = field(default_factory=list)
    step: list = field(default_factory=list)
    loss: list = field(default_factory=list)
    reg_loss: list = field(default_factory=list)
    grad_norm2: list = field(default_factory=list)
    nets: list = field(default_factory=list)  # Net at each recorded step (keep_nets)
    snapshots: list = field(default_factory=list)  # (lambda, Net at the end of the epoch)
    starts: list = field(default_factory=list)  # (lambda, Net at the start of the epoch)

    def arrays(self) -> dict:
        return {
            k: np.asarray(getattr(self, k))
            for k in ("epoch", "lam", "step", "loss", "reg_loss", "grad_norm2")
        }


def epoch_lengths(steps: int, epochs: int, grow: float = 1.0) -> list[int]:
    """Steps of each Stage 3 epoch: ``round(steps * grow^k)`` in epoch ``k``."""
    return [round(steps * grow**k) for k in range(epochs)]


def record_steps(n_steps: int, record_every: int, early: bool = False) -> np.ndarray:
    """The steps of an epoch of ``n_steps`` steps at which :func:`stage3` records: ``0``,
    every multiple of ``record_every``, the end, and with ``early`` the log-spaced steps
    ``round(2^(j/4)) < record_every`` (the gap falls fastest at the start of an epoch)."""
    out = set(range(0, n_steps + 1, record_every)) | {n_steps}
    if early:
        out |= {
            s
            for s in np.unique(np.round(2.0 ** (np.arange(64) / 4)).astype(int))
            if s < min(record_every, n_steps)
        }
    return np.array(sorted(out))


def stage3(
    net: Net,
    teacher: Teacher,
    lam0: float,
    epochs: int,
    *,
    steps: int,
    eta: float,
    record_every: int = 50,
    grow: float = 1.0,
    keep_nets: bool = False,
    early: bool = False,
) -> tuple[Net, Trajectory]:
    """Stage 3 of Algorithm 1 (Lemma 5): ``epochs`` epochs of full gradient descent on
    ``L_{lambda_k}``, ``lambda_k = lam0 / 2^k``, on all of ``(a, W, alpha, beta)``; epoch ``k``
    runs ``round(steps * grow^k)`` steps (``grow = 2`` keeps the number of steps proportional
    to the weight-decay time scale ``1/(eta lambda_k)``). Every ``record_every`` steps of an
    epoch (its first step included) the trajectory records ``L``, ``L_lambda`` and the squared
    gradient norm at the current parameters, and with ``keep_nets`` the parameters; the last
    record of an epoch is its end; ``early`` adds log-spaced records at the start of each epoch
    (:func:`record_steps`). Chapters ``paper_b/stage3`` and ``paper_b/certificates``."""
    net = net.copy()
    tr = Trajectory()
    total = 0
    for k, n_steps in enumerate(epoch_lengths(steps, epochs, grow)):
        lam = lam0 / 2**k
        tr.starts.append((lam, net.copy()))
        rec = set(record_steps(n_steps, record_every, early).tolist())
        for t in range(n_steps + 1):
            g = pop.grad(net, teacher, lam)
            if t in rec:
                tr.epoch.append(k)
                tr.lam.append(lam)
                tr.step.append(total)
                L = pop.loss(net, teacher)
                tr.loss.append(L)
                tr.reg_loss.append(L + 0.5 * lam * (net.a @ net.a + np.sum(net.W**2)))
                tr.grad_norm2.append(pop.grad_norm2(g))
                if keep_nets:
                    tr.nets.append(net.copy())
            if t == n_steps:
                break
            net.a -= eta * g.a
            net.W -= eta * g.W
            net.alpha -= eta * g.alpha
            net.beta -= eta * g.beta
            total += 1
        tr.snapshots.append((lam, net.copy()))
    return net, tr
