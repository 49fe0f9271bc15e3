"""Paper A's trainers at their scale: the batched gradient-descent trainer against the machine's
peak (``trainer``), against the naive loop (``naive``), Figure 1's sweep end to end
(``figure1``) and Figure 2's SGD at the paper profile's scale (``figure2``)."""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
import torch

from ...core.device import default_device, resolve_dtype
from ...paper_a.models import LeakyNetwork
from ...paper_a.trainer import gradient_descent
from .gemm import matmul_flops, peak_gemm
from .timing import spread, sync, timeit, timings


def _paper_a_problem(n: int, d: int, m: int, B: int, dtype, device, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
    y = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).to(dtype=dtype, device=device)
    net = LeakyNetwork(m // 2, m - m // 2, "smoothed_leaky_relu", 0.5)
    W0 = net.init(
        d, torch.full((B,), 1e-3 / d**0.5), seed=seed, batch=B, dtype=dtype, device=device
    )
    return net, X, y, W0


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
        "seconds": spread(times),
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
    sync(device)
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
    from ...paper_a import data as data_mod
    from ...paper_a.metrics import stable_rank
    from ...paper_a.trainer import log_spaced_steps

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
    sync(device)
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
    from ...paper_a import sgd

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
