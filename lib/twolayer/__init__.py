"""twolayer: the shared library of the executable companion to

* Paper A -- Frei, Vardi, Bartlett, Srebro, Hu (ICLR 2023), *Implicit Bias in Leaky ReLU
  Networks Trained on High-Dimensional Data*;
* Paper B -- Zhou & Ge (NeurIPS 2024), *How does Gradient Descent Learn Features -- A Local
  Analysis for Regularized Two-Layer Neural Networks*.

Layers, imports flowing one way (each imports only those below it):

``twolayer.tools``                  the tools: the ``twolayer`` command, the notebook runner,
                                    sweep, robustness, reference results, benchmark,
                                    paper-scale collection
``twolayer.chapters``               the chapters' modules by name (for the tools and tests)
``twolayer.page``                   the page machinery: contract, checks, claims, plotting,
                                    paper-scale records
``twolayer.paper_a.chapters``,      one module per chapter: parameters, experiment, checks
``twolayer.paper_b.chapters``
``twolayer.paper_a``, ``paper_b``   the papers' mathematics, importing only ``core``
``twolayer.core``                   seeds, device, io, store, lockfile, params, fmt

Importing ``twolayer`` imports nothing else; subpackages load their modules on first use.
"""

from .core._lazy import lazy_submodules

__version__ = "0.1.0"

__all__ = ["chapters", "core", "page", "paper_a", "paper_b", "tools"]
__getattr__ = lazy_submodules(__name__, __all__)
