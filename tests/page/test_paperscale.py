"""``twolayer.page.paperscale``: a chapter's recorded paper-profile run (written by
``twolayer.tools.paperscale.collect``, tests/entry_points/test_paperscale_unit.py) shown on its
page beside the page's own run."""

from __future__ import annotations

import json

from helpers import kept_paper_run, paper_results
from twolayer.core.params import Int
from twolayer.page import paperscale as ps
from twolayer.page.contract import Contract
from twolayer.tools.paperscale import collect


def test_comparison_and_summary_read_both_runs(tmp_path):
    src, root = kept_paper_run(tmp_path, paper_results(value=0.9))
    [path] = collect(src, root, machine="box", date="2026-12-01")
    rec = json.loads(path.read_text())
    c = Contract(
        chapter="paper_x/ch",
        spec={"n": Int(1, 10**6)},
        profiles={"smoke": {"n": 10}, "book": {"n": 40}, "paper": {"n": 400}},
        namespace={"seed": 0, "profile": "smoke", "results_path": None, "n": None},
    )
    c.validate()
    c.theorem("bound_holds", statement="a-thm-1", value=0.1, bound=1.0, op="<=")
    rows = {r["check"]: r for r in ps.comparison(c, rec)}
    assert rows["bound_holds"]["this page"] == "0.1 (pass)"
    assert rows["bound_holds"]["paper profile"] == "0.9 (pass)"
    assert rows["skipped"]["this page"] == "—"
    assert rows["skipped"]["paper profile"] == "— (not applicable)"
    s = ps.summary(rec)
    assert "2026-12-01" in s and "box" in s and "1 of 1 applicable checks passed" in s
    assert ps.differing_params(dict(c.params), rec["params"]) == {"n": 400}


def test_a_failed_paper_check_is_shown_as_failed(tmp_path):
    src, root = kept_paper_run(tmp_path, paper_results(value=1.5, passed=False))
    [path] = collect(src, root)
    rec = json.loads(path.read_text())
    assert "0 of 1 applicable checks passed" in ps.summary(rec)
    assert ps._outcome(rec["checks"][0]) == "FAIL"


def test_record_path_and_book_root(tmp_path, monkeypatch):
    _, root = kept_paper_run(tmp_path, paper_results())
    (root / "notebooks" / "paper_x").mkdir(parents=True)
    monkeypatch.chdir(root / "notebooks" / "paper_x")
    assert ps.book_root() == root
    assert ps.record_path("paper_x/ch") == root / "book/generated/paper/paper_x/ch.json"
    monkeypatch.chdir(tmp_path)
    assert ps.book_root() is None and ps.record_path("paper_x/ch") is None


def test_where_reads_the_environment():
    env = {"numpy": "2", "device": "cuda:0", "dtype": "float32", "torch": "2"}
    assert ps.where_computed(env) == "cuda:0, float32"
    assert ps.where_computed({"numpy": "2"}) == "NumPy on the CPU"
    assert ps.where_computed({"numpy": "2", "torch": "2"}) == "cpu"
