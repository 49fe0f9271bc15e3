"""Tests of twolayer.core.io: atomic writes in open formats."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from twolayer.core import io


def listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


# --- JSON -----------------------------------------------------------------------------------------


def test_json_round_trip(tmp_path):
    obj = {"a": 1, "b": [1.5, -2.0, "x", None, True], "c": {"d": {"e": "f"}}, "g": False}
    out = io.atomic_write_json(tmp_path / "r.json", obj)
    assert out == tmp_path / "r.json"
    assert io.read_json(out) == obj
    text = out.read_text()
    assert text.endswith("\n")
    assert text == json.dumps(obj, indent=2, sort_keys=True) + "\n"
    assert listing(tmp_path) == ["r.json"]


def test_json_creates_parent_folders(tmp_path):
    path = tmp_path / "x" / "y" / "r.json"
    io.atomic_write_json(path, [1])
    assert io.read_json(path) == [1]


def test_json_non_finite_become_null(tmp_path):
    obj = {
        "nan": float("nan"),
        "inf": float("inf"),
        "ninf": -math.inf,
        "list": [1.0, float("nan")],
        "np": np.float64("nan"),
        "arr": np.array([np.inf, 2.0]),
    }
    path = io.atomic_write_json(tmp_path / "r.json", obj)
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert io.read_json(path) == {
        "nan": None,
        "inf": None,
        "ninf": None,
        "list": [1.0, None],
        "np": None,
        "arr": [None, 2.0],
    }


def test_json_numpy_torch_and_other_values_converted(tmp_path):
    obj = {
        "f32": np.float32(0.5),
        "i64": np.int64(3),
        "b": np.bool_(True),
        "arr": np.array([[1, 2], [3, 4]], dtype=np.int32),
        "t": torch.tensor([1.5, float("nan")], dtype=torch.float64),
        "t0": torch.tensor(2.0),
        "tb": torch.tensor([True, False]),
        "tgrad": torch.ones(2, requires_grad=True),
        "path": Path("a") / "b.json",
        "tuple": (1, 2),
        7: "int key",
    }
    path = io.atomic_write_json(tmp_path / "r.json", obj)
    got = io.read_json(path)
    assert got == {
        "f32": 0.5,
        "i64": 3,
        "b": True,
        "arr": [[1, 2], [3, 4]],
        "t": [1.5, None],
        "t0": 2.0,
        "tb": [True, False],
        "tgrad": [1.0, 1.0],
        "path": os.fspath(Path("a") / "b.json"),
        "tuple": [1, 2],
        "7": "int key",
    }
    assert type(got["b"]) is bool and type(got["i64"]) is int


def test_to_jsonable_types():
    assert io.to_jsonable(np.int16(-4)) == -4 and type(io.to_jsonable(np.int16(-4))) is int
    assert type(io.to_jsonable(np.float32(1.25))) is float
    assert io.to_jsonable(np.bool_(False)) is False


@pytest.mark.parametrize("bad", [{1, 2}, object(), 1 + 2j, b"bytes", np.complex128(1j)])
def test_json_unsupported_type_raises_and_writes_nothing(tmp_path, bad):
    with pytest.raises(TypeError, match="cannot write a value of type"):
        io.atomic_write_json(tmp_path / "r.json", {"x": [bad]})
    assert listing(tmp_path) == []


def test_failed_replace_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    io.atomic_write_json(path, {"version": 1})
    old = path.read_bytes()

    def boom(src, dst):
        raise OSError("disk went away")

    monkeypatch.setattr(io.os, "replace", boom)
    with pytest.raises(OSError, match="disk went away"):
        io.atomic_write_json(path, {"version": 2})
    assert path.read_bytes() == old
    assert listing(tmp_path) == ["r.json"]


def test_failed_write_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    io.atomic_write_json(path, {"version": 1})
    old = path.read_bytes()

    def boom(fd):
        raise KeyboardInterrupt  # even a BaseException mid-write cleans up

    monkeypatch.setattr(io.os, "fsync", boom)
    with pytest.raises(KeyboardInterrupt):
        io.atomic_write_json(path, {"version": 2})
    assert path.read_bytes() == old
    assert listing(tmp_path) == ["r.json"]


def test_overwrite_replaces_content(tmp_path):
    path = tmp_path / "r.json"
    io.atomic_write_json(path, {"version": 1})
    io.atomic_write_json(path, {"version": 2})
    assert io.read_json(path) == {"version": 2}
    assert listing(tmp_path) == ["r.json"]


# --- npz ------------------------------------------------------------------------------------------


def test_npz_round_trip(tmp_path):
    arrays = {
        "W": np.arange(12, dtype=np.float64).reshape(3, 4),
        "idx": np.array([3, 1, 2], dtype=np.int64),
        "mask": np.array([True, False]),
        "s": np.array(["a", "bc"]),
        "scalar": np.array(2.5),
    }
    path = io.atomic_write_npz(tmp_path / "a.npz", **arrays)
    got = io.load_npz(path)
    assert set(got) == set(arrays)
    for k, v in arrays.items():
        assert got[k].dtype == v.dtype and np.array_equal(got[k], v)
    assert listing(tmp_path) == ["a.npz"]


def test_npz_object_arrays_refused(tmp_path):
    with pytest.raises(TypeError, match="'ragged'.*object"):
        io.atomic_write_npz(
            tmp_path / "a.npz", ok=np.zeros(2), ragged=np.array([[1], [1, 2]], dtype=object)
        )
    assert listing(tmp_path) == []


def test_load_npz_never_unpickles(tmp_path):
    path = tmp_path / "pickled.npz"
    np.savez(path, obj=np.array([{"a": 1}], dtype=object))  # written by someone else, with pickle
    with pytest.raises(ValueError, match="allow_pickle"):
        io.load_npz(path)


# --- CSV ------------------------------------------------------------------------------------------


def test_csv_header_is_union_of_keys_in_first_seen_order(tmp_path):
    rows = [
        {"a": 1, "b": 2.5},
        {"b": np.float64(3.0), "c": "x"},
        {"d": float("nan"), "a": np.int64(4)},
    ]
    path = io.atomic_write_csv(tmp_path / "t.csv", rows)
    text = path.read_text()
    assert text.splitlines() == ["a,b,c,d", "1,2.5,,", ",3.0,x,", "4,,,"]
    with open(path, newline="") as fh:
        read = list(csv.DictReader(fh))
    assert read[1] == {"a": "", "b": "3.0", "c": "x", "d": ""}
    assert listing(tmp_path) == ["t.csv"]


def test_csv_empty_rows(tmp_path):
    path = io.atomic_write_csv(tmp_path / "t.csv", [])
    assert path.read_text() == "\n"


# --- the repository's root ------------------------------------------------------------------


def test_repository_root_is_the_checkout(monkeypatch, tmp_path):
    from helpers import ROOT
    from twolayer.core.io import repository_root

    monkeypatch.delenv("TWOLAYER_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # the package's own folder decides first (editable install)
    assert repository_root() == ROOT
    monkeypatch.setenv("TWOLAYER_ROOT", str(tmp_path))
    assert repository_root() == tmp_path.resolve()


def test_repository_root_without_a_checkout_is_the_current_folder(monkeypatch, tmp_path):
    """Installed from Git (no checkout above the package): a checkout above the current
    folder is found, else the current folder itself."""
    from twolayer.core import io

    monkeypatch.delenv("TWOLAYER_ROOT", raising=False)
    monkeypatch.setattr(io, "__file__", str(tmp_path / "site" / "twolayer" / "common" / "io.py"))
    book = tmp_path / "book"
    (book / "notebooks").mkdir(parents=True)
    (book / "_toc.yml").write_text("root: intro\n")
    (book / "notebooks" / "paper_a").mkdir()
    monkeypatch.chdir(book / "notebooks" / "paper_a")
    assert io.repository_root() == book.resolve()
    monkeypatch.chdir(tmp_path)
    assert io.repository_root() == tmp_path.resolve()


def test_no_module_finds_the_root_from_its_own_file():
    """One way to find the checkout: no module computes it from ``__file__``'s parents."""
    import re
    from pathlib import Path

    lib = Path(__file__).resolve().parents[2] / "lib" / "twolayer"
    found = [
        str(p.relative_to(lib))
        for p in lib.rglob("*.py")
        if re.search(r"__file__\)\.resolve\(\)\.parents\[", p.read_text(encoding="utf-8"))
    ]
    assert not found, f"use twolayer.core.io.repository_root(): {found}"
