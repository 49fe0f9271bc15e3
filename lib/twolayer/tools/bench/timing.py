"""How the benchmark times (median of repeats after a warm-up, the device synchronised) and
where it ran (device, versions, threads)."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable

import torch

from ... import __version__


def sync(device: torch.device) -> None:
    """Wait for ``device``'s queued work (CUDA); nothing on the CPU."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timings(
    fn: Callable[[], object], device: torch.device, repeats: int = 5, warmup: int = 1
) -> list[float]:
    """Wall times of ``repeats`` runs of ``fn`` after ``warmup`` runs (device synchronised)."""
    device = torch.device(device)
    for _ in range(warmup):
        fn()
    sync(device)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t)
    return times


def timeit(
    fn: Callable[[], object], device: torch.device, repeats: int = 5, warmup: int = 1
) -> float:
    """Median wall time of ``fn`` over ``repeats`` runs after ``warmup`` runs."""
    return statistics.median(timings(fn, device, repeats, warmup))


def spread(times: list[float]) -> dict:
    """Median, smallest and largest of ``times`` and their number."""
    return {
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "n": len(times),
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
