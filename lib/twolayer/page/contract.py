"""The notebook contract shared by every chapter: a page's parameters bound to its notebook,
its checks recorded, shown and written.

A chapter's setup cell creates a :class:`Contract` from its module's :class:`ChapterSpec`
(it remembers which names exist before the ``parameters`` cell); the ``parameters`` cell
(tagged for papermill) assigns defaults; the next cell calls
:meth:`~twolayer.page.contract.Contract.validate`, which rejects names that are not
parameters (a papermill typo such as ``-p seeed 1``) and validates the rest with
:func:`twolayer.core.params.validate` (the parameter types, the size profiles, derived values
and constraints live in :mod:`twolayer.core.params`).

Claims are recorded with :meth:`Contract.theorem`, :meth:`Contract.observation` and
:meth:`Contract.sanity` (see :mod:`twolayer.page.checks`), theorems' hypotheses with
:meth:`Contract.hypothesis`, numbers with :meth:`Contract.metric`. :meth:`Contract.finish`
shows the page's check table and writes
``{"params", "metrics", "checks", "check_details", "hypotheses", "environment"}`` atomically to
``results_path`` (or, in a book build, to ``$TWOLAYER_RESULTS_DIR/<chapter>.json``, which the
claims index reads). The results hold no timings or timestamps, so equal parameters and seed
give an identical file. Used by every chapter's page.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.fmt import fmt
from ..core.io import atomic_write_json, to_jsonable
from ..core.params import (
    COMMON,
    Constraint,
    Params,
    Spec,
    check_profiles,
    common_spec,
    unknown_parameters,
    validate,
)
from .checks import (
    Check,
    CheckFailed,
    Claim,
    Hypothesis,
    display_bundle,
    glue,
    make_hypothesis,
    table,
)

__all__ = [
    "RESULTS_DIR_ENV",
    "Contract",
    "ChapterSpec",
    "run_command",
    "yaml_value",
]

RESULTS_DIR_ENV = "TWOLAYER_RESULTS_DIR"


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
        self.spec: dict[str, Spec] = {**common_spec(), **spec}
        check_profiles(self.spec, profiles)
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
        """The page's parameters, checked and completed: names the notebook defined after the
        contract that are not parameters are refused, then the values are validated by
        :func:`twolayer.core.params.validate` (``None`` from the profile and the ``derive``
        rules, then types, ranges and constraints); one
        :class:`~twolayer.core.params.ParameterError` names the first bad parameter."""
        ns = self.namespace
        unknown = sorted(
            k
            for k in set(ns) - self._before - set(self.spec)
            if not k.startswith("_") and not self._is_code(ns[k])
        )
        if unknown:
            raise unknown_parameters(unknown, self.spec)
        self.params = validate(
            self.spec,
            self.profiles,
            {k: ns[k] for k in self.spec if k in ns},
            derive=self.meta.derive,
            constraints=self.meta.constraints,
        )
        return self.params

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
            v = fmt(self.params[name])
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
        its value is glued under its name; a false result raises
        :class:`~twolayer.page.checks.CheckFailed`."""
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
                f"; measured {fmt(value)}, bound {c.op or ''} {fmt(c.bound)}"
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
        injects them); a bad value raises the page's
        :class:`~twolayer.core.params.ParameterError`."""
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
