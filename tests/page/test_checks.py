"""``twolayer.page.checks``: a check's outcome, margin and factor, computed without a page,
and the rule that a check applies only where *all* of its hypotheses hold. Every case here is
one where the answer is no, beside one where it is yes."""

from __future__ import annotations

import math
import operator
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twolayer.page.checks import (
    Claim,
    Hypothesis,
    applies_of,
    compare,
    factor,
    make_hypothesis,
    margin,
    margin_text,
)


def _hyp(name, holds, reason=""):
    return Hypothesis(name, holds, title=name.upper(), reason=reason)


def test_hypotheses_combine_with_all():
    yes, no = _hyp("h1", True), _hyp("h2", False, "too small")
    assert applies_of([yes, yes])[0] is True
    ok, reason, names = applies_of([yes, no])
    assert ok is False and names == ["h1", "h2"]
    assert reason == "H2: too small"  # only the failing hypothesis is named
    assert applies_of([no, yes])[0] is False  # order does not matter
    assert applies_of(no)[0] is False and applies_of(yes)[0] is True
    assert applies_of((False, "why")) == (False, "why", [])
    assert applies_of(False)[0] is False


def test_a_claim_with_one_failing_hypothesis_is_not_applicable():
    claim = Claim(
        "c", "theorem", value=5.0, bound=1.0, op="<=", applies=[_hyp("a", True), _hyp("b", False)]
    )
    check = claim.evaluate()
    assert check.passed is None and check.applies is False and check.margin is None
    # the same claim with both hypotheses holding is decided, and here it fails
    both = Claim("c", "theorem", value=5.0, bound=1.0, op="<=", applies=[_hyp("a", True)] * 2)
    assert both.outcome() is False


def test_reasons_name_every_failing_hypothesis_or_say_why_not():
    """The reason of a list names each failing hypothesis by its title (its name without one),
    with its own reason or the stock phrase, joined by "; "; a bool or ``(bool, reason)`` gives
    no reason where it applies, and a plain ``False`` the stock "not applicable" sentence."""
    untitled = Hypothesis("h3", False)
    ok, reason, names = applies_of([_hyp("h1", False, "too small"), _hyp("h2", True), untitled])
    assert (ok, names) == (False, ["h1", "h2", "h3"])
    assert reason == "H1: too small; h3: hypothesis does not hold"
    assert applies_of((True, "why")) == (True, "", [])
    assert applies_of((0, "why")) == (False, "why", [])
    assert applies_of(True) == (True, "", [])
    assert applies_of(1) == (True, "", [])
    assert applies_of(False) == (False, "not applicable at these parameters", [])


def test_a_check_records_the_claim_whether_or_not_it_applies():
    """Every field of the claim reaches its check: where it does not apply (with the reason and
    the hypotheses' names) and where it does (decided by a ``holds`` given as a function)."""
    hyps = [_hyp("a", True), _hyp("b", False, "n too small")]
    common = dict(bound=1.0, op="<=", statement="x is small", detail="from the run")
    off = Claim("c", "theorem", value=5.0, applies=hyps, **common).evaluate()
    assert (off.name, off.kind, off.passed, off.value) == ("c", "theorem", None, None)
    assert (off.bound, off.op, off.statement, off.detail) == (
        1.0,
        "<=",
        "x is small",
        "from the run",
    )
    assert (off.applies, off.reason, off.hypotheses) == (False, "B: n too small", ["a", "b"])
    on = Claim("c", "observation", value=5.0, holds=lambda: False, applies=hyps[:1], **common)
    got = on.evaluate()
    assert (got.name, got.kind, got.passed, got.value) == ("c", "observation", False, 5.0)
    assert (got.bound, got.op, got.statement, got.detail) == (
        1.0,
        "<=",
        "x is small",
        "from the run",
    )
    assert (got.applies, got.reason, got.hypotheses) == (True, "", ["a"])
    # holds given as a value, and as a function that says yes
    assert Claim("c", "sanity", holds=lambda: True).outcome() is True
    assert Claim("c", "sanity", holds=False).outcome() is False


def test_a_value_is_evaluated_only_where_it_applies():
    def boom():
        raise AssertionError("evaluated outside the hypotheses")

    assert Claim("c", "theorem", value=boom, bound=1, op="<", applies=False).outcome() is None


@pytest.mark.parametrize(
    "value, op, bound, expected_margin, expected_factor",
    [
        (0.25, "<=", 1.0, 0.75, 4.0),  # upper bound: bound - value, bound / value
        (2.0, "<", 1.0, -1.0, 0.5),  # outside: negative margin, factor below 1
        (3.0, ">=", 1.5, 1.5, 2.0),  # lower bound: value - bound, value / bound
        (1.0, ">", 1.5, -0.5, 1 / 1.5),
        (1.1, "in", (1.0, 1.5), 0.1, None),  # interval: distance to the nearer end
        (0.9, "in", (1.0, 1.5), -0.1, None),
        (-0.4, "<", 0.0, 0.4, None),  # a sign: no factor against a zero bound
        # a factor needs both value and bound positive: a negative value against a positive
        # bound, a zero value, a positive value against a zero bound have none
        (-0.5, "<=", 1.0, 1.5, None),
        (0.0, "<=", 1.0, 1.0, None),
        (0.0, ">", 1.0, -1.0, None),
        (0.5, "<", 0.0, -0.5, None),
        (0.5, ">=", 0.0, 0.5, None),
        (0.5, "in", [0.0, 2.0], 0.5, None),  # an interval read from a results file (a list)
        # an interval with one end not a number has no margin (either end, NaN or None)
        (1.1, "in", (None, 1.5), None, None),
        (1.1, "in", (1.0, float("nan")), None, None),
        (True, "==", True, None, None),
        (1, "==", 1, None, None),
        (float("nan"), "<=", 1.0, None, None),
        ("x", "<=", 1.0, None, None),  # not a number
        (0.5, "<=", None, None, None),  # no bound
        # an infinite bound is infinitely far (the command line's own margin, merged into this
        # one, said "no margin" here; a results file never holds one: JSON has no infinity)
        (0.5, "<=", float("inf"), float("inf"), float("inf")),
    ],
)
def test_margin_and_factor_are_on_the_bound_side(
    value, op, bound, expected_margin, expected_factor
):
    m, f = margin(value, op, bound), factor(value, op, bound)
    assert (m is None) == (expected_margin is None)
    if m is not None:
        assert m == pytest.approx(expected_margin)
    assert (f is None) == (expected_factor is None)
    if f is not None:
        assert f == pytest.approx(expected_factor)


def test_margin_text():
    assert margin_text(None, None) == "—"
    assert margin_text(0.75, 4.0) == "0.75 (4×)"
    assert margin_text(-0.1, None) == "-0.1"


def test_make_hypothesis_decides_from_value_and_bound():
    """3 < 2 is false, 1 <= 2 is true; every field reaches the Hypothesis as given, reason and
    detail default to empty, and a hypothesis with neither ``holds`` nor ``op`` is refused."""
    h = make_hypothesis("h", title="T", value=3.0, bound=2.0, op="<")
    assert h.holds is False and h.margin == pytest.approx(-1.0)
    assert (h.name, h.title, h.statement, h.value, h.bound, h.op) == ("h", "T", None, 3.0, 2.0, "<")
    assert (h.reason, h.detail) == ("", "")
    h = make_hypothesis(
        "k",
        title="Lemma 1",
        statement="lem-1",
        value=1.0,
        bound=2.0,
        op="<=",
        reason="r",
        detail="d",
    )
    assert h.holds is True
    assert (h.name, h.title, h.statement, h.value, h.bound, h.op, h.reason, h.detail) == (
        "k",
        "Lemma 1",
        "lem-1",
        1.0,
        2.0,
        "<=",
        "r",
        "d",
    )
    h = make_hypothesis("h", True, title="T")
    assert h.holds is True and (h.title, h.statement, h.reason, h.detail) == ("T", None, "", "")
    msg = "give holds, or value, bound and op"
    with pytest.raises(ValueError, match=rf"^{re.escape(msg)}$"):
        make_hypothesis("h", title="T")


def test_claim_validates_kind_and_decider():
    with pytest.raises(ValueError, match="kind must be one of"):
        Claim("c", "lemma", holds=True)
    with pytest.raises(ValueError, match="give holds"):
        Claim("c", "theorem", value=1.0)
    assert math.isnan(Claim("c", "sanity", value=float("nan"), bound=1, op="<").evaluate().value)


# --- properties (hypothesis): the expected outcome from Python's own comparisons ---------------

#: deterministic and fast: the same examples on every run, no deadline on a shared machine
FAST = settings(max_examples=100, deadline=None, derandomize=True)

PY_OP = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
}
STRICT = {"<": operator.lt, "<=": operator.lt, ">": operator.gt, ">=": operator.gt}
# floats and the integers a float holds exactly (compare works in float64)
floats = st.floats(allow_nan=False, allow_infinity=False)
numbers = st.one_of(floats, st.integers(-(2**53), 2**53))
small = st.one_of(st.floats(-1e6, 1e6), st.integers(-(10**6), 10**6))
containers = st.sampled_from([list, tuple, np.array])


intervals = st.tuples(small, small).map(lambda ends: tuple(sorted(ends)))  # (lo, hi), lo <= hi


@FAST
@given(numbers, numbers, st.sampled_from(list(PY_OP)))
def test_compare_a_number_is_python_s_comparison(value, bound, op):
    holds, reported = compare(value, op, bound)
    assert holds is PY_OP[op](value, bound)
    assert reported == value and type(reported) is type(value)


@FAST
@given(
    st.lists(small, min_size=1, max_size=8), small, st.sampled_from(["<", "<=", ">", ">="]),
    containers,
)  # fmt: skip
def test_compare_an_array_holds_for_every_element_and_reports_the_worst(xs, bound, op, kind):
    holds, reported = compare(kind(xs), op, bound)
    assert holds is all(PY_OP[op](x, bound) for x in xs)
    # the worst element: the largest against an upper bound, the smallest against a lower one
    assert reported == (max(xs) if op in ("<", "<=") else min(xs))
    if kind is np.array and all(isinstance(x, int) for x in xs):
        assert type(reported) is int  # an integer array's worst element stays an integer


@FAST
@given(st.lists(small, min_size=1, max_size=8), intervals, containers)
def test_compare_in_holds_inside_the_closed_interval_and_reports_the_farthest_out(xs, lohi, kind):
    lo, hi = lohi
    holds, reported = compare(kind(xs), "in", lohi)
    assert holds is all(lo <= x <= hi for x in xs)
    # the reported element is the one least inside: the smallest distance to the nearer end
    # (negative outside), so a failing check reports an element outside
    inside = [min(x - lo, hi - x) for x in xs]
    assert reported in xs
    assert min(reported - lo, hi - reported) == min(inside)


@FAST
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=6), st.integers(-3, 3), containers)
def test_compare_equal_reports_the_first_differing_element(xs, bound, kind):
    holds, reported = compare(kind(xs), "==", bound)
    differing = [x for x in xs if x != bound]
    assert holds is (not differing)
    assert reported == (differing[0] if differing else xs[0])


@FAST
@given(
    st.lists(small, min_size=0, max_size=5), st.lists(small, min_size=0, max_size=5),
    st.sampled_from(["<", "<=", ">", ">=", "in", "=="]), small,
)  # fmt: skip
def test_compare_a_nan_anywhere_never_holds(before, after, op, b):
    bound = (b, b + 1) if op == "in" else b
    holds, reported = compare([*before, float("nan"), *after], op, bound)
    assert holds is False and math.isnan(reported)


@FAST
@given(
    st.one_of(small, st.lists(small, min_size=1, max_size=6)),
    st.sampled_from(["<", "<=", ">", ">=", "in"]),
    small,
    intervals,
)
def test_margin_is_positive_exactly_on_the_strict_side(value, op, b, lohi):
    """A check's margin (that of its reported, worst element) is > 0 exactly when every element
    is strictly inside the bound and >= 0 exactly when every element is inside or on it; the
    outcome is the comparison as written (the same for a hypothesis)."""
    xs = value if isinstance(value, list) else [value]
    bound = lohi if op == "in" else b
    if op == "in":
        lo, hi = lohi
        strictly = all(lo < x < hi for x in xs)
        or_on = all(lo <= x <= hi for x in xs)
    else:
        strictly = all(STRICT[op](x, b) for x in xs)
        or_on = all((x <= b) if op in ("<", "<=") else (x >= b) for x in xs)
    check = Claim("c", "observation", value=value, bound=bound, op=op).evaluate()
    assert (check.margin > 0) is strictly
    assert (check.margin >= 0) is or_on
    assert check.passed is (strictly if op in ("<", ">") else or_on)
    h = make_hypothesis("h", title="T", value=value, bound=bound, op=op)
    assert h.holds is check.passed and h.margin == check.margin


def test_compare_reads_values_in_double_precision_and_names_what_it_rejects():
    """A float32 value is compared as the float64 number it is: float32(0.1) is
    0.100000001490116..., above 0.1, so ``<= 0.1`` fails (read in float32, the bound would round
    to the same float32 and hold); a boolean array is reported as a number. An unknown op and
    an empty value stop with messages that say so."""
    assert float(np.float32(0.1)) > 0.1
    assert compare(np.array([0.1], dtype=np.float32), "<=", 0.1)[0] is False
    assert compare(np.array([0.1], dtype=np.float32), ">", 0.1)[0] is True
    holds, reported = compare(np.array([True, False]), "<=", 1.0)
    assert holds is True and reported == 1.0 and type(reported) is float
    msg = "op must be one of ('<=', '<', '>=', '>', '==', 'in'); got '=>'"
    with pytest.raises(ValueError, match=rf"^{re.escape(msg)}$"):
        compare(1.0, "=>", 2.0)
    with pytest.raises(ValueError, match=r"^an empty value cannot be checked$"):
        compare(np.array([]), "<", 1.0)


def test_compare_something_not_a_number():
    """A value that is not a number (a string, a dict) is compared only for equality, and is
    reported as it is; any other op stops with a message naming the value's type and the op."""
    assert compare("logistic", "==", "logistic") == (True, "logistic")
    assert compare("exp", "==", "logistic") == (False, "exp")
    assert compare({"a": 1}, "==", {"a": 1}) == (True, {"a": 1})
    with pytest.raises(TypeError, match=r"^cannot compare a str with op '<='$"):
        compare("exp", "<=", 1.0)
    with pytest.raises(TypeError, match=r"^cannot compare a dict with op 'in'$"):
        compare({"a": 1}, "in", (0, 1))
