"""The tools on top of everything: they run pages and collect what they wrote.

``cli``         the ``twolayer`` command (``twolayer run CHAPTER``, ``twolayer list``)
``runner``      the one notebook runner: a chapter executed with parameters, into a run folder
``sweep``       runs of a grid, on a Dask cluster, resumable
``robustness``  every chapter on unused seeds and parameters (the book's Robustness page)
``reference``   the committed smoke results and their comparison
``bench``       the benchmark package (``make bench``) and the paper-profile timings
``paperscale``  the paper-profile runs recorded for the book (``make paper-collect``)
"""

from ..core._lazy import lazy_submodules

__all__ = ["bench", "cli", "paperscale", "reference", "robustness", "runner", "sweep"]
__getattr__ = lazy_submodules(__name__, __all__)
