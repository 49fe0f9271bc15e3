"""The papermill sweep runner on the shared local Dask cluster: a grid with failing runs,
resumption, corrupt results, and a sweep whose whole process tree is killed half-way.

The tiny notebook's metric is known (``x^2 + seed``), so tables are compared with known values
instead of a second, clean sweep. (In-process tests of the same logic: test_sweep_unit.py.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from helpers import square
from twolayer.tools import sweep


def _known(table, xs, seed=0):
    done = table[table.status == "done"].sort_values("x")
    assert done["x"].tolist() == sorted(xs)
    assert done["metrics.square"].tolist() == [square(x, seed) for x in sorted(xs)]
    assert done.checks_passed.all()


def test_sweep_runs_reports_failures_and_resumes(tiny_notebook, tmp_path, dask_client):
    grid = {"x": [1, 2, 3], "fail": [False, True]}
    rep = sweep.run_sweep(tiny_notebook, grid, tmp_path / "t", client=dask_client)
    assert rep.total == 6 and rep.skipped == 0
    assert len(rep.done) == 3 and len(rep.failed) == 3
    for f in rep.failed:
        assert f["params"]["fail"] is True
        assert f["error"] == (
            f"CheckFailed: sanity check 'not_asked_to_fail' failed: x={f['params']['x']}"
        ), f["error"]
        assert Path(f["notebook"]).exists(), "the failed run's notebook is kept for inspection"
    table = rep.table
    assert len(table) == 6
    assert (table.status == "failed").tolist() == table.fail.tolist()
    _known(table, [1, 2, 3])
    assert (tmp_path / "t" / "table.parquet").exists() and (tmp_path / "t" / "table.csv").exists()
    # resuming skips what is done and retries only the failures
    rep2 = sweep.run_sweep(tiny_notebook, grid, tmp_path / "t", client=dask_client)
    assert rep2.skipped == 3 and len(rep2.failed) == 3 and not rep2.done
    assert {f["run_id"] for f in rep2.failed} == {f["run_id"] for f in rep.failed}
    pd.testing.assert_frame_equal(rep2.table, table)


def test_corrupt_or_foreign_results_are_redone(tiny_notebook, tmp_path, dask_client):
    out = tmp_path / "s"
    grid = {"x": [1, 2]}
    first = sweep.run_sweep(tiny_notebook, grid, out, client=dask_client).table
    r1, r2 = (out / "runs" / sweep.run_id({"x": x}) / "results.json" for x in (1, 2))
    r1.write_text(r1.read_text()[:20])  # truncated
    r2.write_text(r2.read_text().replace('"x": 2', '"x": 7'))  # another run's parameters
    assert sweep.gather(out).status.tolist() == ["missing", "missing"]
    rep = sweep.run_sweep(tiny_notebook, grid, out, client=dask_client)
    assert rep.skipped == 0 and len(rep.done) == 2
    _known(rep.table, [1, 2])
    pd.testing.assert_frame_equal(rep.table, first)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (dead, not yet reaped) counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _kernel_pids(files) -> list[int]:
    """The pids in the files; a file still empty (its kernel between creating and writing it)
    is re-read for up to 10 s: a kernel that died in between has nothing to wait for."""
    pids, files = [], list(files)
    deadline = time.monotonic() + 10
    while files:
        text = files[0].read_text().strip()
        if text or time.monotonic() > deadline:
            pids += [int(text)] if text else []
            files.pop(0)
        else:
            time.sleep(0.05)
    return pids


def test_killed_sweep_resumes_to_the_known_table(tiny_notebook, tmp_path):
    """The CLI's whole process group (CLI, scheduler, workers) is SIGKILLed once the first run
    has finished. Kernels run in sessions of their own: the test waits (event-driven, by pid)
    until every kernel has exited -- ipykernel exits when its parent dies -- and only then
    counts the finished runs, which a resumed sweep must skip, exactly."""
    out = tmp_path / "killed"
    started = tmp_path / "started.json"
    grid = json.dumps({"x": [1, 2, 3, 4, 5, 6]})
    args = [
        sys.executable,
        "-m",
        "twolayer.tools.sweep",
        str(tiny_notebook),
        "--grid",
        grid,
        "--out",
        str(out),
        "--workers",
        "2",
        "--no-progress",
        "-p",
        "sleep=1.0",
        "-p",
        f"started={started}",
    ]
    proc = subprocess.Popen(
        args, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.monotonic() + 240  # a margin no loaded machine reaches: one run is seconds
    while not list(out.glob("runs/*/results.json")):
        assert proc.poll() is None, "the sweep ended before the kill: " + proc.stdout.read()
        assert time.monotonic() < deadline, "no run finished in 240 s"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    # every kernel that started wrote its pid; wait until each has exited
    pids = _kernel_pids(tmp_path.glob("started.json.*"))
    deadline = time.monotonic() + 120
    while any(_pid_alive(pid) for pid in pids):
        assert time.monotonic() < deadline, "kernels outlived their killed parent by 120 s"
        time.sleep(0.1)
    finished = {p.parent.name for p in out.glob("runs/*/results.json")}
    assert 1 <= len(finished) < 6, "the kill must land half-way through the sweep"
    res = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (
        f"6 runs, {len(finished)} already done, {6 - len(finished)} executed now, 0 failed"
        in res.stdout
    ), res.stdout
    table = sweep.read_table(out)
    assert (table.status == "done").all()
    _known(table, [1, 2, 3, 4, 5, 6])
