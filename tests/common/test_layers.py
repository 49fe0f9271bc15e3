"""The library's layers (CONTRIBUTING.md, "Naming and layout"): ``twolayer.common`` imports
nothing else of the book; ``paper_a`` and ``paper_b`` import only ``common`` and themselves; the
entry points (``sweep``, ``robustness``, ``bench``, ``reference``, ``cli``) sit on top. And
each module's docstring names the chapters that use it (the library reference page is generated
from the docstrings)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "lib" / "twolayer"
MODULES = sorted(p for p in LIB.rglob("*.py") if "__pycache__" not in p.parts)
ALLOWED = {
    "common": {"common"},
    "paper_a": {"common", "paper_a"},
    "paper_b": {"common", "paper_b"},
}
ENTRY_POINTS = {"sweep", "robustness", "bench", "reference", "cli", "chapters"}


def _layer(path: Path) -> str:
    rel = path.relative_to(LIB)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imported_layers(path: Path, source: str | None = None) -> set[str]:
    """Layers of ``twolayer`` that ``path`` (or ``source`` placed there) imports."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    pkg = path.relative_to(LIB).parent.parts  # ("paper_a",) or ()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(pkg[: len(pkg) - (node.level - 1)]) if node.level > 1 else list(pkg)
                target = base + (node.module.split(".") if node.module else [])
                names = [a.name for a in node.names] if not node.module and not target else []
                out.add(target[0] if target else (names[0] if names else ""))
            elif node.module and node.module.split(".")[0] == "twolayer":
                parts = node.module.split(".")
                if len(parts) > 1:
                    out.add(parts[1])
                else:  # from twolayer import sweep
                    out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "twolayer":
                    out.add(parts[1] if len(parts) > 1 else "")
    return out - {""}


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(LIB)) for p in MODULES])
def test_imports_flow_one_way(path):
    layer = _layer(path)
    if layer in ENTRY_POINTS or layer == "__init__":
        return
    bad = _imported_layers(path) - ALLOWED[layer]
    assert not bad, f"{path.relative_to(LIB)} ({layer}) imports {sorted(bad)}"


def test_the_check_sees_a_wrong_import():
    """The scan is not vacuous: a paper_b module importing paper_a and the sweep is seen."""
    src = "from ..paper_a import trainer\nfrom twolayer import sweep\nfrom . import kernels\n"
    found = _imported_layers(LIB / "paper_b" / "probe.py", src)
    assert found == {"paper_a", "sweep", "paper_b"}, found


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if p.name not in ("__init__.py", "_lazy.py")],
    ids=[str(p.relative_to(LIB)) for p in MODULES if p.name not in ("__init__.py", "_lazy.py")],
)
def test_docstring_names_its_chapters(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert doc, f"{path.relative_to(LIB)} has no module docstring"
    if _layer(path) in ENTRY_POINTS:
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
