"""Hermite expansions of ReLU and ``|x|`` (Paper B, Appendix A and Claim B.1).

Normalized probabilists' Hermite polynomials ``h_k = He_k / sqrt(k!)`` are orthonormal under
``N(0, 1)``; the coefficient of ``sigma`` is ``sigma_k = E[sigma(x) h_k(x)]``.

* :func:`relu_coefficient` / :func:`abs_coefficient`: the closed forms of Lemma A.1, in log
  space (``lgamma``) so that ``k`` in the thousands is fine;
* :func:`coefficients_gauss_hermite`: ``E[sigma h_k]`` by Gauss-Hermite quadrature for any
  ``sigma`` (exact for polynomials, slow for a kink);
* :func:`relu_coefficients_quadrature`: the ReLU coefficients by a quadrature that is *exact*
  for the kink: on ``x > 0`` substitute ``x = sqrt(2u)``; then ``x h_k(x) phi(x) dx`` becomes
  ``h_k(sqrt(2u)) e^{-u} du / sqrt(2 pi)``, a polynomial in ``u`` times ``e^{-u}`` for even
  ``k`` (Gauss-Laguerre) and ``sqrt(u)`` times a polynomial for odd ``k`` (generalized
  Gauss-Laguerre with ``alpha = 1/2``). Both rules are exact once they have enough nodes.
* :func:`piecewise_linear_coefficients`: the same exact half-line rules for any
  ``f(x) = s_+ x`` (``x > 0``), ``s_- x`` (``x < 0``), evaluating ``h_k`` at negative nodes
  (no parity used): ``|x|`` gives an independent check of Lemma A.1's second half;
* :func:`correlated_moments`: ``E[h_j(x) h_k(y)]`` for ``rho``-correlated standard normals by a
  tensor Gauss-Hermite rule, exact for these polynomials (Claim A.1);
* :func:`claim_b1_terms`: the three terms of Claim B.1's decomposition of the square loss,
  with ``f_{>=2}`` as printed and as corrected;
* :func:`lemma_i1_max`, :func:`lemma_i2_max` and their closed forms: the technical Lemmas I.1
  and I.2 (the printed bound of I.2 is false for ``beta > 4^{-1/(e-2)}``).

Used in {ref}`chapter-paperb-hermite`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import roots_genlaguerre, roots_laguerre

from . import kernels
from . import population as pop
from .teacher import Teacher


def hermite_normalized(k_max: int, x) -> np.ndarray:
    """``h_0(x), ..., h_{k_max}(x)`` (rows) by the stable three-term recurrence
    ``h_{k+1} = (x h_k - sqrt(k) h_{k-1}) / sqrt(k+1)``."""
    x = np.asarray(x, dtype=np.float64)
    H = np.empty((k_max + 1,) + x.shape)
    H[0] = 1.0
    if k_max >= 1:
        H[1] = x
    for k in range(1, k_max):
        H[k + 1] = (x * H[k] - math.sqrt(k) * H[k - 1]) / math.sqrt(k + 1)
    return H


def relu_coefficient(k: int) -> float:
    """Lemma A.1: ``sigma_0 = 1/sqrt(2 pi)``, ``sigma_1 = 1/2``, 0 for odd ``k >= 3``, and
    ``(-1)^{k/2-1} (2pi)^{-1/2} (k-2)! / (sqrt(k!) 2^{k/2-1} (k/2-1)!)`` for even ``k >= 2``."""
    if k < 0:
        raise ValueError("k must be >= 0")
    if k == 0:
        return 1.0 / math.sqrt(2 * math.pi)
    if k == 1:
        return 0.5
    if k % 2:
        return 0.0
    logv = (
        math.lgamma(k - 1)
        - 0.5 * math.lgamma(k + 1)
        - (k / 2 - 1) * math.log(2)
        - math.lgamma(k / 2)
        - 0.5 * math.log(2 * math.pi)
    )
    return (-1) ** (k // 2 - 1) * math.exp(logv)


def abs_coefficient(k: int) -> float:
    """Lemma A.1 for ``|x|``: ``sqrt(2/pi)`` at ``k = 0``, 0 for odd ``k``, twice the ReLU
    coefficient for even ``k >= 2`` (``|x| = 2 relu(x) - x``)."""
    if k == 0:
        return math.sqrt(2 / math.pi)
    if k % 2:
        return 0.0
    return 2.0 * relu_coefficient(k)


def relu_coefficients(k_max: int) -> np.ndarray:
    return np.array([relu_coefficient(k) for k in range(k_max + 1)])


def coefficients_gauss_hermite(f, k_max: int, nodes: int) -> np.ndarray:
    """``E[f(x) h_k(x)]`` for ``k <= k_max`` by ``nodes``-point Gauss-Hermite quadrature
    (probabilists' weight ``e^{-x^2/2}``)."""
    x, w = hermegauss(nodes)
    w = w / math.sqrt(2 * math.pi)
    return hermite_normalized(k_max, x) @ (w * f(x))


def relu_coefficients_quadrature(k_max: int) -> np.ndarray:
    """ReLU coefficients ``E[relu(x) h_k(x)]``, ``k <= k_max``, by the exact half-line rules
    described in the module docstring (``k_max // 2 + 2`` nodes suffice)."""
    n = k_max // 2 + 2
    u, w = roots_laguerre(n)  # int_0^inf p(u) e^{-u} du, exact to degree 2n-1
    ug, wg = roots_genlaguerre(n, 0.5)  # int_0^inf sqrt(u) p(u) e^{-u} du
    out = np.empty(k_max + 1)
    He = hermite_normalized(k_max, np.sqrt(2 * u))
    # h_k(x) / x, a polynomial in u for odd k
    Ho = hermite_normalized(k_max, np.sqrt(2 * ug)) / np.sqrt(2 * ug)
    for k in range(k_max + 1):
        if k % 2 == 0:
            out[k] = He[k] @ w
        else:
            out[k] = math.sqrt(2) * (Ho[k] @ wg)
    return out / math.sqrt(2 * math.pi)


def piecewise_linear_coefficients(
    k_max: int, slope_pos: float = 1.0, slope_neg: float = 0.0
) -> np.ndarray:
    """``E[f(x) h_k(x)]``, ``k <= k_max``, for ``f(x) = slope_pos x`` on ``x > 0`` and
    ``slope_neg x`` on ``x < 0`` (ReLU: ``(1, 0)``; ``|x|``: ``(1, -1)``), each half line by the
    exact rules of :func:`relu_coefficients_quadrature`; on ``x < 0`` the polynomials are
    evaluated at the negative nodes ``-sqrt(2u)`` by the recurrence."""
    n = k_max // 2 + 2
    u, w = roots_laguerre(n)
    ug, wg = roots_genlaguerre(n, 0.5)
    out = np.zeros(k_max + 1)
    for sign, slope in ((1.0, slope_pos), (-1.0, slope_neg)):
        if slope == 0.0:
            continue
        # int_0^inf slope * y h_k(sign y) phi(y) dy, with x = sign * y
        He = hermite_normalized(k_max, sign * np.sqrt(2 * u))
        Ho = hermite_normalized(k_max, sign * np.sqrt(2 * ug)) / np.sqrt(2 * ug)
        for k in range(k_max + 1):
            val = He[k] @ w if k % 2 == 0 else math.sqrt(2) * (Ho[k] @ wg)
            out[k] += sign * slope * val
    return out / math.sqrt(2 * math.pi)


def correlated_moments(k_max: int, rho: float, nodes: int | None = None) -> np.ndarray:
    """``M[j, k] = E[h_j(x) h_k(y)]`` for standard normals with correlation ``rho``
    (``y = rho x + sqrt(1 - rho^2) z``), by a tensor Gauss-Hermite rule with ``nodes`` points
    per axis (default ``k_max + 1``: exact for every product of degree ``<= 2 k_max``).
    Claim A.1 says ``M = diag(rho^k)``."""
    nodes = k_max + 1 if nodes is None else nodes
    x, w = hermegauss(nodes)
    w = w / math.sqrt(2 * math.pi)
    X, Z = np.meshgrid(x, x, indexing="ij")
    Y = rho * X + math.sqrt(max(1.0 - rho * rho, 0.0)) * Z
    Wt = np.outer(w, w)
    Hx = hermite_normalized(k_max, X.ravel())
    Hy = hermite_normalized(k_max, Y.ravel())
    return (Hx * Wt.ravel()) @ Hy.T


# --- Appendix I's technical lemmas ---------------------------------------------------------


def lemma_i1_max(k: int, p: int = 1, grid: int = 20_001) -> float:
    """``max_theta |cos^k(theta) sin^p(theta)|`` on a fine grid of ``[0, pi/2]`` refined by a
    bounded scalar search (Lemma I.1 has ``p = 1, 2, 3``)."""
    from scipy.optimize import minimize_scalar

    th = np.linspace(0.0, math.pi / 2, grid)
    f = np.cos(th) ** k * np.sin(th) ** p
    i = int(np.argmax(f))
    lo, hi = th[max(i - 1, 0)], th[min(i + 1, grid - 1)]
    res = minimize_scalar(
        lambda t: -(math.cos(t) ** k * math.sin(t) ** p),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-14},
    )
    return float(max(f[i], -res.fun))


def lemma_i1_closed_form(k: int, p: int = 1) -> float:
    """The maximum of ``cos^k sin^p`` is at ``tan^2 theta = p / k``:
    ``(k / (k + p))^{k/2} (p / (k + p))^{p/2}``, which is at most ``(p / e)^{p/2} k^{-p/2}``."""
    return (k / (k + p)) ** (k / 2) * (p / (k + p)) ** (p / 2)


def lemma_i2_max(beta: float) -> float:
    """``max_{k > 0} k^{1/2} beta^{k/2}`` over real ``k``, numerically (log scale, bounded
    search around the stationary point)."""
    from scipy.optimize import minimize_scalar

    lb = math.log(1.0 / beta)
    k0 = 1.0 / lb

    def neg_log_f(logk):
        k = math.exp(logk)
        return -(0.5 * logk - 0.5 * k * lb)

    res = minimize_scalar(
        neg_log_f,
        bounds=(math.log(k0) - 5, math.log(k0) + 5),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return math.exp(-res.fun)


def lemma_i2_corrected(beta: float) -> float:
    """The true maximum: ``k0 = 1 / ln(1/beta)`` and ``f(k0) = (e ln(1/beta))^{-1/2}``."""
    return (math.e * math.log(1.0 / beta)) ** -0.5


def lemma_i2_printed(beta: float) -> float:
    """Lemma I.2 as printed: ``1 / sqrt(2 ln(2 / beta))`` (its proof differentiates
    ``beta^{k/2}`` as if its log were ``ln(beta / 2)``)."""
    return (2.0 * math.log(2.0 / beta)) ** -0.5


LEMMA_I2_CROSSING = 4.0 ** (-1.0 / (math.e - 2.0))
"""The printed bound of Lemma I.2 holds iff ``2 ln(2/beta) <= e ln(1/beta)``, i.e. iff
``beta <= 4^{-1/(e-2)} ~ 0.145``; it is false for every larger ``beta``."""


def kernel_series(t, k_max: int, start: int = 0) -> np.ndarray:
    """``sum_{start <= k <= k_max} sigma_k^2 t^k``: the truncated Hermite series of the
    arc-cosine kernel (``start = 0``: ``k(t)``; ``start = 2``: ``kappa2(t)``)."""
    s = relu_coefficients(k_max) ** 2
    t = np.asarray(t, dtype=np.float64)
    ks = np.arange(k_max + 1)
    return (s[start:, None] * t.ravel()[None, :] ** ks[start:, None]).sum(0).reshape(t.shape)


def tail_bound(k_max: int) -> float:
    """``sum_{k > k_max} sigma_k^2 = 1/2 - sum_{k <= k_max} sigma_k^2`` (``E[relu^2] = 1/2``):
    bounds the truncation error of :func:`kernel_series` for ``|t| <= 1``."""
    return 0.5 - float(np.sum(relu_coefficients(k_max) ** 2))


def claim_b1_terms(net: pop.Net, teacher: Teacher) -> dict:
    """The three terms of Claim B.1 and the two readings of ``f_{>=2}``.

    ``corrected``: ``f_{>=2} = sum a_i ||w_i|| relu_{>=2}(wbar_i.x)``; ``literal``: the printed
    ``sum a_i relu_{>=2}(w_i.x)``, which differs by the constant
    ``c = sum a_i (||w_i|| - 1)/sqrt(2 pi)`` and so adds ``c^2`` to the third term.
    """
    n = np.linalg.norm(net.W, axis=1)
    const = float(net.a @ (n - 1.0)) * kernels.INV_SQRT_2PI
    lin = (net.alpha - pop.alpha_hat(net)) ** 2 + float(np.sum((net.beta - pop.beta_hat(net)) ** 2))
    ge2 = pop.loss_ge2(net, teacher)
    return {
        "alpha_term": (net.alpha - pop.alpha_hat(net)) ** 2,
        "beta_term": float(np.sum((net.beta - pop.beta_hat(net)) ** 2)),
        "ge2_corrected": ge2,
        "ge2_literal": ge2 + const**2,
        "sum_corrected": lin + ge2,
        "sum_literal": lin + ge2 + const**2,
        "literal_offset": const,
    }


def mc_ge2(
    net: pop.Net,
    teacher: Teacher,
    n: int,
    seed: int,
    *,
    literal: bool = False,
    batch: int = 200_000,
):
    """Monte Carlo ``E[(f_{>=2} - f~_*)^2]`` (mean, standard error) for either reading, in
    batches of ``batch`` inputs (the same draws as one batch of ``n``)."""
    rng = np.random.default_rng(seed)
    nn = np.linalg.norm(net.W, axis=1)
    s = s2 = 0.0
    done = 0
    while done < n:
        k = min(batch, n - done)
        X = rng.standard_normal((k, teacher.d))
        if literal:
            f = kernels.relu_ge2(X @ net.W.T) @ net.a
        else:
            f = kernels.relu_ge2(X @ (net.W / nn[:, None]).T) @ (net.a * nn)
        r2 = (f - teacher.y_tilde(X)) ** 2
        s += float(r2.sum())
        s2 += float((r2 * r2).sum())
        done += k
    mean = s / n
    return mean, math.sqrt(max(s2 / n - mean * mean, 0.0) / n)


def mc_second_order(teacher: Teacher, V: np.ndarray, n: int, seed: int, *, batch: int = 200_000):
    """Monte Carlo ``E[f_*(x) h_2(v.x)]`` for every unit row ``v`` of ``V`` (means and standard
    errors), in batches; the paragraph after Assumption 3 says it is ``sigma_2 v^T H v``."""
    rng = np.random.default_rng(seed)
    s = np.zeros(len(V))
    s2 = np.zeros(len(V))
    done = 0
    while done < n:
        k = min(batch, n - done)
        X = rng.standard_normal((k, teacher.d))
        prod = teacher(X)[:, None] * ((X @ V.T) ** 2 - 1) / math.sqrt(2)
        s += prod.sum(0)
        s2 += (prod * prod).sum(0)
        done += k
    mean = s / n
    return mean, np.sqrt(np.maximum(s2 / n - mean * mean, 0.0) / n)
