"""Gradient flow followed by loss-normalized gradient descent (Paper A, Theorems 3.1 and 3.4).

Gradient flow ``dW/dt = -grad L(W)`` and the normalized flow ``dW/ds = -grad L(W) / L(W)`` have
the same trajectories: with ``dt = ds / L(W(s))`` one is a time change of the other. The
normalized flow moves at a speed that does not shrink as ``L -> 0``, so its Euler steps
``W <- W - lr grad L / L`` (:func:`twolayer.paper_a.trainer.gradient_descent` with
``normalized=True``; :func:`normalized_flow` runs the same update in a lean loop) reach the
directional limit in a few thousand steps, where plain gradient descent would need
``exp(thousands)``. The gradient-flow time of step ``k`` is the Riemann sum
``t_k = sum_{j<k} lr / L(W_j)``; it is kept in log space (:func:`log_flow_time`) because it grows
exponentially with ``s = k lr``.

The component of ``W`` orthogonal to ``span{x_i}`` never moves (every gradient is a
combination of the ``x_i``), so :func:`span_coordinates` expresses the data in an orthonormal
basis of their span: training there is exactly the projection of training in ``R^d``.

Certifying a run (chapter ``paper_a/gradient_flow``, also ``paper_a/kkt_not_max_margin``):
:func:`certify_run` measures Theorem 3.2's items along a run against the convex optimum,
:func:`distance_history` the distance to it at every checkpoint, :func:`rate_slopes` the rate
at which it falls (like ``1/s`` once the activation patterns are frozen), and
:func:`steps_for_tolerance` / :func:`flow_to_tolerance` extend a run until deviations that fall
like ``1/s`` reach a tolerance: a tolerance comes with the steps that reach it.
:func:`phase_diagram` certifies the items on Gaussian data at dimensions below and above
Theorem 3.2's assumption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..core import stats
from . import losses, metrics
from .trainer import log_spaced_steps


def span_coordinates(X) -> tuple[np.ndarray, np.ndarray]:
    """``(X Q, Q)`` with ``Q`` (``d x r``) an orthonormal basis of ``span{x_i}``, ``r = rank X``.

    A weight matrix ``W_c`` in these coordinates is ``W = W_c Q^T`` in ``R^d``, and
    ``f(x; W) = f(Q^T x; W_c)``; for ``x ~ N(0, I_d)``, ``Q^T x ~ N(0, I_r)``."""
    X = np.asarray(X, dtype=np.float64)
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    r = int((s > s[0] * 1e-12).sum())
    Q = Vt[:r].T
    return X @ Q, Q


def log_flow_time(log_loss: np.ndarray, lr) -> np.ndarray:
    """``log t_k`` with ``t_k = sum_{j<k} lr / L_j`` (``-inf`` at ``k = 0``), from the per-step
    ``log L_j`` (first axis: steps); ``lr`` a number or one per configuration (last axis)."""
    terms = np.log(np.asarray(lr, dtype=np.float64)) - np.asarray(log_loss, dtype=np.float64)
    out = np.full(terms.shape, -np.inf)
    out[1:] = np.logaddexp.accumulate(terms[:-1], axis=0)
    return out


@dataclass
class FlowRun:
    """Weights at the checkpoints, per-step log-loss and log gradient-flow time."""

    checkpoints: np.ndarray  # (K,) step numbers
    W: torch.Tensor  # (K, B, m, d) weights at the checkpoints, on the host
    log_loss: np.ndarray  # (steps + 1, B)
    log_time: np.ndarray  # (steps + 1, B): log of the gradient-flow time
    lr: float | np.ndarray  # a number, or one step per configuration (B,)

    @property
    def s(self) -> np.ndarray:
        """Normalized time ``s = k lr`` of the checkpoints: ``(K,)``, or ``(K, B)`` when each
        configuration has its own step."""
        lr = np.asarray(self.lr)
        return self.checkpoints * lr if lr.ndim == 0 else np.outer(self.checkpoints, lr)

    def settled_below(self, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        """Per configuration: the first step ``t0`` from which on every recorded loss is below
        ``threshold`` (Theorem 3.4's ``t0``, within the run) and its gradient-flow time
        (``-1`` and ``inf`` when the last loss is not below)."""
        above = self.log_loss >= math.log(threshold)
        last_above = np.where(
            above.any(axis=0), above.shape[0] - 1 - np.argmax(above[::-1], axis=0), -1
        )
        ok = ~above[-1]
        step = np.where(ok, last_above + 1, -1)
        cols = np.arange(self.log_loss.shape[1])
        t = np.where(ok, np.exp(self.log_time[np.maximum(step, 0), cols]), np.inf)
        return step, t

    def first_below(self, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        """Per configuration: the first step with ``L < threshold`` and its gradient-flow time
        (``-1`` and ``inf`` when the run never got there)."""
        below = self.log_loss < math.log(threshold)
        hit = below.any(axis=0)
        step = np.where(hit, below.argmax(axis=0), -1)
        cols = np.arange(self.log_loss.shape[1])
        t = np.where(hit, np.exp(self.log_time[np.maximum(step, 0), cols]), np.inf)
        return step, t


def normalized_flow(
    net,
    W0: torch.Tensor,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    loss: str,
    lr,
    checkpoints,
    progress: bool | None = None,
) -> FlowRun:
    """Loss-normalized gradient descent from ``W0`` (``(B, m, d)``) for ``checkpoints[-1]``
    steps, keeping ``W`` at every checkpoint and ``log L`` at every step. ``X`` may be shared
    ``(n, d)`` or one data set per configuration ``(B, n, d)``; ``lr`` a float or one step per
    configuration (``(B,)``; then :attr:`FlowRun.s` is ``(K, B)``).

    The same update as :func:`twolayer.paper_a.trainer.gradient_descent` with
    ``normalized=True``, in a lean loop that keeps ``log L`` aside and checks finiteness at
    the checkpoints only (a non-finite value propagates to the next one). In torch it is the
    trainer's update bit for bit; for the leaky ReLU on float64 CPU tensors (and
    ``NUMPY_LOOP``) the loop runs in NumPy, whose per-call overhead is five times smaller on
    the tiny arrays of Section 3 (and which is no slower on the larger ones of noisy XOR), and
    agrees with the trainer to rounding (a test compares them to 1e-12). ``progress`` is
    accepted for compatibility and ignored."""
    from .trainer import DivergenceError

    ck = np.unique(np.asarray(checkpoints, dtype=int))
    if ck.size == 0 or ck[0] < 0:
        raise ValueError("checkpoints must be non-negative step numbers")
    if ck[0] != 0:
        ck = np.concatenate([[0], ck])
    lossf = losses.get_loss(loss) if isinstance(loss, str) else loss
    W = W0.clone(memory_format=torch.contiguous_format)
    if W.ndim != 3:
        raise ValueError("W0 must have shape (B, m, d)")
    B, m, d = W.shape
    X = torch.as_tensor(X).to(dtype=W.dtype, device=W.device)
    y = torch.as_tensor(y).to(dtype=W.dtype, device=W.device)
    lr_arr = np.asarray(lr, dtype=np.float64)
    if (
        lr_arr.ndim > 1
        or (lr_arr.ndim == 1 and lr_arr.shape[0] != B)
        or not np.all(np.isfinite(lr_arr))
        or np.any(lr_arr <= 0)
    ):
        raise ValueError("lr must be a positive number or one positive number per configuration")
    per_config = lr_arr.ndim == 1
    lr_t = (
        torch.as_tensor(lr_arr, dtype=W.dtype, device=W.device).reshape(B, 1, 1)
        if per_config
        else None
    )
    alpha = 1.0 if per_config else float(lr_arr)
    shared = X.ndim == 2
    if NUMPY_LOOP and _numpy_ok(net, lossf, W, X):
        return _numpy_flow(net, lossf, W, X, y, lr_arr, ck)
    Xt = X.transpose(-1, -2)
    a = net.a(W)
    a_col = a[:, None]
    steps = int(ck[-1])
    hist = torch.empty(steps + 1, B, dtype=W.dtype, device=W.device)
    W_rows = W.view(B * m, d)
    Ws = [W.clone()]
    marks = set(int(c) for c in ck[1:])
    for t in range(steps + 1):
        Z = W @ Xt
        q = y * (a @ net.phi(Z))
        lse = torch.logsumexp(lossf.log_ell(q), dim=-1, keepdim=True)
        hist[t] = lse[:, 0]
        if t in marks:
            if not bool(torch.isfinite(hist[t]).all()) or not bool(torch.isfinite(W).all()):
                finite = torch.isfinite(hist[t]) & torch.isfinite(W).reshape(B, -1).all(1)
                bad = int(torch.nonzero(~finite)[0])
                raise DivergenceError(t, "loss or weights", float(hist[t, bad]), bad)
            Ws.append(W.clone())
        if t == steps:
            break
        C = net.phi.grad(Z) * (torch.exp(lossf.log_g(q) - lse) * y).unsqueeze(-2) * a_col
        if per_config:
            C = C * lr_t
        if shared:
            W_rows.addmm_(C.reshape(B * m, -1), X, alpha=alpha)
        else:
            W.baddbmm_(C, X, alpha=alpha)
    log_loss = (hist - math.log(X.shape[-2])).cpu().numpy()
    lr_out = lr_arr if per_config else float(lr_arr)
    # the checkpoints come back to the host (the pages analyse them in NumPy): one copy
    return FlowRun(ck, torch.stack(Ws).cpu(), log_loss, log_flow_time(log_loss, lr_out), lr_out)


NUMPY_LOOP = True  # False: every run takes the torch loop (the trainer's update bit for bit)


def _numpy_ok(net, lossf, W, X) -> bool:
    return (
        getattr(net.phi, "name", None) == "leaky_relu"
        and lossf.name in losses.NUMPY_LOSSES
        and W.dtype == torch.float64
        and X.dtype == torch.float64
        and W.device.type == "cpu"
        and X.device.type == "cpu"
    )


def _numpy_flow(net, lossf, W: torch.Tensor, X: torch.Tensor, y: torch.Tensor, lr_arr, ck):
    """:func:`normalized_flow`'s loop in NumPy (leaky ReLU, exponential or logistic loss, the
    NumPy losses of :data:`twolayer.paper_a.losses.NUMPY_LOSSES`)."""
    from .trainer import DivergenceError

    Wn = W.numpy().copy()
    Xn, yn = X.numpy(), y.numpy()
    B, m, _ = Wn.shape
    gamma = float(net.gamma)
    a = net.a(W).numpy()
    a_col = a[:, None]
    per_config = lr_arr.ndim == 1
    lr_b = lr_arr.reshape(B, 1, 1) if per_config else float(lr_arr)
    shared = Xn.ndim == 2
    Xt = Xn.T if shared else np.swapaxes(Xn, -1, -2)
    steps = int(ck[-1])
    hist = np.empty((steps + 1, B))
    Ws = [Wn.copy()]
    marks = set(int(c) for c in ck[1:])
    npl = losses.NUMPY_LOSSES[lossf.name]
    for t in range(steps + 1):
        Z = Wn @ Xt
        pos = Z >= 0
        q = yn * (a @ np.where(pos, Z, gamma * Z))
        log_ell = npl.log_ell(q)
        mx = log_ell.max(axis=-1, keepdims=True)
        lse = mx + np.log(np.exp(log_ell - mx).sum(axis=-1, keepdims=True))
        hist[t] = lse[:, 0]
        if t in marks:
            finite = np.isfinite(hist[t]) & np.isfinite(Wn).reshape(B, -1).all(axis=1)
            if not finite.all():
                bad = int(np.flatnonzero(~finite)[0])
                raise DivergenceError(t, "loss or weights", float(hist[t, bad]), bad)
            Ws.append(Wn.copy())
        if t == steps:
            break
        C = np.where(pos, 1.0, gamma) * (np.exp(npl.log_g(q) - lse) * yn)[..., None, :]
        C *= a_col
        Wn += lr_b * (C @ Xn)
    log_loss = hist - math.log(Xn.shape[-2])
    lr_out = lr_arr if per_config else float(lr_arr)
    return FlowRun(
        ck, torch.as_tensor(np.stack(Ws)), log_loss, log_flow_time(log_loss, lr_out), lr_out
    )


def continue_flow(
    run: FlowRun, net, X: torch.Tensor, y: torch.Tensor, *, loss: str, checkpoints
) -> FlowRun:
    """``run`` extended to ``checkpoints[-1]`` (steps counted from the start of ``run``; those at
    or before its last step are ignored), keeping its checkpoints, losses and flow time."""
    last = int(run.checkpoints[-1])
    ck = np.unique(np.asarray(checkpoints, dtype=int))
    ck = ck[ck > last]
    if ck.size == 0:
        return run
    W_last = run.W[-1].to(device=torch.as_tensor(X).device)  # the checkpoints are on the host
    ext = normalized_flow(net, W_last, X, y, loss=loss, lr=run.lr, checkpoints=ck - last)
    log_loss = np.concatenate([run.log_loss, ext.log_loss[1:]])
    return FlowRun(
        np.concatenate([run.checkpoints, ck]),
        torch.cat([run.W, ext.W[1:]]),
        log_loss,
        log_flow_time(log_loss, run.lr),
        run.lr,
    )


def steps_for_tolerance(deviations, tolerances, steps: int, factor: float = 2.0) -> int:
    """The step count at which deviations that fall like ``1/s`` (``s = steps * lr``), measured
    at ``steps``, reach ``tolerances / factor``: ``ceil(steps * factor * max(dev / tol))``, and
    at least ``steps``. ``factor`` (2 by default) leaves room for a rate that is not exactly
    ``1/s`` at the end of the run. NaN deviations raise (a run that does not separate the data
    has no deviation to extrapolate)."""
    dev = np.asarray(deviations, dtype=float)
    tol = np.broadcast_to(np.asarray(tolerances, dtype=float), dev.shape)
    if np.any(np.isnan(dev)):
        raise ValueError("a deviation is NaN: the run does not separate every training set")
    if np.any(tol <= 0) or factor <= 0:
        raise ValueError("tolerances and factor must be positive")
    worst = float(np.max(dev / tol)) if dev.size else 0.0
    return max(int(steps), int(math.ceil(steps * factor * worst)))


def flow_to_tolerance(
    net,
    W0: torch.Tensor,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    loss: str,
    lr: float,
    steps: int,
    deviations,
    tolerances,
    num_checkpoints: int = 24,
    factor: float = 2.0,
) -> tuple[FlowRun, int]:
    """Run :func:`normalized_flow` for ``steps`` (log-spaced checkpoints), measure
    ``deviations(W)`` (``W``: ``(B, m, d)``; an array of deviations that fall like ``1/s``) at
    the end, and extend the run to :func:`steps_for_tolerance` steps when that is more.
    Returns the run and the total step count. Used where a page's tolerance tightens with its
    profile: the steps that reach it come from the rate the run itself shows."""
    run = normalized_flow(
        net, W0, X, y, loss=loss, lr=lr, checkpoints=log_spaced_steps(steps, num_checkpoints)
    )
    need = steps_for_tolerance(deviations(run.W[-1]), tolerances, steps, factor)
    if need > steps:
        extra = np.geomspace(steps, need, max(num_checkpoints // 2, 3)).round().astype(int)
        run = continue_flow(run, net, X, y, loss=loss, checkpoints=np.append(extra, need))
    return run, int(run.checkpoints[-1])


def _f64(a) -> torch.Tensor:
    return torch.as_tensor(np.asarray(a, dtype=np.float64))


def distance_history(run: FlowRun, net, X, y, *, W_star) -> np.ndarray:
    """``||W~ - W*||_F / ||W*||_F`` with ``W~`` the margin-normalized weights, at every
    checkpoint and configuration: shape ``(K, B)`` (NaN where the data are not separated)."""
    X, y = _f64(X), _f64(y)
    Ws = torch.as_tensor(np.asarray(W_star, dtype=np.float64))
    Wn = metrics.normalize_by_margin(net, run.W, X, y, strict=False)
    return (torch.linalg.norm(Wn - Ws, dim=(-2, -1)) / torch.linalg.norm(Ws)).numpy()


def rate_slopes(s, values, decades: float = 1.0) -> np.ndarray:
    """Least-squares slope of ``log values`` against ``log s`` over the last ``decades`` of
    ``s`` (``s > 0``), per column of ``values`` (``(K,)`` or ``(K, B)``): -1 for a ``1/s``
    rate. NaN where fewer than two finite points fall in the window."""
    s = np.asarray(s, dtype=float)
    v = np.asarray(values, dtype=float)
    v2 = v.reshape(len(s), -1)
    keep = (s > 0) & (s >= s.max() / 10**decades)
    out = np.full(v2.shape[1], np.nan)
    for b in range(v2.shape[1]):
        ok = keep & np.isfinite(v2[:, b]) & (v2[:, b] > 0)
        if ok.sum() >= 2:
            out[b] = stats.fit_slope(s[ok], v2[ok, b])
    return out if v.ndim > 1 else out[0]


def certify_run(
    run: FlowRun, net, X, y, *, sol, z_star, X_test, configs=None, every_checkpoint: bool = True
):
    """:func:`twolayer.paper_a.kkt.certify` at every checkpoint (or only the last) of ``run``
    for the configurations ``configs`` (default: all), as a table with ``config``, ``step``,
    ``s`` (normalized time), ``log10_t`` (gradient-flow time) and the certificate's entries;
    checkpoints where the data are not yet separated are skipped (Theorem 3.2, items 1-7,
    along the flow; chapter ``paper_a/gradient_flow``)."""
    import pandas as pd

    from .kkt import certify

    Xt, yt = _f64(X), _f64(y)
    configs = range(run.W.shape[1]) if configs is None else configs
    ks = range(len(run.checkpoints)) if every_checkpoint else [len(run.checkpoints) - 1]
    rows = []
    for k in ks:
        step = int(run.checkpoints[k])
        for b in configs:
            W = run.W[k, b]
            if float(net.margins(W, Xt, yt).min()) <= 0:
                continue
            c = certify(net, W, X, y, sol=sol, z_star=z_star, X_test=X_test)
            rows.append(
                {
                    "config": int(b),
                    "step": step,
                    "s": step * run.lr,
                    "log10_t": run.log_time[step, b] / math.log(10),
                    **c,
                }
            )
    return pd.DataFrame(rows)


PHASE_ITEMS = ("1 margins", "2 collapse", "3 rank 2", "4-5 convex", "6 linear", "7 z bound")


def phase_diagram(
    net,
    ns,
    dims: dict,
    draws: int,
    *,
    loss: str,
    init_scale: float,
    steps: int,
    tol: float,
    n_test: int,
    seed: int,
    factor: float = 2.0,
):
    """Theorem 3.2's items on Gaussian data below and above its assumption (chapter
    ``paper_a/gradient_flow``, the phase diagram).

    For each ``n`` in ``ns``, each ``d`` in ``dims[n]`` and ``draws`` data sets: ``x_i ~
    N(0, I_d)`` with fair-coin labels, in exact span coordinates
    (:func:`twolayer.paper_a.data.gaussian_span_coordinates`, so any ``d`` costs the same) and
    scaled by ``1/sqrt(d)``; the network ``net`` is trained by normalized gradient descent
    (step ``1/R_max^2`` per data set) from ``w_j ~ N(0, init_scale^2/k I_k)`` in the ``k``
    coordinates, for ``steps`` steps, extended by the rule of :func:`flow_to_tolerance` until
    the draws that satisfy the assumption reach ``tol``; every draw of that ``n`` runs the same
    number of steps, so a draw below the assumption is never judged after fewer. Each row is
    one draw: ``n, d, draw, ratio`` (``n / n_max``), ``holds``, ``separated``, every item of
    ``PHASE_ITEMS`` (true when its deviation is at most ``tol``; item 2 also needs the
    multipliers in their interval, item 7 ``||z||/||z*||`` within the bound plus ``z_slack``),
    ``all items`` and ``steps``. Seeds derive from ``seed`` (:mod:`twolayer.core.seeds`)."""
    import pandas as pd

    from ..core import seeds
    from . import assumptions, data, kkt

    rows = []
    bound = kkt.z_bound(net.m1, net.m2, net.gamma)
    for nn in ns:
        sets = [
            (
                int(dd),
                k,
                data.gaussian_span_coordinates(
                    nn, int(dd), seed=seeds.derive(seed, "phase-data", nn, int(dd), k)
                ),
            )
            for dd in dims[nn]
            for k in range(draws)
        ]
        k_coord = max(s_.X.shape[1] for _, _, s_ in sets)
        Xs = np.zeros((len(sets), nn, k_coord))
        for b, (dd, _, s_) in enumerate(sets):
            Xs[b, :, : s_.X.shape[1]] = s_.X / math.sqrt(dd)
        ys = np.stack([s_.y for _, _, s_ in sets])
        Xb, yb = torch.as_tensor(Xs), torch.as_tensor(ys)
        lr = 1.0 / np.linalg.norm(Xs, axis=-1).max(axis=-1) ** 2
        asm = [assumptions.near_orthogonality(Xs[b], net.gamma) for b in range(len(sets))]
        X_test = seeds.rng(seed, "phase-test", nn).standard_normal((n_test, k_coord))
        W0 = net.init(
            k_coord,
            init_scale / math.sqrt(k_coord),
            seed=seeds.derive(seed, "phase-init", nn),
            batch=len(sets),
        )
        run = normalized_flow(net, W0, Xb, yb, loss=loss, lr=lr, checkpoints=[steps])
        sols: dict = {}
        held = [b for b in range(len(sets)) if asm[b].holds]
        W_end = run.W[-1]
        if held:
            dev = []
            for b in held:
                sol_b = _phase_solution(sols, net, Xs[b], ys[b], b)[0]
                d_b = kkt.deviations(net, W_end[b : b + 1], Xs[b], ys[b], sol=sol_b, X_test=X_test)
                dev.append([d_b[key] for key in kkt.DEVIATIONS])
            need = steps_for_tolerance(dev, tol, steps, factor)
            if need > steps:  # every draw goes on for the same steps, under the assumption or not
                W_end = normalized_flow(
                    net, W_end, Xb, yb, loss=loss, lr=lr, checkpoints=[need - steps]
                ).W[-1]
        else:
            need = steps
        for b, (dd, k, _) in enumerate(sets):
            row = {
                "n": nn,
                "d": dd,
                "draw": k,
                "ratio": asm[b].ratio,
                "holds": asm[b].holds,
                "steps": need,
            }
            W = W_end[b]
            sep = float(net.margins(W, Xb[b], yb[b]).min()) > 0
            row["separated"] = sep
            if sep:
                sol, z_star = _phase_solution(sols, net, Xs[b], ys[b], b)
                c = kkt.certify(net, W, Xs[b], ys[b], sol=sol, z_star=z_star, X_test=X_test)
                ok = {
                    "1 margins": c["margin_max_dev"] <= tol,
                    "2 collapse": c["row_collapse"] <= tol and c["lambda_in_range"],
                    "3 rank 2": c["rank_ratio"] <= tol,
                    "4-5 convex": c["dist_to_convex"] <= tol,
                    "6 linear": 1 - c["sign_agreement"] <= tol,
                    "7 z bound": c["z_ratio"] <= bound + c["z_slack"],
                }
                row.update({key: bool(v) for key, v in ok.items()})
                row["dist_to_convex"] = c["dist_to_convex"]
            else:
                row.update({key: False for key in PHASE_ITEMS})
                row["dist_to_convex"] = float("nan")
            rows.append(row)
    out = pd.DataFrame(rows)
    out["all items"] = out[list(PHASE_ITEMS)].all(axis=1)
    return out


def _phase_solution(cache: dict, net, X, y, b: int):
    """Problem (3)'s optimum and ``z*`` for data set ``b`` (solved once, then cached)."""
    from . import kkt

    if b not in cache:
        cache[b] = (
            kkt.solve_problem3(X, y, net.m1, net.m2, gamma=net.gamma),
            kkt.max_margin_separator(X, y)[0],
        )
    return cache[b]


def first_dimension(table, column: str) -> dict:
    """Per ``n``: the smallest ``d`` of the grid from which on ``column`` holds for every draw
    at that ``d`` and at every larger ``d`` (``nan`` when the largest ``d`` fails)."""
    out = {}
    for nn, g in table.groupby("n"):
        by_d = g.groupby("d")[column].all().sort_index()
        d_first = float("nan")
        for dd, ok in zip(by_d.index[::-1], by_d.values[::-1], strict=True):
            if not ok:
                break
            d_first = float(dd)
        out[int(nn)] = d_first
    return out


def initializations(
    net, k: int, d: int, init_scale: float, *, mults, directions: int, seed: int
) -> torch.Tensor:
    """``directions`` random initial directions, each at every scale of ``mults``: ``W`` of
    shape ``(directions * len(mults), m, k)``, run ``b`` being direction ``b // len(mults)``
    at scale ``mults[b % len(mults)] * init_scale``. Rows are ``N(0, scale^2/d I_d)``
    projected on a ``k``-dimensional coordinate frame (exactly ``N(0, scale^2/d I_k)``), as
    training in the span of the data needs (chapter ``paper_a/gradient_flow``, item 4)."""
    mults = torch.as_tensor(np.asarray(mults, dtype=np.float64))
    W_dirs = net.init(k, 1.0, seed=seed, batch=directions)
    scale = mults * init_scale / math.sqrt(d)
    return (W_dirs[:, None] * scale[None, :, None, None]).reshape(-1, net.m, k)


def deviation_function(net, X, y, sol, *, X_test, kkt_residual: bool = False):
    """``W -> deviations``: Theorem 3.2's items 1-6 as deviations that vanish at the limit
    (``twolayer.paper_a.kkt.DEVIATIONS``, one row each, one column per run of ``W``
    (``(B, m, k)``)), plus Theorem 3.1's KKT residual when ``kkt_residual``; the argument
    :func:`flow_to_tolerance` takes."""
    from . import kkt

    def deviations(W):
        dev = kkt.deviations(net, W, X, y, sol=sol, X_test=X_test)
        rows = [dev[key] for key in kkt.DEVIATIONS]
        if kkt_residual:
            rows.append(np.array([kkt.kkt_residual(net, w, X, y)["residual"] for w in W]))
        return np.stack(rows)

    return deviations


def leak_sweep(
    n: int,
    d: int,
    m_pairs,
    gammas,
    *,
    gap: float,
    loss: str,
    init_scale: float,
    steps: int,
    tol: float,
    n_test: int,
    seed: int,
):
    """Theorem 3.2 across leaks and widths (chapter ``paper_a/gradient_flow``): for each
    ``gamma`` in ``gammas`` the constructed data of :func:`twolayer.paper_a.data.constructed_gram`
    (the same draw for every ``gamma``, at ``n / n_max = gap``), and for each ``(m1, m2)`` in
    ``m_pairs`` one run from ``N(0, init_scale^2/d I)`` by :func:`flow_to_tolerance` to ``tol``.
    Returns a table (one row per setting: ``gamma, m1, m2, ratio, steps, deviation`` (the
    largest of items 1-6), ``dist_to_convex``, ``wstar_z_ratio`` (item 7's ratio at the
    solver's optimum), ``z_ratio``, ``z_slack``, ``z_bound``, ``lambda_in_range``) and the
    distance curves ``{(gamma, m1, m2): (s, distance)}``."""
    import pandas as pd

    from ..core import seeds
    from . import assumptions, data, kkt
    from .models import LeakyNetwork

    rows, curves = [], {}
    X_test = seeds.rng(seed, "sweep-test").standard_normal((n_test, n))
    for g in gammas:
        ds = data.constructed_gram(n, d, seed=seeds.derive(seed, "data"), gamma=g, ratio=gap)
        Xg, _ = span_coordinates(ds.X)
        asm = assumptions.near_orthogonality(ds.X, g)
        Xt, yt = _f64(Xg), _f64(ds.y)
        Xtest = X_test[:, : Xg.shape[1]]
        for m1, m2 in m_pairs:
            net = LeakyNetwork(m1, m2, gamma=g)
            sol = kkt.solve_problem3(Xg, ds.y, m1, m2, gamma=g)
            z_star, _ = kkt.max_margin_separator(Xg, ds.y)
            W0 = initializations(
                net,
                Xg.shape[1],
                d,
                init_scale,
                mults=[1.0],
                directions=1,
                seed=seeds.derive(seed, "sweep-init", m1, m2),
            )
            run, total = flow_to_tolerance(
                net,
                W0,
                Xt,
                yt,
                loss=loss,
                lr=1.0 / asm.R_max**2,
                steps=steps,
                deviations=deviation_function(net, Xg, ds.y, sol, X_test=Xtest),
                tolerances=tol,
                num_checkpoints=12,
            )
            curves[(g, m1, m2)] = (run.s, distance_history(run, net, Xg, ds.y, W_star=sol.W)[:, 0])
            c = certify_run(
                run, net, Xg, ds.y, sol=sol, z_star=z_star, X_test=Xtest, every_checkpoint=False
            ).iloc[0]
            rows.append(
                {
                    "gamma": g,
                    "m1": m1,
                    "m2": m2,
                    "ratio": asm.ratio,
                    "steps": total,
                    "deviation": max(
                        c.margin_max_dev,
                        c.row_collapse,
                        c.rank_ratio,
                        c.dist_to_convex,
                        1 - c.sign_agreement,
                    ),
                    "dist_to_convex": c.dist_to_convex,
                    "wstar_z_ratio": float(np.linalg.norm(sol.z) / np.linalg.norm(z_star)),
                    "z_ratio": c.z_ratio,
                    "z_slack": c.z_slack,
                    "z_bound": kkt.z_bound(m1, m2, g),
                    "lambda_in_range": c.lambda_in_range,
                }
            )
    return pd.DataFrame(rows), curves
