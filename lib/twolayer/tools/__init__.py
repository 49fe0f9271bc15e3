"""The tools on top of everything: they run pages and collect what they wrote.

``cli``         the ``twolayer`` command (``twolayer run CHAPTER``, ``twolayer list``)
``sweep``       the one notebook runner: papermill runs of a grid, on a Dask cluster, resumable
``robustness``  every chapter on unused seeds and parameters (the book's Robustness page)
``reference``   the committed smoke results and their comparison
``bench``       the benchmark (``make bench``) and the paper-profile timings
"""

from ..core._lazy import lazy_submodules

__all__ = ["bench", "cli", "reference", "robustness", "sweep"]
__getattr__ = lazy_submodules(__name__, __all__)
