"""Paper B's population loss in closed form (Zhou & Ge 2024, eqs. (1)-(3)).

Student ``f(x) = sum_i a_i relu(w_i.x) + alpha + beta.x``, ReLU teacher
``f_*(x) = sum_i a*_i relu(w*_i.x)`` (any linear part of the teacher is removed by the
preprocessing), input ``x ~ N(0, I_d)``, preprocessed label ``y~ = y - alpha_* - beta_*.x`` with
``alpha_* = E[y]``, ``beta_* = E[y x]``, and weight decay ``lambda/2 (||a||^2 + ||W||_F^2)``.

Every expectation reduces to the arc-cosine kernel of degree 1 (Cho & Saul 2009): for unit
``u, v`` with ``t = u.v``,

* ``E[relu(u.x) relu(v.x)] = k(t) = (sqrt(1-t^2) + (pi - arccos t) t) / (2 pi)``,
* ``E[relu(u.x) x] = u / 2`` and ``E[relu(u.x)] = 1/sqrt(2 pi)``,
* ``E[relu(u.x) relu_{>=2}(v.x)] = kappa2(t) = k(t) - 1/(2 pi) - t/4`` with
  ``relu_{>=2}(z) = relu(z) - 1/sqrt(2 pi) - z/2`` (Hermite orders 0 and 1 removed).

The gradient of ``||w|| ||v|| k(t)`` in ``w`` is written by hand,
``||v|| / (2 pi) (sqrt(1-t^2) wbar + (pi - arccos t) vbar)``, which is smooth up to
``t = +-1``; differentiating ``arccos`` through autograd would give NaN (or, with clamping, a
zero gradient) for exactly aligned neurons. Everything is NumPy float64 and batched over
neurons (no Python loops over neurons).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .kernels import INV_SQRT_2PI, _clip, _unit, k1, kappa2, relu
from .teacher import Teacher

# --- student -------------------------------------------------------------------------------

@dataclass
class Net:
    """Student parameters ``theta = (a, W, alpha, beta)`` (rows of ``W`` are the ``w_i``)."""

    a: np.ndarray
    W: np.ndarray
    alpha: float = 0.0
    beta: np.ndarray | None = None

    def __post_init__(self):
        self.a = np.asarray(self.a, dtype=np.float64)
        self.W = np.atleast_2d(np.asarray(self.W, dtype=np.float64))
        self.alpha = float(self.alpha)
        self.beta = np.zeros(self.W.shape[1]) if self.beta is None else np.asarray(self.beta, dtype=np.float64)

    def copy(self) -> "Net":
        return Net(self.a.copy(), self.W.copy(), self.alpha, self.beta.copy())

    def __call__(self, X):
        return relu(X @ self.W.T) @ self.a + self.alpha + X @ self.beta

    def flat(self) -> np.ndarray:
        return np.concatenate([self.a, self.W.ravel(), [self.alpha], self.beta])

    @staticmethod
    def unflat(v, m, d) -> "Net":
        v = np.asarray(v, dtype=np.float64)
        return Net(v[:m], v[m:m + m * d].reshape(m, d), v[m + m * d], v[m + m * d + 1:])


# --- loss and gradient ---------------------------------------------------------------------

def alpha_hat(net: Net) -> float:
    """Claim B.1: ``alpha^ = -(1/sqrt(2 pi)) sum a_i ||w_i||`` (the best ``alpha``)."""
    return -INV_SQRT_2PI * float(net.a @ np.linalg.norm(net.W, axis=1))


def beta_hat(net: Net) -> np.ndarray:
    """Claim B.1: ``beta^ = -(1/2) sum a_i w_i`` (the best ``beta``)."""
    return -0.5 * net.a @ net.W


def loss_ge2(net: Net, teacher: Teacher) -> float:
    """``E[(f_{>=2} - f~_*)^2]`` with ``f_{>=2} = sum a_i ||w_i|| relu_{>=2}(wbar_i.x)``.

    Computed as ``c^T kappa2(U U^T) c`` over the student's and the teacher's unit directions
    ``U`` with weights ``c = (a ||w||, -a* ||w*||)``.
    """
    U = np.concatenate([_unit(net.W)[0], _unit(teacher.W)[0]])
    c = np.concatenate([net.a * np.linalg.norm(net.W, axis=1),
                        -teacher.a * np.linalg.norm(teacher.W, axis=1)])
    return max(float(c @ kappa2(U @ U.T) @ c), 0.0)


def loss(net: Net, teacher: Teacher) -> float:
    """Square loss ``L(theta) = E[(f(x; theta) - y~)^2]``, expanded term by term."""
    U, n = _unit(net.W)
    Us, ns = _unit(teacher.W)
    c, cs = net.a * n, teacher.a * ns
    ff = c @ k1(U @ U.T) @ c + 2 * net.alpha * INV_SQRT_2PI * c.sum() \
        + net.beta @ (net.a @ net.W) + net.alpha ** 2 + net.beta @ net.beta
    fy = c @ kappa2(U @ Us.T) @ cs
    return max(float(ff - 2 * fy + teacher.target_norm2()), 0.0)


def regularized_loss(net: Net, teacher: Teacher, lam: float) -> float:
    """``L_lambda = L + lambda/2 (||a||^2 + ||W||_F^2)`` (eq. (2))."""
    return loss(net, teacher) + 0.5 * lam * (net.a @ net.a + np.sum(net.W ** 2))


def _grad_k_first(U, n, V, nv, kernel2: bool):
    """Gradient in ``w_i`` of ``||w_i|| ||v_j|| k(t_ij)`` (or ``kappa2``) for all ``i, j``:
    returns a tensor ``(m_w, m_v, d)``, built without any 1/sqrt(1-t^2) singularity."""
    t = _clip(U @ V.T)
    s = np.sqrt(1.0 - t * t)
    p = math.pi - np.arccos(t)
    g = (nv[None, :, None] / (2 * math.pi)) * (s[..., None] * U[:, None, :] + p[..., None] * V[None, :, :])
    if kernel2:
        g = g - (nv[None, :, None] / (2 * math.pi)) * U[:, None, :] - 0.25 * (nv[:, None] * V)[None, :, :]
    return g


def grad(net: Net, teacher: Teacher, lam: float = 0.0) -> Net:
    """Exact gradient of ``L_lambda`` in ``(a, W, alpha, beta)``, as a :class:`Net`.

    Uses contractions instead of the ``(m, m, d)`` tensor: with ``t = U U^T``,
    ``sum_j c_j grad_w[||w|| ||w_j|| k(t_ij)] = (1/2pi)(sqrt(1-t^2) c) wbar_i + (1/2pi)((pi-arccos t) c) U``.
    """
    U, n = _unit(net.W)
    Us, ns = _unit(teacher.W)
    a, c, cs = net.a, net.a * n, teacher.a * ns
    T = _clip(U @ U.T)
    Ts = _clip(U @ Us.T)
    two_pi = 2 * math.pi
    # d/da_i
    Kc = k1(T) @ c
    K2s = kappa2(Ts) @ cs
    ga = 2 * n * Kc + 2 * net.alpha * INV_SQRT_2PI * n + net.W @ net.beta - 2 * n * K2s + lam * a
    # d/dw_i: 2 a_i [ sum_j c_j dk + alpha/sqrt(2pi) wbar_i ] + a_i beta - 2 a_i sum_j cs_j dkappa2
    S, Pm = np.sqrt(1 - T * T), math.pi - np.arccos(T)
    Ss, Ps = np.sqrt(1 - Ts * Ts), math.pi - np.arccos(Ts)
    own = (S @ c) / two_pi
    cross = (Pm * c[None, :]) @ U / two_pi
    own_s = (Ss @ cs - cs.sum()) / two_pi
    cross_s = (Ps * cs[None, :]) @ Us / two_pi - 0.25 * (cs @ Us)[None, :]
    gW = (2 * a)[:, None] * (own[:, None] * U + cross + net.alpha * INV_SQRT_2PI * U) \
        + a[:, None] * net.beta[None, :] \
        - (2 * a)[:, None] * (own_s[:, None] * U + cross_s) + lam * net.W
    galpha = 2 * (net.alpha - alpha_hat(net))
    gbeta = 2 * (net.beta - beta_hat(net))
    return Net(ga, gW, galpha, gbeta)


def grad_norm2(g: Net) -> float:
    return float(g.a @ g.a + np.sum(g.W ** 2) + g.alpha ** 2 + g.beta @ g.beta)


# --- Monte Carlo references ----------------------------------------------------------------

def mc_loss(net: Net, teacher: Teacher, n: int, seed: int, batch: int = 200_000):
    """Monte Carlo estimate of ``L`` and its standard error from ``n`` Gaussian inputs."""
    rng = np.random.default_rng(seed)
    s = s2 = 0.0
    done = 0
    while done < n:
        b = min(batch, n - done)
        X = rng.standard_normal((b, teacher.d))
        r2 = (net(X) - teacher.y_tilde(X)) ** 2
        s += r2.sum()
        s2 += (r2 ** 2).sum()
        done += b
    mean = s / n
    var = max(s2 / n - mean ** 2, 0.0)
    return mean, math.sqrt(var / n)
