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
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Dataset:
    X: np.ndarray
    y: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

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


def nearly_orthogonal(n: int, d: int, seed: int, Sigma: np.ndarray | None = None,
                      y: np.ndarray | None = None) -> Dataset:
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


def gaussian_mixture(n: int, d: int, seed: int, beta: float = 0.3, mu_norm: float | None = None,
                     label_noise: float = 0.0, mu: np.ndarray | None = None) -> Dataset:
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
    return Dataset(X, y, {"model": "gaussian_mixture", "n": n, "d": d, "seed": seed,
                          "mu": mu, "clean_y": clean, "label_noise": label_noise})


def noisy_xor(n: int, d: int, seed: int, mu_norm: float | None = None,
              beta: float = 0.25) -> Dataset:
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
    return Dataset(X, y, {"model": "noisy_xor", "n": n, "d": d, "seed": seed,
                          "mu1": mu1, "mu2": mu2, "cluster": idx})
