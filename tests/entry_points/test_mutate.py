"""tests/mutate.py's own logic, without mutmut: the diff key of a mutant (and that an edit
elsewhere in the function leaves it alone), stale equivalent keys, unknown must-kill names, the
accounting of must-kill survivors, the summary's format and when it is written, all on fake
mutmut files and outputs."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutate_script", ROOT / "tests" / "mutate.py")
M = importlib.util.module_from_spec(_spec)
sys.modules["mutate_script"] = M
_spec.loader.exec_module(M)

Span = namedtuple("Span", "start end")


@pytest.fixture(autouse=True)
def _no_writes_to_the_checkout(monkeypatch, tmp_path):
    """The summary and the checkpoint of every test go to its own folder: the checkout's are
    never written nor deleted (a completed fake run deletes the checkpoint)."""
    monkeypatch.setattr(M, "SUMMARY", tmp_path / "summary.md")
    monkeypatch.setattr(M, "CHECKPOINT", tmp_path / "checkpoint.json")


MOD = "twolayer.paper_a.kkt"


def _file(functions: dict[str, list[str]]):
    """A fake mutmut-generated file: the generated functions one after the other, their spans."""
    lines, spans = [], {}
    for name, body in functions.items():
        spans[name] = Span(len(lines) + 1, len(lines) + len(body))
        lines += body
    names = [n for n in functions if not n.endswith("__mutmut_orig")]
    return "\n".join(lines), names, spans


def _function(name: str, line: str, other: str = "x = 1") -> list[str]:
    return [f"def {name}(a, y):", f"    {other}", f"    {line}", "    return pos"]


def test_function_of_functions_and_methods():
    assert M.function_of(f"{MOD}.x_certify__mutmut_12") == (MOD, "certify")
    assert M.function_of(f"{MOD}.x__np__mutmut_1") == (MOD, "_np")
    assert M.function_of("twolayer.paper_b.population.xǁNetǁunflat__mutmut_3") == (
        "twolayer.paper_b.population",
        "Net.unflat",
    )
    assert M.function_of("twolayer.x.xǁ_Stepsǁ__init____mutmut_2")[1] == "_Steps.__init__"


def test_diff_key_is_the_changed_lines_whitespace_normalized():
    code, names, spans = _file(
        {
            "x_f__mutmut_orig": _function("x_f__mutmut_orig", "pos = (y  >  0).astype(float)"),
            "x_f__mutmut_1": _function("x_f__mutmut_1", "pos = (y >= 0).astype(float)"),
        }
    )
    (mu,) = M.mutants_of_file(code, names, spans, MOD).values()
    assert mu.name == f"{MOD}.x_f__mutmut_1" and mu.function == "f"
    # the renamed def line is not a change; whitespace runs are one space
    assert mu.key == (MOD, "f", "pos = (y > 0).astype(float)", "pos = (y >= 0).astype(float)")


def test_diff_key_survives_an_edit_elsewhere_and_a_renumbering():
    def mutants(other, extra):
        fns = {"x_f__mutmut_orig": _function("x_f__mutmut_orig", "pos = y > 0", other)}
        for k in range(1, extra + 1):  # new mutants before ours shift its number
            fns[f"x_f__mutmut_{k}"] = _function(f"x_f__mutmut_{k}", "pos = y > 0", "x = None")
        fns[f"x_f__mutmut_{extra + 1}"] = _function(
            f"x_f__mutmut_{extra + 1}", "pos = y >= 0", other
        )
        return M.mutants_of_file(*_file(fns), MOD)

    before = mutants("x = 1", 0)
    after = mutants("x = 2  # edited", 3)
    assert list(before) == [f"{MOD}.x_f__mutmut_1"]
    assert f"{MOD}.x_f__mutmut_4" in after
    assert before[f"{MOD}.x_f__mutmut_1"].key == after[f"{MOD}.x_f__mutmut_4"].key


def test_the_same_change_on_two_equal_lines_is_keyed_with_the_line_above():
    """``break`` made ``return`` under two different ifs: the bare diffs are equal, so each
    key carries the line above its change (one entry cannot list both); a change made once
    keeps its bare key."""

    def body(name, first="break", second="break", tail="x = 1"):
        return [
            f"def {name}(a):",
            "    for v in a:",
            "        if v > 1:",
            f"            {first}",
            "        if v < 0:",
            f"            {second}",
            f"    {tail}",
        ]

    code, names, spans = _file(
        {
            "x_f__mutmut_orig": body("x_f__mutmut_orig"),
            "x_f__mutmut_1": body("x_f__mutmut_1", first="return"),
            "x_f__mutmut_2": body("x_f__mutmut_2", second="return"),
            "x_f__mutmut_3": body("x_f__mutmut_3", tail="x = 2"),
        }
    )
    got = {
        n.rsplit("_", 1)[1]: mu.key[2:]
        for n, mu in M.mutants_of_file(code, names, spans, MOD).items()
    }
    assert got == {
        "1": ("if v > 1:\nbreak", "if v > 1:\nreturn"),
        "2": ("if v < 0:\nbreak", "if v < 0:\nreturn"),
        "3": ("x = 1", "x = 2"),
    }


def test_a_method_mutant_is_keyed_by_class_and_method():
    code, names, spans = _file(
        {
            "xǁNetǁunflat__mutmut_orig": [
                "    def xǁNetǁunflat__mutmut_orig(v):",
                "        return np.asarray(v, dtype=np.float64)",
            ],
            "xǁNetǁunflat__mutmut_1": [
                "    def xǁNetǁunflat__mutmut_1(v):",
                "        return np.asarray(v, dtype=None)",
            ],
        }
    )
    (mu,) = M.mutants_of_file(code, names, spans, "twolayer.paper_b.population").values()
    assert mu.function == "Net.unflat"
    assert mu.after == "return np.asarray(v, dtype=None)"


def _mutant(n, function, before="a", after="b", module=MOD):
    return M.Mutant(f"{module}.x_{function}__mutmut_{n}", module, function, before, after)


def test_stale_equivalent_keys_are_named(monkeypatch):
    live = _mutant(1, "certify", "u > 0", "u >= 0")
    monkeypatch.setattr(
        M,
        "EQUIVALENT",
        {
            live.key: "matches",
            (MOD, "certify", "u > 0", "u > 1"): "matches nothing",
            ("twolayer.tools.sweep", "gather", "a", "b"): "another module: not checked here",
        },
    )
    assert M.stale_keys({live.name: live}, [MOD]) == [(MOD, "certify", "u > 0", "u > 1")]


def test_unknown_must_kill_names(monkeypatch):
    monkeypatch.setattr(M, "MUST_KILL", {MOD: ("certify", "renamed_away")})
    mu = _mutant(1, "certify")
    assert M.unknown_must_kill({mu.name: mu}, [MOD]) == [f"{MOD}.renamed_away"]


def test_parse_results():
    text = (
        f"    {MOD}.x_certify__mutmut_1: killed\n"
        f"    {MOD}.xǁNetǁunflat__mutmut_2: survived\n"
        f"    {MOD}.x_kappa__mutmut_3: no tests\n"
        "some other line\n"
    )
    assert M.parse_results(text) == {
        f"{MOD}.x_certify__mutmut_1": "killed",
        f"{MOD}.xǁNetǁunflat__mutmut_2": "survived",
        f"{MOD}.x_kappa__mutmut_3": "no tests",
    }


@pytest.fixture
def fake(monkeypatch):
    """Five mutants of certify (must-kill) and two of a helper, with their statuses."""
    monkeypatch.setattr(M, "MUST_KILL", {MOD: ("certify",)})
    ms = [
        _mutant(1, "certify", "a", "killed"),
        _mutant(2, "certify", "a", "timeout"),
        _mutant(3, "certify", "a", "equivalent"),
        _mutant(4, "certify", "a", "survives"),
        _mutant(5, "certify", "a", "unreached"),
        _mutant(6, "helper", "a", "survives"),
        _mutant(7, "helper", "a", "listed but killed"),
    ]
    monkeypatch.setattr(M, "EQUIVALENT", {ms[2].key: "why", ms[6].key: "why"})
    status = dict(
        zip(
            [m.name for m in ms],
            ["killed", "timeout", "survived", "survived", "no tests", "survived", "killed"],
        )
    )
    return {m.name: m for m in ms}, status


def test_account_sorts_must_kill_survivors_from_the_rest(fake):
    mutants, status = fake
    rep = M.account(mutants, status, [MOD])
    assert [m.after for m in rep.must_kill] == ["survives", "unreached"]
    assert [m.after for m in rep.survivors] == ["survives"]
    assert [m.after for m in rep.killed_equivalent] == ["listed but killed"]
    assert rep.counts[MOD] == {
        "killed": 2,
        "timeout": 1,
        "equivalent": 1,
        "survived": 2,
        "no tests": 1,
    }
    assert rep.unchecked == 0


def test_account_counts_a_mutant_without_result_as_unchecked(fake):
    mutants, status = fake
    del status[f"{MOD}.x_certify__mutmut_1"]
    rep = M.account(mutants, status, [MOD])
    assert rep.unchecked == 1 and rep.counts[MOD]["not checked"] == 1
    assert f"{MOD}.x_certify__mutmut_1" in [m.name for m in rep.must_kill]


def test_summary_format(fake):
    mutants, status = fake
    rep = M.account(mutants, status, [MOD])
    text = M.summary_text(rep, "2026-12-02", "3.8.1", [MOD], "0123abcd")
    lines = text.splitlines()
    assert lines[0] == "# Mutation testing: summary"
    assert "on 2026-12-02, at commit 0123abcd, with mutmut 3.8.1" in text
    header = "| module | mutants | killed | timeout | survived | equivalent | no tests | other |"
    assert lines[4] == header + " must-kill left |"
    assert "| paper_a.kkt | 7 | 2 | 1 | 2 | 1 | 1 | 0 | 2 |" in lines
    assert lines[-3] == "| **all** | 7 | 2 | 1 | 2 | 1 | 1 | 0 | 2 |"
    assert lines[-1].startswith("Listed as equivalent, yet killed: 1 (0 in a clean run")


def test_checkout_commit_names_this_checkout():
    head = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=M.ROOT, capture_output=True, text=True
    )
    if head.returncode:
        pytest.skip("not a Git checkout")
    assert M.checkout_commit().split("+")[0] == head.stdout.strip()


def test_a_resumed_run_names_only_what_the_stopped_one_left():
    status = {
        f"{MOD}.x_certify__mutmut_1": "killed",
        f"{MOD}.x_certify__mutmut_2": "not checked",
        f"{MOD}.x_certify__mutmut_3": "check was interrupted by user",
        f"{MOD}.x_certify__mutmut_4": "survived",
        f"{MOD}.x_certify__mutmut_5": "timeout",
        "twolayer.tools.sweep.x_other__mutmut_1": "not checked",
    }
    pats = [f"{MOD}.*", "twolayer.tools.sweep.x_gather__mutmut_*"]
    assert M.unfinished(status, pats) == [
        f"{MOD}.x_certify__mutmut_2",
        f"{MOD}.x_certify__mutmut_3",
    ]


def test_a_recheck_names_only_the_must_kill_survivors():
    status = {
        f"{MOD}.x_certify__mutmut_1": "killed",
        f"{MOD}.x_certify__mutmut_2": "survived",
        f"{MOD}.x_certify__mutmut_3": "no tests",
        f"{MOD}.x_certify__mutmut_4": "timeout",
        f"{MOD}.x_three_point_table__mutmut_1": "survived",  # not a must-kill function
    }
    assert "three_point_table" not in M.MUST_KILL[MOD]
    want = [f"{MOD}.x_certify__mutmut_2", f"{MOD}.x_certify__mutmut_3"]
    assert M.must_kill_survivors(status, [f"{MOD}.*"]) == want
    assert M.must_kill_survivors(status, ["twolayer.paper_b.*"]) == []


def test_write_atomically(tmp_path):
    path = tmp_path / "summary.md"
    M.write_atomically(path, "one\n")
    M.write_atomically(path, "two\n")
    assert path.read_text() == "two\n" and [p.name for p in tmp_path.iterdir()] == ["summary.md"]


def _run_main(monkeypatch, tmp_path, fake, argv):
    mutants, status = fake
    monkeypatch.setattr(M, "stage", lambda: tmp_path)
    monkeypatch.setattr(M, "SUMMARY", tmp_path / "summary.md")
    monkeypatch.setattr(M, "MODULES", {"kkt": MOD})
    monkeypatch.setattr(M, "generate", lambda modules, *a: mutants)
    monkeypatch.setattr(M, "mutmut_version", lambda: "3.8.1")
    results = "".join(f"    {k}: {v}\n" for k, v in status.items())
    calls = []

    def run(cmd, **kw):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout=results if "results" in cmd else "")

    monkeypatch.setattr(M.subprocess, "run", run)
    return M.main(argv), calls


def test_main_fails_on_a_must_kill_survivor_and_writes_the_summary(monkeypatch, tmp_path, fake):
    rc, calls = _run_main(monkeypatch, tmp_path, fake, ["--max-children", "1"])
    assert rc == 1
    assert calls[0][-4:] == ["run", "--max-children", "1", f"{MOD}.*"]
    assert "| paper_a.kkt | 7 |" in (tmp_path / "summary.md").read_text()


def test_main_runs_each_timeout_again_before_the_report(monkeypatch, tmp_path, fake):
    """A timeout may be a loaded machine, not the mutant: it is run once more, by name."""
    rc, calls = _run_main(monkeypatch, tmp_path, fake, ["--max-children", "1"])
    runs = [c for c in calls if "run" in c]
    assert runs[-1][-4:] == ["run", "--max-children", "1", f"{MOD}.x_certify__mutmut_2"]
    assert len(runs) == 2


def test_main_passes_when_every_must_kill_mutant_dies(monkeypatch, tmp_path, fake):
    mutants, status = fake
    for n in (4, 5):
        status[f"{MOD}.x_certify__mutmut_{n}"] = "killed"
    status[f"{MOD}.x_helper__mutmut_7"] = "survived"  # the listed equivalent survives
    rc, _ = _run_main(monkeypatch, tmp_path, (mutants, status), ["kkt"])
    assert rc == 0


def test_main_fails_when_a_listed_equivalent_is_killed(monkeypatch, tmp_path, fake):
    """Every must-kill mutant dies, but so does one listed as equivalent: a wrong reason, or
    a test failing for another cause (as when one mutant's blocked download failed every later
    session), so the run fails and says which."""
    mutants, status = fake
    for n in (4, 5):
        status[f"{MOD}.x_certify__mutmut_{n}"] = "killed"
    rc, _ = _run_main(monkeypatch, tmp_path, (mutants, status), ["kkt"])
    assert rc == 1


def test_main_fails_on_a_stale_key(monkeypatch, tmp_path, fake):
    mutants, status = fake
    for n in (4, 5):
        status[f"{MOD}.x_certify__mutmut_{n}"] = "killed"
    stale = {**M.EQUIVALENT, (MOD, "certify", "gone", "gone too"): "why"}
    monkeypatch.setattr(M, "EQUIVALENT", stale)
    rc, _ = _run_main(monkeypatch, tmp_path, (mutants, status), [])
    assert rc == 1


def test_no_summary_from_a_subset_or_an_unfinished_run(monkeypatch, tmp_path, fake):
    mutants, status = fake
    del status[f"{MOD}.x_certify__mutmut_1"]
    _run_main(monkeypatch, tmp_path, (mutants, status), [])
    assert not (tmp_path / "summary.md").exists()


def test_patterns_select_the_resume_logic_only():
    assert M.patterns([MOD]) == [f"{MOD}.*"]
    assert M.patterns(["twolayer.tools.sweep"]) == [
        f"twolayer.tools.sweep.x_{f}__mutmut_*" for f in ("gather", "_flatten")
    ]
    assert M.patterns(["twolayer.tools.runner"]) == ["twolayer.tools.runner.x_is_done__mutmut_*"]


def test_configuration_agrees_with_the_script():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    files = {f"lib/{m.replace('.', '/')}.py" for m in M.MODULES.values()}
    assert set(conf["only_mutate"]) == files
    assert all((ROOT / f).is_file() for f in files)
    assert set(M.MUST_KILL) <= set(M.MODULES.values())
    assert {k[0] for k in M.EQUIVALENT} <= set(M.MODULES.values())
    # an equivalent mutant of a must-kill list's module names a function that exists there
    for mod, func, _, _ in M.EQUIVALENT:
        text = (ROOT / f"lib/{mod.replace('.', '/')}.py").read_text()
        assert f"def {func.rpartition('.')[2]}(" in text, (mod, func)


# a run done in parts: the checkpoint


def _status(**by_number):
    return {f"{MOD}.x_certify__mutmut_{k[1:]}": v for k, v in by_number.items()}


CODE = {"lib": "a" * 40, "pyproject.toml": "b" * 40, "requirements.lock": "c" * 40}


def test_a_checkpoint_keeps_the_finished_results_only():
    status = _status(n1="killed", n2="not checked", n3="survived", n10="killed", n4="timeout")
    status["twolayer.tools.sweep.xǁSweepǁgather__mutmut_2"] = "check was interrupted by user"
    stamp = {"commit": "0123abcd", "date": "2026-12-03"}
    data = M.checkpoint_data(status, CODE, "3.8.1", stamp, stamp)
    assert data["results"] == {
        f"{MOD}.x_certify": {"killed": [1, 10], "survived": [3], "timeout": [4]}
    }
    assert M.checkpoint_status(data) == _status(
        n1="killed", n3="survived", n4="timeout", n10="killed"
    )
    assert M.json.loads(M.checkpoint_text(data)) == data


def test_a_checkpoint_of_other_code_or_mutmut_stops_the_run(tmp_path):
    stamp = {"commit": "0123abcd", "date": "2026-12-03"}
    path = tmp_path / "checkpoint.json"
    assert M.load_checkpoint(path, CODE, "3.8.1") is None  # none yet
    path.write_text(M.checkpoint_text(M.checkpoint_data({}, CODE, "3.8.1", stamp, stamp)))
    assert M.load_checkpoint(path, CODE, "3.8.1")["code"] == CODE
    with pytest.raises(SystemExit, match=r"\(lib changed\)"):
        M.load_checkpoint(path, {**CODE, "lib": "d" * 40}, "3.8.1")
    with pytest.raises(SystemExit, match=r"mutmut 3\.8\.1 -> 3\.9\.0"):
        M.load_checkpoint(path, CODE, "3.9.0")


def test_merged_results_prefer_what_this_run_finished():
    stamp = {"commit": "0123abcd", "date": "2026-12-03"}
    ck = M.checkpoint_data(_status(n1="survived", n2="killed"), CODE, "3.8.1", stamp, stamp)
    now = _status(n1="killed", n2="not checked", n3="survived")
    assert M.merged(ck, now) == _status(n1="killed", n2="killed", n3="survived")
    assert M.merged(None, now) == _status(n1="killed", n3="survived")


def test_code_hashes_are_gits_and_refuse_uncommitted_code(monkeypatch, tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "m.py").write_text("x = 1\n")
    for name in ("pyproject.toml", "requirements.lock"):
        (tmp_path / name).write_text(name + "\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    monkeypatch.setattr(M, "ROOT", tmp_path)
    blob = subprocess.run(
        ["git", "hash-object", str(tmp_path / "pyproject.toml")], capture_output=True, text=True
    ).stdout.strip()
    hashes = M.code_hashes()
    assert hashes["pyproject.toml"] == blob and set(hashes) == set(M.CODE)
    (tmp_path / "lib" / "m.py").write_text("x = 2\n")
    with pytest.raises(SystemExit, match="uncommitted changes"):
        M.code_hashes()


def _run_parts(monkeypatch, tmp_path, fake, argv, before, after, commit="feedbeef"):
    """main() with mutmut's results ``before`` and ``after`` its run, the checkpoint in
    ``tmp_path``: (exit code, the names mutmut was asked to run or None)."""
    mutants, _ = fake
    monkeypatch.setattr(M, "stage", lambda: tmp_path)
    monkeypatch.setattr(M, "WORK", tmp_path)
    monkeypatch.setattr(M, "SUMMARY", tmp_path / "summary.md")
    monkeypatch.setattr(M, "CHECKPOINT", tmp_path / "checkpoint.json")
    monkeypatch.setattr(M, "MODULES", {"kkt": MOD})
    monkeypatch.setattr(M, "generate", lambda modules, *a: mutants)
    monkeypatch.setattr(M, "mutmut_version", lambda: "3.8.1")
    monkeypatch.setattr(M, "code_hashes", lambda: CODE)
    monkeypatch.setattr(M, "checkout_commit", lambda: commit)
    ran = []

    def run(cmd, **kw):
        if "results" in cmd:
            status = after if ran else before
            out = "".join(f"    {k}: {v}\n" for k, v in status.items())
            return subprocess.CompletedProcess(cmd, 0, stdout=out)
        ran.append(cmd[cmd.index("run") + 1 :])
        return subprocess.CompletedProcess(cmd, 0, stdout="")

    monkeypatch.setattr(M.subprocess, "run", run)
    return M.main(argv), (ran[0] if ran else None)


def test_a_run_in_two_parts_counts_both_and_names_where_it_began(monkeypatch, tmp_path, fake):
    mutants, status = fake
    for n in (4, 5):
        status[f"{MOD}.x_certify__mutmut_{n}"] = "killed"
    status[f"{MOD}.x_helper__mutmut_7"] = "survived"  # the listed equivalent survives
    names = sorted(status, key=M._order)
    first = {n: (st if n in names[:4] else "not checked") for n, st in status.items()}
    # part one, stopped after four mutants: saved
    rc, ran = _run_parts(monkeypatch, tmp_path, fake, ["--checkpoint"], first, first)
    assert rc == 0 and ran is None
    data = M.json.loads((tmp_path / "checkpoint.json").read_text())
    assert data["started"]["commit"] == "feedbeef" and len(M.checkpoint_status(data)) == 4
    # part two, in a checkout where mutmut never ran: only the other three run
    second = {n: status[n] for n in names[4:]}
    rc, ran = _run_parts(monkeypatch, tmp_path, fake, ["--resume"], {}, second, "later")
    assert rc == 0 and ran == names[4:]
    summary = (tmp_path / "summary.md").read_text()
    assert "at commit later (the run began at commit feedbeef on" in summary
    # killed 3 (1, 4, 5), timeout 1 (2), survived 1 (the helper's 6), equivalent 2 (3, 7)
    assert "| paper_a.kkt | 7 | 3 | 1 | 1 | 2 | 0 | 0 | 0 |" in summary
    assert not (tmp_path / "checkpoint.json").exists()


def test_a_checkpoint_needs_every_module(monkeypatch, tmp_path, fake):
    monkeypatch.setattr(M, "MODULES", {"kkt": MOD, "sweep": "twolayer.tools.sweep"})
    monkeypatch.setattr(M, "CHECKPOINT", tmp_path / "checkpoint.json")
    assert M.main(["--checkpoint", "kkt"]) == 2
    assert not (tmp_path / "checkpoint.json").exists()
