"""Two-layer networks.

* :class:`LeakyNetwork` -- Paper A, eq. (2): ``f(x; W) = sum_j a_j phi(<w_j, x>)`` with the
  second layer fixed, ``a_j = +1/sqrt(m)`` for the ``m1`` positive neurons (rows ``v_j``) and
  ``-1/sqrt(m)`` for the ``m2`` negative ones (rows ``u_j``); only ``W`` (m x d) is trained.
  Every method is batched over leading axes of ``W`` (a batch of configurations ``(B, m, d)``).
* :class:`TwoLayerNet` -- a general ``torch.nn.Module``: ``f(x) = a . phi(W x + b) + c`` with a
  trainable second layer and optional biases (Paper A, Figure 2's ReLU networks).

Chapters: ``paper_a/setting``, ``paper_a/gradient_flow``, ``paper_a/kkt_not_max_margin``,
``paper_a/noisy_xor`` (and the others through the runners).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .activations import Activation, get_activation
from .losses import Loss


def second_layer(m1: int, m2: int, dtype=torch.float64, device=None) -> torch.Tensor:
    """``a = (+1/sqrt(m) x m1, -1/sqrt(m) x m2)``, ``m = m1 + m2`` (Paper A, Section 2)."""
    for name, v in (("m1", m1), ("m2", m2)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    m = m1 + m2
    a = torch.full((m,), 1.0 / math.sqrt(m), dtype=dtype, device=device)
    a[m1:] = -1.0 / math.sqrt(m)
    return a


class LeakyNetwork:
    """Paper A's network with fixed second layer ``a`` and activation ``phi``."""

    def __init__(self, m1: int, m2: int, phi: Activation | str = "leaky_relu", gamma: float = 0.5):
        self._a = second_layer(m1, m2)  # validates m1, m2 (positive integers)
        # one copy of ``a`` per (device, dtype), made on first use: a training step on a GPU
        # must not copy ``a`` from the host (a copy from pageable memory waits for the device)
        self._a_cache: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}
        self.m1, self.m2 = m1, m2
        self.phi = get_activation(phi, gamma) if isinstance(phi, str) else phi

    @property
    def m(self) -> int:
        return self.m1 + self.m2

    @property
    def gamma(self) -> float:
        return self.phi.gamma

    def a(self, like: torch.Tensor | None = None) -> torch.Tensor:
        """The fixed second layer, on the dtype/device of ``like`` (cached: the same tensor is
        returned for every call with the same device and dtype; do not modify it in place)."""
        if like is None:
            return self._a
        key = (like.device, like.dtype)
        a = self._a_cache.get(key)
        if a is None:
            a = self._a_cache[key] = self._a.to(dtype=like.dtype, device=like.device)
        return a

    def init(
        self,
        d: int,
        scale: float | torch.Tensor,
        seed: int,
        batch: int | None = None,
        *,
        dtype=torch.float64,
        device=None,
    ) -> torch.Tensor:
        """``w_j ~ N(0, scale^2 I_d)`` i.i.d.; shape ``(m, d)`` or ``(batch, m, d)``.

        ``scale`` may be a tensor of shape ``(batch,)`` (one scale per configuration). The
        draw uses a CPU generator seeded with ``seed`` so it is the same on every device; the
        result is then moved to ``device`` (one host-to-device copy) in ``dtype``."""
        g = torch.Generator().manual_seed(int(seed))
        shape = (self.m, d) if batch is None else (batch, self.m, d)
        W = torch.randn(shape, generator=g, dtype=torch.float64)
        s = torch.as_tensor(scale, dtype=torch.float64, device="cpu")
        if s.ndim == 1:
            s = s.reshape(-1, 1, 1)
        return (W * s).to(dtype=dtype, device=device)

    def preactivations(self, W: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        """``Z[..., j, i] = <w_j, x_i>``, shape ``(..., m, n)``."""
        return W @ X.transpose(-1, -2)

    def forward(self, W: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        """``f(x_i; W)`` for every row of ``X``: shape ``(..., n)``."""
        return self.a(W) @ self.phi(self.preactivations(W, X))

    __call__ = forward

    def margins(self, W: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Unnormalized margins ``q_i = y_i f(x_i; W)``."""
        return y * self.forward(W, X)

    def loss_and_coef(
        self,
        W: torch.Tensor,
        X: torch.Tensor,
        y: torch.Tensor,
        loss: Loss,
        *,
        normalized: bool = False,
    ):
        """``(L, log L, C, q)`` with ``grad L = -C X``: the gradient's coefficients on the data,
        ``C[..., j, i] = (1/n) g_i y_i a_j phi'(<w_j, x_i>)``, shape ``(..., m, n)``, and the
        margins ``q_i = y_i f(x_i; W)`` computed on the way.

        The trainer applies ``W <- W + lr C X`` as one in-place matrix product for every
        configuration, never forming the gradient (see :meth:`loss_and_grad`)."""
        Z = self.preactivations(W, X)
        a = self.a(W)
        q = y * (a @ self.phi(Z))
        L = loss.empirical_risk(q)
        logL = loss.log_empirical_risk(q)
        s = loss.normalized_weights(q) if normalized else loss.g(q) / q.shape[-1]
        C = self.phi.grad(Z) * (s * y).unsqueeze(-2) * a.unsqueeze(-1)
        return L, logL, C, q

    def loss_and_grad(
        self,
        W: torch.Tensor,
        X: torch.Tensor,
        y: torch.Tensor,
        loss: Loss,
        *,
        normalized: bool = False,
    ):
        """Empirical risk ``L(W)`` and its gradient in closed form (no autograd).

        ``grad L = -(1/n) sum_i g_i y_i (a * phi'(W x_i)) x_i^T`` with ``g_i = -ell'(q_i)``.
        With ``normalized=True`` the gradient of ``log L`` is returned instead (``grad L / L``,
        computed from log-space weights so it stays finite when ``L`` underflows).
        Returns ``(L, log L, G)`` with ``G`` shaped like ``W``.
        """
        L, logL, C, _ = self.loss_and_coef(W, X, y, loss, normalized=normalized)
        return L, logL, -(C @ X)


class TwoLayerNet(nn.Module):
    """``f(x) = sum_j a_j phi(<w_j, x> + b_j) + c``: trainable ``W``, ``a``; optional biases.

    ``init="glorot_uniform"`` is TensorFlow's default, ``U(-r, r)`` with
    ``r = sqrt(6 / (fan_in + fan_out))``; ``init_scale`` multiplies it (Paper A, Figure 2 uses
    1 and 1/50). ``init="gaussian"`` draws ``N(0, init_scale^2)``. Biases start at 0.
    """

    def __init__(
        self,
        d: int,
        m: int,
        activation: str = "relu",
        gamma: float = 0.5,
        bias: bool = True,
        init: str = "glorot_uniform",
        init_scale: float = 1.0,
        seed: int = 0,
        dtype=torch.float32,
    ):
        super().__init__()
        if activation == "relu":
            self._phi = torch.relu
        else:
            self._phi = get_activation(activation, gamma)
        g = torch.Generator().manual_seed(int(seed))
        if init == "glorot_uniform":
            r1 = math.sqrt(6.0 / (d + m)) * init_scale
            r2 = math.sqrt(6.0 / (m + 1)) * init_scale
            W = (torch.rand((m, d), generator=g, dtype=torch.float64) * 2 - 1) * r1
            a = (torch.rand((m,), generator=g, dtype=torch.float64) * 2 - 1) * r2
        elif init == "gaussian":
            W = torch.randn((m, d), generator=g, dtype=torch.float64) * init_scale
            a = torch.randn((m,), generator=g, dtype=torch.float64) * init_scale
        else:
            raise ValueError(f"init must be 'glorot_uniform' or 'gaussian', got {init!r}")
        self.W = nn.Parameter(W.to(dtype))
        self.a = nn.Parameter(a.to(dtype))
        self.b = nn.Parameter(torch.zeros(m, dtype=dtype)) if bias else None
        self.c = nn.Parameter(torch.zeros((), dtype=dtype)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The network's output for every row of ``x``."""
        z = x @ self.W.T
        if self.b is not None:
            z = z + self.b
        out = self._phi(z) @ self.a
        if self.c is not None:
            out = out + self.c
        return out
