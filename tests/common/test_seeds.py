"""Tests of twolayer.common.seeds."""

import numpy as np
import pytest

from twolayer.common import seeds


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


@pytest.mark.parametrize("bad", [-1, 1.5, None, True])
def test_bad_keys_rejected(bad):
    with pytest.raises((TypeError, ValueError)):
        seeds.derive(0, bad)
