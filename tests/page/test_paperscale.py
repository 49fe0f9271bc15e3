"""``twolayer.page.paperscale``: a paper-profile run kept by ``bench --keep`` becomes a small
committed record, shown on its chapter's page beside the page's own run."""

from __future__ import annotations

import base64
import json

import nbformat
import pytest

from twolayer.page import paperscale as ps
from twolayer.page.contract import Contract, Int

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _results(profile="paper", value=0.5, passed=True):
    return {
        "params": {"seed": 0, "profile": profile, "results_path": "/x.json", "n": 400},
        "checks": {"bound_holds": passed, "skipped": None},
        "check_details": {
            "bound_holds": {
                "kind": "theorem",
                "statement": "a-thm-1",
                "applies": True,
                "value": value,
                "op": "<=",
                "bound": 1.0,
            },
            "skipped": {
                "kind": "observation",
                "statement": None,
                "applies": False,
                "value": None,
                "op": ">",
                "bound": 0.0,
            },
        },
        "metrics": {"rate": 0.25, "curve": [1.0, 2.0], "flag": True},
        "environment": {"python": "3.11", "device": "cpu", "dtype": "float64"},
    }


def _keep(tmp_path, results):
    src = tmp_path / "runs" / "paper_x"
    src.mkdir(parents=True)
    (src / "ch.json").write_text(json.dumps(results))
    nb = nbformat.v4.new_notebook()
    fig = nbformat.v4.new_code_cell("plot()")
    fig.metadata["mystnb"] = {"figure": {"caption": "A curve.", "name": "fig-ch-curve"}}
    fig.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"image/png": base64.b64encode(PNG).decode(), "text/plain": "<Figure>"},
        )
    ]
    plain = nbformat.v4.new_code_cell("x = 1")
    nb.cells = [plain, fig]
    nbformat.write(nb, src / "ch.ipynb")
    root = tmp_path / "book_root"
    (root / "book").mkdir(parents=True)
    (root / "_toc.yml").write_text("root: intro\n")
    return tmp_path / "runs", root


def test_collect_writes_a_tidy_record_with_the_figures(tmp_path):
    src, root = _keep(tmp_path, _results())
    progress = {"chapters": {"paper_x/ch": {"seconds": 120.0, "rss_mb": 300.0, "error": None}}}
    [path] = ps.collect(src, root, progress, machine="test box", date="2026-12-01")
    assert path == root / "book/generated/paper/paper_x/ch.json"
    rec = json.loads(path.read_text())
    assert rec["seconds"] == 120.0 and rec["peak_rss_mb"] == 300.0 and rec["date"] == "2026-12-01"
    assert "results_path" not in rec["params"] and rec["params"]["n"] == 400
    assert rec["metrics"] == {"rate": 0.25}  # scalars only
    assert [r["check"] for r in rec["checks"]] == ["bound_holds", "skipped"]
    assert rec["checks"][0]["passed"] is True and rec["checks"][1]["applies"] is False
    assert rec["figures"] == [
        {"name": "fig-ch-curve", "caption": "A curve.", "file": "fig-ch-curve.png"}
    ]
    assert (path.with_suffix("") / "fig-ch-curve.png").read_bytes() == PNG


def test_collect_refuses_a_run_of_another_profile(tmp_path):
    src, root = _keep(tmp_path, _results(profile="smoke"))
    with pytest.raises(ValueError, match="smoke"):
        ps.collect(src, root)


def test_comparison_and_summary_read_both_runs(tmp_path):
    src, root = _keep(tmp_path, _results(value=0.9))
    [path] = ps.collect(src, root, machine="box", date="2026-12-01")
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
    src, root = _keep(tmp_path, _results(value=1.5, passed=False))
    [path] = ps.collect(src, root)
    rec = json.loads(path.read_text())
    assert "0 of 1 applicable checks passed" in ps.summary(rec)
    assert ps._outcome(rec["checks"][0]) == "FAIL"


def test_record_path_and_book_root(tmp_path, monkeypatch):
    _, root = _keep(tmp_path, _results())
    (root / "notebooks" / "paper_x").mkdir(parents=True)
    monkeypatch.chdir(root / "notebooks" / "paper_x")
    assert ps.book_root() == root
    assert ps.record_path("paper_x/ch") == root / "book/generated/paper/paper_x/ch.json"
    monkeypatch.chdir(tmp_path)
    assert ps.book_root() is None and ps.record_path("paper_x/ch") is None


def test_profile_table_has_every_chapter_run_or_stopped(tmp_path):
    src, root = _keep(tmp_path, _results())
    progress = {
        "chapters": {
            "paper_x/ch": {"seconds": 120.0, "rss_mb": 300.0, "error": None},
            "paper_x/slow": {"seconds": None, "error": "did not finish", "timed_out_after": 3600},
            "paper_x/data": {"seconds": 7.0, "rss_mb": 400.0, "error": "DatasetUnavailable: x"},
        }
    }
    ps.collect(src, root, progress, machine="box", date="2026-12-01")
    md = ps.profile_table(root, progress)
    assert "Measured on 2026-12-01 on box" in md
    rows = {ln.split("|")[1].strip(): ln for ln in md.splitlines() if ln.startswith("| `")}
    assert set(rows) == {"`paper_x/ch`", "`paper_x/slow`", "`paper_x/data`"}
    assert (
        "| 2.0 | 300 | 1 / 1 | cpu, float64 | every applicable check passed |"
        in rows["`paper_x/ch`"]
    )
    assert "stopped at the cap (60 min)" in rows["`paper_x/slow`"]
    assert "stopped: DatasetUnavailable: x |" in rows["`paper_x/data`"]


def test_where_reads_the_environment():
    assert ps._where({"numpy": "2", "device": "cuda:0", "dtype": "float32", "torch": "2"}) == (
        "cuda:0, float32"
    )
    assert ps._where({"numpy": "2"}) == "NumPy on the CPU"
    assert ps._where({"numpy": "2", "torch": "2"}) == "cpu"


def test_a_record_is_dated_by_its_run_not_by_the_collect(tmp_path):
    import os

    src, root = _keep(tmp_path, _results())
    res = src / "paper_x" / "ch.json"
    when = 1_764_547_200  # 2025-12-01 00:00 UTC
    os.utime(res, (when + 43_200, when + 43_200))  # noon: the same day in any time zone
    [path] = ps.collect(src, root)
    assert json.loads(path.read_text())["date"] == "2025-12-01"
