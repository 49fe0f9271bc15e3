"""``make nbval-update``: refresh the outputs that ``pytest --nbval`` compares.

Each chapter notebook (``notebooks/<paper>/<name>.ipynb``, or those named on the command line)
is executed in the smoke profile, as ``pytest --nbval`` executes it (the notebook's folder as
working directory, one BLAS thread), and the outputs of its cells tagged
``nbval-check-output`` (the parameter table and the check table) are written into the
committed ``.ipynb``; every other cell stays without outputs. Commit the result with a message
that says why the outputs changed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

from twolayer.tools.reference import environment

ROOT = Path(__file__).resolve().parents[1]
CHECK_TAG = "nbval-check-output"


def refresh(path: Path) -> int:
    """Execute ``path`` and keep the tagged cells' outputs; return how many cells kept one."""
    committed = nbformat.read(path, as_version=4)
    md = path.with_suffix(".md")
    if md.exists():  # the .md is the source: refuse to record outputs of stale inputs
        inputs = [(c.cell_type, c.source.strip()) for c in jupytext.read(md).cells]
        if inputs != [(c.cell_type, c.source.strip()) for c in committed.cells]:
            raise SystemExit(f"{md.name} and {path.name} differ: run `make sync` first")
    run = nbformat.read(path, as_version=4)
    # the kernel inherits this environment: the smoke profile and one BLAS thread, as under
    # ``pytest --nbval``; no results file
    env = {"BOOK_PROFILE": "smoke", "TWOLAYER_RESULTS_DIR": None}
    env.update({v: "1" for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    with environment(env):
        client = NotebookClient(
            run,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        )
        client.execute()
    kept = 0
    for cell, done in zip(committed.cells, run.cells, strict=True):
        if cell.cell_type != "code":
            continue
        if CHECK_TAG in cell.metadata.get("tags", []):
            # nbval compares only a cell that ran (it reads the execution count)
            cell.outputs, cell.execution_count = done.outputs, done.execution_count
            kept += 1
        else:
            cell.outputs, cell.execution_count = [], None
    tmp = path.with_name(f".{path.name}.tmp")
    nbformat.write(committed, tmp)
    os.replace(tmp, path)
    return kept


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*/*.ipynb"))
    for p in paths:
        print(f"{p.relative_to(ROOT) if p.is_absolute() else p}: {refresh(p.resolve())} cells")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
