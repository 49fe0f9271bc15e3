"""twolayer.tools.reference: the kinds and tolerances of the reference results, and the comparison
that the reference test relies on (a metric changed by hand beyond its tolerance is caught,
one within it is not, and the message names the chapter, the metric, both values and the
tolerance)."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from helpers import CHAPTERS
from twolayer.core.fmt import fmt
from twolayer.tools import reference as ref


def test_flatten_paths():
    flat = ref.flatten({"a": 1, "b": {"x": [1.5, {"y": None}]}, "c": "t"})
    assert flat == {"a": 1, "b/x/0": 1.5, "b/x/1/y": None, "c": "t"}


def test_kinds_follow_what_the_metric_is():
    # the same integer at every seed: a count
    assert ref.entry(36, [36, 36, 36])["kind"] == "exact"
    # text, booleans, None
    for v in ("logistic", True, None):
        assert ref.entry(v, [v, v])["kind"] == "exact"
    # a float every seed gives the same value: deterministic, solver-level tolerance
    e = ref.entry(0.9000000000004257, [0.9000000000004257] * 3)
    assert e["kind"] == "deterministic"
    assert e["tol"] == pytest.approx(ref.RTOL * 0.9000000000004257 + ref.ATOL)
    # a float that moves with the seed: K_SPREAD standard deviations of all the draws
    draws = [0.1, 0.3, 0.25, 0.2]
    e = ref.entry(0.15, draws)
    sd = statistics.stdev([*draws, 0.15])
    assert e["kind"] == "monte-carlo" and e["spread"] == pytest.approx(sd)
    assert e["tol"] == pytest.approx(3 * math.sqrt(2) * sd)
    # an integer that moves with the seed (a step count) is a Monte Carlo metric too
    assert ref.entry(441, [430, 470, 455])["kind"] == "monte-carlo"
    # a spread below rounding never makes the tolerance tighter than the deterministic one
    assert ref.entry(1.0, [1.0 + 1e-15, 1.0])["tol"] >= ref.RTOL
    # the rounding level measured on other kernels: K_ROUND times the largest difference
    e = ref.entry(3.13, [3.13, 3.13], [3.10, 3.131])
    assert e["kind"] == "deterministic" and e["rounding"] == pytest.approx(0.03)
    assert e["tol"] == pytest.approx(ref.K_ROUND * 0.03)
    # an integer that another kernel changes is not exact
    assert ref.entry(441, [441, 441], [440])["kind"] == "deterministic"
    assert ref.entry(441, [441, 441], [441, 441])["kind"] == "exact"


def test_comparison_catches_a_change_beyond_its_tolerance_and_names_it():
    reference = ref.build(
        {"acc": 0.5, "n": 36, "mode": "logistic", "c": 2.5},
        [{"acc": 0.52, "n": 36, "mode": "logistic", "c": 2.5}, {"acc": 0.47, "n": 36, "c": 2.5}],
    )
    tol = reference["acc"]["tol"]
    same = {"acc": 0.5, "n": 36, "mode": "logistic", "c": 2.5}
    assert ref.compare_chapter("paper_x/page", reference, same) == []
    within = ref.compare_chapter("paper_x/page", reference, {**same, "acc": 0.5 + tol / 2})
    assert len(within) == 1 and not within[0].beyond
    (far,) = ref.compare_chapter("paper_x/page", reference, {**same, "acc": 0.5 + 2 * tol})
    assert far.beyond
    text = str(far)
    for part in ("paper_x/page", "acc", "0.5", repr(0.5 + 2 * tol), "monte-carlo", fmt(tol)):
        assert part in text, (part, text)
    # exact and deterministic metrics: any change / beyond rounding
    assert ref.compare_chapter("p/q", reference, {**same, "n": 37})[0].beyond
    assert ref.compare_chapter("p/q", reference, {**same, "mode": "exponential"})[0].beyond
    assert ref.compare_chapter("p/q", reference, {**same, "c": 2.5 + 1e-4})[0].beyond
    assert not ref.compare_chapter("p/q", reference, {**same, "c": 2.5 + 1e-10})[0].beyond
    # a metric that disappeared or appeared, and NaN against a number
    assert ref.compare_chapter("p/q", reference, {k: v for k, v in same.items() if k != "n"})
    assert ref.compare_chapter("p/q", reference, {**same, "extra": 1})[0].kind == "new"
    assert ref.compare_chapter("p/q", reference, {**same, "acc": math.nan})[0].beyond


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_committed_reference_catches_a_hand_edit(chapter, tmp_path):
    """The committed reference, applied to its own values: nothing moved; then each numeric
    metric of the chapter pushed by twice its tolerance (one at a time, on a copy): caught."""
    data = ref.load(chapter)
    metrics = data["metrics"]
    assert data["meta"]["profile"] == "smoke" and data["meta"]["lock_sha256"]
    for e in metrics.values():
        assert e["kind"] in ref.KINDS and e["tol"] >= 0
    values = {k: e["value"] for k, e in metrics.items()}
    assert ref.compare_chapter(chapter, metrics, _unflat(values)) == []
    numeric = [k for k, e in metrics.items() if isinstance(e["value"], (int, float))]
    numeric = [k for k in numeric if not isinstance(metrics[k]["value"], bool)]
    for k in numeric[:25]:
        e = metrics[k]
        if not math.isfinite(e["value"]):
            continue
        bumped = dict(values)
        bumped[k] = e["value"] + (1 if e["kind"] == "exact" else 2 * e["tol"])
        moved = ref.compare_chapter(chapter, metrics, _unflat(bumped))
        assert [m.metric for m in moved if m.beyond] == [k], (k, moved)
    # the results-folder comparison (make test-latest) names the chapter
    folder = tmp_path / "results"
    (folder / chapter).parent.mkdir(parents=True)
    (folder / f"{chapter}.json").write_text(json.dumps({"metrics": _unflat(values)}))
    moved = [m for m in ref.compare_dir(folder) if m.chapter == chapter]
    assert moved == []


def _unflat(flat: dict) -> dict:
    """Rebuild the nested metrics from flat paths (lists where the keys are 0..n-1)."""
    root: dict = {}
    for path, v in flat.items():
        *head, last = path.split("/")
        node = root
        for part in head:
            node = node.setdefault(part, {})
        node[last] = v
    return _lists(root)


def _lists(node):
    if not isinstance(node, dict):
        return node
    node = {k: _lists(v) for k, v in node.items()}
    if node and all(k.isdigit() for k in node) and sorted(map(int, node)) == list(range(len(node))):
        return [node[str(i)] for i in range(len(node))]
    return node
