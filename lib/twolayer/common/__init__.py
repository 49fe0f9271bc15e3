"""What every chapter of both papers stands on; imports nothing from ``paper_a``/``paper_b``.

``contract``  the notebook contract: typed parameters, size profiles, checks, results JSON
``device``    device and dtype selection (CUDA when present, CPU otherwise)
``io``        atomic writes in open formats (JSON, CSV, ``.npz`` without pickle)
``store``     the run store: finished configurations keyed by a hash of their parameters
``plotting``  the book's one figure style and figure saving
"""
from ._lazy import lazy_submodules

__all__ = ["contract", "device", "io", "plotting", "store"]
__getattr__ = lazy_submodules(__name__, __all__)
