"""Metrics in the papers' notation; batched over leading axes of ``W``.

* ``singular_values(W)``, ``stable_rank(W) = ||W||_F^2 / ||W||_2^2`` (Paper A, Def. 4.1's
  companion; at a Gaussian initialization it is about ``m d / (sqrt m + sqrt d)^2``),
  ``numerical_rank(W, tol)`` (singular values above ``tol * sigma_1``);
* margins ``q_i = y_i f(x_i; W)``, normalized margins ``q_i / ||W||_F`` (the networks of
  Paper A are 1-homogeneous in ``W`` with the leaky ReLU) and ``W / min_i q_i``;
* ``near_orthogonality(X, gamma)``: Theorem 3.2's assumption, see
  :mod:`twolayer.paper_a.assumptions`.

Every function returns its result on ``W``'s device (no host read), so it can serve as a
metric of :func:`twolayer.paper_a.trainer.gradient_descent` on a GPU; NumPy inputs become CPU
float64 tensors.

Used by ``paper_a/one_step_low_rank``, ``paper_a/figure1`` and ``paper_a/real_images`` through
the library's runners.
"""

from __future__ import annotations

import numpy as np
import torch

from .assumptions import NearOrthogonality, near_orthogonality  # noqa: F401  (re-export)


def _t(W) -> torch.Tensor:
    return W if isinstance(W, torch.Tensor) else torch.as_tensor(np.asarray(W), dtype=torch.float64)


def singular_values(W) -> torch.Tensor:
    """Singular values of the last two axes, largest first: shape ``(..., min(m, d))``."""
    return torch.linalg.svdvals(_t(W))


def stable_rank(W) -> torch.Tensor:
    """``||W||_F^2 / ||W||_2^2`` over the last two axes (in ``[1, rank W]``); 0 for ``W = 0``.

    Uses the spectral norm ``torch.linalg.matrix_norm(ord=2)`` directly."""
    W = _t(W)
    fro2 = (W * W).sum(dim=(-2, -1))
    spec2 = torch.linalg.matrix_norm(W, ord=2) ** 2
    return torch.where(
        spec2 > 0,
        fro2 / torch.where(spec2 > 0, spec2, torch.ones_like(spec2)),
        torch.zeros_like(spec2),
    )


def numerical_rank(W, tol: float = 1e-6) -> torch.Tensor:
    """Number of singular values larger than ``tol * sigma_1`` (0 for ``W = 0``)."""
    if not (0 < tol < 1):
        raise ValueError(f"tol must lie in (0, 1), got {tol}")
    s = singular_values(W)
    return (s > tol * s[..., :1]).sum(dim=-1)


def margins(net, W, X, y) -> torch.Tensor:
    """Unnormalized margins ``y_i f(x_i; W)``, shape ``(..., n)``, on ``W``'s device and in its
    dtype (``X`` and ``y`` follow ``W``)."""
    W = _t(W)
    return net.margins(W, _t(X).to(W), _t(y).to(W))


def normalized_margins(net, W, X, y) -> torch.Tensor:
    """``y_i f(x_i; W) / ||W||_F``: invariant under ``W -> cW`` for 1-homogeneous ``phi``."""
    W = _t(W)
    return margins(net, W, X, y) / torch.linalg.matrix_norm(W).unsqueeze(-1)


def normalize_by_margin(net, W, X, y, *, strict: bool = True) -> torch.Tensor:
    """``W / min_i y_i f(x_i; W)``: the rescaling under which the smallest margin is 1, i.e. a
    feasible point of Problem (1) (Paper A); batched over the leading axes of ``W``. Used by
    ``paper_a/gradient_flow`` and ``paper_a/kkt_not_max_margin`` (the margin-normalized
    weights ``W~`` of :func:`twolayer.paper_a.flow.distance_history`).

    Args:
        net: the network (its ``margins``).

        W: weights ``(..., m, d)``.

        X: the data ``(n, d)``.

        y: the labels ``(n,)``.

        strict: ``True``: every ``W`` must classify every point correctly (smallest margin
        ``> 0``), else ``ValueError``; ``False``: NaN for the ``W`` that do not (a batch of
        runs, some not yet separating the data).

    Returns:
        ``W`` divided by its smallest margin, same shape as ``W``.
    """
    W = _t(W)
    qmin = margins(net, W, X, y).min(dim=-1).values
    if strict and torch.any(qmin <= 0):
        raise ValueError("normalize_by_margin needs min_i y_i f(x_i; W) > 0 (data not separated)")
    qmin = torch.where(qmin > 0, qmin, torch.full_like(qmin, float("nan")))
    return W / qmin.reshape(*qmin.shape, 1, 1)
