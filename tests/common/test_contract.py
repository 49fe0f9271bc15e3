"""Tests of twolayer.common.contract: the notebook contract, simulated with a namespace dict."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from twolayer.common.contract import (PROFILE_ENV, Bool, CheckFailed, Choice, Contract, Float, Int, ListOf,
                               OptionalPath, ParameterError, Params)

SPEC = {
    "n": Int(1, 100),
    "lr": Float(0.0, 1.0, lo_open=True),
    "act": Choice("leaky_relu", "smoothed_leaky_relu"),
    "normalized": Bool(),
    "ns": ListOf(Int(2), increasing=True),
}
PROFILES = {
    "smoke": {"seed": 0, "n": 5, "lr": 0.1, "ns": [2, 3]},
    "book": {"seed": 1, "n": 50, "lr": 0.05, "ns": [2, 4, 8]},
    "paper": {"seed": 2, "n": 100, "lr": 0.01, "ns": [2, 4, 8, 16]},
}
DEFAULTS = dict(seed=None, profile="smoke", results_path=None, n=None, lr=None,
                act="leaky_relu", normalized=False, ns=None)


def make(spec=SPEC, profiles=PROFILES, before=None, **params):
    """A notebook: the names that exist before the contract, the contract cell, the parameters cell."""
    ns = {"__name__": "__main__", "np": np, "helper": len} if before is None else dict(before)
    c = Contract(spec, profiles, ns)
    ns.update({**DEFAULTS, **params})
    return c, ns


@pytest.fixture(autouse=True)
def _no_profile_env(monkeypatch):
    monkeypatch.delenv(PROFILE_ENV, raising=False)


# --- profiles and defaults -------------------------------------------------------------------------------

def test_defaults_filled_from_profile():
    c, _ = make()
    P = c.validate()
    assert isinstance(P, Params)
    assert dict(P) == {"seed": 0, "profile": "smoke", "results_path": None, "n": 5, "lr": 0.1,
                       "act": "leaky_relu", "normalized": False, "ns": [2, 3]}
    assert P.n == 5 and P.ns == [2, 3]
    with pytest.raises(AttributeError):
        P.not_a_parameter


def test_explicit_values_win_over_profile():
    c, _ = make(profile="paper", seed=7, n=3, lr=0.5)
    P = c.validate()
    assert (P.seed, P.n, P.lr, P.ns) == (7, 3, 0.5, [2, 4, 8, 16])


def test_profile_none_reads_env(monkeypatch):
    monkeypatch.setenv(PROFILE_ENV, "paper")
    c, _ = make(profile=None)
    P = c.validate()
    assert P.profile == "paper" and P.n == 100 and P.seed == 2


def test_profile_none_without_env_is_book():
    c, _ = make(profile=None)
    P = c.validate()
    assert P.profile == "book" and P.n == 50


def test_bad_env_profile_names_the_variable(monkeypatch):
    monkeypatch.setenv(PROFILE_ENV, "huge")
    c, _ = make(profile=None)
    with pytest.raises(ParameterError) as info:
        c.validate()
    msg = str(info.value)
    assert "BOOK_PROFILE" in msg and "'huge'" in msg
    assert "'smoke'" in msg and "'book'" in msg and "'paper'" in msg


def test_explicit_bad_profile():
    c, _ = make(profile="huge", seed=0)
    with pytest.raises(ParameterError, match="'profile'.*'smoke', 'book', 'paper'"):
        c.validate()


def test_explicit_bad_profile_with_default_seed():
    c, _ = make(profile="huge", seed=None)
    with pytest.raises(ParameterError, match="profile"):
        c.validate()


def test_profiles_must_define_all_three():
    with pytest.raises(ValueError, match="paper"):
        Contract(SPEC, {"smoke": {}, "book": {}}, {})


def test_missing_value_without_profile_default_is_rejected():
    profiles = {k: {kk: vv for kk, vv in v.items() if kk != "n"} for k, v in PROFILES.items()}
    c, _ = make(profiles=profiles)
    with pytest.raises(ParameterError, match="'n' must be an integer in \\[1, 100\\]; got None"):
        c.validate()


# --- parameter types ------------------------------------------------------------------------------------------

def rejects(name, value, *fragments, spec=SPEC):
    c, _ = make(spec=spec, **{name: value})
    with pytest.raises(ParameterError) as info:
        c.validate()
    msg = str(info.value)
    assert repr(name) in msg, msg
    for f in fragments:
        assert f in msg, msg
    return msg


@pytest.mark.parametrize("value", ["3", 3.0, 2.5, True, False, [3], 0, -1, 101])
def test_int_rejects(value):
    rejects("n", value, "an integer in [1, 100]")


@pytest.mark.parametrize("value", [1, 100, 42])
def test_int_accepts_bounds(value):
    c, _ = make(n=value)
    assert c.validate().n == value


@pytest.mark.parametrize("value", [0, 0.0, -0.1, 1.0001, float("nan"), float("inf"), "0.1", True])
def test_float_lo_open_rejects(value):
    rejects("lr", value, "a finite number in (0.0, 1.0]")


@pytest.mark.parametrize("value,expected", [(1, 1.0), (1.0, 1.0), (1e-12, 1e-12), (np.float64(0.5), 0.5)])
def test_float_lo_open_accepts(value, expected):
    c, _ = make(lr=value)
    v = c.validate().lr
    assert v == expected and type(v) is float


def test_float_hi_open_and_closed_bounds():
    spec = {**SPEC, "lr": Float(0.0, 1.0, hi_open=True)}
    rejects("lr", 1.0, "[0.0, 1.0)", spec=spec)
    c, _ = make(spec=spec, lr=0.0)
    assert c.validate().lr == 0.0
    spec = {**SPEC, "lr": Float(lo=0.5)}
    rejects("lr", 0.25, ">= 0.5", spec=spec)
    spec = {**SPEC, "lr": Float(hi=2.0, hi_open=True)}
    rejects("lr", 2.0, "< 2.0", spec=spec)
    spec = {**SPEC, "lr": Float(lo=0.0, lo_open=True)}
    rejects("lr", 0.0, "> 0.0", spec=spec)


@pytest.mark.parametrize("value", ["relu", "", 1, True])
def test_choice_rejects(value):
    rejects("act", value, "one of 'leaky_relu', 'smoothed_leaky_relu'")


def test_choice_none_without_default_rejected():
    # None is filled from the profile only where the profile has a default; act has none
    rejects("act", None, "one of 'leaky_relu', 'smoothed_leaky_relu'", "got None")


def test_choice_rejects_bool_for_int_choices():
    spec = {**SPEC, "act": Choice(0, 1)}
    rejects("act", True, "one of 0, 1", spec=spec)
    c, _ = make(spec=spec, act=1)
    assert c.validate().act == 1


@pytest.mark.parametrize("value", [1, 0, "True", None])
def test_bool_rejects(value):
    rejects("normalized", value, "True or False")


@pytest.mark.parametrize("value", [[3, 2], [2, 2], [1, 2], [], "2,3", 3, [2, "3"], [2, True]])
def test_listof_rejects(value):
    rejects("ns", value, "a list of at least 1 items", "an integer >= 2", "strictly increasing")


def test_listof_accepts_tuple_as_list():
    c, _ = make(ns=(2, 5, 9))
    assert c.validate().ns == [2, 5, 9]


def test_listof_not_increasing_allows_any_order():
    spec = {**SPEC, "ns": ListOf(Int(2), min_len=2, max_len=3)}
    c, _ = make(spec=spec, ns=[5, 2])
    assert c.validate().ns == [5, 2]
    rejects("ns", [5], "at least 2", "at most 3 items", spec=spec)


def test_listof_max_len_in_message():
    spec = {**SPEC, "ns": ListOf(Int(2), max_len=3)}
    rejects("ns", [2, 3, 4, 5], "3", "at most", spec=spec)


@pytest.mark.parametrize("value", ["out.txt", "results", 3, ["a.json"]])
def test_optional_path_rejects(value):
    rejects("results_path", value, "None or a file path string ending in .json")


def test_optional_path_accepts(tmp_path):
    c, _ = make(results_path=tmp_path / "r.json")
    assert c.validate().results_path == os.fspath(tmp_path / "r.json")


@pytest.mark.parametrize("value", [-1, 2 ** 32, 1.0, True, "0"])
def test_seed_rejects(value):
    rejects("seed", value, "an integer in [0, 4294967295]")


# --- unknown and missing names ----------------------------------------------------------------------------------

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


# --- checks, metrics, results -----------------------------------------------------------------------------------

def test_check_records_and_raises():
    c, _ = make()
    c.validate()
    assert c.check("positive", 1 > 0) is True
    assert c.check("truthy", np.bool_(True)) is True
    with pytest.raises(CheckFailed) as info:
        c.check("margin grows", False, "min margin 0.3 < 0.5")
    assert isinstance(info.value, AssertionError)
    assert "'margin grows'" in str(info.value) and "min margin 0.3 < 0.5" in str(info.value)
    assert c.checks == {"positive": True, "truthy": True, "margin grows": False}


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
    c.check("loss small", 0.125 < 1)
    return c, c.finish()


def test_finish_writes_json_atomically(tmp_path):
    path = tmp_path / "sub" / "results.json"
    c, out = run_notebook(path)
    assert Path(out) == path
    res = json.loads(path.read_text())
    assert set(res) == {"params", "metrics", "checks"}
    assert res["params"] == {"seed": 0, "profile": "smoke", "results_path": os.fspath(path), "n": 7,
                             "lr": 0.1, "act": "leaky_relu", "normalized": False, "ns": [2, 3]}
    assert res["metrics"] == {"loss": 0.125, "curve": [1.0, 0.5, None]}
    assert res["checks"] == {"loss small": True}
    assert sorted(os.listdir(path.parent)) == ["results.json"]  # no temporary files left


def test_finish_without_results_path_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    c, out = run_notebook(None)
    assert out is None
    assert list(tmp_path.iterdir()) == []
    assert set(c.results()) == {"params", "metrics", "checks"}


def test_identical_runs_give_identical_bytes(tmp_path):
    path = tmp_path / "r.json"
    run_notebook(path)
    first = path.read_bytes()
    run_notebook(path)
    assert path.read_bytes() == first
