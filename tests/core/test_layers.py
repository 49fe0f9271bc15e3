"""The library's layers (CONTRIBUTING.md, "Naming and layout"), imports flowing one way:
``core`` (seeds, device, io, store, lockfile, params, fmt, stats) imports nothing else of the
book; the papers' mathematics (``paper_a``, ``paper_b``) only ``core`` and themselves; the
chapters (``paper_*/chapters``) and the page machinery (``page``: contract, checks, claims,
plotting, paperscale) sit above them; the chapters' registry (``twolayer.chapters``) above the
chapters; the tools (``tools``: command line, notebook runner, sweep, robustness, reference,
the benchmark package, the paper-scale collection) on top. Each layer holds the modules that
say what it holds (``LAYOUT``), the page machinery has no command line, and each module's
docstring names the chapters that use it (the library reference page is generated from the
docstrings)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import twolayer

# the package the tests import (``lib/twolayer`` in a checkout, ``src/twolayer`` in the
# mutation run's copy)
LIB = Path(twolayer.__file__).resolve().parent
MODULES = sorted(p for p in LIB.rglob("*.py") if "__pycache__" not in p.parts)
ALLOWED = {
    "core": {"core"},
    "paper_a": {"core", "paper_a"},
    "paper_b": {"core", "paper_b"},
    "page": {"core", "page"},
    "paper_a/chapters": {"core", "page", "paper_a", "paper_a/chapters"},
    "paper_b/chapters": {"core", "page", "paper_b", "paper_b/chapters"},
    "chapters": {"core", "page", "paper_a/chapters", "paper_b/chapters"},
    "tools": {"core", "page", "paper_a", "paper_b", "paper_a/chapters", "paper_b/chapters"}
    | {"chapters", "tools", "__init__"},
    "__init__": {"core"},
}
TOOLS = {"sweep", "robustness", "bench", "reference", "cli", "runner", "paperscale", "claims"}

# The modules each package holds (``name`` a module, ``name/`` a package): what the layers say
# they hold.
LAYOUT = {
    "core": {"_lazy", "device", "fmt", "io", "lockfile", "params", "seeds", "stats", "store"},
    "page": {"checks", "claims", "contract", "paperscale", "plotting"},
    "tools": {
        "bench/",
        "claims",
        "cli",
        "paperscale",
        "reference",
        "robustness",
        "runner",
        "sweep",
    },
    "tools/bench": {"__main__", "gemm", "notebooks", "paper_a", "paper_b", "report", "timing"},
}


def _layer_of(parts: list[str]) -> str:
    """The layer of the module ``twolayer.<parts>`` (a package path)."""
    if not parts or parts[0].startswith("__"):  # the package itself (__version__, ...)
        return "__init__"
    if parts[0] in ("paper_a", "paper_b") and len(parts) > 1 and parts[1] == "chapters":
        return f"{parts[0]}/chapters"
    if parts[0] in TOOLS:  # `from twolayer import sweep` would name a tool at the top
        return "tools"
    return parts[0]


def _layer(path: Path) -> str:
    rel = list(path.relative_to(LIB).with_suffix("").parts)
    if rel[-1] == "__init__":
        rel = rel[:-1]
        if rel and rel[0] in ("paper_a", "paper_b") and rel[-1] == "chapters":
            return f"{rel[0]}/chapters"
        return "__init__" if not rel else _layer_of(rel)
    return _layer_of(rel)


def _imported_layers(path: Path, source: str | None = None) -> set[str]:
    """Layers of ``twolayer`` that ``path`` (or ``source`` placed there) imports."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    pkg = list(path.relative_to(LIB).parent.parts)  # ["paper_a", "chapters"] or []
    out = set()
    for node in ast.walk(tree):
        targets: list[list[str]] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                mod = node.module.split(".") if node.module else []
                if mod:
                    targets.append(base + mod)
                else:  # from . import x, y
                    targets += [base + [a.name] for a in node.names]
            elif node.module and node.module.split(".")[0] == "twolayer":
                mod = node.module.split(".")[1:]
                targets += [mod + [a.name] for a in node.names] if len(mod) <= 1 else [mod]
        elif isinstance(node, ast.Import):
            targets += [a.name.split(".")[1:] for a in node.names if a.name.startswith("twolayer")]
        for t in targets:
            if t:
                out.add(_layer_of(t))
    return out


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(LIB)) for p in MODULES])
def test_imports_flow_one_way(path):
    layer = _layer(path)
    bad = _imported_layers(path) - ALLOWED[layer]
    assert not bad, f"{path.relative_to(LIB)} ({layer}) imports {sorted(bad)}"


def _held(package: str) -> set[str]:
    folder = LIB / package
    modules = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
    packages = {f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").is_file()}
    return modules | packages


@pytest.mark.parametrize("package", sorted(LAYOUT))
def test_each_layer_holds_what_it_says(package):
    """``core`` holds the parameter types (``params``) and the one number formatter (``fmt``);
    the benchmark is a package run as ``python -m twolayer.tools.bench``; the one notebook
    runner and the paper-scale collection are tools."""
    held = _held(package)
    assert LAYOUT[package] <= held, f"missing from {package}: {sorted(LAYOUT[package] - held)}"
    extra = held - LAYOUT[package]
    assert not extra, f"{package} holds modules the layout does not name: {sorted(extra)}"


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_the_paper_scale_collection_is_a_tool():
    """The page shows a paper-profile record (``page/paperscale``); collecting the records and
    their command line (``python -m twolayer.tools.paperscale``) are a tool's."""
    collection = {"collect", "profile_table", "notebook_figures", "scalar_metrics", "main"}
    assert collection <= _defined(LIB / "tools" / "paperscale.py")
    assert not collection & _defined(LIB / "page" / "paperscale.py")
    assert {"beside", "comparison", "comparison_table", "check_rows"} <= _defined(
        LIB / "page" / "paperscale.py"
    )


def test_the_check_sees_a_wrong_import():
    """The scan is not vacuous: a paper_b module importing paper_a, a tool, the page machinery
    and a chapter is seen; and so is a page module importing a paper."""
    src = (
        "from ..paper_a import trainer\nfrom twolayer.tools import sweep\nfrom . import kernels\n"
        "from ..page.checks import Claim\nfrom .chapters import stage2\n"
    )
    found = _imported_layers(LIB / "paper_b" / "probe.py", src)
    assert found == {"paper_a", "tools", "paper_b", "page", "paper_b/chapters"}, found
    assert _imported_layers(LIB / "page" / "probe.py", "from ..paper_a import kkt\n") == {"paper_a"}
    assert _layer(LIB / "paper_b" / "chapters" / "stage2.py") == "paper_b/chapters"


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if p.name not in ("__init__.py", "_lazy.py")],
    ids=[str(p.relative_to(LIB)) for p in MODULES if p.name not in ("__init__.py", "_lazy.py")],
)
def test_docstring_names_its_chapters(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert doc, f"{path.relative_to(LIB)} has no module docstring"
    if _layer(path) in ("tools", "chapters"):
        return
    assert any(w in doc for w in ("hapter", "paper_a/", "paper_b/", "Used by", "page")), (
        f"{path.relative_to(LIB)}: the docstring should name the chapters that use it"
    )


# --- interfaces that cannot be misused silently ------------------------------------------------

MAX_POSITIONAL = 4


def _positional_beyond(tree) -> list[str]:
    """Public functions of ``tree`` that take more than MAX_POSITIONAL positional parameters
    (``self``/``cls`` not counted)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith(
            "_"
        ):
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            if names[:1] in (["self"], ["cls"]):
                names = names[1:]
            if len(names) > MAX_POSITIONAL:
                out.append(f"{node.name} ({len(names)} positional)")
    return out


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(LIB)) for p in MODULES])
def test_public_functions_are_keyword_only_beyond_the_fourth(path):
    """Beyond the fourth, arguments are named at the call (``*,``): swapping two of a long
    list cannot silently run another experiment."""
    found = _positional_beyond(ast.parse(path.read_text(encoding="utf-8")))
    assert not found, f"{path.relative_to(LIB)}: make these keyword-only beyond the 4th: {found}"


def test_the_keyword_scan_sees_a_long_positional_list():
    src = (
        "def f(a, b, c, d, e): pass\n"
        "def g(self, a, b, c, d, *, e): pass\n"
        "def _h(a, b, c, d, e): pass\n"
    )
    assert _positional_beyond(ast.parse(src)) == ["f (5 positional)"]


def test_the_page_machinery_has_no_command_line():
    """Command lines are tools: no module of ``page`` defines ``main`` or runs as a script (the
    claims index's JSON is ``python -m twolayer.tools.claims``)."""
    for path in sorted((LIB / "page").glob("*.py")):
        src = path.read_text(encoding="utf-8")
        assert "main" not in _defined(path), path.name
        assert '__name__ == "__main__"' not in src, path.name
