"""Paper B's gradients: the population gradient in closed form against Monte Carlo
(``population``), and the closed-form gradient before and after its array-API rewrite, on
NumPy and torch, batched and sequential, with Stage 3's paper profile projected (``paperb``)."""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
import torch

from ...core.device import default_device
from .timing import spread, sync, timeit, timings


def bench_population(
    target: float = 1e-3, n0: int = 200_000, repeats: int = 3, m: int = 100, *, d: int = 20
) -> dict:
    """Paper B's population gradient in closed form against Monte Carlo: the time Monte Carlo
    needs for ``target`` relative error (extrapolated from its measured error at ``n0`` samples
    with the ``N^{-1/2}`` law) divided by the closed form's time. Student: Algorithm 1 after
    Stage 1 (m = 100) on the prototype teacher (d = 20). NumPy on the CPU."""
    from ...paper_b import algorithm1, population
    from ...paper_b import teacher as teachers

    T = teachers.prototype(d=d, seed=0)
    net = algorithm1.stage1(algorithm1.symmetric_init(d, m, seed=0), T)
    net.a = (
        net.a + 0.01
    )  # break the symmetric cancellation so every block of the gradient is non-zero
    g = population.grad(net, T).flat()
    t_closed = timeit(lambda: population.grad(net, T), torch.device("cpu"), repeats=20)

    def mc_grad(N, seed):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((N, T.d))
        Z = X @ net.W.T
        r = net(X) - T.y_tilde(X)
        ga = 2.0 / N * (np.maximum(Z, 0).T @ r)
        gW = 2.0 / N * (((r[:, None] * (Z > 0)) * net.a).T @ X)
        galpha = 2.0 * r.mean()
        gbeta = 2.0 / N * (X.T @ r)
        return np.concatenate([ga, gW.ravel(), [galpha], gbeta])

    errs, times = [], []
    for k in range(repeats):
        t0 = time.perf_counter()
        gm = mc_grad(n0, k)
        times.append(time.perf_counter() - t0)
        errs.append(np.linalg.norm(gm - g) / np.linalg.norm(g))
    err = float(np.sqrt(np.mean(np.square(errs))))
    n_needed = n0 * (err / target) ** 2
    t_mc = statistics.median(times) * n_needed / n0
    return {
        "closed_form_seconds": t_closed,
        "mc_error_at_n0": err,
        "n0": n0,
        "mc_samples_for_target": n_needed,
        "mc_seconds_for_target": t_mc,
        "population_grad_speedup_vs_mc": t_mc / t_closed,
    }


def _paperb_grad_before(net, teacher, lam: float = 0.0):
    """Paper B's gradient as :func:`twolayer.paper_b.population.grad` computed it before its
    array-API rewrite (NumPy only; ``arccos`` and ``sqrt(1 - t^2)`` evaluated twice per pair
    of neurons): the baseline of ``paperb_grad_seconds``. Returns ``(ga, gW, galpha, gbeta)``."""
    from ...paper_b.kernels import INV_SQRT_2PI, _clip, k1, kappa2
    from ...paper_b.kernels import unit_rows as _unit

    U, n = _unit(net.W)
    Us, ns = _unit(teacher.W)
    a, c, cs = net.a, net.a * n, teacher.a * ns
    T = _clip(U @ U.T)
    Ts = _clip(U @ Us.T)
    two_pi = 2 * math.pi
    Kc = k1(T) @ c
    K2s = kappa2(Ts) @ cs
    ga = 2 * n * Kc + 2 * net.alpha * INV_SQRT_2PI * n + net.W @ net.beta - 2 * n * K2s + lam * a
    S, Pm = np.sqrt(1 - T * T), math.pi - np.arccos(T)
    Ss, Ps = np.sqrt(1 - Ts * Ts), math.pi - np.arccos(Ts)
    own = (S @ c) / two_pi
    cross = (Pm * c[None, :]) @ U / two_pi
    own_s = (Ss @ cs - cs.sum()) / two_pi
    cross_s = (Ps * cs[None, :]) @ Us / two_pi - 0.25 * (cs @ Us)[None, :]
    gW = (
        (2 * a)[:, None] * (own[:, None] * U + cross + net.alpha * INV_SQRT_2PI * U)
        + a[:, None] * net.beta[None, :]
        - (2 * a)[:, None] * (own_s[:, None] * U + cross_s)
        + lam * net.W
    )
    galpha = 2 * (net.alpha + INV_SQRT_2PI * float(a @ n))
    gbeta = 2 * net.beta + a @ net.W
    return ga, gW, galpha, gbeta


def bench_paperb(
    device=None,
    m: int = 400,
    d: int = 50,
    B: int = 8,
    *,
    repeats: int = 15,
    stage3_steps: int = 20,
    paper_steps: int = 2000 * (2**8 - 1),
) -> dict:
    """Paper B's closed-form gradient at the paper profile's shapes (Stage 3 of
    ``notebooks/paper_b/stage3.md``: m = 400, d = 50, a random teacher with r = 2, m* = 3;
    the student after Stage 1), per gradient: the earlier NumPy code, the array-API path on
    NumPy, and on torch on ``device`` (float64). ``paperb_batched_speedup``: ``B`` seeds as one
    batched program on the device against ``B`` sequential calls of the same code.
    ``paperb_stage3_paper_seconds``: the per-step time of
    :func:`~twolayer.paper_b.gd_backend.stage3_batched` (one configuration, on the device)
    times the paper profile's ``paper_steps`` (8 epochs of 2000 x 2^k steps)."""
    from ...paper_b import algorithm1 as alg
    from ...paper_b import gd_backend as gb
    from ...paper_b import population as pop
    from ...paper_b import teacher as tmod

    device = torch.device(device or default_device())
    teacher = tmod.random_teacher(d, 2, 3, seed=0)
    nets = [alg.stage1(alg.symmetric_init(d, m, seed=s), teacher) for s in range(B)]
    for k, net in enumerate(nets):  # break the symmetric cancellation (every block non-zero)
        net.a = net.a + 0.01 * (k + 1)
    net, lam = nets[0], 0.01
    like = torch.empty(0, dtype=torch.float64, device=device)
    one = pop.NetBatch.from_nets(net, like)
    ta1 = pop.teacher_arrays(teacher, like=like)
    before = timings(lambda: _paperb_grad_before(net, teacher, lam), torch.device("cpu"), repeats)
    numpy_t = timings(lambda: pop.grad(net, teacher, lam), torch.device("cpu"), repeats)
    torch_t = timings(
        lambda: pop.loss_and_grad_batched(*one.arrays(), teacher=ta1, lam=lam), device, repeats
    )
    # agreement of the three (float64 rounding)
    ref = np.concatenate([np.ravel(x) for x in _paperb_grad_before(net, teacher, lam)])
    new_np = pop.grad(net, teacher, lam).flat()
    new_t = (
        pop.NetBatch(*pop.loss_and_grad_batched(*one.arrays(), teacher=ta1, lam=lam)[1])
        .to_nets()[0]
        .flat()
    )
    scale = float(np.abs(ref).max())
    # B configurations: one batched program against B sequential calls, same code, same device
    batch = pop.NetBatch.from_nets(nets, like)
    taB = pop.teacher_arrays(teacher, like=like, batch=B)
    singles = [pop.NetBatch.from_nets(nt, like) for nt in nets]
    batched_t = timings(
        lambda: pop.loss_and_grad_batched(*batch.arrays(), teacher=taB, lam=lam), device, repeats
    )
    seq_t = timings(
        lambda: [pop.loss_and_grad_batched(*s.arrays(), teacher=ta1, lam=lam) for s in singles],
        device,
        max(3, repeats // 3),
    )
    seq_np = timings(
        lambda: [pop.grad(nt, teacher, lam) for nt in nets],
        torch.device("cpu"),
        max(3, repeats // 3),
    )
    # Stage 3 on the device, one configuration: per-step time
    t0 = time.perf_counter()
    gb.stage3_batched(
        [net], teacher, 0.02, 1, steps=stage3_steps, eta=0.1, record_every=100, like=like
    )
    sync(device)
    per_step = (time.perf_counter() - t0) / stage3_steps
    med = statistics.median
    return {
        "shape": f"m={m} d={d} teacher r=2 m*=3, B={B}",
        "device": str(device),
        "paperb_grad_seconds": {
            "numpy_before": spread(before),
            "numpy": spread(numpy_t),
            "torch": spread(torch_t),
        },
        "speedup_numpy_vs_before": med(before) / med(numpy_t),
        "speedup_torch_vs_before": med(before) / med(torch_t),
        "max_relative_difference": {
            "numpy": float(np.abs(new_np - ref).max() / scale),
            "torch": float(np.abs(new_t - ref).max() / scale),
        },
        "batched_seconds": spread(batched_t),
        "sequential_seconds": spread(seq_t),
        "sequential_numpy_seconds": spread(seq_np),
        "paperb_batched_speedup": med(seq_t) / med(batched_t),
        "paperb_batched_speedup_vs_numpy_loop": med(seq_np) / med(batched_t),
        "stage3_seconds_per_step": per_step,
        "paper_steps": paper_steps,
        "paperb_stage3_paper_seconds": per_step * paper_steps,
    }
