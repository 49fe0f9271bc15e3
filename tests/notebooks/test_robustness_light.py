"""The light robustness harness of the test command: every chapter in the smoke profile at 5
seeds that no page uses, at 2 random parameter sets drawn from its own parameter ranges, and
with one of its parameters changed alone to both ends of its range (one-at-a-time), through
``twolayer.tools.robustness.run`` on the shared Dask cluster. Any failed check, or any run that
errors, fails. (``make robustness``: 20 seeds, every parameter, the smoke and book profiles.)

The random sets are drawn with sample seed 0, as before. The seed that chooses the
one-at-a-time parameter is taken from the commit under test (``git rev-parse HEAD``; 0
outside a Git checkout), so that the same commit runs the same sets on every machine, and
over successive commits every parameter of every chapter gets its turn (each end of every
range passed in the full smoke run of ``make robustness``); ``TWOLAYER_LIGHT_SAMPLE_SEED``
sets it (to rerun a failure: the failing test's message names the seed)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import zlib

import pytest

from helpers import CHAPTERS, NOTEBOOKS, ROOT, chapter_name

# at least 5 unused seeds and 2 random parameter sets per chapter; the variables
# let a slow machine or a quick local run choose fewer (the README's command uses these)
SEEDS = int(os.environ.get("TWOLAYER_LIGHT_SEEDS", 5))
RANDOM_SETS = int(os.environ.get("TWOLAYER_LIGHT_RANDOM", 2))
# parameters per chapter changed one at a time, each to both ends of its explore range
ONE_AT_A_TIME = int(os.environ.get("TWOLAYER_LIGHT_ONE_AT_A_TIME", 1))


def _sample_seed() -> int:
    """The sample seed: ``$TWOLAYER_LIGHT_SAMPLE_SEED``, else from the commit under test."""
    if os.environ.get("TWOLAYER_LIGHT_SAMPLE_SEED"):
        return int(os.environ["TWOLAYER_LIGHT_SAMPLE_SEED"])
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return 0
    return zlib.crc32(head.encode())


SAMPLE_SEED = _sample_seed()


@pytest.fixture(scope="module")
def robustness_report(tmp_path_factory, dask_client):
    from twolayer.tools import robustness

    out = tmp_path_factory.mktemp("robustness")
    report = robustness.run(
        out,
        profile="smoke",
        seeds=SEEDS,
        random_sets=RANDOM_SETS,
        sample_seed=0,  # the random sets: the same on every commit
        one_at_a_time=ONE_AT_A_TIME,
        one_at_a_time_seed=SAMPLE_SEED,  # the parameter changed alone: chosen by the commit
        client=dask_client,
        progress=False,
        warm=True,  # one kernel per worker, reset between runs: the imports once
    )
    return out, report


def _one_at_a_time() -> dict[str, tuple[list[dict], list[dict]]]:
    """Per chapter, the one-at-a-time sets the harness runs at this sample seed, and the
    changes a constraint refused."""
    from twolayer.tools import robustness

    return {
        chapter_name(nb): robustness.one_at_a_time_sets(
            nb.with_suffix(".ipynb"), "smoke", ONE_AT_A_TIME, SAMPLE_SEED
        )
        for nb in NOTEBOOKS
    }


def _single_sets() -> dict[str, list[dict]]:
    return {c: sets for c, (sets, _) in _one_at_a_time().items()}


def test_no_failed_check_and_no_error(robustness_report):
    _, report = robustness_report
    assert report.failures == 0, (
        f"sample seed {SAMPLE_SEED} (TWOLAYER_LIGHT_SAMPLE_SEED reruns it):\n" + report.text()
    )


def test_every_chapter_ran_every_set(robustness_report):
    out, report = robustness_report
    single = _single_sets()
    assert report.runs == sum(SEEDS + RANDOM_SETS + len(single[c]) for c in CHAPTERS)
    for chapter in CHAPTERS:
        done = list((out / chapter).glob("*/results.json"))
        assert len(done) == SEEDS + RANDOM_SETS + len(single[chapter]), (chapter, len(done))
    assert {r["chapter"] for r in report.rows} == set(CHAPTERS)
    assert json.loads((out / "robustness.json").read_text())["rows"] == json.loads(
        json.dumps(report.rows)
    )


def test_seeds_give_other_numbers(robustness_report):
    """The seed is used: no two of the unused seeds give the same metrics (each run's own
    random streams derive from its seed)."""
    from twolayer.tools.robustness import SEED_BASE

    out, _ = robustness_report
    for chapter in CHAPTERS:
        by_seed = {}
        for path in (out / chapter).glob("*/results.json"):
            res = json.loads(path.read_text())
            if res["params"]["seed"] < SEED_BASE + SEEDS:
                by_seed[res["params"]["seed"]] = res["metrics"]
        assert len(by_seed) == SEEDS, chapter
        for (s, a), (t, b) in itertools.combinations(sorted(by_seed.items()), 2):
            assert a != b, f"{chapter}: seeds {s} and {t} give the same metrics"


def test_one_at_a_time_changes_are_covered(robustness_report):
    """Each chapter had ``ONE_AT_A_TIME`` of its parameters changed alone (both ends of the
    range, where the constraints allow them), and the report's coverage says which."""
    _, report = robustness_report
    for chapter, (sets, rejected) in _one_at_a_time().items():
        varied = sorted({k for p in sets for k in p} - {"profile", "seed"})
        chosen = set(varied) | {r["parameter"] for r in rejected}
        assert len(chosen) == ONE_AT_A_TIME, (chapter, sorted(chosen))
        assert report.coverage[chapter]["varied"] == varied, chapter
        assert all(len(p) == 3 for p in sets), chapter  # one parameter each
