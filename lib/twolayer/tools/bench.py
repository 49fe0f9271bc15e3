"""``python -m twolayer.tools.bench``: how close the book's computations run to the machine's limit.

Measures, in one run on one machine and one device (``--device``, default CUDA when present),
and prints a table (``--json PATH`` also writes it):

* ``peak`` -- the machine's matrix-multiplication limit: the best FLOP/s of large square GEMMs
  (several sizes, float32 and float64), measured in the same run. It is the denominator of the
  fractions below (a GEMM of the trainer's own shapes is not a peak: the trainer can beat it).
* ``trainer_fraction_of_matmul_peak`` -- the batched gradient-descent trainer's FLOP/s at
  Paper A's shapes (n = 100, d = 10^4, m = 512, a batch of configurations) divided by the peak
  of its dtype (the summary takes the worse of float32 and float64); the ratio to a GEMM of the
  same shapes is reported beside it. A step does two products of ``B m n d`` multiply-adds
  (forward ``W X^T``, backward ``coef X``): ``4 B m n d`` FLOPs.
* ``batched_speedup_vs_naive`` -- at the theorem chapters' small shapes (n = 16, d = 1000,
  m = 16; 64 configurations, 10^4 steps), the naive way (one ``torch.nn.Module`` per
  configuration, ``torch.optim.SGD``, autograd, one configuration after another) divided by the
  library's batched closed-form trainer doing the same work. The naive time is measured on
  ``--naive-configs`` configurations and scaled linearly (its cost is per configuration).
* ``figure1_sweep_efficiency`` -- the Figure 1 sweep at the paper's shapes, stable ranks
  included, end to end on the device: the dense FLOPs it must do divided by (wall time x the
  float64 peak).
* ``population_grad_speedup_vs_mc`` -- Paper B's population gradient: the time Monte Carlo
  needs for 1e-3 relative error divided by the closed form's time.
* ``paperb_grad_seconds`` -- Paper B's closed-form gradient at the paper profile's shapes
  (m = 400, d = 50): the earlier NumPy implementation (``numpy_before``, kept below), the array-API
  implementation on NumPy (``numpy``) and on torch on the device (``torch``), same shapes, same
  run; ``paperb_batched_speedup`` -- B configurations as one program on the device against B
  sequential runs of the same code; ``paperb_stage3_paper_seconds`` -- Stage 3's paper profile
  (510 000 steps) projected from the measured per-step time of
  :func:`twolayer.paper_b.gd_backend.stage3_batched` on the device.
* ``notebook_seconds`` (book profile), ``book_seconds`` and ``peak_rss_mb`` of the largest
  notebook (``--notebooks``; minutes); with ``--profile paper``, ``paper_profile_seconds_<paper>.
  <chapter>`` per chapter (``make paper-times``: the whole paper profile, an hour per chapter at
  most, resumable; ``--keep`` keeps each run for ``twolayer.page.paperscale``).
* the device, dtype, thread count and library versions.

Timings use the median of repeats after a warm-up (the spread is reported where it matters);
nothing here is a test: ``tests/entry_points/test_bench.py`` runs every function at tiny sizes
and checks only the keys and that the values are finite.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from .. import __version__
from ..core.device import default_device, resolve_dtype
from ..core.io import atomic_write_json, repository_root
from ..paper_a.models import LeakyNetwork
from ..paper_a.trainer import gradient_descent

ROOT = repository_root()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timings(
    fn: Callable[[], object], device: torch.device, repeats: int = 5, warmup: int = 1
) -> list[float]:
    """Wall times of ``repeats`` runs of ``fn`` after ``warmup`` runs (device synchronised)."""
    device = torch.device(device)
    for _ in range(warmup):
        fn()
    _sync(device)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - t)
    return times


def timeit(
    fn: Callable[[], object], device: torch.device, repeats: int = 5, warmup: int = 1
) -> float:
    """Median wall time of ``fn`` over ``repeats`` runs after ``warmup`` runs."""
    return statistics.median(timings(fn, device, repeats, warmup))


def _spread(times: list[float]) -> dict:
    return {
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "n": len(times),
    }


def _paper_a_problem(n: int, d: int, m: int, B: int, dtype, device, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
    y = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).to(dtype=dtype, device=device)
    net = LeakyNetwork(m // 2, m - m // 2, "smoothed_leaky_relu", 0.5)
    W0 = net.init(
        d, torch.full((B,), 1e-3 / d**0.5), seed=seed, batch=B, dtype=dtype, device=device
    )
    return net, X, y, W0


def default_peak_sizes(device) -> tuple[int, ...]:
    """Square GEMM sizes for the peak: large enough to reach the BLAS limit, small enough to
    take seconds (a GPU needs larger ones to fill its cores)."""
    return (4096, 8192) if torch.device(device).type == "cuda" else (512, 1024, 2048)


def peak_gemm(
    dtype_name: str = "float64", device=None, sizes: tuple[int, ...] | None = None, repeats: int = 5
) -> dict:
    """The machine's matrix-multiplication limit in ``dtype``: the best FLOP/s over square
    GEMMs ``C = A B`` of the given sizes (``2 k^3`` FLOPs each, into a preallocated output)."""
    device = torch.device(device or default_device())
    dtype = resolve_dtype(dtype_name)
    sizes = tuple(sizes or default_peak_sizes(device))
    per_size = {}
    for k in sizes:
        g = torch.Generator().manual_seed(k)
        A = torch.randn(k, k, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
        Bm = torch.randn(k, k, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
        C = torch.empty(k, k, dtype=dtype, device=device)
        t = min(timings(lambda A=A, Bm=Bm, C=C: torch.mm(A, Bm, out=C), device, repeats=repeats))
        per_size[str(k)] = 2.0 * k**3 / t / 1e9
    best = max(per_size, key=per_size.get)
    return {
        "dtype": dtype_name,
        "peak_gflops": per_size[best],
        "best_size": int(best),
        "gflops_by_size": per_size,
    }


def matmul_flops(B: int, m: int, n: int, d: int, *, dtype, device, repeats: int = 5) -> float:
    """FLOP/s of plain dense GEMM for the two products of a training step at these shapes: the
    forward ``(B m x d) @ (d x n)`` and the backward ``(B m x n) @ (n x d)``, into preallocated
    outputs (a reference of the same shapes; not the machine's peak, see :func:`peak_gemm`)."""
    g = torch.Generator().manual_seed(1)
    W = torch.randn(B * m, d, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
    X = torch.randn(n, d, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
    C = torch.randn(B * m, n, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
    Z = torch.empty(B * m, n, dtype=dtype, device=device)
    G = torch.empty(B * m, d, dtype=dtype, device=device)

    def both():
        torch.mm(W, X.T, out=Z)
        torch.mm(C, X, out=G)

    return 4.0 * B * m * n * d / timeit(both, device, repeats=repeats)


def bench_trainer(
    dtype_name: str = "float64",
    B: int = 4,
    steps: int = 20,
    device=None,
    *,
    peak: dict | None = None,
    shape: tuple[int, int, int] = (100, 10_000, 512),
    repeats: int = 3,
) -> dict:
    """The trainer's FLOP/s at Paper A's shapes against the machine's peak in its dtype and
    against a GEMM of the same shapes."""
    device = torch.device(device or default_device())
    dtype = resolve_dtype(dtype_name)
    n, d, m = shape
    net, X, y, W0 = _paper_a_problem(n, d, m, B, dtype, device)
    same_shape = matmul_flops(B, m, n, d, dtype=dtype, device=device)
    peak = peak or peak_gemm(dtype_name, device)

    def train():
        gradient_descent(
            net,
            W0,
            X,
            y,
            loss="logistic",
            lr=0.01,
            steps=steps,
            record_steps=[0, steps],
            progress=False,
        )

    times = timings(train, device, repeats=repeats)
    # steps + 1 gradient evaluations (the last one records the final loss)
    achieved = 4.0 * B * m * n * d * (steps + 1) / statistics.median(times)
    return {
        "shape": f"n={n} d={d} m={m} B={B}",
        "dtype": dtype_name,
        "device": str(device),
        "peak_gflops": peak["peak_gflops"],
        "same_shape_gemm_gflops": same_shape / 1e9,
        "trainer_gflops": achieved / 1e9,
        "seconds": _spread(times),
        "trainer_fraction_of_matmul_peak": achieved / 1e9 / peak["peak_gflops"],
        "trainer_fraction_of_same_shape_gemm": achieved / same_shape,
    }


def _naive_run(X, y, d: int, m: int, gamma: float, scale: float, seed: int, steps: int, lr: float):
    """The naive way: an ``nn.Module``, ``torch.optim.SGD`` and autograd, one configuration."""
    import torch.nn.functional as F
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(seed)
            W = torch.randn(m, d, generator=g, dtype=torch.float64) * scale
            self.W = nn.Parameter(W.to(device=X.device))
            a = torch.full((m,), m**-0.5, dtype=torch.float64)
            a[m // 2 :] *= -1
            self.register_buffer("a", a.to(device=X.device))

        def forward(self, x):
            z = x @ self.W.T
            return (gamma * z + (1 - gamma) * (F.softplus(z) - np.log(2))) @ self.a

    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = F.softplus(-y * model(X)).mean()
        loss.backward()
        opt.step()
    return model.W.detach()


def bench_batched_vs_naive(
    configs: int = 64,
    steps: int = 10_000,
    naive_configs: int = 4,
    device=None,
    *,
    shape: tuple[int, int, int] = (16, 1000, 16),
) -> dict:
    device = torch.device(device or default_device())
    n, d, m = shape
    gamma, lr = 0.5, 0.05
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, d, generator=g, dtype=torch.float64).to(device)
    y = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).double().to(device)
    scales = torch.logspace(-4, -1, configs, dtype=torch.float64)
    net = LeakyNetwork(m // 2, m // 2, "smoothed_leaky_relu", gamma)

    W0 = torch.stack(
        [
            torch.randn(m, d, generator=torch.Generator().manual_seed(k), dtype=torch.float64)
            * scales[k]
            for k in range(configs)
        ]
    ).to(device)

    def batched():
        return gradient_descent(
            net,
            W0,
            X,
            y,
            loss="logistic",
            lr=lr,
            steps=steps,
            record_steps=[0, steps],
            progress=False,
        ).W

    t_lib = timeit(batched, device, repeats=1, warmup=0)
    t0 = time.perf_counter()
    naive = [
        _naive_run(X, y, d, m, gamma, float(scales[k]), k, steps, lr) for k in range(naive_configs)
    ]
    _sync(device)
    t_naive = (time.perf_counter() - t0) * configs / naive_configs
    # both compute the same trajectories (up to float64 rounding)
    W_lib = batched()[:naive_configs]
    err = max(
        float((W_lib[k] - naive[k]).abs().max() / naive[k].abs().max())
        for k in range(naive_configs)
    )
    return {
        "shape": f"n={n} d={d} m={m}, {configs} configs x {steps} steps",
        "device": str(device),
        "naive_seconds": t_naive,
        "library_seconds": t_lib,
        "naive_measured_on": naive_configs,
        "max_relative_difference": err,
        "batched_speedup_vs_naive": t_naive / t_lib,
    }


def bench_figure1(
    steps: int = 1000,
    device=None,
    dims: tuple[int, ...] = (100, 1000, 10_000),
    n: int = 100,
    *,
    m: int = 64,
    n_test: int = 1000,
    records: int = 50,
    peak: dict | None = None,
) -> dict:
    """Figure 1's sweep at the paper's shapes (n = 100, m = 64, d in {10^2, 10^3, 10^4}, three
    initialization scales batched per d, 50 recorded stable ranks and accuracies), end to end
    on ``device`` in float64: the data, the Glorot-scaled initialization and the smoothed leaky
    ReLU network of :mod:`twolayer.paper_a.rankdecay`, trained by
    :func:`twolayer.paper_a.trainer.gradient_descent` with its metrics (the stable rank and
    the train and test accuracies) computed on the device. Dense FLOPs counted: the two
    products per gradient step, and at each record the SVD (about ``4 m^2 d``) and the forward
    passes on the train and test sets (``2 m d (n + n_test)``), per configuration."""
    from ..paper_a import data as data_mod
    from ..paper_a.metrics import stable_rank
    from ..paper_a.trainer import log_spaced_steps

    device = torch.device(device or default_device())
    scales = (1.0, 0.1, 0.02)
    B = len(scales)
    t = time.perf_counter()
    for d in dims:
        train = data_mod.gaussian_mixture(n, d, seed=1, beta=0.1)
        test = data_mod.gaussian_mixture(n_test, d, seed=2, mu=train.info["mu"])
        X, y = train.torch(device=device)
        Xt, yt = test.torch(device=device)
        net = LeakyNetwork(m - m // 2, m // 2, phi="smoothed_leaky_relu", gamma=0.1)
        glorot = math.sqrt(2.0 / (d + m))
        W0 = net.init(d, torch.tensor(scales) * glorot, seed=3, batch=B, device=device)

        def accuracy(Xs, ys, net=net):
            return lambda W: (torch.sign(net.forward(W, Xs)) == ys).to(W.dtype).mean(dim=-1)

        gradient_descent(
            net,
            W0,
            X,
            y,
            loss="logistic",
            lr=0.01,
            steps=steps,
            record_steps=log_spaced_steps(steps, records),
            progress=False,
            metrics={
                "stable_rank": stable_rank,
                "test_accuracy": accuracy(Xt, yt),
                "train_accuracy": accuracy(X, y),
            },
        )
    _sync(device)
    wall = time.perf_counter() - t
    n_rec = len(log_spaced_steps(steps, records))  # the steps at which metrics are evaluated
    flops = 0.0
    for d in dims:
        flops += (steps + 1) * 4.0 * B * m * n * d
        # at a record: margins on the train set again, stable rank (SVD), train and test accuracy
        flops += n_rec * B * (4.0 * m * m * d + 2.0 * m * d * (2 * n + n_test))
    peak = peak or peak_gemm("float64", device)
    return {
        "shape": f"n={n} m={m} d={dims} x {B} scales, {steps} steps, {records} records",
        "device": str(device),
        "wall_seconds": wall,
        "gflop": flops / 1e9,
        "peak_gflops": peak["peak_gflops"],
        "figure1_sweep_efficiency": flops / 1e9 / (wall * peak["peak_gflops"]),
    }


def bench_figure2_paper(device=None, steps: int = 10_000, records: int = 60) -> dict:
    """Figure 2 at the paper profile's scale without CIFAR-10 (not downloadable here): SGD on
    random data of CIFAR-10's shape (50 000 x 3072 training, 10 000 test images), width 512,
    batch 32, the paper profile's five initialization scales trained together, for ``steps``
    steps; the per-step and per-record (stable rank and accuracies on the full sets) costs
    project the paper profile's 10^6 steps with ``records`` records."""
    from ..paper_a import sgd

    device = torch.device(device) if device is not None else default_device()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50_000, 3072), dtype=np.float32)
    y = rng.integers(0, 2, 50_000)  # two classes, cross-entropy as the chapter
    Xt = rng.standard_normal((10_000, 3072), dtype=np.float32)
    yt = rng.integers(0, 2, 10_000)
    scales = (0.005, 0.02, 0.05, 0.2, 1.0)
    common = dict(width=512, lr=0.01, batch_size=32, seed=0, device=device, progress=False)
    # one record only (step 0), then the steps: the record's cost is timed separately
    t = time.perf_counter()
    sgd.train(
        X, y, Xt, yt, config=sgd.SGDConfig(init_scales=scales, steps=0, record_steps=[0], **common)
    )
    record_s = time.perf_counter() - t
    t = time.perf_counter()
    sgd.train(
        X,
        y,
        Xt,
        yt,
        config=sgd.SGDConfig(init_scales=scales, steps=steps, record_steps=[0], **common),
    )
    run_s = time.perf_counter() - t
    per_step = max(run_s - record_s, 0.0) / steps
    return {
        "device": str(device),
        "steps_timed": steps,
        "seconds_timed": run_s,
        "per_step_ms": 1e3 * per_step,
        "per_record_s": record_s,
        "paper_projection_s": 1_000_000 * per_step + records * record_s,
    }


def bench_population(
    target: float = 1e-3, n0: int = 200_000, repeats: int = 3, m: int = 100, *, d: int = 20
) -> dict:
    """Paper B's population gradient in closed form against Monte Carlo: the time Monte Carlo
    needs for ``target`` relative error (extrapolated from its measured error at ``n0`` samples
    with the ``N^{-1/2}`` law) divided by the closed form's time. Student: Algorithm 1 after
    Stage 1 (m = 100) on the prototype teacher (d = 20). NumPy on the CPU."""
    from ..paper_b import algorithm1, population
    from ..paper_b import teacher as teachers

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
    from ..paper_b.kernels import INV_SQRT_2PI, _clip, k1, kappa2
    from ..paper_b.kernels import unit_rows as _unit

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
    from ..paper_b import algorithm1 as alg
    from ..paper_b import gd_backend as gb
    from ..paper_b import population as pop
    from ..paper_b import teacher as tmod

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
    _sync(device)
    per_step = (time.perf_counter() - t0) / stage3_steps
    med = statistics.median
    return {
        "shape": f"m={m} d={d} teacher r=2 m*=3, B={B}",
        "device": str(device),
        "paperb_grad_seconds": {
            "numpy_before": _spread(before),
            "numpy": _spread(numpy_t),
            "torch": _spread(torch_t),
        },
        "speedup_numpy_vs_before": med(before) / med(numpy_t),
        "speedup_torch_vs_before": med(before) / med(torch_t),
        "max_relative_difference": {
            "numpy": float(np.abs(new_np - ref).max() / scale),
            "torch": float(np.abs(new_t - ref).max() / scale),
        },
        "batched_seconds": _spread(batched_t),
        "sequential_seconds": _spread(seq_t),
        "sequential_numpy_seconds": _spread(seq_np),
        "paperb_batched_speedup": med(seq_t) / med(batched_t),
        "paperb_batched_speedup_vs_numpy_loop": med(seq_np) / med(batched_t),
        "stage3_seconds_per_step": per_step,
        "paper_steps": paper_steps,
        "paperb_stage3_paper_seconds": per_step * paper_steps,
    }


def bench_notebooks(
    profile: str = "book",
    build: bool = True,
    timeout: float | None = None,
    chapters: list[str] | None = None,
    *,
    progress_file: str | os.PathLike | None = None,
    keep: str | os.PathLike | None = None,
) -> dict:
    """Execute every chapter (or ``chapters``, e.g. ``paper_a/setting``) with papermill in
    ``profile``, each in a fresh process (to read its kernel's peak RSS) and stopped after
    ``timeout`` seconds; then, with ``build``, time a whole ``jupyter-book build``.
    ``progress_file``: a JSON file updated (atomically) after each chapter; chapters it already
    holds are not run again (a long paper-profile measurement resumes). ``keep``: a folder that
    receives each chapter's executed notebook and results file (``<paper>/<chapter>.ipynb`` and
    ``.json``, the chapter's ``results_path``), from which ``twolayer.paperscale`` makes the
    tables and figures the book shows beside its own."""
    import subprocess
    import tempfile

    code = (
        "import papermill as pm, resource, sys, time, json\n"
        "t = time.perf_counter()\n"
        "try:\n"
        "    params = {'profile': sys.argv[3]}\n"
        "    if sys.argv[5]:\n"
        "        params['results_path'] = sys.argv[5]\n"
        "    pm.execute_notebook(sys.argv[1], sys.argv[2], parameters=params,"
        " cwd=sys.argv[4], progress_bar=False, kernel_name='python3')\n"
        "    err = None\n"
        "except pm.PapermillExecutionError as exc:\n"
        "    err = f'{exc.ename}: {exc.evalue}'[:400]\n"
        "print(json.dumps({'seconds': time.perf_counter() - t, 'error': err,"
        " 'rss_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))\n"
    )
    done: dict = {}
    if progress_file is not None and Path(progress_file).exists():
        done = json.loads(Path(progress_file).read_text()).get("chapters", {})
    out = {}
    notebooks = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
    if chapters:
        notebooks = [nb for nb in notebooks if f"{nb.parent.name}/{nb.stem}" in chapters]
    with tempfile.TemporaryDirectory() as tmp:
        for nb in notebooks:
            key = f"{nb.parent.name}/{nb.stem}"
            if key in done:
                out[key] = done[key]
                continue
            t0 = time.perf_counter()
            executed, results = Path(tmp) / nb.name, ""
            if keep is not None:
                (Path(keep) / nb.parent.name).mkdir(parents=True, exist_ok=True)
                executed = (Path(keep) / key).with_suffix(".ipynb").resolve()
                results = str((Path(keep) / key).with_suffix(".json").resolve())
            try:
                res = subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        code,
                        str(nb),
                        str(executed),
                        profile,
                        str(nb.parent),
                        results,
                    ],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
                if res.returncode != 0:
                    out[key] = {"error": (res.stderr.strip().splitlines() or ["?"])[-1]}
                else:
                    out[key] = json.loads(res.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                out[key] = {
                    "error": f"did not finish in {timeout:.0f} s",
                    "seconds": None,
                    "timed_out_after": time.perf_counter() - t0,
                }
            if progress_file is not None:
                atomic_write_json(progress_file, {"profile": profile, "chapters": out})
        book = None
        if build:
            t = time.perf_counter()
            jb = Path(sys.executable).with_name("jupyter-book")
            res = subprocess.run(
                [str(jb), "build", str(ROOT), "--path-output", tmp],
                capture_output=True,
                text=True,
                env={**os.environ, "BOOK_PROFILE": profile},
            )
            book = time.perf_counter() - t if res.returncode == 0 else None
    ok = {k: v for k, v in out.items() if v.get("seconds") is not None and not v.get("error")}
    largest = max(ok, key=lambda k: ok[k]["rss_mb"]) if ok else None
    return {
        "profile": profile,
        "notebook_seconds": {
            k: v.get("seconds") if not v.get("error") else None for k, v in out.items()
        },
        "notebook_rss_mb": {k: v.get("rss_mb") for k, v in out.items()},
        "failed": {k: v["error"] for k, v in out.items() if v.get("error")},
        "book_seconds": book,
        "peak_rss_mb": ok[largest]["rss_mb"] if largest else None,
        "peak_rss_notebook": largest,
    }


def environment(device) -> dict:
    import importlib.metadata as md

    device = torch.device(device)
    versions = {}
    for pkg in (
        "torch",
        "numpy",
        "scipy",
        "array-api-compat",
        "cvxpy",
        "jupyter-book",
        "papermill",
        "dask",
    ):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return {
        "device": str(device),
        "device_name": (
            torch.cuda.get_device_name(device)
            if device.type == "cuda"
            else platform.processor() or platform.machine()
        ),
        "cuda": torch.version.cuda,
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "python": platform.python_version(),
        "twolayer": __version__,
        "versions": versions,
    }


TARGETS = {
    "trainer_fraction_of_matmul_peak": 0.5,
    "batched_speedup_vs_naive": 10.0,
    "figure1_sweep_efficiency": 0.3,
    "population_grad_speedup_vs_mc": 100.0,
    "paperb_grad_speedup_vs_before": 1.0,
    "book_seconds": 900.0,
}
LOWER_IS_BETTER = {"book_seconds"}
PARTS = ("trainer", "naive", "figure1", "figure2", "population", "paperb", "notebooks")


def run(
    only: set[str] | None = None,
    naive_configs: int = 4,
    profile: str = "book",
    device=None,
    *,
    notebook_options: dict | None = None,
) -> dict:
    device = torch.device(device) if device is not None else default_device()
    if device.type == "cuda":
        default_device(str(device))  # raises a clear error when CUDA is not there

    def want(k):
        return only is None or k in only

    res: dict = {"environment": environment(device)}
    peaks = {}
    if want("trainer") or want("figure1"):
        peaks = {dt: peak_gemm(dt, device) for dt in ("float64", "float32")}
        res["peak"] = peaks
    if want("trainer"):
        res["trainer"] = {
            dt: bench_trainer(dt, device=device, peak=peaks[dt]) for dt in ("float64", "float32")
        }
    if want("naive"):
        res["naive"] = bench_batched_vs_naive(naive_configs=naive_configs, device=device)
    if want("figure1"):
        res["figure1"] = bench_figure1(device=device, peak=peaks["float64"])
    if want("figure2"):
        res["figure2"] = bench_figure2_paper(device=device)
    if want("population"):
        res["population"] = bench_population()
    if want("paperb"):
        res["paperb"] = bench_paperb(device=device)
    if want("notebooks"):
        res["notebooks"] = bench_notebooks(profile, **(notebook_options or {}))
    res["summary"] = summary(res)
    return res


def summary(res: dict) -> dict:
    s = {}
    if res.get("peak"):
        for dt, v in res["peak"].items():
            s[f"matmul_peak_gflops_{dt}"] = v["peak_gflops"]
    if res.get("trainer"):
        s["trainer_fraction_of_matmul_peak"] = min(
            v["trainer_fraction_of_matmul_peak"] for v in res["trainer"].values()
        )
        s["trainer_fraction_of_same_shape_gemm"] = min(
            v["trainer_fraction_of_same_shape_gemm"] for v in res["trainer"].values()
        )
    if res.get("naive"):
        s["batched_speedup_vs_naive"] = res["naive"]["batched_speedup_vs_naive"]
    if res.get("figure1"):
        s["figure1_sweep_efficiency"] = res["figure1"]["figure1_sweep_efficiency"]
    if res.get("figure2"):
        s["figure2_paper_projection_hours"] = res["figure2"]["paper_projection_s"] / 3600
        s["figure2_per_step_ms"] = res["figure2"]["per_step_ms"]
    if res.get("population"):
        s["population_grad_speedup_vs_mc"] = res["population"]["population_grad_speedup_vs_mc"]
    if res.get("paperb"):
        v = res["paperb"]
        for k, t in v["paperb_grad_seconds"].items():
            s[f"paperb_grad_seconds_{k}"] = t["median"]
        s["paperb_grad_speedup_vs_before"] = max(
            v["speedup_numpy_vs_before"], v["speedup_torch_vs_before"]
        )
        s["paperb_batched_speedup"] = v["paperb_batched_speedup"]
        s["paperb_stage3_paper_seconds"] = v["paperb_stage3_paper_seconds"]
    if res.get("notebooks"):
        nb = res["notebooks"]
        s["book_seconds"] = nb["book_seconds"]
        s["peak_rss_mb"] = nb["peak_rss_mb"]
        # each chapter's time at its profile (None: failed or stopped at the timeout)
        for chapter, t in sorted(nb.get("notebook_seconds", {}).items()):
            s[f"{nb['profile']}_profile_seconds_{chapter.replace('/', '.')}"] = t
    return s


def table(res: dict) -> str:
    env = res["environment"]
    lines = [
        f"twolayer {env['twolayer']} on {env['device']} ({env['device_name']}, "
        f"{env['cpu_count']} CPUs, {env['torch_threads']} torch threads), "
        f"torch {env['versions'].get('torch')}",
        "",
        f"| {'metric':40s} | {'value':>12s} | {'target':>10s} | met |",
        f"|{'-' * 42}|{'-' * 14}|{'-' * 12}|-----|",
    ]
    for k, v in res["summary"].items():
        tgt = TARGETS.get(k)
        low = k in LOWER_IS_BETTER
        met = (
            "" if v is None or tgt is None else ("yes" if (v <= tgt if low else v >= tgt) else "NO")
        )
        val = "n/a" if v is None else f"{v:.3g}"
        tg = "" if tgt is None else (f"<= {tgt:g}" if low else f">= {tgt:g}")
        lines.append(f"| {k:40s} | {val:>12s} | {tg:>10s} | {met:3s} |")
    if res.get("peak"):
        lines.append("")
        for dt, v in res["peak"].items():
            sizes = ", ".join(f"{k}: {g:.1f}" for k, g in v["gflops_by_size"].items())
            lines.append(
                f"matmul peak {dt}: {v['peak_gflops']:.1f} GFLOP/s "
                f"(square GEMMs, GFLOP/s by size: {sizes})"
            )
    if res.get("trainer"):
        for dt, v in res["trainer"].items():
            lines.append(
                f"trainer {dt} ({v['shape']}): {v['trainer_gflops']:.1f} GFLOP/s = "
                f"{v['trainer_fraction_of_matmul_peak']:.2f} of the {dt} peak, "
                f"{v['trainer_fraction_of_same_shape_gemm']:.2f} of a same-shape GEMM "
                f"({v['same_shape_gemm_gflops']:.1f} GFLOP/s)"
            )
    if res.get("naive"):
        v = res["naive"]
        lines.append(
            f"batched vs naive ({v['shape']}): library {v['library_seconds']:.2f} s, naive "
            f"{v['naive_seconds']:.1f} s (measured on {v['naive_measured_on']} configs, scaled); "
            f"max relative difference {v['max_relative_difference']:.1e}"
        )
    if res.get("paperb"):
        v = res["paperb"]
        g = v["paperb_grad_seconds"]
        lines.append(
            f"Paper B gradient ({v['shape']}), ms per gradient, median [min, max]: "
            + "; ".join(
                f"{k} {1e3 * t['median']:.2f} [{1e3 * t['min']:.2f}, {1e3 * t['max']:.2f}]"
                for k, t in g.items()
            )
        )
        lines.append(
            f"Paper B batched: {v['paperb_batched_speedup']:.2f}x over sequential calls on "
            f"{v['device']}, {v['paperb_batched_speedup_vs_numpy_loop']:.2f}x over a NumPy loop; "
            f"Stage 3 paper profile ({v['paper_steps']} steps) projected "
            f"{v['paperb_stage3_paper_seconds']:.0f} s"
        )
    if res.get("notebooks"):
        v = res["notebooks"]
        for k, t in v["notebook_seconds"].items():
            lines.append(
                f"notebook {k} ({v['profile']} profile): "
                + ("failed" if t is None else f"{t:.1f} s")
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m twolayer.tools.bench", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--json", help="also write the results to this JSON file (atomically)")
    ap.add_argument("--only", help=f"comma-separated subset of: {','.join(PARTS)}")
    ap.add_argument(
        "--device",
        default=None,
        help="device for every torch measurement (cpu, cuda, cuda:1; default: CUDA when present)",
    )
    ap.add_argument(
        "--naive-configs",
        type=int,
        default=4,
        help="configurations the naive baseline is timed on (scaled to 64)",
    )
    ap.add_argument(
        "--profile",
        default="book",
        choices=["smoke", "book", "paper"],
        help="profile for the notebook timings",
    )
    ap.add_argument("--timeout", type=float, default=None, help="seconds per notebook")
    ap.add_argument("--chapters", help="comma-separated, e.g. paper_a/setting (notebooks)")
    ap.add_argument("--no-build", action="store_true", help="notebooks only, no book build")
    ap.add_argument("--progress", help="JSON file updated per notebook; resumes from it")
    ap.add_argument(
        "--keep", help="folder for each chapter's executed notebook and results file (.json)"
    )
    args = ap.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    if only and not only <= set(PARTS):
        ap.error(f"--only takes a subset of {','.join(PARTS)}; got {args.only}")
    nb_opts = {
        "timeout": args.timeout,
        "chapters": args.chapters.split(",") if args.chapters else None,
        "build": not args.no_build,
        "progress_file": args.progress,
        "keep": args.keep,
    }
    res = run(only, args.naive_configs, args.profile, device=args.device, notebook_options=nb_opts)
    print(table(res))
    if args.json:
        atomic_write_json(args.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
