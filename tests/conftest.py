"""Shared test settings: every notebook a test runs uses the smoke profile."""
import os
from pathlib import Path

import pytest

os.environ.setdefault("BOOK_PROFILE", "smoke")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.md"))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
