"""The test command relies on pytest-xdist's ``--dist loadgroup`` to build the book once (all
book tests in one group, on one worker). With pytest 9.2 and pytest-xdist 3.8 the groups are
silently ignored and every worker builds the book: this test fails if that happens again."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.slow  # 6.5 s (conftest.SLOW_SECONDS)
def test_loadgroup_keeps_a_group_on_one_worker(tmp_path):
    (tmp_path / "test_g.py").write_text(
        "import os, pytest\n"
        "@pytest.mark.xdist_group('g')\n"
        "@pytest.mark.parametrize('i', range(6))\n"
        "def test_g(i):\n"
        "    print('WORKER', os.environ['PYTEST_XDIST_WORKER'])\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-rA",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            str(tmp_path / "test_g.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    workers = {ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("WORKER")}
    assert len(workers) == 1, f"one group ran on several workers: {workers}\n{proc.stdout}"
