"""Faults, bad input and reproducibility (the reliability issue), each tested.

Reproducibility and bad parameters of every chapter are in test_notebooks.py; the CIFAR-10
loader's faults in test_images.py; the trainer's divergence in test_models_trainer.py. Here:
the network guard itself, numerical faults named by step and quantity, and the sweep's faults
(a worker killed with SIGKILL mid-run, a full disk, a failing configuration) after which a
resumed sweep gives exactly the table of a clean sweep, and the Dask cluster on loopback.
"""
from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
import torch

from twolayer.paper_a import data, models, trainer
from twolayer import sweep
from conftest import GUARDS, NETWORK_LOG


def test_network_guard_blocks_and_logs(tmp_path):
    log = tmp_path / "net.log"
    code = ("import socket\n"
            "try:\n    socket.create_connection(('192.0.2.1', 9), timeout=1)\n"
            "except OSError as e:\n    print('blocked', e.errno)\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(GUARDS), "TWOLAYER_NETWORK_LOG": str(log)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert "blocked" in out.stdout, out.stdout + out.stderr
    assert "192.0.2.1" in log.read_text()
    # loopback stays allowed (Dask and Jupyter kernels talk over 127.0.0.1)
    code = ("import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
            "c = socket.create_connection(s.getsockname()); print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "ok", out.stderr


def test_session_guard_is_active():
    import socket

    with pytest.raises(OSError, match="network access blocked"):
        socket.create_connection(("192.0.2.1", 9), timeout=1)
    NETWORK_LOG.unlink()  # this deliberate attempt is not a failure of the session


def _xor_like(seed=0):
    # two copies of each point with opposite labels: no network can fit it, so a huge step
    # cannot be rescued by separating the data after one step
    ds = data.nearly_orthogonal(n=4, d=20, seed=seed)
    X = torch.as_tensor(ds.X).repeat(2, 1)
    y = torch.as_tensor(ds.y).repeat(2) * torch.tensor([1.0] * 4 + [-1.0] * 4, dtype=torch.float64)
    return X, y


def test_huge_step_stops_with_divergence_message():
    X, y = _xor_like()
    net = models.LeakyNetwork(2, 2, "leaky_relu", 0.5)
    W0 = net.init(20, 1.0, seed=0)
    with pytest.raises(trainer.DivergenceError) as err:
        trainer.gradient_descent(net, W0, X, y, "exp", lr=1e6, steps=200)
    msg = str(err.value)
    assert "step" in msg and err.value.step >= 1 and err.value.quantity.startswith(("loss", "gradient", "weights"))
    assert f"step {err.value.step}" in msg and err.value.quantity.split()[0] in msg


def test_injected_nan_stops_at_step_zero():
    X, y = _xor_like()
    net = models.LeakyNetwork(2, 2, "leaky_relu", 0.5)
    W0 = net.init(20, 1.0, seed=0, batch=3)
    W0[1, 0, 0] = float("nan")
    with pytest.raises(trainer.DivergenceError) as err:
        trainer.gradient_descent(net, W0, X, y, "logistic", lr=0.1, steps=10)
    assert err.value.step == 0 and err.value.config == 1 and err.value.quantity == "loss"
    assert "configuration 1" in str(err.value)


@pytest.fixture()
def cluster_env(monkeypatch, tmp_path):
    """A fresh local cluster per test, started after the test has set its environment."""
    from dask.distributed import Client, LocalCluster

    made = []

    def start():
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
        made.append((client, cluster))
        return client

    yield start
    for client, cluster in made:
        client.close()
        cluster.close()


def _clean_table(tiny, grid, out):
    sweep.run_sweep(tiny, grid, out, n_workers=2)
    return sweep.read_table(out)


def test_worker_killed_midrun_then_resumed(tiny_notebook, tmp_path, cluster_env):
    grid = {"x": [1, 2, 3, 4]}
    marker = tmp_path / "killed.json"
    out = tmp_path / "s"
    client = cluster_env()
    rep = sweep.run_sweep(tiny_notebook, grid, out, fixed={"kill_marker": str(marker)},
                          client=client)
    assert marker.exists(), "the fault was not injected"
    # Dask reschedules the task of a dead worker, so the sweep still completes every run
    assert len(rep.done) + len(rep.failed) == 4
    for f in rep.failed:
        assert f["error"]
    rep2 = sweep.run_sweep(tiny_notebook, grid, out, fixed={"kill_marker": str(marker)},
                           client=client)
    assert rep2.skipped == len(rep.done) and not rep2.failed
    clean = _clean_table(tiny_notebook, grid, tmp_path / "clean-k")
    got = sweep.read_table(out).drop(columns=["kill_marker"])
    # run ids hash kill_marker too: compare everything but the id and that column
    cols = [c for c in clean.columns if c != "run_id"]
    pd.testing.assert_frame_equal(got.sort_values("x")[cols].reset_index(drop=True),
                                  clean.sort_values("x")[cols].reset_index(drop=True))


def test_disk_full_and_failing_configuration_then_resumed(tiny_notebook, tmp_path, monkeypatch,
                                                          cluster_env):
    grid = {"x": [1, 2, 3], "fail": [False]}
    monkeypatch.setenv("TWOLAYER_ENOSPC_ONCE", str(tmp_path / "enospc.marker"))
    out = tmp_path / "s"
    client = cluster_env()  # workers and their kernels inherit the fault injection
    rep = sweep.run_sweep(tiny_notebook, {"x": [1, 2, 3], "fail": [False, True]}, out,
                          client=client)
    errors = [f["error"] for f in rep.failed]
    assert sum("No space left on device" in e for e in errors) == 1, errors
    assert sum("not_asked_to_fail" in e for e in errors) == 3, errors
    assert len(rep.done) == 2, errors
    table = rep.table
    assert (table.status == "failed").sum() == 4 and (table.status == "done").sum() == 2
    # the resumed sweep redoes only the unfinished run of the disk-full failure
    rep2 = sweep.run_sweep(tiny_notebook, grid, out, client=client)
    assert rep2.skipped == 2 and len(rep2.done) == 1 and not rep2.failed
    monkeypatch.delenv("TWOLAYER_ENOSPC_ONCE")
    pd.testing.assert_frame_equal(rep2.table, _clean_table(tiny_notebook, grid, tmp_path / "clean"))


def test_sweep_table_write_on_full_disk_keeps_previous_table(tiny_notebook, tmp_path, monkeypatch):
    out = tmp_path / "s"
    grid = {"x": [1, 2]}
    sweep.run_sweep(tiny_notebook, grid, out, n_workers=1)
    before = (out / "table.parquet").read_bytes()
    import errno

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device (simulated)")

    monkeypatch.setattr(sweep, "atomic_write_bytes", full)
    with pytest.raises(OSError, match="No space left"):
        sweep.gather(out)
    assert (out / "table.parquet").read_bytes() == before
    assert not list(out.glob(".*.tmp"))


def test_local_cluster_listens_on_loopback():
    client, cluster = sweep._local_client(1)
    try:
        assert client.scheduler.address.startswith("tcp://127.0.0.1:")
        assert all(a.startswith("tcp://127.0.0.1:") for a in client.scheduler_info()["workers"])
        assert "127.0.0.1" in (client.dashboard_link or "127.0.0.1")
    finally:
        client.close()
        cluster.close()
