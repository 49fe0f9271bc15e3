"""The build cache's library key (book/_ext/twolayer_book.py): a chapter runs again exactly
when a library module it imports, directly or through the library, changes."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def ext(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location(
        "twolayer_book", ROOT / "book/_ext/twolayer_book.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lib = tmp_path / "lib"
    shutil.copytree(
        ROOT / "lib" / "twolayer", lib / "twolayer", ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(mod, "LIB", lib)
    monkeypatch.setenv("BOOK_PROFILE", "smoke")
    return mod, lib


def _names(mod, lib, code):
    return {str(p.relative_to(lib)) for p in mod.library_files(code)}


def test_paper_b_chapter_depends_on_paper_b_and_common_only(ext):
    mod, lib = ext
    names = _names(
        mod,
        lib,
        "from twolayer.paper_b import population as pop\n"
        "from twolayer.page.contract import Contract\n",
    )
    assert "twolayer/paper_b/population.py" in names
    assert "twolayer/paper_b/teacher.py" in names  # population imports Teacher
    assert "twolayer/paper_b/kernels.py" in names  # ... and the kernels, through teacher too
    assert "twolayer/page/checks.py" in names  # contract imports checks
    assert not any(n.startswith("twolayer/paper_a") for n in names)


def test_imports_inside_functions_count(ext):
    mod, lib = ext
    # lowrank imports losses inside a function; the dependency is still recorded
    assert "twolayer/paper_a/losses.py" in _names(mod, lib, "import twolayer.paper_a.lowrank\n")


def test_key_changes_with_an_imported_module_and_not_with_another(ext, tmp_path, monkeypatch):
    mod, lib = ext
    nb = ROOT / "notebooks" / "paper_b" / "stage1.ipynb"
    key = mod.dependency_key(nb)
    assert mod.dependency_key(nb) == key  # deterministic
    (lib / "twolayer/paper_a/assumptions.py").write_text("# changed\n")
    assert mod.dependency_key(nb) == key  # not imported
    (lib / "twolayer/paper_b/kernels.py").write_text(
        (lib / "twolayer/paper_b/kernels.py").read_text() + "\n# changed\n"
    )
    assert mod.dependency_key(nb) != key  # imported, indirectly
    changed = mod.dependency_key(nb)
    monkeypatch.setenv("BOOK_PROFILE", "book")
    assert mod.dependency_key(nb) != changed  # the profile is in it


def test_key_changes_with_the_chapters_paper_record(ext, tmp_path, monkeypatch):
    """A page shows its recorded paper-profile run: a new record (or figure) re-runs it."""
    mod, lib = ext
    nb_dir = tmp_path / "notebooks" / "paper_b"
    nb_dir.mkdir(parents=True)
    nb = nb_dir / "stage1.ipynb"
    shutil.copy(ROOT / "notebooks" / "paper_b" / "stage1.ipynb", nb)
    key = mod.dependency_key(nb)
    rec = tmp_path / "book/generated/paper/paper_b/stage1.json"
    rec.parent.mkdir(parents=True)
    rec.write_text("{}")
    with_record = mod.dependency_key(nb)
    assert with_record != key
    (rec.with_suffix("") / "fig.png").parent.mkdir()
    (rec.with_suffix("") / "fig.png").write_bytes(b"png")
    assert mod.dependency_key(nb) != with_record
    other = tmp_path / "book/generated/paper/paper_b/stage2.json"
    other.write_text("{}")
    assert mod.paper_record_files(nb) == [rec, rec.with_suffix("") / "fig.png"]
