"""The page machinery, on top of the papers' mathematics: what a chapter's notebook uses to
bind its parameters (declared with :mod:`twolayer.core.params`), record its checks and show
them; imports only ``core``.

``contract``    the notebook contract: parameters bound, checks recorded, results JSON
``checks``      the three kinds of check, hypotheses, the check table, glue
``claims``      the claims index: statements, checks and their status in a build
``plotting``    the book's one figure style and figure saving
``paperscale``  the paper-profile records shown beside a page's own run
"""

from ..core._lazy import lazy_submodules

__all__ = ["checks", "claims", "contract", "paperscale", "plotting"]
__getattr__ = lazy_submodules(__name__, __all__)
