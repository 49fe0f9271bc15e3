"""Margin losses ``ell(q)`` of Paper A, ``q = y f(x)``, stable in float64 at huge margins.

``L(W) = (1/n) sum_i ell(y_i f(x_i; W))``. The trainer needs ``g_i = -ell'(q_i) > 0``:

* logistic: ``ell(q) = log(1 + e^{-q}) = softplus(-q)``, ``g = sigmoid(-q)``;
* exponential: ``ell(q) = e^{-q}``, ``g = e^{-q}``.

For loss-normalized gradient descent (a time change of gradient flow, see the trainer) we
also need ``g_i / L`` without forming ``L`` (which underflows at large margins): it is
computed in log space from ``log g_i`` and ``log ell(q_i)``.

The same losses on NumPy float64 arrays (``numpy_logistic``, ..., collected in
:data:`NUMPY_LOSSES`) serve the NumPy loop of :func:`twolayer.paper_a.flow.normalized_flow`;
they compute what the torch ones compute, expression for expression.

Used by every Paper A chapter through the trainers (:mod:`twolayer.paper_a.trainer`,
:mod:`twolayer.paper_a.sgd`, :mod:`twolayer.paper_a.flow`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
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
    """``-ell'(q) = exp(-q)``."""
    return torch.exp(-q)


def exponential_log(q: torch.Tensor) -> torch.Tensor:
    """``log ell(q) = log g(q) = -q``."""
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
        """``g_i / (n L)`` over the last axis: the sample weights of loss-normalized GD."""
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


# --- the same losses on NumPy arrays (the NumPy loop of twolayer.paper_a.flow) ------------------


def numpy_softplus(z: np.ndarray) -> np.ndarray:
    """``log(1 + e^z)`` to full precision for every finite ``z`` (as
    :func:`twolayer.paper_a.activations.softplus`)."""
    return np.logaddexp(z, 0.0)


def numpy_logistic(q: np.ndarray) -> np.ndarray:
    """:func:`logistic` on NumPy arrays: ``log(1 + exp(-q))``."""
    return numpy_softplus(-q)


def numpy_logistic_g(q: np.ndarray) -> np.ndarray:
    """:func:`logistic_g` on NumPy arrays: ``-ell'(q) = sigmoid(-q)``, from ``e^{-|q|}`` (no
    overflow): ``e^{-q} / (1 + e^{-q})`` for ``q >= 0``, ``1 / (1 + e^q)`` below."""
    e = np.exp(-np.abs(q))
    return np.where(q >= 0, e / (1 + e), 1 / (1 + e))


def numpy_logistic_log_loss(q: np.ndarray) -> np.ndarray:
    """:func:`logistic_log_loss` on NumPy arrays: ``log softplus(-q)``, and
    ``-q - e^{-q} / 2`` for ``q > 30``."""
    big = q > 30.0
    safe = np.where(big, 0.0, q)
    with np.errstate(divide="ignore"):
        small = np.log(numpy_softplus(-safe))
    return np.where(big, -q - 0.5 * np.exp(-q), small)


def numpy_logistic_log_g(q: np.ndarray) -> np.ndarray:
    """:func:`logistic_log_g` on NumPy arrays: ``log sigmoid(-q) = -softplus(q)``."""
    return -numpy_softplus(q)


def numpy_exponential(q: np.ndarray) -> np.ndarray:
    """:func:`exponential` on NumPy arrays: ``exp(-q)``."""
    return np.exp(-q)


def numpy_exponential_g(q: np.ndarray) -> np.ndarray:
    """:func:`exponential_g` on NumPy arrays: ``exp(-q)``."""
    return np.exp(-q)


def numpy_exponential_log(q: np.ndarray) -> np.ndarray:
    """:func:`exponential_log` on NumPy arrays: ``-q``."""
    return -q


@dataclass(frozen=True)
class NumpyLoss:
    """A loss of :func:`get_loss` on NumPy arrays: ``ell``, ``g = -ell'``, ``log ell``,
    ``log g``."""

    name: str
    ell: Callable[[np.ndarray], np.ndarray]
    g: Callable[[np.ndarray], np.ndarray]
    log_ell: Callable[[np.ndarray], np.ndarray]
    log_g: Callable[[np.ndarray], np.ndarray]


#: the losses of :func:`get_loss` on NumPy arrays, by the same names
NUMPY_LOSSES = {
    "logistic": NumpyLoss(
        "logistic", numpy_logistic, numpy_logistic_g, numpy_logistic_log_loss, numpy_logistic_log_g
    ),
    "exp": NumpyLoss(
        "exp", numpy_exponential, numpy_exponential_g, numpy_exponential_log, numpy_exponential_log
    ),
}
