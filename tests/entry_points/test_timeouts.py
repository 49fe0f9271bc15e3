"""The timeouts are ordered cell < test < group, so that each level's own message fires
first: a hung cell fails with the cell named (helpers.CELL_TIMEOUT, nbval's cell timeout)
before pytest-timeout stops its test (``timeout`` in pyproject.toml); the book build stops
itself (helpers.BUILD_TIMEOUT) before its group's timeout (helpers.GROUP_TIMEOUT)."""

from __future__ import annotations

import re

import tomllib

from helpers import BUILD_TIMEOUT, CELL_TIMEOUT, GROUP_TIMEOUT, ROOT


def _nbval_cell_timeout() -> int:
    """nbval's cell timeout, as notebooks/nbval_plugin.py assigns it."""
    text = (ROOT / "notebooks" / "nbval_plugin.py").read_text(encoding="utf-8")
    return int(re.search(r"^CELL_TIMEOUT = (\d+)$", text, re.M).group(1))


def test_timeouts_are_ordered_cell_test_group():
    test = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"][
        "timeout"
    ]
    assert _nbval_cell_timeout() == CELL_TIMEOUT
    assert CELL_TIMEOUT < test < GROUP_TIMEOUT, (CELL_TIMEOUT, test, GROUP_TIMEOUT)
    assert test < BUILD_TIMEOUT < GROUP_TIMEOUT, (test, BUILD_TIMEOUT, GROUP_TIMEOUT)
