"""``python -m twolayer.tools.paperscale`` (``make paper-collect``): a paper-profile run kept by
``bench --keep`` becomes a small committed record, and the "Execution times" page's table."""

from __future__ import annotations

import json

import pytest

from helpers import PNG, kept_paper_run, paper_results
from twolayer.tools import paperscale as ps


def test_collect_writes_a_tidy_record_with_the_figures(tmp_path):
    src, root = kept_paper_run(tmp_path, paper_results())
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
    src, root = kept_paper_run(tmp_path, paper_results(profile="smoke"))
    with pytest.raises(ValueError, match="smoke"):
        ps.collect(src, root)


def test_profile_table_has_every_chapter_run_or_stopped(tmp_path):
    src, root = kept_paper_run(tmp_path, paper_results())
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


def test_a_record_is_dated_by_its_run_not_by_the_collect(tmp_path):
    import os

    src, root = kept_paper_run(tmp_path, paper_results())
    res = src / "paper_x" / "ch.json"
    when = 1_764_547_200  # 2025-12-01 00:00 UTC
    os.utime(res, (when + 43_200, when + 43_200))  # noon: the same day in any time zone
    [path] = ps.collect(src, root)
    assert json.loads(path.read_text())["date"] == "2025-12-01"


def test_main_records_the_runs_and_writes_the_table(tmp_path, capsys):
    src, root = kept_paper_run(tmp_path, paper_results())
    progress = tmp_path / "progress.json"
    progress.write_text(
        json.dumps({"chapters": {"paper_x/ch": {"seconds": 60.0, "rss_mb": 10.0, "error": None}}})
    )
    args = [str(src), "--progress", str(progress), "--root", str(root), "--machine", "box"]
    assert ps.main([*args, "--date", "2026-12-01", "--note", "One note."]) == 0
    record = json.loads((root / "book/generated/paper/paper_x/ch.json").read_text())
    assert record["seconds"] == 60.0 and record["machine"] == "box"
    table = (root / "book/generated/paper_profile.md").read_text()
    assert "One note." in table and "| `paper_x/ch` | 1.0 | 10 | 1 / 1 |" in table
    assert table in capsys.readouterr().out
