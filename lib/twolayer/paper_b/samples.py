"""Paper B's Algorithm 1 on ``n`` samples instead of the population loss (Appendix J).

The inputs are ``x ~ N(0, I_d)``, the labels the preprocessed ``y~ = y - alpha_* - beta_*.x`` of
eq. (3) (``alpha_*, beta_*`` are the population moments, as in the paper's problem statement),
and the empirical loss is ``L^(theta) = (1/n) sum_s (f(x_s; theta) - y~_s)^2``.

* :func:`empirical_grad`: the gradient of ``L^ + lambda/2 (||a||^2 + ||W||_F^2)``, a
  :class:`~twolayer.paper_b.population.Net`, vectorized over samples and neurons;
* :func:`gradient_error`: the relative Frobenius error of the empirical first-layer gradient of
  Stage 1 against the exact population gradient, and :func:`predicted_error`, its
  ``n^{-1/2}`` law ``sqrt(tr Sigma / n) / ||grad||`` with ``Sigma`` the covariance of one
  sample's gradient (an average of ``n`` i.i.d. terms: ``E err^2 = tr Sigma / (n ||grad||^2)``
  exactly);
* :func:`stage1`, :func:`stage2`, :func:`stage3`: the three stages with the empirical loss;
* :func:`gradient_study`, :func:`d_exponent`, :func:`end_to_end`: the two studies of
  {ref}`chapter-paperb-samples`.

The preprocessing uses the population ``alpha_*, beta_*`` (known in closed form for the
teacher), an idealisation: on samples they would be estimated too.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from ..core import seeds, stats
from . import features as feat
from . import fits
from . import population as pop
from .algorithm1 import balance, symmetric_init
from .kernels import kappa2
from .population import Net
from .teacher import Teacher, prototype


def one_blas_thread():
    """A context that keeps BLAS to one thread: the matrices here are small (``n x d`` times
    ``d x m``), and on a shared machine threaded BLAS only contends (measured: 20x slower on
    two busy cores). Also makes the rounding independent of the machine's thread count."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(1)


def draw(teacher: Teacher, n: int, seed: int):
    """``n`` Gaussian inputs and their preprocessed labels (deterministic in ``seed``)."""
    X = np.random.default_rng([seed, 23, n]).standard_normal((n, teacher.d))
    return X, teacher.y_tilde(X)


def empirical_loss(net: Net, X, y) -> float:
    return float(np.mean((net(X) - y) ** 2))


def empirical_grad(net: Net, X, y, lam: float = 0.0) -> Net:
    """Gradient of ``(1/n) sum (f - y)^2 + lam/2 (||a||^2 + ||W||^2)`` in
    ``(a, W, alpha, beta)``."""
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


def per_sample_trace(
    net0: Net, teacher: Teacher, n: int, seed: int, *, batch: int = 20_000, return_se: bool = False
):
    """``tr Sigma = E||g(x)||^2 - ||E g||^2`` for one sample's first-layer gradient
    ``g(x) = 2 (f(x) - y~) a_i 1{w_i.x > 0} x`` (rows ``i``), by Monte Carlo on ``n`` fresh
    inputs (``||g(x)||^2 = 4 (f - y~)^2 ||x||^2 sum_i a_i^2 1{w_i.x > 0}``); with
    ``return_se`` also the Monte Carlo standard error of the estimate."""
    rng = np.random.default_rng([seed, 29])
    s = s2 = 0.0
    done = 0
    while done < n:
        k = min(batch, n - done)
        X = rng.standard_normal((k, teacher.d))
        res = net0(X) - teacher.y_tilde(X)
        act = (X @ net0.W.T > 0) @ (net0.a**2)
        v = 4 * res**2 * np.sum(X * X, 1) * act
        s += float(np.sum(v))
        s2 += float(np.sum(v * v))
        done += k
    G = pop.grad(net0, teacher, 0.0).W
    trace = s / n - float(np.sum(G * G))
    if return_se:
        return trace, math.sqrt(max(s2 / n - (s / n) ** 2, 0.0) / n)
    return trace


def predicted_error(net0: Net, teacher: Teacher, n, trace: float) -> np.ndarray:
    """The ``n^{-1/2}`` law ``sqrt(tr Sigma / n) / ||grad_W L||_F``."""
    G = pop.grad(net0, teacher, 0.0).W
    return np.sqrt(trace / np.asarray(n, dtype=np.float64)) / np.linalg.norm(G)


def stage1(net0: Net, X, y, eta0: float = 1.0, *, lam0: float = 1.0) -> Net:
    """One step on the empirical ``L^_{lambda_0}``."""
    g = empirical_grad(net0, X, y, lam0)
    return Net(
        net0.a - eta0 * g.a,
        net0.W - eta0 * g.W,
        net0.alpha - eta0 * g.alpha,
        net0.beta - eta0 * g.beta,
    )


def stage2(net1: Net, X, y, lam: float, *, solver: str = "CLARABEL") -> Net:
    """``min_{a, alpha, beta} (1/n)||relu(X W^T) a + alpha + X beta - y||^2
    + lam sum ||w_i|| |a_i|``
    with ``W = W^(1)`` fixed (cvxpy), then balanced (``|a_i| = ||w_i||``)."""
    import cvxpy as cp

    n = len(X)
    F = np.hstack([np.maximum(X @ net1.W.T, 0.0), np.ones((n, 1)), X]) / math.sqrt(n)
    m = net1.W.shape[0]
    wn = np.linalg.norm(net1.W, axis=1)
    v = cp.Variable(F.shape[1])
    obj = cp.sum_squares(F @ v - y / math.sqrt(n)) + lam * cp.sum(cp.multiply(wn, cp.abs(v[:m])))
    cp.Problem(cp.Minimize(obj)).solve(solver=solver)
    v = np.asarray(v.value, dtype=np.float64)
    return balance(Net(v[:m], net1.W.copy(), v[m], v[m + 1 :]))


def stage3(
    net: Net, X, y, lam0: float, *, epochs: int, steps: int, eta: float, grow: float = 2.0
) -> Net:
    """Epochs of full-batch gradient descent on the empirical ``L^_{lambda_k}``,
    ``lambda_k = lam0 / 2^k``, ``round(steps grow^k)`` steps in epoch ``k``."""
    net = net.copy()
    with one_blas_thread():
        for k in range(epochs):
            lam = lam0 / 2**k
            for _ in range(round(steps * grow**k)):
                g = empirical_grad(net, X, y, lam)
                net.a -= eta * g.a
                net.W -= eta * g.W
                net.alpha -= eta * g.alpha
                net.beta -= eta * g.beta
    return net


# --- the studies of the chapter ------------------------------------------------------------------


def gradient_study(ds, ratios, reps: int, m1: int, *, mc_n: int, seed: int) -> dict:
    """Appendix J's Stage 1 gradient on ``n = ratio d^2`` samples, for every ``d`` of ``ds``:
    the prototype teacher in ``R^d`` and, per repetition, a fresh symmetric initialization of
    width ``m1`` and fresh samples. Arrays ``(len(ds), len(ratios), reps)``: ``err`` (relative
    error of the empirical first-layer gradient) and ``law`` (its predicted root mean square,
    :func:`predicted_error`, with the Monte Carlo trace of that repetition's initialization);
    ``trace_rel_se`` ``(len(ds), reps)``: the trace's relative Monte Carlo error; ``n``
    ``(len(ds), len(ratios))``."""
    shape = (len(ds), len(ratios), reps)
    err, law = np.empty(shape), np.empty(shape)
    n_all = np.empty(shape[:2], dtype=int)
    trace_rel_se = np.empty((len(ds), reps))
    with one_blas_thread():
        for i, d in enumerate(ds):
            t = prototype(d, seeds.derive(seed, "teacher"))
            for k in range(reps):
                net0 = symmetric_init(d, m1, seeds.derive(seed, "init", d, k))
                trace, se = per_sample_trace(
                    net0, t, mc_n, seeds.derive(seed, "trace", d, k), return_se=True
                )
                trace_rel_se[i, k] = se / trace
                for j, ratio in enumerate(ratios):
                    n = max(int(round(ratio * d * d)), 2)
                    n_all[i, j] = n
                    X, y = draw(t, n, seeds.derive(seed, "samples", d, k, j))
                    err[i, j, k] = gradient_error(net0, t, X, y)
                    law[i, j, k] = float(predicted_error(net0, t, n, trace))
    return {
        "err": err,
        "law": law,
        "n": n_all,
        "trace_rel_se": trace_rel_se,
        "ds": np.asarray(ds),
        "ratios": np.asarray(ratios, dtype=float),
    }


def d_exponent(study: dict, min_ratio: float = 1.0, seed: int = 0):
    """The exponent ``p`` of ``error sqrt(n) ~ d^p`` (``p = 1`` is Appendix J's ``d / sqrt(n)``,
    i.e. ``n ~ d^2`` samples for a given error), from the root mean square over the ratios
    ``>= min_ratio`` and the repetitions, with its bootstrap spread over the repetitions
    (:func:`twolayer.paper_b.fits.bootstrap`)."""
    sel = study["ratios"] >= min_ratio
    if sel.sum() < 1 or len(study["ds"]) < 2:
        raise ValueError("needs two dimensions and a ratio >= min_ratio")
    scaled = study["err"][:, sel, :] * np.sqrt(study["n"][:, sel])[:, :, None]

    def stat(S):
        return stats.fit_slope(study["ds"], np.sqrt(np.mean(S**2, axis=(1, 2))))

    return fits.bootstrap(stat, [scaled], seed=seed)


def law_ratio(study: dict, min_ratio: float = 1.0) -> np.ndarray:
    """``err^2 / law^2`` for every cell with ``n >= min_ratio d^2`` (flattened): the law is the
    exact root mean square, so these have mean 1 up to the Monte Carlo error of the traces."""
    sel = study["ratios"] >= min_ratio
    return (study["err"][:, sel, :] / study["law"][:, sel, :]).ravel() ** 2


def end_to_end(
    teacher: Teacher,
    net0: Net,
    ratios,
    lam0: float,
    *,
    epochs: int,
    steps: int,
    eta: float,
    seed: int,
) -> list[dict]:
    """Algorithm 1 on ``n = ratio d^2`` samples for every ratio (Stage 1's step, Stage 2's
    Lasso over ``(a, alpha, beta)``, balancing, ``epochs`` epochs of full-batch gradient
    descent): per ratio the population and empirical losses, the coverage after the empirical
    Stage 1 (for every teacher its nearest neuron, worst over the teachers) and, at the end,
    for every teacher neuron the nearest student neuron of visible mass (above
    ``sqrt(L / kappa2(1))``)."""
    kap = float(kappa2(1.0))
    rows = []
    for j, ratio in enumerate(ratios):
        n = int(round(ratio * teacher.d**2))
        X, y = draw(teacher, n, seeds.derive(seed, "end-to-end", teacher.d, j))
        net1 = stage1(net0, X, y)
        cover = float(feat.angles(net1, teacher).min(0).max())
        net = stage3(stage2(net1, X, y, lam0), X, y, lam0, epochs=epochs, steps=steps, eta=eta)
        L = pop.loss(net, teacher)
        thr = math.sqrt(L / kap)
        rows.append(
            {
                "d": teacher.d,
                "n / d^2": ratio,
                "n": n,
                "population loss": L,
                "empirical loss": empirical_loss(net, X, y),
                "stage 1 coverage": cover,
                "visible neurons": int(np.sum(feat.mass(net) > thr)),
                "worst nearest angle": float(
                    feat.nearest_angle_per_teacher(net, teacher, thr).max()
                ),
            }
        )
    return rows


def population_run(
    teacher: Teacher, net0: Net, lam0: float, epochs: int, *, steps: int, eta: float
) -> dict:
    """The same schedule as :func:`end_to_end` on the exact population loss (Stages 1-3 of
    :mod:`~twolayer.paper_b.algorithm1`): its loss and, for every teacher neuron, the nearest
    student neuron of visible mass (worst over the teachers)."""
    from .algorithm1 import stage1 as pop_stage1
    from .algorithm1 import stage2 as pop_stage2
    from .algorithm1 import stage3 as pop_stage3

    net2, _ = pop_stage2(pop_stage1(net0, teacher), teacher, lam0)
    net, _ = pop_stage3(
        net2, teacher, lam0, epochs, steps=steps, eta=eta, record_every=10**9, grow=2.0
    )
    L = pop.loss(net, teacher)
    thr = math.sqrt(L / float(kappa2(1.0)))
    return {
        "loss": L,
        "worst nearest angle": float(feat.nearest_angle_per_teacher(net, teacher, thr).max()),
    }
