"""``pytest --nbval`` on a chapter (notebooks/nbval_plugin.py, loaded as notebooks/conftest.py
loads it): it passes on the chapter as committed, and fails when a check of the chapter fails
and when a check's kind or result differs from the committed outputs. Run on a copy of
``paper_b/stage1`` (seconds) in a folder of its own, its compared outputs refreshed there by
``tests/nbval_update.py`` first (as ``make nbval-update`` does in the checkout)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT

# one worker: the chapter's copy is refreshed once per module
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("nbval_plugin")]
CHAPTER = ROOT / "notebooks" / "paper_b" / "stage1.ipynb"


def _nbval(nb, *args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "notebooks"), env.get("PYTHONPATH", "")])
    env["BOOK_PROFILE"] = "smoke"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "nbval_plugin", "-p", "no:cacheprovider",
         "-p", "no:xdist", "--rootdir", str(nb.parent), "-q", *args, str(nb)],
        capture_output=True, text=True, cwd=nb.parent, env=env, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "tests"))
    import nbval_update

    nb = tmp_path_factory.mktemp("nbval") / CHAPTER.name
    shutil.copy(CHAPTER, nb)
    assert nbval_update.refresh(nb) == 2
    return nb


def test_nbval_passes_and_lax_too(refreshed):
    for mode in ("--nbval", "--nbval-lax"):
        proc = _nbval(refreshed, mode)
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_a_check_planted_to_fail_fails_the_chapter(refreshed, tmp_path):
    nb = tmp_path / refreshed.name
    data = json.loads(refreshed.read_text())
    planted = 0
    for cell in data["cells"]:
        src = "".join(cell["source"])
        call = "chapter.epsilon_net_refines_with_m(P, N, asm[2]),"
        if call in src:
            # "the slope is below 0" becomes "below -10^9": the observation is now false
            planted_call = f'__import__("dataclasses").replace({call[:-1]}, bound=-1e9),'
            cell["source"] = src.replace(call, planted_call, 1)
            planted += 1
    assert planted == 1
    nb.write_text(json.dumps(data))
    proc = _nbval(nb, "--nbval-lax")
    assert proc.returncode != 0
    assert "CheckFailed" in proc.stdout and "epsilon_net_refines_with_m" in proc.stdout


@pytest.mark.parametrize(
    "old, new",
    [("<td>observation</td>", "<td>theorem</td>"), ("<td>pass</td>", "<td>not applicable</td>")],
    ids=["kind", "result"],
)
def test_a_check_table_that_changed_fails_against_the_committed_outputs(
    refreshed, tmp_path, old, new
):
    nb = tmp_path / refreshed.name
    data = json.loads(refreshed.read_text())
    changed = 0
    for cell in data["cells"]:
        if "contract.finish()" in "".join(cell["source"]):
            html = cell["outputs"][0]["data"]["text/html"]
            text = "".join(html)
            assert old in text
            cell["outputs"][0]["data"]["text/html"] = [text.replace(old, new, 1)]
            changed += 1
    assert changed == 1
    nb.write_text(json.dumps(data))
    proc = _nbval(nb, "--nbval")
    assert proc.returncode != 0 and "1 failed" in proc.stdout, proc.stdout[-3000:]
