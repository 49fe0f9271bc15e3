"""Mutation testing of the book's numerical core and the sweep's resume logic (``make mutate``).

mutmut (settings: ``[tool.mutmut]`` in pyproject.toml; it works in ``.mutmut/``) copies the
code into ``mutants/``, makes
every small change it can to the modules below (an operator, a constant, a comparison, an
argument...), and runs the unit tests that reach the changed function against each change. A
mutant that no test notices *survives*: either a test is missing, or the change is equivalent
(it cannot change a result). This script runs mutmut on

* ``twolayer.paper_a.kkt``, ``trainer``, ``metrics``, ``assumptions``,
  ``twolayer.paper_b.population`` (the formulas the theorem checks rely on), and
* ``twolayer.tools.sweep``'s resume logic (``is_done``, ``gather``, ``_flatten``),

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
    "sweep": "twolayer.tools.sweep",
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
    "twolayer.paper_a.trainer": ("gradient_descent", "log_spaced_steps"),
    "twolayer.tools.sweep": SWEEP_FUNCTIONS,
    "twolayer.paper_a.metrics": (
        "stable_rank",
        "numerical_rank",
        "margins",
        "normalized_margins",
        "normalize_by_margin",
    ),
}
# mutants checked by hand to be equivalent (no valid input changes a result), by name without
# the leading "twolayer." and the "__mutmut_" infix, with the reason
LABELS = "labels are validated to be +-1, where this comparison gives the same mask"
TIE = "differs only when two real numbers computed from random data are exactly equal"
FLOAT64 = "the values are already float64 (astype/asarray without dtype keeps them)"
BAR = "the progress bar only: no result depends on it"
CPU = "device=None is the CPU, where every tensor of this machine lives (a GPU run would differ)"
MESSAGE_CASE = "pandas reads the orient case-insensitively"
_EQ = {
    "paper_a.metrics": {
        "x_stable_rank": {
            24: "spec2 >= 0 in the outer where: spec2 = 0 only for W = 0, where fro2 / 1 = 0 too",
            33: "spec2 >= 0 in the inner where: the 0/0 it makes is never "
            "selected by the outer where",
        },
    },
    "paper_a.kkt": {
        "x_multipliers_from_vu": {
            7: FLOAT64,
            10: FLOAT64,
            8: LABELS,
            11: LABELS,
            12: LABELS,
            34: "rcond=None is NumPy 2's default",
        },
        "x_vu_from_multipliers": {7: LABELS, 10: LABELS, 11: LABELS},
        "x_problem1_kkt_residual": {
            22: "lam / y = lam * y for y = +-1",
            25: "a(None) is float64 on the CPU, as W after _np",
            26: "unsqueeze(1) = unsqueeze(-1) on the 1-D a",
        },
        "x_certify": {100: TIE, 154: TIE, 155: TIE},
        "x_solve_problem3": {15: FLOAT64, 16: LABELS},
        "x_three_point_kkt_system": {
            5: "m / 2 = m // 2 for the even m the example takes",
            47: LABELS,
            56: "the system's matrix is symmetric when m1 = m2",
        },
    },
    "paper_a.trainer": {
        "x_gradient_descent": {
            **dict.fromkeys(
                [
                    106,
                    107,
                    149,
                    150,
                    151,
                    152,
                    153,
                    154,
                    155,
                    156,
                    157,
                    158,
                    159,
                    160,
                    261,
                    262,
                    7,
                    8,
                ],
                BAR,
            ),
            **dict.fromkeys([37, 39, 42, 44, 48, 51], CPU),
            169: "the loop leaves at t == steps",
            192: TIE,
            6: "max_loss_growth 1e8 + 1 instead of 1e8: no run can tell",
            233: "q is (B, n): dim 1 is dim -1",
            **dict.fromkeys(
                [215, 216, 221, 222],
                "the weights check is unreachable: a "
                "non-finite W makes the loss non-finite, checked first",
            ),
        },
        "x_log_spaced_steps": {
            15: "1 is in the geometric grid anyway",
            27: "the extra point 2 is dropped by pts <= steps",
        },
    },
    "paper_a.assumptions": {
        "x_gram_statistics": {
            3: FLOAT64,
            5: FLOAT64,
            20: "a Gram diagonal is never negative",
            36: "the Gram is square",
            37: "the Gram is square",
            46: "one point: the off-diagonal max of a 1 x 1 zero matrix is 0",
            52: "one point: the off-diagonal max of a 1 x 1 zero matrix is 0",
        },
        "x_data_statistics": {9: FLOAT64, 11: FLOAT64},
        "x_holds_surely": {
            23: TIE,
            26: TIE,
            24: "rmin <= 1 makes the bound false anyway (its right side is below 1/3 < n)",
        },
        "x_sufficient_dimension": dict.fromkeys(
            [7, 8, 20], "the bisection returns the smallest d either way (d >= 3 here)"
        ),
        "x__gaussian_gram_stats": {6: "aniso = 0 gives a scale of ones"},
        "x_fraction_table": {13: "as_index=None is taken as False"},
        "x_half_point": {
            12: "at f = 1/2 exactly both interpolations give that grid point",
            **dict.fromkeys([3, 5, 7, 9], FLOAT64),
        },
        "x_log_exponent": {
            46: "log(nan) is nan either way",
            55: FLOAT64,
            57: FLOAT64,
            72: "fit(None): None is falsy like False",
            82: "n_boot / 2 and n_boot // 2 agree for the even n_boot used",
        },
        "x_lemma33_sweep": {
            **dict.fromkeys([2, 3, 30, 31, 32, 34, 35, 36, 37, 38, 39, 40], BAR),
            97: TIE,
        },
    },
    "paper_b.population": {
        "x_mc_loss": {1: "a batch of 200001 draws the same stream"},
        "xǁNetǁunflat": dict.fromkeys([3, 5], "Net converts every part to float64 anyway"),
    },
    "sweep": {
        "x_gather": {
            22: "a None prefix is falsy like ''",
            42: "a None prefix is falsy like ''",
            **dict.fromkeys([75, 77, 81, 82], "run ids are unique: any sort agrees"),
            86: "index=None stores a RangeIndex as metadata, not as a column",
            88: "index=None stores a RangeIndex as metadata, not as a column",
            106: MESSAGE_CASE,
        },
        "x_is_done": {6: "the locale is UTF-8 here", 8: "'UTF-8' names the same codec"},
    },
}
EQUIVALENT: dict[str, str] = {
    f"{mod}.{func}__mutmut_{k}": why
    for mod, funcs in _EQ.items()
    for func, ks in funcs.items()
    for k, why in ks.items()
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
        if st == "survived" and name.removeprefix("twolayer.") in EQUIVALENT:
            st = "equivalent (survived, checked by hand)"
        per_module[mod][st] += 1
        if st == "survived":
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
