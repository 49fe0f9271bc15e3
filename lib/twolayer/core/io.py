"""Atomic writes in open formats (JSON, CSV, ``.npz`` without pickle).

A file is written to a temporary file in the same folder, flushed and fsynced, then renamed
over the target: a reader sees either the old file or the complete new one, never half.

Used by every chapter through :meth:`twolayer.page.contract.Contract.finish` (the results
file) and by the run store, the sweep and the harness.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def repository_root() -> Path:
    """The checkout of the book's repository, found one way for every module that needs it
    (the command line, the harness, the reference results, the benchmark, the lock check):
    ``$TWOLAYER_ROOT`` when set; else the first folder, going up from this package's own
    folder (an editable install) and then from the current folder, that holds both
    ``_toc.yml`` and ``notebooks/``; else the current folder (the package installed from Git
    without a checkout, as on Colab: what needs the chapters then says it found none)."""
    env = os.environ.get("TWOLAYER_ROOT")
    if env:
        return Path(env).resolve()
    for start in (Path(__file__).resolve().parent, Path.cwd().resolve()):
        for folder in (start, *start.parents):
            if (folder / "_toc.yml").is_file() and (folder / "notebooks").is_dir():
                return folder
    return Path.cwd().resolve()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + fsync + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def to_jsonable(obj: Any) -> Any:
    """Convert numpy/torch scalars and arrays, paths and tuples to plain JSON values.

    Non-finite floats become ``None`` (JSON has no NaN/Infinity).
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if hasattr(obj, "detach") and hasattr(obj, "cpu"):  # torch.Tensor
        return to_jsonable(obj.detach().cpu().numpy())
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"cannot write a value of type {type(obj).__name__} to JSON: {obj!r}")


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as strict JSON (no NaN), atomically."""
    text = json.dumps(to_jsonable(obj), indent=2, sort_keys=True, allow_nan=False)
    return atomic_write_bytes(path, (text + "\n").encode("utf-8"))


def read_json(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def atomic_write_npz(path: str | os.PathLike, **arrays: np.ndarray) -> Path:
    """Write arrays to ``.npz`` atomically; object arrays (which need pickle) are refused."""
    import io as _io

    for name, arr in arrays.items():
        if np.asarray(arr).dtype == object:
            raise TypeError(
                f"array {name!r} has dtype object, which .npz can only store by pickling"
            )
    buf = _io.BytesIO()
    np.savez(buf, **arrays)
    return atomic_write_bytes(path, buf.getvalue())


def load_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Load an ``.npz`` file with ``allow_pickle=False`` (never unpickle)."""
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def atomic_write_csv(path: str | os.PathLike, rows: list[dict[str, Any]]) -> Path:
    """Write a list of flat dicts as CSV (header from the union of keys, in first-seen order)."""
    import csv
    import io as _io

    cols: list[str] = []
    for row in rows:
        for k in row:
            if k not in cols:
                cols.append(k)
    buf = _io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: to_jsonable(v) for k, v in row.items()})
    return atomic_write_bytes(path, buf.getvalue().encode("utf-8"))
