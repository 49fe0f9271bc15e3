"""Lazy submodules for the package ``__init__`` files: ``twolayer.paper_a.data`` imports
``data`` on first use, so importing one subpackage never pulls in another's dependencies
(Paper B's chapters never import torch)."""

from __future__ import annotations

import importlib


def lazy_submodules(package: str, names: list[str]):
    """A module ``__getattr__`` that imports ``package.<name>`` for the names listed."""

    def __getattr__(name: str):
        if name in names:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
