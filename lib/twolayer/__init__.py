"""twolayer: the shared library of the executable companion to

* Paper A -- Frei, Vardi, Bartlett, Srebro, Hu (ICLR 2023), *Implicit Bias in Leaky ReLU
  Networks Trained on High-Dimensional Data*;
* Paper B -- Zhou & Ge (NeurIPS 2024), *How does Gradient Descent Learn Features -- A Local
  Analysis for Regularized Two-Layer Neural Networks*.

One module per concept, named as in the papers:

``data``         nearly-orthogonal Gaussian data, the Gaussian mixture, noisy 2-XOR
``activations``  leaky ReLU and the smoothed leaky ReLU (Paper A, Def. 4.1), with derivatives
``models``       Paper A's network ``f(x; W)`` (fixed ``a``) and a general two-layer net
``losses``       logistic and exponential losses, stable in float64 at huge margins
``trainer``      batched full-batch gradient descent with closed-form gradients
``metrics``      stable rank, numerical rank, margins, Theorem 3.2's data assumption
``plotting``     the one figure style of the book
``notebook``     the notebook contract: validated parameters, checks, results JSON
``io``           atomic writes of results in open formats
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import activations, data, device, io, losses, metrics, models, notebook, plotting, trainer

__all__ = [
    "__version__",
    "activations",
    "data",
    "device",
    "io",
    "losses",
    "metrics",
    "models",
    "notebook",
    "plotting",
    "trainer",
]
