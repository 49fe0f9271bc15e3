"""Paper B's Algorithm 1 on ``n`` samples instead of the population loss (Appendix J).

The inputs are ``x ~ N(0, I_d)``, the labels the preprocessed ``y~ = y - alpha_* - beta_*.x`` of
eq. (3) (``alpha_*, beta_*`` are the population moments, as in the paper's problem statement),
and the empirical loss is ``L^(theta) = (1/n) sum_s (f(x_s; theta) - y~_s)^2``.

* :func:`empirical_grad`: the gradient of ``L^ + lambda/2 (||a||^2 + ||W||_F^2)``, a
  :class:`~twolayer.paper_b.population.Net`, vectorised over samples and neurons;
* :func:`gradient_error`: the relative Frobenius error of the empirical first-layer gradient of
  Stage 1 against the exact population gradient, and :func:`predicted_error`, its
  ``n^{-1/2}`` law ``sqrt(tr Sigma / n) / ||grad||`` with ``Sigma`` the covariance of one
  sample's gradient (an average of ``n`` i.i.d. terms: ``E err^2 = tr Sigma / (n ||grad||^2)``
  exactly);
* :func:`stage1`, :func:`stage2`, :func:`stage3`: the three stages with the empirical loss.
"""
from __future__ import annotations

import math

import numpy as np

from . import population as pop
from .population import Net
from .teacher import Teacher


def draw(teacher: Teacher, n: int, seed: int):
    """``n`` Gaussian inputs and their preprocessed labels (deterministic in ``seed``)."""
    X = np.random.default_rng([seed, 23, n]).standard_normal((n, teacher.d))
    return X, teacher.y_tilde(X)


def empirical_loss(net: Net, X, y) -> float:
    return float(np.mean((net(X) - y) ** 2))


def empirical_grad(net: Net, X, y, lam: float = 0.0) -> Net:
    """Gradient of ``(1/n) sum (f - y)^2 + lam/2 (||a||^2 + ||W||^2)`` in ``(a, W, alpha, beta)``."""
    n = len(X)
    Z = X @ net.W.T
    A = np.maximum(Z, 0.0)
    r = (A @ net.a + net.alpha + X @ net.beta - y) * (2.0 / n)
    ga = A.T @ r + lam * net.a
    gW = net.a[:, None] * (((Z > 0) * r[:, None]).T @ X) + lam * net.W
    return Net(ga, gW, float(r.sum()), X.T @ r)


def gradient_error(net0: Net, teacher: Teacher, X, y) -> float:
    """``||grad_W L^ - grad_W L||_F / ||grad_W L||_F`` at ``net0`` (no weight decay)."""
    G = pop.grad(net0, teacher, 0.0).W
    Gh = empirical_grad(net0, X, y, 0.0).W
    return float(np.linalg.norm(Gh - G) / np.linalg.norm(G))


def per_sample_trace(net0: Net, teacher: Teacher, n: int, seed: int, batch: int = 20_000) -> float:
    """``tr Sigma = E||g(x)||^2 - ||E g||^2`` for one sample's first-layer gradient
    ``g(x) = 2 (f(x) - y~) a_i 1{w_i.x > 0} x`` (rows ``i``), by Monte Carlo on ``n`` fresh
    inputs (``||g(x)||^2 = 4 (f - y~)^2 ||x||^2 sum_i a_i^2 1{w_i.x > 0}``)."""
    rng = np.random.default_rng([seed, 29])
    s, done = 0.0, 0
    while done < n:
        k = min(batch, n - done)
        X = rng.standard_normal((k, teacher.d))
        res = net0(X) - teacher.y_tilde(X)
        act = (X @ net0.W.T > 0) @ (net0.a ** 2)
        s += float(np.sum(4 * res ** 2 * np.sum(X * X, 1) * act))
        done += k
    G = pop.grad(net0, teacher, 0.0).W
    return s / n - float(np.sum(G * G))


def predicted_error(net0: Net, teacher: Teacher, n, trace: float) -> np.ndarray:
    """The ``n^{-1/2}`` law ``sqrt(tr Sigma / n) / ||grad_W L||_F``."""
    G = pop.grad(net0, teacher, 0.0).W
    return np.sqrt(trace / np.asarray(n, dtype=np.float64)) / np.linalg.norm(G)


def stage1(net0: Net, X, y, eta0: float = 1.0, lam0: float = 1.0) -> Net:
    """One step on the empirical ``L^_{lambda_0}``."""
    g = empirical_grad(net0, X, y, lam0)
    return Net(net0.a - eta0 * g.a, net0.W - eta0 * g.W, net0.alpha - eta0 * g.alpha, net0.beta - eta0 * g.beta)


def stage2(net1: Net, X, y, lam: float, solver: str = "CLARABEL") -> Net:
    """``min_{a, alpha, beta} (1/n)||relu(X W^T) a + alpha + X beta - y||^2 + lam sum ||w_i|| |a_i|``
    with ``W = W^(1)`` fixed (cvxpy), then balanced (``|a_i| = ||w_i||``)."""
    import cvxpy as cp

    from .algorithm1 import balance

    n = len(X)
    F = np.hstack([np.maximum(X @ net1.W.T, 0.0), np.ones((n, 1)), X]) / math.sqrt(n)
    m = net1.W.shape[0]
    wn = np.linalg.norm(net1.W, axis=1)
    v = cp.Variable(F.shape[1])
    obj = cp.sum_squares(F @ v - y / math.sqrt(n)) + lam * cp.sum(cp.multiply(wn, cp.abs(v[:m])))
    cp.Problem(cp.Minimize(obj)).solve(solver=solver)
    v = np.asarray(v.value, dtype=np.float64)
    return balance(Net(v[:m], net1.W.copy(), v[m], v[m + 1:]))


def stage3(net: Net, X, y, lam0: float, epochs: int, steps: int, eta: float, grow: float = 2.0) -> Net:
    """Epochs of full-batch gradient descent on the empirical ``L^_{lambda_k}``,
    ``lambda_k = lam0 / 2^k``, ``round(steps grow^k)`` steps in epoch ``k``."""
    net = net.copy()
    for k in range(epochs):
        lam = lam0 / 2 ** k
        for _ in range(int(round(steps * grow ** k))):
            g = empirical_grad(net, X, y, lam)
            net.a -= eta * g.a
            net.W -= eta * g.W
            net.alpha -= eta * g.alpha
            net.beta -= eta * g.beta
    return net
