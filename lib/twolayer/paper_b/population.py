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
zero gradient) for exactly aligned neurons.

Backends. The loss and the gradient have one implementation, :func:`loss_and_grad_batched`,
written against the Python array API standard (through ``array-api-compat``): it runs on NumPy
arrays (what the chapters pass, through :func:`loss` and :func:`grad`) and, unchanged, on torch
tensors on any device (a GPU), in float64, batched over a leading axis of ``B``
configurations (seeds, teachers, widths: see :class:`NetBatch` and :func:`teacher_arrays`).
torch is never imported unless a torch tensor is passed in. Each evaluation computes
``arccos`` and ``sqrt(1 - t^2)`` once per pair of neurons and reads the loss off the same
contractions as the gradient.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import array_api_compat
import numpy as np

from .kernels import INV_SQRT_2PI, kappa2, relu, unit_rows
from .teacher import Teacher

TWO_PI = 2.0 * math.pi
# NumPy >= 2 implements the array API standard in its own namespace: use it directly for NumPy
# arrays (array-api-compat's NumPy wrappers add Python overhead, e.g. to clip); other arrays
# (torch, CuPy, ...) go through array-api-compat.
_NUMPY_IS_ARRAY_API = int(np.__version__.split(".")[0]) >= 2


def _namespace(*arrays):
    if _NUMPY_IS_ARRAY_API and all(isinstance(x, np.ndarray) for x in arrays):
        return np
    return array_api_compat.array_namespace(*arrays)


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
        self.beta = (
            np.zeros(self.W.shape[1])
            if self.beta is None
            else np.asarray(self.beta, dtype=np.float64)
        )

    def copy(self) -> Net:
        return Net(self.a.copy(), self.W.copy(), self.alpha, self.beta.copy())

    def __call__(self, X):
        return relu(X @ self.W.T) @ self.a + self.alpha + X @ self.beta

    def flat(self) -> np.ndarray:
        return np.concatenate([self.a, self.W.ravel(), [self.alpha], self.beta])

    @staticmethod
    def unflat(v, m, d) -> Net:
        v = np.asarray(v, dtype=np.float64)
        return Net(v[:m], v[m : m + m * d].reshape(m, d), v[m + m * d], v[m + m * d + 1 :])


# --- batches of students and teachers, in any array namespace --------------------------------


def _like(x: np.ndarray, like):
    """``x`` (NumPy) as an array of ``like``'s namespace, device and dtype (NumPy if None)."""
    if like is None:
        return np.asarray(x, dtype=np.float64)
    xp = _namespace(like)
    return xp.asarray(x, dtype=like.dtype, device=array_api_compat.device(like))


def to_numpy(x) -> np.ndarray:
    """Any array (NumPy, torch on any device, ...) as a NumPy array on the host."""
    if array_api_compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    return np.asarray(array_api_compat.to_device(x, "cpu") if not isinstance(x, np.ndarray) else x)


@dataclass
class NetBatch:
    """``B`` students as arrays with a leading batch axis: ``a (B, m)``, ``W (B, m, d)``,
    ``alpha (B,)``, ``beta (B, d)``, all of one namespace, device and dtype.

    Students of different widths ``m`` or dimensions ``d`` are padded with zero neurons
    (``a_i = 0``, ``w_i = 0``) and zero coordinates: a zero neuron contributes nothing to the
    loss and gets a zero gradient, and a zero coordinate of every ``w_i``, of ``beta`` and of
    every teacher neuron stays zero, so padding changes no number of the real entries and
    gradient descent keeps the padding at zero."""

    a: Any
    W: Any
    alpha: Any
    beta: Any
    widths: tuple[int, ...] = ()
    dims: tuple[int, ...] = ()

    @staticmethod
    def from_nets(nets: Sequence[Net] | Net, like=None) -> NetBatch:
        """Stack (and pad) :class:`Net` s; ``like``: an array whose namespace, device and dtype
        the batch takes (e.g. ``torch.empty(0, dtype=torch.float64, device="cuda")``);
        ``None`` keeps NumPy."""
        nets = [nets] if isinstance(nets, Net) else list(nets)
        B = len(nets)
        m = max(n.W.shape[0] for n in nets)
        d = max(n.W.shape[1] for n in nets)
        a, W = np.zeros((B, m)), np.zeros((B, m, d))
        alpha, beta = np.zeros(B), np.zeros((B, d))
        for b, n in enumerate(nets):
            mb, db = n.W.shape
            a[b, :mb], W[b, :mb, :db], alpha[b], beta[b, :db] = n.a, n.W, n.alpha, n.beta
        return NetBatch(
            _like(a, like),
            _like(W, like),
            _like(alpha, like),
            _like(beta, like),
            tuple(n.W.shape[0] for n in nets),
            tuple(n.W.shape[1] for n in nets),
        )

    def to_nets(self) -> list[Net]:
        """Back to NumPy :class:`Net` s, padding removed (one transfer per array)."""
        a, W, alpha, beta = (to_numpy(x) for x in (self.a, self.W, self.alpha, self.beta))
        widths = self.widths or (W.shape[1],) * W.shape[0]
        dims = self.dims or (W.shape[2],) * W.shape[0]
        return [
            Net(a[b, :m].copy(), W[b, :m, :d].copy(), float(alpha[b]), beta[b, :d].copy())
            for b, (m, d) in enumerate(zip(widths, dims))
        ]

    def arrays(self) -> tuple:
        return self.a, self.W, self.alpha, self.beta


@dataclass
class TeacherArrays:
    """``B`` teachers as arrays: unit directions ``U (B, k, d)``, weights ``c = a* ||w*||``
    ``(B, k)`` and ``E[y~^2]`` ``norm2 (B,)``; fewer neurons are padded with ``c = 0``."""

    U: Any
    c: Any
    norm2: Any


def teacher_arrays(
    teachers: Teacher | Sequence[Teacher], like=None, batch: int | None = None, d: int | None = None
) -> TeacherArrays:
    """:class:`TeacherArrays` of one teacher (repeated ``batch`` times, default 1) or of one
    teacher per configuration, in ``like``'s namespace, device and dtype (NumPy if ``None``),
    padded to dimension ``d`` (default: the largest teacher's)."""
    ts = [teachers] * (batch or 1) if isinstance(teachers, Teacher) else list(teachers)
    if batch is not None and len(ts) != batch:
        raise ValueError(f"{len(ts)} teachers for {batch} configurations")
    k = max(t.m for t in ts)
    d = max([t.d for t in ts] + [d or 0])
    U, c, norm2 = np.zeros((len(ts), k, d)), np.zeros((len(ts), k)), np.zeros(len(ts))
    for b, t in enumerate(ts):
        Ub, nb = unit_rows(t.W)
        U[b, : t.m, : t.d], c[b, : t.m], norm2[b] = Ub, t.a * nb, t.target_norm2()
    return TeacherArrays(_like(U, like), _like(c, like), _like(norm2, like))


# --- the loss and its gradient, batched, in any array namespace ------------------------------


def _tiny(dtype) -> float:
    """Norms below this count as zero (``1e-300`` in float64 as before; float32's smallest
    normal number, where ``1e-300`` is not representable)."""
    return 1e-300 if dtype == np.float64 or str(dtype).endswith("float64") else 1.17549435e-38


def loss_and_grad_batched(
    a,
    W,
    alpha,
    beta,
    *,
    teacher: TeacherArrays,
    lam=0.0,
    want_grad: bool = True,
    want_loss: bool = True,
):
    """Square loss ``L`` ``(B,)`` and the gradient of ``L_lambda`` in ``(a, W, alpha, beta)``
    for ``B`` students at once: ``a (B, m)``, ``W (B, m, d)``, ``alpha (B,)``, ``beta (B, d)``
    (NumPy, or torch tensors on any device: the result follows them), ``lam`` a float or
    ``(B,)``. Returns ``(L, (ga, gW, galpha, gbeta))`` (the gradient ``None`` when
    ``want_grad=False``, the loss ``None`` when ``want_loss=False``).

    With ``T = U U^T``, ``S = sqrt(1 - T^2)``, ``P = pi - arccos T`` and ``c = a ||w||``:
    ``k(T) c = (S c + diag(U (P (c U))^T)) / (2 pi)`` and
    ``sum_j c_j grad_{w_i}[||w_i|| ||w_j|| k(t_ij)] = ((S c)_i wbar_i + (P (c U))_i) / (2 pi)``,
    no ``(m, m, d)`` tensor and no ``1/sqrt(1 - t^2)``; against the teacher's ``k`` neurons
    alike, with ``kappa2(t) = k(t) - 1/(2 pi) - t/4``. ``arccos`` and ``sqrt`` are evaluated
    once per pair of neurons (the previous NumPy code evaluated them twice).
    """
    xp = _namespace(a, W, alpha, beta, teacher.U)
    mT = xp.matrix_transpose
    tiny = _tiny(W.dtype)
    n = xp.linalg.vector_norm(W, axis=-1)  # (B, m)
    U = W / xp.clip(n, tiny, None)[..., None]  # unit rows (0 for w_i = 0)
    c = a * n
    tU, tc = teacher.U, teacher.c
    # student-student: T, S, P on (B, m, m); student-teacher on (B, m, k)
    T = xp.clip(U @ mT(U), -1.0, 1.0)
    S = xp.sqrt(1.0 - T * T)
    P = math.pi - xp.acos(T)
    Ts = xp.clip(U @ mT(tU), -1.0, 1.0)
    Ss = xp.sqrt(1.0 - Ts * Ts)
    Ps = math.pi - xp.acos(Ts)
    Sc = (S @ c[..., None])[..., 0]  # (B, m)
    Ssc = (Ss @ tc[..., None])[..., 0]
    csum_s = xp.sum(tc, axis=-1)[..., None]  # (B, 1)
    # kappa2(Ts) cs = k(Ts) cs - sum(cs)/(2 pi) - (Ts cs)/4 (k small: elementwise on (B, m, k))
    K2s = (Ssc + ((Ps - 0.5 * math.pi) * Ts @ tc[..., None])[..., 0] - csum_s) / TWO_PI
    if want_grad:
        PcU = P @ (c[..., None] * U)  # (B, m, d)
        Kc = (Sc + xp.sum(U * PcU, axis=-1)) / TWO_PI  # k(T) c
    else:
        Kc = (Sc + ((P * T) @ c[..., None])[..., 0]) / TWO_PI
    aW = (a[..., None, :] @ W)[..., 0, :]  # sum_i a_i w_i, (B, d)
    csum = xp.sum(c, axis=-1)
    L = None
    if want_loss or not want_grad:
        ff = (
            xp.sum(c * Kc, axis=-1)
            + 2.0 * alpha * INV_SQRT_2PI * csum
            + xp.sum(beta * aW, axis=-1)
            + alpha * alpha
            + xp.sum(beta * beta, axis=-1)
        )
        fy = xp.sum(c * K2s, axis=-1)
        L = xp.clip(ff - 2.0 * fy + teacher.norm2, 0.0, None)
    if not want_grad:
        return L, None
    lam = _like_lam(lam, xp, W)
    Wbeta = (W @ beta[..., None])[..., 0]  # (B, m)
    ga = (
        2.0 * n * (Kc - K2s)
        + 2.0 * INV_SQRT_2PI * alpha[..., None] * n
        + Wbeta
        + lam[..., None] * a
    )
    # d/dw_i: 2 a_i [sum_j c_j dk_ij + alpha/sqrt(2pi) wbar_i - sum_j cs_j dkappa2_ij] + a_i beta
    own = (Sc - Ssc + csum_s) / TWO_PI + alpha[..., None] * INV_SQRT_2PI  # (B, m)
    cU_s = tc[..., None, :] @ tU  # (B, 1, d)
    PscU = Ps @ (tc[..., None] * tU)  # (B, m, d)
    cross = (PcU - PscU) / TWO_PI + 0.25 * cU_s  # (B, m, d)
    gW = (
        (2.0 * a)[..., None] * (own[..., None] * U + cross)
        + a[..., None] * beta[..., None, :]
        + lam[..., None, None] * W
    )
    galpha = 2.0 * (alpha + INV_SQRT_2PI * csum)  # 2 (alpha - alpha^)
    gbeta = 2.0 * beta + aW  # 2 (beta - beta^)
    return L, (ga, gW, galpha, gbeta)


def _like_lam(lam, xp, W):
    if isinstance(lam, (int, float)):
        return xp.full((W.shape[0],), float(lam), dtype=W.dtype, device=array_api_compat.device(W))
    return lam


def loss_batched(a, W, alpha, beta, *, teacher: TeacherArrays):
    """``L`` ``(B,)`` for ``B`` students (see :func:`loss_and_grad_batched`)."""
    return loss_and_grad_batched(a, W, alpha, beta, teacher=teacher, want_grad=False)[0]


def grad_batched(a, W, alpha, beta, *, teacher: TeacherArrays, lam=0.0):
    """``(ga, gW, galpha, gbeta)``: the gradient of ``L_lambda`` for ``B`` students."""
    return loss_and_grad_batched(a, W, alpha, beta, teacher=teacher, lam=lam, want_loss=False)[1]


@functools.lru_cache(maxsize=64)
def _teacher_cached(a: bytes, W: bytes, shape: tuple[int, int]) -> TeacherArrays:
    """One teacher's arrays (NumPy), keyed by its contents (a teacher changed in place is a
    new key): the per-network functions below do not recompute ``E[y~^2]`` at every call."""
    t = Teacher(
        np.frombuffer(a, dtype=np.float64), np.frombuffer(W, dtype=np.float64).reshape(shape)
    )
    return teacher_arrays(t)


def _one(net: Net, teacher: Teacher, lam: float, want_grad: bool, want_loss: bool = True):
    ta = _teacher_cached(teacher.a.tobytes(), teacher.W.tobytes(), teacher.W.shape)
    if teacher.d != net.W.shape[1]:
        raise ValueError(f"the student has d = {net.W.shape[1]}, the teacher d = {teacher.d}")
    # views with a batch axis of 1, no copies
    return loss_and_grad_batched(
        net.a[None],
        net.W[None],
        np.array([net.alpha]),
        net.beta[None],
        teacher=ta,
        lam=np.array([float(lam)]),
        want_grad=want_grad,
        want_loss=want_loss,
    )


# --- one network (NumPy): the chapters' interface -------------------------------------------


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
    U = np.concatenate([unit_rows(net.W)[0], unit_rows(teacher.W)[0]])
    c = np.concatenate(
        [net.a * np.linalg.norm(net.W, axis=1), -teacher.a * np.linalg.norm(teacher.W, axis=1)]
    )
    return max(float(c @ kappa2(U @ U.T) @ c), 0.0)


def loss(net: Net, teacher: Teacher) -> float:
    """Square loss ``L(theta) = E[(f(x; theta) - y~)^2]``, expanded term by term."""
    return float(_one(net, teacher, 0.0, want_grad=False)[0][0])


def regularized_loss(net: Net, teacher: Teacher, lam: float) -> float:
    """``L_lambda = L + lambda/2 (||a||^2 + ||W||_F^2)`` (eq. (2))."""
    return loss(net, teacher) + 0.5 * lam * (net.a @ net.a + np.sum(net.W**2))


def grad(net: Net, teacher: Teacher, lam: float = 0.0) -> Net:
    """Exact gradient of ``L_lambda`` in ``(a, W, alpha, beta)``, as a :class:`Net` (see
    :func:`loss_and_grad_batched` for the contractions)."""
    _, (ga, gW, galpha, gbeta) = _one(net, teacher, lam, want_grad=True, want_loss=False)
    return Net(ga[0], gW[0], float(galpha[0]), gbeta[0])


def loss_and_grad(net: Net, teacher: Teacher, lam: float = 0.0) -> tuple[float, Net]:
    """``(L, grad L_lambda)`` from one evaluation (the loss is read off the gradient's
    contractions)."""
    L, (ga, gW, galpha, gbeta) = _one(net, teacher, lam, want_grad=True)
    return float(L[0]), Net(ga[0], gW[0], float(galpha[0]), gbeta[0])


def grad_norm2(g: Net) -> float:
    return float(g.a @ g.a + np.sum(g.W**2) + g.alpha**2 + g.beta @ g.beta)


# --- Monte Carlo references ----------------------------------------------------------------


def mc_loss(net: Net, teacher: Teacher, n: int, seed: int, *, batch: int = 200_000):
    """Monte Carlo estimate of ``L`` and its standard error from ``n`` Gaussian inputs."""
    rng = np.random.default_rng(seed)
    s = s2 = 0.0
    done = 0
    while done < n:
        b = min(batch, n - done)
        X = rng.standard_normal((b, teacher.d))
        r2 = (net(X) - teacher.y_tilde(X)) ** 2
        s += r2.sum()
        s2 += (r2**2).sum()
        done += b
    mean = s / n
    var = max(s2 / n - mean**2, 0.0)
    return mean, math.sqrt(var / n)
