"""``twolayer`` (lib/twolayer/tools/cli.py): ``twolayer run`` on a valid smoke run, a failing check
and bad input (nothing written), ``twolayer list``, the delegated entry points, and the
command every page shows under its parameter table."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import nbformat
import pytest

from helpers import ROOT, write_tiny
from twolayer.page.contract import run_command, yaml_value
from twolayer.tools import cli

STAGE1 = ROOT / "notebooks" / "paper_b" / "stage1.ipynb"


@pytest.mark.parametrize(
    "value",
    [
        0,
        7,
        -3,
        0.5,
        1e-05,
        2.5e10,
        True,
        False,
        None,
        "digits",
        "cifar10",
        "auto",
        "cuda:1",
        "1.5",
        "yes",
        "a b",
        "",
        "x,y",
        [4, 8, 16],
        [0.1, 1e-3],
        [],
        ["a", "b"],
    ],
)
def test_yaml_value_reads_back_through_the_cli(value):
    """What the page's command writes, `twolayer run -p` reads back as the same value."""
    text = yaml_value(value)
    (item,) = shlex.split(shlex.quote(f"x={text}"))
    assert cli.parse_params([item]) == {"x": value}


def test_parse_value_reads_exponents_as_numbers():
    assert cli.parse_value("1e-3") == 0.001 and cli.parse_value("[4, 8]") == [4, 8]
    assert cli.parse_value("digits") == "digits"


def test_run_command_is_quoted_and_ordered():
    cmd = run_command("paper_a/setting", "book", {"gamma": 0.5, "ns": [4, 8]})
    assert cmd == "twolayer run paper_a/setting --profile book -p gamma=0.5 -p 'ns=[4, 8]'"


def test_page_command_names_only_what_differs_from_the_defaults():
    """In-process (the module's SPEC gives the parameters cell's defaults): the command has the
    profile and a ``-p`` for each changed parameter, never results_path or a path of its own."""
    from twolayer.paper_b.chapters import stage1

    contract = stage1.SPEC.unbound()
    contract.namespace.update(stage1.SPEC.defaults)
    contract.namespace.update(profile="smoke", seed=3, r=2, results_path="/tmp/x.json")
    contract.validate()
    assert contract.command() == "twolayer run paper_b/stage1 --profile smoke -p seed=3 -p r=2"
    contract.namespace.update(stage1.SPEC.defaults)  # back to the defaults
    contract.namespace["profile"] = None
    contract.validate()
    assert contract.command() == "twolayer run paper_b/stage1 --profile smoke"  # $BOOK_PROFILE


def test_bad_parameter_exits_with_the_notebooks_message_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    rc = cli.main(["run", "paper_b/stage1", "--profile", "smoke", "-p", "r=7", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "ParameterError: parameter 'r' must be one of 2, 3; got 7" in err, err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_unknown_parameter_and_chapter_exit_two(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "paper_b/stage1", "-p", "not_a_parameter=1"]) == 2
    assert "unknown parameter 'not_a_parameter'" in capsys.readouterr().err
    assert cli.main(["run", "paper_c/nothing"]) == 2
    err = capsys.readouterr().err
    assert "unknown chapter 'paper_c/nothing'" in err and "paper_a/setting" in err
    assert cli.main(["run", "paper_b/stage1", "-p", "results_path=x.json"]) == 2
    assert cli.main(["run", "paper_b/stage1", "-p", "novalue"]) == 2
    assert not list(tmp_path.iterdir()), "nothing may be written"


def test_list_shows_chapters_and_parameters(capsys):
    assert cli.main(["list", "paper_b/stage1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("paper_b/stage1  Stage 1: one step finds the subspace")
    assert "    teacher = random: " in out and "    ds = None (from the profile): " in out


@pytest.mark.parametrize("command", cli.DELEGATED)
def test_entry_points_are_reached(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([command, "--help"])
    assert exc.value.code == 0
    assert f"twolayer.tools.{command}" in capsys.readouterr().out


def test_console_script_is_installed():
    script = Path(sys.executable).with_name("twolayer")
    assert script.exists(), "pip install --no-deps -e . (the Makefile's install) creates it"


def test_check_rows_show_each_check_as_the_page_does():
    """The printed table: the library's one formatter for the numbers, the page's bound text,
    the margin on the bound's side (0.25 against <= 1: 0.75), not-applicable rows without one,
    theorems first."""
    results = {
        "checks": {"obs": True, "thm": False, "na": None},
        "check_details": {
            "obs": {"kind": "observation", "value": 12345.6, "op": "in", "bound": [0, 2e4]},
            "thm": {
                "kind": "theorem",
                "value": 0.25,
                "op": "<=",
                "bound": 1,
                "statement": "a-thm-3-2",
            },
            "na": {"kind": "sanity", "value": None, "op": ">", "bound": 0.0, "reason": "too short"},
        },
    }
    assert cli.check_rows(results) == [
        ("theorem", "thm", "Paper A, Theorem 3.2", "0.25", "≤ 1", "0.75", "FAIL"),
        ("observation", "obs", "—", "1.23e4", "in [0, 20000]", "7654", "pass"),
        ("sanity", "na", "—", "—", "> 0", "—", "not applicable: too short"),
    ]


@pytest.mark.slow
def test_run_a_chapter(tmp_path, capsys, monkeypatch):
    """A valid smoke run: the check table, the executed notebook and the results, exit 0;
    the executed page shows the very command that was run."""
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["run", "paper_b/stage1", "--profile", "smoke", "-p", "seed=3"])
    out = capsys.readouterr().out
    assert rc == 0, out
    run_dir = tmp_path / "runs" / "paper_b" / "stage1"
    results = json.loads((run_dir / "results.json").read_text())
    assert results["params"]["seed"] == 3 and results["params"]["profile"] == "smoke"
    assert "kind" in out and "margin" in out and "theorem" in out and " pass" in out
    assert "0 failed" in out
    for name in results["checks"]:
        assert name in out
    nb = nbformat.read(run_dir / "notebook.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if "contract.parameter_table()" in c.source]
    shown = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)
    assert "twolayer run paper_b/stage1 --profile smoke -p seed=3" in shown, shown


@pytest.mark.slow
def test_failing_check_exits_one(tmp_path, capsys):
    """A notebook of the contract whose check fails (tests/helpers.py TINY with fail=true):
    exit 1, the failing check named, the executed notebook kept, no results file."""
    nb = write_tiny(tmp_path / "tiny.ipynb")
    doc = nbformat.read(nb, as_version=4)  # chapters open with their install cell
    doc.cells.insert(0, nbformat.v4.new_code_cell("# the install cell"))
    nbformat.write(doc, nb)
    out = tmp_path / "out"
    rc = cli.main(["run", str(nb), "-p", "fail=true", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 1, text
    assert "sanity check 'not_asked_to_fail' failed" in text, text
    assert (out / "notebook.ipynb").exists() and not (out / "results.json").exists()
    # and the same notebook without the planted failure passes
    assert cli.main(["run", str(nb), "--out", str(tmp_path / "ok")]) == 0
    assert "not_asked_to_fail" in capsys.readouterr().out
