"""``twolayer.common.checks``: a check's outcome, margin and factor, computed without a page,
and the rule that a check applies only where *all* of its hypotheses hold. Every case here is
one where the answer is no, beside one where it is yes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twolayer.common.checks import (
    Claim,
    Hypothesis,
    applies_of,
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
        (True, "==", True, None, None),
        (float("nan"), "<=", 1.0, None, None),
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


@given(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from(["<", "<=", ">", ">="]),
)
def test_margin_sign_agrees_with_the_outcome(value, bound, op):
    """A passing check has margin >= 0 and a failing one margin <= 0 (0 at equality)."""
    outcome = Claim("c", "observation", value=value, bound=bound, op=op).outcome()
    m = margin(value, op, bound)
    assert (m >= 0) if outcome else (m <= 0)


def test_margin_text():
    assert margin_text(None, None) == "—"
    assert margin_text(0.75, 4.0) == "0.75 (4×)"
    assert margin_text(-0.1, None) == "-0.1"


def test_make_hypothesis_decides_from_value_and_bound():
    h = make_hypothesis("h", title="T", value=3.0, bound=2.0, op="<")
    assert h.holds is False and h.margin == pytest.approx(-1.0)
    assert make_hypothesis("h", True, title="T").holds is True
    with pytest.raises(ValueError, match="give holds"):
        make_hypothesis("h", title="T")


def test_claim_validates_kind_and_decider():
    with pytest.raises(ValueError, match="kind must be one of"):
        Claim("c", "lemma", holds=True)
    with pytest.raises(ValueError, match="give holds"):
        Claim("c", "theorem", value=1.0)
    assert math.isnan(Claim("c", "sanity", value=float("nan"), bound=1, op="<").evaluate().value)
