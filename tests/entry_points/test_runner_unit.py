"""The notebook runner in-process (no kernel): ``execute``'s one papermill call (the notebook's
folder, its paired ``.ipynb``, the results path, the cell timeout, a warm kernel), ``is_done``
on fabricated run folders, and ``execute_run`` with papermill replaced by a fake that writes
what a notebook writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers import fake_papermill, results_record, write_results
from twolayer.tools import runner

# --- execute: the one papermill call ----------------------------------------------------------


def _spy(monkeypatch):
    import papermill as pm

    seen = []
    monkeypatch.setattr(
        pm,
        "execute_notebook",
        lambda nb, out, parameters, **kw: seen.append((nb, out, parameters, kw)),
    )
    return seen


def test_execute_runs_the_paired_notebook_in_its_folder(tmp_path, monkeypatch):
    seen = _spy(monkeypatch)
    page = tmp_path / "notebooks" / "paper_x" / "page.md"
    runner.execute(page, tmp_path / "out.ipynb", {"seed": 3}, results_path=tmp_path / "r.json")
    [(nb, out, parameters, kw)] = seen
    assert nb == str(page.with_suffix(".ipynb")) and out == str(tmp_path / "out.ipynb")
    assert parameters == {"seed": 3, "results_path": str(tmp_path / "r.json")}
    assert kw["cwd"] == str(page.parent) and kw["kernel_name"] == "python3"
    assert kw["execution_timeout"] is None and "km" not in kw
    assert kw["progress_bar"] is False


def test_execute_passes_the_timeout_the_kernel_and_the_folder_asked_for(tmp_path, monkeypatch):
    seen = _spy(monkeypatch)
    km = object()
    asked = {"seed": 1, "results_path": "kept.json"}
    runner.execute(
        tmp_path / "page.ipynb",
        tmp_path / "out.ipynb",
        asked,
        kernel_name="other",
        cwd=tmp_path / "work",
        cell_timeout=240,
        kernel_manager=km,
    )
    [(_, _, parameters, kw)] = seen
    assert parameters == asked and asked == {"seed": 1, "results_path": "kept.json"}
    assert kw["cwd"] == str(tmp_path / "work") and kw["kernel_name"] == "other"
    assert kw["execution_timeout"] == 240 and kw["km"] is km


# --- is_done ----------------------------------------------------------------------------------

RECORDED = {
    "seed": 3,
    "profile": "smoke",
    "results_path": "/x/results.json",
    "num_eps": 7,
    "gammas": [0.5, 0.9],
}


@pytest.mark.parametrize(
    "asked",
    [
        {"seed": 3},
        {"seed": 3, "profile": "smoke", "gammas": [0.5, 0.9]},
        {"seed": np.int64(3), "gammas": (0.5, 0.9)},  # NumPy and tuples as JSON sees them
        {"seed": 3, "num_eps": None},  # None: "the profile's value"
        {"seed": 3, "num_eps": None, "profile": None},
    ],
    ids=["one", "several", "numpy-tuple", "none", "two-nones"],
)
def test_is_done_when_the_results_record_the_asked_parameters(tmp_path, asked):
    assert runner.is_done(write_results(tmp_path / "r", results_record(RECORDED)), asked)


@pytest.mark.parametrize(
    "asked",
    [
        {"seed": 4},  # another value
        {"seed": 3, "num_eps": 8},
        {"seed": 3, "gammas": [0.9, 0.5]},
        {"seed": 3, "width": 10},  # a parameter the run never recorded
        {"seed": 3, "width": None},  # ... even asked as None
        {"seed": "3"},  # a string is not the integer
    ],
    ids=["other-value", "other-num_eps", "list-order", "unrecorded", "unrecorded-none", "type"],
)
def test_is_not_done_for_other_parameters(tmp_path, asked):
    assert not runner.is_done(write_results(tmp_path / "r", results_record(RECORDED)), asked)


@pytest.mark.parametrize(
    "content",
    [
        None,  # no results.json
        "",  # empty
        json.dumps(results_record(RECORDED))[:40],  # truncated
        "[1, 2]",  # not an object
        json.dumps({"params": RECORDED, "metrics": {}}),  # no checks
        json.dumps({"metrics": {}, "checks": {}}),  # no params
        json.dumps({"params": [3], "metrics": {}, "checks": {}}),  # params not a mapping
    ],
    ids=["missing", "empty", "truncated", "list", "no-checks", "no-params", "params-list"],
)
def test_is_not_done_for_incomplete_results(tmp_path, content):
    rd = tmp_path / "r"
    rd.mkdir()
    if content is not None:
        (rd / runner.RESULTS).write_text(content)
    assert not runner.is_done(rd, {"seed": 3})


def test_results_with_only_the_three_required_keys_are_done(tmp_path):
    rd = write_results(tmp_path / "r", {"params": {"x": 1}, "metrics": {}, "checks": {}})
    assert runner.is_done(rd, {"x": 1})


# --- execute_run ----------------------------------------------------------------------------


def test_execute_run_with_a_none_parameter_is_done(tmp_path, monkeypatch):
    """A past bug: `-p num_eps=null` made every run FAILED ("finished without writing
    a valid results.json") although each wrote its results."""
    import papermill as pm

    fake, _ = fake_papermill()
    monkeypatch.setattr(pm, "execute_notebook", fake)
    res = runner.execute_run("nb.ipynb", {"x": 2, "num_eps": None}, str(tmp_path / "r"))
    assert res["status"] == "done" and res["error"] is None, res
    assert (tmp_path / "r" / runner.EXECUTED).exists()
    assert not (tmp_path / "r" / runner.ERROR).exists()


def test_execute_run_failure_is_recorded_and_leaves_no_results(tmp_path, monkeypatch):
    import papermill as pm

    fake, _ = fake_papermill(fail=lambda p: True)
    monkeypatch.setattr(pm, "execute_notebook", fake)
    rd = tmp_path / "r"
    write_results(rd, results_record({"x": 2}))  # a stale result from an earlier run
    res = runner.execute_run("nb.ipynb", {"x": 2}, str(rd))
    assert res["status"] == "failed" and res["error"] == "CheckFailed: sanity check 'c' failed"
    assert not (rd / runner.RESULTS).exists()
    err = json.loads((rd / runner.ERROR).read_text())
    assert err["params"] == {"x": 2} and err["error"] == res["error"]


def test_execute_run_without_results_is_a_failure(tmp_path, monkeypatch):
    import papermill as pm

    monkeypatch.setattr(
        pm, "execute_notebook", lambda nb, out, parameters, **kw: Path(out).write_text("{}")
    )
    res = runner.execute_run("nb.ipynb", {"x": 2}, str(tmp_path / "r"))
    assert res["status"] == "failed" and "without writing a valid results.json" in res["error"]
