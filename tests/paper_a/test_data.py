"""Tests of twolayer.paper_a.data: determinism, shapes, labels and the stated distributions."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from twolayer.paper_a import data

GENERATORS = {
    "nearly_orthogonal": lambda n, d, seed: data.nearly_orthogonal(n, d, seed),
    "gaussian_mixture": lambda n, d, seed: data.gaussian_mixture(n, d, seed, label_noise=0.1),
    "noisy_xor": lambda n, d, seed: data.noisy_xor(n, d, seed),
}

Z_TAIL = 5.0  # every probabilistic check is a 5-sigma (or stated union-bound) interval


def binomial_ok(count: int, n: int, p: float, z: float = Z_TAIL) -> bool:
    """|count - n p| <= z sqrt(n p (1 - p)), the normal approximation with a z-sigma tail."""
    return abs(count - n * p) <= z * math.sqrt(n * p * (1 - p))


# --- determinism, shapes, labels ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_same_seed_same_bits(name):
    a, b = GENERATORS[name](30, 7, 3), GENERATORS[name](30, 7, 3)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_different_seed_different_data(name):
    a, b = GENERATORS[name](30, 7, 3), GENERATORS[name](30, 7, 4)
    assert not np.array_equal(a.X, b.X)


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_shapes_dtypes_and_labels(name):
    ds = GENERATORS[name](25, 6, 0)
    assert ds.X.shape == (25, 6) and ds.y.shape == (25,)
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.float64
    assert (ds.n, ds.d) == (25, 6)
    assert set(np.unique(ds.y)) <= {-1.0, 1.0}
    assert ds.info["model"] == name and ds.info["seed"] == 0
    assert (ds.info["n"], ds.info["d"]) == (25, 6)


def test_dataset_torch_conversion():
    ds = data.nearly_orthogonal(5, 3, 0)
    X, y = ds.torch()
    assert X.dtype == torch.float64 and y.dtype == torch.float64
    assert np.array_equal(X.numpy(), ds.X) and np.array_equal(y.numpy(), ds.y)
    X32, _ = ds.torch(dtype=torch.float32)
    assert X32.dtype == torch.float32


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_both_labels_occur_in_fair_proportion(name):
    n = 4000
    ds = GENERATORS[name](n, 4, 1)
    # nearly_orthogonal / gaussian_mixture: fair signs (label noise is symmetric, stays fair);
    # noisy_xor: P(y = +1) = 1/2 by the symmetry mu_1 <-> mu_2 of the distribution
    assert binomial_ok(int((ds.y > 0).sum()), n, 0.5)


# --- argument validation --------------------------------------------------------------------------

BAD_SIZES = [0, -1, 2.5, True, "3", None]
BAD_SEEDS = [-1, 1.5, True, "0", None]


@pytest.mark.parametrize("name", sorted(GENERATORS))
@pytest.mark.parametrize("bad", BAD_SIZES)
def test_bad_n_raises(name, bad):
    with pytest.raises(ValueError, match="n must be a positive integer"):
        GENERATORS[name](bad, 4, 0)


@pytest.mark.parametrize("name", sorted(GENERATORS))
@pytest.mark.parametrize("bad", BAD_SIZES)
def test_bad_d_raises(name, bad):
    with pytest.raises(ValueError, match="d must be a positive integer"):
        GENERATORS[name](10, bad, 0)


@pytest.mark.parametrize("name", sorted(GENERATORS))
@pytest.mark.parametrize("bad", BAD_SEEDS)
def test_bad_seed_raises(name, bad):
    with pytest.raises(ValueError, match="seed"):
        GENERATORS[name](10, 4, bad)


def test_numpy_integer_arguments_accepted():
    a = data.nearly_orthogonal(np.int64(5), np.int32(3), np.int64(2))
    b = data.nearly_orthogonal(5, 3, 2)
    assert np.array_equal(a.X, b.X)


@pytest.mark.parametrize("eta", [-0.1, 0.5, 0.7, float("nan")])
def test_gaussian_mixture_bad_label_noise_raises(eta):
    with pytest.raises(ValueError, match="label_noise"):
        data.gaussian_mixture(10, 4, 0, label_noise=eta)


def test_noisy_xor_needs_two_dimensions():
    with pytest.raises(ValueError, match=r"^noisy 2-XOR needs d >= 2$"):
        data.noisy_xor(10, 1, 0)


# --- Gaussian mixture -----------------------------------------------------------------------------


@pytest.mark.parametrize("d,beta", [(16, 0.3), (100, 0.25), (50, 0.5)])
def test_gaussian_mixture_mu_norm_is_d_to_the_beta(d, beta):
    ds = data.gaussian_mixture(5, d, 0, beta=beta)
    assert np.linalg.norm(ds.info["mu"]) == pytest.approx(d**beta, rel=1e-12)


def test_gaussian_mixture_default_and_record():
    """The documented default ``||mu|| = d^0.3`` (inside the paper's ``beta in (0, 1/2)``), and
    the dataset's record: its size, and ``mu`` stored as floats even when given as integers."""
    ds = data.gaussian_mixture(5, 64, 0)
    assert np.linalg.norm(ds.info["mu"]) == pytest.approx(64**0.3, rel=1e-12)
    assert (ds.info["n"], ds.info["d"], ds.info["seed"]) == (5, 64, 0)
    given = data.gaussian_mixture(4, 3, 1, mu=np.array([3, 0, -4]))
    assert given.info["mu"].dtype == np.float64 and given.X.shape == (4, 3)


def test_gaussian_mixture_mu_norm_override():
    ds = data.gaussian_mixture(5, 20, 0, beta=0.3, mu_norm=7.5)
    assert np.linalg.norm(ds.info["mu"]) == pytest.approx(7.5, rel=1e-12)


def test_gaussian_mixture_explicit_mu():
    mu = np.array([3.0, 0.0, -4.0])
    ds = data.gaussian_mixture(5, 3, 0, mu=mu)
    assert np.array_equal(ds.info["mu"], mu)
    with pytest.raises(ValueError, match="mu must have shape"):
        data.gaussian_mixture(5, 4, 0, mu=mu)


def test_gaussian_mixture_no_label_noise_keeps_clean_labels():
    ds = data.gaussian_mixture(500, 5, 2, label_noise=0.0)
    assert np.array_equal(ds.y, ds.info["clean_y"])


def test_gaussian_mixture_x_is_clean_label_times_mu_plus_standard_noise():
    n, d = 20000, 4
    ds = data.gaussian_mixture(n, d, 5, mu_norm=2.0, label_noise=0.2)
    mu, clean = ds.info["mu"], ds.info["clean_y"]
    Z = ds.X - clean[:, None] * mu[None, :]
    # Z ~ N(0, I): each coordinate's mean has sd 1/sqrt(n); each variance estimate has sd
    # sqrt(2/n). A 5-sigma interval per coordinate (d = 4 of them).
    assert np.all(np.abs(Z.mean(axis=0)) <= Z_TAIL / math.sqrt(n))
    assert np.all(np.abs(Z.var(axis=0) - 1) <= Z_TAIL * math.sqrt(2 / n))
    # and the noise is independent of the clean label: E[clean * Z] = 0
    assert np.all(np.abs((clean[:, None] * Z).mean(axis=0)) <= Z_TAIL / math.sqrt(n))


@pytest.mark.parametrize("eta", [0.05, 0.2, 0.4])
def test_gaussian_mixture_label_noise_flips_binomial_fraction(eta):
    n = 5000
    ds = data.gaussian_mixture(n, 3, 11, label_noise=eta)
    flips = int((ds.y != ds.info["clean_y"]).sum())
    # flips ~ Binomial(n, eta): within 5 standard deviations
    assert binomial_ok(flips, n, eta)
    assert ds.info["label_noise"] == eta


def test_gaussian_mixture_label_noise_does_not_change_x():
    a = data.gaussian_mixture(200, 5, 9, label_noise=0.0)
    b = data.gaussian_mixture(200, 5, 9, label_noise=0.3)
    assert np.array_equal(a.X, b.X)
    assert np.array_equal(a.info["clean_y"], b.info["clean_y"])


# --- noisy 2-XOR ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "d,mu_norm,beta", [(2, None, 0.25), (10, None, 0.25), (30, 3.0, 0.25), (64, None, 0.5)]
)
def test_noisy_xor_centers(d, mu_norm, beta):
    ds = data.noisy_xor(8, d, 1, mu_norm=mu_norm, beta=beta)
    mu1, mu2 = ds.info["mu1"], ds.info["mu2"]
    norm = d**beta if mu_norm is None else mu_norm
    assert abs(mu1 @ mu2) <= 1e-12 * norm**2
    assert np.linalg.norm(mu1) == pytest.approx(norm, rel=1e-12)
    assert np.linalg.norm(mu2) == pytest.approx(norm, rel=1e-12)


def test_noisy_xor_labels_follow_the_rule_and_are_even():
    """Paper A, Section 5: ``y = sign(|<mu_1, x>| - |<mu_2, x>|)``, stated here through the
    angle ``theta`` of x's projection on the plane of the centres, measured from ``mu_1``:
    ``y = +1`` exactly when ``theta`` is within 45 degrees of the ``mu_1`` axis (either way),
    i.e. when ``cos(2 theta) >= 0``."""
    ds = data.noisy_xor(300, 6, 4)
    mu1, mu2 = ds.info["mu1"], ds.info["mu2"]
    u = ds.X @ (mu1 / np.linalg.norm(mu1))
    v = ds.X @ (mu2 / np.linalg.norm(mu2))
    assert np.array_equal(ds.y, np.where(np.cos(2 * np.arctan2(v, u)) >= 0, 1.0, -1.0))
    assert 0 < (ds.y > 0).sum() < 300  # both labels occur
    # far apart centres (||mu|| = 40 against unit noise): the centre decides, +1 for +-mu_1
    # (|<mu_1, mu_1>| > 0 = |<mu_2, mu_1>|) and -1 for +-mu_2
    far = data.noisy_xor(300, 6, 4, mu_norm=40.0)
    assert np.array_equal(far.y, np.where(far.info["cluster"] < 2, 1.0, -1.0))


def _p_label_of_centre(r: float) -> float:
    """``P(|r + g1| >= |g2|)`` for independent standard normals (quadrature over ``g2``): the
    probability that a point drawn around a centre of norm ``r`` keeps that centre's label."""
    v = np.linspace(-12.0, 12.0, 24_001)
    cdf = np.vectorize(lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2))))
    # P(|r + g1| < |v|) = Phi(|v| - r) - Phi(-|v| - r)
    inside = cdf(np.abs(v) - r) - cdf(-np.abs(v) - r)
    density = np.exp(-(v**2) / 2) / math.sqrt(2 * math.pi)
    return float(np.sum(density * (1 - inside)) * (v[1] - v[0]))


def test_noisy_xor_defeats_every_linear_classifier():
    """Paper A, Section 5: y(-x) = y(x) for the distribution, so every homogeneous linear
    classifier has accuracy exactly 1/2: measured on a large sample, within 4.5 standard
    errors (0.5 / sqrt(n)), for the centres' directions and random ones."""
    n = 40_000
    ds = data.noisy_xor(n, 6, 7)
    mu1, mu2 = ds.info["mu1"], ds.info["mu2"]
    rng = np.random.default_rng(0)
    for w in [mu1, mu2, mu1 + mu2, mu1 - 0.3 * mu2, *rng.standard_normal((3, 6))]:
        acc = np.mean(np.sign(ds.X @ w) == ds.y)
        assert abs(acc - 0.5) < 4.5 * 0.5 / np.sqrt(n), acc
    # while the labels are the rule's, not the clusters' nor noise: a point keeps its centre's
    # label (+1 around +-mu_1, -1 around +-mu_2) with the probability the rule gives,
    # P(|r + g1| >= |g2|) at r = ||mu|| = 6^(1/4) (0.77 here, 1/2 for noise, 1 for clusters)
    keeps = np.where(ds.info["cluster"] < 2, 1.0, -1.0) == ds.y
    assert binomial_ok(int(keeps.sum()), n, _p_label_of_centre(6**0.25))


def test_noisy_xor_x_is_center_plus_standard_noise():
    n, d = 20000, 3
    ds = data.noisy_xor(n, d, 2, mu_norm=3.0)
    mu1, mu2 = ds.info["mu1"], ds.info["mu2"]
    centers = np.stack([mu1, -mu1, mu2, -mu2])
    idx = ds.info["cluster"]
    assert set(np.unique(idx)) == {0, 1, 2, 3}
    for k in range(4):  # each cluster has probability 1/4
        assert binomial_ok(int((idx == k).sum()), n, 0.25)
    Z = ds.X - centers[idx]
    assert np.all(np.abs(Z.mean(axis=0)) <= Z_TAIL / math.sqrt(n))
    assert np.all(np.abs(Z.var(axis=0) - 1) <= Z_TAIL * math.sqrt(2 / n))


# --- nearly orthogonal data and Sigma -------------------------------------------------------------


def covariance_tolerance(S: np.ndarray, n: int) -> np.ndarray:
    """Entrywise 5-sigma tolerance for the (known-mean) covariance estimate X^T X / n:
    Var(x_a x_b) = S_aa S_bb + S_ab^2 for a centred Gaussian (Isserlis)."""
    diag = np.diag(S)
    return Z_TAIL * np.sqrt((np.outer(diag, diag) + S**2) / n)


def test_nearly_orthogonal_identity_covariance():
    n, d = 20000, 3
    ds = data.nearly_orthogonal(n, d, 0)
    C = ds.X.T @ ds.X / n
    I = np.eye(d)
    assert np.all(np.abs(C - I) <= covariance_tolerance(I, n))


def test_nearly_orthogonal_diagonal_sigma_vector():
    n = 20000
    diag = np.array([0.25, 1.0, 4.0])
    ds = data.nearly_orthogonal(n, 3, 1, Sigma=diag)
    S = np.diag(diag)
    C = ds.X.T @ ds.X / n
    assert np.all(np.abs(C - S) <= covariance_tolerance(S, n))
    # the diagonal case is exactly a column rescaling of the identity case with the same seed
    base = data.nearly_orthogonal(n, 3, 1)
    assert np.allclose(ds.X, base.X * np.sqrt(diag), rtol=1e-15, atol=0)


def test_nearly_orthogonal_full_sigma_matrix():
    n = 20000
    S = np.array([[2.0, 0.8, 0.0], [0.8, 1.0, -0.3], [0.0, -0.3, 0.5]])
    ds = data.nearly_orthogonal(n, 3, 2, Sigma=S)
    C = ds.X.T @ ds.X / n
    assert np.all(np.abs(C - S) <= covariance_tolerance(S, n))


def test_sqrt_covariance_is_a_symmetric_square_root():
    S = np.array([[2.0, 0.8], [0.8, 1.0]])
    R = data.sqrt_covariance(S, 2)
    assert np.allclose(R, R.T, rtol=0, atol=1e-15)
    assert np.allclose(R @ R, S, rtol=0, atol=1e-14)
    assert data.sqrt_covariance(None, 2) is None
    assert np.array_equal(data.sqrt_covariance(np.array([4.0, 9.0]), 2), np.array([2.0, 3.0]))


PSD_MESSAGE = "^Sigma must be positive semidefinite$"


def assert_symmetric_root(R: np.ndarray, S: np.ndarray, atol: float) -> None:
    """R is a finite float64 symmetric square root of S: R = R^T and R @ R^T = S."""
    assert R.dtype == np.float64 and np.all(np.isfinite(R))
    assert np.allclose(R, R.T, rtol=0, atol=atol)
    assert np.allclose(R @ R.T, S, rtol=0, atol=atol)


def test_sqrt_covariance_zero_variances_allowed():
    """A diagonal covariance with zero variances is PSD (a degenerate Gaussian): it is accepted,
    its root is the vector of square roots (0 -> 0), and nearly_orthogonal's coordinates of zero
    variance are identically zero while the others are not."""
    r = data.sqrt_covariance(np.array([0.0, 4.0, 9.0]), 3)
    assert np.array_equal(r, np.array([0.0, 2.0, 3.0]))
    ds = data.nearly_orthogonal(5, 3, 0, Sigma=np.array([0.0, 1.0, 4.0]))
    assert np.all(ds.X[:, 0] == 0) and np.all(ds.X[:, 1:] != 0)
    msg = "a diagonal Sigma must be a non-negative vector of length d=3"
    with pytest.raises(ValueError, match="^" + re.escape(msg) + "$"):
        data.sqrt_covariance(np.array([1.0, -1e-300, 1.0]), 3)


def test_sqrt_covariance_singular_psd_matrices():
    """Singular PSD matrices are accepted and get a finite symmetric root R with R R^T = Sigma:
    the rank-one J = [[1, 1], [1, 1]] (J^2 = 2 J, so its root is J / sqrt 2, by hand), and
    diag(1, -1e-12), whose negative eigenvalue is rounding level (far inside the tolerance
    1e-10): its root is diag(1, 0), the root of the nearest PSD matrix, not a NaN."""
    J = np.ones((2, 2))
    R = data.sqrt_covariance(J, 2)
    assert_symmetric_root(R, J, 1e-15)
    assert np.allclose(R, J / math.sqrt(2), rtol=0, atol=1e-15)
    S = np.diag([1.0, -1e-12])
    R = data.sqrt_covariance(S, 2)
    assert_symmetric_root(R, S, 1e-11)
    assert np.allclose(R, np.diag([1.0, 0.0]), rtol=0, atol=1e-15)


def rotated(evals) -> np.ndarray:
    """Q diag(evals) Q^T for a fixed orthogonal Q (QR of a seeded Gaussian matrix)."""
    Q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((len(evals), len(evals))))
    S = Q @ np.diag(evals) @ Q.T
    return (S + S.T) / 2


@pytest.mark.parametrize(
    "S",
    [
        np.diag([1.0, -1e-10]),  # exactly at the tolerance -1e-10 * max(1, 1): accepted
        np.diag([0.5, -1e-10]),  # lambda_max < 1: the tolerance is still 1e-10
        np.diag([1e-3, -5e-11]),  # small matrix: 5e-11 < 1e-10, though 5e-11 > 1e-10 * 1e-3
        rotated([1e6, 1.0, -1e-6]),  # large matrix: 1e-6 < 1e-10 * 1e6 = 1e-4
    ],
)
def test_sqrt_covariance_accepts_negative_eigenvalues_within_the_tolerance(S):
    """A negative eigenvalue >= -1e-10 max(1, lambda_max) is read as rounding: the matrix is
    accepted and its root squares to Sigma up to that eigenvalue (clipped to 0)."""
    R = data.sqrt_covariance(S, len(S))
    lam_min = np.linalg.eigvalsh(S).min()
    assert_symmetric_root(R, S, 2 * abs(lam_min))


@pytest.mark.parametrize(
    "S",
    [
        np.diag([1.0, -1.5e-10]),  # beyond -1e-10 * max(1, 1)
        np.diag([1e-3, -1.5e-10]),  # beyond -1e-10 * max(1, 1e-3) = -1e-10
        rotated([1e6, 1.0, -2e-4]),  # beyond -1e-10 * 1e6 = -1e-4
        np.array([[1.0, 2.0], [2.0, 1.0]]),  # eigenvalues 3 and -1
    ],
)
def test_sqrt_covariance_rejects_negative_eigenvalues_beyond_the_tolerance(S):
    """A negative eigenvalue below -1e-10 max(1, lambda_max) makes Sigma not PSD: it raises
    with the whole message."""
    with pytest.raises(ValueError, match=PSD_MESSAGE):
        data.sqrt_covariance(S, len(S))


def test_sqrt_covariance_of_float32_and_integer_inputs_is_float64():
    """Sigma is read in float64 whatever its dtype: a float32 matrix, an integer matrix and an
    int8 vector get float64 roots accurate to float64 rounding (R R^T = Sigma to 1e-14), which a
    float32 or float16 computation (errors ~1e-7, ~1e-3) would miss."""
    S32 = np.array([[2.0, 0.5], [0.5, 1.0]], dtype=np.float32)  # exactly representable
    assert_symmetric_root(data.sqrt_covariance(S32, 2), S32.astype(np.float64), 1e-14)
    S_int = np.array([[2, 1], [1, 3]])
    assert_symmetric_root(data.sqrt_covariance(S_int, 2), S_int.astype(np.float64), 1e-14)
    v = np.array([2, 3, 5], dtype=np.int8)
    r = data.sqrt_covariance(v, 3)
    assert r.dtype == np.float64
    assert np.allclose(r**2, [2.0, 3.0, 5.0], rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    "Sigma",
    [
        np.array([1.0, -1.0, 1.0]),  # negative diagonal entry
        np.array([1.0, 1.0]),  # wrong length
        np.ones((3, 2)),  # wrong shape
        np.array([[1.0, 0.5, 0], [0, 1.0, 0], [0, 0, 1.0]]),  # not symmetric
        np.diag([1.0, -1.0, 1.0]),  # not PSD
    ],
)
def test_nearly_orthogonal_bad_sigma_raises(Sigma):
    with pytest.raises(ValueError, match="Sigma"):
        data.nearly_orthogonal(4, 3, 0, Sigma=Sigma)


Y_MESSAGE = "^" + re.escape("y must be a vector of n entries in {-1, +1}") + "$"


def test_nearly_orthogonal_given_labels():
    """Given labels come back unchanged; labels with a value outside {-1, +1} or of the wrong
    length raise with the whole documented message."""
    y = np.array([1.0, -1.0, -1.0, 1.0])
    ds = data.nearly_orthogonal(4, 3, 0, y=y)
    assert np.array_equal(ds.y, y)
    with pytest.raises(ValueError, match=Y_MESSAGE):
        data.nearly_orthogonal(4, 3, 0, y=np.array([1.0, 0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match=Y_MESSAGE):
        data.nearly_orthogonal(4, 3, 0, y=np.array([1.0, -1.0]))


def test_nearly_orthogonal_integer_labels_used_as_float64():
    """Labels given as lists of Python integers come back as the float64 vectors of the same
    signs (the module's contract: ``y`` is a float64 array in {-1, +1})."""
    for y in ([1, -1, -1, 1], [-1, -1, 1, 1]):
        ds = data.nearly_orthogonal(4, 3, 0, y=y)
        assert ds.y.dtype == np.float64
        assert np.array_equal(ds.y, np.array(y, dtype=np.float64))


def test_nearly_orthogonal_record_with_sigma_and_labels():
    """The record names the model and the arguments n, d, seed, and nothing else, also when a
    covariance (vector or matrix) and labels are given."""
    expected = {"model": "nearly_orthogonal", "n": 4, "d": 3, "seed": 7}
    for Sigma in (np.array([1.0, 2.0, 0.5]), np.diag([1.0, 2.0, 0.5])):
        ds = data.nearly_orthogonal(4, 3, 7, Sigma=Sigma, y=[1, -1, 1, 1])
        assert ds.info == expected


def test_nearly_orthogonal_norms_concentrate_like_lemma_33():
    # ||x|| - sqrt(d) is sub-Gaussian with variance proxy 1 and |E||x|| - sqrt(d)| <= 1/sqrt(d):
    # with n = 50 points a union bound at failure probability 1e-6 gives
    # max_i | ||x_i|| - sqrt(d) | <= 1/sqrt(d) + sqrt(2 log(2 n / 1e-6)).
    n, d = 50, 400
    ds = data.nearly_orthogonal(n, d, 3)
    dev = np.abs(np.linalg.norm(ds.X, axis=1) - math.sqrt(d)).max()
    assert dev <= 1 / math.sqrt(d) + math.sqrt(2 * math.log(2 * n / 1e-6))


# --- constructed_gram -----------------------------------------------------------------------------


def _measured_gap(X: np.ndarray, gamma: float) -> tuple[float, float]:
    """``(n / n_max, p)`` of Theorem 3.2's assumption measured on the rows of ``X`` by hand:
    ``p = max_{i != j} |<x_i, x_j>|``, ``n_max = gamma^3 R_min^4 / (3 p R_max^2)``."""
    G = X @ X.T
    n = G.shape[0]
    norms = np.sqrt(np.diag(G))
    p = np.abs(G[~np.eye(n, dtype=bool)]).max()
    n_max = gamma**3 * norms.min() ** 4 / (3 * p * norms.max() ** 2)
    return n / n_max, p


def test_constructed_gram_default_meets_the_assumption_with_gap_09():
    """Called without ``ratio``, the data meet Theorem 3.2's assumption (the module's promise)
    with ``n / n_max = 0.9``, the gap of the gradient-flow page, measured by hand on ``X``."""
    gamma = 0.5
    ds = data.constructed_gram(8, 12, seed=0, gamma=gamma)
    gap, _ = _measured_gap(ds.X, gamma)
    assert gap == pytest.approx(0.9, rel=1e-9)
    assert gap <= 1
    norms = np.linalg.norm(ds.X, axis=1)  # the default norm range [1, 1.2]
    assert norms.min() >= 1 - 1e-12 and norms.max() <= 1.2 + 1e-12


def test_constructed_gram_record():
    """The record names the model and its arguments, and ``c`` is the common absolute value of
    the off-diagonal inner products of the returned points (measured on ``X X^T``), which is
    ``ratio gamma^3 R_min^4 / (3 n R_max^2)`` with the measured norms (the docstring)."""
    n, d, seed, gamma, ratio = 6, 10, 5, 0.8, 0.7
    ds = data.constructed_gram(n, d, seed, gamma, ratio=ratio)
    assert set(ds.info) == {"model", "n", "d", "seed", "gamma", "ratio", "c"}
    assert ds.info["model"] == "constructed_gram"
    assert (ds.info["n"], ds.info["d"], ds.info["seed"]) == (n, d, seed)
    assert (ds.info["gamma"], ds.info["ratio"]) == (gamma, ratio)
    G = ds.X @ ds.X.T
    off = np.abs(G[~np.eye(n, dtype=bool)])
    assert np.allclose(off, ds.info["c"], rtol=1e-10, atol=0)
    norms = np.sqrt(np.diag(G))
    c = ratio * gamma**3 * norms.min() ** 4 / (3 * n * norms.max() ** 2)
    assert ds.info["c"] == pytest.approx(c, rel=1e-10)


def test_constructed_gram_equal_norms():
    """``norm_range = (r, r)`` is allowed (``lo <= hi``): every point then has norm ``r`` and
    ``c = ratio gamma^3 r^2 / (3 n)``, read off ``X X^T``; the gap is still ``ratio``."""
    n, r, gamma, ratio = 5, 1.5, 0.6, 0.8
    ds = data.constructed_gram(n, 7, 2, gamma, ratio=ratio, norm_range=(r, r))
    assert np.allclose(np.linalg.norm(ds.X, axis=1), r, rtol=1e-12, atol=0)
    gap, p = _measured_gap(ds.X, gamma)
    assert p == pytest.approx(ratio * gamma**3 * r**2 / (3 * n), rel=1e-10)
    assert gap == pytest.approx(ratio, rel=1e-9)


GRAM_Y_MESSAGE = "y must be a vector of n entries in {-1, +1}"


@pytest.mark.parametrize(
    "args,kwargs,message",
    [
        ((0, 4, 0, 0.5), {}, "n must be a positive integer, got 0"),
        ((3, 0, 0, 0.5), {}, "d must be a positive integer, got 0"),
        ((5, 4, 0, 0.5), {}, "constructed_gram needs d >= n, got d=4 < n=5"),
        ((3, 4, 0, 0.0), {}, "gamma must lie in (0, 1], got 0.0"),
        ((3, 4, 0, -0.1), {}, "gamma must lie in (0, 1], got -0.1"),
        ((3, 4, 0, 1.5), {}, "gamma must lie in (0, 1], got 1.5"),
        (
            (3, 4, 0, 0.5),
            {"norm_range": (0.0, 1.0)},
            "norm_range must satisfy 0 < lo <= hi, got (0.0, 1.0)",
        ),
        (
            (3, 4, 0, 0.5),
            {"norm_range": (1.2, 1.0)},
            "norm_range must satisfy 0 < lo <= hi, got (1.2, 1.0)",
        ),
        ((3, 4, 0, 0.5), {"ratio": 0.0}, "ratio must be positive, got 0.0"),
        ((3, 4, 0, 0.5), {"ratio": -1.0}, "ratio must be positive, got -1.0"),
        ((3, 4, 0, 0.5), {"y": np.array([1.0, -1.0])}, GRAM_Y_MESSAGE),
        ((3, 4, 0, 0.5), {"y": np.array([1.0, 0.0, -1.0])}, GRAM_Y_MESSAGE),
        ((3, 4, 0, 0.5), {"y": np.ones((3, 1))}, GRAM_Y_MESSAGE),
    ],
)
def test_constructed_gram_bad_arguments_raise(args, kwargs, message):
    """Each bad argument raises with the whole message, naming the parameter and its value (the
    bounds are ``0 < gamma <= 1``, ``0 < lo <= hi``, ``ratio > 0``, ``d >= n``)."""
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        data.constructed_gram(*args, **kwargs)


def test_constructed_gram_not_positive_definite_names_the_configuration():
    """At ``ratio = 1e6`` (``gamma = 1/2``, ``n = 5``, norms in ``[1, 1.2]``) the off-diagonal
    ``c >= 1e6 / (8 * 15 * 1.44) > 5000`` exceeds every ``||x_i|| ||x_j|| <= 1.44``, so a 2 x 2
    principal minor of the Gram matrix is negative whatever the signs: no such points exist and
    the message names the ratio and n."""
    msg = "the Gram matrix is not positive definite for ratio=1000000.0 (n=5)"
    with pytest.raises(ValueError, match="^" + re.escape(msg) + "$"):
        data.constructed_gram(5, 9, 1, 0.5, ratio=1e6)


def test_constructed_gram_given_labels_used_as_float64():
    """Given labels are returned as given (two different label vectors each come back
    unchanged, so they are not drawn), as float64 even when given as integers."""
    for y in ([1, -1, -1, 1, 1], [-1, -1, 1, 1, -1]):
        ds = data.constructed_gram(5, 6, 3, 0.5, y=y)
        assert ds.y.dtype == np.float64
        assert np.array_equal(ds.y, np.array(y, dtype=np.float64))


# --- points_with_gram -----------------------------------------------------------------------------


def _check_gram(X: np.ndarray, norms: np.ndarray, c: float, d: int, rtol: float) -> None:
    """``X`` has ``n`` rows in ``R^d`` with ``||x_i|| = norms_i`` and ``|<x_i, x_j>| = c``."""
    n = len(norms)
    assert X.shape == (n, d) and X.dtype == np.float64
    G = X @ X.T
    assert np.allclose(np.sqrt(np.diag(G)), norms, rtol=rtol, atol=0)
    assert np.allclose(np.abs(G[~np.eye(n, dtype=bool)]), c, rtol=rtol, atol=0)


@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e4])
def test_points_with_gram_is_scale_invariant(scale):
    """Positive definiteness does not depend on the scale: the same well-conditioned Gram
    matrix (norms ``(1, 1.2, 1.1)``, ``c = 0.1``: by Gershgorin every eigenvalue lies in
    ``[1 - 0.2, 1.44 + 0.2]``) scaled by ``scale^2`` gives points, at ``scale = 1e-4`` as at
    ``1e4``, whose Gram matrix (measured on ``X X^T``) is the requested one."""
    norms = scale * np.array([1.0, 1.2, 1.1])
    c = 0.1 * scale**2
    X = data.points_with_gram(norms, c, 5, np.random.default_rng(0))
    _check_gram(X, norms, c, 5, rtol=1e-10)


@pytest.mark.parametrize(
    "norms",
    [
        np.array([1.1, 1.3, 0.7], dtype=np.float32),  # float32 squares are off by ~1e-8
        np.array([2**32, 2**32 + 2], dtype=np.int64),  # int64 squares would overflow
    ],
)
def test_points_with_gram_norms_of_any_real_dtype(norms):
    """Norms given as float32 or as (large) integers are the exact norms of the points: the
    row norms of ``X`` equal the given values, read as float64, to 1e-12 relative, and the
    off-diagonal inner products are ``+-c`` (``c`` a tenth of the smallest squared norm)."""
    exact = norms.astype(np.float64)
    c = 0.1 * exact.min() ** 2
    X = data.points_with_gram(norms, c, 4, np.random.default_rng(1))
    _check_gram(X, exact, c, 4, rtol=1e-12)


@pytest.mark.parametrize(
    "norms,c",
    [
        ([0.0], 0.0),  # the zero vector: Gram matrix [[0]]
        ([0.0, 0.0], 0.0),  # two zero vectors: the zero Gram matrix
        ([1.0, 1.0], 1.0),  # |<x_1, x_2>| = ||x_1|| ||x_2||: singular, eigenvalues 0 and 2
        ([1.0, 1.0], 2.0),  # |<x_1, x_2>| > ||x_1|| ||x_2||: an eigenvalue -1
    ],
)
def test_points_with_gram_not_positive_definite_raises_with_default_what(norms, c):
    """A Gram matrix that is only semi-definite (zero vectors, or Cauchy-Schwarz with equality)
    or indefinite (Cauchy-Schwarz violated), whatever the signs, is not positive definite: it
    raises (the docstring), and without ``what`` the message names nothing after "for"."""
    msg = "the Gram matrix is not positive definite for "
    with pytest.raises(ValueError, match="^" + re.escape(msg) + "$"):
        data.points_with_gram(np.array(norms), c, 3, np.random.default_rng(2))


# --- gaussian_span_coordinates --------------------------------------------------------------------


@pytest.mark.parametrize("n,d", [(5, 3), (4, 4)])
def test_gaussian_span_coordinates_at_d_up_to_n_is_the_sample_itself(n, d):
    """With ``d <= n`` (``d = n`` included) ``R^d`` itself is the subspace: the coordinates are
    the points, bit for bit the ``N(0, I_d)`` sample and fair labels that ``nearly_orthogonal``
    (``Sigma = I``) draws from the same seed, not a triangular Bartlett factor."""
    ds = data.gaussian_span_coordinates(n, d, seed=3)
    ref = data.nearly_orthogonal(n, d, 3)
    assert ds.X.shape == (n, d)
    assert np.array_equal(ds.X, ref.X) and np.array_equal(ds.y, ref.y)


@pytest.mark.parametrize("n,d", [(4, 2), (3, 10**12)])
def test_gaussian_span_coordinates_record(n, d):
    """The record names the model and the arguments n, d, seed, and nothing else, for small
    ``d`` as for an astronomically large one (whose ``X`` has only ``n`` columns)."""
    ds = data.gaussian_span_coordinates(n, d, seed=9)
    assert ds.info == {"model": "gaussian_span_coordinates", "n": n, "d": d, "seed": 9}
    assert ds.X.shape == (n, min(n, d))


def test_gaussian_span_coordinates_given_labels_used_as_float64():
    """Given labels are returned as given (two different label vectors each come back
    unchanged, so they are not drawn), as float64 even when given as Python integers."""
    for y in ([1, -1, -1, 1], [-1, -1, 1, 1]):
        for d in (2, 50):  # both branches: the sample itself and Bartlett coordinates
            ds = data.gaussian_span_coordinates(4, d, seed=1, y=y)
            assert ds.y.dtype == np.float64
            assert np.array_equal(ds.y, np.array(y, dtype=np.float64))


@pytest.mark.parametrize(
    "n,d,y,message",
    [
        (0, 4, None, "n must be a positive integer, got 0"),
        (3, 0, None, "d must be a positive integer, got 0"),
        (3, 4, np.array([1.0, -1.0]), Y_MESSAGE),  # right values, wrong length
        (3, 4, np.array([1.0, 0.0, -1.0]), Y_MESSAGE),  # right length, a value not +-1
        (3, 4, np.ones((3, 1)), Y_MESSAGE),  # right values, a column instead of a vector
    ],
    ids=["n=0", "d=0", "y-short", "y-value-0", "y-column"],
)
def test_gaussian_span_coordinates_bad_arguments_raise(n, d, y, message):
    """Each bad argument raises with the whole message: a bad size names the parameter and its
    value; labels fail when their shape is not ``(n,)`` or a value is not in ``{-1, +1}``."""
    pattern = message if message == Y_MESSAGE else "^" + re.escape(message) + "$"
    with pytest.raises(ValueError, match=pattern):
        data.gaussian_span_coordinates(n, d, seed=0, y=y)


# --- noisy_xor_span_coordinates -------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,d,message",
    [
        (0, 4, "n must be a positive integer, got 0"),
        (3, 0, "d must be a positive integer, got 0"),
        (3, 1, "noisy 2-XOR needs d >= 2"),  # a positive integer, but XOR needs mu_1, mu_2
    ],
    ids=["n=0", "d=0", "d=1"],
)
def test_noisy_xor_span_coordinates_bad_arguments_raise(n, d, message):
    """Each bad size raises with the whole message, naming the parameter and its value; ``d = 1``
    passes that check but leaves no room for the two orthogonal centres."""
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        data.noisy_xor_span_coordinates(n, d, seed=0)


def test_noisy_xor_span_coordinates_mu_norm_override():
    """A given ``mu_norm`` replaces ``d^beta``: it is recorded, and with the same seed (the same
    clusters and noise) two norms differ only in the first two coordinates, by the difference
    of the norms along the cluster's centre direction ``+-e_1, +-e_2``."""
    n, d = 40, 10
    a = data.noisy_xor_span_coordinates(n, d, seed=5, mu_norm=5.0)
    b = data.noisy_xor_span_coordinates(n, d, seed=5, mu_norm=2.0)
    assert a.info["mu_norm"] == 5.0 and b.info["mu_norm"] == 2.0
    assert np.array_equal(a.info["cluster"], b.info["cluster"])
    assert set(a.info["cluster"]) == {0, 1, 2, 3}  # every centre occurs (n = 40)
    directions = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    np.testing.assert_allclose(
        a.X[:, :2] - b.X[:, :2], 3.0 * directions[a.info["cluster"]], rtol=0, atol=1e-12
    )
    assert np.array_equal(a.X[:, 2:], b.X[:, 2:])
    # the default is d^beta: given explicitly it reproduces the default draw bit for bit
    default = data.noisy_xor_span_coordinates(n, d, seed=5, beta=0.5)
    assert default.info["mu_norm"] == pytest.approx(math.sqrt(10))
    explicit = data.noisy_xor_span_coordinates(n, d, seed=5, mu_norm=10**0.5, beta=0.5)
    assert np.array_equal(default.X, explicit.X)


@pytest.mark.parametrize("extra", [0, 1])
def test_noisy_xor_span_coordinates_record_and_noise_coordinates(extra):
    """The record names the model, the arguments and the centres drawn; the ``d - 2`` noise
    coordinates are the ``N(0, I)`` sample itself while ``d - 2 <= n`` (``d - 2 = n``: a full
    square block, nothing forces zeros above its diagonal) and Bartlett coordinates beyond
    (``d - 2 = n + 1``: ``n`` columns, lower triangular with a positive diagonal, since each
    point adds one direction to the span of the previous ones)."""
    n = 5
    d = n + 2 + extra
    ds = data.noisy_xor_span_coordinates(n, d, seed=4, mu_norm=40.0)
    assert set(ds.info) == {"model", "n", "d", "seed", "mu_norm", "cluster"}
    assert ds.info["model"] == "noisy_xor_span_coordinates"
    assert (ds.info["n"], ds.info["d"], ds.info["seed"], ds.info["mu_norm"]) == (n, d, 4, 40.0)
    # the recorded centre is the one each point sits around (||mu|| = 40 against unit noise):
    # +-e_1 -> 0, 1 and +-e_2 -> 2, 3, read from the sign of the larger head coordinate
    head = ds.X[:, :2]
    axis = np.argmax(np.abs(head), axis=1)
    sign = head[np.arange(n), axis] < 0
    assert np.array_equal(ds.info["cluster"], 2 * axis + sign)
    tail = ds.X[:, 2:]
    assert tail.shape == (n, n)
    if extra == 0:
        assert np.all(tail[np.triu_indices(n, 1)] != 0)
    else:
        assert np.all(tail[np.triu_indices(n, 1)] == 0) and np.all(np.diag(tail) > 0)


def _tie_norm(noise: np.ndarray, cluster: np.ndarray) -> tuple[float, int]:
    """A centre norm ``m > 0`` and a point ``i`` around ``+m e_1`` or ``+m e_2`` (cluster 0 or 2)
    whose first two coordinates, ``(m + z_1, z_2)`` or ``(z_1, m + z_2)``, have exactly equal
    magnitudes in float64: ``m = |z_other| - z_own`` or a float neighbour of it, kept only when
    the rounded sum hits ``|z_other|`` exactly (about half the points allow it)."""
    for i in np.flatnonzero((cluster == 0) | (cluster == 2)):
        own, other = noise[i] if cluster[i] == 0 else noise[i][::-1]
        m = abs(other) - own
        for _ in range(3):
            if m > 0 and m + own == abs(other):
                return float(m), int(i)
            m = np.nextafter(m, np.inf if m + own < abs(other) else -np.inf)
    raise AssertionError("no exact tie found")


@pytest.mark.parametrize("which", ["train", "test"])
def test_noisy_xor_coordinates_tie_is_labelled_plus_one(which):
    """On the boundary ``|<mu_1, x>| = |<mu_2, x>|`` the label is ``+1``, as in
    :func:`noisy_xor` (``y = +1`` exactly when ``cos 2 theta >= 0``). The same seed gives the
    same clusters and noise for every ``mu_norm``; with ``mu_norm = 0`` the head coordinates are
    the noise itself, from which a norm making a point an exact tie is read off."""

    def sample(mu_norm):
        train = data.noisy_xor_span_coordinates(60, 6, seed=2, mu_norm=mu_norm)
        return train if which == "train" else data.noisy_xor_test_coordinates(train, 60, seed=3)

    pure = sample(0.0)
    m, i = _tie_norm(pure.X[:, :2], pure.info["cluster"])
    ds = sample(m)
    assert abs(ds.X[i, 0]) == abs(ds.X[i, 1])  # the tie, exactly
    assert ds.y[i] == 1.0


# --- noisy_xor_test_coordinates -------------------------------------------------------------------


def test_noisy_xor_test_coordinates_record():
    """The record names the model, ``n_test``, ``d`` (here ``d = 5 <= n + 2``: the coordinates are
    ``R^5`` itself, so the width of ``X`` and the training ``d`` agree), the seed and the centres
    drawn, which the far-apart points (``||mu|| = 40``) sit around."""
    train = data.noisy_xor_span_coordinates(6, 5, seed=1, mu_norm=40.0)
    te = data.noisy_xor_test_coordinates(train, 12, seed=8)
    assert set(te.info) == {"model", "n", "d", "seed", "cluster"}
    assert te.info["model"] == "noisy_xor_test_coordinates"
    assert (te.info["n"], te.info["d"], te.info["seed"]) == (12, 5, 8)
    assert te.X.shape == (12, 5)
    head = te.X[:, :2]
    axis = np.argmax(np.abs(head), axis=1)
    sign = head[np.arange(12), axis] < 0
    assert np.array_equal(te.info["cluster"], 2 * axis + sign)


def test_noisy_xor_test_coordinates_bad_n_test_raises():
    """A bad ``n_test`` raises with the whole message, naming the parameter and its value."""
    train = data.noisy_xor_span_coordinates(3, 4, seed=0)
    message = "n_test must be a positive integer, got 0"
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        data.noisy_xor_test_coordinates(train, 0, seed=0)


def test_noisy_xor_test_coordinates_x_is_centre_plus_standard_noise():
    """``x = c + xi``: with ``mu_norm = 0`` the head is the noise alone, standard normal like
    every other coordinate (mean and variance within 5 sigma); with the same seeds a norm of 3
    moves each point by ``3`` times its centre's direction and leaves the rest unchanged."""
    n_test = 20_000
    tests = {
        m: data.noisy_xor_test_coordinates(
            data.noisy_xor_span_coordinates(4, 6, seed=0, mu_norm=m), n_test, seed=5
        )
        for m in (0.0, 3.0)
    }
    Z = tests[0.0].X
    assert np.all(np.abs(Z.mean(axis=0)) <= Z_TAIL / math.sqrt(n_test))
    assert np.all(np.abs(Z.var(axis=0) - 1) <= Z_TAIL * math.sqrt(2 / n_test))
    idx = tests[3.0].info["cluster"]
    assert np.array_equal(idx, tests[0.0].info["cluster"])
    directions = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    np.testing.assert_allclose(
        tests[3.0].X[:, :2] - Z[:, :2], 3.0 * directions[idx], rtol=0, atol=1e-12
    )
    assert np.array_equal(tests[3.0].X[:, 2:], Z[:, 2:])
