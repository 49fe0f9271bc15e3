"""A per-configuration run store: a folder of finished runs keyed by a hash of their configuration.

A configuration is a flat mapping of JSON scalars (numbers, strings, booleans, ``None``). Its key
is the SHA-256 of its canonical JSON (sorted keys, no spaces) -- the same configuration always
has the same key, on every machine. Each entry is two files in the store folder:

* ``<key>.npz`` -- the run's arrays (trajectories), written atomically, read with
  ``allow_pickle=False``;
* ``<key>.json`` -- ``{"config", "metrics"}``, written atomically **after** the arrays: it is the
  commit marker, so an entry counts as present only when its JSON exists, parses, records exactly
  this configuration and its arrays load.

Writers on different machines or processes may fill one store in parallel: entries are
independent files, a half-written entry is never visible (temporary file + rename), and when
two writers race on one configuration, one complete entry wins (both hold results of the same
configuration). Typical use::

    store = RunStore("runs/fig1")
    todo = store.missing(configs)          # what is not there yet
    for cfg, arrays, metrics in compute(todo):
        store.save(cfg, arrays, metrics)
    arrays, metrics = store.load(configs[0])

Chapter: ``paper_a/figure1`` (the runs of Figure 1, resumable; ``twolayer.tools.sweep`` fills it).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .io import atomic_write_json, atomic_write_npz, load_npz, to_jsonable

_SCALARS = (str, int, float, bool, type(None))


def canonical_config(config: Mapping[str, Any]) -> dict:
    """The configuration as plain JSON scalars (numpy scalars converted); rejects nesting and
    non-finite numbers, which have no canonical JSON form."""
    if not isinstance(config, Mapping) or not config:
        raise TypeError("a configuration must be a non-empty mapping of name -> scalar")
    out = {}
    for k, v in config.items():
        if not isinstance(k, str):
            raise TypeError(f"configuration keys must be strings, got {k!r}")
        if isinstance(v, (float, np.floating)) and not math.isfinite(float(v)):
            raise ValueError(f"configuration value {k}={v!r} is not finite")
        if isinstance(v, (np.ndarray, list, tuple, dict)):
            raise TypeError(f"configuration value {k}={v!r} is not a JSON scalar")
        v = to_jsonable(v)
        if not isinstance(v, _SCALARS):
            raise TypeError(f"configuration value {k}={v!r} is not a JSON scalar")
        out[k] = v
    return out


def config_key(config: Mapping[str, Any]) -> str:
    """SHA-256 (hex, 24 characters) of the canonical JSON of ``config``."""
    blob = json.dumps(canonical_config(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


class RunStore:
    """A folder of runs keyed by configuration (see the module docstring)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def _paths(self, config) -> tuple[Path, Path]:
        key = config_key(config)
        return self.root / f"{key}.npz", self.root / f"{key}.json"

    def has(self, config: Mapping[str, Any]) -> bool:
        """Whether a complete entry for exactly ``config`` is present."""
        npz, meta = self._paths(config)
        try:
            rec = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if not isinstance(rec, dict) or rec.get("config") != canonical_config(config):
            return False
        try:
            load_npz(npz)
        except Exception:  # missing, truncated (BadZipFile, EOFError) or needs pickle (ValueError)
            return False
        return True

    def missing(self, configs: Iterable[Mapping[str, Any]]) -> list[dict]:
        """The configurations of ``configs`` without a complete entry (in the given order)."""
        return [dict(c) for c in configs if not self.has(c)]

    def save(
        self,
        config: Mapping[str, Any],
        arrays: Mapping[str, np.ndarray],
        metrics: Mapping[str, Any] | None = None,
    ) -> str:
        """Write one entry (arrays first, then the JSON commit marker); return its key."""
        cfg = canonical_config(config)
        if not arrays:
            raise ValueError("an entry needs at least one array")
        npz, meta = self._paths(cfg)
        self.root.mkdir(parents=True, exist_ok=True)
        atomic_write_npz(npz, **{k: np.asarray(v) for k, v in arrays.items()})
        atomic_write_json(meta, {"config": cfg, "metrics": dict(metrics or {})})
        return npz.stem

    def load(self, config: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], dict]:
        """``(arrays, metrics)`` of ``config``; ``KeyError`` if it is not in the store."""
        if not self.has(config):
            raise KeyError(
                f"configuration {canonical_config(config)} is not in the store {self.root}"
            )
        npz, meta = self._paths(config)
        return load_npz(npz), json.loads(meta.read_text(encoding="utf-8"))["metrics"]

    def keys(self) -> list[str]:
        """Keys of the committed entries (sorted)."""
        if not self.root.exists():
            return []
        return sorted(p.stem for p in self.root.glob("*.json") if (p.with_suffix(".npz")).exists())

    def __len__(self) -> int:
        return len(self.keys())
