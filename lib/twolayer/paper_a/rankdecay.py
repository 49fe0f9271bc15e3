"""Stable-rank decay under gradient descent on the Gaussian mixture (Paper A, Figure 1).

A *configuration* is a flat dict (see :func:`config`): the data (``n``, ``d``, ``beta`` with
``||mu|| = d^beta``, ``n_test`` fresh test points, ``seed``), the network (``m`` neurons, half
positive and half negative, the smoothed leaky ReLU with leak ``gamma``), the initialization
``w_j ~ N(0, (init_scale * sigma_glorot)^2 I_d)`` with ``sigma_glorot = sqrt(2 / (d + m))`` (the
standard deviation of TensorFlow's default Glorot-uniform initializer), the step size ``lr``
and the number of ``steps``.

:func:`run` computes a list of configurations, one batch per ``(d, seed)`` through
:func:`twolayer.paper_a.trainer.gradient_descent` (the configurations of a batch share the training
set, which the trainer needs). Each configuration's result depends on that configuration only:
its data and initial direction are drawn from its own seed, never from a shared stream, so a
configuration computed alone or in another batch gives the same numbers up to floating-point
rounding (BLAS may sum in another order for another batch shape; the same batch gives the same
bits), and a :class:`~twolayer.core.store.RunStore` returns exactly the numbers it was given.
:func:`compute` loads what a store already holds and runs only the rest.

The chapter ``notebooks/paper_a/figure1`` builds its configurations with :func:`figure1_configs`
and reads them with :func:`relative_curves`, :func:`log_slopes` (a trend over seeds with a
confidence interval) and :func:`init_vs_steps` (Section 5: the initialization scale against
training longer); its intervals are :func:`twolayer.core.stats.t_interval`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from itertools import groupby
from typing import Any

import numpy as np
import torch

from ..core import stats
from ..core.device import resolve_dtype
from ..core.seeds import derive
from ..core.store import RunStore
from ..core.store import config_key as store_key  # noqa: F401 (re-export for the pages)
from . import data as data_mod
from .metrics import stable_rank
from .models import LeakyNetwork
from .trainer import gradient_descent, log_spaced_steps

VERSION = 1  # bump when the computation of an entry changes, so old store entries are not reused
ARRAYS = ("steps", "stable_rank", "loss", "test_accuracy", "train_accuracy")


def glorot_std(d: int, m: int) -> float:
    """Standard deviation of Glorot-uniform ``U(-r, r)``, ``r = sqrt(6/(d + m))``:
    ``sqrt(2/(d+m))``."""
    return math.sqrt(2.0 / (d + m))


def config(
    *,
    d: int,
    n: int,
    m: int,
    gamma: float,
    beta: float,
    init_scale: float,
    lr: float,
    steps: int,
    seed: int,
    n_test: int,
    records: int,
    dtype: str = "float64",
) -> dict:
    """A canonical configuration dict (floats as floats, ints as ints); ``dtype`` ("float64"
    or "float32") is the dtype of the run (part of the store key: a float32 run is another
    entry)."""
    return {
        "version": VERSION,
        "d": int(d),
        "n": int(n),
        "m": int(m),
        "gamma": float(gamma),
        "beta": float(beta),
        "init_scale": float(init_scale),
        "lr": float(lr),
        "steps": int(steps),
        "seed": int(seed),
        "n_test": int(n_test),
        "records": int(records),
        "dtype": str(resolve_dtype(dtype)).replace("torch.", ""),
    }


def _data(cfg: Mapping[str, Any]):
    """Training and test sets of a configuration: same ``mu``, independent samples."""
    train = data_mod.gaussian_mixture(
        cfg["n"], cfg["d"], seed=derive(cfg["seed"], cfg["d"], 0), beta=cfg["beta"]
    )
    test = data_mod.gaussian_mixture(
        cfg["n_test"], cfg["d"], seed=derive(cfg["seed"], cfg["d"], 1), mu=train.info["mu"]
    )
    return train, test


def _network(cfg) -> LeakyNetwork:
    m = cfg["m"]
    return LeakyNetwork(m - m // 2, m // 2, phi="smoothed_leaky_relu", gamma=cfg["gamma"])


def _init(net: LeakyNetwork, cfg) -> torch.Tensor:
    """The configuration's own initial weights: a direction from ``(seed, d)`` times its scale."""
    W = net.init(cfg["d"], 1.0, seed=derive(cfg["seed"], cfg["d"], 2))
    return W * (cfg["init_scale"] * glorot_std(cfg["d"], cfg["m"]))


def _group_key(cfg):
    shared = ("d", "n", "m", "gamma", "beta", "steps", "seed", "n_test", "records")
    return (*(cfg[k] for k in shared), cfg.get("dtype", "float64"))


def run(
    configs: Iterable[Mapping[str, Any]],
    progress: bool | None = None,
    device: str | torch.device | None = None,
) -> list[tuple[dict, dict, dict]]:
    """Train every configuration; returns ``[(config, arrays, metrics)]`` in the given order.

    Configurations that share everything but ``init_scale`` and ``lr`` run as one batch, on
    ``device`` (``None``: the CPU) in the configuration's ``dtype``: the data and the initial
    weights are drawn on the host from their seeds (the same on every device), then moved once;
    the metrics are computed on the device and read back at the recorded steps only."""
    configs = [dict(c) for c in configs]
    order = sorted(range(len(configs)), key=lambda i: _group_key(configs[i]))
    out: dict[int, tuple] = {}
    for _, idx in groupby(order, key=lambda i: _group_key(configs[i])):
        idx = list(idx)
        cfg0 = configs[idx[0]]
        train, test = _data(cfg0)
        dtype = resolve_dtype(cfg0.get("dtype", "float64"))
        X, y = train.torch(dtype=dtype, device=device)
        Xt, yt = test.torch(dtype=dtype, device=device)
        net = _network(cfg0)
        W0 = torch.stack([_init(net, configs[i]) for i in idx]).to(dtype=dtype, device=device)
        lr = torch.tensor([configs[i]["lr"] for i in idx], dtype=torch.float64)
        rec = log_spaced_steps(cfg0["steps"], cfg0["records"])
        res = gradient_descent(
            net,
            W0,
            X,
            y,
            loss="logistic",
            lr=lr,
            steps=cfg0["steps"],
            record_steps=rec,
            progress=progress,
            metrics=run_metrics(net, X, y, Xt, yt=yt),
            desc=f"d={cfg0['d']} seed={cfg0['seed']}",
        )
        for b, i in enumerate(idx):
            arrays = {"steps": res.steps.astype(np.int64)}
            for name in ARRAYS[1:]:
                arrays[name] = np.ascontiguousarray(res.history[name][:, b])
            out[i] = (configs[i], arrays, summarize(arrays))
    return [out[i] for i in range(len(configs))]


def run_metrics(net: LeakyNetwork, X, y, Xt, *, yt) -> dict:
    """The metrics :func:`run` records: the stable rank and the test and training accuracies,
    computed on the device of the data (``X, y, Xt, yt`` must already be on ``W``'s device:
    nothing is copied at a record step)."""

    def accuracy(Xs, ys):
        return lambda W: (torch.sign(net.forward(W, Xs)) == ys).to(W.dtype).mean(dim=-1)

    return {
        "stable_rank": stable_rank,
        "test_accuracy": accuracy(Xt, yt),
        "train_accuracy": accuracy(X, y),
    }


def summarize(arrays: Mapping[str, np.ndarray]) -> dict:
    """Scalar results of one run: stable ranks (initial, final, minimum and where), accuracies."""
    sr = np.asarray(arrays["stable_rank"])
    k = int(np.argmin(sr))
    return {
        "stable_rank_init": float(sr[0]),
        "stable_rank_final": float(sr[-1]),
        "stable_rank_min": float(sr[k]),
        "step_of_min": int(arrays["steps"][k]),
        "relative_min": float(sr[k] / sr[0]),
        "final_loss": float(arrays["loss"][-1]),
        "test_accuracy": float(arrays["test_accuracy"][-1]),
        "train_accuracy": float(arrays["train_accuracy"][-1]),
    }


def compute(
    configs: Iterable[Mapping[str, Any]],
    store: RunStore | None = None,
    progress: bool | None = None,
    device: str | torch.device | None = None,
) -> tuple[list[tuple[dict, dict, dict]], int]:
    """Results of every configuration, reading what ``store`` holds and running (then saving,
    on ``device``; see :func:`run`) only the missing ones. Returns ``(results in the given
    order, number computed now)``."""
    configs = [dict(c) for c in configs]
    if store is None:
        return run(configs, progress, device), len(configs)
    todo = store.missing(configs)
    for cfg, arrays, metrics in run(todo, progress, device):
        store.save(cfg, arrays, metrics)
    results = []
    for cfg in configs:
        arrays, metrics = store.load(cfg)
        results.append((cfg, arrays, metrics))
    return results, len(todo)


# --- Figure 1: configurations and the statistics the page checks ---------------------------------


def figure1_configs(
    run_seeds,
    dims,
    d_right: int,
    scales,
    *,
    left_scale: float,
    left_lr: float,
    right_lr: float,
    **common,
) -> dict:
    """The configurations of Figure 1, keyed ``("left", d, seed)`` (left panel: every ``d`` of
    ``dims`` at ``left_scale`` and ``left_lr``) and ``("grid", d, scale, seed)`` (the right panel
    and the heat maps: every ``d`` of ``dims`` and ``d_right``, every scale, at ``right_lr``);
    ``common`` holds ``n, m, gamma, beta, steps, n_test, records``."""
    out = {}
    for s in run_seeds:
        for d in dims:
            out[("left", d, s)] = config(d=d, init_scale=left_scale, lr=left_lr, seed=s, **common)
        for d in sorted(set(dims) | {d_right}):
            for sc in scales:
                out[("grid", d, sc, s)] = config(d=d, init_scale=sc, lr=right_lr, seed=s, **common)
    return out


def relative_curves(results: Mapping, key_prefix: tuple, run_seeds) -> np.ndarray:
    """Stable rank relative to its initial value, one row per seed: ``(seeds, records)``.
    ``results[(*key_prefix, seed)]`` is ``(arrays, metrics)``."""
    curves = np.stack(
        [np.asarray(results[(*key_prefix, s)][0]["stable_rank"], float) for s in run_seeds]
    )
    return curves / curves[:, :1]


def log_slopes(values, x, level: float = 0.95) -> dict:
    """The trend of positive ``values`` (``(seeds, len(x))``) in ``x`` on log-log axes: the
    least-squares slope of ``log values`` against ``log x`` for each seed, their mean and its
    Student-t interval over seeds (:func:`twolayer.core.stats.fit_slope` per row,
    :func:`twolayer.core.stats.t_interval`): ``{"slope", "ci": [lo, hi], "per_seed"}``."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"values must be (seeds, len(x)), got shape {v.shape}")
    per_seed = stats.fit_slope(x, v)
    mean, lo, hi = stats.t_interval(per_seed, level)
    return {"slope": mean, "ci": [lo, hi], "per_seed": per_seed.tolist()}


def record_at_or_before(steps, t: float) -> int:
    """Index of the last recorded step at or before ``t`` (``-1`` if none)."""
    return int(np.searchsorted(np.asarray(steps), t, side="right")) - 1


def init_vs_steps(
    curves_by_scale: Mapping[float, np.ndarray], steps, factor: float = 10.0, level: float = 0.95
) -> list[dict]:
    """Section 5's "the initialization scale is more influential than training longer": for
    each pair of neighbouring scales ``s > s'`` (sorted from the largest), the log of the
    relative stable rank that ``s'`` reaches in ``T / factor`` steps over the one ``s`` reaches
    in all ``T`` steps, per seed, with its mean and Student-t interval. Negative: one step
    down in scale beats ``factor`` times the steps. ``curves_by_scale[s]``: ``(seeds,
    records)`` relative stable ranks at the recorded ``steps``."""
    steps = np.asarray(steps)
    k = record_at_or_before(steps, steps[-1] / factor)
    if k < 1:
        raise ValueError(f"no recorded step between 1 and T / {factor:g}")
    scales = sorted(curves_by_scale, reverse=True)
    out = []
    for big, small in zip(scales[:-1], scales[1:], strict=True):
        lr = np.log(curves_by_scale[small][:, k]) - np.log(curves_by_scale[big][:, -1])
        mean, lo, hi = stats.t_interval(lr, level)
        out.append(
            {
                "larger": float(big),
                "smaller": float(small),
                "short_step": int(steps[k]),
                "long_step": int(steps[-1]),
                "log_ratio": mean,
                "ci": [lo, hi],
                "per_seed": lr.tolist(),
            }
        )
    return out
