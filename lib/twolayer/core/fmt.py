"""The one number formatter of the book's displays.

:func:`fmt` writes a number as a reader reads it; every table and sentence that shows a
measured value uses it: the check table and the hypotheses' sentences of every chapter's page
(:mod:`twolayer.page.checks`), the parameter table (:mod:`twolayer.page.contract`), the
paper-scale comparison (:mod:`twolayer.page.paperscale`), the ``twolayer`` command's check
table and parameter list (:mod:`twolayer.tools.cli`), the robustness page's margins and
factors (:mod:`twolayer.tools.robustness`), the reference comparison and the benchmark's
summary. Imports nothing else of the book.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["fmt", "sci"]


def fmt(v) -> str:
    """A number as a reader reads it: a count as an integer (thin spaces between thousands
    from 10,000), a float that is a whole number below 10^6 as one, other floats with 4
    significant digits between 10^-3 and 10^4 and in scientific notation outside
    (``1.47e19``, ``2.7e-9``; never ``0.0000`` for a small nonzero value, never ``-0``).

    Args:
        v: a number (Python, NumPy), a bool, ``None`` or a list or tuple of them; anything
            else is shown with ``str``.

    Returns:
        The text: ``"—"`` for ``None``, ``"true"``/``"false"`` for a bool, ``"nan"``,
        ``"∞"``/``"−∞"`` for the non-finite, a negative number with its ``-`` sign, a list of
        at most 6 items in full and a longer one by its ends and its length.
    """
    if v is None:
        return "—"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        n = int(v)
        if abs(n) >= 10**15:
            return sci(float(n))
        return f"{n:,}".replace(",", "\u202f") if abs(n) >= 10_000 else str(n)
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        if x == 0:
            return "0"
        if x == int(x) and abs(x) < 1e6:
            return str(int(x))
        if 1e-3 <= abs(x) < 1e4:
            out = f"{x:.4g}"
            return sci(x) if "e" in out else out  # 9999.96 rounds to 1e+04
        return sci(x)
    if isinstance(v, (list, tuple)) and len(v) <= 6:
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, (list, tuple)):
        return f"[{fmt(v[0])}, …, {fmt(v[-1])}] ({len(v)} values)"
    return str(v)


def sci(x: float) -> str:
    """``x`` in scientific notation with 3 significant digits, the exponent without ``+`` or
    leading zeros (``1.47e19``, ``2.7e-9``); a number that needs no exponent at 3 digits is
    written without one.

    Args:
        x: a finite number.

    Returns:
        The text.
    """
    mantissa, _, exp = f"{x:.3g}".partition("e")
    if not exp:
        return mantissa
    sign = "-" if exp.startswith("-") else ""
    return f"{mantissa}e{sign}{int(exp.lstrip('+-'))}"
