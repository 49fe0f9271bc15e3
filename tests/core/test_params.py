"""``twolayer.core.params``: the parameter types, the size profiles and the validation of a
page's parameters (every chapter's ``SPEC`` declares with them), without a notebook."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from helpers import TOY_CELL, TOY_PROFILES, toy_spec
from twolayer.core.params import (
    COMMON,
    PROFILE_ENV,
    PROFILES,
    Bool,
    Choice,
    Constraint,
    Device,
    Float,
    HexDigest,
    Int,
    ListOf,
    Optional,
    OptionalDir,
    OptionalPath,
    ParameterError,
    Params,
    check_profiles,
    common_spec,
    validate,
)

SPEC = toy_spec()
FULL = {**common_spec(), **SPEC}
SIZES = TOY_PROFILES
DEFAULTS = TOY_CELL


def check(spec=SPEC, profiles=SIZES, **params):
    """Validate a page's values: its parameters cell's (``DEFAULTS``), then ``params`` on top,
    as papermill injects them."""
    return validate({**common_spec(), **spec}, profiles, {**DEFAULTS, **params})


@pytest.fixture(autouse=True)
def _no_profile_env(monkeypatch):
    monkeypatch.delenv(PROFILE_ENV, raising=False)


# --- profiles and defaults ------------------------------------------------------------------------


def test_defaults_filled_from_profile():
    P = check()
    assert isinstance(P, Params)
    assert dict(P) == {
        "seed": 0,
        "profile": "smoke",
        "results_path": None,
        "n": 5,
        "lr": 0.1,
        "act": "leaky_relu",
        "normalized": False,
        "ns": [2, 3],
    }
    assert P.n == 5 and P.ns == [2, 3]
    with pytest.raises(AttributeError):
        _ = P.not_a_parameter


def test_explicit_values_win_over_profile():
    P = check(profile="paper", seed=7, n=3, lr=0.5)
    assert (P.seed, P.n, P.lr, P.ns) == (7, 3, 0.5, [2, 4, 8, 16])


def test_profile_none_reads_env(monkeypatch):
    monkeypatch.setenv(PROFILE_ENV, "paper")
    P = check(profile=None)
    assert P.profile == "paper" and P.n == 100 and P.seed == 2


def test_profile_none_without_env_is_book():
    P = check(profile=None)
    assert P.profile == "book" and P.n == 50


def test_bad_env_profile_names_the_variable(monkeypatch):
    monkeypatch.setenv(PROFILE_ENV, "huge")
    with pytest.raises(ParameterError) as info:
        check(profile=None)
    msg = str(info.value)
    assert "BOOK_PROFILE" in msg and "'huge'" in msg
    assert "'smoke'" in msg and "'book'" in msg and "'paper'" in msg


def test_explicit_bad_profile():
    with pytest.raises(ParameterError, match="'profile'.*'smoke', 'book', 'paper'"):
        check(profile="huge", seed=0)


def test_explicit_bad_profile_with_default_seed():
    with pytest.raises(ParameterError, match="profile"):
        check(profile="huge", seed=None)


def test_profiles_must_define_all_three():
    with pytest.raises(ValueError, match="paper"):
        check_profiles(FULL, {"smoke": {}, "book": {}})


def test_missing_value_without_profile_default_is_rejected():
    profiles = {k: {kk: vv for kk, vv in v.items() if kk != "n"} for k, v in SIZES.items()}
    with pytest.raises(ParameterError, match="'n' must be an integer in \\[1, 100\\]; got None"):
        check(profiles=profiles)


# --- parameter types ------------------------------------------------------------------------------


def rejects(name, value, *fragments, spec=SPEC):
    with pytest.raises(ParameterError) as info:
        check(spec=spec, **{name: value})
    msg = str(info.value)
    assert repr(name) in msg, msg
    for f in fragments:
        assert f in msg, msg
    return msg


@pytest.mark.parametrize("value", ["3", 3.0, 2.5, True, False, [3], 0, -1, 101])
def test_int_rejects(value):
    rejects("n", value, "an integer in [1, 100]")


@pytest.mark.parametrize("value", [1, 100, 42])
def test_int_accepts_bounds(value):
    assert check(n=value).n == value


@pytest.mark.parametrize("value", [0, 0.0, -0.1, 1.0001, float("nan"), float("inf"), "0.1", True])
def test_float_lo_open_rejects(value):
    rejects("lr", value, "a finite number in (0.0, 1.0]")


@pytest.mark.parametrize(
    "value,expected", [(1, 1.0), (1.0, 1.0), (1e-12, 1e-12), (np.float64(0.5), 0.5)]
)
def test_float_lo_open_accepts(value, expected):
    v = check(lr=value).lr
    assert v == expected and type(v) is float


def test_float_hi_open_and_closed_bounds():
    spec = {**SPEC, "lr": Float(0.0, 1.0, hi_open=True)}
    rejects("lr", 1.0, "[0.0, 1.0)", spec=spec)
    assert check(spec=spec, lr=0.0).lr == 0.0
    spec = {**SPEC, "lr": Float(lo=0.5)}
    rejects("lr", 0.25, ">= 0.5", spec=spec)
    spec = {**SPEC, "lr": Float(hi=2.0, hi_open=True)}
    rejects("lr", 2.0, "< 2.0", spec=spec)
    spec = {**SPEC, "lr": Float(lo=0.0, lo_open=True)}
    rejects("lr", 0.0, "> 0.0", spec=spec)


@pytest.mark.parametrize("value", ["relu", "", 1, True])
def test_choice_rejects(value):
    rejects("act", value, "one of 'leaky_relu', 'smoothed_leaky_relu'")


def test_choice_none_without_default_rejected():
    # None is filled from the profile only where the profile has a default; act has none
    rejects("act", None, "one of 'leaky_relu', 'smoothed_leaky_relu'", "got None")


def test_choice_rejects_bool_for_int_choices():
    spec = {**SPEC, "act": Choice(0, 1)}
    rejects("act", True, "one of 0, 1", spec=spec)
    assert check(spec=spec, act=1).act == 1


@pytest.mark.parametrize("value", [1, 0, "True", None])
def test_bool_rejects(value):
    rejects("normalized", value, "True or False", f"got {value!r}")


@pytest.mark.parametrize("value", [-1.0, "1", True])
def test_optional_rejects_naming_itself_and_the_value(value):
    """A value the inner spec rejects is reported for the optional parameter: ``None or``
    what the inner spec accepts, with the value given."""
    spec = {**SPEC, "lo": Optional(Float(0))}
    rejects("lo", value, "None or a finite number >= 0", f"got {value!r}", spec=spec)


@pytest.mark.parametrize("value", [[3, 2], [2, 2], [1, 2], [], "2,3", 3, [2, "3"], [2, True]])
def test_listof_rejects(value):
    rejects("ns", value, "a list of at least 1 items", "an integer >= 2", "strictly increasing")


def test_listof_accepts_tuple_as_list():
    assert check(ns=(2, 5, 9)).ns == [2, 5, 9]


def test_listof_not_increasing_allows_any_order():
    spec = {**SPEC, "ns": ListOf(Int(2), min_len=2, max_len=3)}
    assert check(spec=spec, ns=[5, 2]).ns == [5, 2]
    rejects("ns", [5], "at least 2", "at most 3 items", spec=spec)


def test_listof_max_len_in_message():
    spec = {**SPEC, "ns": ListOf(Int(2), max_len=3)}
    rejects("ns", [2, 3, 4, 5], "3", "at most", spec=spec)


@pytest.mark.parametrize("value", ["out.txt", "results", 3, ["a.json"]])
def test_optional_path_rejects(value):
    rejects("results_path", value, "None or a file path string ending in .json")


def test_optional_path_accepts(tmp_path):
    assert check(results_path=tmp_path / "r.json").results_path == os.fspath(tmp_path / "r.json")


@pytest.mark.parametrize("value", [-1, 2**32, 1.0, True, "0"])
def test_seed_rejects(value):
    rejects("seed", value, "an integer in [0, 4294967295]")


# --- unknown and missing names --------------------------------------------------------------------


def test_unknown_name_rejected_and_named():
    with pytest.raises(ParameterError) as info:
        check(seeed=1)
    msg = str(info.value)
    assert "unknown parameter 'seeed'" in msg
    assert "this notebook takes:" in msg
    for name in ["seed", "profile", "results_path", "n", "lr", "act", "normalized", "ns"]:
        assert name in msg.split("takes:")[1]


def test_several_unknown_names():
    with pytest.raises(ParameterError, match="unknown parameters 'aa', 'zz'"):
        check(zz=1, aa=2)


def test_absent_parameter_rejected():
    values = {k: v for k, v in DEFAULTS.items() if k != "lr"}
    with pytest.raises(ParameterError, match="does not define lr"):
        validate(FULL, SIZES, values)


def test_common_parameters_come_first_and_are_typed():
    assert list(FULL)[:4] == ["seed", "profile", "results_path", "n"]
    assert tuple(common_spec()) == COMMON
    assert common_spec()["profile"].values == PROFILES


# --- Params -----------------------------------------------------------------------------------


def test_params_attribute_access_and_assignment():
    P = Params({"n": 3})
    assert P.n == 3 and P["n"] == 3
    P.n = 4
    P.derived = "x"
    assert dict(P) == {"n": 4, "derived": "x"}
    with pytest.raises(AttributeError, match="missing"):
        P.missing  # noqa: B018


# --- derived values, constraints, exploration -----------------------------------------------------


def test_derive_and_constraints():
    spec = {**SPEC, "lo": Optional(Float(0)), "hi": Optional(Float(0))}
    profiles = {k: {**v, "hi": 4.0} for k, v in SIZES.items()}
    rules = dict(
        derive={"lo": lambda P: P.hi / 2},
        constraints=[Constraint("hi", lambda P: P.hi > P.lo, "must exceed lo")],
    )
    for lo, hi, ok in (
        (None, None, True),
        (1.0, None, True),
        (5.0, None, False),
        (1.0, 0.5, False),
    ):
        values = {**DEFAULTS, "lo": lo, "hi": hi}
        if ok:
            P = validate({**common_spec(), **spec}, profiles, values, **rules)
            assert P.lo == (2.0 if lo is None else lo)  # derived: hi / 2 = 4 / 2
        else:
            with pytest.raises(ParameterError, match="parameter 'hi' must exceed lo"):
                validate({**common_spec(), **spec}, profiles, values, **rules)


def test_profiles_may_not_name_unknown_parameters():
    with pytest.raises(ValueError, match="unknown parameters"):
        check_profiles(FULL, {k: {**v, "nope": 1} for k, v in SIZES.items()})


def test_sample_draws_valid_values_inside_explore():
    rng = np.random.default_rng(0)
    specs = {
        "i": Int(1, 100, explore=(2, 50)),
        "f": Float(0, 1, lo_open=True, explore=(0.1, 0.9)),
        "g": Float(0, None, lo_open=True, explore=(1e-4, 1e-1)),
        "c": Choice("a", "b", explore=True),
        "b": Bool(explore=True),
        "l": ListOf(Int(1), explore=[[1, 2], [3]]),
        "o": Optional(Int(1), explore=(1, 9)),
        "fixed": Float(0, 1),
    }
    seen = {k: set() for k in specs}
    for _ in range(300):
        for k, s in specs.items():
            v = s.sample(rng)
            if k == "fixed":
                assert v is None
                continue
            assert s.validate(k, v) == v or k == "l"
            seen[k].add(tuple(v) if isinstance(v, list) else v)
    assert min(seen["i"]) >= 2 and max(seen["i"]) <= 50 and len(seen["i"]) > 20
    assert min(seen["g"]) < 1e-3 and max(seen["g"]) > 1e-2  # log-uniform
    assert seen["c"] == {"a", "b"} and seen["b"] == {True, False}
    assert seen["l"] == {(1, 2), (3,)}


# --- Device --------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["auto", "cpu", "CPU", " auto "])
def test_device_accepts(value):
    assert Device().validate("device", value) == value.strip().lower()


@pytest.mark.parametrize("value", ["gpu", "", "cuda:", "cuda:x", "cuda:-1", "meta", 0, None, True])
def test_device_rejects_malformed(value):
    with pytest.raises(ParameterError, match="'device' must be"):
        Device().validate("device", value)


def test_device_cuda_without_cuda_names_the_parameter(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for value in ("cuda", "cuda:1"):
        with pytest.raises(ParameterError, match="'device' asks for .*CUDA is not available"):
            Device().validate("device", value)
    assert Device().validate("device", "auto") == "auto"


# --- properties (hypothesis): every type against a hand rule --------------------------------------
#
# ``ok(spec, v)`` says, from the types' documentation, whether ``v`` is a valid value and
# ``expected(spec, v)`` what validation returns; ``values_for(spec)`` draws good values, values
# at and beyond the ends, and values of every other type.

#: deterministic and fast: the same examples on every run, no deadline on a shared machine
FAST = settings(max_examples=100, deadline=None, derandomize=True)

HEX = "0123456789abcdefABCDEF"
names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
anything = st.one_of(
    st.booleans(),
    st.none(),
    st.integers(),
    st.floats(),
    st.text(max_size=4),
    st.lists(st.integers(0, 3), max_size=2),
    st.binary(max_size=2),
)


def _inside(x, lo, hi, lo_open=False, hi_open=False) -> bool:
    above = lo is None or (x > lo if lo_open else x >= lo)
    below = hi is None or (x < hi if hi_open else x <= hi)
    return above and below


def ok(spec, v) -> bool:
    if isinstance(spec, Optional):
        return v is None or ok(spec.inner, v)
    if isinstance(spec, Int):  # an int, never a bool
        return type(v) is int and _inside(v, spec.lo, spec.hi)
    if isinstance(spec, Float):  # a finite real number, never a bool
        if type(v) not in (int, float):
            return False
        try:
            x = float(v)
        except OverflowError:  # an integer beyond every float
            return False
        return math.isfinite(x) and _inside(x, spec.lo, spec.hi, spec.lo_open, spec.hi_open)
    if isinstance(spec, Choice):  # one of the values, of its type
        return any(type(c) is type(v) and c == v for c in spec.values)
    if isinstance(spec, Bool):
        return type(v) is bool
    if isinstance(spec, ListOf):
        if type(v) not in (list, tuple):
            return False
        n_ok = spec.min_len <= len(v) and (spec.max_len is None or len(v) <= spec.max_len)
        if not (n_ok and all(ok(spec.item, x) for x in v)):
            return False
        return not spec.increasing or all(a < b for a, b in zip(v, v[1:]))
    if isinstance(spec, (OptionalDir, OptionalPath)):
        if v is None:
            return True
        if not isinstance(v, (str, os.PathLike)):
            return False
        text = os.fspath(v)
        return text.strip() != "" and (spec.suffix is None or text.endswith(spec.suffix))
    if isinstance(spec, HexDigest):
        if v is None:
            return spec.optional
        return isinstance(v, str) and len(v) == spec.length and all(c in HEX for c in v)
    if isinstance(spec, Device):  # "cuda..." is never drawn: it depends on the machine
        return isinstance(v, str) and v.strip().lower() in ("auto", "cpu")
    raise AssertionError(spec)


def expected(spec, v):
    if v is None:
        return None
    if isinstance(spec, Optional):
        return expected(spec.inner, v)
    if isinstance(spec, Float):
        return float(v)
    if isinstance(spec, ListOf):
        return [expected(spec.item, x) for x in v]
    if isinstance(spec, (OptionalDir, OptionalPath)):
        return os.fspath(v)
    if isinstance(spec, HexDigest):
        return v.lower()
    if isinstance(spec, Device):
        return v.strip().lower()
    return v


def _type_of(spec, v):
    if isinstance(spec, Optional):
        return _type_of(spec.inner, v)
    return {Float: float, ListOf: list, Int: int, Bool: bool}.get(
        type(spec), type(expected(spec, v))
    )


# -- the types, drawn


@st.composite
def int_specs(draw, explore=False):
    lo = draw(st.none() | st.integers(-50, 50))
    hi = draw(st.none() | st.integers(-50 if lo is None else lo, 60))
    if not explore:
        return Int(lo, hi)
    a = draw(st.integers(-60 if lo is None else lo, 60 if hi is None else hi))
    b = draw(st.integers(a, 70 if hi is None else hi))
    return Int(lo, hi, explore=(a, b))


@st.composite
def float_specs(draw, explore=False):
    bound = st.floats(-100, 100) | st.sampled_from([0.0, 1.0, 1e-3])
    lo = draw(st.none() | bound)
    hi = draw(st.none() | (st.floats(-100 if lo is None else lo, 200) | st.just(lo)))
    lo_open = lo is not None and draw(st.booleans())
    hi_open = hi is not None and draw(st.booleans())
    if lo is not None and hi is not None and math.nextafter(lo, math.inf) >= hi:
        lo_open = hi_open = False  # a range of one or two adjacent floats: closed, never empty
    if not explore:
        return Float(lo, hi, lo_open=lo_open, hi_open=hi_open)
    # an explore range inside the declared one: a scale range (log-uniform draws) when positive
    lo_e = -100 if lo is None else lo
    hi_e = 100 if hi is None else hi
    if hi_e > 1e-3 and draw(st.booleans()):
        lo_e = max(lo_e, 1e-3)
    a = draw(st.floats(lo_e, hi_e))
    b = draw(st.floats(a, hi_e) | st.just(hi_e))
    if (lo_open and a == lo) or (hi_open and b == hi):
        lo_open = hi_open = False
    return Float(lo, hi, lo_open=lo_open, hi_open=hi_open, explore=(a, b))


choice_values = st.lists(
    st.one_of(st.text(max_size=3), st.integers(-5, 5)), min_size=1, max_size=4, unique=True
)
choice_specs = choice_values.map(lambda vs: Choice(*vs))
number_choice_specs = st.lists(st.integers(-5, 5), min_size=1, max_size=4, unique=True).map(
    lambda vs: Choice(*vs)
)


@st.composite
def list_specs(draw):
    item = draw(st.one_of(int_specs(), float_specs(), number_choice_specs, choice_specs))
    increasing = not (isinstance(item, Choice) and any(isinstance(v, str) for v in item.values))
    increasing = increasing and draw(st.booleans())
    most = 3  # the most distinct items the item type has, up to 3
    if isinstance(item, Choice):
        most = min(most, len(item.values))
    elif item.lo is not None and item.hi is not None and item.hi - item.lo < 2:
        most = 1
    min_len = draw(st.integers(0, most if increasing else 3))
    max_len = draw(st.none() | st.integers(min_len, 5))
    return ListOf(item, min_len=min_len, max_len=max_len, increasing=increasing)


def specs_of(kind):
    return {
        "Int": int_specs(),
        "Float": float_specs(),
        "Choice": choice_specs,
        "Bool": st.just(Bool()),
        "ListOf": list_specs(),
        "Optional": st.one_of(int_specs(), float_specs(), choice_specs).map(Optional),
        "OptionalDir/Path": st.sampled_from([OptionalDir(), OptionalPath()]),
        "HexDigest": st.builds(HexDigest, length=st.integers(1, 40), optional=st.booleans()),
        "Device": st.just(Device()),
    }[kind]


# -- values for a type: good ones, the ends and beyond, and every other type


def good_for(spec):
    if isinstance(spec, Optional):
        return st.none() | good_for(spec.inner)
    if isinstance(spec, Int):
        return st.integers(spec.lo, spec.hi)
    if isinstance(spec, Float):
        kw = dict(allow_nan=False, allow_infinity=False)
        floats = st.floats(
            spec.lo, spec.hi, exclude_min=spec.lo_open, exclude_max=spec.hi_open, **kw
        )
        lo = None if spec.lo is None else math.ceil(spec.lo)
        hi = None if spec.hi is None else math.floor(spec.hi)
        if lo is not None and hi is not None and lo > hi:
            return floats
        return floats | st.integers(lo, hi).filter(lambda v: ok(spec, v))
    if isinstance(spec, Choice):
        return st.sampled_from(spec.values)
    if isinstance(spec, Bool):
        return st.booleans()
    if isinstance(spec, ListOf):
        most = spec.min_len + 4 if spec.max_len is None else spec.max_len
        item = spec.item.inner if isinstance(spec.item, Optional) else spec.item
        if spec.increasing and isinstance(item, Int) and None not in (item.lo, item.hi):
            # no more distinct values than the range holds (hypothesis needs a feasible size)
            most = max(spec.min_len, min(most, item.hi - item.lo + 1))
            if item.hi == item.lo:  # one value: a unique list of it trips hypothesis's sizing
                return st.lists(st.just(item.lo), min_size=spec.min_len, max_size=min(most, 1))
        items = st.lists(
            good_for(spec.item), min_size=spec.min_len, max_size=most, unique=spec.increasing
        )
        return items.map(sorted) if spec.increasing else items
    if isinstance(spec, (OptionalDir, OptionalPath)):
        text = (
            st.text(min_size=1, max_size=6).filter(str.strip).map(lambda t: t + (spec.suffix or ""))
        )
        return st.none() | text | text.map(Path)
    if isinstance(spec, HexDigest):
        hexes = st.text(HEX, min_size=spec.length, max_size=spec.length)
        return (st.none() | hexes) if spec.optional else hexes
    if isinstance(spec, Device):
        word = st.sampled_from(["auto", "cpu", "AUTO", "Cpu"])
        space = st.sampled_from(["", " ", "\t"])
        return st.tuples(space, word, space).map("".join)
    raise AssertionError(spec)


def near_for(spec):
    if isinstance(spec, Optional):
        return values_for(spec.inner)
    if isinstance(spec, (Int, Float)):
        ends = [e for e in (spec.lo, spec.hi) if e is not None]
        near = [x for e in ends for x in (e - 1, e, e + 1)]
        if isinstance(spec, Float):
            near += [math.nextafter(e, d) for e in ends for d in (-math.inf, math.inf)]
            near += [math.nan, math.inf, -math.inf, 10**400]
        return st.sampled_from(near or [0]) | st.integers(-(10**6), 10**6)
    if isinstance(spec, Choice):
        return st.one_of(st.text(max_size=3), st.integers(-6, 6), st.floats(-6, 6))
    if isinstance(spec, ListOf):
        most = (spec.min_len if spec.max_len is None else spec.max_len) + 2
        repeated = good_for(spec.item).map(lambda x: [x, x])  # never strictly increasing
        # one item too many or too few, every item good
        longer = st.tuples(good_for(spec), good_for(spec.item)).map(lambda p: [*p[0], p[1]])
        shorter = good_for(spec).filter(lambda v: len(v) > 0).map(lambda v: v[:-1])
        lists = st.lists(values_for(spec.item), max_size=most)
        return st.one_of(lists, repeated, longer, shorter, st.tuples())
    if isinstance(spec, (OptionalDir, OptionalPath)):
        return st.text(" \t\n.", max_size=3) | st.text(max_size=5) | st.text(max_size=3).map(Path)
    if isinstance(spec, HexDigest):
        other = st.integers(0, 42).filter(lambda n: n != spec.length)
        wrong_length = other.flatmap(lambda n: st.text(HEX, min_size=n, max_size=n))
        one_bad = st.tuples(good_for(spec).filter(bool), st.text(min_size=1, max_size=1)).map(
            lambda p: p[1] + p[0][1:]
        )
        return wrong_length | one_bad
    if isinstance(spec, Device):
        return st.text(max_size=6).filter(lambda t: not t.strip().lower().startswith("cuda"))
    return st.nothing()


def values_for(spec):
    return st.one_of(good_for(spec), near_for(spec), anything)


def bad_for(spec):
    return values_for(spec).filter(lambda v: v is not None and not ok(spec, v))


KINDS = ["Int", "Float", "Choice", "Bool", "ListOf", "Optional", "OptionalDir/Path", "HexDigest"]
KINDS += ["Device"]


@pytest.mark.parametrize("kind", KINDS)
@FAST
@given(data=st.data(), name=names)
def test_a_type_validates_exactly_its_values(kind, data, name):
    """Every value inside the declared range (of the declared type) validates and comes back
    (normalized as documented); every other value, bools for Int and NaN or infinity for
    Float included, raises a ParameterError that names the parameter."""
    spec = data.draw(specs_of(kind), label="spec")
    value = data.draw(values_for(spec), label="value")
    if ok(spec, value):
        out = spec.validate(name, value)
        want = expected(spec, value)
        assert out == want and type(out) is type(want)
    else:
        with pytest.raises(ParameterError) as info:
            spec.validate(name, value)
        assert f"parameter {name!r}" in str(info.value)


@pytest.mark.parametrize("integer", [True, False], ids=["Int", "Float"])
@pytest.mark.parametrize("end", ["lo", "hi"])
@pytest.mark.parametrize("step", [-1, 0, 1])
@settings(max_examples=20, deadline=None, derandomize=True)
@given(
    lo=st.integers(-50, 50), width=st.integers(1, 50), opens=st.tuples(st.booleans(), st.booleans())
)
def test_a_number_at_an_end_or_next_to_it(integer, end, step, lo, width, opens):
    """At each end of a declared range, open or closed, and one step (1, or one float) on
    either side of it."""
    if integer:
        spec = Int(lo, lo + width)
    else:
        spec = Float(lo / 4, (lo + width) / 4, lo_open=opens[0], hi_open=opens[1])
    e = spec.lo if end == "lo" else spec.hi
    value = e + step if integer else (e if step == 0 else math.nextafter(e, math.inf * step))
    if ok(spec, value):
        assert spec.validate("p", value) == value
    else:
        with pytest.raises(ParameterError, match="parameter 'p'"):
            spec.validate("p", value)


@pytest.mark.parametrize("case", ["longer", "shorter", "not increasing", "a bad item"])
@settings(max_examples=30, deadline=None, derandomize=True)
@given(data=st.data())
def test_a_list_of_the_wrong_length_or_order_or_item_is_rejected(case, data):
    spec = data.draw(list_specs(), label="spec")
    good = data.draw(good_for(spec), label="good")
    if case == "longer":
        assume(spec.max_len is not None and not spec.increasing)
        value = good + [good[0] if good else data.draw(good_for(spec.item))] * (
            spec.max_len + 1 - len(good)
        )
    elif case == "shorter":
        assume(spec.min_len > 0)
        value = good[: spec.min_len - 1]
    elif case == "not increasing":
        assume(spec.increasing and len(good) >= 2)
        value = [good[1], *good[1:]]
    else:
        assume(good)
        bad = data.draw(bad_for(spec.item), label="bad item")
        value = [*good[:-1], bad]
    assert not ok(spec, value)
    with pytest.raises(ParameterError, match="parameter 'p'"):
        spec.validate("p", value)


@pytest.mark.parametrize("kind", ["Int", "Float", "ListOf", "HexDigest"])
@FAST
@given(data=st.data(), name=names)
def test_every_good_value_validates_to_itself(kind, data, name):
    """The same, drawing only good values (most drawn values above are bad)."""
    spec = data.draw(specs_of(kind), label="spec")
    value = data.draw(good_for(spec), label="value")
    assert ok(spec, value)
    assert spec.validate(name, value) == expected(spec, value)


class _Rng:
    """NumPy's generator as ``Spec.sample`` uses it, its draws chosen by hypothesis:
    ``uniform`` is NumPy's ``low + (high - low) * u`` with ``u`` in [0, 1)."""

    def __init__(self, u: float, k: int):
        self.u, self.k = u, k

    def uniform(self, low, high):
        return low + (high - low) * self.u

    def integers(self, n):
        return self.k % n


@st.composite
def explored_specs(draw):
    kind = draw(st.sampled_from(["Int", "Float", "Optional", "Choice", "Bool", "list"]))
    if kind == "Int":
        return draw(int_specs(explore=True))
    if kind == "Float":
        return draw(float_specs(explore=True))
    if kind == "Optional":
        inner = draw(st.one_of(int_specs(explore=True), float_specs(explore=True)))
        return Optional(type(inner)(inner.lo, inner.hi), explore=inner.explore)
    if kind == "Choice":
        return Choice(*draw(choice_values), explore=True)
    if kind == "Bool":
        return Bool(explore=True)
    spec = draw(st.one_of(int_specs(), float_specs(), choice_specs))
    spec.explore = draw(st.lists(good_for(spec), min_size=1))
    return spec


@FAST
@given(
    explored_specs(),
    st.sampled_from([0.0, math.nextafter(1.0, 0.0)]) | st.floats(0, 1, exclude_max=True),
    st.integers(0, 100),
)
def test_sample_draws_inside_the_explore_range(spec, u, k):
    v = spec.sample(_Rng(u, k))
    e = spec.explore
    if isinstance(e, tuple):  # a range: inside it, and a valid value of the parameter
        integer = isinstance(spec, Int) or isinstance(getattr(spec, "inner", None), Int)
        assert type(v) is (int if integer else float)
        assert e[0] <= v <= e[1]
        assert spec.validate("p", v) == v
    elif isinstance(e, list):
        assert v in e
    else:
        assert v in getattr(spec, "values", (False, True))


@FAST
@given(
    st.floats(1e-6, 1e6),
    st.floats(10, 1e6),
    st.sampled_from([0.0, math.nextafter(1.0, 0.0)]) | st.floats(0, 1, exclude_max=True),
    st.booleans(),
)
def test_a_scale_parameter_is_drawn_inside_its_range(a, ratio, u, integer):
    """An explore range ``(a, b)`` with ``b >= 10 a > 0`` is drawn log-uniformly; the draw
    stays inside it at both ends (``exp(log(b))`` may exceed ``b`` by an ulp)."""
    b = a * ratio
    spec = Int(1, None, explore=(1, 10 * round(ratio))) if integer else Float(a, b, explore=(a, b))
    v = spec.sample(_Rng(u, 0))
    assert spec.explore[0] <= v <= spec.explore[1]
    assert spec.validate("p", v) == v


def _chapters():
    from twolayer.paper_a.chapters import figure1, real_images
    from twolayer.paper_b.chapters import stage1

    return [figure1.SPEC, real_images.SPEC, stage1.SPEC]


@pytest.mark.parametrize("chapter", _chapters(), ids=lambda c: c.chapter)
@settings(max_examples=25, deadline=None, derandomize=True)
@given(data=st.data(), profile=st.sampled_from(["smoke", "book", "paper"]))
def test_a_chapter_names_the_parameter_it_rejects(chapter, data, profile):
    """``SPEC.params(profile, name=bad)``, one random bad value for one random parameter of a
    real chapter, raises the page's ParameterError naming that parameter."""
    types = chapter.unbound().spec  # with seed and results_path
    name = data.draw(st.sampled_from(sorted(set(types) - {"profile"})), label="name")
    bad = data.draw(bad_for(types[name]), label="bad")
    chapter.params(profile)  # the profile alone is valid
    with pytest.raises(ParameterError) as info:
        chapter.params(profile, **{name: bad})
    assert f"parameter {name!r}" in str(info.value)


def test_choice_of_integers_rejects_a_float():
    with pytest.raises(ParameterError, match="'r'"):
        Choice(2, 3).validate("r", 2.0)


def test_float_rejects_an_integer_beyond_every_float():
    with pytest.raises(ParameterError, match="'lr'"):
        Float(0.0, None).validate("lr", 10**400)


# --- whole messages: the parameter's name, what it must be, the value given --------------------

#: one bad value for each refusal of Int, Float, Choice and ListOf, with the whole message it
#: gets, written out from the types' documentation: "parameter NAME must be WHAT; got VALUE"
WHOLE_MESSAGES = [
    (Int(1, 100), "3", "parameter 'p' must be an integer in [1, 100]; got '3'"),
    (
        Float(0.0, 1.0, lo_open=True),
        "0.1",
        "parameter 'p' must be a finite number in (0.0, 1.0]; got '0.1'",
    ),
    (
        Float(0.0, 1.0, lo_open=True),
        math.inf,
        "parameter 'p' must be a finite number in (0.0, 1.0]; got inf",
    ),
    (
        Float(0.0, 1.0, lo_open=True),
        0.0,
        "parameter 'p' must be a finite number in (0.0, 1.0]; got 0.0",
    ),
    (
        Float(0.0, 1.0, lo_open=True),
        1.5,
        "parameter 'p' must be a finite number in (0.0, 1.0]; got 1.5",
    ),
    # 10**309 exceeds the largest float (1.8e308): its repr is 1 and 309 zeros
    (Float(), 10**309, "parameter 'p' must be a finite number; got 1" + "0" * 309),
    (Choice("a", "b"), "c", "parameter 'p' must be one of 'a', 'b'; got 'c'"),
    (Choice(0, 1), True, "parameter 'p' must be one of 0, 1; got True"),
    (Choice(0, 1), False, "parameter 'p' must be one of 0, 1; got False"),
]
_NS = "a list of at least 1 items, each an integer >= 2, strictly increasing"
WHOLE_MESSAGES += [
    (ListOf(Int(2), increasing=True), value, f"parameter 'p' must be {_NS}; got {shown}")
    for value, shown in [
        ("2,3", "'2,3'"),  # a string is not a list
        ([], "[]"),  # too short
        ([2, "3"], "[2, '3']"),  # a bad item: the list is named, with the whole list
        ([3, 2], "[3, 2]"),  # not increasing
    ]
]


@pytest.mark.parametrize(("spec", "value", "message"), WHOLE_MESSAGES)
def test_a_refusal_gives_the_whole_message(spec, value, message):
    with pytest.raises(ParameterError, match=rf"^{re.escape(message)}$"):
        spec.validate("p", value)


def test_a_choice_of_booleans_accepts_them():
    """A bool is refused only where no choice is a bool: ``Choice(False, True)`` takes both."""
    spec = Choice(False, True)
    assert spec.validate("p", True) is True and spec.validate("p", False) is False
    assert Choice("auto", True).validate("p", True) is True
