"""``python -m twolayer.tools.claims``: the claims index as JSON from a results folder,
without a build; a statement whose only carrying check did not apply is "not applicable", and
a registry naming a check no page recorded makes the exit status 1."""

from __future__ import annotations

import json

from helpers import chapter_results
from twolayer.tools import claims

_res = chapter_results


def test_json_index_from_the_command_line(tmp_path, capsys):
    reg = tmp_path / "claims.yml"
    reg.write_text("paper_a:\n  - id: a-thm-1\n    text: t\n    checks: ['paper_a/x:c1']\n")
    (tmp_path / "res" / "paper_a").mkdir(parents=True)
    (tmp_path / "res" / "paper_a" / "x.json").write_text(
        json.dumps(_res({"c1": ("theorem", None, "a-thm-1")}))
    )
    assert claims.main([str(tmp_path / "res"), "--registry", str(reg)]) == 0
    out = json.loads(capsys.readouterr().out)
    (s,) = out["statements"]
    assert s["statement"] == "a-thm-1" and s["status"] == "not applicable"
    (c,) = s["carrying"]
    assert c["check"] == "paper_a/x:c1" and c["applies"] is False and c["kind"] == "theorem"
    assert set(c) >= {"value", "bound", "margin", "applies"}


def test_a_check_no_page_recorded_fails_the_command(tmp_path, capsys):
    reg = tmp_path / "claims.yml"
    reg.write_text("paper_a:\n  - id: a-thm-1\n    text: t\n    checks: ['paper_a/x:gone']\n")
    (tmp_path / "res" / "paper_a").mkdir(parents=True)
    (tmp_path / "res" / "paper_a" / "x.json").write_text(
        json.dumps(_res({"c1": ("theorem", True, "a-thm-1")}))
    )
    assert claims.main([str(tmp_path / "res"), "--registry", str(reg)]) == 1
    assert json.loads(capsys.readouterr().out)["problems"]
