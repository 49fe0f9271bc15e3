"""The claims index on the command line: ``python -m twolayer.tools.claims RESULTS_DIR
[--registry book/claims.yml]`` prints, as JSON, every statement of ``book/claims.yml`` with
its status computed from a build's results (:func:`twolayer.page.claims.statuses`) and its
carrying checks (kind, value, bound, margin, whether they applied), so that the index can be
audited without a build; the exit status is 1 when the registry and the results disagree
(a check named that no page recorded, say)."""

from __future__ import annotations

import json
from pathlib import Path

from ..page.claims import index_json, load_registry, load_results, statuses

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """``python -m twolayer.tools.claims RESULTS_DIR [--registry book/claims.yml]``."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m twolayer.tools.claims", description=main.__doc__)
    ap.add_argument("results", type=Path, help="a build's results folder (_build/results)")
    ap.add_argument("--registry", type=Path, default=Path("book") / "claims.yml")
    args = ap.parse_args(argv)
    registry, problems = statuses(load_registry(args.registry), load_results(args.results))
    out = {"statements": index_json(registry), "problems": [list(p) for p in problems]}
    json.dump(out, sys.stdout, indent=1, default=str)
    sys.stdout.write("\n")
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
