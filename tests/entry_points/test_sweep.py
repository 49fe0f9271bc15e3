"""The papermill sweep runner on a local Dask cluster: grid, resumption, faults, the table."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from twolayer import sweep
from conftest import ROOT


@pytest.fixture(scope="module")
def tiny(tiny_notebook):
    return tiny_notebook

@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_expand_grid_and_run_id():
    runs = sweep.expand_grid({"a": [1, 2], "b": ["u", "v"]}, {"c": 0})
    assert runs == [{"c": 0, "a": 1, "b": "u"}, {"c": 0, "a": 1, "b": "v"},
                    {"c": 0, "a": 2, "b": "u"}, {"c": 0, "a": 2, "b": "v"}]
    assert sweep.run_id({"a": 1, "b": 2}) == sweep.run_id({"b": 2, "a": 1})
    assert sweep.run_id({"a": 1}) != sweep.run_id({"a": 2})
    for bad in ({}, {"a": 3}, {"a": []}, {"a": "xy"}):
        with pytest.raises(sweep.SweepError):
            sweep.expand_grid(bad)
    with pytest.raises(sweep.SweepError, match="both swept and fixed"):
        sweep.expand_grid({"a": [1]}, {"a": 2})
    with pytest.raises(sweep.SweepError, match="results_path"):
        sweep.expand_grid({"results_path": ["x.json"]})


def test_sweep_runs_reports_failures_and_resumes(tiny, tmp_path, client):
    grid = {"x": [1, 2, 3], "fail": [False, True]}
    rep = sweep.run_sweep(tiny, {"x": [1, 2, 3]}, tmp_path / "s", fixed={"fail": False},
                          client=client)
    assert rep.total == 3 and len(rep.done) == 3 and not rep.failed and rep.skipped == 0
    # a grid over two parameters with failing runs: failures are reported, the rest finishes
    rep = sweep.run_sweep(tiny, grid, tmp_path / "t", client=client)
    assert len(rep.done) == 3 and len(rep.failed) == 3
    for f in rep.failed:
        assert f["params"]["fail"] is True
        assert "CheckFailed" in f["error"] and "not_asked_to_fail" in f["error"]
        assert Path(f["notebook"]).exists(), "the failed run's notebook is kept for inspection"
    table = rep.table
    assert len(table) == 6 and set(table.status) == {"done", "failed"}
    done = table[table.status == "done"].sort_values("x")
    assert done["metrics.square"].tolist() == [1, 4, 9]
    assert (tmp_path / "t" / "table.parquet").exists() and (tmp_path / "t" / "table.csv").exists()
    # resuming skips what is done and retries only the failures
    rep2 = sweep.run_sweep(tiny, grid, tmp_path / "t", client=client)
    assert rep2.skipped == 3 and len(rep2.failed) == 3 and not rep2.done


def test_corrupt_or_foreign_results_are_redone(tiny, tmp_path, client):
    out = tmp_path / "s"
    grid = {"x": [1, 2]}
    sweep.run_sweep(tiny, grid, out, client=client)
    clean = sweep.read_table(out)
    r1, r2 = (out / "runs" / sweep.run_id({"x": x}) / "results.json" for x in (1, 2))
    r1.write_text(r1.read_text()[:20])                     # truncated
    r2.write_text(r2.read_text().replace('"x": 2', '"x": 7'))  # another run's parameters
    rep = sweep.run_sweep(tiny, grid, out, client=client)
    assert rep.skipped == 0 and len(rep.done) == 2
    pd.testing.assert_frame_equal(rep.table, clean)


def test_second_sweep_on_same_folder_is_refused(tiny, tmp_path):
    out = tmp_path / "s"
    with sweep._folder_lock(out):
        with pytest.raises(sweep.SweepError, match="another sweep is running"):
            sweep.run_sweep(tiny, {"x": [1]}, out)


def _cli(args, **kw):
    return subprocess.Popen([sys.executable, "-m", "twolayer.sweep", *args], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def test_killed_sweep_resumes_to_the_clean_table(tiny, tmp_path):
    grid = json.dumps({"x": [1, 2, 3, 4, 5, 6], "sleep": [3.0]})
    out = tmp_path / "killed"
    proc = _cli([str(tiny), "--grid", grid, "--out", str(out), "--workers", "2", "--no-progress"])
    # kill the whole process tree (CLI, scheduler, workers, kernels) once the first run is done
    deadline = time.time() + 120
    while time.time() < deadline and not list(out.glob("runs/*/results.json")):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # Jupyter kernels run in their own sessions: one killed mid-cell may still finish its run
    # (a complete results.json, which rightly counts as done) before it notices its parent died.
    time.sleep(6)
    finished = {p.parent.name for p in out.glob("runs/*/results.json")}
    assert 1 <= len(finished) < 6, "the kill must land half-way through the sweep"
    res = subprocess.run([sys.executable, "-m", "twolayer.sweep", str(tiny), "--grid", grid,
                          "--out", str(out), "--workers", "2", "--no-progress"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    skipped = int(res.stdout.split("runs, ")[1].split(" already done")[0])
    assert skipped == len(finished), res.stdout
    clean = tmp_path / "clean"
    res = subprocess.run([sys.executable, "-m", "twolayer.sweep", str(tiny), "--grid", grid,
                          "--out", str(clean), "--workers", "2", "--no-progress"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    pd.testing.assert_frame_equal(sweep.read_table(out), sweep.read_table(clean))


def test_cli_rejects_bad_grid(tiny, tmp_path):
    res = subprocess.run([sys.executable, "-m", "twolayer.sweep", str(tiny), "--grid", "{not json",
                          "--out", str(tmp_path)], capture_output=True, text=True)
    assert res.returncode == 2 and "--grid is not valid JSON" in res.stderr


def test_sweep_of_a_chapter_over_two_parameters(tmp_path, client):
    nb = ROOT / "notebooks" / "paper_a" / "setting.ipynb"
    rep = sweep.run_sweep(nb, {"seed": [0, 1], "gamma": [0.9]}, tmp_path / "s",
                          fixed={"profile": "smoke"}, client=client)
    assert not rep.failed and len(rep.done) == 2
    t = rep.table
    assert set(t.seed) == {0, 1} and (t.status == "done").all() and t.checks_passed.all()
    assert "metrics.d50_spread" in t.columns
