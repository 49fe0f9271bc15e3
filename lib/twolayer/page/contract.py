"""The notebook contract shared by every chapter.

A chapter's setup cell creates a :class:`Contract` (it remembers which names exist before the
``parameters`` cell); the ``parameters`` cell (tagged for papermill) assigns defaults; the
next cell calls :meth:`~twolayer.page.contract.Contract.validate`, which

* rejects names that are not parameters (a papermill typo such as ``-p seeed 1``),
* fills ``None`` values from the size profile (``"smoke"`` for tests, ``"book"`` for the site,
  ``"paper"`` for the paper's scale; ``profile=None`` reads ``$BOOK_PROFILE``, else ``"book"``),
  then from the contract's ``derive`` rules,
* checks each value's type and range, then the cross-parameter ``constraints``, stopping with
  one :class:`ParameterError` that names the parameter and what is allowed.

Claims are recorded with :meth:`Contract.theorem`, :meth:`Contract.observation` and
:meth:`Contract.sanity` (see :mod:`twolayer.page.checks`), theorems' hypotheses with
:meth:`Contract.hypothesis`, numbers with :meth:`Contract.metric`. :meth:`Contract.finish`
shows the page's check table and writes
``{"params", "metrics", "checks", "check_details", "hypotheses", "environment"}`` atomically to
``results_path`` (or, in a book build, to ``$TWOLAYER_RESULTS_DIR/<chapter>.json``, which the
claims index reads). The results hold no timings or timestamps, so equal parameters and seed
give an identical file.

Each parameter type carries ``doc`` (its meaning, shown in the page's parameter table) and
``explore`` (the values the robustness harness draws from; ``None``: kept at the profile's).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.io import atomic_write_json, to_jsonable
from .checks import (
    Check,
    CheckFailed,
    Claim,
    Hypothesis,
    _fmt,
    applies_of,
    display_bundle,
    glue,
    make_hypothesis,
    table,
)

__all__ = [
    "PROFILES",
    "PROFILE_ENV",
    "RESULTS_DIR_ENV",
    "ParameterError",
    "CheckFailed",
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
    "Contract",
    "ChapterSpec",
    "run_command",
    "yaml_value",
]

PROFILES = ("smoke", "book", "paper")
PROFILE_ENV = "BOOK_PROFILE"
RESULTS_DIR_ENV = "TWOLAYER_RESULTS_DIR"
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


@dataclass
class _Meta:
    chapter: str | None = None
    derive: dict = field(default_factory=dict)
    constraints: list = field(default_factory=list)


class Contract:
    """Validated parameters, checks and the results file of one notebook run.

    ``spec`` maps every parameter except ``seed``, ``profile`` and ``results_path`` (added
    here) to its type; ``profiles[profile][name]`` gives the value used when the parameter is
    left at ``None``; ``derive[name](P)`` computes a value still ``None`` after that (in the
    order given); ``constraints`` are checked last. ``namespace`` is the notebook's
    ``globals()``: the names it holds now are remembered so that any other new name after the
    parameters cell is reported as unknown. ``chapter`` (``"paper_a/setting"``) names the
    results file in a book build.
    """

    def __init__(
        self,
        spec: Mapping[str, Spec],
        profiles: Mapping[str, Mapping[str, Any]],
        namespace: dict,
        *,
        chapter: str | None = None,
        derive: Mapping[str, Callable] | None = None,
        constraints: Sequence[Constraint] = (),
    ):
        self.spec: dict[str, Spec] = {
            "seed": Int(0, 2**32 - 1, doc="every random draw on the page derives from it"),
            "profile": Choice(
                *PROFILES,
                doc='size: "smoke" (seconds, tests), "book" (the '
                'site), "paper" (the paper\'s scale); None reads $BOOK_PROFILE',
            ),
            "results_path": OptionalPath(doc="a .json path: write the results there"),
            **spec,
        }
        missing = set(PROFILES) - set(profiles)
        if missing:
            raise ValueError(f"profiles must define {sorted(missing)}")
        unknown = {k for p in profiles.values() for k in p} - set(self.spec)
        if unknown:
            raise ValueError(f"profiles set unknown parameters {sorted(unknown)}")
        self.profiles = {k: dict(v) for k, v in profiles.items()}
        self.meta = _Meta(chapter, dict(derive or {}), list(constraints))
        self.namespace = namespace
        self._before = set(namespace)
        self.params: Params | None = None
        # the parameters cell's values before papermill's injected cell (the page's command
        # shows only what differs): taken in a kernel after the cell that first defines every
        # parameter; ChapterSpec.unbound() sets it without a kernel
        self.defaults: dict[str, Any] | None = None
        self._watch_defaults()
        self.metrics: dict[str, Any] = {}
        self._checks: dict[str, Check] = {}
        self._hypotheses: dict[str, Hypothesis] = {}
        self._where: dict[str, str] = {}
        #: the results file :meth:`finish` wrote (``None`` until it has written one)
        self.results_file: Path | None = None

    @property
    def chapter(self) -> str | None:
        return self.meta.chapter

    def _watch_defaults(self) -> None:
        """In IPython, record the parameters cell's values once a cell has defined them all."""
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython is in every Jupyter kernel
            return
        ip = get_ipython()
        if ip is None or self.namespace is not ip.user_ns:
            return

        def snapshot(result=None):
            source = getattr(getattr(result, "info", None), "raw_cell", None) or ""
            if set(COMMON) <= _assigned(source) and all(k in self.namespace for k in self.spec):
                self.defaults = {k: self.namespace[k] for k in self.spec}
                ip.events.unregister("post_run_cell", snapshot)

        ip.events.register("post_run_cell", snapshot)

    # -- parameters --------------------------------------------------------------------------

    def _is_code(self, value) -> bool:
        """Names a setup cell may bind after the snapshot (this contract, imports, helpers):
        papermill parameters are plain data, never these."""
        import types

        return value is self or isinstance(value, (types.ModuleType, types.FunctionType, type))

    def validate(self) -> Params:
        """The page's parameters, checked and completed (see the module docstring): unknown
        names, then ``None`` from the profile and the ``derive`` rules, then types, ranges and
        constraints; one :class:`ParameterError` names the first bad parameter."""
        ns = self.namespace
        unknown = sorted(
            k
            for k in set(ns) - self._before - set(self.spec)
            if not k.startswith("_") and not self._is_code(ns[k])
        )
        if unknown:
            raise ParameterError(
                f"unknown parameter{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(map(repr, unknown))}; "
                f"this notebook takes: {', '.join(sorted(self.spec))}"
            )
        absent = sorted(k for k in self.spec if k not in ns)
        if absent:
            raise ParameterError(f"the parameters cell does not define {', '.join(absent)}")
        profile = ns["profile"]
        if profile is None:
            profile = os.environ.get(PROFILE_ENV, "book")
            if profile not in PROFILES:
                raise ParameterError(
                    f"environment variable {PROFILE_ENV} must be one of "
                    f"{', '.join(map(repr, PROFILES))}; got {profile!r}"
                )
        profile = self.spec["profile"].validate("profile", profile)
        out = Params()
        for name, spec in self.spec.items():
            value = profile if name == "profile" else ns[name]
            if value is None and name in self.profiles[profile]:
                value = self.profiles[profile][name]
            out[name] = spec.validate(name, value)
        for name, rule in self.meta.derive.items():
            if out[name] is None:
                out[name] = self.spec[name].validate(name, rule(out))
        for c in self.meta.constraints:
            c.check(out)
        self.params = out
        return out

    def parameter_table(self) -> None:
        """Show the validated parameters: name, value, meaning, allowed values."""
        if self.params is None:
            raise RuntimeError("validate() was not called")
        head = ("parameter", "value", "meaning", "allowed")
        md = ["| " + " | ".join(head) + " |", "|---|---|---|---|"]
        html = [
            '<table class="twolayer-params"><thead><tr>'
            + "".join(f"<th>{h}</th>" for h in head)
            + "</tr></thead><tbody>"
        ]
        import html as _h

        for name, spec in self.spec.items():
            v = _fmt(self.params[name])
            cells = (f"`{name}`", v, spec.doc, spec.describe)
            md.append(
                "| " + " | ".join(_env_as_code(str(c)).replace("|", "\\|") for c in cells) + " |"
            )
            html.append(
                "<tr>"
                + "".join(f"<td>{_h.escape(str(c).strip('`'))}</td>" for c in cells)
                + "</tr>"
            )
        html.append("</tbody></table>")
        plain = list(md)
        command = self.command()
        if command is not None:
            intro = "To run this page with these parameters from a shell:"
            md += ["", intro, "", "```bash", command, "```"]
            plain += ["", intro, command]
            html.append(f"<p>{intro}</p><pre><code>{_h.escape(command)}</code></pre>")
        display_bundle(
            {
                "text/markdown": "\n".join(md) + "\n",
                "text/html": "".join(html),
                "text/plain": "\n".join(plain),
            }
        )

    def command(self) -> str | None:
        """The ``twolayer run`` command that reproduces this run (``None`` without a
        ``chapter``): the profile, then ``-p NAME=VALUE`` for every parameter whose value was
        not the parameters cell's default (``results_path`` left out: ``--out`` names it)."""
        if self.params is None:
            raise RuntimeError("validate() was not called")
        if not self.chapter:
            return None
        asked = {k: self.namespace.get(k) for k in self.spec}
        changed = {
            k: v
            for k, v in asked.items()
            if k not in ("profile", "results_path")
            and (self.defaults is None or k not in self.defaults or self.defaults[k] != v)
            and not (self.defaults is None and v is None)
        }
        return run_command(self.chapter, self.params["profile"], changed)

    # -- checks ------------------------------------------------------------------------------

    def hypothesis(self, name: str, holds=None, **fields) -> Hypothesis:
        """Record whether a theorem's hypotheses hold here (from ``holds`` or ``value op
        bound``; ``fields``: those of :func:`~twolayer.page.checks.make_hypothesis`, ``title``
        required); glue its sentence as ``name`` (``{glue:md}`name``` with ``:format:
        myst``). ``detail``: what ``value`` is, in one line (the check table shows it)."""
        return self.record_hypothesis(make_hypothesis(name, holds, **fields))

    def record_hypothesis(self, h: Hypothesis) -> Hypothesis:
        """Record a hypothesis a chapter module computed
        (:func:`~twolayer.page.checks.make_hypothesis`) and glue its sentence as its name."""
        if h.name in self._hypotheses or h.name in self._checks:
            raise ValueError(f"{h.name!r} is recorded twice")
        self._hypotheses[h.name] = h
        glue(h.name, h.sentence(), markdown=True)
        return h

    def _record(
        self, name: str, kind: str, holds, value, bound, op, statement, applies, detail: str
    ) -> None:
        self.record(Claim(name, kind, value, bound, op, holds, statement, applies, detail))

    def record(self, claim: Claim) -> None:
        """Record a check a chapter module computed (a :class:`~twolayer.page.checks.Claim`):
        its value is glued under its name; a false result raises :class:`CheckFailed`."""
        name = claim.name
        if name in self._checks or name in self._hypotheses or name in self.metrics:
            raise ValueError(f"check {name!r} is recorded twice")
        c = claim.evaluate()
        self._checks[name] = c
        if c.passed is None:
            return
        value = c.value
        if value is not None and not isinstance(value, str):
            glue(name, value)
        if not c.passed:
            measured = (
                f"; measured {_fmt(value)}, bound {c.op or ''} {_fmt(c.bound)}"
                if value is not None
                else ""
            )
            raise CheckFailed(
                f"{c.kind} check {name!r} failed"
                + (f" ({c.statement})" if c.statement else "")
                + measured
                + (f": {c.detail}" if c.detail else "")
            )

    def theorem(
        self,
        name: str,
        holds=None,
        *,
        statement: str,
        value=None,
        bound=None,
        op: str | None = None,
        applies=True,
        detail: str = "",
    ) -> None:
        """A paper's statement, checked where ``applies`` (a
        :class:`~twolayer.page.checks.Hypothesis`, a list of them, a bool or
        ``(bool, reason)``) holds; ``holds``/``value`` may be callables,
        evaluated only then. Its outcome is ``checks[name]`` (``None``: not applicable).
        Returns nothing, so that a check cell shows no output."""
        return self._record(name, "theorem", holds, value, bound, op, statement, applies, detail)

    def observation(
        self,
        name: str,
        holds=None,
        *,
        value,
        bound=None,
        op: str | None = None,
        statement: str | None = None,
        applies=True,
        detail: str = "",
    ) -> None:
        """What this page measured, asserted in a robust form; its value is glued as ``name``."""
        return self._record(
            name, "observation", holds, value, bound, op, statement, applies, detail
        )

    def sanity(
        self,
        name: str,
        holds=None,
        *,
        value=None,
        bound=None,
        op: str | None = None,
        statement: str | None = None,
        applies=True,
        detail: str = "",
    ) -> None:
        """An identity, a solver's accuracy, internal consistency: never evidence."""
        return self._record(name, "sanity", holds, value, bound, op, statement, applies, detail)

    @property
    def checks(self) -> dict[str, bool | None]:
        return {k: c.passed for k, c in self._checks.items()}

    def metric(self, name: str, value, glue_it: bool = False) -> Any:
        """Record a number in the results (and glue it as ``name`` when ``glue_it``)."""
        if name in self._checks or name in self._hypotheses:
            raise ValueError(f"metric {name!r} has the name of a check")
        value = to_jsonable(value)
        self.metrics[name] = value
        if glue_it:
            glue(name, value)
        return value

    def glue(self, name: str, value, markdown: bool = False) -> None:
        """Glue a value for the prose (``{glue:text}`name```) without recording it."""
        if name in self._checks or name in self._hypotheses or name in self.metrics:
            raise ValueError(f"{name!r} is already glued as a check or metric")
        glue(name, value, markdown=markdown)

    def where(self, device=None, dtype=None) -> None:
        """Record the device and dtype the page computed on (results' ``environment``)."""
        if device is not None:
            self._where["device"] = str(device)
        if dtype is not None:
            self._where["dtype"] = str(dtype).replace("torch.", "")

    def environment(self) -> dict:
        """Where the numbers come from: Python and library versions (torch only where the page
        imported it, with CUDA's version when present), the device and dtype recorded by
        :meth:`where`, and the lock (:func:`twolayer.core.lockfile.summary`: its SHA-256 and
        whether the installed packages are exactly the locked ones). The same machine and lock
        give the same record, so results stay byte-identical."""
        import platform
        import sys

        import numpy

        env = {"python": platform.python_version(), "numpy": numpy.__version__}
        for mod in ("scipy", "torch", "cvxpy"):
            if mod in sys.modules:
                env[mod] = getattr(sys.modules[mod], "__version__", "?")
        if "torch" in sys.modules:
            torch = sys.modules["torch"]
            env["cuda"] = getattr(torch.version, "cuda", None)
        env.update(self._where)
        from ..core.lockfile import summary

        lock = summary()
        env["lock"] = {"sha256": lock["sha256"], "matches": lock["matches"]}
        return env

    # -- results -----------------------------------------------------------------------------

    def results(self) -> dict:
        if self.params is None:
            raise RuntimeError("validate() was not called")
        return {
            "params": to_jsonable(dict(self.params)),
            "metrics": dict(self.metrics),
            "checks": self.checks,
            "check_details": {k: c.details() for k, c in self._checks.items()},
            "hypotheses": {k: h.details() for k, h in self._hypotheses.items()},
            "environment": self.environment(),
        }

    @property
    def check_records(self) -> dict[str, Check]:
        """Every check recorded so far, by name, in the order recorded."""
        return dict(self._checks)

    def table(self) -> dict[str, str]:
        return table(list(self._checks.values()), list(self._hypotheses.values()))

    def finish(self, show: bool = True) -> None:
        """Show the check table; write the results JSON atomically to ``results_path``, or to
        ``$TWOLAYER_RESULTS_DIR/<chapter>.json`` when that is set, and keep the path written
        in ``results_file`` (``None`` when nothing was written). Returns nothing, so that
        the page's last cell shows no output (a path of the machine that built it)."""
        res = self.results()
        if show:
            display_bundle(self.table())
        path = self.params["results_path"]
        if path is None and os.environ.get(RESULTS_DIR_ENV) and self.chapter:
            path = Path(os.environ[RESULTS_DIR_ENV]) / f"{self.chapter}.json"
        self.results_file = None if path is None else atomic_write_json(Path(path), res)


def _env_as_code(text: str) -> str:
    """``$BOOK_PROFILE`` in a parameter's meaning as code, so Markdown with dollar math never
    reads it as the start of a formula."""
    import re

    return re.sub(r"(?<![`\w])\$([A-Z][A-Z0-9_]*)\b", r"`$\1`", text)


def _assigned(source: str) -> set[str]:
    """The names a cell's top-level statements assign (empty when it is not Python)."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    out = set()
    for s in tree.body:
        targets = s.targets if isinstance(s, ast.Assign) else [getattr(s, "target", None)]
        out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


_applies = applies_of  # the name the tests used before chapter modules


# --- a chapter's parameters, declared once in its module ----------------------------------------


@dataclass(frozen=True)
class ChapterSpec:
    """Everything a chapter declares about its parameters, once, in its module
    (``twolayer.<paper>.chapters.<chapter>.SPEC``): each parameter's type, doc, range and
    explore range (``spec``), the page's parameters-cell values (``defaults``: ``None`` means
    "from the profile"), the per-profile values, the derived values and the constraints.

    The page builds its :class:`Contract` from it (:meth:`contract`) and keeps a papermill
    ``parameters`` cell with the same values (a test compares them); tests, the command line
    and the robustness harness validate parameters with :meth:`params`, without a notebook.
    """

    chapter: str
    spec: Mapping[str, Spec]
    defaults: Mapping[str, Any]
    profiles: Mapping[str, Mapping[str, Any]]
    derive: Mapping[str, Callable] = field(default_factory=dict)
    constraints: Sequence[Constraint] = ()

    def __post_init__(self):
        names = set(self.spec) | set(COMMON)
        missing = sorted(names - set(self.defaults))
        extra = sorted(set(self.defaults) - names)
        if missing or extra:
            raise ValueError(
                f"{self.chapter}: defaults must give every parameter once "
                f"(missing {missing}, unknown {extra})"
            )

    def contract(self, namespace: dict) -> Contract:
        """The page's contract (``namespace``: the notebook's ``globals()``)."""
        c = Contract(
            self.spec,
            self.profiles,
            namespace,
            chapter=self.chapter,
            derive=self.derive,
            constraints=self.constraints,
        )
        return c

    def unbound(self) -> Contract:
        """The chapter's contract outside a page (no notebook namespace of its own): its full
        ``spec`` (``seed``, ``profile`` and ``results_path`` included), ``profiles`` and the
        parameters-cell ``defaults``; what the command line lists and the robustness harness
        explores."""
        c = self.contract({})
        c.defaults = dict(self.defaults)
        return c

    def params(self, profile: str | None = "smoke", **values) -> Params:
        """The validated parameters of ``profile`` with ``values`` changed, as the page would
        compute them (the parameters cell's values, then ``values`` on top, as papermill
        injects them); a bad value raises the page's :class:`ParameterError`."""
        c = self.unbound()
        c.namespace.update(self.defaults)
        c.namespace["profile"] = profile
        c.namespace.update(values)
        return c.validate()


# --- the command that runs a page -------------------------------------------------------------


def yaml_value(value: Any) -> str:
    """``value`` written so that YAML reads it back as the same value (``twolayer run -p``
    parses every value as YAML): plain words bare, other strings JSON-quoted, floats with
    a decimal point, lists in flow style."""
    import json

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:  # 1e-05: YAML 1.1 reads a string
            mantissa, exp = text.split("e")
            text = f"{mantissa}.0e{exp}"
        return text
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_value(v) for v in value) + "]"
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    import yaml

    try:
        plain = yaml.safe_load(text) == text and text.strip() == text and "," not in text
    except yaml.YAMLError:
        plain = False
    return text if plain and text else json.dumps(text)


def run_command(chapter: str, profile: str, params: Mapping[str, Any]) -> str:
    """``twolayer run CHAPTER --profile PROFILE -p NAME=VALUE ...``, quoted for a POSIX
    shell, parameters in the order given."""
    import shlex

    parts = ["twolayer", "run", chapter, "--profile", profile]
    for name, value in params.items():
        parts += ["-p", shlex.quote(f"{name}={yaml_value(value)}")]
    return " ".join(parts)
