"""A ``BOOK_PROFILE=paper`` build without the CIFAR-10 archive stops before anything runs
(book/_ext/twolayer_book.py, at Sphinx's ``config-inited``), with a message that says what is
missing, how to provide it and how long the paper profile takes; the archive is looked for
as the Figure 2 page looks for it (``$CIFAR10_DIR``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def ext():
    spec = importlib.util.spec_from_file_location(
        "twolayer_book_ext", ROOT / "book/_ext/twolayer_book.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _config_inited(ext, tmp_path):
    app = SimpleNamespace(outdir=str(tmp_path / "_build" / "html"))
    config = SimpleNamespace(nb_execution_mode="off")  # nothing else of the hook runs
    ext._config_inited(app, config)


def test_paper_build_without_cifar10_stops_first(ext, tmp_path, monkeypatch):
    from sphinx.errors import ConfigError

    monkeypatch.setenv("BOOK_PROFILE", "paper")
    monkeypatch.delenv("CIFAR10_DIR", raising=False)
    with pytest.raises(ConfigError) as err:
        _config_inited(ext, tmp_path)
    msg = str(err.value)
    assert "BOOK_PROFILE=paper needs the CIFAR-10 archive" in msg
    assert "cifar-10-binary.tar.gz" in msg and "$CIFAR10_DIR" in msg
    assert "hour" in msg and "The papers' scale" in msg
    monkeypatch.setenv("CIFAR10_DIR", str(tmp_path / "empty"))
    with pytest.raises(ConfigError, match="does not exist"):
        _config_inited(ext, tmp_path)
    assert not (tmp_path / "_build").exists(), "nothing was written"


def test_paper_build_with_the_archive_or_another_profile_goes_on(ext, tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "cifar-10-binary.tar.gz").write_bytes(b"")  # its checksum is the page's check
    monkeypatch.setenv("BOOK_PROFILE", "paper")
    monkeypatch.setenv("CIFAR10_DIR", str(folder))
    assert ext.paper_profile_data_error() is None
    _config_inited(ext, tmp_path)
    monkeypatch.delenv("CIFAR10_DIR")
    for profile in ("smoke", "book"):
        monkeypatch.setenv("BOOK_PROFILE", profile)
        assert ext.paper_profile_data_error() is None
        _config_inited(ext, tmp_path)
