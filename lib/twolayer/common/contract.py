"""The notebook contract shared by every chapter.

A chapter's first code cell creates a :class:`Contract` (it remembers which names exist
before the ``parameters`` cell); the ``parameters`` cell (tagged for papermill) assigns
defaults; the next cell calls :meth:`Contract.validate`, which

* rejects names that are not parameters (a papermill typo such as ``-p seeed 1``),
* fills ``None`` values from the size profile (``"smoke"`` for tests, ``"book"`` for the site,
  ``"paper"`` for the paper's scale; ``profile=None`` reads ``$BOOK_PROFILE``, else ``"book"``),
* checks each value's type and range, stopping with one :class:`ParameterError` that names the
  parameter and what is allowed.

Claims are checked with :meth:`Contract.check` (an assertion that records its outcome), numbers
are recorded with :meth:`Contract.metric`, and :meth:`Contract.finish` writes
``{"params", "metrics", "checks"}`` atomically to ``results_path`` when one is given. The
results hold no timings or timestamps, so equal parameters and seed give an identical file.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .io import atomic_write_json, to_jsonable

PROFILES = ("smoke", "book", "paper")
PROFILE_ENV = "BOOK_PROFILE"
COMMON = ("seed", "profile", "results_path")


class ParameterError(ValueError):
    """A notebook parameter has a wrong type, an out-of-range value or an unknown name."""


class CheckFailed(AssertionError):
    """A claim made on the page is false for this run."""


# --- parameter types ----------------------------------------------------------------------

class Spec:
    """A parameter type: ``validate(name, value)`` returns the value or raises."""

    describe = "a value"

    def validate(self, name: str, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def fail(self, name: str, value: Any) -> ParameterError:
        return ParameterError(f"parameter {name!r} must be {self.describe}; got {value!r}")


@dataclass
class Int(Spec):
    lo: int | None = None
    hi: int | None = None

    @property
    def describe(self) -> str:
        return "an integer" + _range_text(self.lo, self.hi, True, True)

    def validate(self, name, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(name, value)
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise self.fail(name, value)
        return value


@dataclass
class Float(Spec):
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    @property
    def describe(self) -> str:
        return "a finite number" + _range_text(self.lo, self.hi, not self.lo_open, not self.hi_open)

    def validate(self, name, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(name, value)
        v = float(value)
        if not math.isfinite(v):
            raise self.fail(name, value)
        if self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)):
            raise self.fail(name, value)
        if self.hi is not None and (v > self.hi or (self.hi_open and v == self.hi)):
            raise self.fail(name, value)
        return v


@dataclass
class Choice(Spec):
    values: tuple

    def __init__(self, *values):
        self.values = tuple(values)

    @property
    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def validate(self, name, value):
        if isinstance(value, bool) and not any(isinstance(v, bool) for v in self.values):
            raise self.fail(name, value)
        if value not in self.values:
            raise self.fail(name, value)
        return value


@dataclass
class Bool(Spec):
    describe = "True or False"

    def validate(self, name, value):
        if not isinstance(value, bool):
            raise self.fail(name, value)
        return value


@dataclass
class ListOf(Spec):
    item: Spec
    min_len: int = 1
    max_len: int | None = None
    increasing: bool = False

    @property
    def describe(self) -> str:
        count = f"at least {self.min_len}" + (
            f" and at most {self.max_len}" if self.max_len is not None else "")
        s = f"a list of {count} items, each {self.item.describe}"
        return s + (", strictly increasing" if self.increasing else "")

    def validate(self, name, value):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise self.fail(name, value)
        if len(value) < self.min_len or (self.max_len is not None and len(value) > self.max_len):
            raise self.fail(name, value)
        out = []
        for i, v in enumerate(value):
            try:
                out.append(self.item.validate(f"{name}[{i}]", v))
            except ParameterError:
                raise self.fail(name, value) from None
        if self.increasing and any(b <= a for a, b in zip(out, out[1:])):
            raise self.fail(name, value)
        return out


@dataclass
class Optional(Spec):
    """``None`` or a value of ``inner`` (``None`` meaning "derive it", as the page says)."""

    inner: Spec

    @property
    def describe(self) -> str:
        return f"None or {self.inner.describe}"

    def validate(self, name, value):
        if value is None:
            return None
        try:
            return self.inner.validate(name, value)
        except ParameterError:
            raise self.fail(name, value) from None


@dataclass
class OptionalDir(Spec):
    """``None`` or a non-empty folder path string (its existence is checked where it is used)."""

    describe = "None or a non-empty folder path string"

    def validate(self, name, value):
        if value is None:
            return None
        if not isinstance(value, (str, os.PathLike)) or not os.fspath(value).strip():
            raise self.fail(name, value)
        return os.fspath(value)


@dataclass
class OptionalPath(Spec):
    describe = "None or a file path string ending in .json"

    def validate(self, name, value):
        if value is None:
            return None
        if not isinstance(value, (str, os.PathLike)) or not os.fspath(value).endswith(".json"):
            raise self.fail(name, value)
        return os.fspath(value)


class HexDigest(Spec):
    """A hexadecimal digest of ``length`` characters (``optional``: ``None`` is allowed too)."""

    def __init__(self, length: int, optional: bool = False):
        self.length, self.optional = length, optional

    @property
    def describe(self) -> str:
        return ("None or " if self.optional else "") + f"a string of {self.length} hexadecimal digits"

    def validate(self, name, value):
        if value is None and self.optional:
            return None
        if (not isinstance(value, str) or len(value) != self.length
                or any(ch not in "0123456789abcdefABCDEF" for ch in value)):
            raise self.fail(name, value)
        return value.lower()

    def bad_values(self):
        """(wrong type, malformed) values, for the notebook tests."""
        return 3, "z" * self.length


def _range_text(lo, hi, lo_closed, hi_closed) -> str:
    if lo is None and hi is None:
        return ""
    if hi is None:
        return f" {'>=' if lo_closed else '>'} {lo}"
    if lo is None:
        return f" {'<=' if hi_closed else '<'} {hi}"
    return f" in {'[' if lo_closed else '('}{lo}, {hi}{']' if hi_closed else ')'}"


# --- the contract ---------------------------------------------------------------------------

class Params(dict):
    """Validated parameters; also readable as attributes (``P.n``)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        # a value derived after validation (e.g. from other parameters) is recorded as such
        self[key] = value


class Contract:
    """Validated parameters, checks and the results file of one notebook run.

    ``spec`` maps every parameter except ``seed``, ``profile`` and ``results_path`` (added
    here) to its type; ``profiles[profile][name]`` gives the value used when the parameter is
    left at ``None``. ``namespace`` is the notebook's ``globals()``: the names it holds now are
    remembered so that any other new name after the parameters cell is reported as unknown.
    """

    def __init__(self, spec: Mapping[str, Spec], profiles: Mapping[str, Mapping[str, Any]],
                 namespace: dict):
        self.spec: dict[str, Spec] = {
            "seed": Int(0, 2**32 - 1), "profile": Choice(*PROFILES),
            "results_path": OptionalPath(), **spec,
        }
        missing = set(PROFILES) - set(profiles)
        if missing:
            raise ValueError(f"profiles must define {sorted(missing)}")
        self.profiles = {k: dict(v) for k, v in profiles.items()}
        self.namespace = namespace
        self._before = set(namespace)
        self.params: Params | None = None
        self.metrics: dict[str, Any] = {}
        self.checks: dict[str, bool] = {}

    def _is_code(self, value) -> bool:
        """Names a setup cell may bind after the snapshot (this contract, imports, helpers):
        papermill parameters are plain data, never these."""
        import types

        return value is self or isinstance(value, (types.ModuleType, types.FunctionType, type))

    def validate(self) -> Params:
        ns = self.namespace
        unknown = sorted(k for k in set(ns) - self._before - set(self.spec)
                         if not k.startswith("_") and not self._is_code(ns[k]))
        if unknown:
            raise ParameterError(
                f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                f"this notebook takes: {', '.join(sorted(self.spec))}")
        absent = sorted(k for k in self.spec if k not in ns)
        if absent:
            raise ParameterError(f"the parameters cell does not define {', '.join(absent)}")
        profile = ns["profile"]
        if profile is None:
            profile = os.environ.get(PROFILE_ENV, "book")
            if profile not in PROFILES:
                raise ParameterError(
                    f"environment variable {PROFILE_ENV} must be one of {', '.join(map(repr, PROFILES))}; "
                    f"got {profile!r}")
        profile = self.spec["profile"].validate("profile", profile)
        out = Params()
        for name, spec in self.spec.items():
            value = profile if name == "profile" else ns[name]
            if value is None and name in self.profiles[profile]:
                value = self.profiles[profile][name]
            out[name] = spec.validate(name, value)
        self.params = out
        return out

    def check(self, name: str, condition, detail: str = "") -> bool:
        """Record the claim ``name`` and stop the notebook if it is false."""
        ok = bool(condition)
        self.checks[name] = ok
        if not ok:
            raise CheckFailed(f"check {name!r} failed" + (f": {detail}" if detail else ""))
        return ok

    def metric(self, name: str, value) -> Any:
        value = to_jsonable(value)
        self.metrics[name] = value
        return value

    def results(self) -> dict:
        if self.params is None:
            raise RuntimeError("validate() was not called")
        return {"params": to_jsonable(dict(self.params)), "metrics": dict(self.metrics),
                "checks": dict(self.checks)}

    def finish(self) -> Path | None:
        """Write the results JSON atomically if ``results_path`` is set; return its path."""
        res = self.results()
        path = self.params["results_path"]
        if path is None:
            return None
        return atomic_write_json(Path(path), res)

