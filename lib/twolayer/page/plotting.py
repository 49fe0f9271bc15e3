"""The book's one figure style (seaborn-based) and figure saving.

Every chapter calls :func:`use_style` once and builds figures with :func:`figure`; captions
live in the notebook cell's ``mystnb.figure`` metadata so that the site numbers them.
"""

from __future__ import annotations

import io as _io
import os
from pathlib import Path

import matplotlib

if os.environ.get("MPLBACKEND") is None and not os.environ.get("DISPLAY"):
    # Headless builds (CI, the book) need no GUI backend; Jupyter selects its inline backend.
    try:
        import IPython  # noqa: F401

        if IPython.get_ipython() is None:
            matplotlib.use("Agg")
    except ImportError:
        matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from ..core.io import atomic_write_bytes  # noqa: E402

PALETTE = "colorblind"
WIDTH = 7.0  # inches: the width of the book's text column at 100% zoom


def use_style() -> None:
    """Apply the book's style: seaborn ``whitegrid``, colour-blind palette, readable sizes."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, font_scale=0.95)
    plt.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "savefig.bbox": "tight",
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 9,
            "legend.frameon": False,
            "lines.linewidth": 1.8,
            "figure.constrained_layout.use": True,
        }
    )


def figure(ncols: int = 1, nrows: int = 1, width: float = WIDTH, aspect: float = 0.6, **kw):
    """``plt.subplots`` sized for the book: ``width`` inches wide, each panel ``aspect`` tall.
    Returns ``(fig, ax)``: one panel gives one ``Axes``, one row a 1-D array, a grid a 2-D one."""
    height = width / ncols * aspect * nrows
    return plt.subplots(nrows, ncols, figsize=(width, height), squeeze=True, **kw)


def colors(k: int):
    """``k`` colours from the book's palette."""
    return sns.color_palette(PALETTE, k)


def savefig(fig, path: str | os.PathLike, fmt: str | None = None) -> Path:
    """Save ``fig`` atomically (PNG, SVG or PDF by suffix)."""
    path = Path(path)
    buf = _io.BytesIO()
    fig.savefig(buf, format=fmt or path.suffix.lstrip(".") or "png")
    return atomic_write_bytes(path, buf.getvalue())
