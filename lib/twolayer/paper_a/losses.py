"""Margin losses ``ell(q)`` of Paper A, ``q = y f(x)``, stable in float64 at huge margins.

``L(W) = (1/n) sum_i ell(y_i f(x_i; W))``. The trainer needs ``g_i = -ell'(q_i) > 0``:

* logistic: ``ell(q) = log(1 + e^{-q}) = softplus(-q)``, ``g = sigmoid(-q)``;
* exponential: ``ell(q) = e^{-q}``, ``g = e^{-q}``.

For loss-normalised gradient descent (a time change of gradient flow, see the trainer) we
also need ``g_i / L`` without forming ``L`` (which underflows at large margins): it is
computed in log space from ``log g_i`` and ``log ell(q_i)``.

Used by every Paper A chapter through the trainers (:mod:`twolayer.paper_a.trainer`,
:mod:`twolayer.paper_a.sgd`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .activations import softplus


def logistic(q: torch.Tensor) -> torch.Tensor:
    """``log(1 + exp(-q))`` without overflow or cancellation."""
    return softplus(-q)


def logistic_g(q: torch.Tensor) -> torch.Tensor:
    """``-ell'(q) = sigmoid(-q)``."""
    return torch.sigmoid(-q)


def logistic_log_loss(q: torch.Tensor) -> torch.Tensor:
    """``log ell(q) = log softplus(-q)``, accurate when ``softplus(-q)`` underflows.

    For ``q > 30`` we use ``softplus(-q) = e^{-q} (1 - e^{-q}/2 + ...)`` so ``log ell ~ -q``.
    """
    big = q > 30.0
    safe = torch.where(big, torch.zeros_like(q), q)
    return torch.where(big, -q - 0.5 * torch.exp(-q), torch.log(softplus(-safe)))


def logistic_log_g(q: torch.Tensor) -> torch.Tensor:
    """``log sigmoid(-q) = -softplus(q)``."""
    return -softplus(q)


def exponential(q: torch.Tensor) -> torch.Tensor:
    """``exp(-q)``; overflows only for ``q < -709`` in float64, which the trainer reports."""
    return torch.exp(-q)


def exponential_g(q: torch.Tensor) -> torch.Tensor:
    return torch.exp(-q)


def exponential_log(q: torch.Tensor) -> torch.Tensor:
    return -q


@dataclass(frozen=True)
class Loss:
    name: str
    ell: Callable[[torch.Tensor], torch.Tensor]
    g: Callable[[torch.Tensor], torch.Tensor]
    log_ell: Callable[[torch.Tensor], torch.Tensor]
    log_g: Callable[[torch.Tensor], torch.Tensor]

    def __call__(self, q: torch.Tensor) -> torch.Tensor:
        return self.ell(q)

    def empirical_risk(self, q: torch.Tensor) -> torch.Tensor:
        """``(1/n) sum_i ell(q_i)`` over the last axis."""
        return self.ell(q).mean(dim=-1)

    def log_empirical_risk(self, q: torch.Tensor) -> torch.Tensor:
        """``log L`` over the last axis, finite even where ``L`` underflows to 0."""
        return torch.logsumexp(self.log_ell(q), dim=-1) - math.log(q.shape[-1])

    def normalized_weights(self, q: torch.Tensor) -> torch.Tensor:
        """``g_i / (n L)`` over the last axis: the sample weights of loss-normalised GD."""
        log_w = self.log_g(q) - torch.logsumexp(self.log_ell(q), dim=-1, keepdim=True)
        return torch.exp(log_w)


LOSSES = {
    "logistic": Loss("logistic", logistic, logistic_g, logistic_log_loss, logistic_log_g),
    "exp": Loss("exp", exponential, exponential_g, exponential_log, exponential_log),
}


def get_loss(name: str) -> Loss:
    """``"logistic"`` or ``"exp"``."""
    try:
        return LOSSES[name]
    except KeyError:
        raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {name!r}") from None
