"""The foundation every other layer stands on; imports nothing else of the book.

``seeds``     independent seeds per purpose, derived from a page's ``seed``
``device``    device and dtype selection (CUDA when present, CPU otherwise)
``io``        atomic writes in open formats (JSON, CSV, ``.npz`` without pickle); the checkout
``store``     the run store: finished configurations keyed by a hash of their parameters
``lockfile``  which ``requirements.lock`` the environment was installed from
``stats``     the Student-t interval and the least-squares (log-log) slope every chapter shares
``params``    a chapter's parameters: their types, the size profiles, their validation
``fmt``       the one number formatter of every table and sentence that shows a value
"""

from ._lazy import lazy_submodules

__all__ = ["device", "fmt", "io", "lockfile", "params", "seeds", "stats", "store"]
__getattr__ = lazy_submodules(__name__, __all__)
