"""Gradient flow followed by loss-normalised gradient descent (Paper A, Theorems 3.1 and 3.4).

Gradient flow ``dW/dt = -grad L(W)`` and the normalised flow ``dW/ds = -grad L(W) / L(W)`` have
the same trajectories: with ``dt = ds / L(W(s))`` one is a time change of the other. The
normalised flow moves at a speed that does not shrink as ``L -> 0``, so its Euler steps
``W <- W - lr grad L / L`` (:func:`twolayer.paper_a.trainer.gradient_descent` with ``normalized=True``)
reach the directional limit in a few thousand steps, where plain gradient descent would need
``exp(thousands)``. The gradient-flow time of step ``k`` is the Riemann sum
``t_k = sum_{j<k} lr / L(W_j)``; it is kept in log space (:func:`log_flow_time`) because it grows
exponentially with ``s = k lr``.

The component of ``W`` orthogonal to ``span{x_i}`` never moves (every gradient is a
combination of the ``x_i``), so :func:`span_coordinates` expresses the data in an orthonormal
basis of their span: training there is exactly the projection of training in ``R^d``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .trainer import gradient_descent


def span_coordinates(X) -> tuple[np.ndarray, np.ndarray]:
    """``(X Q, Q)`` with ``Q`` (``d x r``) an orthonormal basis of ``span{x_i}``, ``r = rank X``.

    A weight matrix ``W_c`` in these coordinates is ``W = W_c Q^T`` in ``R^d``, and
    ``f(x; W) = f(Q^T x; W_c)``; for ``x ~ N(0, I_d)``, ``Q^T x ~ N(0, I_r)``."""
    X = np.asarray(X, dtype=np.float64)
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    r = int((s > s[0] * 1e-12).sum())
    Q = Vt[:r].T
    return X @ Q, Q


def log_flow_time(log_loss: np.ndarray, lr: float) -> np.ndarray:
    """``log t_k`` with ``t_k = sum_{j<k} lr / L_j`` (``-inf`` at ``k = 0``), from the per-step
    ``log L_j`` (first axis: steps)."""
    terms = math.log(lr) - np.asarray(log_loss, dtype=np.float64)
    out = np.full(terms.shape, -np.inf)
    out[1:] = np.logaddexp.accumulate(terms[:-1], axis=0)
    return out


@dataclass
class FlowRun:
    """Weights at the checkpoints, per-step log-loss and log gradient-flow time."""

    checkpoints: np.ndarray      # (K,) step numbers
    W: torch.Tensor              # (K, B, m, d) weights at the checkpoints
    log_loss: np.ndarray         # (steps + 1, B)
    log_time: np.ndarray         # (steps + 1, B): log of the gradient-flow time
    lr: float

    @property
    def s(self) -> np.ndarray:
        """Normalised time ``s = k lr`` of the checkpoints."""
        return self.checkpoints * self.lr

    def first_below(self, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        """Per configuration: the first step with ``L < threshold`` and its gradient-flow time
        (``-1`` and ``inf`` when the run never got there)."""
        below = self.log_loss < math.log(threshold)
        hit = below.any(axis=0)
        step = np.where(hit, below.argmax(axis=0), -1)
        cols = np.arange(self.log_loss.shape[1])
        t = np.where(hit, np.exp(self.log_time[np.maximum(step, 0), cols]), np.inf)
        return step, t


def normalized_flow(net, W0: torch.Tensor, X: torch.Tensor, y: torch.Tensor, loss: str,
                    lr: float, checkpoints, progress: bool | None = None) -> FlowRun:
    """Loss-normalised gradient descent from ``W0`` (``(B, m, d)``) for ``checkpoints[-1]``
    steps, keeping ``W`` at every checkpoint and ``log L`` at every step. ``X`` may be shared
    ``(n, d)`` or one data set per configuration ``(B, n, d)``."""
    ck = np.unique(np.asarray(checkpoints, dtype=int))
    if ck.size == 0 or ck[0] < 0:
        raise ValueError("checkpoints must be non-negative step numbers")
    if ck[0] != 0:
        ck = np.concatenate([[0], ck])
    W = W0.clone()
    Ws = [W.clone()]
    logs = []
    for k, (a, b) in enumerate(zip(ck[:-1], ck[1:])):
        res = gradient_descent(net, W, X, y, loss=loss, lr=lr, steps=int(b - a), normalized=True,
                               record_steps=np.arange(b - a + 1), progress=progress,
                               desc=f"normalised GD {b}/{ck[-1]}")
        logs.append(res.history["log_loss"][(1 if k else 0):])
        W = res.W
        Ws.append(W.clone())
    log_loss = np.concatenate(logs) if logs else np.zeros((1, W0.shape[0]))
    if not logs:  # only step 0
        from .losses import get_loss
        log_loss = get_loss(loss).log_empirical_risk(net.margins(W0, X, y)).numpy()[None]
    return FlowRun(ck, torch.stack(Ws), log_loss, log_flow_time(log_loss, lr), float(lr))
