"""``twolayer.core.fmt``: the one number formatter of the book's displays (significant digits,
the non-finite, integers, the sign), against strings written by hand."""

from __future__ import annotations

import numpy as np
import pytest

from twolayer.core.fmt import fmt, sci


@pytest.mark.parametrize(
    "value, text",
    [
        (38, "38"),
        (38.0, "38"),
        (np.int64(96), "96"),
        (123456, "123\u202f456"),
        (14723634045021411328, "1.47e19"),
        (1.4723634045021411e19, "1.47e19"),
        (2.7e-9, "2.7e-9"),
        (-1.6e-9, "-1.6e-9"),
        (-0.0, "0"),
        (0.000221, "0.000221"),
        (2.21e-5, "2.21e-5"),
        (4.214, "4.214"),
        (9999.96, "1e4"),
        (12345.6, "1.23e4"),
        (float("inf"), "∞"),
        (float("-inf"), "−∞"),
        (float("nan"), "nan"),
        (-2.5, "-2.5"),
        (-12345, "-12\u202f345"),
        (10**15, "1e15"),
        (1e6, "1e6"),  # a whole float from 10^6 on is written with its exponent
        (999999.0, "999999"),
        (None, "—"),
        (True, "true"),
        (np.bool_(False), "false"),
        ([1, 0.5, None], "[1, 0.5, —]"),
        (list(range(7)), "[0, …, 6] (7 values)"),
        ("text", "text"),
    ],
)
def test_numbers_are_formatted_for_a_reader(value, text):
    assert fmt(value) == text


@pytest.mark.parametrize(
    "x, text",
    [
        (1.4723e19, "1.47e19"),
        (2.7e-9, "2.7e-9"),
        (-1.6e-9, "-1.6e-9"),
        (123.0, "123"),
        (1e6, "1e6"),
    ],
)
def test_scientific_notation_has_no_plus_and_no_leading_zeros(x, text):
    assert sci(x) == text
