"""Tests of twolayer.core.seeds."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twolayer.core import seeds


def test_derive_is_deterministic_and_depends_on_every_key():
    assert seeds.derive(0, "test") == seeds.derive(0, "test")
    values = {seeds.derive(s, k) for s in range(5) for k in ("train", "test", 3)}
    assert len(values) == 15  # no two purposes share a seed
    assert seeds.derive(0, 1) != seeds.derive(1, 0)
    assert 0 <= seeds.derive(7, "x") < 2**32


def test_next_seed_does_not_share_a_stream():
    # the failure mode of `seed + 1`: seed 0's "fresh" data would be seed 1's main data
    a = seeds.rng(0, "fresh").standard_normal(5)
    b = seeds.rng(1, "main").standard_normal(5)
    assert not np.allclose(a, b)


def test_rng_is_one_reproducible_stream_per_seed_and_purpose():
    """``rng(seed, *keys)`` is the generator of ``derive(seed, *keys)``: the same seed and
    purpose give the same stream (a rerun reproduces a page), another purpose of the same seed
    or the same purpose of another seed another stream; and the streams are independent:
    20 000 normal draws of two streams have a correlation within 5 standard errors
    (``1/sqrt(N)``) of 0, while one stream drawn twice has correlation 1."""
    N = 20_000
    a = seeds.rng(3, "train", 2).standard_normal(N)
    np.testing.assert_array_equal(seeds.rng(3, "train", 2).standard_normal(N), a)
    # the documented meaning: a generator seeded by derive's integer for this seed and purpose
    np.testing.assert_array_equal(
        np.random.default_rng(seeds.derive(3, "train", 2)).standard_normal(N), a
    )
    others = {
        "another purpose": seeds.rng(3, "test", 2),
        "another key": seeds.rng(3, "train", 5),
        "a shorter purpose": seeds.rng(3, "train"),
        "another seed": seeds.rng(4, "train", 2),
    }
    for what, g in others.items():
        b = g.standard_normal(N)
        assert abs(np.corrcoef(a, b)[0, 1]) < 5 / math.sqrt(N), what


@pytest.mark.parametrize("bad", [-1, 1.5, None, True])
def test_bad_keys_rejected(bad):
    with pytest.raises((TypeError, ValueError)):
        seeds.derive(0, bad)


# --- properties (hypothesis) ----------------------------------------------------------------------

#: deterministic and fast: the same examples on every run, no deadline on a shared machine
FAST = settings(max_examples=60, deadline=None, derandomize=True)

seeds_ = st.integers(0, 2**32 - 1)  # a page's seed (the contract's range)
# one key: a purpose string or a non-negative integer below 2**32 (a dimension, an index); not
# the empty string, whose CRC-32 is 0: it is the key 0 (see the xfail test at the end)
keys = st.one_of(st.text(min_size=1, max_size=12), st.integers(0, 2**32 - 1))


@FAST
@given(seeds_, st.lists(keys, max_size=4))
def test_derive_is_deterministic_and_in_range(seed, ks):
    s = seeds.derive(seed, *ks)
    assert type(s) is int and 0 <= s < 2**32
    assert seeds.derive(seed, *ks) == s
    # the same integers as NumPy integers give the same seed
    as_numpy = [np.uint64(k) if isinstance(k, int) else k for k in ks]
    assert seeds.derive(np.int64(seed), *as_numpy) == s


@settings(max_examples=5, deadline=None, derandomize=True)
@given(seeds_, st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_distinct_key_tuples_of_one_length_give_distinct_seeds(seed, length, draw_seed):
    """Thousands of distinct purposes with the same number of keys (short strings, small and
    large integers, so many tuples differ in one key or in order) give distinct seeds. A
    collision of 32-bit seeds by chance has probability about 3000**2 / 2**33 = 1e-3 per
    example, and the examples are fixed (derandomized): no flaky test."""
    rng = np.random.default_rng(draw_seed)
    letters = list("abcxyz-_ 019")

    def key():
        u = rng.random()
        if u < 0.25:
            return int(rng.integers(0, 20))
        if u < 0.5:
            return int(rng.integers(0, 2**32))
        return "".join(rng.choice(letters, size=int(rng.integers(1, 6))))

    tuples = {tuple(key() for _ in range(length)) for _ in range(3000)}
    assert len(tuples) > 1000
    # a string is its CRC-32 by design ("" is 0, an alias of the key 0: not drawn), so
    # distinct strings with equal CRC-32 would collide: not drawn at this size
    assert len({seeds.derive(seed, *t) for t in tuples}) == len(tuples)


@FAST
@given(seeds_, seeds_, st.lists(keys, max_size=3))
def test_another_seed_gives_another_stream(a, b, ks):
    if a != b:
        assert seeds.derive(a, *ks) != seeds.derive(b, *ks)


@FAST
@given(seeds_, st.lists(keys, min_size=2, max_size=4, unique=True), st.data())
def test_the_order_of_the_keys_matters(seed, ks, data):
    shuffled = data.draw(st.permutations(ks).filter(lambda p: p != ks), label="reordered")
    assert seeds.derive(seed, *ks) != seeds.derive(seed, *shuffled)


@FAST
@given(seeds_, st.integers(0, 10**6), st.lists(keys, max_size=2))
def test_a_number_and_its_text_are_different_keys(seed, k, rest):
    assert seeds.derive(seed, k, *rest) != seeds.derive(seed, str(k), *rest)


@FAST
@given(
    seeds_,
    st.one_of(
        st.integers(max_value=-1),
        st.floats(),
        st.booleans(),
        st.none(),
        st.binary(),
        st.lists(st.integers(0, 5), max_size=2),
    ),
    st.integers(0, 2),
)
def test_a_bad_key_is_rejected_wherever_it_stands(seed, bad, where):
    ks = ["a", 1]
    ks.insert(where, bad)
    with pytest.raises((TypeError, ValueError)):
        seeds.derive(seed, *ks)


@FAST
@given(
    seeds_,
    st.lists(st.one_of(st.text(min_size=1, max_size=4), st.integers(0, 2**32 - 1)), max_size=3),
    st.one_of(st.text(min_size=1, max_size=4), st.integers(1, 2**32 - 1)),
)
def test_a_longer_key_tuple_gives_another_seed(seed, ks, extra):
    """Outside the documented aliases (a trailing 0 or empty string, a key of 2**32 or more)
    a longer purpose gives another seed."""
    from zlib import crc32

    if isinstance(extra, str) and crc32(extra.encode()) == 0:
        return
    assert seeds.derive(seed, *ks) != seeds.derive(seed, *ks, extra)


@pytest.mark.parametrize(
    "a, b",
    [
        ((0,), (0, 0)),  # hypothesis' minimal example: a trailing key 0
        ((7, "x"), (7, "x", 0)),
        ((0, 2**32), (0, 0, 1)),  # an integer key >= 2**32 is two 32-bit words
        ((0, ""), (0, 0)),  # the empty string's CRC-32 is 0
    ],
    ids=["trailing-zero", "trailing-zero-after-a-string", "big-integer", "empty-string"],
)
def test_documented_aliases(a, b):
    """The aliases ``derive``'s docstring warns of (NumPy's SeedSequence drops trailing zero
    words of its entropy and splits big integers into 32-bit words): stated, so that a
    change of ``derive`` (which would change every seed of the book) is seen."""
    assert seeds.derive(*a) == seeds.derive(*b)


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (1.5, TypeError, "seed keys are integers or strings, got 1.5"),
        (True, TypeError, "seed keys are integers or strings, got True"),
        (None, TypeError, "seed keys are integers or strings, got None"),
        (-3, ValueError, "seed keys are non-negative, got -3"),
    ],
)
def test_a_bad_key_gets_a_message_naming_it(bad, error, message):
    with pytest.raises(error, match=rf"^{re.escape(message)}$"):
        seeds.derive(0, "purpose", bad)
