"""The machine's matrix-multiplication limit (``peak``), the denominator of the trainer's and
Figure 1's fractions, and a GEMM of a training step's own shapes."""

from __future__ import annotations

import torch

from ...core.device import default_device, resolve_dtype
from .timing import timeit, timings


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
