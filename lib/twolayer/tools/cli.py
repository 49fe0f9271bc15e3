"""The ``twolayer`` command: run one page of the book from a shell, list the pages, reach the
other entry points.

``twolayer run CHAPTER [--profile P] [-p NAME=VALUE ...] [--out DIR]``
    executes the chapter (``paper_a/setting``, or the path of a notebook that follows the
    notebook contract) with the notebook runner (:func:`twolayer.tools.runner.execute_run`).
    Each value given with ``-p`` is read as YAML, so ``-p gamma=0.5 -p 'ns=[4, 8, 16]'`` give
    a number and a list. Before anything runs, the parameters are validated in this process by the
    chapter's module (its :class:`~twolayer.page.contract.ChapterSpec`, the one the page
    builds its contract from): a bad chapter name or a bad parameter stops with the message
    the notebook would give, exit status 2, and nothing is written (a notebook outside the
    book's chapters is validated by its own contract when it runs).
    Otherwise the executed notebook (``notebook.ipynb``) and the results (``results.json``)
    go to ``--out`` (default ``runs/<paper>/<chapter>/``), the page's checks are printed
    (kind, check, statement, measured value, bound, margin, result), and the exit status is 1
    when a check failed or the notebook stopped, else 0. Every page shows, under its
    parameter table, the ``twolayer run`` command that reproduces it.
``twolayer list [CHAPTER ...]``
    the chapters, each with its parameters (type, default, meaning).
``twolayer sweep|robustness|bench ARGS``
    the entry points :mod:`twolayer.tools.sweep`, :mod:`twolayer.tools.robustness` and
    :mod:`twolayer.tools.bench` with their own arguments.

The chapters are the notebooks of a checkout of the book's repository (``notebooks/``): the
one this package is installed from in editable mode (``pip install -e .``), else the current
folder's, else ``--root``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from ..core.io import repository_root

ROOT = repository_root()
DELEGATED = ("sweep", "robustness", "bench")
_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


class UsageError(Exception):
    """A bad chapter name or parameter: printed as it is, exit status 2."""


# --- the chapters ----------------------------------------------------------------------------


def book_root(root: str | os.PathLike | None = None) -> Path:
    """The checkout whose ``notebooks/`` holds the chapters (see the module docstring)."""
    candidates = [Path(root)] if root else [ROOT, Path.cwd()]
    for c in candidates:
        if (c / "notebooks").is_dir() and any((c / "notebooks").glob("*/*.ipynb")):
            return c.resolve()
    raise UsageError(
        "no chapters found: `twolayer run` needs a checkout of the book's repository "
        f"(a notebooks/ folder; looked in {', '.join(str(c) for c in candidates)}). Clone it "
        "and `pip install -e .` there, or pass --root"
    )


def chapters(root: Path) -> dict[str, Path]:
    """``{"paper_a/setting": <notebook .ipynb>, ...}``, sorted."""
    found = sorted((root / "notebooks").glob("*/*.ipynb"))
    return {f"{p.parent.name}/{p.stem}": p for p in found}


def resolve_chapter(name: str, root: str | os.PathLike | None = None) -> tuple[str, Path]:
    """``(chapter name, notebook)`` for a chapter name or a notebook path."""
    path = Path(name)
    if path.suffix in (".ipynb", ".md") and path.with_suffix(".ipynb").is_file():
        nb = path.with_suffix(".ipynb").resolve()
        return f"{nb.parent.name}/{nb.stem}", nb
    known = chapters(book_root(root))
    key = name.strip("/").removeprefix("notebooks/")
    if key not in known:
        raise UsageError(
            f"unknown chapter {name!r}; the chapters are: {', '.join(known)} "
            "(`twolayer list` shows their parameters)"
        )
    return key, known[key]


def title(nb: Path) -> str:
    """The chapter's title: the first level-1 heading of its MyST source."""
    md = nb.with_suffix(".md")
    if md.exists():
        for line in md.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return ""


# --- parameters --------------------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """A ``-p`` value read as YAML; a number in exponent notation without a decimal point
    (``1e-3``, which YAML 1.1 reads as a string) is a float."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"cannot read {text!r} as YAML: {exc}") from None
    if isinstance(value, str) and _FLOAT.match(text.strip()):
        return float(text)
    return value


def parse_params(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"-p {item!r} must look like NAME=VALUE")
        if name == "results_path":
            raise UsageError("results_path is set by `twolayer run` (see --out)")
        if name == "profile":
            raise UsageError("give the profile with --profile")
        out[name] = parse_value(text)
    return out


def validate(name: str, profile: str | None, params: dict[str, Any]):
    """The chapter ``name``'s parameters validated in this process by its module's
    :class:`~twolayer.page.contract.ChapterSpec`: ``(chapter command name, profile)``; the
    contract's :class:`~twolayer.core.params.ParameterError` becomes a
    :class:`UsageError` with its message. A notebook outside the book's chapters (no module)
    is validated by its own contract when it runs: ``(None, profile asked or $BOOK_PROFILE)``."""
    from ..chapters import spec
    from ..core.params import PROFILES, ParameterError

    try:
        chapter = spec(name)
    except ValueError:
        chapter = None
    if chapter is None:
        asked = profile or os.environ.get("BOOK_PROFILE") or "book"
        if asked not in PROFILES:
            raise UsageError(f"ParameterError: profile must be one of {list(PROFILES)}")
        return None, asked
    try:
        P = chapter.params(profile, **params)
    except ParameterError as exc:
        raise UsageError(f"ParameterError: {exc}") from None
    return chapter.chapter, P.profile


# --- the check table ---------------------------------------------------------------------------


def check_rows(results: dict) -> list[tuple[str, ...]]:
    """One row per check of a results file: kind, check, statement, measured, bound, margin,
    result."""
    from ..core.fmt import fmt
    from ..page.checks import bound_text, margin, statement_title

    rows = []
    for name, passed in results.get("checks", {}).items():
        d = results.get("check_details", {}).get(name, {})
        op, bound, value = d.get("op"), d.get("bound"), d.get("value")
        m = margin(value, op, bound) if passed is not None else None
        if passed is None:
            res = "not applicable" + (f": {d['reason']}" if d.get("reason") else "")
        else:
            res = "pass" if passed else "FAIL"
        st = d.get("statement")
        rows.append(
            (
                d.get("kind", ""),
                name,
                statement_title(st) if st else "—",
                fmt(value),
                bound_text(bound, op),
                "—" if m is None else fmt(m),
                res,
            )
        )
    order = {"theorem": 0, "observation": 1, "sanity": 2}
    rows.sort(key=lambda r: order.get(r[0], 3))
    return rows


def format_table(rows: list[tuple[str, ...]]) -> str:
    head = ("kind", "check", "statement", "measured", "bound", "margin", "result")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    widths[-1] = 0  # the result (with its reason) runs to the end of the line

    def line(r):
        return "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()

    return "\n".join(
        [line(head), line(["-" * w for w in widths[:-1]] + ["------"])] + [line(r) for r in rows]
    )


# --- the commands ------------------------------------------------------------------------------


def run(
    chapter: str,
    profile: str | None = None,
    params: dict[str, Any] | None = None,
    out: str | os.PathLike | None = None,
    *,
    root: str | os.PathLike | None = None,
    kernel_name: str = "python3",
    stream=None,
) -> int:
    """``twolayer run`` (see the module docstring); returns the exit status."""
    from ..page.contract import run_command
    from .runner import ERROR, EXECUTED, RESULTS, execute_run

    stream = stream or sys.stdout
    params = dict(params or {})
    name, nb = resolve_chapter(chapter, root)
    command_name, chosen = validate(name, profile, params)
    out_dir = (Path(out) if out is not None else Path("runs") / name).resolve()
    asked = {"profile": chosen, **params}
    print(
        f"running {name} ({chosen} profile) into {out_dir}: "
        + run_command(command_name or str(nb), chosen, params),
        file=stream,
        flush=True,
    )
    res = execute_run(str(nb), asked, str(out_dir), kernel_name=kernel_name, threads=None)
    executed = out_dir / EXECUTED
    if res["status"] != "done":
        print(f"FAILED after {res['seconds']:.1f} s: {res['error']}", file=stream)
        print(f"executed notebook: {executed}; error: {out_dir / ERROR}", file=stream)
        return 1
    results = json.loads((out_dir / RESULTS).read_text(encoding="utf-8"))
    rows = check_rows(results)
    print(format_table(rows) if rows else "(this page records no checks)", file=stream)
    failed = [n for n, v in results.get("checks", {}).items() if v is False]
    na = sum(v is None for v in results.get("checks", {}).values())
    print(
        f"{len(rows) - len(failed) - na} passed, {na} not applicable, {len(failed)} failed "
        f"in {res['seconds']:.1f} s; executed notebook: {executed}; results: "
        f"{out_dir / RESULTS}",
        file=stream,
    )
    return 1 if failed else 0


def list_chapters(names: list[str] | None = None, root=None, stream=None) -> int:
    """``twolayer list``: each chapter with its parameters (type, default, meaning)."""
    from ..core.fmt import fmt

    stream = stream or sys.stdout
    known = chapters(book_root(root))
    selected = [resolve_chapter(n, root) for n in names] if names else list(known.items())
    from .. import chapters as modules

    for name, nb in selected:
        contract = modules.spec(name).unbound()
        print(f"{name}  {title(nb)}", file=stream)
        defaults = contract.defaults or {}
        for pname, spec in contract.spec.items():
            default = defaults.get(pname)
            if default is not None:
                value = fmt(default)
            elif pname == "profile":
                value = 'None ($BOOK_PROFILE, else "book")'
            elif pname in ("results_path",) or pname not in contract.profiles["book"]:
                value = "None"
            else:
                value = "None (from the profile)"
            print(f"    {pname} = {value}: {spec.doc} ({spec.describe})", file=stream)
        print(file=stream)
    return 0


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="twolayer",
        description="Run a page of the book, list the pages, or reach the other entry points.",
        epilog="twolayer sweep|robustness|bench --help: the options of those entry points.",
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    r = sub.add_parser("run", help="execute one chapter and print its checks")
    r.add_argument("chapter", help="e.g. paper_a/setting (twolayer list), or a notebook path")
    r.add_argument(
        "--profile",
        choices=("smoke", "book", "paper"),
        default=None,
        help="size profile (default: $BOOK_PROFILE, else book)",
    )
    r.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter, its value read as YAML (e.g. -p gamma=0.5 -p 'ns=[4, 8]')",
    )
    r.add_argument("--out", help="output folder (default: runs/<paper>/<chapter>)")
    r.add_argument("--kernel", default="python3", help="Jupyter kernel (default python3)")
    r.add_argument(
        "--root",
        help="the book's checkout (default: the one this package is installed from, else the "
        "current folder)",
    )
    ls = sub.add_parser("list", help="the chapters and their parameters")
    ls.add_argument("chapters", nargs="*", help="only these chapters")
    ls.add_argument("--root", help="the book's checkout")
    for cmd in DELEGATED:
        sub.add_parser(cmd, help=f"python -m twolayer.tools.{cmd} (its own arguments follow)")
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        import importlib

        return importlib.import_module(f"twolayer.tools.{argv[0]}").main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return run(
                args.chapter,
                args.profile,
                parse_params(args.param),
                args.out,
                root=args.root,
                kernel_name=args.kernel,
            )
        return list_chapters(args.chapters, args.root)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
