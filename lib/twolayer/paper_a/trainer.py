"""Full-batch gradient descent on Paper A's network, for a batch of configurations at once.

``W`` has shape ``(B, m, d)``: ``B`` independent configurations (seeds, initialisation scales,
step sizes) advance together as one tensor program, with the closed-form gradient of
:meth:`twolayer.paper_a.models.LeakyNetwork.loss_and_coef` (no autograd, no Python loop over neurons
or samples).

Two update rules:

* plain gradient descent ``W <- W - lr grad L(W)`` (Theorem 4.2);
* loss-normalised gradient descent ``W <- W - lr grad L(W) / L(W)``: the same direction field
  as gradient flow with time rescaled by ``1/L``, so it follows the flow's path while the
  margin keeps growing; plain GD converges in direction only like ``1/log t``.

The run stops with :class:`DivergenceError` (naming the step, the configuration and the
quantity) as soon as the loss or the weights become non-finite or the loss grows by more than
``max_loss_growth`` over its starting value.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from tqdm import tqdm

from .losses import Loss, get_loss
from .models import LeakyNetwork


class DivergenceError(FloatingPointError):
    """Training produced a non-finite or exploding quantity."""

    def __init__(self, step: int, quantity: str, value: float, config: int):
        self.step, self.quantity, self.value, self.config = step, quantity, value, config
        super().__init__(
            f"gradient descent diverged at step {step}: {quantity} = {value!r} in configuration "
            f"{config}; lower the step size (lr) or the initialisation scale"
        )


def log_spaced_steps(steps: int, num: int = 50) -> np.ndarray:
    """Sorted unique integers in ``[0, steps]``: 0, 1, then log-spaced up to ``steps``."""
    if steps < 0:
        raise ValueError("steps must be non-negative")
    pts = np.unique(np.concatenate([[0, min(1, steps)],
                                    np.geomspace(1, max(steps, 1), num=max(num, 2)).round()]))
    return pts[pts <= steps].astype(int)


@dataclass
class TrainResult:
    """Final weights, recorded history and timing of a batched run."""

    W: torch.Tensor
    steps: np.ndarray
    history: dict[str, np.ndarray] = field(default_factory=dict)
    wall_time: float = 0.0

    def final(self, name: str) -> np.ndarray:
        return self.history[name][-1]


Metric = Callable[[torch.Tensor], torch.Tensor]


def gradient_descent(net: LeakyNetwork, W0: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
                     loss: str | Loss = "logistic", lr: float | torch.Tensor = 0.1,
                     steps: int = 1000, normalized: bool = False,
                     record_steps: np.ndarray | list[int] | None = None,
                     metrics: dict[str, Metric] | None = None, progress: bool | None = None,
                     max_loss_growth: float = 1e8, desc: str = "gradient descent") -> TrainResult:
    """Run ``steps`` of (optionally loss-normalised) gradient descent from ``W0``.

    ``W0``: ``(m, d)`` or ``(B, m, d)``; ``lr``: a float or a ``(B,)`` tensor. ``X``, ``y`` are
    moved to ``W0``'s dtype and device. ``record_steps`` (default: 50 log-spaced) are the steps
    at which ``loss``, ``log_loss``, ``min_margin`` and every ``metrics[name](W)`` (a tensor of
    shape ``(B,)`` or ``(B, k)``) are recorded; the history holds NumPy arrays with the step
    as first axis. ``progress=None`` shows a tqdm bar only when stderr is a terminal.
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    loss = get_loss(loss) if isinstance(loss, str) else loss
    single = W0.ndim == 2
    W = (W0.unsqueeze(0) if single else W0).clone(memory_format=torch.contiguous_format)
    B, m, d = W.shape
    W_rows = W.view(B * m, d)  # all configurations' neurons as rows: one GEMM updates them all
    X = X.to(dtype=W.dtype, device=W.device)
    y = y.to(dtype=W.dtype, device=W.device)
    lr_t = torch.as_tensor(lr, dtype=W.dtype, device=W.device)
    if lr_t.ndim == 1:
        if lr_t.shape[0] != B:
            raise ValueError(f"lr has {lr_t.shape[0]} entries for {B} configurations")
        lr_t = lr_t.reshape(B, 1, 1)
    if torch.any(lr_t <= 0) or not torch.all(torch.isfinite(lr_t)):
        raise ValueError("lr must be positive and finite")
    rec = log_spaced_steps(steps) if record_steps is None else np.unique(np.asarray(record_steps, int))
    if rec.size and (rec.min() < 0 or rec.max() > steps):
        raise ValueError(f"record_steps must lie in [0, {steps}]")
    rec_set = set(int(s) for s in rec)
    metrics = dict(metrics or {})
    hist: dict[str, list] = {k: [] for k in ["loss", "log_loss", "min_margin", *metrics]}
    if progress is None:
        progress = sys.stderr.isatty()

    def check(step: int, name: str, values: torch.Tensor) -> None:
        bad = ~torch.isfinite(values)
        if torch.any(bad):
            cfg = int(torch.nonzero(bad.reshape(B, -1).any(dim=1))[0])
            raise DivergenceError(step, name, float(values.reshape(B, -1)[cfg][bad.reshape(B, -1)[cfg]][0]), cfg)

    start = time.perf_counter()
    L0 = None
    bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, file=sys.stderr)
    n = X.shape[-2]
    shared_data = X.ndim == 2  # one data set for every configuration, or one per configuration
    for t in range(steps + 1):
        L, logL, C, q = net.loss_and_coef(W, X, y, loss, normalized=normalized)
        # every update is followed by a loss evaluation, so a non-finite gradient or weight
        # shows up here, at the step it produced
        check(t, "loss", L)
        if L0 is None:
            L0 = L.clone()
        grown = L > max_loss_growth * torch.clamp(L0, min=1e-300)
        if torch.any(grown):
            cfg = int(torch.nonzero(grown)[0])
            raise DivergenceError(t, f"loss (grew more than {max_loss_growth:g}x from {float(L0[cfg]):.3g})",
                                  float(L[cfg]), cfg)
        if t in rec_set:
            check(t, "weights", W)
            hist["loss"].append(L.detach().cpu().numpy())
            hist["log_loss"].append(logL.detach().cpu().numpy())
            hist["min_margin"].append(q.min(dim=-1).values.cpu().numpy())
            for name, fn in metrics.items():
                v = fn(W)
                check(t, name, v)
                hist[name].append(v.detach().cpu().numpy())
        if t == steps:
            break
        # W <- W - lr grad L = W + lr C X: one in-place matrix product for every configuration
        if shared_data:
            W_rows.addmm_((C * lr_t).reshape(B * m, n), X)
        else:
            W.baddbmm_(C * lr_t, X)
        bar.update(1)
    bar.close()
    history = {k: np.stack(v) for k, v in hist.items()}
    if single:
        history = {k: v[:, 0] for k, v in history.items()}
        W = W[0]
    return TrainResult(W=W, steps=rec, history=history, wall_time=time.perf_counter() - start)
