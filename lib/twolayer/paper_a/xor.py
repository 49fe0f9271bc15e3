"""Noisy 2-XOR in high dimension: when the simplicity bias hurts (Paper A, Section 5).

Chapter ``paper_a/noisy_xor``. Every linear classifier has test error exactly 1/2 on noisy
2-XOR (the label is even in ``x``), and under Theorem 3.2's assumption the limit of gradient flow
has a linear decision boundary (item 6), hence test error 1/2 too, from any initialization
(Theorem 3.4 and Corollary 3.5).

* :func:`xor_batch` draws training and test sets for many dimensions ``d`` in exact
  low-dimensional coordinates (:func:`twolayer.paper_a.data.noisy_xor_span_coordinates`, so
  ``d = 10^9`` costs what ``d = 50`` does), scaled by ``1/sqrt(d + ||mu||^2)``;
* :func:`train_and_test` trains the network on all of them at once by loss-normalized gradient
  descent (:func:`twolayer.paper_a.flow.normalized_flow`) from one or several initialization
  scales, extending the runs until the measured ``1/s`` rate brings the decision boundary of
  the runs that satisfy the assumption within ``tol`` of linear, and measures train error, test
  error and the agreement of ``sign f`` with the linear rule ``sign <z, x>``;
* :func:`summarize` reports the confidence interval over seeds
  (:func:`twolayer.core.stats.t_interval`), and :func:`chance_slack` how far a network's test
  error may be from 1/2 when its boundary is linear on all but a fraction of the test points.

Seeds derive from the page's seed through :mod:`twolayer.core.seeds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..core import seeds, stats
from ..core.device import resolve_dtype
from . import assumptions, data, flow, kkt


@dataclass
class XorBatch:
    """Training and test sets for every ``(d, seed)``, padded to a common width ``k``."""

    info: pd.DataFrame  # one row per data set: d, seed, ratio (n / n_max), holds
    X: torch.Tensor  # (B, n, k)
    y: torch.Tensor  # (B, n)
    X_test: torch.Tensor  # (B, n_test, k)
    y_test: np.ndarray  # (B, n_test)


def xor_batch(
    n: int, dims, num_seeds: int, n_test: int, *, beta: float, gamma: float, seed: int
) -> XorBatch:
    """``num_seeds`` noisy-XOR training sets of ``n`` points (``||mu_1|| = ||mu_2|| =
    d^beta``) and ``n_test`` fresh test points each, for every ``d`` in ``dims``; Theorem 3.2's
    assumption is evaluated (at leak ``gamma``) on each training set."""
    dims = [int(d) for d in dims]
    if n < 2 or num_seeds < 1 or n_test < 1 or not dims:
        raise ValueError("need n >= 2, num_seeds >= 1, n_test >= 1 and at least one d")
    k = min(n + 2, max(dims))
    B = len(dims) * num_seeds
    # filled in place: the test sets are the batch's largest array (paper profile: 512 data
    # sets x 20 000 points x 66 coordinates, 5.4 GB), so it is never held twice
    Xs, ys = np.zeros((B, n, k)), np.zeros((B, n))
    Xts, yts = np.zeros((B, n_test, k)), np.zeros((B, n_test))
    rows = []
    for dd in dims:
        for s in range(num_seeds):
            b = len(rows)
            tr = data.noisy_xor_span_coordinates(
                n, dd, seed=seeds.derive(seed, "xor-train", dd, s), beta=beta
            )
            te = data.noisy_xor_test_coordinates(
                tr, n_test, seed=seeds.derive(seed, "xor-test", dd, s)
            )
            scale = 1.0 / math.sqrt(dd + tr.info["mu_norm"] ** 2)
            Xs[b, :, : tr.X.shape[1]] = tr.X * scale
            Xts[b, :, : te.X.shape[1]] = te.X * scale
            ys[b], yts[b] = tr.y, te.y
            a_ = assumptions.near_orthogonality(tr.X, gamma)
            rows.append({"d": dd, "seed": s, "ratio": a_.ratio, "holds": a_.holds})
    return XorBatch(
        pd.DataFrame(rows),
        torch.as_tensor(Xs),
        torch.as_tensor(ys),
        torch.as_tensor(Xts),
        yts,
    )


CHUNK_BYTES = 2**27  # test outputs and hidden activations per chunk of _measure (128 MB)


def _measure(net, W, X, y, Xt, yt, data_index=None) -> dict[str, np.ndarray]:
    """The errors and the agreement with the linear rule ``z`` of the trained ``W`` (one row
    per run): outputs computed on ``W``'s device and read back (the measurement ends a run: a
    host read by design). ``Xt`` and ``yt`` are the test sets of the data sets, and run ``i``
    is tested on data set ``data_index[i]`` (default: ``i``), so the test sets are never
    repeated per initialization scale; the runs are measured in chunks of about
    :data:`CHUNK_BYTES` (the paper profile tests 1 024 runs on 20 000 points each)."""
    R = W.shape[0]
    idx = np.arange(R) if data_index is None else np.asarray(data_index)
    n_test, k = Xt.shape[-2], Xt.shape[-1]
    per_run = 8 * n_test * max(k, W.shape[-2])
    step = max(1, CHUNK_BYTES // per_run)
    f, lin = np.empty((R, n_test)), np.empty((R, n_test))
    z_all = torch.as_tensor(kkt.z_from_weights(W.cpu(), net.m1))  # NumPy: float64
    for lo in range(0, R, step):
        rows = slice(lo, min(R, lo + step))
        sel = torch.as_tensor(idx[rows], device=Xt.device)
        Xt_c = Xt[sel]
        f[rows] = net(W[rows], Xt_c).cpu().numpy()
        z = z_all[rows].to(Xt.dtype)
        lin[rows] = np.sign((Xt_c.cpu() @ z.unsqueeze(-1)).squeeze(-1).numpy())
    yt_runs = np.asarray(yt)[idx]
    return {
        "train_error": (np.sign(net(W, X).cpu().numpy()) != y.cpu().numpy()).mean(axis=1),
        "test_error": (np.sign(f) != yt_runs).mean(axis=1),
        "linear_agreement": (np.sign(f) == lin).mean(axis=1),
    }


def train_and_test(
    net,
    batch: XorBatch,
    loss: str,
    init_scales,
    *,
    steps: int,
    seed: int,
    tol: float | None = None,
    factor: float = 2.0,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype = "float64",
    equal_steps: bool = False,
    weights: dict | None = None,
) -> pd.DataFrame:
    """Train ``net`` on every data set of ``batch`` from every scale in ``init_scales`` (``w_j
    ~ N(0, scale^2/k I_k)`` in the ``k`` coordinates, one draw per data set shared across
    scales) by loss-normalized gradient descent with step ``1/R_max^2`` per data set, for
    ``steps`` steps; with ``tol``, extend the runs whose training set satisfies the assumption
    (only those: the others keep ``steps``) until their ``1 - linear_agreement`` is at most
    ``tol / factor`` by the ``1/s`` rule of :func:`twolayer.paper_a.flow.steps_for_tolerance`
    (a run that does not yet separate its data counts as a full disagreement). With
    ``equal_steps``, every other run is extended by the same number of steps (in a batch of
    its own, so the extended runs' numbers do not change), and every run has trained as long
    as the longest: a comparison across dimensions then measures the dimension, not the run
    length. ``weights``, a dict, receives the initial and final weights of every run
    (``"W0"``, ``"W"``: ``(S * B, m, k)`` NumPy arrays, run ``i`` at scale ``i // B`` on data
    set ``i % B``), for the tests of a page's setup. One row per
    run: the batch's columns, ``init_scale``, ``train_error``, ``test_error``,
    ``linear_agreement``, ``loss_ratio`` (``n L / log 2`` at the end: below 1 means every
    training point is classified correctly) and ``steps``. The runs live on ``device``
    (``None``: the CPU) in ``dtype``: data and initial weights are made on the host (the same
    draw on every device) and moved once; the results are read back at the end."""
    scales = np.asarray(init_scales, dtype=float)
    if scales.ndim != 1 or scales.size == 0 or np.any(scales <= 0):
        raise ValueError("init_scales must be a non-empty list of positive numbers")
    S, B = scales.size, len(batch.info)
    n, k = batch.X.shape[1], batch.X.shape[2]
    X_host = batch.X.repeat(S, 1, 1)
    lr = 1.0 / np.linalg.norm(X_host.numpy(), axis=-1).max(axis=-1) ** 2
    dt = resolve_dtype(dtype)
    X = X_host.to(dtype=dt, device=device)
    y = batch.y.repeat(S, 1).to(dtype=dt, device=device)
    Xt = batch.X_test.to(dtype=dt, device=device)  # B test sets, shared by the S scales
    yt = batch.y_test
    data_index = np.tile(np.arange(B), S)  # run i is tested on data set i mod B
    W_dir = net.init(k, 1.0 / math.sqrt(k), seed=seeds.derive(seed, "xor-init"), batch=B)
    W0 = (torch.as_tensor(scales)[:, None, None, None] * W_dir[None]).reshape(S * B, net.m, k)
    W0 = W0.to(dtype=dt, device=device)
    run = flow.normalized_flow(net, W0, X, y, loss=loss, lr=lr, checkpoints=[steps])
    W, log_loss = run.W[-1].to(X.device).clone(), run.log_loss[-1].copy()
    total = np.full(S * B, steps)
    held = np.tile(batch.info.holds.to_numpy(), S)
    if tol is not None and held.any():
        idx = torch.as_tensor(np.flatnonzero(held), device=X.device)
        m = _measure(net, W[idx], X[idx], y[idx], Xt, yt, data_index[held])
        separated = net.margins(W[idx], X[idx], y[idx]).min(dim=-1).values.cpu().numpy() > 0
        dis = np.where(separated, 1 - m["linear_agreement"], 1.0)
        need = flow.steps_for_tolerance(dis, tol, steps, factor)
        if need > steps:
            ext = flow.normalized_flow(
                net, W[idx], X[idx], y[idx], loss=loss, lr=lr[held], checkpoints=[need - steps]
            )
            W[idx] = ext.W[-1].to(X.device)
            log_loss[held] = ext.log_loss[-1]
            total[held] = need
            rest = ~held
            if equal_steps and rest.any():
                jdx = torch.as_tensor(np.flatnonzero(rest), device=X.device)
                ext = flow.normalized_flow(
                    net, W[jdx], X[jdx], y[jdx], loss=loss, lr=lr[rest], checkpoints=[need - steps]
                )
                W[jdx] = ext.W[-1].to(X.device)
                log_loss[rest] = ext.log_loss[-1]
                total[rest] = need
    m = _measure(net, W, X, y, Xt, yt, data_index)
    if weights is not None:
        weights["W0"] = W0.cpu().numpy().copy()
        weights["W"] = W.cpu().numpy().copy()
    out = pd.concat([batch.info] * S, ignore_index=True)
    out.insert(2, "init_scale", np.repeat(scales, B))
    for key, v in m.items():
        out[key] = v
    out["loss_ratio"] = np.exp(log_loss) * n / math.log(2)
    out["steps"] = total
    return out


def chance_slack(n_test: int, runs: int, disagreement: float, sds: float = 5.0) -> float:
    """How far the mean test error of ``runs`` networks, each on its own ``n_test`` fresh
    points, may lie from 1/2 when a network errs where its linear rule ``sign <z, x>`` errs
    except on a fraction ``disagreement`` of the points (mean over runs): a linear rule's
    error on fresh points is Binomial(n_test, 1/2) / n_test, so the mean has standard deviation
    ``1 / (2 sqrt(runs n_test))``; ``sds`` of them (5: a false alarm below 1e-6) plus the
    disagreement."""
    return sds * 0.5 / math.sqrt(runs * n_test) + float(disagreement)


def summarize(runs: pd.DataFrame, conf: float, n_test: int, num_seeds: int) -> pd.DataFrame:
    """One row per initialization scale and ``d`` of :func:`train_and_test`'s runs: the mean
    test error with its ``conf`` t-interval (``error, ci_low, ci_high``), the smallest
    ``linear_agreement``, the ``mean_disagreement``, the largest ``train_error`` and
    ``loss_ratio``, the median ``n / n_max`` (``median_gap``), the fraction of training sets
    that satisfy the assumption, and ``at_chance``: the mean error within
    :func:`chance_slack` (no disagreement allowance) of 1/2."""
    rows = []
    for (scale, dd), g in runs.groupby(["init_scale", "d"]):
        err, lo, hi = stats.t_interval(g.test_error, conf)
        rows.append(
            {
                "init": scale,
                "d": int(dd),
                "error": err,
                "ci_low": lo,
                "ci_high": hi,
                "linear_agreement": g.linear_agreement.min(),
                "mean_disagreement": 1 - g.linear_agreement.mean(),
                "train_error": g.train_error.max(),
                "loss_ratio": g.loss_ratio.max(),
                "median_gap": g.ratio.median(),
                "assumption_holds": g.holds.mean(),
            }
        )
    out = pd.DataFrame(rows)
    out["at_chance"] = (out.error - 0.5).abs() <= chance_slack(n_test, num_seeds, 0.0)
    return out


def first_d_at_chance(table: pd.DataFrame) -> dict:
    """Per initialization scale of a :func:`summarize` table: the smallest ``d`` from which on
    (at that ``d`` and every larger one) the error is at chance (``nan`` when the largest
    ``d`` is not)."""
    out = {}
    for scale, t_ in table.groupby("init"):
        t_ = t_.sort_values("d", ascending=False)
        first = float("nan")
        for dd, ok in zip(t_.d, t_.at_chance, strict=True):
            if not ok:
                break
            first = float(dd)
        out[float(scale)] = first
    return out


def tex_number(x) -> str:
    """``10^{9}`` for a power of ten, the integer otherwise: dimensions in the page's prose."""
    x = int(x)
    e = round(math.log10(x)) if x > 0 else 0
    return f"10^{{{e}}}" if x > 0 and 10**e == x and e >= 3 else str(x)
