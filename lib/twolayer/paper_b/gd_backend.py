"""Algorithm 1's gradient stages for a batch of configurations, on any array backend.

:func:`stage3_batched` runs Stage 3 (epochs of full gradient descent on ``L_{lambda_k}``,
``lambda_k = lambda_0 / 2^k``) for ``B`` configurations (seeds, teachers, widths) as one array
program over :func:`twolayer.paper_b.population.loss_and_grad_batched`: on NumPy, or on torch
tensors on a GPU in float64 (pass ``like=array_like("torch", "cuda")``). It applies exactly the
update rule of :func:`twolayer.paper_b.algorithm1.stage3` and returns the same
``(Net, Trajectory)`` per configuration, equal to it up to floating-point rounding (tested to
``1e-10``). The loop never reads the device: the records stay on the device and come back in
one transfer at the end. :func:`stage1_batched` is Stage 1 (one gradient step) alike.

Chapter that uses it: ``paper_b/stage3`` (its ``backend`` and ``device`` parameters; at the
paper profile, m = 400 and d = 50 for 510 000 steps, it is what makes a GPU worth it).
"""

from __future__ import annotations

from collections.abc import Sequence

import array_api_compat
import numpy as np

from .algorithm1 import Trajectory, epoch_lengths, record_steps
from .population import (
    Net,
    NetBatch,
    _namespace,
    loss_and_grad_batched,
    teacher_arrays,
    to_numpy,
)
from .teacher import Teacher


def array_like(backend: str = "numpy", device: str | None = None):
    """An empty float64 array of ``backend`` ("numpy" or "torch") on ``device`` (torch: CUDA
    when available unless given), to pass as ``like=``; ``None`` for NumPy. Imports torch only
    when asked for."""
    if backend == "numpy":
        if device not in (None, "cpu"):
            raise ValueError(f"NumPy runs on the CPU only, not on {device!r}")
        return None
    if backend == "torch":
        import torch

        from ..core.device import default_device

        # None or "auto": CUDA when present; "cuda" without CUDA: a clear ValueError
        return torch.empty(0, dtype=torch.float64, device=default_device(device))
    raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")


def _per_config(v, B: int, name: str) -> np.ndarray:
    out = np.broadcast_to(np.asarray(v, dtype=np.float64), (B,)).copy()
    if not np.all(np.isfinite(out)) or np.any(out <= 0):
        raise ValueError(f"{name} must be positive and finite, got {v!r}")
    return out


def _as(x: np.ndarray, like):
    if like is None:
        return np.asarray(x, dtype=np.float64)
    xp = _namespace(like)
    return xp.asarray(x, dtype=like.dtype, device=array_api_compat.device(like))


def stage1_batched(
    nets0: Sequence[Net],
    teachers: Teacher | Sequence[Teacher],
    eta0: float = 1.0,
    lam0: float = 1.0,
    *,
    like=None,
) -> list[Net]:
    """:func:`twolayer.paper_b.algorithm1.stage1` for ``B`` initializations at once:
    ``theta^(1) = theta^(0) - eta_0 grad L_{lambda_0}(theta^(0))``."""
    nets0 = list(nets0)
    b = NetBatch.from_nets(nets0, like)
    ta = teacher_arrays(teachers, like=b.W, batch=len(nets0), d=b.W.shape[-1])
    _, g = loss_and_grad_batched(*b.arrays(), teacher=ta, lam=float(lam0))
    new = NetBatch(*(x - eta0 * gx for x, gx in zip(b.arrays(), g)), b.widths, b.dims)
    return new.to_nets()


def _run_epochs(
    state,
    ta,
    eta_x,
    lams,
    epoch_steps,
    record_every: int,
    early: bool = False,
    keep_nets: bool = False,
):
    """The device part of :func:`stage3_batched`: epochs of gradient descent on ``(a, W,
    alpha, beta)`` (updated in place), records and snapshots (and with ``keep_nets`` the
    parameters at every record) kept as device arrays; no host read (tested on PyTorch's meta
    device)."""
    a, W, alpha, beta = state
    xp = _namespace(W)

    def copy():
        return tuple(xp.asarray(x, copy=True) for x in (a, W, alpha, beta))

    rec_meta: list[tuple[int, int]] = []  # (epoch, step) of each record
    rec_vals: list = []  # (L, L_lambda, ||grad||^2) per record, on the device
    rec_nets: list = []  # (a, W, alpha, beta) per record (keep_nets), on the device
    starts, ends = [], []
    total = 0
    for k, (lam_x, n_steps) in enumerate(zip(lams, epoch_steps)):
        starts.append(copy())
        rec = frozenset(record_steps(n_steps, record_every, early).tolist())
        for t in range(n_steps + 1):  # as stage3: the last pass only records the epoch's end
            record = t in rec
            L, (ga, gW, galpha, gbeta) = loss_and_grad_batched(
                a, W, alpha, beta, teacher=ta, lam=lam_x, want_loss=record
            )
            if record:
                reg = L + 0.5 * lam_x * (xp.sum(a * a, axis=-1) + xp.sum(W * W, axis=(-2, -1)))
                gn2 = (
                    xp.sum(ga * ga, axis=-1)
                    + xp.sum(gW * gW, axis=(-2, -1))
                    + galpha * galpha
                    + xp.sum(gbeta * gbeta, axis=-1)
                )
                rec_meta.append((k, total))
                rec_vals.append(xp.stack([L, reg, gn2]))
                if keep_nets:
                    rec_nets.append(copy())
            if t == n_steps:
                break
            a -= eta_x[:, None] * ga
            W -= eta_x[:, None, None] * gW
            alpha -= eta_x * galpha
            beta -= eta_x[:, None] * gbeta
            total += 1
        ends.append(copy())
    return rec_meta, rec_vals, starts, ends, rec_nets


def stage3_batched(
    nets: Sequence[Net],
    teachers: Teacher | Sequence[Teacher],
    lam0,
    epochs: int,
    *,
    steps: int,
    eta,
    record_every: int = 50,
    grow: float = 1.0,
    like=None,
    keep_nets: bool = False,
    early: bool = False,
) -> list[tuple[Net, Trajectory]]:
    """:func:`twolayer.paper_b.algorithm1.stage3` for ``B`` configurations at once.

    ``nets``: the ``B`` starting networks (after Stage 2; different widths are padded with
    zero neurons, which stay zero); ``teachers``: one teacher for all or one per network;
    ``lam0`` and ``eta``: a float or ``B`` values; ``epochs``, ``steps``, ``record_every`` and
    ``grow`` are shared (epoch ``k`` runs ``round(steps * grow^k)`` steps with
    ``lambda = lam0 / 2^k``); ``keep_nets`` and ``early`` are those of ``stage3``. ``like``:
    see :func:`array_like`. Returns ``[(net, trajectory)]`` in the order of ``nets``, as
    ``stage3`` returns for each."""
    nets = list(nets)
    B = len(nets)
    if B == 0:
        return []
    for name, v in (("epochs", epochs), ("steps", steps), ("record_every", record_every)):
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, np.integer))
            or v < (1 if name == "record_every" else 0)
        ):
            raise ValueError(
                f"{name} must be a {'positive' if name == 'record_every' else 'non-negative'} "
                f"integer, got {v!r}"
            )
    lam0s = _per_config(lam0, B, "lam0")
    etas = _per_config(eta, B, "eta")
    batch = NetBatch.from_nets(nets, like)
    ta = teacher_arrays(teachers, like=batch.W, batch=B, d=batch.W.shape[-1])
    lams = [_as(lam0s / 2**k, like) for k in range(epochs)]
    epoch_steps = epoch_lengths(steps, epochs, grow)
    rec_meta, rec_vals, starts, ends, rec_nets = _run_epochs(
        batch.arrays(), ta, _as(etas, like), lams, epoch_steps, record_every, early, keep_nets
    )
    xp = _namespace(batch.W)
    vals = to_numpy(xp.stack(rec_vals)) if rec_vals else np.zeros((0, 3, B))

    def nets_of(state) -> list[Net]:
        return NetBatch(*state, batch.widths, batch.dims).to_nets()

    starts_n = [nets_of(s) for s in starts]
    ends_n = [nets_of(s) for s in ends]
    kept = [nets_of(s) for s in rec_nets]
    out = []
    for b in range(B):
        tr = Trajectory()
        for r, (k, step) in enumerate(rec_meta):
            tr.epoch.append(k)
            tr.lam.append(float(lam0s[b] / 2**k))
            tr.step.append(step)
            tr.loss.append(float(vals[r, 0, b]))
            tr.reg_loss.append(float(vals[r, 1, b]))
            tr.grad_norm2.append(float(vals[r, 2, b]))
            if keep_nets:
                tr.nets.append(kept[r][b])
        for k in range(epochs):
            tr.starts.append((float(lam0s[b] / 2**k), starts_n[k][b]))
            tr.snapshots.append((float(lam0s[b] / 2**k), ends_n[k][b]))
        out.append((ends_n[-1][b] if epochs else nets[b].copy(), tr))
    return out
