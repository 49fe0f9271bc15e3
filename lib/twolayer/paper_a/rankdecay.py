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
bits), and a :class:`~twolayer.common.store.RunStore` returns exactly the numbers it was given.
:func:`compute` loads what a store already holds and runs only the rest.
"""
from __future__ import annotations

import math
from itertools import groupby
from typing import Any, Iterable, Mapping

import numpy as np
import torch

from . import data as data_mod
from .metrics import stable_rank
from .models import LeakyNetwork
from ..common.seeds import derive
from ..common.store import RunStore, config_key as store_key  # noqa: F401  (re-export)
from .trainer import gradient_descent, log_spaced_steps

VERSION = 1  # bump when the computation of an entry changes, so old store entries are not reused
ARRAYS = ("steps", "stable_rank", "loss", "test_accuracy", "train_accuracy")


def glorot_std(d: int, m: int) -> float:
    """Standard deviation of Glorot-uniform ``U(-r, r)``, ``r = sqrt(6/(d + m))``: ``sqrt(2/(d+m))``."""
    return math.sqrt(2.0 / (d + m))


def config(*, d: int, n: int, m: int, gamma: float, beta: float, init_scale: float, lr: float,
           steps: int, seed: int, n_test: int, records: int) -> dict:
    """A canonical configuration dict (floats as floats, ints as ints)."""
    return {"version": VERSION, "d": int(d), "n": int(n), "m": int(m), "gamma": float(gamma),
            "beta": float(beta), "init_scale": float(init_scale), "lr": float(lr),
            "steps": int(steps), "seed": int(seed), "n_test": int(n_test), "records": int(records),
            "dtype": "float64"}


def _data(cfg: Mapping[str, Any]):
    """Training and test sets of a configuration: same ``mu``, independent samples."""
    train = data_mod.gaussian_mixture(cfg["n"], cfg["d"], seed=derive(cfg["seed"], cfg["d"], 0),
                                      beta=cfg["beta"])
    test = data_mod.gaussian_mixture(cfg["n_test"], cfg["d"], seed=derive(cfg["seed"], cfg["d"], 1),
                                     mu=train.info["mu"])
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
    return tuple(cfg[k] for k in shared)


def run(configs: Iterable[Mapping[str, Any]], progress: bool | None = None) -> list[tuple[dict, dict, dict]]:
    """Train every configuration; returns ``[(config, arrays, metrics)]`` in the given order.

    Configurations that share everything but ``init_scale`` and ``lr`` run as one batch."""
    configs = [dict(c) for c in configs]
    order = sorted(range(len(configs)), key=lambda i: _group_key(configs[i]))
    out: dict[int, tuple] = {}
    for _, idx in groupby(order, key=lambda i: _group_key(configs[i])):
        idx = list(idx)
        cfg0 = configs[idx[0]]
        train, test = _data(cfg0)
        X, y = train.torch()
        Xt, yt = test.torch()
        net = _network(cfg0)
        W0 = torch.stack([_init(net, configs[i]) for i in idx])
        lr = torch.tensor([configs[i]["lr"] for i in idx], dtype=torch.float64)

        def accuracy(Xs, ys):
            return lambda W: (torch.sign(net.forward(W, Xs)) == ys).to(W.dtype).mean(dim=-1)

        rec = log_spaced_steps(cfg0["steps"], cfg0["records"])
        res = gradient_descent(net, W0, X, y, loss="logistic", lr=lr, steps=cfg0["steps"],
                               record_steps=rec, progress=progress,
                               metrics={"stable_rank": stable_rank,
                                        "test_accuracy": accuracy(Xt, yt),
                                        "train_accuracy": accuracy(X, y)},
                               desc=f"d={cfg0['d']} seed={cfg0['seed']}")
        for b, i in enumerate(idx):
            arrays = {"steps": res.steps.astype(np.int64)}
            for name in ARRAYS[1:]:
                arrays[name] = np.ascontiguousarray(res.history[name][:, b])
            out[i] = (configs[i], arrays, summarize(arrays))
    return [out[i] for i in range(len(configs))]


def summarize(arrays: Mapping[str, np.ndarray]) -> dict:
    """Scalar results of one run: stable ranks (initial, final, minimum and where), accuracies."""
    sr = np.asarray(arrays["stable_rank"])
    k = int(np.argmin(sr))
    return {"stable_rank_init": float(sr[0]), "stable_rank_final": float(sr[-1]),
            "stable_rank_min": float(sr[k]), "step_of_min": int(arrays["steps"][k]),
            "relative_min": float(sr[k] / sr[0]), "final_loss": float(arrays["loss"][-1]),
            "test_accuracy": float(arrays["test_accuracy"][-1]),
            "train_accuracy": float(arrays["train_accuracy"][-1])}


def compute(configs: Iterable[Mapping[str, Any]], store: RunStore | None = None,
            progress: bool | None = None) -> tuple[list[tuple[dict, dict, dict]], int]:
    """Results of every configuration, reading what ``store`` holds and running (then saving)
    only the missing ones. Returns ``(results in the given order, number computed now)``."""
    configs = [dict(c) for c in configs]
    if store is None:
        return run(configs, progress), len(configs)
    todo = store.missing(configs)
    for cfg, arrays, metrics in run(todo, progress):
        store.save(cfg, arrays, metrics)
    results = []
    for cfg in configs:
        arrays, metrics = store.load(cfg)
        results.append((cfg, arrays, metrics))
    return results, len(todo)
