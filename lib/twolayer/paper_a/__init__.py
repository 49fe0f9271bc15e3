"""Paper A -- Frei, Vardi, Bartlett, Srebro, Hu (ICLR 2023), *Implicit Bias in Leaky ReLU
Networks Trained on High-Dimensional Data*. PyTorch; imports only :mod:`twolayer.core`.

Setting (Section 2)
    ``data``         nearly-orthogonal Gaussian data, the Gaussian mixture, noisy 2-XOR
    ``activations``  leaky ReLU and the smoothed leaky ReLU (Definition 4.1), with derivatives
    ``models``       the network ``f(x; W)`` with fixed ``a``, and a general two-layer net
    ``losses``       logistic and exponential losses, stable in float64 at huge margins
    ``assumptions``  Theorem 3.2's near-orthogonality and the bounds behind Lemma 3.3
    ``metrics``      stable rank, numerical rank, margins
Gradient flow (Section 3)
    ``trainer``      batched full-batch gradient descent with closed-form gradients
    ``flow``         gradient flow by loss-normalized gradient descent (a time change)
    ``kkt``          Problems (1) and (3), multipliers, z and z*, certificates of Theorem 3.2
    ``xor``          noisy 2-XOR in high dimension: batches, training, intervals (Section 5)
Gradient descent (Sections 4-5)
    ``lowrank``      Theorem 4.2: C_R, the (A1) step bound, the (A2) initialization bound
    ``onestep``      Theorem 4.2's experiments: runs, the initialization and size sweeps
    ``rankdecay``    Figure 1's stable-rank decay on the Gaussian mixture, run-store aware
    ``sgd``          batched minibatch SGD for ReLU nets with biases (Figure 2)
    ``images``       CIFAR-10 (binary archive, checksummed) and the offline digits stand-in
"""

from ..core._lazy import lazy_submodules

__all__ = [
    "activations",
    "assumptions",
    "data",
    "flow",
    "images",
    "kkt",
    "losses",
    "lowrank",
    "metrics",
    "models",
    "onestep",
    "rankdecay",
    "sgd",
    "trainer",
    "xor",
]
__getattr__ = lazy_submodules(__name__, __all__)
