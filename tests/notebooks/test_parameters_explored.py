"""Every parameter of every chapter is either explored by the robustness harness (an
``explore`` range: the valid values a reader might choose) or fixed with a one-line reason
(``fixed=``), and every explore range lies inside the parameter's own type, so that the
harness's one-at-a-time changes (:func:`twolayer.tools.robustness.one_at_a_time_sets`) are valid
values."""

from __future__ import annotations

import pytest

from helpers import CHAPTERS, NOTEBOOKS, chapter_name
from twolayer import chapters
from twolayer.core.params import COMMON, ParameterError

# chapters whose parameters have not all been given a range or a reason yet
PENDING: dict[str, str] = {}


PATHS = {chapter_name(p): p for p in NOTEBOOKS}


def _contract(chapter):
    return chapters.spec(chapter).unbound()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_parameter_is_explored_or_fixed_with_a_reason(chapter):
    if chapter in PENDING:
        pytest.xfail(PENDING[chapter])
    spec = _contract(chapter).spec
    bare = sorted(
        k for k, s in spec.items() if k not in COMMON and s.explore is None and not s.fixed.strip()
    )
    assert not bare, f"{chapter}: parameters with neither an explore range nor a reason: {bare}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_both_ends_of_every_range_are_valid_values(chapter):
    spec = _contract(chapter).spec
    for name, s in spec.items():
        for value in s.ends():
            try:
                s.validate(name, value)
            except ParameterError as exc:
                pytest.fail(f"{chapter}: the explore range of {name} leaves its type: {exc}")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_page_parameters_cell_is_the_module_spec_defaults(chapter):
    """The page keeps its papermill ``parameters`` cell; its values are ``SPEC.defaults``."""
    from helpers import parameters_cell
    from twolayer import chapters

    spec = chapters.spec(chapter)
    assert spec is not None, f"{chapter} has no chapter module"
    assert parameters_cell(PATHS[chapter]) == dict(spec.defaults)
