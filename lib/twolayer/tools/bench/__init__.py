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
  most, resumable; ``--keep`` keeps each run for :mod:`twolayer.tools.paperscale`).
* the device, dtype, thread count and library versions.

Timings use the median of repeats after a warm-up (the spread is reported where it matters);
nothing here is a test: ``tests/entry_points/test_bench.py`` runs every function at tiny sizes
and checks only the keys and that the values are finite.
"""

from __future__ import annotations

import argparse

import torch

from ...core.device import default_device
from ...core.io import atomic_write_json
from .gemm import peak_gemm
from .notebooks import bench_notebooks
from .paper_a import bench_batched_vs_naive, bench_figure1, bench_figure2_paper, bench_trainer
from .paper_b import bench_paperb, bench_population
from .report import summary, table
from .timing import environment

__all__ = ["PARTS", "run", "main"]

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
