"""``python -m twolayer.tools.bench`` (the package ``twolayer.tools.bench``: ``timing``, ``gemm``,
``paper_a``, ``paper_b``, ``notebooks``, ``report``) at tiny sizes: the functions run, return the
documented keys, and every value is finite. Speed is never asserted here (targets belong to the
benchmark's output, not to timed tests)."""

from __future__ import annotations

import json
import math

import pytest
import torch

from twolayer.tools import bench
from twolayer.tools.bench import gemm, notebooks, paper_a, paper_b, report, timing

CPU = torch.device("cpu")


def finite_numbers(d, path="") -> list[str]:
    """Paths of the numbers in ``d`` that are not finite."""
    bad = []
    if isinstance(d, dict):
        for k, v in d.items():
            bad += finite_numbers(v, f"{path}.{k}")
    elif isinstance(d, (list, tuple)):
        for i, v in enumerate(d):
            bad += finite_numbers(v, f"{path}[{i}]")
    elif isinstance(d, (int, float)) and not isinstance(d, bool) and not math.isfinite(d):
        bad.append(path)
    return bad


@pytest.fixture(scope="module")
def tiny():
    peak = {dt: gemm.peak_gemm(dt, CPU, sizes=(32, 64), repeats=2) for dt in ("float64", "float32")}
    return {
        "environment": timing.environment(CPU),
        "peak": peak,
        "trainer": {
            dt: paper_a.bench_trainer(
                dt, B=2, steps=3, device=CPU, peak=peak[dt], shape=(8, 40, 6), repeats=2
            )
            for dt in ("float64", "float32")
        },
        "naive": paper_a.bench_batched_vs_naive(
            configs=4, steps=5, naive_configs=2, device=CPU, shape=(4, 10, 4)
        ),
        "figure1": paper_a.bench_figure1(
            steps=5, device=CPU, dims=(10, 20), n=8, m=4, n_test=16, records=3, peak=peak["float64"]
        ),
        "population": paper_b.bench_population(n0=2000, repeats=2, m=10, d=6),
        "paperb": paper_b.bench_paperb(device=CPU, m=12, d=6, B=3, repeats=2, stage3_steps=3),
    }


def test_tiny_benchmark_keys_and_finite_values(tiny):
    res = dict(tiny)
    res["summary"] = report.summary(res)
    assert finite_numbers(res) == []
    s = res["summary"]
    for k in (
        "matmul_peak_gflops_float64",
        "matmul_peak_gflops_float32",
        "trainer_fraction_of_matmul_peak",
        "trainer_fraction_of_same_shape_gemm",
        "batched_speedup_vs_naive",
        "figure1_sweep_efficiency",
        "population_grad_speedup_vs_mc",
        "paperb_grad_seconds_numpy_before",
        "paperb_grad_seconds_numpy",
        "paperb_grad_seconds_torch",
        "paperb_grad_speedup_vs_before",
        "paperb_batched_speedup",
        "paperb_stage3_paper_seconds",
    ):
        assert k in s and s[k] > 0, k
    for dt in ("float64", "float32"):
        t = res["trainer"][dt]
        by_size = res["peak"][dt]["gflops_by_size"]
        assert set(by_size) == {"32", "64"}
        # the peak is the best GEMM rate over the sizes, and the trainer compares with it
        assert res["peak"][dt]["peak_gflops"] == max(by_size.values())
        assert t["peak_gflops"] == max(by_size.values())
        # FLOPs counted by hand at shape (n, d, m) = (8, 40, 6), B = 2, steps = 3: a gradient
        # evaluation is two GEMMs (forward (Bm x d)(d x n), backward (Bm x n)(n x d)), 2 B m n d
        # FLOPs each, and the run makes steps + 1 = 4 of them: 4 * 2*6*8*40 * 4 = 61 440
        rate = 61_440 / t["seconds"]["median"] / 1e9
        assert t["trainer_gflops"] == pytest.approx(rate, rel=1e-12)
        assert t["trainer_fraction_of_matmul_peak"] == pytest.approx(
            rate / max(by_size.values()), rel=1e-12
        )
    assert res["figure1"]["device"] == "cpu" and res["paperb"]["device"] == "cpu"
    # the three Paper B implementations agree (float64 rounding)
    assert max(res["paperb"]["max_relative_difference"].values()) < 1e-12
    assert res["naive"]["max_relative_difference"] < 1e-10
    assert set(res["paperb"]["paperb_grad_seconds"]) == {"numpy_before", "numpy", "torch"}
    out = report.table(res)
    assert "trainer_fraction_of_matmul_peak" in out and "Paper B gradient" in out
    json.dumps(res)  # the --json file is plain JSON


def test_cli_rejects_unknown_parts_and_missing_cuda(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--only", "trainer,nonsense"])
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            bench.run({"population"}, device="cuda")


def test_cli_only_runs_the_parts_asked_for(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(
        bench,
        "bench_population",
        lambda: {"population_grad_speedup_vs_mc": 123.0, "closed_form_seconds": 1e-3},
    )
    called = []
    for name in (
        "bench_trainer",
        "bench_batched_vs_naive",
        "bench_figure1",
        "bench_paperb",
        "bench_notebooks",
        "peak_gemm",
    ):
        monkeypatch.setattr(bench, name, lambda *a, _n=name, **k: called.append(_n))
    assert (
        bench.main(["--only", "population", "--device", "cpu", "--json", str(tmp_path / "b.json")])
        == 0
    )
    assert called == []
    res = json.loads((tmp_path / "b.json").read_text())
    assert res["summary"] == {"population_grad_speedup_vs_mc": 123.0}
    assert res["environment"]["device"] == "cpu"
    assert "population_grad_speedup_vs_mc" in capsys.readouterr().out


def test_paper_profile_seconds_per_chapter_in_the_summary():
    res = {
        "notebooks": {
            "profile": "paper",
            "notebook_seconds": {"paper_b/stage1": 22.8, "paper_a/setting": None},
            "book_seconds": None,
            "peak_rss_mb": 492.0,
        }
    }
    s = report.summary(res)
    assert s["paper_profile_seconds_paper_b.stage1"] == 22.8
    assert s["paper_profile_seconds_paper_a.setting"] is None  # failed or stopped: no time
    assert "paper_profile_seconds_paper_b.stage1" in report.table(
        {**res, "summary": s, "environment": timing.environment("cpu")}
    )


def test_keep_passes_results_path_and_keeps_the_executed_notebook(monkeypatch, tmp_path):
    import subprocess

    seen = []

    def fake_run(cmd, **kw):
        seen.append(cmd)
        return subprocess.CompletedProcess(
            cmd, 0, stdout='{"seconds": 1.0, "error": null, "rss_mb": 10.0}\n', stderr=""
        )

    monkeypatch.setattr(subprocess, "run", fake_run)
    out = notebooks.bench_notebooks(
        "paper", build=False, chapters=["paper_b/stage1"], keep=tmp_path / "keep"
    )
    [cmd] = seen
    assert cmd[4] == str((tmp_path / "keep/paper_b/stage1.ipynb").resolve())
    assert cmd[6] == str((tmp_path / "keep/paper_b/stage1.json").resolve())
    assert out["notebook_seconds"] == {"paper_b/stage1": 1.0}
    # without keep: no results file is asked for
    seen.clear()
    notebooks.bench_notebooks("paper", build=False, chapters=["paper_b/stage1"])
    assert seen[0][6] == ""


@pytest.mark.slow  # 3.8 s: a fresh interpreter imports torch
def test_the_package_runs_as_a_module():
    """``python -m twolayer.tools.bench`` (the package's ``__main__``) reaches ``main``."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "twolayer.tools.bench", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--only" in proc.stdout and "python -m twolayer.tools.bench" in proc.stdout
