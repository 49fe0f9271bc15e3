"""The Figure 1 page with a sweep (done-when of the sweep issue): a sweep of the chapter over
two parameters fills a run store; the page then reads the sweep's table (every run passed) and
computes nothing the sweep computed, and gives the same numbers as the page computing
everything in memory. (The store itself: tests/core/test_store.py.)"""

from __future__ import annotations

import pytest

from helpers import ROOT, run_chapter
from twolayer.tools import sweep

NB = ROOT / "notebooks" / "paper_a" / "figure1.ipynb"
RUN_ONLY = ("configs_computed", "sweep_runs")  # how the page got its numbers, not the numbers


@pytest.mark.sweep
def test_figure1_page_reads_a_sweeps_table_and_store(tmp_path, dask_client):
    out = tmp_path / "fig1"
    store = out / "store"
    rep = sweep.run_sweep(
        NB,
        {"seed": [0, 1], "left_lr": [0.01]},
        out,
        fixed={"profile": "smoke", "num_seeds": 1, "store_dir": str(store)},
        client=dask_client,
    )
    assert not rep.failed and len(rep.done) == 2, rep.summary()
    t = rep.table
    assert set(t.seed) == {0, 1} and set(t.left_lr) == {0.01}
    assert (t.status == "done").all() and t.checks_passed.all()
    stored = len(list(store.glob("*.json")))
    assert stored == sum(t["metrics.configs_computed"])
    # the page at one of the swept points (seed 1) takes every configuration from the store
    page = run_chapter(
        NB, tmp_path, name="page", seed=1, num_seeds=1, sweep_dir=str(out), left_lr=0.01
    )
    m = page["metrics"]
    assert m["configs_computed"] == 0, "the page recomputed what the sweep stored"
    assert m["sweep_runs"] == 2 and page["checks"]["sweep_runs_all_passed"] is True
    assert len(list(store.glob("*.json"))) == stored
    memory = run_chapter(NB, tmp_path, name="memory", seed=1, num_seeds=1, left_lr=0.01)
    assert memory["metrics"]["configs_computed"] == memory["metrics"]["configs_total"] > 0
    same = {k: v for k, v in memory["metrics"].items() if k not in RUN_ONLY}
    assert {k: v for k, v in m.items() if k in same} == same
