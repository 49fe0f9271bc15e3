"""Mutation testing of the book's numerical core and the sweep's resume logic (``make mutate``).

mutmut (settings: ``[tool.mutmut]`` in pyproject.toml; it works in ``.mutmut/``) copies the
code into ``mutants/``, makes
every small change it can to the modules below (an operator, a constant, a comparison, an
argument...), and runs the unit tests that reach the changed function against each change. A
mutant that no test notices *survives*: either a test is missing, or the change is equivalent
(it cannot change a result). This script runs mutmut on

* ``twolayer.paper_a.kkt``, ``trainer``, ``metrics``, ``assumptions``,
  ``twolayer.paper_b.population`` (the formulas the theorem checks rely on), and
* ``twolayer.sweep``'s resume logic (``is_done``, ``gather``, ``_flatten``),

and prints the surviving mutants per module (``cd .mutmut && mutmut show NAME`` shows one).
Exit status 1 when a mutant survives in a function listed in ``MUST_KILL`` (the formulas a
theorem check relies on) and is not listed in ``EQUIVALENT`` (checked by hand: it cannot change
a result); the others are reported. ``python tests/mutate.py [--max-children N] kkt trainer``
runs a subset. A full run is about 2000 mutants, one to a few seconds each.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
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
    "twolayer.paper_a.kkt": (
        "problem1_kkt_residual",
        "certify",
        "vu_from_multipliers",
        "multipliers_from_vu",
        "z_from_vu",
        "z_bound",
        "kappa",
        "multiplier_bounds",
        "weights_from_vu",
        "group_means",
    ),
    "twolayer.paper_a.assumptions": ("near_orthogonality", "gram_statistics", "assumption_ratio"),
    "twolayer.paper_b.population": ("loss", "grad", "loss_ge2", "alpha_hat", "beta_hat"),
    "twolayer.paper_a.metrics": (
        "stable_rank",
        "numerical_rank",
        "margins",
        "normalized_margins",
        "normalize_by_margin",
    ),
}
# mutants checked by hand to be equivalent (no valid input changes a result), by name without
# the leading "twolayer.", with the reason
LABELS = "labels are validated to be +-1, where this comparison gives the same mask"
EQUIVALENT: dict[str, str] = {
    "paper_a.metrics.x_stable_rank__mutmut_24": "spec2 >= 0 in the outer where: spec2 = 0 only "
    "for W = 0, where fro2 / 1 = 0 too",
    "paper_a.metrics.x_stable_rank__mutmut_33": "spec2 >= 0 in the inner where: the 0/0 it "
    "makes is never selected by the outer where",
}


def patterns(names: list[str]) -> list[str]:
    out = []
    for short in names:
        mod = MODULES[short]
        if short == "sweep":
            out += [f"{mod}.x_{f}__mutmut_*" for f in SWEEP_FUNCTIONS]
        else:
            out.append(f"{mod}.*")
    return out


WORK = ROOT / ".mutmut"  # mutmut's own copy of the project (its state is kept between runs)


def stage() -> Path:
    """mutmut names a mutant after its file's path, dropping only a leading ``src.``, and puts
    only ``mutants/``, ``mutants/src`` and ``mutants/source`` on ``sys.path``: so it runs in a
    copy of the project where ``lib/`` is ``src/`` (with ``lib/`` the tests would import the
    unmutated ``twolayer`` of the editable install and every mutant would look untested)."""
    WORK.mkdir(exist_ok=True)
    shutil.copytree(
        ROOT / "lib", WORK / "src", dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(
        ROOT / "tests",
        WORK / "tests",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for name in ("_toc.yml", "_config.yml"):
        shutil.copy2(ROOT / name, WORK / name)
    text = (ROOT / "pyproject.toml").read_text()
    head, _, tail = text.partition("[tool.mutmut]")
    tail = tail.replace('"lib/twolayer', '"src/twolayer').replace('["lib"]', '["src"]')
    (WORK / "pyproject.toml").write_text(head + "[tool.mutmut]" + tail)
    return WORK


def function_of(name: str) -> tuple[str, str]:
    """``twolayer.paper_a.kkt.x_certify__mutmut_12`` -> (module, function)."""
    m = re.match(r"(.+?)\.x(?:ǁ[^ǁ]+ǁ)?_?(.+?)__mutmut_\d+$", name)
    if not m:
        return name, ""
    return m.group(1), m.group(2)


def main(argv: list[str]) -> int:
    extra = []
    if argv[:1] == ["--max-children"]:
        extra, argv = argv[:2], argv[2:]
    names = argv or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        print(f"unknown modules {unknown}; choose from {list(MODULES)}", file=sys.stderr)
        return 2
    work = stage()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [sys.executable, "-m", "mutmut", "run", *extra, *patterns(names)],
        cwd=work,
        env=env,
        check=False,
    )
    res = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
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
        if st == "survived" and name.removeprefix("twolayer.") not in EQUIVALENT:
            survivors[mod].append((func, name))
    bad = 0
    for mod in wanted:
        c = per_module[mod]
        print(
            f"{mod}: {sum(c.values())} mutants, "
            + ", ".join(f"{v} {k}" for k, v in sorted(c.items()))
        )
        for func, name in survivors[mod]:
            must = func in MUST_KILL.get(mod, ())
            bad += must
            print(f"   {'MUST KILL ' if must else ''}survived: {name}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
