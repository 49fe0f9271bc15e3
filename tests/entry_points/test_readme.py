"""The README: a short page (about 800 words) whose library example runs as printed. Dated
measurements live on the book's "Execution times" page (``book/timings.md``) and operational
detail on its "How to run" page (``book/how-to-run.md``), not in the README."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from helpers import ROOT

README = ROOT / "README.md"
MAX_WORDS = 900


def readme_example() -> str:
    """The first ```python block of the README."""
    text = README.read_text(encoding="utf-8")
    m = re.search(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert m, "the README has a ```python example"
    return m.group(1)


def test_readme_is_short_and_holds_no_dated_measurement():
    text = README.read_text(encoding="utf-8")
    assert len(text.split()) <= MAX_WORDS, "the README is about 800 words; detail goes to book/"
    dates = re.findall(r"\b20\d\d-\d\d-\d\d\b", text)
    assert not dates, f"dated measurements belong on book/timings.md, not the README: {dates}"


def test_readme_example_is_about_ten_lines():
    lines = readme_example().strip("\n").splitlines()
    assert 5 <= len(lines) <= 12, len(lines)


@pytest.mark.slow
def test_readme_example_runs(tmp_path):
    """The example, as printed, in a fresh interpreter outside the checkout (smoke profile)."""
    script = tmp_path / "example.py"
    script.write_text(readme_example(), encoding="utf-8")
    env = {**os.environ, "BOOK_PROFILE": "smoke", "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip(), "the example prints what it computed"
    assert " False " not in proc.stdout, f"a check of the example failed:\n{proc.stdout}"
