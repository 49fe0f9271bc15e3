"""Tests of the constructed-Gram and span-coordinate generators in twolayer.paper_a.data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from twolayer.paper_a import assumptions, data


@pytest.mark.parametrize("ratio", [0.5, 0.9, 1.0, 3.0])
def test_constructed_gram_sets_the_gap_exactly(ratio):
    ds = data.constructed_gram(8, 20, seed=2, gamma=0.5, ratio=ratio)
    a = assumptions.near_orthogonality(ds.X, 0.5)
    assert a.ratio == pytest.approx(ratio, rel=1e-9)
    if ratio != 1.0:  # exactly at the boundary rounding decides
        assert a.holds == (ratio < 1)
    norms = np.linalg.norm(ds.X, axis=1)
    assert norms.min() >= 1 - 1e-12 and norms.max() <= 1.2 + 1e-12
    G = ds.X @ ds.X.T
    off = np.abs(G[~np.eye(8, dtype=bool)])
    assert np.allclose(off, off[0])


def test_constructed_gram_deterministic_and_validated():
    a, b = data.constructed_gram(5, 9, 1, 0.5), data.constructed_gram(5, 9, 1, 0.5)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    with pytest.raises(ValueError):
        data.constructed_gram(5, 4, 1, 0.5)
    with pytest.raises(ValueError):
        data.constructed_gram(5, 9, 1, 0.5, ratio=1e6)  # Gram no longer positive definite


def test_gaussian_span_coordinates_law():
    # ||x||^2 ~ chi^2_d and <x_1, x_2> has variance d: check means over many draws (5 sigma)
    d, draws = 1000, 400
    sq, ip = [], []
    for s in range(draws):
        X = data.gaussian_span_coordinates(3, d, seed=s).X
        sq.append(X[0] @ X[0]), ip.append(X[0] @ X[1])
    assert abs(np.mean(sq) - d) < 5 * math.sqrt(2 * d / draws)
    assert abs(np.mean(ip)) < 5 * math.sqrt(d / draws)
    assert abs(np.var(ip) / d - 1) < 5 * math.sqrt(2 / draws)
    assert data.gaussian_span_coordinates(4, 3, seed=0).X.shape == (4, 3)


def test_noisy_xor_span_coordinates_match_direct_sampling():
    n, d = 6, 50
    tr = data.noisy_xor_span_coordinates(n, d, seed=0, beta=0.25)
    assert tr.X.shape == (n, n + 2)
    assert np.array_equal(tr.y, np.where(np.abs(tr.X[:, 0]) >= np.abs(tr.X[:, 1]), 1.0, -1.0))
    te = data.noisy_xor_test_coordinates(tr, 1000, seed=1)
    assert te.X.shape == (1000, n + 2)
    # E||x||^2 = d + ||mu||^2 (Bartlett rows have chi^2_{d-2} squared norms), 5 sigma
    sq = [
        np.sum(data.noisy_xor_span_coordinates(n, d, seed=s).X ** 2, axis=1).mean()
        for s in range(300)
    ]
    mu2 = d**0.5
    assert abs(np.mean(sq) - (d + mu2)) < 5 * math.sqrt((2 * d + 4 * mu2) / (300 * n))
    small = data.noisy_xor_span_coordinates(n, 3, seed=0)
    assert small.X.shape == (n, 3)
