"""The benchmark's summary (one number per figure) and the table it prints."""

from __future__ import annotations

from ...core.fmt import fmt

#: the figure each summary number should reach (``>=``, or ``<=`` for those in
#: :data:`LOWER_IS_BETTER`)
TARGETS = {
    "trainer_fraction_of_matmul_peak": 0.5,
    "batched_speedup_vs_naive": 10.0,
    "figure1_sweep_efficiency": 0.3,
    "population_grad_speedup_vs_mc": 100.0,
    "paperb_grad_speedup_vs_before": 1.0,
    "book_seconds": 900.0,
}
#: the summary numbers whose target is an upper bound
LOWER_IS_BETTER = {"book_seconds"}


def summary(res: dict) -> dict:
    """One number per figure of the results ``res`` (the keys of :data:`TARGETS` among them)."""
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
    """The printed report: the summary against its targets, then each part's details."""
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
        val = "n/a" if v is None else fmt(v)
        tg = "" if tgt is None else (f"<= {fmt(tgt)}" if low else f">= {fmt(tgt)}")
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
