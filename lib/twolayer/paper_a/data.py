"""Seeded data models of Paper A.

Every generator takes an explicit ``seed`` (never the clock) and returns a :class:`Dataset`
with float64 NumPy arrays ``X`` (n x d) and ``y`` (n,) in ``{-1, +1}``; the same arguments give
the same bits on the same machine.

* :func:`nearly_orthogonal` -- ``x_i = Sigma^{1/2} xbar_i``, ``xbar_i ~ N(0, I_d)``
  (Lemma 3.3); labels are independent fair signs unless given.
* :func:`gaussian_mixture` -- Section 5: ``y ~ Unif{+-1}``, ``x = y mu + z``, ``z ~ N(0, I_d)``,
  ``||mu|| = d^beta``, optional label noise (labels flipped with probability ``eta``).
* :func:`noisy_xor` -- noisy 2-XOR: ``x = c + xi``, ``c ~ Unif{+-mu_1, +-mu_2}``,
  ``mu_1 perp mu_2``, ``||mu_1|| = ||mu_2||``, ``xi ~ N(0, I_d)``,
  ``y = sign(|<mu_1, x>| - |<mu_2, x>|)``.
* :func:`constructed_gram` -- data with a prescribed Gram matrix meeting Theorem 3.2's assumption
  at any ``d >= n`` (``n / n_max`` set exactly by ``ratio``).
* :func:`gaussian_span_coordinates`, :func:`noisy_xor_span_coordinates`,
  :func:`noisy_xor_test_coordinates` -- Gaussian and noisy-XOR samples given by their exact
  coordinates in a low-dimensional subspace containing them (Bartlett decomposition), so that
  ``d`` may be huge at no cost.

Chapters: ``paper_a/setting``, ``paper_a/gradient_flow``, ``paper_a/one_step_low_rank`` (and the
others through the library's runners).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Rows:
    """Mixin for data held as the rows of ``X``: ``n`` samples in dimension ``d``."""

    X: np.ndarray

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])


@dataclass
class Dataset(Rows):
    X: np.ndarray
    y: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)

    def torch(self, dtype=None, device=None):
        """``(X, y)`` as torch tensors (float64 on CPU unless told)."""
        import torch

        dtype = dtype or torch.float64
        return (
            torch.as_tensor(self.X, dtype=dtype, device=device),
            torch.as_tensor(self.y, dtype=dtype, device=device),
        )


def _rng(seed: int) -> np.random.Generator:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng(int(seed))


def _check_pos_int(name: str, v: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


def random_signs(n: int, rng: np.random.Generator) -> np.ndarray:
    return np.where(rng.random(n) < 0.5, -1.0, 1.0)


def sqrt_covariance(Sigma: np.ndarray | None, d: int) -> np.ndarray | None:
    """``Sigma^{1/2}``: a vector is read as a diagonal (returned as a vector of square roots);
    a symmetric PSD matrix gets its symmetric square root. ``None`` means the identity."""
    if Sigma is None:
        return None
    S = np.asarray(Sigma, dtype=np.float64)
    if S.ndim == 1:
        if S.shape != (d,) or np.any(S < 0):
            raise ValueError(f"a diagonal Sigma must be a non-negative vector of length d={d}")
        return np.sqrt(S)
    if S.shape != (d, d) or not np.allclose(S, S.T):
        raise ValueError(f"Sigma must be a symmetric {d}x{d} matrix")
    evals, evecs = np.linalg.eigh(S)
    if evals.min() < -1e-10 * max(1.0, evals.max()):
        raise ValueError("Sigma must be positive semidefinite")
    return (evecs * np.sqrt(np.clip(evals, 0, None))) @ evecs.T


def nearly_orthogonal(
    n: int, d: int, seed: int, Sigma: np.ndarray | None = None, *, y: np.ndarray | None = None
) -> Dataset:
    """``x_i = Sigma^{1/2} xbar_i`` with ``xbar_i ~ N(0, I_d)`` (Paper A, Lemma 3.3).

    With ``tr Sigma = d`` and ``||Sigma||_2 = O(1)`` the lemma gives, w.h.p.,
    ``||x_i|| = sqrt(d) +- O(sqrt(log n))`` and ``|<x_i, x_j>| = O(sqrt(d log n))``.
    """
    n, d = _check_pos_int("n", n), _check_pos_int("d", d)
    rng = _rng(seed)
    Xbar = rng.standard_normal((n, d))
    root = sqrt_covariance(Sigma, d)
    if root is None:
        X = Xbar
    elif root.ndim == 1:
        X = Xbar * root
    else:
        X = Xbar @ root  # root is symmetric
    labels = random_signs(n, rng) if y is None else np.asarray(y, dtype=np.float64)
    if labels.shape != (n,) or not np.all(np.abs(labels) == 1):
        raise ValueError("y must be a vector of n entries in {-1, +1}")
    return Dataset(X, labels, {"model": "nearly_orthogonal", "n": n, "d": d, "seed": seed})


def unit_vector(d: int, rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(d)
    return v / np.linalg.norm(v)


def gaussian_mixture(
    n: int,
    d: int,
    seed: int,
    beta: float = 0.3,
    *,
    mu_norm: float | None = None,
    label_noise: float = 0.0,
    mu: np.ndarray | None = None,
) -> Dataset:
    """Paper A, Section 5: ``y ~ Unif{+-1}``, ``x = y mu + z``, ``z ~ N(0, I_d)``.

    ``||mu|| = d**beta`` unless ``mu_norm`` or ``mu`` is given (the direction of ``mu`` is drawn
    uniformly from the sphere with the same seed). With ``label_noise = eta`` each observed label
    is flipped independently with probability ``eta`` after ``x`` is drawn, so the Bayes
    classifier ``sign <mu, x>`` keeps its error plus ``eta``.
    """
    n, d = _check_pos_int("n", n), _check_pos_int("d", d)
    if not (0.0 <= label_noise < 0.5):
        raise ValueError(f"label_noise must lie in [0, 0.5), got {label_noise}")
    rng = _rng(seed)
    if mu is None:
        norm = float(d) ** float(beta) if mu_norm is None else float(mu_norm)
        mu = norm * unit_vector(d, rng)
    else:
        mu = np.asarray(mu, dtype=np.float64)
        if mu.shape != (d,):
            raise ValueError(f"mu must have shape ({d},)")
    clean = random_signs(n, rng)
    X = clean[:, None] * mu[None, :] + rng.standard_normal((n, d))
    flip = rng.random(n) < label_noise
    y = np.where(flip, -clean, clean)
    return Dataset(
        X,
        y,
        {
            "model": "gaussian_mixture",
            "n": n,
            "d": d,
            "seed": seed,
            "mu": mu,
            "clean_y": clean,
            "label_noise": label_noise,
        },
    )


def noisy_xor(
    n: int, d: int, seed: int, mu_norm: float | None = None, *, beta: float = 0.25
) -> Dataset:
    """Noisy 2-XOR (Paper A, Section 5): ``x = c + xi`` with ``c`` uniform on
    ``{+-mu_1, +-mu_2}``, ``y = sign(|<mu_1, x>| - |<mu_2, x>|)``.

    ``mu_1, mu_2`` are orthonormal directions (drawn from the seed, Gram-Schmidt) scaled to
    ``mu_norm`` (default ``d**beta``). Every homogeneous linear classifier has test error exactly
    1/2 on this distribution, because ``y(-x) = y(x)``.
    """
    n, d = _check_pos_int("n", n), _check_pos_int("d", d)
    if d < 2:
        raise ValueError("noisy 2-XOR needs d >= 2")
    rng = _rng(seed)
    norm = float(d) ** float(beta) if mu_norm is None else float(mu_norm)
    q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    mu1, mu2 = norm * q[:, 0], norm * q[:, 1]
    centers = np.stack([mu1, -mu1, mu2, -mu2])
    idx = rng.integers(0, 4, size=n)
    X = centers[idx] + rng.standard_normal((n, d))
    y = np.where(np.abs(X @ mu1) >= np.abs(X @ mu2), 1.0, -1.0)
    return Dataset(
        X,
        y,
        {
            "model": "noisy_xor",
            "n": n,
            "d": d,
            "seed": seed,
            "mu1": mu1,
            "mu2": mu2,
            "cluster": idx,
        },
    )


# --- data with a prescribed Gram matrix, and exact low-dimensional coordinates ------------------


def points_with_gram(norms: np.ndarray, c: float, d: int, rng, *, what: str = "") -> np.ndarray:
    """``n`` points in ``R^d`` (``d >= n``) with norms ``norms`` and every off-diagonal inner
    product ``+-c`` (random signs from ``rng``): a symmetric square root of that Gram matrix
    placed in ``R^d`` by a random orthonormal frame. Raises when the Gram matrix is not
    positive definite (``what`` names the configuration in the message)."""
    n = len(norms)
    S = np.triu(random_signs(n * n, rng).reshape(n, n), 1)
    G = c * (S + S.T) + np.diag(np.asarray(norms, dtype=np.float64) ** 2)
    evals, evecs = np.linalg.eigh(G)
    if evals.min() <= 1e-12 * evals.max():
        raise ValueError(f"the Gram matrix is not positive definite for {what}")
    root = (evecs * np.sqrt(evals)) @ evecs.T  # symmetric square root: root @ root.T = G
    frame, _ = np.linalg.qr(rng.standard_normal((d, n)))
    return root @ frame.T


def constructed_gram(
    n: int,
    d: int,
    seed: int,
    gamma: float,
    *,
    ratio: float = 0.9,
    norm_range: tuple[float, float] = (1.0, 1.2),
    y: np.ndarray | None = None,
) -> Dataset:
    """Nearly-orthogonal data by construction (for Paper A, Theorem 3.2 at small ``d``).

    Norms ``||x_i||`` are drawn uniformly from ``norm_range``; every off-diagonal inner product is
    ``+-c`` (random signs) with ``c = ratio * gamma^3 R_min^4 / (3 n R_max^2)``, so that
    ``p = c`` and ``n / n_max = ratio`` exactly: the assumption of Theorem 3.2 holds iff
    ``ratio <= 1`` (``ratio`` is the "gap to the assumption"). ``X`` is a square root of this
    Gram matrix placed in ``R^d`` by a random orthonormal frame; it needs ``d >= n`` and a
    positive definite Gram matrix (raises otherwise). Labels are fair coin flips unless given.
    """
    n, d = _check_pos_int("n", n), _check_pos_int("d", d)
    if d < n:
        raise ValueError(f"constructed_gram needs d >= n, got d={d} < n={n}")
    if not (0 < gamma <= 1):
        raise ValueError(f"gamma must lie in (0, 1], got {gamma}")
    lo, hi = (float(v) for v in norm_range)
    if not (0 < lo <= hi):
        raise ValueError(f"norm_range must satisfy 0 < lo <= hi, got {norm_range}")
    if not ratio > 0:
        raise ValueError(f"ratio must be positive, got {ratio}")
    rng = _rng(seed)
    norms = rng.uniform(lo, hi, size=n) if hi > lo else np.full(n, lo)
    rmin, rmax = norms.min(), norms.max()
    c = ratio * gamma**3 * rmin**4 / (3.0 * n * rmax**2)
    X = points_with_gram(norms, c, d, rng, what=f"ratio={ratio} (n={n})")
    labels = random_signs(n, rng) if y is None else np.asarray(y, dtype=np.float64)
    if labels.shape != (n,) or not np.all(np.abs(labels) == 1):
        raise ValueError("y must be a vector of n entries in {-1, +1}")
    return Dataset(
        X,
        labels,
        {
            "model": "constructed_gram",
            "n": n,
            "d": d,
            "seed": seed,
            "gamma": gamma,
            "ratio": ratio,
            "c": c,
        },
    )


def _bartlett(n: int, dof: int, rng: np.random.Generator) -> np.ndarray:
    """Lower-triangular ``L`` (n x n) distributed as the coordinates of ``n`` i.i.d.
    ``N(0, I_dof)`` vectors in their own Gram-Schmidt basis (Bartlett: ``L_ii ~ chi_{dof-i}``,
    ``L_ij ~ N(0, 1)`` below the diagonal); needs ``dof >= n``."""
    L = np.tril(rng.standard_normal((n, n)), -1)
    L[np.diag_indices(n)] = np.sqrt(rng.chisquare(dof - np.arange(n)))
    return L


def gaussian_span_coordinates(n: int, d: int, seed: int, y: np.ndarray | None = None) -> Dataset:
    """``n`` points ``x_i ~ N(0, I_d)`` given by their coordinates in an orthonormal basis of a
    subspace containing them: ``X`` is ``(n, min(n, d))``. All inner products (hence Theorem
    3.2's assumption, margins of networks whose rows lie in the span, gradient flow started in
    the span) have exactly the distribution of the ``d``-dimensional data, at the cost of
    ``d = n``; ``d`` may be astronomically large. Labels are fair coin flips unless given."""
    n, d = _check_pos_int("n", n), _check_pos_int("d", d)
    rng = _rng(seed)
    X = rng.standard_normal((n, d)) if d <= n else _bartlett(n, d, rng)
    labels = random_signs(n, rng) if y is None else np.asarray(y, dtype=np.float64)
    if labels.shape != (n,) or not np.all(np.abs(labels) == 1):
        raise ValueError("y must be a vector of n entries in {-1, +1}")
    return Dataset(X, labels, {"model": "gaussian_span_coordinates", "n": n, "d": d, "seed": seed})


def noisy_xor_span_coordinates(
    n: int, d: int, seed: int, mu_norm: float | None = None, *, beta: float = 0.25
) -> Dataset:
    """Noisy 2-XOR (as :func:`noisy_xor`) in exact low-dimensional coordinates.

    By rotation invariance of the noise take ``mu_1 = ||mu|| e_1``, ``mu_2 = ||mu|| e_2``. The
    first two coordinates of ``x`` are kept; the noise in the other ``d - 2`` coordinates of the
    ``n`` training points is represented by its Bartlett coordinates (see
    :func:`gaussian_span_coordinates`). ``X`` has ``k = min(d, n + 2)`` columns and the same
    joint law of inner products, labels and projections on ``mu_1, mu_2`` as the
    ``d``-dimensional sample. Fresh test points in the same coordinates come from
    :func:`noisy_xor_test_coordinates` (their remaining ``d - k`` coordinates are orthogonal to
    every training point, so a network whose rows lie in the span ignores them)."""
    n, d = _check_pos_int("n", n), _check_pos_int("d", d)
    if d < 2:
        raise ValueError("noisy 2-XOR needs d >= 2")
    rng = _rng(seed)
    norm = float(d) ** float(beta) if mu_norm is None else float(mu_norm)
    idx = rng.integers(0, 4, size=n)
    head = _xor_centers(norm)[idx] + rng.standard_normal((n, 2))
    rest = d - 2
    if rest == 0:
        tail = np.zeros((n, 0))
    elif rest <= n:
        tail = rng.standard_normal((n, rest))
    else:
        tail = _bartlett(n, rest, rng)
    X = np.concatenate([head, tail], axis=1)
    y = np.where(np.abs(X[:, 0]) >= np.abs(X[:, 1]), 1.0, -1.0)
    return Dataset(
        X,
        y,
        {
            "model": "noisy_xor_span_coordinates",
            "n": n,
            "d": d,
            "seed": seed,
            "mu_norm": norm,
            "cluster": idx,
        },
    )


def _xor_centers(norm: float) -> np.ndarray:
    return norm * np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])


def noisy_xor_test_coordinates(train: Dataset, n_test: int, seed: int) -> Dataset:
    """``n_test`` fresh noisy-XOR points in the coordinates of ``train`` (from
    :func:`noisy_xor_span_coordinates`): ``x = c + xi`` with the noise's projection on the
    ``k`` coordinates i.i.d. ``N(0, 1)`` (exact: the coordinates form an orthonormal frame)."""
    n_test = _check_pos_int("n_test", n_test)
    rng = _rng(seed)
    k = train.X.shape[1]
    idx = rng.integers(0, 4, size=n_test)
    X = rng.standard_normal((n_test, k))
    X[:, :2] += _xor_centers(train.info["mu_norm"])[idx]
    y = np.where(np.abs(X[:, 0]) >= np.abs(X[:, 1]), 1.0, -1.0)
    return Dataset(
        X,
        y,
        {
            "model": "noisy_xor_test_coordinates",
            "n": n_test,
            "d": train.d,
            "seed": seed,
            "cluster": idx,
        },
    )
