"""A chapter's parameters: their types, the size profiles and their validation.

Every chapter declares its parameters once, in its module (``SPEC``, a
:class:`~twolayer.page.contract.ChapterSpec`), with the types of this module: :class:`Int`,
:class:`Float`, :class:`Choice`, :class:`Bool`, :class:`ListOf`, :class:`Optional`,
:class:`OptionalDir`, :class:`OptionalPath`, :class:`HexDigest`, :class:`Device`, and
:class:`Constraint` across parameters. :func:`validate` turns the values a page was given into
its :class:`Params`:

* ``None`` values are filled from the size profile (``"smoke"`` for tests, ``"book"`` for the
  site, ``"paper"`` for the paper's scale; ``profile=None`` reads ``$BOOK_PROFILE``, else
  ``"book"``), then from the ``derive`` rules;
* each value's type and range is checked, then the cross-parameter ``constraints``, stopping
  with one :class:`ParameterError` that names the parameter and what is allowed.

Each parameter type carries ``doc`` (its meaning, shown in the page's parameter table) and
``explore`` (the values the robustness harness draws from; ``None``: kept at the profile's).

Used by every chapter's module (``twolayer.paper_a.chapters``, ``twolayer.paper_b.chapters``),
by the page's contract (:class:`twolayer.page.contract.Contract` validates its notebook's
parameters here), the command line and the robustness harness. Imports nothing else of the book.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PROFILES",
    "PROFILE_ENV",
    "COMMON",
    "ParameterError",
    "Spec",
    "Int",
    "Float",
    "Choice",
    "Bool",
    "ListOf",
    "Optional",
    "OptionalDir",
    "OptionalPath",
    "HexDigest",
    "Device",
    "Constraint",
    "Params",
    "common_spec",
    "check_profiles",
    "unknown_parameters",
    "validate",
]

PROFILES = ("smoke", "book", "paper")
PROFILE_ENV = "BOOK_PROFILE"
COMMON = ("seed", "profile", "results_path")


class ParameterError(ValueError):
    """A notebook parameter has a wrong type, an out-of-range value or an unknown name."""


# --- parameter types ----------------------------------------------------------------------


@dataclass(kw_only=True)
class Spec:
    """A parameter type: ``validate(name, value)`` returns the value or raises.

    ``doc``: what the parameter means (the page's parameter table shows it). ``explore``:
    what the robustness harness may draw (:meth:`sample`, and :meth:`ends` for its
    one-at-a-time changes); ``None`` keeps the profile's value, and then ``fixed`` says in one
    line why the parameter is not varied.
    """

    doc: str = ""
    explore: Any = None
    fixed: str = ""

    describe = "a value"

    def validate(self, name: str, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def fail(self, name: str, value: Any) -> ParameterError:
        return ParameterError(f"parameter {name!r} must be {self.describe}; got {value!r}")

    def sample(self, rng):
        """A random value from ``explore`` (``None`` if the parameter is not explored)."""
        if self.explore is None:
            return None
        if isinstance(self.explore, (list, tuple)) and self.explore and not _is_range(self.explore):
            return self.explore[int(rng.integers(len(self.explore)))]
        raise TypeError(f"{type(self).__name__} cannot sample explore={self.explore!r}")

    def ends(self) -> list:
        """The values the one-at-a-time changes take: both ends of an ``explore`` range, the
        first and the last of an ``explore`` list, every value of an explored
        :class:`Choice` or :class:`Bool`; ``[]`` when not explored."""
        e = self.explore
        if e is None:
            return []
        if _is_range(e):
            integer = isinstance(self, Int) or (
                isinstance(self, Optional) and isinstance(self.inner, Int)
            )
            return [int(v) if integer else float(v) for v in e]
        if e is True:
            return list(getattr(self, "values", (False, True)))
        if isinstance(e, (list, tuple)) and e:
            return [e[0], e[-1]] if len(e) > 1 else [e[0]]
        raise TypeError(f"{type(self).__name__} has no ends for explore={e!r}")


def _is_range(x) -> bool:
    return (
        isinstance(x, tuple)
        and len(x) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x)
    )


def _draw_number(lo, hi, rng, integer: bool):
    if lo > 0 and hi / lo >= 10:  # scale parameters: log-uniform
        v = min(hi, max(lo, math.exp(rng.uniform(math.log(lo), math.log(hi)))))  # exp(log(x)) != x
    else:
        v = rng.uniform(lo, hi)
    return int(round(v)) if integer else float(v)


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

    def sample(self, rng):
        if _is_range(self.explore):
            return _draw_number(*self.explore, rng, integer=True)
        return super().sample(rng)


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
        try:
            v = float(value)
        except OverflowError:  # an integer beyond every float
            raise self.fail(name, value) from None
        if not math.isfinite(v):
            raise self.fail(name, value)
        if self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)):
            raise self.fail(name, value)
        if self.hi is not None and (v > self.hi or (self.hi_open and v == self.hi)):
            raise self.fail(name, value)
        return v

    def sample(self, rng):
        if _is_range(self.explore):
            return _draw_number(*self.explore, rng, integer=False)
        return super().sample(rng)


@dataclass(init=False)
class Choice(Spec):
    values: tuple

    def __init__(self, *values, doc: str = "", explore: Any = None, fixed: str = ""):
        self.values = tuple(values)
        self.doc, self.explore, self.fixed = doc, explore, fixed

    @property
    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def validate(self, name, value):
        if isinstance(value, bool) and not any(isinstance(v, bool) for v in self.values):
            raise self.fail(name, value)
        # a value equal to a choice but of another type (2.0 for 2) is refused: the page would
        # carry a float where its code expects an integer
        if not any(value == v and type(value) is type(v) for v in self.values):
            raise self.fail(name, value)
        return value

    def sample(self, rng):
        if self.explore is True:
            return self.values[int(rng.integers(len(self.values)))]
        return super().sample(rng)


@dataclass
class Bool(Spec):
    describe = "True or False"

    def validate(self, name, value):
        if not isinstance(value, bool):
            raise self.fail(name, value)
        return value

    def sample(self, rng):
        if self.explore is True:
            return bool(rng.integers(2))
        return super().sample(rng)


@dataclass
class ListOf(Spec):
    item: Spec
    min_len: int = 1
    max_len: int | None = None
    increasing: bool = False

    @property
    def describe(self) -> str:
        count = f"at least {self.min_len}" + (
            f" and at most {self.max_len}" if self.max_len is not None else ""
        )
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

    def sample(self, rng):
        # explore: a list of candidate lists
        return super().sample(rng)


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

    def sample(self, rng):
        if _is_range(self.explore):
            return _draw_number(*self.explore, rng, integer=isinstance(self.inner, Int))
        if self.explore is not None:
            return super().sample(rng)
        return self.inner.sample(rng)


@dataclass
class _PathSpec(Spec):
    """``None`` or a non-empty path string; ``suffix`` (if set) is required."""

    suffix: str | None = None

    @property
    def describe(self) -> str:
        what = (
            f"a file path string ending in {self.suffix}"
            if self.suffix
            else "a non-empty folder path string"
        )
        return f"None or {what}"

    def validate(self, name, value):
        if value is None:
            return None
        if not isinstance(value, (str, os.PathLike)) or not os.fspath(value).strip():
            raise self.fail(name, value)
        if self.suffix and not os.fspath(value).endswith(self.suffix):
            raise self.fail(name, value)
        return os.fspath(value)


@dataclass
class OptionalDir(_PathSpec):
    """``None`` or a non-empty folder path string (its existence is checked where it is used)."""


@dataclass
class OptionalPath(_PathSpec):
    """``None`` or a ``.json`` file path string."""

    suffix: str | None = ".json"


@dataclass
class HexDigest(Spec):
    """A hexadecimal digest of ``length`` characters (``optional``: ``None`` is allowed too)."""

    length: int = 32
    optional: bool = False

    @property
    def describe(self) -> str:
        return (
            "None or " if self.optional else ""
        ) + f"a string of {self.length} hexadecimal digits"

    def validate(self, name, value):
        if value is None and self.optional:
            return None
        if (
            not isinstance(value, str)
            or len(value) != self.length
            or any(ch not in "0123456789abcdefABCDEF" for ch in value)
        ):
            raise self.fail(name, value)
        return value.lower()

    def bad_values(self):
        """(wrong type, malformed) values, for the notebook tests."""
        return 3, "z" * self.length


@dataclass
class Device(Spec):
    """A torch device name: ``"auto"`` (CUDA when present, else the CPU), ``"cpu"``,
    ``"cuda"`` or ``"cuda:N"``. A CUDA device asked for where none exists stops with a message
    naming the parameter (``"auto"`` never does: it falls back to the CPU)."""

    describe = '"auto", "cpu", "cuda" or "cuda:N"'

    def validate(self, name, value):
        if not isinstance(value, str):
            raise self.fail(name, value)
        v = value.strip().lower()
        if v in ("auto", "cpu"):
            return v
        kind, sep, index = v.partition(":")
        if kind != "cuda" or (sep and not (index.isdigit() and index.isascii())):
            raise self.fail(name, value)
        import torch

        if not torch.cuda.is_available():
            raise ParameterError(
                f"parameter {name!r} asks for {value!r}, but CUDA is not available here; "
                'use "auto" (CUDA when present) or "cpu"'
            )
        if sep and int(index) >= torch.cuda.device_count():
            raise ParameterError(
                f"parameter {name!r} asks for {value!r}, but this machine has "
                f"{torch.cuda.device_count()} CUDA device(s)"
            )
        return v

    def bad_values(self):
        """(wrong type, malformed) values, for the notebook tests."""
        return 0, "gpu"


def _range_text(lo, hi, lo_closed, hi_closed) -> str:
    if lo is None and hi is None:
        return ""
    if hi is None:
        return f" {'>=' if lo_closed else '>'} {lo}"
    if lo is None:
        return f" {'<=' if hi_closed else '<'} {hi}"
    return f" in {'[' if lo_closed else '('}{lo}, {hi}{']' if hi_closed else ')'}"


@dataclass
class Constraint:
    """A rule across parameters: ``holds(P)`` must be true, else ``parameter`` is named with
    ``message`` ("must be larger than ratio_min"). Checked after types and derived values."""

    parameter: str
    holds: Callable[[Any], bool]
    message: str

    def check(self, P) -> None:
        if not self.holds(P):
            raise ParameterError(
                f"parameter {self.parameter!r} {self.message}; got {P[self.parameter]!r}"
            )


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


# --- validation -----------------------------------------------------------------------------


def common_spec() -> dict[str, Spec]:
    """The parameters every page takes, before its own: ``seed``, ``profile`` and
    ``results_path``.

    Returns:
        ``{name: type}`` in that order.
    """
    return {
        "seed": Int(0, 2**32 - 1, doc="every random draw on the page derives from it"),
        "profile": Choice(
            *PROFILES,
            doc='size: "smoke" (seconds, tests), "book" (the '
            'site), "paper" (the paper\'s scale); None reads $BOOK_PROFILE',
        ),
        "results_path": OptionalPath(doc="a .json path: write the results there"),
    }


def check_profiles(spec: Mapping[str, Spec], profiles: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse size profiles that miss one of ``PROFILES`` or set a parameter ``spec`` does
    not declare (a mistake in a chapter's module, not in a page's parameters).

    Args:
        spec: every parameter's type (``seed``, ``profile`` and ``results_path`` included).
        profiles: ``{profile: {name: value}}``.

    Raises:
        ValueError: naming the missing profiles or the unknown parameters.
    """
    missing = set(PROFILES) - set(profiles)
    if missing:
        raise ValueError(f"profiles must define {sorted(missing)}")
    unknown = {k for p in profiles.values() for k in p} - set(spec)
    if unknown:
        raise ValueError(f"profiles set unknown parameters {sorted(unknown)}")


def unknown_parameters(names: Sequence[str], spec: Mapping[str, Spec]) -> ParameterError:
    """The error for names given that are not parameters (a papermill typo such as
    ``-p seeed 1``).

    Args:
        names: the unknown names, sorted.
        spec: every parameter's type, listed in the message.

    Returns:
        The :class:`ParameterError` to raise.
    """
    return ParameterError(
        f"unknown parameter{'s' if len(names) > 1 else ''} "
        f"{', '.join(map(repr, names))}; "
        f"this notebook takes: {', '.join(sorted(spec))}"
    )


def _profile_of(asked: Any) -> Any:
    """The profile asked for; ``None`` reads ``$BOOK_PROFILE``, else ``"book"``."""
    if asked is not None:
        return asked
    profile = os.environ.get(PROFILE_ENV, "book")
    if profile not in PROFILES:
        raise ParameterError(
            f"environment variable {PROFILE_ENV} must be one of "
            f"{', '.join(map(repr, PROFILES))}; got {profile!r}"
        )
    return profile


def validate(
    spec: Mapping[str, Spec],
    profiles: Mapping[str, Mapping[str, Any]],
    values: Mapping[str, Any],
    *,
    derive: Mapping[str, Callable] | None = None,
    constraints: Sequence[Constraint] = (),
) -> Params:
    """A page's parameters, checked and completed (see the module docstring): unknown and
    absent names, then ``None`` from the profile and the ``derive`` rules, then types, ranges
    and constraints; one :class:`ParameterError` names the first bad parameter.

    Args:
        spec: every parameter's type, in the order they are checked (with :func:`common_spec`).
        profiles: ``{profile: {name: value}}``, the value a parameter left at ``None`` takes.
        values: the values given, one per parameter (the parameters cell's, then papermill's).
        derive: ``{name: rule}``, in order; ``rule(P)`` gives a value still ``None``.
        constraints: rules across parameters, checked last.

    Returns:
        The validated :class:`Params`, in ``spec``'s order.
    """
    unknown = sorted(k for k in values if k not in spec)
    if unknown:
        raise unknown_parameters(unknown, spec)
    absent = sorted(k for k in spec if k not in values)
    if absent:
        raise ParameterError(f"the parameters cell does not define {', '.join(absent)}")
    profile = spec["profile"].validate("profile", _profile_of(values["profile"]))
    out = Params()
    for name, kind in spec.items():
        value = profile if name == "profile" else values[name]
        if value is None and name in profiles[profile]:
            value = profiles[profile][name]
        out[name] = kind.validate(name, value)
    for name, rule in (derive or {}).items():
        if out[name] is None:
            out[name] = spec[name].validate(name, rule(out))
    for c in constraints:
        c.check(out)
    return out
