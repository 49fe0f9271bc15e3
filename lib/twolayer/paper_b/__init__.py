"""Paper B -- Zhou & Ge (NeurIPS 2024), *How does Gradient Descent Learn Features -- A Local
Analysis for Regularized Two-Layer Neural Networks*. NumPy/SciPy/cvxpy, no torch (torch
arrays are accepted by ``population``'s batched functions and ``gd_backend``, never imported by
them); imports only :mod:`twolayer.core`.

``kernels``
    the arc-cosine kernel and ReLU without Hermite orders 0 and 1 (Appendix B)
``teacher``
    teachers meeting Assumptions 1-3, with r, Delta, kappa
``population``
    the closed-form population loss and its hand-written gradient, batched, on NumPy or torch
    arrays (array API standard)
``hermite``
    Hermite coefficients of ReLU (Lemma A.1), Claim B.1's decomposition
``features``
    angles, the partition T_i, far-away mass, average neurons, Lemma 10's masses, eq. (8)'s
    residual terms, the optimum over measures (exact Lasso, refined)
``algorithm1``
    symmetric initialization and Stages 1-3 of Algorithm 1
``gd_backend``
    Stages 1 and 3 for a batch of configurations on any array backend (GPU)
``landscape``
    Stage 3 along a trajectory: gaps, Lemma 6's window, Lemma 5/8/10 per epoch
``certificate``
    the dual certificate (Definition 1, Appendix G), Lemma 9, Lemma 7's direction
``samples``
    Algorithm 1 on n samples (Appendix J)
``early_stages``
    studies of Stages 1 and 2 (Lemma 3, Lemma C.1, Lemma 4)
``random_features``
    the first layer frozen after Stage 1 (random features in S_*)
``fits``
    log-log slopes and their bootstrap spread over a page's repetitions
"""

from ..core._lazy import lazy_submodules

__all__ = [
    "algorithm1",
    "certificate",
    "early_stages",
    "features",
    "fits",
    "gd_backend",
    "hermite",
    "kernels",
    "landscape",
    "population",
    "random_features",
    "samples",
    "teacher",
]
__getattr__ = lazy_submodules(__name__, __all__)
