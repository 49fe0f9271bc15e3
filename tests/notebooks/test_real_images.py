"""The real-images chapter (Paper A, Figure 2) with CIFAR-10: without the data the run stops at
the data cell with a clear message; a wrong or corrupt archive is refused through the notebook's
parameters; a small archive in the official binary format, passed with its own checksum, runs the
whole chapter."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import papermill as pm
import pytest

from conftest import ROOT
from twolayer.paper_a import images

NB = ROOT / "notebooks" / "paper_a" / "real_images.ipynb"


def _run(tmp_path, **params):
    out = tmp_path / "real_images-out.ipynb"
    return pm.execute_notebook(str(NB), str(out), parameters={"profile": "smoke", **params},
                               cwd=str(NB.parent), progress_bar=False, kernel_name="python3")


def test_cifar10_without_data_stops_with_clear_message(tmp_path, monkeypatch):
    monkeypatch.delenv(images.CIFAR10_ENV, raising=False)
    missing = tmp_path / "no-such-folder"
    path = tmp_path / "r.json"
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(tmp_path, dataset="cifar10", data_dir=str(missing), results_path=str(path))
    e = err.value
    assert e.ename == "DatasetUnavailable"
    assert "CIFAR-10 is not available" in e.evalue
    assert str(missing / images.CIFAR10_ARCHIVE) in e.evalue and "does not exist" in e.evalue
    assert "download=True" in e.evalue and "dataset='digits'" in e.evalue
    assert not path.exists()


def test_cifar10_without_data_dir_or_env(tmp_path, monkeypatch):
    monkeypatch.delenv(images.CIFAR10_ENV, raising=False)
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(tmp_path, dataset="cifar10")
    assert err.value.ename == "DatasetUnavailable"
    assert "no data_dir was given" in err.value.evalue and "$CIFAR10_DIR" in err.value.evalue


def _learnable_archive(path, n_per_batch=40, n_test=200, seed=0):
    """Official-format archive whose two classes (vehicles vs animals) differ in mean colour."""
    rng = np.random.default_rng(seed)

    def batch(n):
        labels = rng.integers(0, 10, n)
        pos = np.isin(labels, images.POSITIVE_CLASSES["cifar10"])
        base = np.where(pos[:, None], 150, 100) + 25 * rng.standard_normal((n, 3072))
        return np.clip(base, 0, 255).astype(np.uint8), labels

    return images.write_cifar10_like(path, [batch(n_per_batch) for _ in range(5)], batch(n_test))


def test_wrong_and_corrupt_archive_through_the_notebook(tmp_path):
    archive = _learnable_archive(tmp_path / images.CIFAR10_ARCHIVE)
    # the default checksum is the official one: our small archive fails it
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(tmp_path, dataset="cifar10", data_dir=str(tmp_path))
    assert err.value.ename == "ArchiveError" and "MD5 checksum" in err.value.evalue
    # a corrupt copy, with the checksum of the good file
    md5 = hashlib.md5(archive.read_bytes()).hexdigest()
    raw = bytearray(archive.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / images.CIFAR10_ARCHIVE).write_bytes(bytes(raw))
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(tmp_path, dataset="cifar10", data_dir=str(bad), archive_md5=md5)
    assert err.value.ename == "ArchiveError" and "corrupt" in err.value.evalue


def test_generated_archive_runs_the_chapter(tmp_path):
    archive = _learnable_archive(tmp_path / images.CIFAR10_ARCHIVE)
    md5 = hashlib.md5(archive.read_bytes()).hexdigest()
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    path = tmp_path / "r.json"
    _run(tmp_path, dataset="cifar10", data_dir=str(tmp_path), archive_md5=md5, archive_sha256=sha,
         n_train=200, n_test=0, width=64, steps=500, results_path=str(path))
    res = json.loads(path.read_text())
    assert res["params"]["dataset"] == "cifar10"
    assert all(res["checks"].values())


@pytest.mark.parametrize("params, name", [
    ({"dataset": "mnist"}, "dataset"),
    ({"archive_md5": "xyz"}, "archive_md5"),
    ({"init_scales": [0.1, 0.5]}, "init_scales"),  # must contain 1.0 and small_scale
])
def test_bad_parameters(tmp_path, params, name):
    """(The parameter types themselves are unit-tested in test_images.py.)"""
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(tmp_path, **params)
    assert err.value.ename == "ParameterError"
    assert repr(name) in err.value.evalue, err.value.evalue
