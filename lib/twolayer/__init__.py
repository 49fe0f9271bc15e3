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
``flow``         gradient flow via loss-normalised GD (a time change), span coordinates
``kkt``          Problems (1) and (3), multipliers, z and z*, certificates of Theorem 3.2
``sgd``          batched minibatch SGD for ReLU nets with biases (Paper A, Figure 2)
``images``       CIFAR-10 (official binary archive, checksummed) and the offline digits stand-in
``metrics``      stable rank, numerical rank, margins, Theorem 3.2's data assumption
``plotting``     the one figure style of the book
``notebook``     the notebook contract: validated parameters, checks, results JSON
``io``           atomic writes of results in open formats
``lowrank``      Theorem 4.2: C_R, the (A1) step bound, our (A2) init bound, stable-rank bounds
``store``        per-configuration run store (hash-keyed atomic .npz + .json entries)
``rankdecay``    Figure 1's stable-rank decay runs on the Gaussian mixture, store-aware
``population``   Paper B: closed-form population loss and hand-written gradient (arc-cosine kernel)
``hermite``      Paper B: Hermite coefficients of ReLU (Lemma A.1), Claim B.1's decomposition
``teacher``      Paper B: teachers meeting Assumptions 1-3, with r, Delta, kappa
``features``     Paper B: angles, partition T_i, far-away mass, average neurons, optimality gap
``algorithm1``   Paper B: symmetric init, Stages 1-3 of Algorithm 1
``certificate``  Paper B: the dual certificate (Def. 1, App. G), test function, Lemma 7 direction
``samples``      Paper B: Algorithm 1 on n samples (Appendix J)
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import (activations, data, device, images, io, losses, metrics, models, notebook, plotting,
               sgd, trainer)
from . import flow, kkt  # noqa: E402  (Section 3 chapters)
from . import lowrank, rankdecay, store  # noqa: E402  (Section 4-5 chapters)
from . import (algorithm1, certificate, features, hermite, population, samples,  # noqa: E402
               teacher)  # (Paper B chapters)

__all__ = [
    "__version__",
    "activations",
    "data",
    "device",
    "flow",
    "images",
    "io",
    "kkt",
    "losses",
    "metrics",
    "models",
    "notebook",
    "plotting",
    "sgd",
    "trainer",
]
