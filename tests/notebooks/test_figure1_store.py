"""The Figure 1 page with a run store: a second run with the same store computes nothing new
and gives the same figure data and metrics."""
from __future__ import annotations

import json

import papermill as pm
import pytest

from conftest import ROOT

NB = ROOT / "notebooks" / "paper_a" / "figure1.ipynb"


def _run(tmp_path, name, **params):
    pm.execute_notebook(str(NB), str(tmp_path / f"{name}.ipynb"), parameters=params,
                        cwd=str(NB.parent), progress_bar=False, kernel_name="python3")
    return json.loads((tmp_path / f"{name}.json").read_text())


def test_second_run_with_store_computes_nothing(tmp_path):
    store = tmp_path / "store"
    common = dict(profile="smoke", store_dir=str(store))
    # fill part of the store first (one seed), then the page with two seeds computes the rest
    part = _run(tmp_path, "part", num_seeds=1, results_path=str(tmp_path / "part.json"), **common)
    total_one = part["metrics"]["configs_total"]
    assert part["metrics"]["configs_computed"] == total_one
    first = _run(tmp_path, "first", num_seeds=2, results_path=str(tmp_path / "first.json"), **common)
    assert first["metrics"]["configs_computed"] == first["metrics"]["configs_total"] - total_one
    second = _run(tmp_path, "second", num_seeds=2, results_path=str(tmp_path / "second.json"), **common)
    assert second["metrics"]["configs_computed"] == 0
    assert all(first["checks"].values()) and second["checks"] == first["checks"]
    strip = lambda m: {k: v for k, v in m.items() if k != "configs_computed"}  # noqa: E731
    assert strip(second["metrics"]) == strip(first["metrics"])
    # and the same numbers as the page computed in memory (no store)
    memory = _run(tmp_path, "memory", profile="smoke", num_seeds=2,
                  results_path=str(tmp_path / "memory.json"))
    assert strip(memory["metrics"]) == strip(first["metrics"])
    assert memory["metrics"]["configs_computed"] == memory["metrics"]["configs_total"]
    assert len(list(store.glob("*.json"))) == first["metrics"]["configs_total"]


def test_bad_store_dir_is_refused(tmp_path):
    import pytest

    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(tmp_path, "bad", profile="smoke", store_dir=3)
    assert err.value.ename == "ParameterError" and "'store_dir'" in err.value.evalue


def test_figure1_page_reads_a_sweeps_table_and_store(tmp_path):
    """Done-when of the sweep issue: a sweep over two parameters fills the store; the page reads
    the sweep's table (all runs passed) and computes nothing that the sweep computed."""
    import papermill as pm

    from twolayer import sweep

    nb = ROOT / "notebooks" / "paper_a" / "figure1.ipynb"
    out = tmp_path / "fig1"
    rep = sweep.run_sweep(nb, {"seed": [0, 1], "left_lr": [0.01]}, out, n_workers=2,
                          fixed={"profile": "smoke", "num_seeds": 1, "store_dir": str(out / "store")})
    assert not rep.failed and len(rep.done) == 2
    res = tmp_path / "page.json"
    pm.execute_notebook(str(nb), str(tmp_path / "page.ipynb"), cwd=str(nb.parent), progress_bar=False,
                        parameters={"profile": "smoke", "num_seeds": 2, "sweep_dir": str(out),
                                    "results_path": str(res)})
    r = json.loads(res.read_text())
    assert r["metrics"]["configs_computed"] == 0
    assert r["metrics"]["sweep_runs"] == 2 and r["checks"]["sweep_runs_all_passed"] is True
    # no sweep there: one clear error
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(nb), str(tmp_path / "bad.ipynb"), cwd=str(nb.parent), progress_bar=False,
                            parameters={"profile": "smoke", "sweep_dir": str(tmp_path / "nothing")})
    assert "no sweep table" in err.value.evalue
