"""Theorem 4.2 of Paper A (one step of gradient descent to low stable rank), made explicit.

The copy of the paper lost the displays of Theorem 4.2 and of Assumption (A2); what follows is
our reading, stated as such on the chapter page. With ``R_max = max ||x_i||``,
``R_min = min ||x_i||``, ``R = R_max / R_min``, ``p = max_{i != k} |<x_i, x_k>|`` and a
``gamma``-leaky, ``H``-smooth activation:

* ``C_R = 10 R^2 / gamma^2 + 10`` (Appendix E);
* **data condition** of Theorem 4.2: ``R_min^2 >= 5 gamma^-2 C_R R^2 n p``;
* **(A1)** step size ``alpha <= gamma^2 / (5 n R_max^2 R^2 C_R max(1, H))``;
* **(A2)** ``w_j ~ N(0, omega^2 I_d)`` with ``omega`` small. The paper's explicit bound is lost;
  :func:`init_bound` gives ours: the largest ``omega`` at which, with probability ``1 - delta``,
  (a) ``|f(x_k; W0)| <= 1/50`` for every ``k`` (Lemma E.11(a)) and (b)
  ``||W0||_F + alpha ||grad L(W0) - grad L(0)||_F <= eps * alpha ||grad L(0)||_F``: the
  initialization is small against the first step.

Our derived bounds (proofs on the page, :func:`step1_bound`, :func:`trajectory_bound`):

* at ``W = 0`` every sigmoid loss is 1/2 and ``phi'(0) = (1 + gamma)/2``, so
  ``grad L(0) = -(1 + gamma)/(4 n) a (sum_i y_i x_i)^T`` has rank one; under (b),
  ``StableRank(W1) <= ((1 + eps)/(1 - eps))^2``;
* for every ``t >= 1`` and *every* step size, ``W_t - W0 = sum_i (a * beta_i) x_i^T`` with
  ``sign(beta_ij) = y_i`` and ``|beta_ij| in [gamma B_i, B_i]``; with ``rho = n p / R_min^2 < 1``
  this gives ``StableRank(W_t - W0) <= (1 + rho) / ((1 - rho) gamma^2)`` and, with the init,
  ``StableRank(W_t) <= ((sqrt(s) + eta) / (1 - eta))^2``, ``s = (1 + rho)/((1 - rho) gamma^2)``,
  ``eta = eps sqrt((1 + rho)/(1 - rho)) / (gamma (1 - eps))``.

At a Gaussian initialization ``StableRank(W0) ~ m d / (sqrt m + sqrt d)^2``
(:func:`gaussian_stable_rank`), of order ``min(m, d)``.

Item 1 (the risk goes to zero) made quantitative, our derivation (:func:`risk_bound`): the
loss is ``beta``-smooth with ``beta = R_max^2 (1/4 + H / sqrt m)`` (:func:`smoothness`), and
satisfies the proxy-PL inequality ``||grad L(W)||_F >= mu G(W)``, ``G = (1/n) sum_i g_i``,
``mu = gamma R_min^2 (1 - rho) / (R_max sqrt(n (1 + rho)))`` (:func:`proxy_pl_constant`); once
every margin is non-negative, ``g_i >= l_i / (2 log 2)``, so for ``alpha beta < 2`` and
``t >= 1``: ``L(t) <= 1 / (1/L(1) + kappa (t - 1))`` with
``kappa = alpha (1 - alpha beta / 2) mu^2 / (2 log 2)^2``.

Used by the chapter ``notebooks/paper_a/one_step_low_rank`` (with
:mod:`twolayer.paper_a.onestep`, which runs its experiments).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch

from .assumptions import data_statistics
from .data import Dataset, _check_pos_int, _rng, points_with_gram, random_signs


@dataclass(frozen=True)
class DataConstants:
    """The data-dependent constants of Theorem 4.2."""

    n: int
    R_min: float
    R_max: float
    p: float
    gamma: float
    H: float

    @property
    def R(self) -> float:
        return self.R_max / self.R_min

    @property
    def C_R(self) -> float:
        return 10.0 * self.R**2 / self.gamma**2 + 10.0

    @property
    def rho(self) -> float:
        """``n p / R_min^2``: the relative size of all cross terms (< 1 needed)."""
        return self.n * self.p / self.R_min**2

    @property
    def condition_ratio(self) -> float:
        """``5 gamma^-2 C_R R^2 n p / R_min^2``: the data condition holds iff this is <= 1."""
        return 5.0 * self.C_R * self.R**2 * self.n * self.p / (self.gamma**2 * self.R_min**2)

    @property
    def data_condition(self) -> bool:
        return self.condition_ratio <= 1.0

    @property
    def e11c_condition(self) -> bool:
        """Lemma E.11(c): ``||x_k||^2 >= 8 gamma^-2 n max_{i != k} |<x_i, x_k>|`` (checked
        with p)."""
        return self.R_min**2 >= 8.0 * self.n * self.p / self.gamma**2

    @property
    def step_bound(self) -> float:
        """(A1): the largest step size ``gamma^2 / (5 n R_max^2 R^2 C_R max(1, H))``."""
        return self.gamma**2 / (
            5.0 * self.n * self.R_max**2 * self.R**2 * self.C_R * max(1.0, self.H)
        )

    def as_dict(self) -> dict:
        return {
            **asdict(self),
            "R": self.R,
            "C_R": self.C_R,
            "rho": self.rho,
            "condition_ratio": self.condition_ratio,
            "data_condition": self.data_condition,
            "step_bound": self.step_bound,
        }


def data_constants(X, gamma: float, H: float = 0.25) -> DataConstants:
    """Theorem 4.2's constants of the rows of ``X`` (``n >= 2``)."""
    norms, p, _ = data_statistics(X, gamma)
    X = np.asarray(X)
    return DataConstants(
        int(X.shape[0]), float(norms.min()), float(norms.max()), float(p), float(gamma), float(H)
    )


def constructed_data(
    n: int,
    d: int,
    seed: int,
    gamma: float,
    *,
    ratio: float = 0.5,
    norm_range: tuple[float, float] = (1.0, 1.2),
    H: float = 0.25,
) -> Dataset:
    """Data satisfying Theorem 4.2's condition by construction, at any ``d >= n``.

    Norms are uniform on ``norm_range``; every off-diagonal inner product is ``+-c`` (random
    signs) with ``c = ratio * gamma^2 R_min^2 / (5 C_R R^2 n)``, so that
    :attr:`DataConstants.condition_ratio` equals ``ratio`` exactly. The points are a square root
    of this Gram matrix placed in ``R^d`` by a random orthonormal frame. Labels: fair coins.
    """
    n, d = _check_pos_int("n", n), _check_pos_int("d", d)
    if n < 2 or d < n:
        raise ValueError(f"constructed_data needs 2 <= n <= d, got n={n}, d={d}")
    if not (0 < gamma <= 1):
        raise ValueError(f"gamma must lie in (0, 1], got {gamma}")
    if not ratio > 0:
        raise ValueError(f"ratio must be positive, got {ratio}")
    lo, hi = (float(v) for v in norm_range)
    if not (0 < lo <= hi):
        raise ValueError(f"norm_range must satisfy 0 < lo <= hi, got {norm_range}")
    rng = _rng(seed)
    norms = rng.uniform(lo, hi, size=n) if hi > lo else np.full(n, lo)
    norms[0], norms[-1] = lo, hi  # R = hi/lo exactly, so the constants are the stated ones
    rmin, rmax = lo, hi
    R2 = (rmax / rmin) ** 2
    C_R = 10.0 * R2 / gamma**2 + 10.0
    c = ratio * gamma**2 * rmin**2 / (5.0 * C_R * R2 * n)
    X = points_with_gram(norms, c, d, rng, what=f"ratio={ratio} (n={n})")
    y = random_signs(n, rng)
    return Dataset(
        X,
        y,
        {
            "model": "theorem42_constructed",
            "n": n,
            "d": d,
            "seed": seed,
            "gamma": gamma,
            "ratio": ratio,
            "c": c,
        },
    )


# --- the stable rank at a Gaussian initialization ------------------------------------------


def gaussian_stable_rank(m: int, d: int) -> float:
    """``m d / (sqrt m + sqrt d)^2``: ``||G||_F^2 ~ m d`` over ``||G||_2^2 ~ (sqrt m + sqrt d)^2``
    for an ``m x d`` standard Gaussian ``G``; between ``min(m, d)/4`` and ``min(m, d)``."""
    return m * d / (math.sqrt(m) + math.sqrt(d)) ** 2


def gaussian_stable_rank_lower(m: int, d: int, delta: float) -> float:
    """A lower bound on ``StableRank(G)`` holding with probability ``>= 1 - delta``:
    ``||G||_F >= sqrt(md) - t`` and ``||G||_2 <= sqrt m + sqrt d + t`` with
    ``t = sqrt(2 log(2/delta))`` (both norms are 1-Lipschitz in ``G``; ``E||G||_2 <= sqrt m +
    sqrt d``, ``E||G||_F >= sqrt(md) - 1``, so we subtract one more)."""
    t = math.sqrt(2.0 * math.log(2.0 / delta))
    num = max(math.sqrt(m * d) - 1.0 - t, 0.0)
    return num**2 / (math.sqrt(m) + math.sqrt(d) + t) ** 2


# --- (A2): the initialization scale -----------------------------------------------------------


def grad_at_zero_norm(X, y, gamma: float) -> float:
    """``||grad L(0)||_F = (1 + gamma) ||sum_i y_i x_i|| / (4 n)`` (logistic loss, the smoothed
    leaky ReLU with ``phi'(0) = (1 + gamma)/2``, ``||a|| = 1``)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return (1.0 + gamma) * float(np.linalg.norm(X.T @ y)) / (4.0 * X.shape[0])


@dataclass(frozen=True)
class InitBound:
    omega_f: float  # (a): |f(x_k; W0)| <= 1/50
    omega_step: float  # (b): the init is eps-small against the first step
    eps: float
    delta: float

    @property
    def omega(self) -> float:
        return min(self.omega_f, self.omega_step)


def init_bound(
    m: int,
    d: int,
    consts: DataConstants,
    lr: float,
    *,
    grad0: float,
    eps: float = 0.05,
    delta: float = 1e-3,
) -> InitBound:
    """Our (A2): the largest ``omega`` for which, with probability ``>= 1 - delta``,

    (a) ``|f(x_k; W0)| <= ||W0||_2 R_max <= 1/50``, and
    (b) ``||W0||_F + lr ||grad L(W0) - grad L(0)||_F <= eps lr ||grad L(0)||_F``,

    using ``||W0||_2 <= omega S``, ``||W0||_F <= omega F`` with ``S = sqrt m + sqrt d + t``,
    ``F = sqrt(md) + t``, ``t = sqrt(2 log(2/delta))``, and
    ``||grad L(W0) - grad L(0)||_F <= R_max^2 ||W0||_2 (1/4 + H / (2 sqrt m))`` (the sigmoid is
    1/4-Lipschitz, ``phi'`` is ``H``-Lipschitz, ``|f(x; W)| <= ||W x||``)."""
    if not (0 < eps < 1):
        raise ValueError(f"eps must lie in (0, 1), got {eps}")
    t = math.sqrt(2.0 * math.log(2.0 / delta))
    S = math.sqrt(m) + math.sqrt(d) + t
    F = math.sqrt(m * d) + t
    omega_f = 1.0 / (50.0 * consts.R_max * S)
    lip = consts.R_max**2 * S * (0.25 + consts.H / (2.0 * math.sqrt(m)))
    omega_step = eps * lr * grad0 / (F + lr * lip)
    return InitBound(omega_f, omega_step, eps, delta)


def init_condition(
    net, W0: torch.Tensor, X: torch.Tensor, y: torch.Tensor, *, lr, gamma: float, eps: float
) -> dict[str, np.ndarray]:
    """The realized (A2) quantities of a batch ``W0`` ``(B, m, d)`` with step sizes ``lr``:
    ``max_k |f(x_k; W0)|`` and ``(||W0||_F + lr ||grad L(W0) - grad L(0)||_F) /
    (lr ||grad L(0)||_F)``, which (A2) keeps at most 1/50 and ``eps``."""
    from .losses import get_loss

    loss = get_loss("logistic")
    lr = torch.as_tensor(lr, dtype=W0.dtype, device=W0.device).reshape(-1)
    _, _, G = net.loss_and_grad(W0, X, y, loss)
    _, _, G0 = net.loss_and_grad(torch.zeros_like(W0), X, y, loss)
    g0 = torch.linalg.matrix_norm(G0)
    ratio = (torch.linalg.matrix_norm(W0) + lr * torch.linalg.matrix_norm(G - G0)) / (lr * g0)
    fmax = net.forward(W0, X).abs().amax(dim=-1)
    return {
        "f_max": fmax.detach().cpu().numpy(),
        "step_ratio": ratio.detach().cpu().numpy(),
        "holds": ((fmax <= 1 / 50) & (ratio <= eps)).cpu().numpy(),
    }


# --- the derived stable-rank bounds ---------------------------------------------------------------


def step1_bound(eps: float) -> float:
    """``((1 + eps)/(1 - eps))^2``: StableRank(W1) under (A2)(b)."""
    return ((1.0 + eps) / (1.0 - eps)) ** 2


def trajectory_bound(gamma: float, rho: float, eps: float) -> float:
    """``((sqrt(s) + eta)/(1 - eta))^2``: StableRank(W_t) for every ``t >= 1`` under (A2)(b),
    with ``s = (1 + rho)/((1 - rho) gamma^2)`` and ``eta = eps sqrt((1+rho)/(1-rho)) /
    (gamma (1 - eps))``. Independent of ``m``, ``d`` and of the step size; ``inf`` if the
    data are not nearly orthogonal enough (``rho >= 1``) or ``eta >= 1``."""
    if rho >= 1:
        return math.inf
    k = math.sqrt((1.0 + rho) / (1.0 - rho))
    eta = eps * k / (gamma * (1.0 - eps))
    if eta >= 1:
        return math.inf
    return ((k / gamma + eta) / (1.0 - eta)) ** 2


def step1_lower_bound(W0: torch.Tensor, G: torch.Tensor, lr) -> np.ndarray:
    """A lower bound on ``StableRank(W0 - lr G)`` from the triangle inequality:
    ``((||W0||_F - s) / (||W0||_2 + s))^2`` with ``s = lr ||G||_F`` (0 where ``s >= ||W0||_F``)."""
    lr = torch.as_tensor(lr, dtype=W0.dtype).reshape(-1)
    lr = lr.to(W0.device)
    s = lr * torch.linalg.matrix_norm(G)
    fro = torch.linalg.matrix_norm(W0)
    spec = torch.linalg.matrix_norm(W0, ord=2)
    return (torch.clamp(fro - s, min=0) / (spec + s)).pow(2).cpu().numpy()


def loss_ratio(net, X: torch.Tensor, y: torch.Tensor):
    """A metric for :func:`twolayer.paper_a.trainer.gradient_descent`:
    ``log max_{i,j} g_i / g_j`` with ``g_i = sigmoid(-y_i f(x_i; W))`` (Lemma E.4 bounds the
    ratio by ``C_R``); the logarithm stays finite when the ratio itself would overflow."""
    from torch.nn.functional import logsigmoid

    def metric(W: torch.Tensor) -> torch.Tensor:
        log_g = logsigmoid(-net.margins(W, X.to(W), y.to(W)))
        return log_g.amax(dim=-1) - log_g.amin(dim=-1)

    return metric


# --- item 1 under (A1): a rate, our derivation ----------------------------------------------------


def smoothness(consts: DataConstants, m: int) -> float:
    """``beta = R_max^2 (1/4 + H / sqrt m)``: the empirical risk's gradient is ``beta``-Lipschitz
    (``l'' <= 1/4``, ``|l'| <= 1``, ``||a * phi'|| <= ||a|| = 1``, ``|a_j phi''| <= H/sqrt m``)."""
    return consts.R_max**2 * (0.25 + consts.H / math.sqrt(m))


def proxy_pl_constant(consts: DataConstants) -> float:
    """``mu`` with ``||grad L(W)||_F >= mu (1/n) sum_i g_i`` for every ``W`` (a proxy-PL
    inequality, as in Section E.6): test the gradient against ``a u^T``,
    ``u = sum_k y_k x_k``, using ``phi' >= gamma``, ``a_j^2 = 1/m``,
    ``y_i <x_i, u> >= R_min^2 (1 - rho)`` and ``||u||^2 <= n R_max^2 (1 + rho)``:
    ``mu = gamma R_min^2 (1 - rho) / (R_max sqrt(n (1 + rho)))`` (0 if ``rho >= 1``)."""
    if consts.rho >= 1:
        return 0.0
    return (
        consts.gamma
        * consts.R_min**2
        * (1.0 - consts.rho)
        / (consts.R_max * math.sqrt(consts.n * (1.0 + consts.rho)))
    )


def risk_rate(lr: float, beta: float, mu: float) -> float:
    """``kappa = lr (1 - lr beta / 2) mu^2 / (2 log 2)^2``: the guaranteed growth of ``1/L`` per
    step once every margin is non-negative (then ``g_i >= l_i / (2 log 2)``); 0 when
    ``lr beta >= 2`` (the descent lemma gives nothing)."""
    if lr * beta >= 2:
        return 0.0
    return lr * (1.0 - lr * beta / 2.0) * mu**2 / (2.0 * math.log(2.0)) ** 2


def risk_bound(L1: float, t, kappa: float) -> np.ndarray:
    """``1 / (1/L(1) + kappa (t - 1))`` for ``t >= 1``: our bound on the empirical risk under
    (A1), given the risk ``L1`` after the first step (it goes to zero like ``1/(kappa t)``)."""
    t = np.asarray(t, dtype=np.float64)
    return 1.0 / (1.0 / L1 + kappa * (t - 1.0))


def steps_to_reach(L1: float, target: float, kappa: float) -> float:
    """The first ``t`` at which :func:`risk_bound` is at most ``target`` (``inf`` if
    ``kappa = 0``)."""
    if target >= L1:
        return 1.0
    if kappa <= 0:
        return math.inf
    return 1.0 + (1.0 / target - 1.0 / L1) / kappa


# --- metrics recorded along gradient descent (for trainer.gradient_descent) -----------------------


def margins_metric(net, X: torch.Tensor, y: torch.Tensor):
    """A metric: every unnormalized margin ``y_i f(x_i; W)``, shape ``(B, n)`` (Lemma E.11(b)
    says each of them increases along gradient descent)."""

    def metric(W: torch.Tensor) -> torch.Tensor:
        return net.margins(W, X.to(W), y.to(W))

    return metric


def gradient_gram_metric(net, X: torch.Tensor):
    """A metric for Fact E.7, shape ``(B, 2)``: ``min_i ||grad f_i||_F^2 / (gamma ||x_i||)^2``
    (gradient persistence: at least 1) and ``max_{i != k} |<grad f_i, grad f_k>| /
    |<x_i, x_k>|`` (near-orthogonality of gradients: at most 1), with
    ``grad_W f(x_i; W) = (a * phi'(W x_i)) x_i^T``."""

    def metric(W: torch.Tensor) -> torch.Tensor:
        Xw = X.to(W)
        A = net.a(W).unsqueeze(-1) * net.phi.grad(net.preactivations(W, Xw))  # (B, m, n)
        gram = (A.transpose(-1, -2) @ A) * (Xw @ Xw.T)  # (B, n, n)
        n = Xw.shape[0]
        sq = (Xw * Xw).sum(dim=1)
        persistence = (torch.diagonal(gram, dim1=-2, dim2=-1) / (net.gamma**2 * sq)).amin(-1)
        off = ~torch.eye(n, dtype=torch.bool, device=W.device)
        xx = (Xw @ Xw.T).abs()
        ratio = torch.where(off & (xx > 0), gram.abs() / torch.where(xx > 0, xx, 1.0), 0.0)
        return torch.stack([persistence, ratio.flatten(-2).amax(-1)], dim=-1)

    return metric


def gradient_bound_metric(net, X: torch.Tensor, y: torch.Tensor, R_max: float):
    """A metric for Lemma E.3, shape ``(B,)``: ``||grad L(W)||_F / (R_max (1/n) sum_i g_i)``,
    at most 1. With ``grad L = -C X`` (:meth:`~twolayer.paper_a.models.LeakyNetwork.loss_and_coef`)
    the norm is ``sqrt(sum C K * C)`` with the Gram matrix ``K = X X^T``: no ``m x d`` product."""
    from .losses import get_loss

    loss = get_loss("logistic")

    def metric(W: torch.Tensor) -> torch.Tensor:
        Xw, yw = X.to(W), y.to(W)
        _, _, C, q = net.loss_and_coef(W, Xw, yw, loss)
        grad_norm = ((C @ (Xw @ Xw.T)) * C).sum(dim=(-2, -1)).clamp(min=0).sqrt()
        return grad_norm / (R_max * loss.g(q).mean(dim=-1))

    return metric
