"""Activations of Paper A, with first and second derivatives.

* leaky ReLU ``phi(z) = max(gamma z, z)``, ``0 < gamma <= 1`` (Section 3, gradient flow);
* the smoothed leaky ReLU ``phi(z) = gamma z + (1 - gamma) log((1 + e^z) / 2)`` (Section 4):
  ``gamma``-leaky (``phi' in [gamma, 1]``), ``1/4``-smooth (``|phi''| <= (1 - gamma)/4``) and
  ``phi(0) = 0`` (Definition 4.1).

All functions take and return torch tensors and are computed without overflow for any
finite input (``log((1 + e^z)/2) = softplus(z) - log 2``).

Chapter: ``paper_a/setting``; every Paper A chapter through :mod:`twolayer.paper_a.models`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

LOG2 = math.log(2.0)


def softplus(z: torch.Tensor) -> torch.Tensor:
    """``log(1 + e^z)`` to full precision for every finite ``z`` (``torch.nn.functional.softplus``
    switches to ``z`` above 20, an absolute error of ``e^-20 ~ 2e-9`` in float64)."""
    return torch.logaddexp(z, torch.zeros_like(z))


def _check_gamma(gamma: float) -> float:
    gamma = float(gamma)
    if not (0.0 < gamma <= 1.0):
        raise ValueError(f"gamma must lie in (0, 1], got {gamma}")
    return gamma


def leaky_relu(z: torch.Tensor, gamma: float) -> torch.Tensor:
    """``max(gamma z, z)`` (Paper A, eq. (2))."""
    gamma = _check_gamma(gamma)
    return torch.where(z >= 0, z, gamma * z)


def leaky_relu_grad(z: torch.Tensor, gamma: float) -> torch.Tensor:
    """``phi'(z)``: 1 for ``z > 0``, ``gamma`` for ``z < 0``; at 0 we take 1 (an element of the
    Clarke subdifferential ``[gamma, 1]``, the convention of autograd)."""
    gamma = _check_gamma(gamma)
    return torch.where(z >= 0, torch.ones_like(z), torch.full_like(z, gamma))


def leaky_relu_hess(z: torch.Tensor, gamma: float) -> torch.Tensor:
    """``phi''(z) = 0`` away from the kink."""
    _check_gamma(gamma)
    return torch.zeros_like(z)


def smoothed_leaky_relu(z: torch.Tensor, gamma: float) -> torch.Tensor:
    """``gamma z + (1 - gamma) log((1 + e^z)/2)`` (Paper A, Def. 4.1 example)."""
    gamma = _check_gamma(gamma)
    return gamma * z + (1.0 - gamma) * (softplus(z) - LOG2)


def smoothed_leaky_relu_grad(z: torch.Tensor, gamma: float) -> torch.Tensor:
    """``phi'(z) = gamma + (1 - gamma) sigmoid(z)``, in ``[gamma, 1]``."""
    gamma = _check_gamma(gamma)
    return gamma + (1.0 - gamma) * torch.sigmoid(z)


def smoothed_leaky_relu_hess(z: torch.Tensor, gamma: float) -> torch.Tensor:
    """``phi''(z) = (1 - gamma) sigmoid(z) (1 - sigmoid(z))``, at most ``(1 - gamma)/4``."""
    gamma = _check_gamma(gamma)
    s = torch.sigmoid(z)
    return (1.0 - gamma) * s * (1.0 - s)


@dataclass(frozen=True)
class Activation:
    """An activation with its derivatives and constants: ``gamma``-leaky and ``H``-smooth."""

    name: str
    gamma: float
    H: float
    homogeneous: bool
    _phi: Callable[[torch.Tensor, float], torch.Tensor]
    _dphi: Callable[[torch.Tensor, float], torch.Tensor]
    _d2phi: Callable[[torch.Tensor, float], torch.Tensor]

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        return self._phi(z, self.gamma)

    def grad(self, z: torch.Tensor) -> torch.Tensor:
        return self._dphi(z, self.gamma)

    def hess(self, z: torch.Tensor) -> torch.Tensor:
        return self._d2phi(z, self.gamma)


def get_activation(name: str, gamma: float) -> Activation:
    """``"leaky_relu"`` or ``"smoothed_leaky_relu"`` with leak ``gamma``."""
    gamma = _check_gamma(gamma)
    if name == "leaky_relu":
        return Activation(name, gamma, 0.0, True, leaky_relu, leaky_relu_grad, leaky_relu_hess)
    if name == "smoothed_leaky_relu":
        return Activation(
            name,
            gamma,
            (1.0 - gamma) / 4.0,
            False,
            smoothed_leaky_relu,
            smoothed_leaky_relu_grad,
            smoothed_leaky_relu_hess,
        )
    raise ValueError(f"activation must be 'leaky_relu' or 'smoothed_leaky_relu', got {name!r}")
