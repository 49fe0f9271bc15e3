"""The sweep's faults, on the shared local Dask cluster: a worker killed with SIGKILL mid-run, a
full disk, a failing configuration, a table write on a full disk; and the local cluster on
loopback. After each fault the table holds the known values (the tiny notebook's metric is
``x^2 + seed``). (The network guard: test_guard.py; the trainer's divergence:
tests/paper_a/test_trainer_faults.py; bad parameters of every chapter: tests/notebooks.)
"""

from __future__ import annotations

import errno
import os

import pandas as pd
import pytest

from helpers import square
from twolayer.tools import sweep


def _known(table, xs):
    done = table[table.status == "done"].sort_values("x")
    assert done["x"].tolist() == sorted(xs)
    assert done["metrics.square"].tolist() == [square(x) for x in sorted(xs)]


def test_worker_killed_midrun_is_rescheduled(tiny_notebook, tmp_path, dask_client):
    """The first kernel to start SIGKILLs its Dask worker (and exits): the nanny restarts the
    worker, the scheduler reschedules the run, and every run completes."""
    grid = {"x": [1, 2, 3, 4]}
    marker = tmp_path / "killed.json"
    out = tmp_path / "s"
    workers_before = set(dask_client.scheduler_info()["workers"])
    rep = sweep.run_sweep(
        tiny_notebook, grid, out, fixed={"kill_marker": str(marker)}, client=dask_client
    )
    assert marker.exists(), "the fault was not injected"
    assert set(dask_client.scheduler_info()["workers"]) != workers_before, "no worker died"
    assert rep.failed == [] and len(rep.done) == 4, rep.summary()
    _known(rep.table, [1, 2, 3, 4])
    rep2 = sweep.run_sweep(
        tiny_notebook, grid, out, fixed={"kill_marker": str(marker)}, client=dask_client
    )
    assert rep2.skipped == 4 and not rep2.done and not rep2.failed


@pytest.fixture
def enospc_on_workers(dask_client, tmp_path):
    """Kernels started by the cluster's workers from now on see TWOLAYER_ENOSPC_ONCE: the first
    ``results.json`` any of them writes fails with ENOSPC (tests/guards/sitecustomize.py)."""
    marker = str(tmp_path / "enospc.marker")
    # lambdas travel by value (cloudpickle) and act on each worker's own os.environ
    dask_client.run(lambda: os.environ.__setitem__("TWOLAYER_ENOSPC_ONCE", marker))
    yield marker
    dask_client.run(lambda: os.environ.pop("TWOLAYER_ENOSPC_ONCE", None))


def test_disk_full_and_failing_configuration_then_resumed(
    tiny_notebook, tmp_path, dask_client, enospc_on_workers
):
    out = tmp_path / "s"
    rep = sweep.run_sweep(
        tiny_notebook, {"x": [1, 2, 3], "fail": [False, True]}, out, client=dask_client
    )
    errors = [f["error"] for f in rep.failed]
    assert sum("No space left on device" in e for e in errors) == 1, errors
    assert sum("not_asked_to_fail" in e for e in errors) == 3, errors
    assert len(rep.done) == 2 and len(rep.failed) == 4, errors
    table = rep.table
    assert (table.status == "failed").sum() == 4 and (table.status == "done").sum() == 2
    full = next(f for f in rep.failed if "No space left" in f["error"])["params"]
    assert full["fail"] is False
    assert not (out / "runs" / sweep.run_id(full) / "results.json").exists()
    # the resumed sweep (over the passing configurations) redoes only the disk-full run
    rep2 = sweep.run_sweep(
        tiny_notebook, {"x": [1, 2, 3], "fail": [False]}, out, client=dask_client
    )
    assert rep2.skipped == 2 and len(rep2.done) == 1 and not rep2.failed
    assert rep2.done == [sweep.run_id(full)]
    assert (rep2.table.status == "done").all()
    _known(rep2.table, [1, 2, 3])


def test_sweep_table_write_on_full_disk_keeps_previous_table(
    tiny_notebook, tmp_path, monkeypatch, dask_client
):
    out = tmp_path / "s"
    sweep.run_sweep(tiny_notebook, {"x": [1, 2]}, out, client=dask_client)
    before = (out / "table.parquet").read_bytes()

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device (simulated)")

    monkeypatch.setattr(sweep, "atomic_write_bytes", full)
    with pytest.raises(OSError, match="No space left"):
        sweep.gather(out)
    assert (out / "table.parquet").read_bytes() == before
    assert not list(out.glob(".*.tmp"))
    _known(pd.read_parquet(out / "table.parquet"), [1, 2])


@pytest.mark.sweep
def test_local_cluster_listens_on_loopback():
    client, cluster = sweep._local_client(1)
    try:
        assert client.scheduler.address.startswith("tcp://127.0.0.1:")
        workers = client.scheduler_info()["workers"]
        assert workers and all(a.startswith("tcp://127.0.0.1:") for a in workers)
        # the dashboard exists and listens on loopback only
        assert client.dashboard_link and client.dashboard_link.startswith("http://127.0.0.1:")
        socks = getattr(cluster.scheduler.http_server, "_sockets", {})
        assert socks and all(s.getsockname()[0] == "127.0.0.1" for s in socks.values())
    finally:
        client.close()
        cluster.close()
