"""Full-batch gradient descent on Paper A's network, for a batch of configurations at once.

``W`` has shape ``(B, m, d)``: ``B`` independent configurations (seeds, initialization scales,
step sizes) advance together as one tensor program, with the closed-form gradient of
:meth:`twolayer.paper_a.models.LeakyNetwork.loss_and_coef` (no autograd, no Python loop over neurons
or samples).

Two update rules:

* plain gradient descent ``W <- W - lr grad L(W)`` (Theorem 4.2);
* loss-normalized gradient descent ``W <- W - lr grad L(W) / L(W)``: the same direction field
  as gradient flow with time rescaled by ``1/L``, so it follows the flow's path while the
  margin keeps growing; plain GD converges in direction only like ``1/log t``.

The run stops with :class:`DivergenceError` (naming the step, the configuration and the
quantity) when the loss or the weights become non-finite or the loss grows by more than
``max_loss_growth`` over its starting value.

Device discipline: the run follows ``W0``'s device and dtype (``X``, ``y``, ``lr`` are moved
there once) and a step never waits for the device. The divergence test runs on the device: a
per-configuration first bad step and the loss there are kept in device tensors and read by the
host only at record steps, every ``check_every`` steps and at the end, so the error still names
the exact step, configuration and quantity (the steps after it are wasted work, never
recorded). ``_Steps`` is the per-step program; ``tests/paper_a/test_device_discipline.py``
runs it on PyTorch's ``meta`` device, where any host synchronisation raises.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

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
            f"{config}; lower the step size (lr) or the initialization scale"
        )


def log_spaced_steps(steps: int, num: int = 50) -> np.ndarray:
    """Sorted unique integers in ``[0, steps]``: 0, 1, then log-spaced up to ``steps``."""
    if steps < 0:
        raise ValueError("steps must be non-negative")
    pts = np.unique(
        np.concatenate(
            [[0, min(1, steps)], np.geomspace(1, max(steps, 1), num=max(num, 2)).round()]
        )
    )
    return pts[pts <= steps].astype(int)


@dataclass
class TrainResult:
    """Final weights (on the run's device), recorded history (NumPy, on the host) and timing of
    a batched run; ``device`` and ``dtype`` say where it ran (see :meth:`where`)."""

    W: torch.Tensor
    steps: np.ndarray
    history: dict[str, np.ndarray] = field(default_factory=dict)
    wall_time: float = 0.0
    device: str = "cpu"
    dtype: str = "float64"
    trace: dict[str, np.ndarray] = field(default_factory=dict)

    def final(self, name: str) -> np.ndarray:
        return self.history[name][-1]

    def where(self) -> dict[str, str]:
        """``{"device": ..., "dtype": ...}``, for ``contract.where(**result.where())``."""
        return {"device": self.device, "dtype": self.dtype}


Metric = Callable[[torch.Tensor], torch.Tensor]


class DivergenceMonitor:
    """A divergence test that never waits for the device: per configuration, the first step
    at which a value was bad and the value there, kept in device tensors.

    :meth:`update` (every step) runs on the device only; :meth:`first` (at record steps,
    every few steps, at the end) reads the device once and returns the earliest bad step, the
    configuration and the value, as a test at every step would have found them: at that step
    a non-finite value before a finite bad one (``nonfinite_first``), then the lowest
    configuration. Used by :func:`gradient_descent`; minibatch SGD can use it alike."""

    def __init__(
        self, B: int, dtype: torch.dtype, device: torch.device | str, nonfinite_first: bool = True
    ):
        self.B, self.nonfinite_first = B, nonfinite_first
        self.ok = torch.ones(B, dtype=torch.bool, device=device)
        self.first_bad = torch.full((B,), -1, dtype=torch.int64, device=device)
        self.bad_value = torch.zeros(B, dtype=dtype, device=device)

    def update(self, t: int, values: torch.Tensor, fine: torch.Tensor) -> None:
        """Step ``t``: ``values`` ``(B,)`` and ``fine`` ``(B,)`` (False where bad)."""
        ok = self.ok & fine
        newly = self.ok ^ ok  # fine until now, bad at step t
        self.first_bad.masked_fill_(newly, t)
        self.bad_value = torch.where(newly, values, self.bad_value)
        self.ok = ok

    def first(self) -> tuple[int, int, float] | None:
        """``(step, configuration, value)`` of the first bad step so far, or ``None``."""
        first = self.first_bad.cpu()
        if not bool((first >= 0).any()):
            return None
        value = self.bad_value.cpu()
        t = int(first[first >= 0].min())
        cands = [b for b in range(self.B) if int(first[b]) == t]
        if self.nonfinite_first:
            nonfinite = [b for b in cands if not math.isfinite(float(value[b]))]
            cands = nonfinite or cands
        return t, cands[0], float(value[cands[0]])


class _Steps:
    """The per-step program of :func:`gradient_descent`, free of host synchronisation.

    :meth:`evaluate` computes ``(L, log L, q)`` and the coefficients ``C`` at the current
    ``W`` and folds the divergence test into a :class:`DivergenceMonitor`; :meth:`update`
    applies ``W <- W + lr C X`` in place. Only :meth:`poll` reads device memory."""

    def __init__(
        self,
        net: LeakyNetwork,
        W: torch.Tensor,
        X: torch.Tensor,
        y: torch.Tensor,
        loss: Loss,
        lr_t: torch.Tensor,
        normalized: bool,
        max_loss_growth: float,
    ):
        self.net, self.W, self.X, self.y, self.loss = net, W, X, y, loss
        self.lr_t, self.normalized, self.max_loss_growth = lr_t, normalized, max_loss_growth
        B, m, d = W.shape
        self.B, self.m = B, m
        self.W_rows = W.view(B * m, d)  # all configurations' neurons as rows: one GEMM for all
        self.shared_data = X.ndim == 2  # one data set for every configuration, or one each
        self.n = X.shape[-2]
        # smallest starting loss the growth test divides by (1e-300 as before in float64; the
        # smallest normal number where 1e-300 is not representable)
        self.tiny = max(1e-300, torch.finfo(W.dtype).tiny)
        self.L0 = self.thr = self.C = None
        self.monitor = DivergenceMonitor(B, W.dtype, W.device)

    def evaluate(self, t: int):
        """Loss, log-loss and margins at ``W`` (step ``t``); the divergence test is updated on
        the device. Every update is followed by an evaluation, so a non-finite gradient or
        weight shows up at the step it produced."""
        L, logL, C, q = self.net.loss_and_coef(
            self.W, self.X, self.y, self.loss, normalized=self.normalized
        )
        if self.L0 is None:
            self.L0 = L.clone()
            self.thr = self.max_loss_growth * torch.clamp(self.L0, min=self.tiny)
        # bad: non-finite, or grown by more than max_loss_growth
        self.monitor.update(t, L, torch.isfinite(L) & (L <= self.thr))
        self.C = C
        return L, logL, q

    def update(self) -> None:
        """``W <- W - lr grad L = W + lr C X``: one in-place matrix product for every
        configuration."""
        C = self.C * self.lr_t
        if self.shared_data:
            self.W_rows.addmm_(C.reshape(self.B * self.m, self.n), self.X)
        else:
            self.W.baddbmm_(C, self.X)

    def poll(self) -> None:
        """Raise :class:`DivergenceError` for the first bad step seen so far (one read of the
        device): a non-finite loss is reported as ``loss``, a finite one that grew as
        ``loss (grew more than ...)``."""
        hit = self.monitor.first()
        if hit is None:
            return
        t, cfg, value = hit
        if not math.isfinite(value):
            raise DivergenceError(t, "loss", value, cfg)
        raise DivergenceError(
            t,
            f"loss (grew more than {self.max_loss_growth:g}x from {float(self.L0[cfg]):.3g})",
            value,
            cfg,
        )


def _check_finite(step: int, name: str, values: torch.Tensor, B: int) -> None:
    """Raise :class:`DivergenceError` if ``values`` (leading axis: configurations) has a
    non-finite entry (a host read: record steps only)."""
    bad = ~torch.isfinite(values.detach())
    if bool(torch.any(bad)):
        bad = bad.reshape(B, -1).cpu()
        cfg = int(torch.nonzero(bad.any(dim=1))[0])
        raise DivergenceError(
            step, name, float(values.detach().reshape(B, -1)[cfg].cpu()[bad[cfg]][0]), cfg
        )


def _lr_tensor(lr, B: int, dtype, device) -> torch.Tensor:
    """``lr`` (a float or ``B`` values) validated on the host in the run's dtype, then placed
    on the device (once, before the first step)."""
    host = torch.as_tensor(lr, dtype=dtype).detach()
    if host.device.type != "cpu":
        host = host.cpu()  # one read at the start of the run (a CUDA tensor given as lr)
    if host.ndim > 1 or (host.ndim == 1 and host.shape[0] != B):
        raise ValueError(
            f"lr has {host.shape[0] if host.ndim else 1} entries for {B} configurations"
            if host.ndim == 1
            else f"lr must be a float or a (B,) tensor, got shape {tuple(host.shape)}"
        )
    if bool(torch.any(host <= 0)) or not bool(torch.all(torch.isfinite(host))):
        raise ValueError("lr must be positive and finite")
    lr_t = host.to(device=device)
    return lr_t.reshape(B, 1, 1) if lr_t.ndim == 1 else lr_t


def gradient_descent(  # noqa: PLR0913 (the trainer's settings, each named)
    net: LeakyNetwork,
    W0: torch.Tensor,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    loss: str | Loss = "logistic",
    lr: float | torch.Tensor = 0.1,
    steps: int = 1000,
    normalized: bool = False,
    record_steps: np.ndarray | list[int] | None = None,
    metrics: dict[str, Metric] | None = None,
    progress: bool | None = None,
    max_loss_growth: float = 1e8,
    desc: str = "gradient descent",
    check_every: int = 100,
    trace: tuple[str, ...] | list[str] = (),
) -> TrainResult:
    """Run ``steps`` of (optionally loss-normalized) gradient descent from ``W0``.

    ``W0``: ``(m, d)`` or ``(B, m, d)``, on any device and in float32 or float64: the run
    follows it. ``lr``: a float or a ``(B,)`` tensor. ``X``, ``y`` are moved to ``W0``'s dtype
    and device once. ``record_steps`` (default: 50 log-spaced) are the steps at which ``loss``,
    ``log_loss``, ``min_margin`` and every ``metrics[name](W)`` (a tensor of shape ``(B,)`` or
    ``(B, k)``, on ``W``'s device: build a closure's tensors with ``.to(W)``) are recorded; the
    history holds NumPy arrays with the step as first axis. ``progress=None`` shows a tqdm bar
    only when stderr is a terminal. The device is read (divergence test, history) only at
    record steps, every ``check_every`` steps and at the end; a divergence is reported with
    the exact step where it happened (see :class:`DivergenceError`).

    ``trace``: names among ``loss``, ``log_loss``, ``min_margin`` kept at *every* step in a
    device buffer ``(steps + 1, B)`` and returned in ``result.trace`` (one transfer at the
    end): a per-step curve without a host read per step, unlike recording every step.
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    if (
        isinstance(check_every, bool)
        or not isinstance(check_every, (int, np.integer))
        or check_every < 1
    ):
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    loss = get_loss(loss) if isinstance(loss, str) else loss
    single = W0.ndim == 2
    W = (W0.unsqueeze(0) if single else W0).clone(memory_format=torch.contiguous_format)
    B = W.shape[0]
    X = X.to(dtype=W.dtype, device=W.device)
    y = y.to(dtype=W.dtype, device=W.device)
    lr_t = _lr_tensor(lr, B, W.dtype, W.device)
    rec = (
        log_spaced_steps(steps)
        if record_steps is None
        else np.unique(np.asarray(record_steps, int))
    )
    if rec.size and (rec.min() < 0 or rec.max() > steps):
        raise ValueError(f"record_steps must lie in [0, {steps}]")
    rec_set = {int(s) for s in rec}
    metrics = dict(metrics or {})
    hist: dict[str, list] = {k: [] for k in ["loss", "log_loss", "min_margin", *metrics]}
    trace = tuple(dict.fromkeys(trace))
    if not set(trace) <= {"loss", "log_loss", "min_margin"}:
        raise ValueError(f"trace takes names among loss, log_loss, min_margin; got {trace!r}")
    traced = {k: torch.empty((steps + 1, B), dtype=W.dtype, device=W.device) for k in trace}
    if progress is None:
        progress = sys.stderr.isatty()

    start = time.perf_counter()
    run = _Steps(net, W, X, y, loss, lr_t, normalized, max_loss_growth)
    bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, file=sys.stderr)
    for t in range(steps + 1):
        L, logL, q = run.evaluate(t)
        if traced:
            now = {"loss": L, "log_loss": logL}
            for k, buf in traced.items():
                buf[t].copy_(now[k] if k in now else q.min(dim=-1).values)
        recording = t in rec_set
        if recording or t == steps or t % check_every == 0:
            run.poll()
        if recording:
            _check_finite(t, "weights", W, B)
            hist["loss"].append(L.detach().cpu().numpy())
            hist["log_loss"].append(logL.detach().cpu().numpy())
            hist["min_margin"].append(q.min(dim=-1).values.detach().cpu().numpy())
            for name, fn in metrics.items():
                v = fn(W)
                _check_finite(t, name, v, B)
                hist[name].append(v.detach().cpu().numpy())
        if t == steps:
            break
        run.update()
        bar.update(1)
    bar.close()
    history = {k: np.stack(v) if v else np.zeros((0, B)) for k, v in hist.items()}
    traces = {k: buf.cpu().numpy() for k, buf in traced.items()}
    if single:
        history = {k: v[:, 0] for k, v in history.items()}
        traces = {k: v[:, 0] for k, v in traces.items()}
        W = W[0]
    return TrainResult(
        W=W,
        steps=rec,
        history=history,
        wall_time=time.perf_counter() - start,
        device=str(W.device),
        dtype=str(W.dtype).replace("torch.", ""),
        trace=traces,
    )
