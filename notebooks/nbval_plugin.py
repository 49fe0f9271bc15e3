"""The hooks behind ``pytest --nbval`` on the chapter notebooks: ``conftest.py`` beside
this file imports them, and ``-p nbval_plugin`` loads them for a notebook outside this
folder, as the tests of this plugin do. See ``notebooks/conftest.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "guards"))
from network_plugin import (  # noqa: E402, F401  (pytest hooks, registered by import)
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_sessionfinish,
    pytest_sessionstart,
)

CHECK_TAG = "nbval-check-output"
SANITIZE = HERE / "nbval_sanitize.cfg"
# a smoke chapter runs in seconds; a hung cell fails with its message before
# the test timeout (300 s, pyproject.toml) stops it (order: tests/entry_points/
# test_timeouts.py)
CELL_TIMEOUT = 240


def pytest_configure(config):
    config.addinivalue_line("markers", "notebook: tests of the chapter notebooks")
    opt = config.option
    if getattr(opt, "nbval_sanitize_with", "unset") is None:
        opt.nbval_sanitize_with = str(SANITIZE)
    if hasattr(opt, "nbval_cell_timeout") and str(opt.nbval_cell_timeout) == "2000":
        opt.nbval_cell_timeout = CELL_TIMEOUT


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is None or not hasattr(item, "options"):
            continue  # not an nbval cell
        tags = cell.metadata.get("tags", [])
        item.options["check"] = CHECK_TAG in tags
        item.add_marker(pytest.mark.notebook)
        if config.pluginmanager.hasplugin("xdist"):
            group = f"nbval:{Path(str(item.fspath)).name}"
            item.add_marker(pytest.mark.xdist_group(group))
