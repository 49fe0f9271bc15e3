"""Paper B's non-degenerate dual certificate (Definition 1, Appendix G), the test function of
Lemma 10 and the descent direction of Lemma 7 / F.17.

Kernels (``sigma_k`` the ReLU Hermite coefficients, :mod:`twolayer.paper_b.hermite`):

* ``Z_l^2 = sum_{k >= l} sigma_k^2 = 1/2 - sum_{k < l} sigma_k^2`` (``E[relu^2] = 1/2``);
* ``kappa_l(t) = sum_{k >= l} sigma_k^2 t^k / Z_l^2``, computed as the closed-form arc-cosine
  kernel minus its head, with ``kappa_l'`` and ``kappa_l''`` (``k''(t) = 1/(2 pi sqrt(1-t^2))``,
  infinite at ``t = 1``: it only ever multiplies a zero there).

Certificate (Appendix G, for teacher directions ``u_j`` spanning ``S_*`` of dimension ``r``):

``eta(w) = sum_j alpha_j kappa_l(u_j.w) + sum_j kappa_l'(u_j.w) (b_j.w)``, with ``b_j = T_j c_j``
in the tangent space of the unit sphere of ``S_*`` at ``u_j`` (``T_j``: ``d x (r-1)``
orthonormal), solving ``eta(u_i) = sign a*_i`` and ``grad eta(u_i) = 0`` (an ``r m_*`` square,
symmetric linear system). Gradients of ``eta`` orthogonal to ``S_*`` vanish at ``u_i`` by
construction. The certificate is ``eta(w) = E[p(x) relu_{>=2}(w.x)]`` for unit ``w`` with

``p(x) = Z_l^{-2} (sum_j alpha_j relu_{>=l}(u_j.x) + sum_j (b_j.x) relu_{>=l}'(u_j.x))``,

``relu_{>=l} = relu - sum_{k<l} sigma_k h_k``, and ``||p||^2 = sum_j alpha_j sign(a*_j) / Z_l^2``.

Chapters: ``paper_b/certificates``, ``paper_b/stage3``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from . import hermite as herm
from . import kernels
from .population import Net
from .teacher import Teacher

# --- kernels -------------------------------------------------------------------------------


def head(ell: int) -> np.ndarray:
    """``sigma_0, ..., sigma_{ell-1}``."""
    if ell < 2:
        raise ValueError("ell must be >= 2")
    return herm.relu_coefficients(ell - 1)


def Z2(ell: int) -> float:
    """``Z_l^2 = sum_{k >= l} sigma_k^2``."""
    return 0.5 - float(np.sum(head(ell) ** 2))


def kappa(t, ell: int, deriv: int = 0):
    """``kappa_l(t)`` (``deriv = 0``), ``kappa_l'`` (1) or ``kappa_l''`` (2, for ``|t| < 1``)."""
    t = np.clip(np.asarray(t, dtype=np.float64), -1.0, 1.0)
    s2 = head(ell) ** 2
    ks = np.arange(ell)
    if deriv == 0:
        full = kernels.k1(t)
        hd = sum(s2[k] * t**k for k in ks)
    elif deriv == 1:
        full = kernels.k1_prime(t)
        hd = sum(k * s2[k] * t ** (k - 1) for k in ks[1:])
    elif deriv == 2:
        with np.errstate(divide="ignore"):
            full = 1.0 / (2 * math.pi * np.sqrt(1.0 - t * t))
        hd = sum(k * (k - 1) * s2[k] * t ** (k - 2) for k in ks[2:])
    else:
        raise ValueError("deriv must be 0, 1 or 2")
    return (full - hd) / Z2(ell)


def kappa_series(t, ell: int, k_max: int) -> np.ndarray:
    """``sum_{l <= k <= k_max} sigma_k^2 t^k / Z_l^2``: the truncated series, for tests."""
    s = herm.relu_coefficients(k_max) ** 2
    t = np.asarray(t, dtype=np.float64)
    ks = np.arange(ell, k_max + 1)
    return (s[ks][:, None] * t.ravel()[None, :] ** ks[:, None]).sum(0).reshape(t.shape) / Z2(ell)


def relu_ge(z, ell: int):
    """``relu_{>=l}(z) = relu(z) - sum_{k<l} sigma_k h_k(z)``."""
    z = np.asarray(z, dtype=np.float64)
    H = herm.hermite_normalized(ell - 1, z)
    return kernels.relu(z) - np.tensordot(head(ell), H, axes=1)


def relu_ge_prime(z, ell: int):
    """``relu_{>=l}'(z) = 1{z > 0} - sum_{1 <= k < l} sigma_k sqrt(k) h_{k-1}(z)``."""
    z = np.asarray(z, dtype=np.float64)
    H = herm.hermite_normalized(max(ell - 2, 0), z)
    c = head(ell)[1:] * np.sqrt(np.arange(1, ell))
    return (z > 0).astype(np.float64) - np.tensordot(c, H[: ell - 1], axes=1)


# --- the certificate -------------------------------------------------------------------------


def _unit(W):
    return kernels.unit_rows(np.atleast_2d(np.asarray(W, dtype=np.float64)))[0]


def _cos(W: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``W U^T`` for unit rows, clipped to ``[-1, 1]`` and snapped to ``+-1`` within 4 ulp: the
    arc-cosine kernel has a ``sqrt(1 - t^2)`` term, so a rounding error ``eps`` in ``t`` near 1
    moves it by ``sqrt(2 eps)``; snapping makes ``eta(u_i)`` exact at the teacher directions."""
    t = np.clip(W @ U.T, -1.0, 1.0)
    return np.where(np.abs(t) >= 1.0 - 4 * np.finfo(float).eps, np.sign(t), t)


def tangent_bases(U: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """``(m, d, r-1)``: for each unit ``u_j`` in the span of ``basis`` (d, r), an orthonormal
    basis of the tangent space ``u_j^perp`` within that span."""
    r = basis.shape[1]
    out = []
    for u in U:
        P = basis - np.outer(u, u @ basis)
        q, _, _ = np.linalg.svd(P, full_matrices=False)
        out.append(q[:, : r - 1])
    return np.stack(out)


@dataclass
class Certificate:
    U: np.ndarray  # (m*, d) unit teacher directions
    signs: np.ndarray  # sign(a*)
    T: np.ndarray  # (m*, d, r-1) tangent bases
    alpha: np.ndarray  # (m*,)
    c: np.ndarray  # (m*, r-1)
    ell: int
    matrix: np.ndarray  # the interpolation system
    rhs: np.ndarray

    @property
    def b(self) -> np.ndarray:
        """``b_j = T_j c_j`` (rows)."""
        return np.einsum("jdk,jk->jd", self.T, self.c)

    @property
    def Z2(self) -> float:
        return Z2(self.ell)

    def eta(self, W) -> np.ndarray:
        """``eta`` at the directions of the rows of ``W`` (normalized first)."""
        W = _unit(W)
        t = _cos(W, self.U)
        return kappa(t, self.ell) @ self.alpha + np.sum(kappa(t, self.ell, 1) * (W @ self.b.T), 1)

    def eta_grad(self, W) -> np.ndarray:
        """Euclidean gradient of ``w -> eta(w)`` (the formula above, not normalized) at unit
        rows ``W``; the ``kappa''`` term is dropped where ``b_j.w = 0`` exactly (at ``w = u_j``)."""
        W = _unit(W)
        t = _cos(W, self.U)
        bw = W @ self.b.T
        k1 = kappa(t, self.ell, 1)
        at_pole = np.abs(np.clip(t, -1, 1)) >= 1.0  # kappa'' infinite, b_j.w = 0 there
        k2 = kappa(np.where(at_pole, 0.0, t), self.ell, 2)
        k2bw = np.where(at_pole, 0.0, k2 * bw)
        return (k1 * self.alpha + k2bw) @ self.U + k1 @ self.b

    def tangent_grad(self, W) -> np.ndarray:
        """Riemannian gradient ``P_w grad eta(w)`` on the sphere."""
        W = _unit(W)
        G = self.eta_grad(W)
        return G - np.sum(G * W, 1, keepdims=True) * W

    def p(self, X) -> np.ndarray:
        """The dual polynomial ``p(x)`` at the rows of ``X``."""
        Z = X @ self.U.T
        B = X @ self.b.T
        return (
            relu_ge(Z, self.ell) @ self.alpha + np.sum(B * relu_ge_prime(Z, self.ell), 1)
        ) / self.Z2

    def p_norm2(self) -> float:
        """``||p||^2 = E[p^2] = sum_j alpha_j sign(a*_j) / Z_l^2``."""
        return float(self.alpha @ self.signs) / self.Z2

    def interpolation_residual(self) -> float:
        """``max_i |eta(u_i) - sign a*_i|`` and ``||P grad eta(u_i)||``, evaluated afresh."""
        v = np.abs(self.eta(self.U) - self.signs).max()
        g = np.linalg.norm(self.tangent_grad(self.U), axis=1).max()
        return float(max(v, g))


def solve(teacher: Teacher, ell: int) -> Certificate:
    """The Appendix G certificate of ``teacher`` (whose ``info['basis']`` spans ``S_*``)."""
    U = _unit(teacher.W)
    m = len(U)
    B = teacher.info["basis"]
    r = B.shape[1]
    T = tangent_bases(U, B)
    t = _cos(U, U)  # t[i, j] = u_i.u_j
    np.fill_diagonal(t, 1.0)
    K0, K1 = kappa(t, ell), kappa(t, ell, 1)
    off = ~np.eye(m, dtype=bool)
    K2 = np.zeros_like(t)
    K2[off] = kappa(t[off], ell, 2)
    q = r - 1
    # Tu[i, j, k] = T_j[:, k].u_i ; uT[i, j, k] = u_j.T_i[:, k] ; TT[i, k, j, l] = T_i[:,k].T_j[:,l]
    Tu = np.einsum("jdk,id->ijk", T, U)
    uT = np.einsum("jd,idk->ijk", U, T)
    TT = np.einsum("idk,jdl->ikjl", T, T)
    n = m * r
    M = np.zeros((n, n))
    M[:m, :m] = K0
    M[:m, m:] = (K1[:, :, None] * Tu).reshape(m, m * q)
    M[m:, :m] = (K1[:, :, None] * uT).transpose(0, 2, 1).reshape(m * q, m)
    # derivative rows (i, k) x c columns (j, l)
    blk = (
        K2[:, None, :, None] * uT.transpose(0, 2, 1)[:, :, :, None] * Tu[:, None, :, :]
        + K1[:, None, :, None] * TT
    )
    M[m:, m:] = blk.reshape(m * q, m * q)
    rhs = np.concatenate([np.sign(teacher.a), np.zeros(m * q)])
    x = np.linalg.solve(M, rhs)
    return Certificate(U, np.sign(teacher.a), T, x[:m], x[m:].reshape(m, q), ell, M, rhs)


def plane_directions(basis: np.ndarray, theta) -> np.ndarray:
    """Unit vectors ``cos(theta) e_1 + sin(theta) e_2`` of the plane spanned by ``basis[:, :2]``."""
    theta = np.asarray(theta, dtype=np.float64)
    return np.stack([np.cos(theta), np.sin(theta)], -1) @ basis[:, :2].T


def angle_to_teachers(W, U) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, delta)``: nearest teacher direction up to sign and the angle to it."""
    A = np.arccos(np.clip(np.abs(_unit(W) @ U.T), 0, 1))
    owner = A.argmin(1)
    return owner, A[np.arange(len(owner)), owner]


def rho_eta(cert: Certificate, W, min_delta: float = 1e-4) -> tuple[float, np.ndarray]:
    """``min (1 - |eta(w)|) / delta(w)^2`` over the rows of ``W`` farther than ``min_delta``
    from every teacher direction (up to sign); returns it and the ratio at every row (NaN
    where excluded)."""
    _, delta = angle_to_teachers(W, cert.U)
    ratio = np.full(len(delta), np.nan)
    keep = delta > min_delta
    ratio[keep] = (1 - np.abs(cert.eta(W[keep]))) / delta[keep] ** 2
    return float(np.nanmin(ratio)), ratio


def mc_identity(cert: Certificate, W, n: int, seed: int, *, batch: int = 100_000):
    """Monte Carlo ``E[p(x) relu_{>=2}(w.x)]`` for unit rows ``W``: (mean, standard error)."""
    W = _unit(W)
    rng = np.random.default_rng([seed, 41])
    s = np.zeros(len(W))
    s2 = np.zeros(len(W))
    done = 0
    while done < n:
        k = min(batch, n - done)
        X = rng.standard_normal((k, W.shape[1]))
        v = cert.p(X)[:, None] * kernels.relu_ge2(X @ W.T)
        s += v.sum(0)
        s2 += (v**2).sum(0)
        done += k
    mean = s / n
    return mean, np.sqrt(np.maximum(s2 / n - mean**2, 0) / n)


# --- Lemma 10's test function ------------------------------------------------------------


def test_profile(theta, ell: int) -> np.ndarray:
    """``psi_l(theta) = sum_{l <= k < 2l} |sigma_k| cos^k(theta)``: the correlation
    ``sign(a*_i) E[g(x) relu(w.x)]`` of the test function ``g`` of Lemma 10 (F.6) with a unit
    neuron at angle ``theta`` from ``w*_i`` (Claim A.1)."""
    s = np.abs(herm.relu_coefficients(2 * ell - 1))
    ks = np.arange(ell, 2 * ell)
    c = np.cos(np.asarray(theta, dtype=np.float64))
    return np.tensordot(s[ks], c[None, ...] ** ks.reshape((-1,) + (1,) * c.ndim), axes=1)


def half_width(ell: int, grid: int = 20001) -> float:
    """The angle where ``psi_l(theta) / psi_l(0)`` first falls to 1/2 (linear interpolation)."""
    th = np.linspace(0, math.pi / 2, grid)
    v = test_profile(th, ell) / test_profile(0.0, ell)
    i = int(np.argmax(v <= 0.5))
    return float(th[i - 1] + (v[i - 1] - 0.5) / (v[i - 1] - v[i]) * (th[i] - th[i - 1]))


# --- Lemma 7 / F.17's descent direction ----------------------------------------------------


def sign_flip(net: Net, teacher: Teacher) -> Net:
    """Lemma F.14: flip ``w_j -> -w_j`` whenever ``w_j.w*_i < 0`` for its nearest teacher
    (up to sign) and add ``a_j w_j`` to ``beta``: the function, the loss and ``L_lambda`` are
    unchanged, and Assumption F.1 holds."""
    U = _unit(teacher.W)
    owner, _ = angle_to_teachers(net.W, U)
    s = np.sign(np.sum(net.W * U[owner], 1))
    s[s == 0] = 1.0
    flip = s < 0
    beta = net.beta + (net.a[flip, None] * net.W[flip]).sum(0)
    return Net(net.a.copy(), net.W * s[:, None], net.alpha, beta)


def q_weights(net: Net, teacher: Teacher, delta_close: float) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, q)`` of the proof of Lemma 6: ``q_ij = a_j a*_i / sum_{T_{i,+}} a_j^2`` for
    ``j`` in ``T_{i,+}(delta_close)`` (same sign as ``a*_i``, within ``delta_close``), else 0.
    A teacher with no such neuron gets no ``q`` (the lemma's condition (1) then fails)."""
    U = _unit(teacher.W)
    owner, delta = angle_to_teachers(net.W, U)
    plus = (delta <= delta_close) & (np.sign(net.a) == np.sign(teacher.a[owner]))
    q = np.zeros(len(net.a))
    for i in range(len(U)):
        sel = plus & (owner == i)
        if sel.any():
            q[sel] = net.a[sel] * teacher.a[i] / np.sum(net.a[sel] ** 2)
    return owner, q


def descent_direction(
    net: Net, teacher: Teacher, delta_close: float
) -> tuple[Net, np.ndarray, np.ndarray]:
    """The direction ``D`` of Lemma F.17 at ``net`` (assumed sign-flipped, Assumption F.1):
    ``D_a = 0``, ``D_alpha = alpha + alpha_*``, ``D_beta = beta + beta_*``,
    ``D_{w_j} = w_j - q_ij w*_i`` (``w*_i`` the unit teacher direction scaled by ``||w*_i||``).
    Returns ``(D, owner, q)``; moving along ``-D`` takes each ``w_j`` towards ``q_ij w*_i``."""
    owner, q = q_weights(net, teacher, delta_close)
    target = q[:, None] * teacher.W[owner]
    D = Net(
        np.zeros_like(net.a),
        net.W - target,
        net.alpha + teacher.alpha_star,
        net.beta + teacher.beta_star,
    )
    return D, owner, q


def inner(g: Net, D: Net) -> float:
    """``<g, D>`` over all parameters."""
    return float(g.a @ D.a + np.sum(g.W * D.W) + g.alpha * D.alpha + g.beta @ D.beta)


# --- the certificate's constants on the whole sphere of S_* ----------------------------------


def sphere_directions(basis: np.ndarray, count: int) -> np.ndarray:
    """About ``count`` unit directions covering the unit sphere of ``S_*`` (orthonormal
    ``basis`` (d, r), ``r <= 3``) up to sign: the grid on which ``rho_eta`` is measured."""
    from .features import sphere_grid

    r = basis.shape[1]
    if r == 2:  # midpoints, so that no grid point is a teacher direction by accident
        th = (np.arange(count) + 0.5) * math.pi / count
        return np.stack([np.cos(th), np.sin(th)], 1) @ basis.T
    return sphere_grid(r, count) @ basis.T


def full_sphere_directions(basis: np.ndarray, d: int, count: int, n_phi: int = 48) -> np.ndarray:
    """Directions covering the whole unit sphere of ``R^d`` as far as the certificate can
    tell them apart: ``eta(w)`` and the angles to the teachers depend on ``w = cos(phi) v +
    sin(phi) n`` (``v`` on the sphere of ``S_*``, ``n`` orthogonal to ``S_*``) only through
    ``v`` and ``phi``, so one ``n`` suffices. ``phi`` runs over ``n_phi`` points of
    ``[0, pi/2]`` (only ``phi = 0`` when ``d = r``)."""
    V = sphere_directions(basis, count)
    r = basis.shape[1]
    if d <= r:
        return V
    q, _ = np.linalg.qr(np.concatenate([basis, np.eye(d)], 1))
    n = q[:, r]
    n = n - basis @ (basis.T @ n)
    n /= np.linalg.norm(n)
    phi = np.linspace(0, math.pi / 2, n_phi)
    return (np.cos(phi)[:, None, None] * V[None] + np.sin(phi)[:, None, None] * n).reshape(-1, d)


def best_certificate(teacher: Teacher, ells=(2, 4, 6, 8, 10), count: int = 1440, n_phi: int = 24):
    """The Appendix G certificate that gives Lemma F.5 its smallest constant: among the orders
    ``ells`` whose ``rho_eta`` is positive on the whole sphere of ``R^d``
    (:func:`full_sphere_directions`: Definition 1 asks ``|eta(w)| <= 1 - rho_eta delta^2`` for
    every unit ``w``, also out of ``S_*``, where ``delta`` reaches ``pi/2``, so that
    ``rho_eta <= 4/pi^2`` once ``d > r``), the one minimizing ``||p||^2 / rho_eta``. Returns
    ``(certificate, rho_eta, ||p||)``, or ``(None, nan, nan)`` when no order is non-degenerate
    on the grid. Every non-degenerate certificate makes Lemmas 9, F.3-F.5 hold; this one
    makes their bounds tightest. Chapters ``paper_b/stage3`` and ``paper_b/certificates``."""
    W = full_sphere_directions(teacher.info["basis"], teacher.d, count, n_phi)
    best = (None, math.nan, math.nan)
    score = math.inf
    for ell in ells:
        try:
            C = solve(teacher, ell)
        except np.linalg.LinAlgError:
            continue
        rho, _ = rho_eta(C, W)
        p2 = C.p_norm2()
        if rho > 0 and p2 > 0 and p2 / rho < score:
            score, best = p2 / rho, (C, rho, math.sqrt(p2))
    return best


# --- Lemma 9 (F.2), Lemma F.3-F.5 on measures --------------------------------------------------


def measure_of(net: Net) -> tuple[np.ndarray, np.ndarray]:
    """The measure ``mu = sum_j a_j ||w_j|| delta_{wbar_j}`` of a network: ``(U, c)``."""
    n = np.linalg.norm(net.W, axis=1)
    return net.W / np.maximum(n, 1e-300)[:, None], net.a * n


def measure_loss(teacher: Teacher, U: np.ndarray, c: np.ndarray) -> float:
    """``L(mu) = E[(f_mu - f_mu*)^2]`` with ``relu_{>=2}`` (eq. (6)) for ``mu = sum c_j
    delta_{u_j}`` (unit rows ``U``)."""
    from .features import lasso_quadratic

    G, b, y2 = lasso_quadratic(np.atleast_2d(U), np.ones(len(c)), teacher)
    return max(float(c @ G @ c - 2 * b @ c + y2), 0.0)


def lemma9_terms(cert: Certificate, rho: float, teacher: Teacher, U, *, c) -> dict:
    """Both sides of Lemma 9 (F.2) for ``mu = sum c_j delta_{u_j}``, with ``mu* = sum a*_i
    ||w*_i|| delta_{wbar*_i}``: (1) ``|<eta, mu - mu*>| <= ||p|| sqrt(L(mu))`` and (2)
    ``|<eta, mu>| <= |mu|_1 - rho_eta sum_i int_{T_i} delta^2 d|mu|``; also ``<eta, mu*>``
    against ``|mu*|_1`` (Lemma 9 (1), exact by interpolation). Chapter ``paper_b/certificates``."""
    U = np.atleast_2d(np.asarray(U, dtype=np.float64))
    c = np.asarray(c, dtype=np.float64)
    cs = teacher.a * np.linalg.norm(teacher.W, axis=1)
    pair = float(cert.eta(U) @ c)
    pair_star = float(cert.eta(teacher.W) @ cs)
    _, delta = angle_to_teachers(U, cert.U)
    far = float(np.abs(c) @ delta**2)
    L = measure_loss(teacher, U, c)
    return {
        "pair": pair,
        "pair_star": pair_star,
        "mass_star": float(np.abs(cs).sum()),
        "mass": float(np.abs(c).sum()),
        "far": far,
        "loss": L,
        "lhs1": abs(pair - pair_star),
        "rhs1": math.sqrt(cert.p_norm2() * L),
        "lhs2": abs(pair),
        "rhs2": float(np.abs(c).sum()) - rho * far,
    }


def random_measure(teacher: Teacher, atoms: int, rng, spread: float = 0.5):
    """A random signed measure on the unit sphere of ``R^d`` for testing Lemma 9: half of the
    atoms near the teacher directions (angles up to ``spread``, in any direction of ``R^d``),
    half uniform; masses normal, the near atoms' signs mostly those of their teacher."""
    d = teacher.d
    Us = teacher.W / np.linalg.norm(teacher.W, axis=1, keepdims=True)
    k_near = atoms // 2
    owner = rng.integers(teacher.m, size=k_near)
    Z = rng.standard_normal((k_near, d))
    Z -= np.sum(Z * Us[owner], 1, keepdims=True) * Us[owner]
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    ang = spread * rng.random(k_near) ** 2
    near = np.cos(ang)[:, None] * Us[owner] + np.sin(ang)[:, None] * Z
    far = rng.standard_normal((atoms - k_near, d))
    far /= np.linalg.norm(far, axis=1, keepdims=True)
    U = np.concatenate([near, far])
    c = np.abs(rng.standard_normal(atoms)) * 0.5
    signs = np.concatenate(
        [
            np.where(rng.random(k_near) < 0.8, np.sign(teacher.a[owner]), 1.0),
            rng.choice([-1.0, 1.0], size=atoms - k_near),
        ]
    )
    return U, c * signs


# --- Lemma 7 / F.17 at a snapshot of Stage 3 ---------------------------------------------------


def lemma7_snapshot(
    net: Net, teacher: Teacher, lam: float, zeta: float, *, p_norm: float, close_factor: float = 1.0
) -> dict:
    """Lemma F.17 (Lemma 7) at one network, after the sign flip of Lemma F.14: the direction
    ``D`` of :func:`descent_direction` with ``delta_close = close_factor (zeta +
    lambda^2)^(1/3)`` (Lemma F.6's radius), ``<grad L_lambda, D>``, the same sum with the
    printed ``grad_{w_i}`` (the gradient of student neuron ``i`` for teacher ``i``, instead of
    neuron ``j``'s), and every hypothesis of the lemma read with hidden constants 1:
    ``window`` (Lemma 6's ``lambda^2 <= zeta <= lambda^(9/5)``), ``small`` (Lemma F.4 (ii),
    used through F.12: ``lambda <= ||a*||_1 / ||p||^2`` and ``zeta <= lambda ||a*||_1``),
    ``balanced`` ((i): ``| ||W||^2 - ||a||^2 | <= zeta/lambda``, ``sum (|a_j| - ||w_j||)^2 <=
    (zeta/lambda)^2``), ``no_cancellation`` ((ii): the opposite-sign mass within ``delta_sign =
    lambda / zeta^(1/2)`` of each teacher is at most ``zeta^(5/6) / lambda``, and
    ``delta_close < delta_sign``), ``fitted`` ((iii): ``(alpha - alpha^)^2 <= zeta``,
    ``||beta - beta^||^2 <= zeta``) and ``covered`` (condition (1) on ``q``: every teacher has a
    neuron of its sign within ``delta_close``). Chapter ``paper_b/certificates``."""
    from . import population as pop

    nf = sign_flip(net, teacher)
    z = max(zeta, 0.0)
    d_close = close_factor * (z + lam**2) ** (1 / 3)
    D, owner, q = descent_direction(nf, teacher, d_close)
    g = pop.grad(nf, teacher, lam)
    inner_ok = inner(g, D)
    printed = g.alpha * D.alpha + float(g.beta @ D.beta) + float(np.sum(g.W[owner] * D.W))
    a_star = float(np.abs(teacher.a).sum())
    U = _unit(teacher.W)
    _, delta = angle_to_teachers(nf.W, U)
    n = np.linalg.norm(nf.W, axis=1)
    d_sign = lam / math.sqrt(z) if z > 0 else math.inf
    opposite = (delta <= d_sign) & (np.sign(nf.a) != np.sign(teacher.a[owner]))
    cancel = max(
        float(np.sum(np.abs(nf.a[opposite & (owner == i)] * n[opposite & (owner == i)])))
        for i in range(teacher.m)
    )
    conditions = {
        "window": lam**2 <= z <= lam**1.8,
        "small": lam <= a_star / p_norm**2 and z <= lam * a_star,
        "balanced": z > 0
        and abs(np.sum(nf.W**2) - nf.a @ nf.a) <= z / lam
        and float(np.sum((np.abs(nf.a) - n) ** 2)) <= (z / lam) ** 2,
        "no_cancellation": z > 0 and cancel <= z ** (5 / 6) / lam and d_close < d_sign,
        "fitted": (nf.alpha - pop.alpha_hat(nf)) ** 2 <= z
        and float(np.sum((nf.beta - pop.beta_hat(nf)) ** 2)) <= z,
        "covered": all(bool(np.any((owner == i) & (q > 0))) for i in range(teacher.m)),
    }
    return {
        "inner": inner_ok,
        "printed": printed,
        "delta_close": d_close,
        "applies": all(conditions.values()),
        **conditions,
        "q_sums": np.array([np.sum(nf.a[owner == i] * q[owner == i]) for i in range(teacher.m)]),
        "q_nonnegative": bool(np.all(q >= 0)),
    }


@functools.lru_cache(maxsize=4)
def _abs_relu_coefficient_sums(k_max: int) -> np.ndarray:
    """``cum[k] = sum_{j < k} |sigma_j|`` for ``k <= k_max + 1`` (vectorized Lemma A.1)."""
    from scipy.special import gammaln

    k = np.arange(k_max + 1, dtype=np.float64)
    v = np.zeros(k_max + 1)
    even = (k >= 2) & (k % 2 == 0)
    ke = k[even]
    v[even] = np.exp(
        gammaln(ke - 1)
        - 0.5 * gammaln(ke + 1)
        - (ke / 2 - 1) * math.log(2)
        - gammaln(ke / 2)
        - 0.5 * math.log(2 * math.pi)
    )
    v[0], v[1] = 1 / math.sqrt(2 * math.pi), 0.5
    return np.concatenate([[0.0], np.cumsum(v)])


def lemma10_proof_radius(loss: float, a_i: float, a_l1: float, lo: float = 1e-2) -> float:
    """The radius that the proof of Lemma F.6 (Lemma 10) makes explicit: the smallest
    ``delta`` (bisection) with ``sqrt(L ell) < |a*_i| / 4 sum_{ell <= k < 2 ell} |sigma_k|``
    for ``ell = ceil((5 / delta^2) log(16 ||a*||_1 / |a*_i|))``. Whenever ``|mu|_1 <= 3
    ||a*||_1`` the proof shows ``sign(a*_i) mu(T_i(delta)) >= |a*_i| / 2`` at every such
    ``delta``; ``inf`` when no ``delta <= pi/2`` qualifies (the loss is too large for the
    proof to say anything). Chapter ``paper_b/stage3``."""
    logf = math.log(16 * a_l1 / abs(a_i))

    def ell(delta):
        return math.ceil(5 / delta**2 * logf)

    cum = _abs_relu_coefficient_sums(2 * ell(lo))

    def ok(delta):
        n = ell(delta)
        return math.sqrt(max(loss, 0.0) * n) < abs(a_i) / 4 * (cum[2 * n] - cum[n])

    hi = math.pi / 2
    if not ok(hi):
        return math.inf
    if ok(lo):
        return lo
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
