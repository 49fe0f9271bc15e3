"""Teachers for Paper B that satisfy Assumptions 1-3, with their constants reported.

Assumption 1: the unit teacher neurons span an ``r``-dimensional subspace ``S_*`` of ``R^d``.
Assumption 2: they are ``Delta``-separated. Because ``relu_{>=2}`` is even, ``w`` and ``-w``
give the same preprocessed target (``relu(z) - relu(-z) = z`` is linear and removed by the
preprocessing), so separation is measured up to sign: ``Delta = min_{i != j} arccos|w_i.w_j|``.
Assumption 3: ``H = sum a*_i w*_i w*_i^T`` has rank ``r``; ``kappa = |lambda_r(H)|``.

:func:`prototype` and :func:`random_teacher` meet the three assumptions; :func:`degenerate`
breaks Assumption 3 on purpose (``rank H = r - 1``), so that a page can show what the
assumption is for; :func:`assumption_values` measures them (the chapters state them as
hypotheses: :func:`twolayer.paper_b.chapters.assumptions`). Used in
{ref}`chapter-paperb-hermite`, {ref}`chapter-paperb-stage1` and every later Paper B chapter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .kernels import INV_SQRT_2PI, kappa2, relu, unit_rows


@dataclass
class Teacher:
    """``f_*(x) = sum_i a_i relu(w_i.x) + w0.x + b0`` (rows of ``W`` are the ``w_i``)."""

    a: np.ndarray
    W: np.ndarray
    w0: np.ndarray | None = None
    b0: float = 0.0
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        self.a = np.asarray(self.a, dtype=np.float64)
        self.W = np.atleast_2d(np.asarray(self.W, dtype=np.float64))
        if self.w0 is None:
            self.w0 = np.zeros(self.W.shape[1])

    @property
    def d(self) -> int:
        return self.W.shape[1]

    @property
    def m(self) -> int:
        return self.W.shape[0]

    @property
    def alpha_star(self) -> float:
        """``E[y] = sum a_i ||w_i|| / sqrt(2 pi) + b0``."""
        return float(self.a @ np.linalg.norm(self.W, axis=1)) * INV_SQRT_2PI + self.b0

    @property
    def beta_star(self) -> np.ndarray:
        """``E[y x] = sum a_i w_i / 2 + w0``."""
        return 0.5 * self.a @ self.W + self.w0

    def H(self) -> np.ndarray:
        """``H = sum a_i w_i w_i^T`` (Assumption 3)."""
        return (self.W.T * self.a) @ self.W

    def __call__(self, X):
        return relu(X @ self.W.T) @ self.a + X @ self.w0 + self.b0

    def y_tilde(self, X):
        """Preprocessed label ``y - alpha_* - beta_*.x`` (eq. (3))."""
        return self(X) - self.alpha_star - X @ self.beta_star

    def target_norm2(self) -> float:
        """``E[y~^2] = sum_ij a_i a_j ||w_i|| ||w_j|| kappa2(t_ij)``."""
        U, n = unit_rows(self.W)
        c = self.a * n
        return float(c @ kappa2(U @ U.T) @ c)


def angles_up_to_sign(U, V) -> np.ndarray:
    """``arccos |u.v|`` for unit rows ``U`` and ``V`` (matrix ``len(U) x len(V)``)."""
    return np.arccos(np.clip(np.abs(U @ V.T), 0.0, 1.0))


def constants(teacher: Teacher) -> dict:
    """``r`` (numerical rank of the span), ``Delta`` (up to sign), ``kappa`` and H's spectrum."""
    U = teacher.W / np.linalg.norm(teacher.W, axis=1, keepdims=True)
    sv = np.linalg.svd(U, compute_uv=False)
    r = int(np.sum(sv > 1e-10 * sv[0]))
    A = angles_up_to_sign(U, U)
    np.fill_diagonal(A, np.inf)
    ev = np.linalg.eigvalsh(teacher.H())
    ev = ev[np.argsort(-np.abs(ev))]
    rank_H = int(np.sum(np.abs(ev) > 1e-10 * np.abs(ev[0])))
    return {
        "r": r,
        "Delta": float(A.min()) if teacher.m > 1 else math.pi / 2,
        "kappa": float(abs(ev[r - 1])),
        "rank_H": rank_H,
        "H_eigenvalues": ev[:r].tolist(),
    }


def random_subspace(d: int, r: int, rng) -> np.ndarray:
    """An orthonormal basis ``(d, r)`` of a uniformly random ``r``-dimensional subspace."""
    q, _ = np.linalg.qr(rng.standard_normal((d, r)))
    return q


def prototype(d: int, seed: int) -> Teacher:
    """Three unit neurons at angles ``phi + {0, 60, 120}`` degrees in a random plane, with
    ``a* = (1, -1, 1)`` (``H`` has eigenvalues 1.5 and -0.5, ``kappa = 0.5``, ``Delta = 60``
    degrees); the plane and the offset ``phi`` depend on ``seed``."""
    rng = np.random.default_rng([seed, 7])
    B = random_subspace(d, 2, rng)
    phi = rng.uniform(0, math.pi / 3)
    ang = phi + np.array([0.0, math.pi / 3, 2 * math.pi / 3])
    W = np.stack([np.cos(ang), np.sin(ang)], 1) @ B.T
    t = Teacher(np.array([1.0, -1.0, 1.0]), W, info={"basis": B})
    t.info.update(constants(t))
    return t


def random_teacher(
    d: int,
    r: int,
    m_star: int,
    seed: int,
    *,
    min_separation: float = math.radians(40),
    min_kappa: float = 0.3,
    max_tries: int = 10_000,
) -> Teacher:
    """A teacher with ``m_star`` unit neurons drawn uniformly in a random ``r``-dimensional
    subspace, output weights ``+-1`` (random signs), redrawn until ``Delta >= min_separation``
    (up to sign), ``rank H = r`` and ``kappa >= min_kappa``. Deterministic in ``seed``."""
    if m_star < r:
        raise ValueError(f"m_star={m_star} < r={r}: H cannot have rank r")
    rng = np.random.default_rng([seed, 11])
    # the shape (directions in S_*'s coordinates, signs) depends on seed, r, m_star only; the
    # embedding of S_* in R^d on (seed, d): the same teacher can be placed in any dimension
    B = random_subspace(d, r, np.random.default_rng([seed, 12, d]))
    for _ in range(max_tries):
        C = rng.standard_normal((m_star, r))
        C /= np.linalg.norm(C, axis=1, keepdims=True)
        a = rng.choice([-1.0, 1.0], size=m_star)
        t = Teacher(a, C @ B.T, info={"basis": B})
        c = constants(t)
        if (
            c["r"] == r
            and c["rank_H"] == r
            and c["Delta"] >= min_separation
            and c["kappa"] >= min_kappa
        ):
            t.info.update(c)
            return t
    raise RuntimeError("no teacher met the separation and kappa constraints; relax them")


def degenerate(
    d: int,
    r: int,
    m_star: int,
    seed: int,
    *,
    min_separation: float = math.radians(40),
    max_tries: int = 10_000,
) -> Teacher:
    """A teacher that meets Assumptions 1 and 2 but **not** Assumption 3: ``m_star`` unit
    neurons in a random ``r``-dimensional subspace, ``Delta >= min_separation``, and output
    weights chosen so that ``H = sum a_i w_i w_i^T`` is a rank-``(r - 1)`` projection in
    ``S_*`` (rescaled so that ``max |a_i| = 1``). Needs ``m_star >= r (r + 1) / 2`` (the
    dimension of the symmetric ``r x r`` matrices) so that any such ``H`` can be reached.
    Deterministic in ``seed``."""
    need = r * (r + 1) // 2
    if m_star < need:
        raise ValueError(f"m_star={m_star} < r(r+1)/2={need}: H cannot be prescribed")
    rng = np.random.default_rng([seed, 13])
    B = random_subspace(d, r, np.random.default_rng([seed, 14, d]))
    iu = np.triu_indices(r)
    for _ in range(max_tries):
        C = rng.standard_normal((m_star, r))
        C /= np.linalg.norm(C, axis=1, keepdims=True)
        A = angles_up_to_sign(C, C)
        np.fill_diagonal(A, np.inf)
        if A.min() < min_separation:
            continue
        Q = random_subspace(r, r, rng)
        target = Q[:, : r - 1] @ Q[:, : r - 1].T  # rank r - 1 in S_*'s coordinates
        # a -> sum_i a_i c_i c_i^T, on the upper triangle: a linear system (least norm)
        M = np.stack([np.outer(c, c)[iu] for c in C], 1)
        a, *_ = np.linalg.lstsq(M, target[iu], rcond=None)
        if np.abs(M @ a - target[iu]).max() > 1e-10 or np.abs(a).min() < 0.05 * np.abs(a).max():
            continue
        t = Teacher(a / np.abs(a).max(), C @ B.T, info={"basis": B})
        c = constants(t)
        if c["r"] == r and c["rank_H"] == r - 1:
            t.info.update(c)
            return t
    raise RuntimeError("no degenerate teacher found; relax min_separation")


# The most teacher neurons that random_teacher / degenerate place at 40 degrees from each other
# (up to sign) in a few thousand draws: 4 lines fit in a half circle, 6 are found quickly in R^3.
MAX_M_STAR = {2: 4, 3: 6}


def m_star_range(kind: str, r: int) -> tuple[int, int]:
    """The teacher widths ``make(kind, d, r, m_star, seed)`` supports, for a page's
    :class:`~twolayer.core.params.Constraint`: ``rank H = r`` needs ``m_star >= r``, the
    degenerate teacher ``m_star >= r (r + 1) / 2``; the prototype has ``m_star = 3``."""
    if kind == "prototype":
        return (3, 3) if r == 2 else (1, 0)  # r = 2 only: an empty range otherwise
    lo = r * (r + 1) // 2 if kind == "degenerate" else r
    return (lo, MAX_M_STAR[r])


def make(kind: str, d: int, r: int, m_star: int, *, seed: int) -> Teacher:
    """``kind = "random"``: :func:`random_teacher`; ``"degenerate"``: :func:`degenerate`;
    ``"prototype"``: :func:`prototype` (``r = 2``, ``m_star = 3`` only)."""
    if kind == "random":
        return random_teacher(d, r, m_star, seed)
    if kind == "degenerate":
        return degenerate(d, r, m_star, seed)
    if kind == "prototype":
        if (r, m_star) != (2, 3):
            raise ValueError("the prototype teacher has r = 2 and m_star = 3")
        return prototype(d, seed)
    raise ValueError(f"unknown teacher kind {kind!r}")


KAPPA_RELATIVE_FLOOR = 1e-8  # kappa / |lambda_1(H)| below this is rank deficiency up to rounding


def assumption_values(teachers) -> dict:
    """The worst case over ``teachers`` of what Assumptions 1-3 require: ``r / d`` (below 1:
    ``S_*`` is a proper subspace, the computable part of ``r << d``), ``Delta`` (above 0) and
    ``kappa / |lambda_1(H)|`` (above rounding: ``rank H = r``)."""
    if isinstance(teachers, Teacher):
        teachers = [teachers]
    cs = [constants(t) for t in teachers]
    rel = [c["kappa"] / max(abs(c["H_eigenvalues"][0]), 1e-300) for c in cs]
    return {
        "r_over_d": max(c["r"] / t.d for c, t in zip(cs, teachers, strict=True)),
        "Delta": min(c["Delta"] for c in cs),
        "kappa_rel": min(rel),
        "kappa": min(c["kappa"] for c in cs),
        "r": max(c["r"] for c in cs),
        "rank_H": min(c["rank_H"] for c in cs),
        "deficient": sum(r < KAPPA_RELATIVE_FLOOR for r in rel),
        "count": len(cs),
    }
