"""The sweep's resume logic and command line, in-process (no kernel, no cluster): ``gather``'s
statuses and table, ``_flatten``, ``run_sweep`` with papermill and the cluster replaced by
fakes that write what a notebook writes (each run by the notebook runner,
tests/entry_points/test_runner_unit.py), and ``main``'s ``--param`` parsing, errors and exit
status."""

from __future__ import annotations

import itertools
import json
import math
import socket
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import fake_papermill, results_record, write_results
from twolayer.tools import runner, sweep

# --- _flatten and gather ----------------------------------------------------------------------


def test_flatten_dotted_names_and_lists_as_json():
    out = {}
    sweep._flatten(
        "", {"a": 1, "b": {"c": 2.5, "d": {"e": "x"}}, "f": [1, [2, 3]], "g": None, "h": {}}, out
    )
    assert out == {"a": 1, "b.c": 2.5, "b.d.e": "x", "f": "[1, [2, 3]]", "g": None}
    prefixed = {}
    sweep._flatten("metrics", {"k": True}, prefixed)
    assert prefixed == {"metrics.k": True}


def test_gather_statuses_metrics_and_files(tmp_path):
    runs = [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4, "n": None}, {"x": 5}]
    rd = {sweep.run_id(p): tmp_path / "runs" / sweep.run_id(p) for p in runs}
    ids = [sweep.run_id(p) for p in runs]
    write_results(
        rd[ids[0]],
        results_record(
            {"x": 1}, {"loss": 0.5, "nested": {"a": 2}, "curve": [1, 2]}, {"c1": True, "c2": True}
        ),
    )
    (rd[ids[1]]).mkdir(parents=True)
    (rd[ids[1]] / runner.ERROR).write_text(json.dumps({"error": "CheckFailed"}))
    # ids[2]: never ran -> missing
    write_results(
        rd[ids[3]], results_record({"x": 4, "n": 9}, {"loss": 0.25}, {"c1": True, "thm": None})
    )
    # one check passed and one failed: all must pass (``any`` would call it passed)
    write_results(rd[ids[4]], results_record({"x": 5}, {"loss": 0.1}, {"c0": True, "c1": False}))
    (tmp_path / "sweep.json").write_text(json.dumps({"runs": runs}))
    table = sweep.gather(tmp_path)  # runs read from sweep.json
    assert list(table.run_id) == sorted(ids)
    row = table.set_index("x")
    assert row.status.to_dict() == {1: "done", 2: "failed", 3: "missing", 4: "done", 5: "done"}
    assert row.loc[1, "metrics.loss"] == 0.5 and row.loc[1, "metrics.nested.a"] == 2
    assert row.loc[1, "metrics.curve"] == "[1, 2]"
    assert pd.isna(row.loc[2, "metrics.loss"]) and pd.isna(row.loc[3, "checks_passed"])
    # not applicable (null) is no failure; a false check is
    assert row.loc[1, "checks_passed"] and row.loc[4, "checks_passed"]
    assert not row.loc[5, "checks_passed"]
    saved = pd.read_parquet(tmp_path / "table.parquet")
    assert saved.run_id.tolist() == table.run_id.tolist()
    assert saved.status.tolist() == table.status.tolist()
    assert len(pd.read_csv(tmp_path / "table.csv")) == 5
    assert sweep.read_table(tmp_path).run_id.tolist() == table.run_id.tolist()


def test_read_table_without_a_sweep(tmp_path):
    with pytest.raises(sweep.SweepError, match="no sweep table"):
        sweep.read_table(tmp_path)


# --- execute_run and run_sweep with fakes -----------------------------------------------------


def _inline_submit(monkeypatch):
    """Run the jobs in this process instead of on a cluster."""

    def submit_runs(client, jobs, kernel_name="python3", progress=False, desc="runs"):
        for nb, p, rd in jobs:
            yield (nb, p, rd), runner.execute_run(str(nb), p, str(rd), kernel_name)

    monkeypatch.setattr(sweep, "submit_runs", submit_runs)


def test_resumed_sweep_with_a_none_parameter_redoes_nothing(tmp_path, monkeypatch):
    import papermill as pm

    nb = tmp_path / "nb.ipynb"
    nb.write_text("{}")
    fake, calls = fake_papermill()
    monkeypatch.setattr(pm, "execute_notebook", fake)
    _inline_submit(monkeypatch)
    grid, fixed = {"x": [1, 2, 3]}, {"num_eps": None}
    rep = sweep.run_sweep(nb, grid, tmp_path / "s", fixed=fixed, client=object())
    assert (rep.total, rep.skipped, len(rep.done), rep.failed) == (3, 0, 3, [])
    assert list(rep.table.sort_values("x")["metrics.sq"]) == [1, 4, 9]
    assert (rep.table.status == "done").all() and rep.table.checks_passed.all()
    rep2 = sweep.run_sweep(nb, grid, tmp_path / "s", fixed=fixed, client=object())
    assert (rep2.skipped, rep2.done, rep2.failed) == (3, [], [])
    assert len(calls) == 3
    pd.testing.assert_frame_equal(rep2.table, rep.table)


def test_resumed_sweep_retries_only_failures_and_missing(tmp_path, monkeypatch):
    import papermill as pm

    nb = tmp_path / "nb.ipynb"
    nb.write_text("{}")
    fake, calls = fake_papermill(fail=lambda p: p["x"] == 2)
    monkeypatch.setattr(pm, "execute_notebook", fake)
    _inline_submit(monkeypatch)
    out = tmp_path / "s"
    rep = sweep.run_sweep(nb, {"x": [1, 2, 3]}, out, client=object())
    assert len(rep.done) == 2 and [f["params"] for f in rep.failed] == [{"x": 2}]
    assert rep.failed[0]["notebook"].endswith(runner.EXECUTED)
    # a run whose folder was removed is missing; the next sweep does it and retries the failure
    import shutil

    shutil.rmtree(out / "runs" / sweep.run_id({"x": 3}))
    assert sweep.gather(out).set_index("x").status.to_dict() == {
        1: "done",
        2: "failed",
        3: "missing",
    }
    calls.clear()
    rep2 = sweep.run_sweep(nb, {"x": [1, 2, 3]}, out, client=object())
    assert sorted(c["x"] for c in calls) == [2, 3] and rep2.skipped == 1
    assert len(rep2.done) == 1 and len(rep2.failed) == 1
    assert "FAILED" in rep2.summary() and "1 already done" in rep2.summary()


def test_missing_notebook_is_refused(tmp_path):
    with pytest.raises(sweep.SweepError, match="does not exist"):
        sweep.run_sweep(tmp_path / "nope.ipynb", {"x": [1]}, tmp_path / "s")


# --- the command line -------------------------------------------------------------------------


class _Report:
    def __init__(self, out, failed=()):
        self.out_dir, self.failed = Path(out), list(failed)
        self.table = pd.DataFrame({"x": [1]})

    def summary(self):
        return f"fake summary, {len(self.failed)} failed"


@pytest.fixture
def fake_run_sweep(monkeypatch):
    seen = {}

    def run_sweep(notebook, grid, out, fixed=None, scheduler=None, n_workers=None, progress=None):
        seen.update(
            notebook=notebook,
            grid=grid,
            out=out,
            fixed=fixed,
            scheduler=scheduler,
            n_workers=n_workers,
            progress=progress,
        )
        return _Report(out, seen.get("failures", ()))

    monkeypatch.setattr(sweep, "run_sweep", run_sweep)
    return seen


def test_cli_param_values_are_json_else_strings(tmp_path, fake_run_sweep, capsys):
    rc = sweep.main(
        [
            "nb.ipynb",
            "--grid",
            '{"seed": [0, 1]}',
            "--out",
            str(tmp_path),
            "-p",
            "n=3",
            "-p",
            "lr=0.5",
            "-p",
            "name=abc",
            "-p",
            "num_eps=null",
            "--param",
            "ns=[4, 8]",
            "-p",
            "flag=true",
            "-p",
            "expr=a=b",
            "-p",
            'quoted="7"',
            "--workers",
            "3",
            "--no-progress",
        ]
    )
    assert rc == 0
    assert fake_run_sweep["fixed"] == {
        "n": 3,
        "lr": 0.5,
        "name": "abc",
        "num_eps": None,
        "ns": [4, 8],
        "flag": True,
        "expr": "a=b",
        "quoted": "7",
    }
    assert fake_run_sweep["grid"] == {"seed": [0, 1]} and fake_run_sweep["n_workers"] == 3
    assert fake_run_sweep["progress"] is False and fake_run_sweep["scheduler"] is None
    assert "fake summary, 0 failed" in capsys.readouterr().out


def test_cli_exit_status_is_one_when_a_run_failed(tmp_path, fake_run_sweep):
    fake_run_sweep["failures"] = [{"run_id": "r"}]
    assert sweep.main(["nb.ipynb", "--grid", '{"x": [1]}', "--out", str(tmp_path)]) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--grid", "{not json"], "--grid is not valid JSON"),
        (["--grid", '{"x": [1]}', "-p", "novalue"], "must look like NAME=VALUE"),
    ],
    ids=["grid", "param"],
)
def test_cli_usage_errors_exit_two(tmp_path, fake_run_sweep, capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        sweep.main(["nb.ipynb", *args, "--out", str(tmp_path)])
    assert exc.value.code == 2 and message in capsys.readouterr().err
    assert "grid" not in fake_run_sweep  # nothing ran


def test_cli_missing_notebook_exits_two(tmp_path, capsys):
    rc = sweep.main(
        [str(tmp_path / "nope.ipynb"), "--grid", '{"x": [1]}', "--out", str(tmp_path / "s")]
    )
    assert rc == 2 and "does not exist" in capsys.readouterr().err


def test_cli_bad_grid_exits_two(tmp_path, capsys):
    nb = tmp_path / "nb.ipynb"
    nb.write_text("{}")
    rc = sweep.main([str(nb), "--grid", '{"x": 3}', "--out", str(tmp_path / "s")])
    assert rc == 2 and "must be a list of values" in capsys.readouterr().err


@pytest.mark.slow  # 2.3 s (conftest.SLOW_SECONDS)
def test_cli_unreachable_scheduler_exits_two(tmp_path, monkeypatch, capsys):
    """A scheduler address nobody listens on (a loopback port just closed): one clear error,
    after a connection timeout shortened from 20 s to 2 s for the test."""
    import dask.distributed as dd

    real = dd.Client
    monkeypatch.setattr(dd, "Client", lambda address, timeout: real(address, timeout="2s"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    nb = tmp_path / "nb.ipynb"
    nb.write_text("{}")
    address = f"tcp://127.0.0.1:{port}"
    rc = sweep.main(
        [str(nb), "--grid", '{"x": [1]}', "--out", str(tmp_path / "s"), "--scheduler", address]
    )
    err = capsys.readouterr().err
    assert rc == 2 and f"cannot reach the Dask scheduler at {address}" in err, err


# --- the grid and the folder lock -------------------------------------------------------------


def test_expand_grid_and_run_id():
    runs = sweep.expand_grid({"a": [1, 2], "b": ["u", "v"]}, {"c": 0})
    assert runs == [
        {"c": 0, "a": 1, "b": "u"},
        {"c": 0, "a": 1, "b": "v"},
        {"c": 0, "a": 2, "b": "u"},
        {"c": 0, "a": 2, "b": "v"},
    ]
    assert sweep.run_id({"a": 1, "b": 2}) == sweep.run_id({"b": 2, "a": 1})
    assert sweep.run_id({"a": 1}) != sweep.run_id({"a": 2})
    assert sweep.run_id({"a": None}) != sweep.run_id({"a": 0})
    for bad in ({}, {"a": 3}, {"a": []}, {"a": "xy"}):
        with pytest.raises(sweep.SweepError):
            sweep.expand_grid(bad)
    with pytest.raises(sweep.SweepError, match="both swept and fixed"):
        sweep.expand_grid({"a": [1]}, {"a": 2})
    with pytest.raises(sweep.SweepError, match="results_path"):
        sweep.expand_grid({"results_path": ["x.json"]})


def test_second_sweep_on_same_folder_is_refused(tmp_path):
    nb = tmp_path / "nb.ipynb"
    nb.write_text("{}")
    out = tmp_path / "s"
    with sweep._folder_lock(out):
        with pytest.raises(sweep.SweepError, match="another sweep is running"):
            sweep.run_sweep(nb, {"x": [1]}, out)
    # released: the next sweep may start (here it finds nothing to do with a fake client)
    with sweep._folder_lock(out):
        pass


def test_gather_table_columns(tmp_path):
    runs = [{"x": 2}, {"x": 1}]
    for p in runs:
        write_results(tmp_path / "runs" / sweep.run_id(p), results_record(p, {"sq": p["x"] ** 2}))
    table = sweep.gather(tmp_path, runs)
    assert list(table.columns) == ["run_id", "x", "status", "metrics.sq", "checks_passed"]
    assert list(table.index) == [0, 1]
    import pyarrow.parquet as pq

    assert pq.read_schema(tmp_path / "table.parquet").names == list(table.columns)


# --- properties of the grid (hypothesis): the expected runs from itertools, never from sweep -----

#: deterministic and fast: the same examples on every run, no deadline on a shared machine
FAST = settings(max_examples=60, deadline=None, derandomize=True)

param_names = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda k: k != "results_path"
)
param_values = st.one_of(
    st.integers(-3, 3), st.text(max_size=2), st.none(), st.lists(st.integers(0, 2), max_size=2)
)
grids = st.dictionaries(
    param_names, st.lists(param_values, min_size=1, max_size=3), min_size=1, max_size=4
)


@st.composite
def grid_and_fixed(draw):
    grid = draw(grids)
    fixed = draw(st.dictionaries(param_names.filter(lambda k: k not in grid), param_values))
    return grid, fixed


@FAST
@given(grid_and_fixed(), st.sampled_from([list, tuple, iter]))
def test_expand_grid_is_every_combination_once_over_the_fixed_values(grid_fixed, kind):
    grid, fixed = grid_fixed
    runs = sweep.expand_grid({k: kind(v) for k, v in grid.items()}, fixed)
    assert len(runs) == math.prod(len(v) for v in grid.values())
    keys = list(grid)
    for run in runs:
        assert set(run) == set(keys) | set(fixed)
        assert all(run[k] == v for k, v in fixed.items())
    # every combination (values by position: equal values in one list are distinct runs)
    # exactly once, in itertools.product's order: the first key slowest, the last fastest
    expected = [dict(zip(keys, combo)) for combo in itertools.product(*grid.values())]
    assert [{k: r[k] for k in keys} for r in runs] == expected


@FAST
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4))
def test_expand_grid_counts_like_an_odometer(sizes):
    """Positions instead of values: the runs' index tuples are all the index tuples, each
    once, in increasing lexicographic order (a rule independent of itertools)."""
    grid = {f"p{i}": [(i, j) for j in range(n)] for i, n in enumerate(sizes)}
    idx = [tuple(run[f"p{i}"][1] for i in range(len(sizes))) for run in sweep.expand_grid(grid)]
    assert len(idx) == len(set(idx)) == math.prod(sizes)
    assert idx == sorted(idx)
    assert all(all(0 <= j < n for j, n in zip(t, sizes)) for t in idx)


@FAST
@given(
    grid_and_fixed(),
    st.sampled_from(["empty list", "string", "number", "none", "fixed too", "results_path"]),
    st.data(),
)
def test_expand_grid_rejects_a_bad_entry_anywhere(grid_fixed, bad, data):
    grid, fixed = dict(grid_fixed[0]), dict(grid_fixed[1])
    name = data.draw(st.sampled_from(list(grid)), label="name")
    if bad == "fixed too":
        fixed[name] = 0
    elif bad == "results_path":
        target = data.draw(st.sampled_from(["grid", "fixed"]), label="where")
        (grid if target == "grid" else fixed)["results_path"] = ["x.json"]
    else:
        grid[name] = {"empty list": [], "string": "ab", "number": 3, "none": None}[bad]
    with pytest.raises(sweep.SweepError):
        sweep.expand_grid(grid, fixed)


@pytest.mark.parametrize("grid", [{}, [], None, [("a", [1])]])
def test_expand_grid_needs_a_non_empty_mapping(grid):
    with pytest.raises(sweep.SweepError, match="non-empty mapping"):
        sweep.expand_grid(grid)
