"""What every chapter of both papers stands on; imports nothing from ``paper_a``/``paper_b``.

``contract``  the notebook contract: typed parameters, size profiles, checks, results JSON
``device``    device and dtype selection (CUDA when present, CPU otherwise)
``io``        atomic writes in open formats (JSON, CSV, ``.npz`` without pickle)
``store``     the run store: finished configurations keyed by a hash of their parameters
``seeds``     independent seeds per purpose, derived from a page's ``seed``
``checks``    the three kinds of check, hypotheses, the check table, glue
``claims``    the claims index: statements, checks and their status in a build
``plotting``  the book's one figure style and figure saving
``lockfile``  which ``requirements.lock`` the environment was installed from
"""

from ._lazy import lazy_submodules

__all__ = ["checks", "claims", "contract", "device", "io", "lockfile", "plotting", "seeds", "store"]
__getattr__ = lazy_submodules(__name__, __all__)
