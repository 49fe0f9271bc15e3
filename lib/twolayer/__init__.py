"""twolayer: the shared library of the executable companion to

* Paper A -- Frei, Vardi, Bartlett, Srebro, Hu (ICLR 2023), *Implicit Bias in Leaky ReLU
  Networks Trained on High-Dimensional Data*;
* Paper B -- Zhou & Ge (NeurIPS 2024), *How does Gradient Descent Learn Features -- A Local
  Analysis for Regularized Two-Layer Neural Networks*.

Layers, imports flowing one way (down):

``twolayer.sweep``, ``bench``, ``robustness``  entry points (``python -m twolayer.sweep`` ...)
``twolayer.cli``                           the ``twolayer`` command (``twolayer run CHAPTER``)
``twolayer.paper_a``, ``twolayer.paper_b``  one subpackage per paper, importing only ``common``
``twolayer.common``                        contract, checks, claims, io, device, seeds, store,
                                           plotting

Importing ``twolayer`` imports nothing else; subpackages load their modules on first use.
"""

from .common._lazy import lazy_submodules

__version__ = "0.1.0"

__all__ = ["bench", "cli", "common", "paper_a", "paper_b", "robustness", "sweep"]
__getattr__ = lazy_submodules(__name__, __all__)
