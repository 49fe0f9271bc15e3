"""``Params``: validated parameters readable as attributes, and a value derived after
validation (``P.store_dir = ...`` in a page) recorded in the results (review item 8)."""

from __future__ import annotations

import json

import pytest

from twolayer.page.contract import Contract, Int, OptionalDir, Params


def test_params_attribute_access_and_assignment():
    P = Params({"n": 3})
    assert P.n == 3 and P["n"] == 3
    P.n = 4
    P.derived = "x"
    assert dict(P) == {"n": 4, "derived": "x"}
    with pytest.raises(AttributeError, match="missing"):
        P.missing  # noqa: B018


def test_value_set_after_validation_is_written_to_the_results(tmp_path):
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
    from twolayer.tools import sweep

    assert sweep.is_done(tmp_path, {"n": None, "store_dir": str(tmp_path / "store")}) is False
    (tmp_path / "results.json").write_text(path.read_text())
    assert sweep.is_done(tmp_path, {"n": None, "store_dir": str(tmp_path / "store")})
    assert not sweep.is_done(tmp_path, {"n": None, "store_dir": str(tmp_path / "other")})
