"""Tests of twolayer.page.contract: the notebook contract, simulated with a namespace dict (the
parameter types and their validation: tests/core/test_params.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from helpers import TOY_CELL, TOY_PROFILES, toy_spec
from twolayer.core.params import (
    PROFILE_ENV,
    Int,
    OptionalDir,
    ParameterError,
    Params,
)
from twolayer.page.checks import CheckFailed
from twolayer.page.contract import RESULTS_DIR_ENV, Contract

SPEC = toy_spec()
PROFILES = TOY_PROFILES
DEFAULTS = TOY_CELL


def make(spec=SPEC, profiles=PROFILES, before=None, **params):
    """A notebook: the names that exist before the contract, the contract cell, the parameters
    cell."""
    ns = {"__name__": "__main__", "np": np, "helper": len} if before is None else dict(before)
    c = Contract(spec, profiles, ns)
    ns.update({**DEFAULTS, **params})
    return c, ns


@pytest.fixture(autouse=True)
def _no_profile_env(monkeypatch):
    monkeypatch.delenv(PROFILE_ENV, raising=False)


# --- the notebook's parameters --------------------------------------------------------------------


def test_validate_fills_the_page_s_values_from_the_profile():
    c, _ = make()
    P = c.validate()
    assert isinstance(P, Params) and c.params is P
    assert dict(P) == {
        "seed": 0,
        "profile": "smoke",
        "results_path": None,
        "n": 5,
        "lr": 0.1,
        "act": "leaky_relu",
        "normalized": False,
        "ns": [2, 3],
    }


def test_a_bad_value_in_the_namespace_is_named():
    c, _ = make(n=0)
    with pytest.raises(ParameterError, match="'n' must be an integer in \\[1, 100\\]; got 0"):
        c.validate()
    assert c.params is None


def test_profiles_must_define_all_three():
    with pytest.raises(ValueError, match="paper"):
        Contract(SPEC, {"smoke": {}, "book": {}}, {})


# --- unknown and missing names --------------------------------------------------------------------


def test_unknown_name_rejected_and_named():
    c, ns = make()
    ns["seeed"] = 1
    with pytest.raises(ParameterError) as info:
        c.validate()
    msg = str(info.value)
    assert "unknown parameter 'seeed'" in msg
    assert "this notebook takes:" in msg
    for name in ["seed", "profile", "results_path", "n", "lr", "act", "normalized", "ns"]:
        assert name in msg.split("takes:")[1]


def test_several_unknown_names():
    c, ns = make()
    ns["zz"] = 1
    ns["aa"] = 2
    with pytest.raises(ParameterError, match="unknown parameters 'aa', 'zz'"):
        c.validate()


def test_underscore_names_and_preexisting_names_ignored():
    c, ns = make()
    ns["_"] = 1
    ns["_tmp"] = 2
    ns["np"] = "rebound"  # existed before the contract
    assert c.validate().n == 5


def test_absent_parameter_rejected():
    c, ns = make()
    del ns["lr"]
    with pytest.raises(ParameterError, match="does not define lr"):
        c.validate()


# --- checks, metrics, results ---------------------------------------------------------------------

RESULT_KEYS = {"params", "metrics", "checks", "check_details", "hypotheses", "environment"}


def test_environment_records_versions_and_device():
    c, _ = make()
    c.validate()
    c.where(device="cpu", dtype="torch.float64")
    env = c.results()["environment"]
    assert env["numpy"] == np.__version__ and env["python"]
    assert env["device"] == "cpu" and env["dtype"] == "float64"


def test_three_kinds_record_value_bound_and_raise():
    c, _ = make()
    c.validate()
    c.theorem("kkt", value=3e-9, bound=1e-6, op="<=", statement="a-thm-3-2#1")
    c.observation("trend", value=-0.4, bound=0.0, op="<")
    c.sanity("identity", np.bool_(True))
    with pytest.raises(CheckFailed) as info:
        c.theorem(
            "margin",
            value=0.3,
            bound=0.5,
            op=">=",
            statement="a-thm-3-2#1",
            detail="smallest margin",
        )
    assert isinstance(info.value, AssertionError)
    msg = str(info.value)
    assert "'margin'" in msg and "0.3" in msg and "0.5" in msg and "smallest margin" in msg
    assert c.checks == {"kkt": True, "trend": True, "identity": True, "margin": False}
    d = c.results()["check_details"]
    kkt = dict(d["kkt"])
    # 1e-6 - 3e-9 and 1e-6 / 3e-9, by hand
    assert kkt.pop("margin") == pytest.approx(9.97e-7, rel=1e-12)
    assert kkt.pop("factor") == pytest.approx(1000 / 3, rel=1e-12)
    assert kkt == {
        "kind": "theorem",
        "value": 3e-9,
        "bound": 1e-6,
        "op": "<=",
        "applies": True,
        "reason": "",
        "statement": "a-thm-3-2#1",
        "hypotheses": [],
        "detail": "",
    }
    assert d["margin"]["margin"] == pytest.approx(-0.2)  # failed: outside, so negative
    assert d["trend"]["kind"] == "observation" and d["identity"]["kind"] == "sanity"


@pytest.mark.parametrize(
    "value, op, bound, holds, reported",
    [
        (np.array([0.1, 0.4, 0.2]), "<=", 0.4, True, 0.4),  # worst element is the largest
        (np.array([0.1, 0.41, 0.2]), "<=", 0.4, False, 0.41),
        (np.array([0.1, 0.4]), "<", 0.4, False, 0.4),
        ([3, 1, 2], ">=", 1, True, 1),  # worst element is the smallest
        ([3, 1, 2], ">", 1, False, 1),
        (np.array([0.7, 1.3]), "in", (1.0, 1.2), False, 0.7),  # farthest outside the interval
        (np.array([1.05, 1.1]), "in", (1.0, 1.2), True, 1.05),
        (float("nan"), "<=", 1.0, False, None),  # NaN never holds
        (5, "==", 5, True, 5),
    ],
)
def test_compare_reports_the_worst_element(value, op, bound, holds, reported):
    c, _ = make()
    c.validate()
    if holds:
        c.observation("x", value=value, bound=bound, op=op)
        assert c.checks["x"] is True
    else:
        with pytest.raises(CheckFailed):
            c.observation("x", value=value, bound=bound, op=op)
    got = c.results()["check_details"]["x"]["value"]
    assert got == reported


def test_hypothesis_makes_theorem_not_applicable_without_evaluating_it():
    c, _ = make()
    c.validate()
    h = c.hypothesis(
        "thm_assumption",
        value=2.5,
        bound=1.0,
        op="<=",
        title="Theorem 3.2",
        statement="a-thm-3-2",
        reason="the data are not nearly orthogonal",
    )
    assert h.holds is False
    called = []
    c.theorem("item1", lambda: called.append(1) or False, statement="a-thm-3-2#1", applies=h)
    assert not called
    res = c.results()
    assert res["checks"] == {"item1": None}
    det = res["check_details"]["item1"]
    assert det["applies"] is False and "not nearly orthogonal" in det["reason"]
    assert det["hypotheses"] == ["thm_assumption"]
    assert res["hypotheses"]["thm_assumption"]["holds"] is False
    assert "does not cover these parameters" in h.sentence()
    ok = c.hypothesis("other", True, title="Lemma 3.3")
    c.theorem("item2", value=0.0, bound=1e-9, op="<=", statement="a-lem-3-3", applies=[ok])
    assert c.checks["item2"] is True


def test_applies_tuple_and_false_theorem_inside_hypotheses_stops():
    c, _ = make()
    c.validate()
    c.observation(
        "late", value=1.0, bound=0.0, op="<", applies=(False, "the smoke profile is too short")
    )
    assert c.checks["late"] is None
    assert c.results()["check_details"]["late"]["reason"] == "the smoke profile is too short"
    h = c.hypothesis("hyp", True, title="Theorem 4.2")
    with pytest.raises(CheckFailed):
        c.theorem("claim", False, statement="a-thm-4-2", applies=h)


def test_names_are_recorded_once():
    c, _ = make()
    c.validate()
    c.sanity("a", True)
    with pytest.raises(ValueError, match="twice"):
        c.theorem("a", True, statement="x")
    with pytest.raises(ValueError, match="name of a check"):
        c.metric("a", 1.0)
    with pytest.raises(ValueError):
        c.observation("b", value=1.0)  # neither holds nor op


def test_check_table_lists_every_kind_with_links():
    c, _ = make()
    c.validate()
    h = c.hypothesis("hyp", False, title="Theorem 3.2", statement="a-thm-3-2", reason="r")
    c.theorem("t1", True, statement="a-thm-3-2#4", applies=h)
    c.observation("o1", value=0.25, bound=0.5, op="<", detail="log(L_16 / L_pop), *worst* d")
    c.sanity("s1", value=1e-12, bound=1e-9, op="<=")
    bundle = c.table()
    md = bundle["text/markdown"]
    assert "{prf:ref}`Paper A, Theorem 3.2 <a-thm-3-2>` (4)" in md and "not applicable" in md
    # the detail says what the measured number is, escaped so Markdown shows it as written
    head = "| kind | check | statement | what is measured | measured | bound | margin | result |"
    assert md.splitlines()[2] == head
    assert (
        '| observation | <span id="check-o1"></span>`o1` | — | '
        "log(L\\_16 / L\\_pop), \\*worst\\* d | 0.25 | < 0.5 "
        "| 0.25 (2×) | pass |" in md  # the row is the target of the claims index's link
    )
    assert (
        '| sanity | <span id="check-s1"></span>`s1` | — | — | 1e-12 | ≤ 1e-9 | 9.99e-10 (1000×) '
        "| pass |" in md
    )
    assert "<td>log(L_16 / L_pop), *worst* d</td>" in bundle["text/html"]
    assert "| observation | o1 | — | log(L_16 / L_pop), *worst* d | 0.25 |" in bundle["text/plain"]
    assert (
        md.index("| hypothesis")
        < md.index("| theorem")
        < md.index("| observation")
        < md.index("| sanity")
    )
    assert "1 theorem checks (1 not applicable here), 1 observations, 1 sanity" in md
    assert "<table" in bundle["text/html"] and "Paper A, Theorem 3.2 (4)" in bundle["text/html"]


def test_metric_converts_values():
    c, _ = make()
    assert c.metric("a", np.float64(0.5)) == 0.5
    assert c.metric("b", np.array([1, 2])) == [1, 2]
    assert c.metric("c", float("nan")) is None
    assert c.metrics == {"a": 0.5, "b": [1, 2], "c": None}


def test_results_before_validate_raises():
    c, _ = make()
    with pytest.raises(RuntimeError):
        c.results()


def run_notebook(path):
    c, _ = make(results_path=None if path is None else os.fspath(path), n=7)
    c.validate()
    c.metric("loss", np.float64(0.125))
    c.metric("curve", np.array([1.0, 0.5, np.nan]))
    c.observation("loss_small", value=0.125, bound=1.0, op="<")
    assert c.finish(show=False) is None  # a page's last cell shows no output
    return c, c.results_file


def test_finish_writes_json_atomically(tmp_path):
    path = tmp_path / "sub" / "results.json"
    c, out = run_notebook(path)
    assert Path(out) == path
    res = json.loads(path.read_text())
    assert set(res) == RESULT_KEYS
    assert res["params"] == {
        "seed": 0,
        "profile": "smoke",
        "results_path": os.fspath(path),
        "n": 7,
        "lr": 0.1,
        "act": "leaky_relu",
        "normalized": False,
        "ns": [2, 3],
    }
    assert res["metrics"] == {"loss": 0.125, "curve": [1.0, 0.5, None]}
    assert res["checks"] == {"loss_small": True}
    assert res["check_details"]["loss_small"]["value"] == 0.125
    assert sorted(os.listdir(path.parent)) == ["results.json"]  # no temporary files left


def test_finish_without_results_path_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    c, out = run_notebook(None)
    assert out is None
    assert list(tmp_path.iterdir()) == []
    assert set(c.results()) == RESULT_KEYS


def test_finish_writes_to_the_results_dir_in_a_book_build(tmp_path, monkeypatch):
    monkeypatch.setenv(RESULTS_DIR_ENV, str(tmp_path))
    ns = {"__name__": "__main__"}
    c = Contract(SPEC, PROFILES, ns, chapter="paper_a/demo")
    ns.update(DEFAULTS)
    c.validate()
    assert c.finish(show=False) is None
    assert c.results_file == tmp_path / "paper_a" / "demo.json"
    assert json.loads((tmp_path / "paper_a" / "demo.json").read_text())["params"]["n"] == 5


def test_identical_runs_give_identical_bytes(tmp_path):
    path = tmp_path / "r.json"
    run_notebook(path)
    first = path.read_bytes()
    run_notebook(path)
    assert path.read_bytes() == first


# --- how what they measure is shown ---------------------------------------------------------


def test_hypothesis_rows_show_their_detail():
    c, _ = make()
    c.validate()
    c.hypothesis("near", value=0.5, bound=1.0, op="<=", title="Theorem 3.2", detail="n / n_max")
    assert (
        '| hypothesis | <span id="check-near"></span>`near` | — | n / n\\_max | 0.5 | ≤ 1 '
        "| 0.5 (2×) | holds |" in c.table()["text/markdown"]
    )


def test_detail_keeps_math_and_escapes_the_rest():
    from twolayer.page.checks import _md_text

    # in a table cell, | is escaped; inside math too, so that \| (a norm) survives the table
    assert _md_text("$\\|W_0\\|_2$ over its bound, [every] run") == (
        "$\\\\|W_0\\\\|_2$ over its bound, \\[every\\] run"
    )
    assert _md_text("costs $5") == "costs \\$5"


def test_parameter_table_shows_environment_variables_as_code(monkeypatch):
    shown = []
    monkeypatch.setattr("twolayer.page.contract.display_bundle", shown.append)
    c, _ = make()
    c.validate()
    c.parameter_table()
    md = shown[0]["text/markdown"]
    assert "None reads `$BOOK_PROFILE`" in md and " $BOOK_PROFILE" not in md


def test_value_set_after_validation_is_written_to_the_results(tmp_path):
    """``Params``: a value derived after validation (``P.store_dir = ...`` in a page) is
    recorded in the results (review item 8)."""
    ns = {"__name__": "__main__"}
    c = Contract(
        {"n": Int(1, 10), "store_dir": OptionalDir()},
        {"smoke": {"n": 2}, "book": {"n": 5}, "paper": {"n": 9}},
        ns,
    )
    path = tmp_path / "r.json"
    ns.update(seed=0, profile="smoke", results_path=str(path), n=None, store_dir=None)
    P = c.validate()
    P.store_dir = str(tmp_path / "store")  # a page derives it (e.g. from sweep_dir)
    c.sanity("ok", True)
    c.finish(show=False)
    res = json.loads(path.read_text())
    assert res["params"]["store_dir"] == str(tmp_path / "store") and res["params"]["n"] == 2
    # a results file records what the run used, so a sweep's is_done sees the derived value
    from twolayer.tools import runner

    assert runner.is_done(tmp_path, {"n": None, "store_dir": str(tmp_path / "store")}) is False
    (tmp_path / "results.json").write_text(path.read_text())
    assert runner.is_done(tmp_path, {"n": None, "store_dir": str(tmp_path / "store")})
    assert not runner.is_done(tmp_path, {"n": None, "store_dir": str(tmp_path / "other")})
