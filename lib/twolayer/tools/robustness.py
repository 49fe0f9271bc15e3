"""The robustness harness: every chapter on seeds the pages never use and on random valid
parameter sets, with a table per chapter and per check.

``python -m twolayer.tools.robustness`` (``make robustness``) runs, with the notebook runner
(:mod:`twolayer.tools.runner`) on the sweep's Dask workers (a local cluster on 127.0.0.1 or
``--scheduler ADDRESS``):

* for each chapter ``--seeds`` runs at seeds ``seed_base, seed_base + 1, ...`` (the pages use
  seed 0; the default base 1000 is used by no page or test);
* ``--random`` runs at parameter sets drawn from the chapter's own
  :class:`~twolayer.page.contract.ChapterSpec`: each parameter with an ``explore`` range is
  drawn with probability 1/2 (at least one per set), and a set that the contract rejects (a
  constraint across parameters) is drawn again. Sets fall inside and outside the theorems'
  hypotheses; outside, the chapter records its theorem checks as not applicable;
* ``--one-at-a-time`` (``all``, or a number ``k``): each explored parameter changed alone to
  each end of its ``explore`` range (:meth:`~twolayer.core.params.Spec.ends`), the others
  at the profile's values; with ``k``, only ``k`` parameters per chapter, chosen by
  ``--sample-seed`` (so that runs with other sample seeds cover the others). An end that a
  constraint across parameters rejects at the profile's other values is reported, not run.

Every check of every run is tallied: passed, not applicable, failed (a run stops at its first
false check, which the error names). A run that fails for another reason counts as an error.
The table goes to the terminal, to ``<out>/robustness.json`` and ``.csv``, and with
``--markdown PATH`` to a Markdown file with the date and the machine (the book's
"Robustness" page includes it). The exit status is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..core.io import (
    atomic_write_bytes,
    atomic_write_csv,
    atomic_write_json,
    repository_root,
    to_jsonable,
)

ROOT = repository_root()
SEED_BASE = 1000
FAILED_CHECK = re.compile(r"check '([^']+)' failed")


def chapters(root: Path = ROOT, only: list[str] | None = None) -> list[Path]:
    """The chapter notebooks ``notebooks/<paper>/<name>.ipynb`` (``only``:
    ``paper_a/setting``...)."""
    found = sorted((Path(root) / "notebooks").glob("*/*.ipynb"))
    if only:
        names = {
            p.relative_to(Path(root) / "notebooks").with_suffix("").as_posix(): p for p in found
        }
        missing = [o for o in only if o not in names]
        if missing:
            raise SystemExit(f"unknown chapters {missing}; known: {sorted(names)}")
        found = [names[o] for o in only]
    return found


def chapter_name(nb: Path) -> str:
    return f"{nb.parent.name}/{nb.stem}"


# --- drawing parameter sets -----------------------------------------------------------------


def random_parameter_sets(
    nb: Path,
    count: int,
    profile: str,
    sample_seed: int = 0,
    *,
    seed_base: int = SEED_BASE,
    max_tries: int = 200,
) -> list[dict]:
    """``count`` valid parameter sets for the chapter ``nb``, drawn from its contract's
    ``explore`` ranges (see the module docstring); deterministic in ``sample_seed``."""
    import numpy as np

    from ..core.params import ParameterError

    chapter = _spec_of(nb)
    explorable = _explored(chapter.unbound())
    if not explorable or count == 0:
        return []
    rng = np.random.default_rng([sample_seed, zlib.crc32(chapter_name(nb).encode())])
    out = []
    for j in range(count):
        for _ in range(max_tries):
            names = [k for k in explorable if rng.random() < 0.5] or [
                list(explorable)[int(rng.integers(len(explorable)))]
            ]
            drawn = {k: to_jsonable(explorable[k].sample(rng)) for k in names}
            try:
                chapter.params(profile, **drawn)
            except ParameterError:
                continue
            out.append({"profile": profile, "seed": seed_base + 10_000 + j, **drawn})
            break
        else:
            raise RuntimeError(f"{chapter_name(nb)}: no valid parameter set in {max_tries} draws")
    return out


def _spec_of(nb: Path):
    """The chapter's :class:`~twolayer.page.contract.ChapterSpec` (its module's ``SPEC``)."""
    from ..chapters import spec

    found = spec(chapter_name(nb))
    if found is None:
        raise ValueError(f"{chapter_name(nb)}: no chapter module (twolayer.<paper>.chapters)")
    return found


def _explored(contract) -> dict:
    return {
        k: s
        for k, s in contract.spec.items()
        if s.explore is not None and k not in ("seed", "profile", "results_path")
    }


def explored(nb: Path) -> dict:
    """The chapter's parameters with an ``explore`` range: ``{name: spec}``."""
    return _explored(_spec_of(nb).unbound())


def one_at_a_time_sets(
    nb: Path,
    profile: str,
    count: int | None = None,
    sample_seed: int = 0,
    *,
    seed_base: int = SEED_BASE,
) -> tuple[list[dict], list[dict]]:
    """Each explored parameter of the chapter ``nb`` (``count`` of them, chosen by
    ``sample_seed``, or all) changed alone to each end of its ``explore`` range: ``(valid
    sets, rejected)``, where a rejected change is one that a constraint across parameters
    refuses at the profile's other values (``{"parameter", "value", "error"}``)."""
    import numpy as np

    from ..core.params import ParameterError

    chapter = _spec_of(nb)
    contract = chapter.unbound()
    names = list(_explored(contract))
    if count is not None and count < len(names):
        rng = np.random.default_rng([sample_seed, zlib.crc32(chapter_name(nb).encode()), 7])
        names = sorted(rng.choice(names, size=count, replace=False).tolist(), key=names.index)
    sets, rejected = [], []
    for name in names:
        for value in contract.spec[name].ends():
            value = to_jsonable(value)
            try:
                chapter.params(profile, **{name: value})
            except ParameterError as exc:
                rejected.append({"parameter": name, "value": value, "error": str(exc)})
                continue
            # one seed for every change, so that a difference comes from the parameter
            sets.append({"profile": profile, "seed": seed_base + 20_000, name: value})
    return sets, rejected


def _applications_line(rows: list[dict]) -> str:
    """How often the theorem checks applied: the fewest runs any of them applied in, which
    checks, and how many applied in fewer than :data:`FEW_APPLICATIONS` runs."""
    theorem = [r for r in rows if r["kind"] == "theorem"]
    if not theorem:
        return ""
    applied = {
        f"{r['chapter']} / `{r['check']}`": r.get("applied", r["passed"] + r["failed"])
        for r in theorem
    }
    fewest = min(applied.values())
    which = sorted(k for k, v in applied.items() if v == fewest)
    few = sum(v < FEW_APPLICATIONS for v in applied.values())
    shown = ", ".join(which[:6]) + (f" and {len(which) - 6} more" if len(which) > 6 else "")
    return (
        f"\nTheorem checks: {len(applied)}; the fewest runs one applied in: {fewest} ({shown}); "
        f"applied in fewer than {FEW_APPLICATIONS} runs: {few} of {len(applied)}.\n"
    )


#: a theorem check applied in fewer runs than this is counted on the page (too few runs to
#: say much about how it fares away from the page's own parameters)
FEW_APPLICATIONS = 10


def _one_at_a_time_phrase(setting, seed: int) -> str:
    """How the run changed parameters one at a time, for the report's first sentence."""
    if setting is None:
        return ""
    which = "each explored parameter" if setting == "all" else f"{setting} parameter(s) each"
    return f", and {which} changed alone to both ends of its range (seed {seed})"


# --- tallying -----------------------------------------------------------------------------------


@dataclass
class Tally:
    kind: str = ""
    runs: int = 0
    passed: int = 0
    not_applicable: int = 0
    failed: int = 0
    failing: list = field(default_factory=list)
    margin: float | None = None  # smallest margin over the runs where it applied
    factor: float | None = None  # smallest factor (value and bound positive)
    largest_factor: float | None = None  # at its smallest over runs: >1e6 in every run flags

    def add_margin(self, details: dict) -> None:
        m, f = details.get("margin"), details.get("factor")
        if m is not None:
            self.margin = m if self.margin is None else min(self.margin, m)
        if f is not None:
            self.factor = f if self.factor is None else min(self.factor, f)


#: a theorem check this many times inside its bound in every run cannot bind: it is listed
#: for review on the robustness page
SLACK_REVIEW = 1e6

#: why each theorem check reviewed for its slack stays (a listed check without a reason here
#: is marked "not reviewed" on the page)
SLACK_REASONS = {
    "paper_a/noisy_xor/high_dim_loss_below_log2_over_n": (
        "the runs are extended until the decision boundary is linear to within tol / 2, by "
        "which time the loss lies orders of magnitude below log 2 / n, so in a finished run "
        "the bound cannot bind; it stays as Theorem 3.4's consequence that every training "
        "point is classified, and a run stopped early fails it (its failing case)"
    ),
    "paper_b/hermite/lemma_i2_corrected_max": (
        "the corrected form of Lemma I.2 (an erratum) is a closed form compared with a "
        "numerical maximum: its value is the maximizer's rounding, and it stays because the "
        "erratum needs the corrected form shown to hold (the printed form fails beside it)"
    ),
    "paper_b/stage2/balanced_loss_equals_lasso_objective": (
        "a step of Lemma 4's proof (AM-GM at balance) computed by two code paths, the network's "
        "loss plus weight decay and the Lasso objective of the conic solver: equal up to "
        "rounding when the proof's step holds; an unbalanced network fails it (its failing case)"
    ),
}


def drawn_set_row(chapter: str, params: dict, res: dict) -> dict:
    """One random parameter set of the report: its values, how its run ended (``passed``,
    ``failed`` or ``error``) and, where it finished, whether each hypothesis of the chapter
    held (``{name: True | False}``)."""
    if res["status"] == "done":
        r = res["results"]
        hyp = {k: v.get("holds") for k, v in r.get("hypotheses", {}).items()}
        outcome = "passed" if all(ok is not False for ok in r["checks"].values()) else "failed"
    else:
        hyp = {}
        outcome = "failed" if FAILED_CHECK.search(res.get("error") or "") else "error"
    return {"chapter": chapter, "params": params, "outcome": outcome, "hypotheses": hyp}


def tally(chapter: str, results: list[tuple[dict, dict]]) -> tuple[dict[str, Tally], list[dict]]:
    """Per check of one chapter, from ``(params, result)`` pairs, where ``result`` is
    ``{"status", "error", "results"}``; returns the tallies and the runs that errored."""
    checks: dict[str, Tally] = {}
    errors = []
    for params, res in results:
        if res["status"] == "done":
            r = res["results"]
            for name, ok in r["checks"].items():
                t = checks.setdefault(name, Tally(r["check_details"][name]["kind"]))
                t.runs += 1
                if ok is None:
                    t.not_applicable += 1
                elif ok:
                    t.passed += 1
                    t.add_margin(r["check_details"][name])
                else:  # a results file is written only when every check passed
                    t.failed += 1
                    t.failing.append(params)
            continue
        m = FAILED_CHECK.search(res.get("error") or "")
        if m:
            kind = (res.get("error") or "").split(" check ")[0].split()[-1]
            t = checks.setdefault(
                m.group(1), Tally(kind if kind in ("theorem", "observation", "sanity") else "")
            )
            t.runs += 1
            t.failed += 1
            t.failing.append(params)
        else:
            errors.append({"chapter": chapter, "params": params, "error": res.get("error")})
    return checks, errors


@dataclass
class Report:
    rows: list[dict]
    errors: list[dict]
    runs: int
    meta: dict
    coverage: dict = field(default_factory=dict)  # per chapter: parameters, explored, varied
    random_sets: list = field(default_factory=list)  # rows of :func:`drawn_set_row`

    def random_sets_markdown(self) -> str:
        """Every random parameter set drawn, with the hypotheses that did not hold in its
        run (those not named held)."""
        if not self.random_sets:
            return ""
        out = [
            f"\n**Random parameter sets drawn: {len(self.random_sets)}.** Each row is one run: "
            "the values drawn (floats to 4 digits here, exact in `robustness.json`; the other "
            "parameters keep the profile's values), how many of "
            "the chapter's hypotheses held, and the ones that did not (its theorem checks that "
            "rest on them were not applicable in that run).\n",
            "| chapter | seed | drawn values | outcome | hypotheses held | not held |",
            "|---|---:|---|---|---:|---|",
        ]
        for r in self.random_sets:
            values = ", ".join(
                f"`{k}={v:.4g}`" if isinstance(v, float) else f"`{k}={json.dumps(v)}`"
                for k, v in r["params"].items()
                if k not in ("profile", "seed")
            )
            hyp = r["hypotheses"]
            held = sum(v is True for v in hyp.values())
            off = ", ".join(f"`{k}`" for k, v in hyp.items() if v is not True) or "—"
            counted = f"{held} of {len(hyp)}" if hyp else "—"
            out.append(
                f"| {r['chapter']} | {r['params'].get('seed', '')} | {values} | {r['outcome']} "
                f"| {counted} | {off} |"
            )
        return "\n".join(out) + "\n"

    def coverage_markdown(self) -> str:
        """Which parameters were varied, per chapter and in all, and which are fixed, each
        with the reason its chapter module gives."""
        if not self.coverage:
            return ""
        total = sum(c["parameters"] for c in self.coverage.values())
        varied = sum(len(c.get("varied_any", ())) for c in self.coverage.values())
        explored = sum(len(c["explored"]) for c in self.coverage.values())
        fixed = [
            (ch, k, why) for ch, c in self.coverage.items() for k, why in c.get("fixed", {}).items()
        ]
        covered = varied + len(fixed)
        out = [
            f"\n**Parameters covered: {covered} of {total}**: {varied} varied in these runs "
            f"({explored} have an explore range), {len(fixed)} fixed, each with the reason its "
            "chapter's module gives (listed below the table).\n",
            "| chapter | parameters | varied | which |",
            "|---|---:|---:|---|",
        ]
        for ch, c in self.coverage.items():
            which = ", ".join(f"`{k}`" for k in c.get("varied_any", ())) or "—"
            n_varied = len(c.get("varied_any", ()))
            out.append(f"| {ch} | {c['parameters']} | {n_varied} | {which} |")
        not_varied = [
            (ch, k)
            for ch, c in self.coverage.items()
            for k in c["explored"]
            if k not in c.get("varied_any", ())
        ]
        if not_varied:
            out.append(
                "\nExplored parameters these runs did not vary: "
                + ", ".join(f"{ch} `{k}`" for ch, k in not_varied)
                + ".\n"
            )
        if fixed:
            out.append("\nFixed parameters and why:\n")
            out += [f"- {ch} `{k}`: {why}" for ch, k, why in fixed]
        rejected = [(ch, r) for ch, c in self.coverage.items() for r in c.get("rejected", [])]
        if rejected:
            out.append(
                "\nEnds of an explore range that a constraint refuses at the profile's "
                "other values (not run):\n"
            )
            out += [
                f"- {ch}: `{r['parameter']} = {r['value']}`: {r['error']}" for ch, r in rejected
            ]
        return "\n".join(out) + "\n"

    @property
    def failures(self) -> int:
        return sum(r["failed"] for r in self.rows) + len(self.errors)

    def text(self) -> str:
        lines = [
            f"robustness: {self.runs} runs, {len(self.rows)} (chapter, check) pairs, "
            f"{self.failures} failures"
        ]
        width = max([len(r["chapter"]) + len(r["check"]) for r in self.rows] + [20]) + 3
        lines.append(f"{'chapter / check':{width}s} {'kind':12s} runs pass  n/a fail")
        for r in self.rows:
            lines.append(
                f"{r['chapter'] + ' / ' + r['check']:{width}s} {r['kind']:12s} "
                f"{r['runs']:4d} {r['passed']:4d} {r['not_applicable']:4d} {r['failed']:4d}"
            )
            for p in r["failing"]:
                lines.append(f"{'':{width}s} FAILED at {json.dumps(p)}")
        for e in self.errors:
            lines.append(f"ERROR {e['chapter']} {json.dumps(e['params'])}: {e['error']}")
        return "\n".join(lines)

    def markdown(self) -> str:
        m = self.meta
        head = (
            f"Run on {m['date']} on {m['machine']}: profile `{m['profile']}`, "
            f"{m['seeds']} seeds per chapter (from {m['seed_base']}) and {m['random']} "
            f"random parameter sets per chapter (sample seed {m['sample_seed']})"
            + _one_at_a_time_phrase(m.get("one_at_a_time"), m["seed_base"] + 20_000)
            + f"; {self.runs} runs, **{self.failures} failures**.\n\n"
        )
        by_chapter: dict[str, list[dict]] = {}
        for r in self.rows:
            by_chapter.setdefault(r["chapter"], []).append(r)
        from ..core.fmt import fmt
        from ..page.checks import margin_text

        out = [
            head,
            "A check applied in the runs where its hypotheses held (it was not applicable in "
            "the others); of those, it failed in the number shown and passed in the rest. "
            "The smallest margin is how far inside its bound the check stayed in its closest "
            "run, in the unit of its measured value (the chapter's table of checks says what "
            "that is), with the factor between value and bound where both are positive.\n",
            "| chapter | check | kind | runs | applied | failed | smallest margin |",
            "|---|---|---|---:|---:|---:|---|",
        ]
        for ch, rows in by_chapter.items():
            for i, r in enumerate(rows):
                applied = r.get("applied", r["passed"] + r["failed"])
                mar = margin_text(r.get("smallest_margin"), r.get("smallest_factor"))
                out.append(
                    f"| {ch if i == 0 else ''} | `{r['check']}` | {r['kind']} | {r['runs']} "
                    f"| {applied} | {r['failed']} | {mar} |"
                )
        out.append(_applications_line(self.rows))
        slack = [
            r
            for r in self.rows
            if r["kind"] == "theorem"
            and (r.get("smallest_factor") or 0) > SLACK_REVIEW
            and r["failed"] == 0
        ]
        if slack:
            out.append(
                f"\nTheorem checks more than {fmt(SLACK_REVIEW)} times inside their bound in "
                "every run that applied (they cannot bind here), each with the reason it "
                "stays:\n"
            )
            out += [
                f"- {r['chapter']} / `{r['check']}`: smallest factor "
                f"{margin_text(r['smallest_factor'], None)}; "
                + SLACK_REASONS.get(
                    f"{r['chapter']}/{r['check']}", "**not reviewed**: no reason is recorded"
                )
                for r in slack
            ]
        out.append(self.coverage_markdown())
        out.append(self.random_sets_markdown())
        fails = [(r["chapter"], r["check"], p) for r in self.rows for p in r["failing"]]
        if fails or self.errors:
            out.append("\nFailing parameter sets:\n")
            out += [f"- {c} / `{k}`: `{json.dumps(p)}`" for c, k, p in fails]
            out += [
                f"- {e['chapter']}: error `{e['error']}` at `{json.dumps(e['params'])}`"
                for e in self.errors
            ]
        return "\n".join(out) + "\n"


def run(  # noqa: PLR0913 (the harness's command-line options, each named)
    out_dir: str | os.PathLike,
    profile: str = "smoke",
    seeds: int = 20,
    random_sets: int = 2,
    *,
    seed_base: int = SEED_BASE,
    sample_seed: int = 0,
    only: list[str] | None = None,
    root: Path = ROOT,
    client=None,
    scheduler: str | None = None,
    n_workers: int | None = None,
    progress: bool | None = None,
    warm: bool = False,
    one_at_a_time: int | str | None = None,
    one_at_a_time_seed: int | None = None,
) -> Report:
    """Run the harness (see the module docstring); finished runs in ``out_dir`` are reused.
    ``warm``: one kernel per worker, reset between runs
    (:func:`twolayer.tools.runner.execute_run`). ``one_at_a_time_seed`` chooses the parameters
    changed one at a time when there are fewer than all (default: ``sample_seed``)."""
    from .runner import RESULTS, is_done
    from .sweep import client_for, run_id, submit_runs

    out = Path(out_dir).resolve()
    jobs, owner = [], {}
    coverage: dict[str, dict] = {}
    for nb in chapters(root, only):
        ch = chapter_name(nb)
        sets = [{"profile": profile, "seed": seed_base + k} for k in range(seeds)]
        drawn = random_parameter_sets(nb, random_sets, profile, sample_seed, seed_base=seed_base)
        sets += drawn
        contract = _spec_of(nb).unbound()
        coverage[ch] = {
            "parameters": len(set(contract.spec) - {"seed", "profile", "results_path"}),
            "explored": sorted(_explored(contract)),
            "random_sets": drawn,
            "fixed": {
                k: s.fixed.strip()
                for k, s in contract.spec.items()
                if s.explore is None and k not in ("seed", "profile", "results_path")
            },
        }
        if one_at_a_time is not None:
            count = None if one_at_a_time == "all" else int(one_at_a_time)
            choose = sample_seed if one_at_a_time_seed is None else one_at_a_time_seed
            single, rejected = one_at_a_time_sets(nb, profile, count, choose, seed_base=seed_base)
            sets += single
            coverage[ch]["varied"] = sorted({k for p in single for k in p} - {"profile", "seed"})
            coverage[ch]["rejected"] = rejected
        for p in sets:
            if len(p) > 2:  # a random or a one-at-a-time set: its parameters were varied
                coverage[ch].setdefault("varied_any", set()).update(set(p) - {"profile", "seed"})
        for p in sets:
            rd = out / ch / run_id(p)
            jobs.append((str(nb), p, rd))
            owner[str(rd)] = ch
    todo = [j for j in jobs if not is_done(j[2], j[1])]
    results: dict[str, dict] = {}
    if todo:
        close = None
        if client is None:
            client, close = client_for(scheduler, n_workers)
        try:
            if progress is None:
                progress = sys.stderr.isatty()
            for (_, _, rd), res in submit_runs(
                client, todo, progress=progress, desc="robustness", warm=warm
            ):
                results[str(rd)] = res
        finally:
            if close is not None:
                close()
    per_chapter: dict[str, list] = {}
    for _nb, p, rd in jobs:
        res = results.get(str(rd), {"status": "done", "error": None})
        if res["status"] == "done" and is_done(rd, p):
            res = {"status": "done", "results": json.loads((Path(rd) / RESULTS).read_text())}
        elif res["status"] == "done":
            res = {"status": "failed", "error": "no results.json"}
        per_chapter.setdefault(owner[str(rd)], []).append((p, res))
    drawn_sets = [
        drawn_set_row(ch, p, res)
        for ch, res_list in per_chapter.items()
        for p, res in res_list
        if p in coverage[ch]["random_sets"]
    ]
    rows, errors = [], []
    for ch, res in per_chapter.items():
        tallies, errs = tally(ch, res)
        errors += errs
        for name, t in tallies.items():
            rows.append(
                {
                    "chapter": ch,
                    "check": name,
                    "kind": t.kind,
                    "runs": t.runs,
                    "passed": t.passed,
                    "not_applicable": t.not_applicable,
                    "failed": t.failed,
                    "failing": t.failing,
                    "applied": t.passed + t.failed,
                    "smallest_margin": t.margin,
                    "smallest_factor": t.factor,
                }
            )
    meta = {
        "date": _dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}",
        "profile": profile,
        "seeds": seeds,
        "seed_base": seed_base,
        "random": random_sets,
        "sample_seed": sample_seed,
        "one_at_a_time": one_at_a_time,
    }
    for c in coverage.values():
        c["varied_any"] = sorted(c.get("varied_any", ()))
        c.pop("random_sets", None)  # listed with their runs' hypotheses in ``drawn_sets``
    report = Report(rows, errors, len(jobs), meta, coverage, drawn_sets)
    atomic_write_json(
        out / "robustness.json",
        {
            "meta": meta,
            "rows": rows,
            "errors": errors,
            "coverage": coverage,
            "random_sets": drawn_sets,
        },
    )
    atomic_write_csv(
        out / "robustness.csv",
        [{k: (json.dumps(v) if isinstance(v, list) else v) for k, v in r.items()} for r in rows],
    )
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m twolayer.tools.robustness", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--profile", default="smoke", choices=("smoke", "book", "paper"))
    ap.add_argument("--seeds", type=int, default=20, help="seeds per chapter (default 20)")
    ap.add_argument("--random", type=int, default=2, help="random parameter sets per chapter")
    ap.add_argument("--seed-base", type=int, default=SEED_BASE)
    ap.add_argument("--sample-seed", type=int, default=0, help="seed of the parameter sampler")
    ap.add_argument("--chapters", help="comma-separated, e.g. paper_a/setting,paper_b/stage1")
    ap.add_argument(
        "--one-at-a-time",
        help="'all': every explored parameter alone at both ends of its range; a number k: k "
        "parameters per chapter, chosen by --sample-seed",
    )
    ap.add_argument("--out", default="runs/robustness", help="output folder (re-use it to resume)")
    ap.add_argument("--markdown", help="also write the table as Markdown (the book's page)")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler")
    ap.add_argument("--workers", type=int, default=None, help="local cluster size")
    ap.add_argument(
        "--warm",
        action="store_true",
        help="reuse one kernel per worker, reset between runs (faster; the book uses fresh ones)",
    )
    args = ap.parse_args(argv)
    report = run(
        args.out,
        args.profile,
        args.seeds,
        args.random,
        seed_base=args.seed_base,
        sample_seed=args.sample_seed,
        only=args.chapters.split(",") if args.chapters else None,
        scheduler=args.scheduler,
        n_workers=args.workers,
        warm=args.warm,
        one_at_a_time=args.one_at_a_time,
    )
    print(report.text())
    if args.markdown:
        atomic_write_bytes(Path(args.markdown), report.markdown().encode())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
