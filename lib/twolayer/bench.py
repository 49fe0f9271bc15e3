"""``python -m twolayer.bench``: how close the book's computations run to the machine's limit.

Measures, in one run on one machine, and prints a table (``--json PATH`` also writes it):

* ``trainer_fraction_of_matmul_peak`` -- the batched gradient-descent trainer's FLOP/s at
  Paper A's shapes (n = 100, d = 10^4, m = 512, a batch of configurations) divided by the
  FLOP/s of plain dense matrix multiplication of the same shapes and dtype, measured in the
  same run. A step does two products of ``B m n d`` multiply-adds (forward ``W X^T``, backward
  ``coef X``): ``4 B m n d`` FLOPs.
* ``batched_speedup_vs_naive`` -- at the theorem chapters' small shapes (n = 16, d = 1000,
  m = 16; 64 configurations, 10^4 steps), the naive way (one ``torch.nn.Module`` per
  configuration, ``torch.optim.SGD``, autograd, one configuration after another) divided by the
  library's batched closed-form trainer doing the same work. The naive time is measured on
  ``--naive-configs`` configurations and scaled linearly (its cost is per configuration).
* ``figure1_sweep_efficiency`` -- the Figure 1 sweep at the paper's shapes, stable ranks
  included, end to end: the dense FLOPs it must do divided by (wall time x measured matmul
  FLOP/s), when the Figure 1 library code is present.
* ``population_grad_speedup_vs_mc`` -- Paper B's population gradient: the time Monte Carlo
  needs for 1e-3 relative error divided by the closed form's time, when present.
* ``notebook_seconds`` (book profile), ``book_seconds`` and ``peak_rss_mb`` of the largest
  notebook (``--notebooks``; minutes).
* the device, dtype, thread count and library versions.

Timings use the median of repeats after a warm-up; nothing here is a test.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from . import __version__
from .common.device import default_device, resolve_dtype
from .common.io import atomic_write_json
from .paper_a.models import LeakyNetwork
from .paper_a.trainer import gradient_descent

ROOT = Path(__file__).resolve().parents[2]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timeit(fn: Callable[[], object], device: torch.device, repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn`` over ``repeats`` runs after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    _sync(device)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _paper_a_problem(n: int, d: int, m: int, B: int, dtype, device, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64).to(dtype=dtype, device=device)
    y = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).to(dtype=dtype, device=device)
    net = LeakyNetwork(m // 2, m - m // 2, "smoothed_leaky_relu", 0.5)
    W0 = net.init(d, torch.full((B,), 1e-3 / d ** 0.5), seed=seed, batch=B, dtype=dtype, device=device)
    return net, X, y, W0


def matmul_flops(B: int, m: int, n: int, d: int, dtype, device, repeats: int = 5) -> float:
    """FLOP/s of plain dense GEMM for the two products of a training step at these shapes: the
    forward ``(B m x d) @ (d x n)`` and the backward ``(B m x n) @ (n x d)``, into preallocated
    outputs (the machine's GEMM speed, with nothing else in the way)."""
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


def bench_trainer(dtype_name: str = "float64", B: int = 4, steps: int = 20, device=None) -> dict:
    device = device or default_device()
    dtype = resolve_dtype(dtype_name)
    n, d, m = 100, 10_000, 512
    net, X, y, W0 = _paper_a_problem(n, d, m, B, dtype, device)
    peak = matmul_flops(B, m, n, d, dtype, device)

    def train():
        gradient_descent(net, W0, X, y, "logistic", lr=0.01, steps=steps, record_steps=[0, steps],
                         progress=False)

    t = timeit(train, device, repeats=3)
    # steps + 1 gradient evaluations (the last one records the final loss)
    achieved = 4.0 * B * m * n * d * (steps + 1) / t
    return {"shape": f"n={n} d={d} m={m} B={B}", "dtype": dtype_name,
            "matmul_gflops": peak / 1e9, "trainer_gflops": achieved / 1e9,
            "trainer_fraction_of_matmul_peak": achieved / peak}


def _naive_run(X, y, d: int, m: int, gamma: float, scale: float, seed: int, steps: int, lr: float):
    """The naive way: an ``nn.Module``, ``torch.optim.SGD`` and autograd, one configuration."""
    import torch.nn.functional as F
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(seed)
            self.W = nn.Parameter(torch.randn(m, d, generator=g, dtype=torch.float64) * scale)
            a = torch.full((m,), m ** -0.5, dtype=torch.float64)
            a[m // 2:] *= -1
            self.register_buffer("a", a)

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


def bench_batched_vs_naive(configs: int = 64, steps: int = 10_000, naive_configs: int = 4) -> dict:
    n, d, m, gamma, lr = 16, 1000, 16, 0.5, 0.05
    device = torch.device("cpu")
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).double()
    scales = torch.logspace(-4, -1, configs, dtype=torch.float64)
    net = LeakyNetwork(m // 2, m // 2, "smoothed_leaky_relu", gamma)

    W0 = torch.stack([torch.randn(m, d, generator=torch.Generator().manual_seed(k), dtype=torch.float64)
                      * scales[k] for k in range(configs)])

    def batched():
        return gradient_descent(net, W0, X, y, "logistic", lr=lr, steps=steps,
                                record_steps=[0, steps], progress=False).W

    t_lib = timeit(batched, device, repeats=1, warmup=0)
    t0 = time.perf_counter()
    naive = [_naive_run(X, y, d, m, gamma, float(scales[k]), k, steps, lr) for k in range(naive_configs)]
    t_naive = (time.perf_counter() - t0) * configs / naive_configs
    # both compute the same trajectories (up to float64 rounding)
    W_lib = batched()[:naive_configs]
    err = max(float((W_lib[k] - naive[k]).abs().max() / naive[k].abs().max()) for k in range(naive_configs))
    return {"shape": f"n={n} d={d} m={m}, {configs} configs x {steps} steps",
            "naive_seconds": t_naive, "library_seconds": t_lib,
            "naive_measured_on": naive_configs, "max_relative_difference": err,
            "batched_speedup_vs_naive": t_naive / t_lib}


def bench_figure1(steps: int = 1000, device=None) -> dict:
    """Figure 1's sweep at the paper's shapes (n = 100, m = 64, d in {10^2, 10^3, 10^4}, three
    initialization scales batched per d, 50 recorded stable ranks and accuracies), end to end
    through :func:`twolayer.paper_a.rankdecay.run`. Dense FLOPs counted: the two products per gradient
    step, and at each record the SVD (about ``4 m^2 d``) and the forward passes on the train and
    test sets (``2 m d (n + n_test)``), per configuration."""
    from .paper_a import rankdecay

    device = device or default_device()
    n, m, records, n_test, scales = 100, 64, 50, 1000, (1.0, 0.1, 0.02)
    dims = (100, 1000, 10_000)
    configs = [rankdecay.config(d=d, n=n, m=m, gamma=0.1, beta=0.1, init_scale=s, lr=0.01,
                                steps=steps, seed=0, n_test=n_test, records=records)
               for d in dims for s in scales]
    t = time.perf_counter()
    rankdecay.run(configs, progress=False)
    wall = time.perf_counter() - t
    from .paper_a.trainer import log_spaced_steps

    B = len(scales)
    n_rec = len(log_spaced_steps(steps, records))  # the steps at which metrics are evaluated
    flops = 0.0
    for d in dims:
        flops += (steps + 1) * 4.0 * B * m * n * d
        # at a record: margins on the train set again, stable rank (SVD), train and test accuracy
        flops += n_rec * B * (4.0 * m * m * d + 2.0 * m * d * (2 * n + n_test))
    peak = matmul_flops(B, m, n, dims[-1], torch.float64, torch.device("cpu"))
    return {"shape": f"n={n} m={m} d={dims} x {B} scales, {steps} steps, {records} records",
            "wall_seconds": wall, "gflop": flops / 1e9, "matmul_gflops": peak / 1e9,
            "figure1_sweep_efficiency": flops / (wall * peak)}


def bench_population(target: float = 1e-3, n0: int = 200_000, repeats: int = 3) -> dict:
    """Paper B's population gradient in closed form against Monte Carlo: the time Monte Carlo
    needs for ``target`` relative error (extrapolated from its measured error at ``n0`` samples
    with the ``N^{-1/2}`` law) divided by the closed form's time. Student: Algorithm 1 after
    Stage 1 (m = 100) on the prototype teacher (d = 20)."""
    from .paper_b import algorithm1
    from .paper_b import population
    from .paper_b import teacher as teachers

    T = teachers.prototype(d=20, seed=0)
    net = algorithm1.stage1(algorithm1.symmetric_init(20, 100, seed=0), T)
    net.a = net.a + 0.01  # break the symmetric cancellation so every block of the gradient is non-zero
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
    return {"closed_form_seconds": t_closed, "mc_error_at_n0": err, "n0": n0,
            "mc_samples_for_target": n_needed, "mc_seconds_for_target": t_mc,
            "population_grad_speedup_vs_mc": t_mc / t_closed}


def bench_notebooks(profile: str = "book", build: bool = True) -> dict:
    """Execute every chapter with papermill in ``profile`` (each in a fresh process, to read
    its kernel's peak RSS), then time a whole ``jupyter-book build``."""
    import subprocess
    import tempfile

    code = ("import papermill as pm, resource, sys, time, json\n"
            "t = time.perf_counter()\n"
            "pm.execute_notebook(sys.argv[1], sys.argv[2], parameters={'profile': sys.argv[3]},"
            " cwd=sys.argv[4], progress_bar=False, kernel_name='python3')\n"
            "print(json.dumps({'seconds': time.perf_counter() - t,"
            " 'rss_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))\n")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for nb in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
            res = subprocess.run([sys.executable, "-c", code, str(nb), f"{tmp}/{nb.name}", profile,
                                  str(nb.parent)], capture_output=True, text=True)
            if res.returncode != 0:
                out[nb.stem] = {"error": res.stderr.strip().splitlines()[-1:]}
                continue
            out[nb.stem] = json.loads(res.stdout.strip().splitlines()[-1])
        book = None
        if build:
            t = time.perf_counter()
            jb = Path(sys.executable).with_name("jupyter-book")
            res = subprocess.run([str(jb), "build", str(ROOT), "--path-output", tmp],
                                 capture_output=True, text=True, env={**os.environ, "BOOK_PROFILE": profile})
            book = time.perf_counter() - t if res.returncode == 0 else None
    ok = {k: v for k, v in out.items() if "seconds" in v}
    largest = max(ok, key=lambda k: ok[k]["rss_mb"]) if ok else None
    return {"profile": profile, "notebook_seconds": {k: v.get("seconds") for k, v in out.items()},
            "failed": {k: v["error"] for k, v in out.items() if "error" in v},
            "book_seconds": book, "peak_rss_mb": ok[largest]["rss_mb"] if largest else None,
            "peak_rss_notebook": largest}


def environment(device) -> dict:
    import importlib.metadata as md

    versions = {}
    for pkg in ("torch", "numpy", "scipy", "cvxpy", "jupyter-book", "papermill", "dask"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return {"device": str(device), "device_name": (torch.cuda.get_device_name(device)
                                                    if device.type == "cuda" else platform.processor() or platform.machine()),
            "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "python": platform.python_version(), "twolayer": __version__, "versions": versions}


TARGETS = {"trainer_fraction_of_matmul_peak": 0.5, "batched_speedup_vs_naive": 10.0,
           "figure1_sweep_efficiency": 0.3, "population_grad_speedup_vs_mc": 100.0,
           "book_seconds": 900.0}


def run(only: set[str] | None = None, naive_configs: int = 4, profile: str = "book") -> dict:
    device = default_device()
    want = (lambda k: only is None or k in only)
    res: dict = {"environment": environment(device)}
    if want("trainer"):
        res["trainer"] = {dt: bench_trainer(dt, device=device) for dt in ("float64", "float32")}
    if want("naive"):
        res["naive"] = bench_batched_vs_naive(naive_configs=naive_configs)
    if want("figure1"):
        res["figure1"] = bench_figure1(device=device)
    if want("population"):
        res["population"] = bench_population()
    if want("notebooks"):
        res["notebooks"] = bench_notebooks(profile)
    res["summary"] = summary(res)
    return res


def summary(res: dict) -> dict:
    s = {}
    if res.get("trainer"):
        s["trainer_fraction_of_matmul_peak"] = min(
            v["trainer_fraction_of_matmul_peak"] for v in res["trainer"].values())
    if res.get("naive"):
        s["batched_speedup_vs_naive"] = res["naive"]["batched_speedup_vs_naive"]
    if res.get("figure1"):
        s["figure1_sweep_efficiency"] = res["figure1"]["figure1_sweep_efficiency"]
    if res.get("population"):
        s["population_grad_speedup_vs_mc"] = res["population"]["population_grad_speedup_vs_mc"]
    if res.get("notebooks"):
        s["book_seconds"] = res["notebooks"]["book_seconds"]
        s["peak_rss_mb"] = res["notebooks"]["peak_rss_mb"]
    return s


def table(res: dict) -> str:
    env = res["environment"]
    lines = [f"twolayer {env['twolayer']} on {env['device']} ({env['device_name']}, "
             f"{env['cpu_count']} CPUs, {env['torch_threads']} torch threads), "
             f"torch {env['versions'].get('torch')}", "",
             f"| {'metric':40s} | {'value':>12s} | {'target':>10s} | met |",
             f"|{'-' * 42}|{'-' * 14}|{'-' * 12}|-----|"]
    for k, v in res["summary"].items():
        tgt = TARGETS.get(k)
        met = "" if v is None or tgt is None else ("yes" if (v <= tgt if k == "book_seconds" else v >= tgt) else "NO")
        val = "n/a" if v is None else f"{v:.3g}"
        tg = "" if tgt is None else (f"<= {tgt:g}" if k == "book_seconds" else f">= {tgt:g}")
        lines.append(f"| {k:40s} | {val:>12s} | {tg:>10s} | {met:3s} |")
    if res.get("trainer"):
        lines.append("")
        for dt, v in res["trainer"].items():
            lines.append(f"trainer {dt} ({v['shape']}): {v['trainer_gflops']:.1f} GFLOP/s vs matmul "
                         f"{v['matmul_gflops']:.1f} GFLOP/s")
    if res.get("naive"):
        v = res["naive"]
        lines.append(f"batched vs naive ({v['shape']}): library {v['library_seconds']:.2f} s, naive "
                     f"{v['naive_seconds']:.1f} s (measured on {v['naive_measured_on']} configs, scaled); "
                     f"max relative difference {v['max_relative_difference']:.1e}")
    if res.get("notebooks"):
        v = res["notebooks"]
        for k, t in v["notebook_seconds"].items():
            lines.append(f"notebook {k} ({v['profile']} profile): "
                         + ("failed" if t is None else f"{t:.1f} s"))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m twolayer.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the results to this JSON file (atomically)")
    ap.add_argument("--only", help="comma-separated subset of: trainer,naive,figure1,population,notebooks")
    ap.add_argument("--naive-configs", type=int, default=4,
                    help="configurations the naive baseline is timed on (scaled to 64)")
    ap.add_argument("--profile", default="book", choices=["smoke", "book", "paper"],
                    help="profile for the notebook timings")
    args = ap.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    res = run(only, args.naive_configs, args.profile)
    print(table(res))
    if args.json:
        atomic_write_json(args.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
