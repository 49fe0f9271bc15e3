"""Minibatch SGD on two-layer ReLU networks with biases, several configurations at once.

The network is :class:`twolayer.paper_a.models.TwoLayerNet` generalized to ``k`` outputs and batched
over ``B`` configurations (Paper A, Figure 2):

    ``F_b(x) = a_b^T relu(W_b x + b_b) + c_b``,
    ``W_b``: (m, d), ``b_b``: (m,), ``a_b``: (m, k), ``c_b``: (k,).

All ``B`` configurations (here: initialization scales) are stored as one tensor per parameter
(``W`` is ``(B, m, d)``) and advance together as one tensor program with closed-form gradients
(no autograd, no Python loop over configurations); they see the same seeded sequence of
minibatches, so they differ only in what is being compared.

* ``loss="logistic"`` (``k = 1``, labels in ``{-1, +1}``): ``mean log(1 + exp(-y F(x)))``, the
  loss of Paper A's theory;
* ``loss="cross_entropy"`` (``k`` classes, labels ``0..k-1``): ``mean -log softmax(F(x))_y``.

Initialization: Glorot uniform (TensorFlow's default), ``U(-r, r)`` with
``r = sqrt(6 / (fan_in + fan_out))`` for ``W`` and ``a``, times a per-configuration
``init_scale``; biases start at 0. One uniform draw (seeded, on the CPU) is shared by every
configuration, so configurations differ only by their scale; with ``k = 1`` it is exactly
:class:`~twolayer.paper_a.models.TwoLayerNet`'s draw.

At the ``record_steps`` the history holds the stable rank of each first layer ``W_b``, train
and test accuracy and loss. :func:`summarize`, :func:`halving_index`, :func:`separation_index`
and :func:`rise_index` read a history the way the chapter ``notebooks/paper_a/real_images``
(Figure 2) checks it. A non-finite or exploding minibatch loss stops the run with
:class:`twolayer.paper_a.trainer.DivergenceError`, naming the step, the quantity and the
configuration.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm import tqdm

from ..core.device import default_device, resolve_dtype
from .metrics import stable_rank
from .trainer import DivergenceError, DivergenceMonitor, log_spaced_steps

LOSSES = ("logistic", "cross_entropy")


@dataclass
class Params:
    """Batched parameters: ``W (B, m, d)``, ``b (B, m)``, ``a (B, m, k)``, ``c (B, k)``."""

    W: torch.Tensor
    b: torch.Tensor
    a: torch.Tensor
    c: torch.Tensor

    def tensors(self):
        return self.W, self.b, self.a, self.c


def glorot_uniform_init(
    d: int, m: int, k: int, init_scales, *, seed: int, dtype=torch.float32, device=None
) -> Params:
    """Glorot-uniform ``W`` and ``a`` times each of ``init_scales`` (one configuration each)."""
    scales = torch.as_tensor(np.asarray(init_scales, dtype=np.float64).reshape(-1))
    if scales.numel() < 1 or not torch.all(scales > 0) or not torch.all(torch.isfinite(scales)):
        raise ValueError(f"init_scales must be positive and finite, got {init_scales!r}")
    for name, v in (("d", d), ("m", m), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    g = torch.Generator().manual_seed(int(seed))
    r1 = math.sqrt(6.0 / (d + m))
    r2 = math.sqrt(6.0 / (m + k))
    UW = torch.rand((m, d), generator=g, dtype=torch.float64) * 2 - 1
    Ua = torch.rand((m, k), generator=g, dtype=torch.float64) * 2 - 1
    s = scales.reshape(-1, 1, 1)
    B = scales.numel()
    to = dict(dtype=dtype, device=device)
    return Params(
        W=(UW * r1 * s).to(**to),
        b=torch.zeros((B, m), **to),
        a=(Ua * r2 * s).to(**to),
        c=torch.zeros((B, k), **to),
    )


def forward(p: Params, X: torch.Tensor):
    """Outputs ``F`` (B, n, k) and the pre-activations ``Z`` (B, n, m) for inputs ``X`` (n, d)."""
    Z = torch.matmul(X, p.W.transpose(1, 2)) + p.b.unsqueeze(1)
    F = torch.matmul(torch.relu(Z), p.a) + p.c.unsqueeze(1)
    return F, Z


def loss_and_dF(F: torch.Tensor, y: torch.Tensor, loss: str):
    """Mean loss per configuration (B,) and its gradient with respect to ``F`` (B, n, k)."""
    n = F.shape[1]
    if loss == "logistic":
        q = y.reshape(1, -1) * F[..., 0]
        L = torch.nn.functional.softplus(-q).mean(dim=1)
        dF = (-y.reshape(1, -1) * torch.sigmoid(-q) / n).unsqueeze(-1)
    elif loss == "cross_entropy":
        logp = torch.log_softmax(F, dim=-1)
        yi = y.long().reshape(1, -1, 1).expand(F.shape[0], -1, 1)
        L = -logp.gather(-1, yi)[..., 0].mean(dim=1)
        onehot = torch.nn.functional.one_hot(y.long(), F.shape[-1]).to(F.dtype)
        dF = (torch.exp(logp) - onehot.unsqueeze(0)) / n
    else:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return L, dF


def loss_and_grad(p: Params, X: torch.Tensor, y: torch.Tensor, loss: str):
    """Mean loss (B,) and closed-form gradients, a :class:`Params` shaped like ``p``."""
    F, Z = forward(p, X)
    L, dF = loss_and_dF(F, y, loss)
    H = torch.relu(Z)
    ga = torch.matmul(H.transpose(1, 2), dF)  # (B, m, k)
    gc = dF.sum(dim=1)  # (B, k)
    dZ = torch.matmul(dF, p.a.transpose(1, 2)) * (Z > 0).to(Z.dtype)  # (B, n, m)
    gW = torch.matmul(dZ.transpose(1, 2), X)  # (B, m, d)
    gb = dZ.sum(dim=1)  # (B, m)
    return L, Params(W=gW, b=gb, a=ga, c=gc)


def predict(F: torch.Tensor, loss: str) -> torch.Tensor:
    """Predicted labels: the sign of ``F`` (logistic, ties to +1) or its arg-max (cross-entropy)."""
    if loss == "logistic":
        return torch.where(F[..., 0] >= 0, 1.0, -1.0).to(F.dtype)
    return F.argmax(dim=-1)


@torch.no_grad()
def evaluate(p: Params, X: torch.Tensor, y: torch.Tensor, loss: str, *, chunk: int = 8192):
    """Accuracy and mean loss per configuration on ``(X, y)``, in chunks of ``chunk`` rows."""
    correct = torch.zeros(p.W.shape[0], dtype=torch.float64, device=p.W.device)
    total = torch.zeros_like(correct)
    for s in range(0, X.shape[0], chunk):
        Xc, yc = X[s : s + chunk], y[s : s + chunk]
        F, _ = forward(p, Xc)
        L, _ = loss_and_dF(F, yc, loss)
        pred = predict(F, loss)
        target = yc.reshape(1, -1).to(pred.dtype)
        correct += (pred == target).sum(dim=1).to(torch.float64)
        total += L.to(torch.float64) * Xc.shape[0]
    n = X.shape[0]
    return correct / n, total / n


def batch_schedule(n: int, batch_size: int, steps: int, seed: int) -> np.ndarray:
    """Row indices of every minibatch, shape ``(steps, batch_size)``: epochs of seeded random
    permutations of ``range(n)`` read consecutively (an epoch's tail joins the next epoch)."""
    if batch_size < 1 or batch_size > n:
        raise ValueError(f"batch_size must lie in [1, n={n}], got {batch_size}")
    need = steps * batch_size
    rng = np.random.default_rng([int(seed), 7919])
    epochs = -(-need // n) if need else 0
    order = (
        np.concatenate([rng.permutation(n) for _ in range(epochs)]) if epochs else np.zeros(0, int)
    )
    return order[:need].reshape(steps, batch_size)


@dataclass
class SGDResult:
    """Final parameters, the recorded steps and the history (arrays of shape (steps, B))."""

    params: Params
    steps: np.ndarray
    history: dict[str, np.ndarray] = field(default_factory=dict)
    init_scales: np.ndarray | None = None
    wall_time: float = 0.0
    device: str = "cpu"


@dataclass(frozen=True, kw_only=True)
class SGDConfig:
    """The settings of one call of :func:`train` (Figure 2: ``notebooks/paper_a/real_images``),
    each named; a variant is ``dataclasses.replace(config, lr=0.1)``."""

    init_scales: Sequence[float] = (1.0,)  # one configuration per scale
    width: int = 512  # hidden units m
    loss: str = "cross_entropy"  # "logistic" (labels +-1) or "cross_entropy" (0..k-1)
    num_classes: int | None = None  # None: from the labels
    lr: float = 0.05  # step size
    batch_size: int = 32
    steps: int = 1000
    seed: int = 0  # the initial draw and the minibatches
    record_steps: Sequence[int] | None = None  # None: 60 log-spaced steps in [0, steps]
    dtype: str | torch.dtype = "float32"
    device: str | torch.device | None = None  # None: CUDA when present
    progress: bool | None = None  # None: a bar when stderr is a terminal
    max_loss: float = 1e4  # a minibatch loss above it is a divergence
    chunk: int = 8192  # rows per block when the full sets are evaluated
    num_threads: int | None = None  # PyTorch CPU threads for the run (None: see train)
    desc: str = "SGD"  # the progress bar's label
    check_every: int = 100  # steps between reads of the divergence test


def train(X_train, y_train, X_test, y_test, *, config: SGDConfig | None = None) -> SGDResult:
    """Minibatch SGD from Glorot-uniform initializations scaled by each of ``init_scales``
    (the settings: ``config``, an :class:`SGDConfig`; default: its defaults).

    Every configuration uses the same seeded initial draw and the same seeded minibatches.
    ``record_steps`` (default: 60 log-spaced steps in ``[0, steps]``) are the steps at which the
    history records ``stable_rank`` (of ``W``), ``train_acc``, ``test_acc``, ``train_loss`` and
    ``test_loss`` on the full sets. ``device=None`` uses CUDA when present; ``progress=None``
    shows a tqdm bar only when stderr is a terminal. A minibatch loss that is not finite or
    exceeds ``max_loss`` raises :class:`~twolayer.paper_a.trainer.DivergenceError`, naming the
    first such step and configuration. A step never waits for the device: the test runs on the
    device (:class:`~twolayer.paper_a.trainer.DivergenceMonitor`) and is read at record steps,
    every ``check_every`` steps and at the end, so a diverged run stops at most ``check_every``
    steps late, with the same error a test at every step would raise.

    ``num_threads`` sets PyTorch's CPU threads for the run (restored afterwards); ``None`` picks
    one thread when a step is small (``B * batch_size * width * d < 2**26`` multiply-adds: thread
    start-up costs more than it saves, and a fixed count keeps results identical run to run)
    and leaves the setting alone otherwise.
    """
    c = SGDConfig() if config is None else config
    if not isinstance(c, SGDConfig):
        raise TypeError(f"config must be an SGDConfig, got {type(c).__name__}")
    old_threads = torch.get_num_threads()
    work = (
        len(np.asarray(c.init_scales).reshape(-1))
        * c.batch_size
        * c.width
        * np.asarray(X_train).shape[1]
    )
    threads = c.num_threads if c.num_threads is not None else (1 if work < 2**26 else old_threads)
    torch.set_num_threads(int(threads))
    try:
        return _train(X_train, y_train, X_test, y_test, c)
    finally:
        torch.set_num_threads(old_threads)


def _train(X_train, y_train, X_test, y_test, c: SGDConfig) -> SGDResult:
    init_scales, width, loss, num_classes = c.init_scales, c.width, c.loss, c.num_classes
    lr, batch_size, steps, seed, record_steps = c.lr, c.batch_size, c.steps, c.seed, c.record_steps
    dtype, device, progress, max_loss, chunk = c.dtype, c.device, c.progress, c.max_loss, c.chunk
    desc, check_every = c.desc, c.check_every
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a positive finite number, got {lr!r}")
    dt = resolve_dtype(dtype)
    dev = default_device(device if isinstance(device, str) or device is None else str(device))
    Xtr = torch.as_tensor(np.asarray(X_train), dtype=dt, device=dev)
    Xte = torch.as_tensor(np.asarray(X_test), dtype=dt, device=dev)
    if loss == "logistic":
        if not np.all(np.isin(np.asarray(y_train), (-1, 1))) or not np.all(
            np.isin(np.asarray(y_test), (-1, 1))
        ):
            raise ValueError("the logistic loss needs labels in {-1, +1}")
        k = 1
        ytr = torch.as_tensor(np.asarray(y_train), dtype=dt, device=dev)
        yte = torch.as_tensor(np.asarray(y_test), dtype=dt, device=dev)
    else:
        k = (
            int(num_classes)
            if num_classes is not None
            else int(max(np.max(y_train), np.max(y_test))) + 1
        )
        for name, yy in (("y_train", y_train), ("y_test", y_test)):
            yy = np.asarray(yy)
            if yy.size and (yy.min() < 0 or yy.max() >= k or np.any(yy != np.round(yy))):
                raise ValueError(f"{name} must hold integer classes in [0, {k - 1}]")
        ytr = torch.as_tensor(np.asarray(y_train), dtype=torch.long, device=dev)
        yte = torch.as_tensor(np.asarray(y_test), dtype=torch.long, device=dev)
    n, d = Xtr.shape
    p = glorot_uniform_init(d, width, k, init_scales, seed=seed, dtype=dt, device=dev)
    B = p.W.shape[0]
    rec = (
        log_spaced_steps(steps, 60)
        if record_steps is None
        else np.unique(np.asarray(record_steps, int))
    )
    if rec.size and (rec.min() < 0 or rec.max() > steps):
        raise ValueError(f"record_steps must lie in [0, {steps}]")
    rec_set = set(int(s) for s in rec)
    schedule = batch_schedule(n, batch_size, steps, seed)
    names = ("stable_rank", "train_acc", "test_acc", "train_loss", "test_loss")
    hist: dict[str, list] = {k_: [] for k_ in names}
    if progress is None:
        progress = sys.stderr.isatty()
    lr_ = float(lr)

    def record(t: int) -> None:
        sr = stable_rank(p.W)
        acc_tr, l_tr = evaluate(p, Xtr, ytr, loss, chunk=chunk)
        acc_te, l_te = evaluate(p, Xte, yte, loss, chunk=chunk)
        for name, v in zip(names, (sr, acc_tr, acc_te, l_tr, l_te)):
            v = v.detach().to("cpu", torch.float64).numpy()
            bad = ~np.isfinite(v)
            if bad.any():
                cfg = int(np.nonzero(bad)[0][0])
                raise DivergenceError(t, name, float(v[cfg]), cfg)
            hist[name].append(v)

    if (
        isinstance(check_every, bool)
        or not isinstance(check_every, (int, np.integer))
        or check_every < 1
    ):
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    monitor = DivergenceMonitor(B, dt, dev, nonfinite_first=False)

    def poll() -> None:
        bad = monitor.first()
        if bad is not None:
            t_bad, cfg, value = bad
            raise DivergenceError(
                t_bad,
                f"minibatch loss > {max_loss:g}"
                if math.isfinite(value)
                else "minibatch loss (not finite)",
                value,
                cfg,
            )

    start = time.perf_counter()
    bar = tqdm(total=steps, desc=desc, disable=not progress, mininterval=0.5, file=sys.stderr)
    sched_dev = torch.as_tensor(schedule, device=dev) if steps else None
    with torch.no_grad():
        for t in range(steps + 1):
            if t in rec_set or t % check_every == 0 or t == steps:
                poll()  # the host reads the device here only (and in record)
            if t in rec_set:
                record(t)
            if t == steps:
                break
            idx = sched_dev[t]
            L, g = loss_and_grad(p, Xtr[idx], ytr[idx], loss)
            monitor.update(t, L, torch.isfinite(L) & (L <= max_loss))
            for w, gw in zip(p.tensors(), g.tensors()):
                w.sub_(gw, alpha=lr_)
            bar.update(1)
    bar.close()
    history = {k_: np.stack(v) if v else np.zeros((0, B)) for k_, v in hist.items()}
    return SGDResult(
        params=p,
        steps=rec,
        history=history,
        init_scales=np.asarray(init_scales, dtype=np.float64).reshape(-1),
        wall_time=time.perf_counter() - start,
        device=str(dev),
    )


# --- reading a history ---------------------------------------------------------------------------


def accuracy_gap_threshold(acc_train, acc_test, n_train: int, n_test: int, *, z: float = 3.0):
    """``z`` standard errors of ``acc_train - acc_test`` for independent binomial samples
    (each variance floored at that of one error in the sample, so a perfect score still has
    noise): ``z * sqrt(p(1-p)/n_train + q(1-q)/n_test)``."""
    p = np.clip(np.asarray(acc_train, float), 1.0 / n_train, 1 - 1.0 / n_train)
    q = np.clip(np.asarray(acc_test, float), 1.0 / n_test, 1 - 1.0 / n_test)
    return z * np.sqrt(p * (1 - p) / n_train + q * (1 - q) / n_test)


def separation_index(
    acc_train, acc_test, n_train: int, n_test: int, *, z: float = 3.0
) -> int | None:
    """First record index from which the train accuracy exceeds the test accuracy by more than
    :func:`accuracy_gap_threshold` at *every* later record (``None`` if never): the point where
    train and test accuracy separate for good."""
    gap = np.asarray(acc_train, float) - np.asarray(acc_test, float)
    above = gap > accuracy_gap_threshold(acc_train, acc_test, n_train, n_test, z=z)
    if not above[-1]:
        return None
    i = len(above) - 1
    while i > 0 and above[i - 1]:
        i -= 1
    return i


def rise_index(values, factor: float = 2.0) -> int | None:
    """First record index after the minimum of ``values`` at which they exceed ``factor`` times
    that minimum (``None`` if they never do): when a curve that came down rises again."""
    v = np.asarray(values, float)
    i0 = int(np.argmin(v))
    later = np.nonzero(v[i0:] > factor * v[i0])[0]
    return None if later.size == 0 else i0 + int(later[0])


def halving_index(values) -> int | None:
    """First record index at which ``values`` fall below half of their first value (``None``
    if they never do): when a stable rank has dropped by half (Figure 2's "rapidly")."""
    v = np.asarray(values, float)
    below = np.nonzero(v < v[0] / 2)[0]
    return None if below.size == 0 else int(below[0])


def near_min_index(values, factor: float = 1.1) -> int:
    """First record index at which ``values`` come within ``factor`` of their minimum
    (``values <= factor * min``): when a curve reaches its floor, robust to a slow creep
    along a plateau that moves the arg-min itself."""
    v = np.asarray(values, float)
    return int(np.nonzero(v <= factor * v.min())[0][0])


def summarize(
    result: SGDResult, n_train: int, n_test: int, z: float = 3.0, *, rise_factor: float = 1.1
) -> list[dict]:
    """One row per configuration: initial, minimum (and its step) and final stable rank, the
    largest rise after the minimum, final accuracies, the step at which train and test accuracy
    separate (:func:`separation_index`, ``z`` standard errors) and the step at which the rank
    first exceeds ``rise_factor`` times its minimum (:func:`rise_index`), and the step at which
    it first falls below half its initial value (:func:`halving_index`) and first comes within
    ``rise_factor`` of its minimum (:func:`near_min_index`); ``None`` for never."""
    h, steps = result.history, result.steps
    rows = []
    for b, s in enumerate(result.init_scales):
        sr = h["stable_rank"][:, b]
        i_min = int(np.argmin(sr))
        sep = separation_index(h["train_acc"][:, b], h["test_acc"][:, b], n_train, n_test, z=z)
        rise = rise_index(sr, rise_factor)
        half = halving_index(sr)
        rows.append(
            {
                "init_scale": float(s),
                "initial_stable_rank": float(sr[0]),
                "min_stable_rank": float(sr[i_min]),
                "step_of_min": int(steps[i_min]),
                "final_stable_rank": float(sr[-1]),
                "max_rise_after_min": float(sr[i_min:].max() / sr[i_min]),
                "final_train_acc": float(h["train_acc"][-1, b]),
                "final_test_acc": float(h["test_acc"][-1, b]),
                "separation_step": None if sep is None else int(steps[sep]),
                "rise_step": None if rise is None else int(steps[rise]),
                "halving_step": None if half is None else int(steps[half]),
                "step_near_min": int(steps[near_min_index(sr, rise_factor)]),
            }
        )
    return rows
