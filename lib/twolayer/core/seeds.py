"""Seeds derived from the page's ``seed``: one independent stream per purpose.

``derive(seed, "fresh-test-set")`` or ``derive(seed, d, 2)`` gives an integer seed that
depends on every key, through NumPy's ``SeedSequence`` (strings hashed with CRC-32), so that
``derive(0, "test")`` and ``derive(1, "train")`` never share a stream the way ``seed + 1``
would for the next seed. Used by every chapter instead of hand-made seed arithmetic.
"""

from __future__ import annotations

import zlib

import numpy as np


def _key(k) -> int:
    if isinstance(k, str):
        return zlib.crc32(k.encode())
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"seed keys are integers or strings, got {k!r}")
    if k < 0:
        raise ValueError(f"seed keys are non-negative, got {k}")
    return int(k)


def derive(seed: int, *keys) -> int:
    """An integer seed (``< 2**32``) for ``seed`` and the purpose ``keys`` (integers >= 0 or
    strings, a string standing for its CRC-32).

    The keys are the entropy of NumPy's ``SeedSequence``, which drops trailing zero words and
    splits an integer into 32-bit words; so ``(s, k)`` and ``(s, k, 0)`` (or ``(s, k, "")``)
    give the same seed, and so do ``(s, 2**32)`` and ``(s, 0, 1)``. A purpose must therefore
    not be another purpose followed by zeros: name purposes by strings, or end them in a
    non-zero key. Changing this would change every seed of the book."""
    return int(np.random.SeedSequence([_key(seed), *map(_key, keys)]).generate_state(1)[0])


def rng(seed: int, *keys) -> np.random.Generator:
    """A NumPy generator for ``seed`` and the purpose ``keys``."""
    return np.random.default_rng(derive(seed, *keys))
