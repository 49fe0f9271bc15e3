"""``twolayer.tools.robustness``'s tally and report, on hand-made results: per check the runs it
applied in, the smallest margin over them, and the theorem checks that cannot bind."""

from __future__ import annotations

from twolayer.tools import robustness


def _run(passed, margin, factor, kind="theorem"):
    return {
        "status": "done",
        "results": {
            "checks": {"c": passed},
            "check_details": {"c": {"kind": kind, "margin": margin, "factor": factor}},
        },
    }


def test_smallest_margin_and_applied_count():
    runs = [({"seed": 1}, _run(True, 0.3, 2.0)), ({"seed": 2}, _run(True, 0.1, 1.2))]
    runs.append(({"seed": 3}, _run(None, None, None)))
    tallies, errors = robustness.tally("paper_a/x", runs)
    t = tallies["c"]
    assert (t.runs, t.passed, t.not_applicable, errors) == (3, 2, 1, [])
    assert t.margin == 0.1 and t.factor == 1.2  # the closest run, not the first or the last


def _report(factor):
    row = {
        "chapter": "paper_a/x",
        "check": "c",
        "kind": "theorem",
        "runs": 2,
        "passed": 2,
        "not_applicable": 0,
        "failed": 0,
        "failing": [],
        "applied": 2,
        "smallest_margin": 1.0,
        "smallest_factor": factor,
    }
    meta = dict(
        date="d", machine="m", profile="book", seeds=1, seed_base=0, random=0, sample_seed=0
    )
    return robustness.Report([row], [], 2, meta).markdown()


def test_a_check_that_cannot_bind_is_listed_for_review():
    assert "cannot bind here" in _report(1e9)
    assert "cannot bind here" not in _report(50.0)
    assert "| 2 | 2 | 0 | 1 (50×) |" in _report(50.0)


def test_one_at_a_time_changes_each_parameter_to_both_ends():
    from pathlib import Path

    from twolayer import chapters

    nb = Path(__file__).resolve().parents[2] / "notebooks" / "paper_b" / "frozen.ipynb"
    sets, rejected = robustness.one_at_a_time_sets(nb, "smoke")
    contract = chapters.spec("paper_b/frozen").unbound()
    explored = robustness.explored(nb)
    assert explored and set(explored) <= set(contract.spec)
    for name, spec in explored.items():
        got = [p[name] for p in sets if name in p]
        ends = spec.ends()
        assert got + [r["value"] for r in rejected if r["parameter"] == name] != []
        assert all(v in ends for v in got)
    assert all(len(p) == 3 and p["profile"] == "smoke" for p in sets)  # one parameter each
    # k parameters by the sample seed: another sample seed may choose others
    two = robustness.one_at_a_time_sets(nb, "smoke", count=2, sample_seed=1)[0]
    assert len({k for p in two for k in p} - {"profile", "seed"}) == 2


def test_the_page_says_which_parameters_were_varied_and_why_the_others_are_fixed():
    coverage = {
        "paper_a/x": {
            "parameters": 5,
            "explored": ["a", "b"],
            "varied_any": ["a"],
            "fixed": {"c": "machinery", "d": "float64 only", "e": "a checksum"},
        }
    }
    md = robustness.Report([], [], 0, {}, coverage).coverage_markdown()
    # a varied, c d e fixed with reasons: b, explored but not varied, is not covered
    assert "Parameters covered: 4 of 5" in md and "1 varied in these runs" in md
    assert "| paper_a/x | 5 | 1 | `a` |" in md
    assert "paper_a/x `b`" in md.split("did not vary:")[1].splitlines()[0]
    assert "- paper_a/x `d`: float64 only" in md
    coverage["paper_a/x"]["varied_any"] = ["a", "b"]
    md = robustness.Report([], [], 0, {}, coverage).coverage_markdown()
    assert "Parameters covered: 5 of 5" in md and "did not vary" not in md


def test_each_random_set_is_listed_with_the_hypotheses_that_did_not_hold():
    params = {"profile": "smoke", "seed": 11000, "m": 40, "eta": 0.1}
    done = {
        "status": "done",
        "results": {
            "checks": {"a": True, "b": None},
            "hypotheses": {"h1": {"holds": True}, "h2": {"holds": False}},
        },
    }
    row = robustness.drawn_set_row("paper_b/x", params, done)
    assert row["outcome"] == "passed" and row["hypotheses"] == {"h1": True, "h2": False}
    failed = {"status": "failed", "error": "theorem check 'a' failed: 2 > 1"}
    errored = {"status": "failed", "error": "Traceback: ZeroDivisionError"}
    rows = [
        row,
        robustness.drawn_set_row("paper_b/x", params, failed),
        robustness.drawn_set_row("paper_b/x", params, errored),
    ]
    md = robustness.Report([], [], 3, {}, {}, rows).random_sets_markdown()
    lines = [ln for ln in md.splitlines() if ln.startswith("| paper_b/x")]
    assert len(lines) == 3 and "Random parameter sets drawn: 3" in md
    assert "`m=40`, `eta=0.1`" in lines[0] and "| 1 of 2 | `h2` |" in lines[0]
    assert "| passed |" in lines[0]
    assert "| failed |" in lines[1]
    assert "| error |" in lines[2] and "| — | — |" in lines[2]


def test_checks_that_cannot_bind_are_listed_with_their_reason_or_marked_unreviewed():
    def row(chapter, check, factor):
        return {
            "chapter": chapter,
            "check": check,
            "kind": "theorem",
            "runs": 3,
            "passed": 3,
            "not_applicable": 0,
            "failed": 0,
            "failing": [],
            "applied": 3,
            "smallest_margin": 1.0,
            "smallest_factor": factor,
        }

    meta = {"date": "d", "machine": "m", "profile": "book", "seeds": 3, "seed_base": 1000}
    meta |= {"random": 1, "sample_seed": 0}
    reviewed = "paper_b/stage2/balanced_loss_equals_lasso_objective".rsplit("/", 1)
    rows = [
        row(reviewed[0], reviewed[1], 1.2e6),
        row("paper_a/x", "loose", 5e7),
        row("paper_a/x", "tight", 3.0),
    ]
    md = robustness.Report(rows, [], 9, meta).markdown()
    listed = md.split("each with the reason it stays:")[1]
    assert "`balanced_loss_equals_lasso_objective`" in listed and "AM-GM" in listed
    assert "paper_a/x / `loose`" in listed and "**not reviewed**" in listed
    assert "`tight`" not in listed
