"""Mutation testing of the book's numerical core and the sweep's resume logic (``make mutate``).

mutmut (settings: ``[tool.mutmut]`` in pyproject.toml) copies ``lib/`` into ``mutants/``, makes
every small change it can to the modules below (an operator, a constant, a comparison, an
argument...), and runs the unit tests that reach the changed function against each change. A
mutant that no test notices *survives*: either a test is missing, or the change is equivalent
(it cannot change a result). This script runs mutmut on

* ``twolayer.paper_a.kkt``, ``trainer``, ``metrics``, ``assumptions``,
  ``twolayer.paper_b.population`` (the formulas the theorem checks rely on), and
* ``twolayer.sweep``'s resume logic (``is_done``, ``gather``, ``_flatten``),

and prints the surviving mutants per module (``mutmut show NAME`` shows one). Exit status 1 when
a mutant survives in a function listed in ``MUST_KILL`` (the formulas a theorem check relies
on); the others are reported. ``python tests/mutate.py kkt trainer`` runs a subset.
"""
from __future__ import annotations

import collections
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = {
    "kkt": "twolayer.paper_a.kkt",
    "trainer": "twolayer.paper_a.trainer",
    "metrics": "twolayer.paper_a.metrics",
    "assumptions": "twolayer.paper_a.assumptions",
    "population": "twolayer.paper_b.population",
    "sweep": "twolayer.sweep",
}
# the sweep: only its resume logic
SWEEP_FUNCTIONS = ("is_done", "gather", "_flatten")
# functions whose every non-equivalent mutant must be killed: what theorem checks compute
MUST_KILL = {
    "twolayer.paper_a.kkt": ("problem1_kkt_residual", "certify", "vu_from_multipliers",
                             "multipliers_from_vu", "z_from_vu", "z_bound", "kappa",
                             "multiplier_bounds", "weights_from_vu", "group_means"),
    "twolayer.paper_a.assumptions": ("near_orthogonality", "gram_statistics",
                                     "assumption_ratio"),
    "twolayer.paper_b.population": ("loss", "grad", "loss_ge2", "alpha_hat", "beta_hat"),
    "twolayer.paper_a.metrics": ("stable_rank", "numerical_rank", "margins",
                                 "normalized_margins", "normalize_by_margin"),
}
# mutants checked by hand to be equivalent (no input changes a result); name -> why
EQUIVALENT: dict[str, str] = {}


def patterns(names: list[str]) -> list[str]:
    out = []
    for short in names:
        mod = MODULES[short]
        if short == "sweep":
            out += [f"{mod}.x_{f}__mutmut_*" for f in SWEEP_FUNCTIONS]
        else:
            out.append(f"{mod}.*")
    return out


def function_of(name: str) -> tuple[str, str]:
    """``twolayer.paper_a.kkt.x_certify__mutmut_12`` -> (module, function)."""
    m = re.match(r"(.+?)\.x(?:ǁ[^ǁ]+ǁ)?_?(.+?)__mutmut_\d+$", name)
    if not m:
        return name, ""
    return m.group(1), m.group(2)


def main(argv: list[str]) -> int:
    names = argv or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        print(f"unknown modules {unknown}; choose from {list(MODULES)}", file=sys.stderr)
        return 2
    subprocess.run([sys.executable, "-m", "mutmut", "run", *patterns(names)], cwd=ROOT,
                   check=False)
    res = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=ROOT,
                         capture_output=True, text=True)
    status: dict[str, str] = {}
    for line in res.stdout.splitlines():
        if ":" in line:
            name, st = line.strip().rsplit(":", 1)
            status[name.strip()] = st.strip()
    wanted = [MODULES[n] for n in names]
    per_module = collections.defaultdict(collections.Counter)
    survivors = collections.defaultdict(list)
    for name, st in sorted(status.items()):
        mod, func = function_of(name)
        if mod not in wanted or (mod == MODULES["sweep"] and func not in SWEEP_FUNCTIONS):
            continue
        per_module[mod][st] += 1
        if st == "survived" and name not in EQUIVALENT:
            survivors[mod].append((func, name))
    bad = 0
    for mod in wanted:
        c = per_module[mod]
        print(f"{mod}: {sum(c.values())} mutants, " + ", ".join(f"{v} {k}" for k, v in
                                                                 sorted(c.items())))
        for func, name in survivors[mod]:
            must = func in MUST_KILL.get(mod, ())
            bad += must
            print(f"   {'MUST KILL ' if must else ''}survived: {name}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
