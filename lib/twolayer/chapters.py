"""The chapters' modules by chapter name (``"paper_b/frozen"`` ->
``twolayer.paper_b.chapters.frozen``), for the command line, the robustness harness and the
tests (every chapter has one)."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .page.contract import ChapterSpec


def module(chapter: str) -> ModuleType | None:
    """The module of ``chapter`` (``"<paper>/<name>"``), or ``None`` when it has none yet."""
    paper, _, name = chapter.partition("/")
    if paper not in ("paper_a", "paper_b") or not name.isidentifier():
        raise ValueError(f"not a chapter name: {chapter!r} (e.g. 'paper_b/frozen')")
    target = f"twolayer.{paper}.chapters.{name}"
    if importlib.util.find_spec(target) is None:
        return None
    return importlib.import_module(target)


def spec(chapter: str) -> ChapterSpec | None:
    """The chapter's :class:`~twolayer.page.contract.ChapterSpec`, or ``None``."""
    mod = module(chapter)
    return None if mod is None else mod.SPEC
