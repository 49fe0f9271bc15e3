"""The arc-cosine kernel and ReLU without its Hermite orders 0 and 1 (Paper B, Appendix B).

For unit ``u, v`` with ``t = u.v`` and ``x ~ N(0, I_d)``:
``E[relu(u.x) relu(v.x)] = k1(t)`` (Cho & Saul 2009) and
``E[relu(u.x) relu_{>=2}(v.x)] = kappa2(t) = sum_{k>=2} sigma_k^2 t^k``. Used by
:mod:`twolayer.paper_b.population` (the closed-form loss) and :mod:`twolayer.paper_b.teacher`.
"""

from __future__ import annotations

import math

import numpy as np

INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


# --- kernels -----------------------------------------------------------------------------


def _clip(t):
    return np.clip(t, -1.0, 1.0)


def k1(t):
    """Arc-cosine kernel ``E[relu(u.x) relu(v.x)]`` for unit ``u, v`` with ``u.v = t``."""
    t = _clip(np.asarray(t, dtype=np.float64))
    return (np.sqrt(1.0 - t * t) + (math.pi - np.arccos(t)) * t) / (2.0 * math.pi)


def k1_prime(t):
    """``k'(t) = (pi - arccos t) / (2 pi)``."""
    t = _clip(np.asarray(t, dtype=np.float64))
    return (math.pi - np.arccos(t)) / (2.0 * math.pi)


def kappa2(t):
    """``E[relu(u.x) relu_{>=2}(v.x)] = k(t) - 1/(2 pi) - t/4 = sum_{k>=2} sigma_k^2 t^k``."""
    t = np.asarray(t, dtype=np.float64)
    return k1(t) - 1.0 / (2.0 * math.pi) - _clip(t) / 4.0


def relu(z):
    return np.maximum(z, 0.0)


def relu_ge2(z):
    """``relu_{>=2}(z) = relu(z) - 1/sqrt(2 pi) - z/2``: ReLU without Hermite orders 0 and 1."""
    return relu(z) - INV_SQRT_2PI - 0.5 * z


def unit_rows(W, tiny=1e-300):
    """``(W / ||w_i||, ||w_i||)`` row by row (a zero row stays zero)."""
    n = np.linalg.norm(W, axis=-1)
    return W / np.maximum(n, tiny)[..., None], n
