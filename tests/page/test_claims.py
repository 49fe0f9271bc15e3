"""``twolayer.page.claims``: every rule of the claims index, with a case per status and the
cases where a check must not count (sanity, a book extension, a check that did not apply)."""

from __future__ import annotations

import pytest

from helpers import chapter_results
from twolayer.page import claims
from twolayer.page.claims import Statement

_res = chapter_results


def _status(statement: Statement, results: dict) -> tuple[str, list]:
    registry, problems = claims.statuses([statement], results)
    return registry[0].status, problems


def test_verified_needs_every_carrying_check():
    st = Statement("a-thm-1", "paper_a", "t")
    res = {
        "paper_a/x": _res({"c1": ("theorem", True, "a-thm-1"), "c2": ("theorem", True, "a-thm-1")})
    }
    assert _status(st, res) == ("verified", [])


def test_one_check_not_applicable_is_partly_applicable_not_verified():
    st = Statement("a-thm-1", "paper_a", "t")
    res = {
        "paper_a/x": _res({"c1": ("theorem", True, "a-thm-1"), "c2": ("theorem", None, "a-thm-1")})
    }
    assert _status(st, res)[0] == "partly applicable"


def test_no_check_applied_is_not_applicable_not_failed():
    st = Statement("a-thm-1", "paper_a", "t")
    res = {"paper_a/x": _res({"c1": ("theorem", None, "a-thm-1")})}
    assert _status(st, res)[0] == "not applicable"


def test_a_failed_check_fails_the_statement():
    st = Statement("a-thm-1", "paper_a", "t")
    res = {
        "paper_a/x": _res(
            {"c1": ("theorem", True, "a-thm-1"), "c2": ("observation", False, "a-thm-1")}
        )
    }
    assert _status(st, res)[0] == "failed"


def test_sanity_checks_never_carry():
    st = Statement("a-thm-1", "paper_a", "t")
    res = {"paper_a/x": _res({"s": ("sanity", True, "a-thm-1")})}
    assert _status(st, res)[0] == "not covered"
    listed = Statement("a-thm-1", "paper_a", "t", checks=["paper_a/x:s"])
    status, problems = _status(listed, res)
    assert problems == [("paper_a/x", "s", "a sanity check cannot carry a-thm-1")]


def test_a_book_extension_never_carries_a_paper_statement():
    st = Statement("a-cor-3-5", "paper_a", "t", checks=["paper_a/x:ext"])
    res = {"paper_a/x": _res({"ext": ("observation", True, "book-obs-ext")})}
    _, problems = _status(st, res)
    assert ("paper_a/x", "ext", "book-obs-ext") in problems  # not in this registry
    assert (
        "paper_a/x",
        "ext",
        "a check of the book's own book-obs-ext cannot carry a-cor-3-5",
    ) in problems
    # and without a list, the book check names its own statement only
    assert _status(Statement("a-cor-3-5", "paper_a", "t"), res)[0] == "not covered"


def test_the_list_restricts_the_carrying_checks():
    """A check that names the statement but is not listed does not carry it (Lemma 4's gap is
    carried by its gap checks, not by a check on the neurons)."""
    st = Statement("b-lem-4#zeta", "paper_b", "t", checks=["paper_b/s2:gap"])
    res = {
        "paper_b/s2": _res(
            {"gap": ("theorem", None, "b-lem-4#zeta"), "other": ("theorem", True, "b-lem-4#zeta")}
        )
    }
    assert _status(st, res)[0] == "not applicable"


def test_a_listed_check_absent_from_its_chapter_is_a_problem():
    st = Statement("a-thm-1", "paper_a", "t", checks=["paper_a/x:gone"])
    _, problems = _status(st, {"paper_a/x": _res({})})
    assert problems == [("paper_a/x", "gone", "listed for a-thm-1 but not recorded by its chapter")]


def test_stand_in_data_is_named():
    stand_in = {"param": "dataset", "real": "cifar10", "name": "the digits stand-in"}
    st = Statement("a-fig-2#rapid", "paper_a", "t", stand_in=stand_in)
    on_digits = {"paper_a/r": _res({"c": ("observation", True, "a-fig-2#rapid")}, dataset="digits")}
    assert _status(st, on_digits)[0] == "verified on a stand-in"
    st2 = Statement("a-fig-2#rapid", "paper_a", "t", stand_in=stand_in)
    on_cifar = {"paper_a/r": _res({"c": ("observation", True, "a-fig-2#rapid")}, dataset="cifar10")}
    assert _status(st2, on_cifar)[0] == "verified"


@pytest.mark.parametrize(
    "printed, corrected, expected",
    [
        (True, True, "erratum"),  # the printed form fails its check and the corrected passes
        (None, True, "erratum unconfirmed"),  # the printed form's failure was not shown
        (True, None, "not applicable"),  # the corrected form did not apply
        (False, True, "failed"),  # the printed form held: the erratum is wrong
    ],
)
def test_false_as_printed_needs_both_forms(printed, corrected, expected):
    erratum = {"printed": "p", "corrected": "c", "printed_checks": ["paper_b/c:printed_fails"]}
    st = Statement("b-lem-f-17", "paper_b", "t", erratum=erratum)
    res = {
        "paper_b/c": _res(
            {
                "printed_fails": ("observation", printed, "b-lem-f-17"),
                "corrected": ("theorem", corrected, "b-lem-f-17"),
            }
        )
    }
    # the printed-form check names the statement too; only the corrected one carries it here
    st.checks = ["paper_b/c:corrected"]
    assert _status(st, res)[0] == expected


def test_lost_and_not_covered():
    assert _status(Statement("a-thm-4-2#2", "paper_a", "t", source="lost"), {})[0] == "lost"
    assert _status(Statement("a-thm-9", "paper_a", "t"), {})[0] == "not covered"


def test_rows_link_to_check_rows():
    st = Statement("a-thm-1", "paper_a", "t")
    res = {"paper_a/x": _res({"c1": ("theorem", True, "a-thm-1")})}
    registry, _ = claims.statuses([st], res)
    md = claims.index_markdown(registry, set())
    assert '<a href="../notebooks/paper_a/x.html#check-c1"><code>c1</code></a>' in md


def test_a_corrected_identity_carries_an_erratum_only_with_the_printed_form_failing():
    erratum = {
        "printed": "p",
        "corrected": "c",
        "printed_checks": ["paper_b/s:printed_off"],
        "identity_checks": ["paper_b/s:identity"],
    }
    res = {
        "paper_b/s": _res(
            {"printed_off": ("observation", True, "b-eq-8"), "identity": ("sanity", True, "b-eq-8")}
        )
    }
    st = Statement("b-eq-8", "paper_b", "t", erratum=erratum, checks=[])
    assert _status(st, res)[0] == "erratum"
    res["paper_b/s"]["checks"]["printed_off"] = None
    st2 = Statement("b-eq-8", "paper_b", "t", erratum=erratum, checks=[])
    assert _status(st2, res)[0] == "erratum unconfirmed"
    # without an erratum a sanity identity carries nothing
    assert _status(Statement("b-x", "paper_b", "t", checks=[]), res)[0] == "not covered"


def test_a_check_naming_a_label_carries_every_part_of_it():
    """A check naming ``a-fig-2`` (no ``#``) carries each part ``a-fig-2#...`` of the
    registry; a check naming a part the registry lacks is a problem and carries nothing."""
    parts = [Statement("a-fig-2#rapid", "paper_a", "t"), Statement("a-fig-2#late", "paper_a", "t")]
    res = {"paper_a/r": _res({"c": ("observation", True, "a-fig-2")})}
    registry, problems = claims.statuses(parts, res)
    assert [s.status for s in registry] == ["verified", "verified"]
    assert [e.key for s in registry for e in s.carrying] == ["paper_a/r:c", "paper_a/r:c"]
    assert problems == []
    other = [Statement("a-fig-2#rapid", "paper_a", "t")]
    res = {"paper_a/r": _res({"c": ("observation", True, "a-fig-2#gone")})}
    registry, problems = claims.statuses(other, res)
    assert registry[0].status == "not covered"
    assert problems == [("paper_a/r", "c", "a-fig-2#gone")]


def test_checks_without_a_statement_are_skipped_not_the_rest():
    """A chapter's check that names no statement is skipped; the checks after it still count,
    and a chapter that recorded no check details at all is read as naming nothing."""
    st = Statement("a-thm-1", "paper_a", "t")
    res = {
        "paper_a/a": {"params": {"profile": "smoke"}, "checks": {}},
        "paper_a/x": _res({"first": ("sanity", True, None), "c1": ("theorem", True, "a-thm-1")}),
    }
    registry, problems = claims.statuses([st], res)
    assert registry[0].status == "verified"
    assert [e.key for e in registry[0].carrying] == ["paper_a/x:c1"]
    assert problems == []


def test_a_listed_check_of_a_chapter_not_run_is_named_and_the_rest_still_count():
    """A carrying check whose chapter this build did not run stands in the index as missing,
    with its chapter, name and reason (the statement is then not verified); the listed checks
    after it are still read."""
    st = Statement("a-thm-1", "paper_a", "t", checks=["paper_a/y:gone", "paper_a/x:c1"])
    res = {"paper_a/x": _res({"c1": ("theorem", True, "a-thm-1")})}
    registry, problems = claims.statuses([st], res)
    missing, carried = registry[0].carrying
    assert (missing.chapter, missing.check, missing.kind) == ("paper_a/y", "gone", "missing")
    assert missing.passed is None and missing.reason == "chapter not run"
    assert (carried.key, carried.passed) == ("paper_a/x:c1", True)
    assert registry[0].status == "partly applicable"
    assert problems == []
    row = claims.index_json(registry)[0]["carrying"][0]
    assert (row["check"], row["applies"]) == ("paper_a/y:gone", False)


def test_listed_and_printed_checks_keep_their_chapter_and_stand_in():
    """A listed carrying check and an erratum's printed-form check keep the chapter they come
    from and the stand-in data they ran on; a printed-form check of a chapter this build did
    not run is missing, not an error."""
    stand_in = {"param": "dataset", "real": "cifar10", "name": "the digits stand-in"}
    erratum = {"printed": "p", "corrected": "c", "printed_checks": ["paper_a/r:printed"]}
    st = Statement(
        "a-fig-2#rapid",
        "paper_a",
        "t",
        erratum=erratum,
        checks=["paper_a/r:c"],
        stand_in=stand_in,
    )
    res = {
        "paper_a/r": _res(
            {
                "c": ("observation", True, "a-fig-2#rapid"),
                "printed": ("observation", True, "a-fig-2#rapid"),
            },
            dataset="digits",
        )
    }
    registry, _ = claims.statuses([st], res)
    (c,), (p,) = registry[0].carrying, registry[0].printed
    assert (c.chapter, p.chapter) == ("paper_a/r", "paper_a/r")
    assert c.stand_in == p.stand_in == "the digits stand-in (dataset = digits)"
    erratum = {"printed": "p", "corrected": "c", "printed_checks": ["paper_a/q:printed"]}
    st = Statement("a-thm-1", "paper_a", "t", erratum=erratum)
    registry, _ = claims.statuses([st], {"paper_a/x": _res({"c1": ("theorem", True, "a-thm-1")})})
    (p,) = registry[0].printed
    assert (p.chapter, p.check, p.kind) == ("paper_a/q", "printed", "missing")


def test_listed_checks_that_can_carry_raise_no_problem():
    """A paper check listed for its paper statement, and a book check listed for the book's
    own statement, carry it with no problem; only a book check listed for a paper statement
    is one."""
    paper = Statement("a-thm-1", "paper_a", "t", checks=["paper_a/x:c1"])
    res = {"paper_a/x": _res({"c1": ("theorem", True, "a-thm-1")})}
    assert _status(paper, res) == ("verified", [])
    own = Statement("book-obs-ext", "paper_a", "t", checks=["paper_a/x:c2"])
    res = {"paper_a/x": _res({"c2": ("observation", True, "book-obs-ext")})}
    assert _status(own, res) == ("verified", [])
