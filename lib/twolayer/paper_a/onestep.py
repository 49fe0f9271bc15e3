"""The experiments of the chapter ``notebooks/paper_a/one_step_low_rank`` (Paper A, Theorem 4.2).

Everything runs on data that satisfy Theorem 4.2's data condition by construction
(:func:`twolayer.paper_a.lowrank.constructed_data`), with the smoothed leaky ReLU and the
logistic loss, through :func:`twolayer.paper_a.trainer.gradient_descent`:

* :func:`setup` -- one data set and its constants: the (A1) step bound, the step size used,
  ``||grad L(0)||_F`` and the book's (A2) bound ``omega_A2`` at that step
  (:func:`twolayer.paper_a.lowrank.init_bound`);
* :func:`run_batch` -- a batch of runs (initialization scale and step size per run) on that
  data, recording the stable rank, the loss ratio of Lemma E.4, every margin (Lemma E.11(b)),
  the gradient Gram ratios of Fact E.7 and the gradient bound of Lemma E.3;
* :func:`init_sweep` -- one step from initializations between the book's (A2) bound and the
  summary page's ``|f(x_k; W0)| <= 1/50`` bound: where "one step to low rank" stops;
* :func:`size_sweep` -- new data and the (A2) bound of each size while one of ``m, d, n`` grows:
  the stable rank at initialization, after one step, and along a short trajectory.

Seeds come from :func:`twolayer.core.seeds.derive`, one stream per purpose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..core.device import resolve_dtype
from ..core.seeds import derive
from . import lowrank, metrics
from .losses import get_loss
from .models import LeakyNetwork
from .trainer import gradient_descent, log_spaced_steps

H_SMOOTH = 0.25  # the smoothed leaky ReLU is (1 - gamma)/4-smooth, hence 1/4-smooth


@dataclass
class Setup:
    """One data set of Theorem 4.2 with its constants and bounds (see :func:`setup`)."""

    n: int
    d: int
    m: int
    gamma: float
    X: torch.Tensor
    y: torch.Tensor
    consts: lowrank.DataConstants
    alpha_A1: float
    alpha: float
    grad0: float
    bound: lowrank.InitBound
    net: LeakyNetwork

    @property
    def omega_A2(self) -> float:
        return self.bound.omega

    def init_over_step(self, omega) -> np.ndarray:
        """About ``E||W0||_F / (alpha ||grad L(0)||_F) = omega sqrt(md) / (alpha g0)``: the
        size of the initialization against the first step."""
        return (
            np.asarray(omega, dtype=np.float64)
            * math.sqrt(self.m * self.d)
            / (self.alpha * self.grad0)
        )


def setup(
    n: int,
    d: int,
    m: int,
    gamma: float,
    *,
    seed: int,
    data_ratio: float = 0.5,
    lr_scale: float = 1.0,
    eps: float = 0.05,
    delta: float = 1e-3,
) -> Setup:
    """Constructed data (condition ratio ``data_ratio``), the network with ``m - m // 2``
    positive and ``m // 2`` negative neurons, the (A1) step bound ``alpha_A1``, the step
    ``alpha = lr_scale * alpha_A1`` and the book's (A2) bound at that step (the
    initialization must be small against the first step it takes)."""
    ds = lowrank.constructed_data(n, d, seed=seed, gamma=gamma, ratio=data_ratio, H=H_SMOOTH)
    X, y = ds.torch()
    consts = lowrank.data_constants(ds.X, gamma, H_SMOOTH)
    grad0 = lowrank.grad_at_zero_norm(ds.X, ds.y, gamma)
    alpha = lr_scale * consts.step_bound
    bound = lowrank.init_bound(m, d, consts, alpha, grad0=grad0, eps=eps, delta=delta)
    net = LeakyNetwork(m - m // 2, m // 2, phi="smoothed_leaky_relu", gamma=gamma)
    return Setup(n, d, m, gamma, X, y, consts, consts.step_bound, alpha, grad0, bound, net)


@dataclass
class BatchResult:
    """A batch of runs on one :class:`Setup`: ``history[name]`` has shape ``(records, B)``
    (``margins``: ``(records, B, n)``; ``fact_e7``: ``(records, B, 2)``)."""

    steps: np.ndarray
    history: dict
    omega: np.ndarray
    lr: np.ndarray
    realized: dict  # lowrank.init_condition of W0 at each run's step size
    spectral0: np.ndarray  # ||W0||_2 of each run
    step1_lower: np.ndarray  # lowrank.step1_lower_bound of each run
    init_over_step: np.ndarray  # ||W0||_F / (lr ||grad L(W0)||_F): init against the first step


def run_batch(
    s: Setup,
    omega,
    lr,
    steps: int,
    *,
    seed: int,
    records: int = 40,
    full: bool = True,
    eps: float = 0.05,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype = "float64",
) -> BatchResult:
    """Gradient descent from ``w_j ~ N(0, omega_b^2 I_d)`` with step ``lr_b`` for each run
    ``b`` (one shared Gaussian draw per run from ``seed``), ``steps`` steps, metrics at
    ``records`` log-spaced steps. ``full``: also the margins, Fact E.7's and Lemma E.3's
    metrics (otherwise the stable rank only). The runs, the data and every metric live on
    ``device`` (``None``: the CPU) in ``dtype``; the initial draw is made on the host from
    ``seed`` (the same on every device) and moved once."""
    omega = torch.as_tensor(np.asarray(omega, dtype=np.float64).reshape(-1))
    lr = torch.as_tensor(np.asarray(lr, dtype=np.float64).reshape(-1))
    if omega.shape != lr.shape:
        raise ValueError(f"omega and lr must have one value per run, got {omega.shape}, {lr.shape}")
    B = omega.numel()
    W0 = s.net.init(s.d, omega, seed=seed, batch=B, dtype=resolve_dtype(dtype), device=device)
    X, y = s.X.to(W0), s.y.to(W0)  # once, before the runs (no copy on the CPU in float64)
    realized = lowrank.init_condition(s.net, W0, X, y, lr=lr, gamma=s.gamma, eps=eps)
    _, _, G0 = s.net.loss_and_grad(W0, X, y, get_loss("logistic"))
    lower = lowrank.step1_lower_bound(W0, G0, lr)
    spectral0 = torch.linalg.matrix_norm(W0, ord=2).cpu().numpy()
    r = (torch.linalg.matrix_norm(W0) / (lr.to(W0) * torch.linalg.matrix_norm(G0))).cpu().numpy()
    fns = {"stable_rank": metrics.stable_rank}
    if full:
        fns.update(
            {
                "log_loss_ratio": lowrank.loss_ratio(s.net, X, y),
                "margins": lowrank.margins_metric(s.net, X, y),
                "fact_e7": lowrank.gradient_gram_metric(s.net, X),
                "grad_bound_e3": lowrank.gradient_bound_metric(s.net, X, y, s.consts.R_max),
            }
        )
    res = gradient_descent(
        s.net,
        W0,
        X,
        y,
        loss="logistic",
        lr=lr,
        steps=steps,
        record_steps=log_spaced_steps(steps, records),
        metrics=fns,
    )
    return BatchResult(
        res.steps, res.history, omega.numpy(), lr.numpy(), realized, spectral0, lower, r
    )


def init_sweep(
    s: Setup,
    multipliers,
    draws: int,
    seed: int,
    *,
    eps: float = 0.05,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype = "float64",
) -> dict:
    """One step of size ``s.alpha`` from ``omega = multiplier * omega_A2`` for every multiplier,
    ``draws`` initializations each. Returns arrays over the runs: ``multiplier``, ``omega``,
    ``r`` (the realized ``||W0||_F / (alpha ||grad L(W0)||_F)``), ``sr0``, ``sr1``, the
    triangle-inequality ``lower`` bound on ``sr1`` and whether the realized (A2) holds."""
    mult = np.repeat(np.asarray(multipliers, dtype=np.float64), draws)
    omega = mult * s.omega_A2
    lr = np.full_like(omega, s.alpha)
    b = run_batch(
        s, omega, lr, steps=1, seed=seed, records=2, full=False, eps=eps, device=device, dtype=dtype
    )
    sr = b.history["stable_rank"]
    return {
        "multiplier": mult,
        "omega": omega,
        "r": b.init_over_step,
        "sr0": sr[0],
        "sr1": sr[1],
        "lower": b.step1_lower,
        "a2_holds": b.realized["holds"],
    }


def size_sweep(  # noqa: PLR0913 (one setting per argument of the size sweep)
    sizes: dict,
    base: dict,
    gamma: float,
    seed: int,
    *,
    lr_scale: float = 1.0,
    draws: int = 2,
    long_lr_scale: float | None = None,
    long_steps: int = 0,
    data_ratio: float = 0.5,
    init_scale: float = 1.0,
    eps: float = 0.05,
    delta: float = 1e-3,
    records: int = 4,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype = "float64",
) -> list[dict]:
    """For every value ``v`` of ``sizes[name]`` (``name`` in ``"m", "d", "n"``, the others at
    ``base``): new constructed data and initializations at ``init_scale`` times that size's
    (A2) bound at the step ``lr_scale * alpha_A1``; ``draws`` runs take one such step
    (``kind`` "one step"), and, if ``long_steps > 0``, one run takes ``long_steps`` steps of
    size
    ``long_lr_scale * alpha_A1`` (``kind`` "trajectory", stable rank at ``records``
    log-spaced steps). One row per run: the sizes, the step multiplier, ``SR(0)``, ``SR(1)``,
    ``max SR(t >= 1)``, the final loss, the Gaussian law and the concentration lower bound at
    initialization, the realized (A2), the data condition, ``rho`` and the book's trajectory
    bound ``C``."""
    rows = []
    for name, values in sizes.items():
        for j, v in enumerate(values):
            size = {**base, name: int(v)}
            s = setup(
                size["n"],
                size["d"],
                size["m"],
                gamma,
                seed=derive(seed, "size-sweep-data", name, j),
                data_ratio=data_ratio,
                lr_scale=lr_scale,
                eps=eps,
                delta=delta,
            )
            C = lowrank.trajectory_bound(gamma, s.consts.rho, eps)
            runs = [("one step", lr_scale, draws, 1, 2)]
            if long_steps > 0:
                runs.append(("trajectory", long_lr_scale or lr_scale, 1, long_steps, records))
            for kind, mult, count, steps, rec in runs:
                b = run_batch(
                    s,
                    np.full(count, init_scale * s.omega_A2),
                    np.full(count, mult * s.alpha_A1),
                    steps=steps,
                    seed=derive(seed, "size-sweep-init", kind, name, j),
                    records=rec,
                    full=False,
                    eps=eps,
                    device=device,
                    dtype=dtype,
                )
                sr = b.history["stable_rank"]
                for k in range(count):
                    rows.append(
                        {
                            "swept": name,
                            "n": s.n,
                            "d": s.d,
                            "m": s.m,
                            "kind": kind,
                            "alpha / alpha_A1": float(mult),
                            "steps": steps,
                            "SR(0)": float(sr[0, k]),
                            "SR(1)": float(sr[1, k]),
                            "max SR(t>=1)": float(sr[1:, k].max()),
                            "final loss": float(b.history["loss"][-1, k]),
                            "law": lowrank.gaussian_stable_rank(s.m, s.d),
                            "lower": lowrank.gaussian_stable_rank_lower(s.m, s.d, delta),
                            "A2 holds": bool(b.realized["holds"][k]),
                            "step ratio": float(b.realized["step_ratio"][k]),
                            "data condition": bool(s.consts.data_condition),
                            "rho": s.consts.rho,
                            "C": C,
                        }
                    )
    return rows


def monotone_increasing(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """Whether ``values`` increase strictly along ``axis`` (every later entry above the
    previous one), per position of the other axes."""
    return np.all(np.diff(np.asarray(values, dtype=np.float64), axis=axis) > 0, axis=axis)
