"""The notebook contract of every chapter in notebooks/, checked without running a chapter
(the runs: the book build in test_chapter_results.py, the robustness harness in
test_robustness_light.py, chapter-specific runs in test_chapter_cases.py).

* each MyST ``.md`` has a paired ``.ipynb`` with the same cells, committed without outputs but
  for the two tables that ``pytest --nbval`` compares;
* each chapter is listed in ``_toc.yml``, its Colab install cell points at the repository named
  in ``_config.yml``, its parameters cell is annotated (papermill shows the types) and its
  Contract is named after the chapter (the book build writes its results under that name);
* in-process (no kernel): the defaults of every profile are valid; every parameter rejects a
  wrong type and an out-of-range value, and an unknown name is rejected, each with one message
  naming the parameter; the cross-parameter constraints hold; the harness can draw parameter
  sets from every chapter; and one papermill run proves a bad parameter stops the kernel with
  that message and writes nothing.
"""

from __future__ import annotations

import ast
import json
import re

import jupytext
import nbformat
import pytest

from helpers import CHAPTERS, NOTEBOOKS, ROOT, book_config, chapter_name, execute, toc_files

IDS = [p.stem for p in NOTEBOOKS]


def _cells(nb):
    out = []
    for c in nb.cells:
        meta = {k: v for k, v in c.metadata.items() if k in ("tags", "mystnb")}
        out.append((c.cell_type, c.source.strip(), json.dumps(meta, sort_keys=True)))
    return out


def test_there_are_chapters():
    assert len(NOTEBOOKS) >= 14, [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_pair_in_sync(md):
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} is missing: run `make sync`"
    assert _cells(jupytext.read(md)) == _cells(jupytext.read(ipynb)), (
        f"{md.name} and {ipynb.name} differ: run `make sync` (jupytext --sync)"
    )


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_ipynb_committed_with_only_the_outputs_nbval_compares(md):
    """Only the cells tagged ``nbval-check-output`` (the parameter table and the check table,
    compared by ``pytest --nbval``) carry committed outputs and an execution count, which
    nbval needs (``make nbval-update``); every other cell is committed without either."""
    nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    tagged = []
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        if "nbval-check-output" in c.metadata.get("tags", []):
            tagged.append(i)
            assert c.outputs and c.execution_count, f"cell {i} has no output: make nbval-update"
        else:
            assert not c.outputs and c.execution_count is None, f"cell {i} has outputs"
    sources = [nb.cells[i].source for i in tagged]
    assert len(tagged) == 2, "tag the parameter table and the check table nbval-check-output"
    assert "contract.parameter_table()" in sources[0] and "contract.finish()" in sources[1]


def test_toc_entries_exist_and_cover_every_chapter():
    files = toc_files()
    for f in files:
        assert any((ROOT / f).with_suffix(s).exists() for s in (".md", ".ipynb")), f
    for md in NOTEBOOKS:
        assert md.relative_to(ROOT).with_suffix("").as_posix() in files, (
            f"{md.stem} is not in _toc.yml"
        )


def test_book_config_contract():
    cfg = book_config()
    assert cfg["only_build_toc_files"] is True
    assert cfg["execute"]["execute_notebooks"] == "cache"  # see book/_ext/twolayer_book.py
    assert 0 < cfg["execute"]["timeout"] <= 1800, "a hung cell must fail the build"
    assert "sphinx_proof" in cfg["sphinx"]["extra_extensions"]
    assert cfg["launch_buttons"]["colab_url"] and cfg["launch_buttons"]["binderhub_url"]
    assert all((ROOT / b).exists() for b in cfg["bibtex_bibfiles"])


def _parameters_cell(md):
    nb = jupytext.read(md)
    code = [c for c in nb.cells if c.cell_type == "code"]
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, "exactly one cell must be tagged `parameters`"
    return code, params[0]


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_parameters_cell_and_colab_install(md):
    code, cell = _parameters_cell(md)
    tree = ast.parse(cell.source)
    plain = [ast.unparse(s).split("=")[0].strip() for s in tree.body if isinstance(s, ast.Assign)]
    assert not plain, f"parameters without a type annotation (papermill shows types): {plain}"
    names = {s.target.id for s in tree.body if isinstance(s, ast.AnnAssign)}
    assert {"seed", "profile", "results_path"} <= names
    assert re.search(r"^profile\s*:[^=\n]*=\s*None\b", cell.source, flags=re.M), (
        "profile must default to None (read from $BOOK_PROFILE)"
    )
    # papermill reads every one of them, with its type (`--help-notebook`; its parser does not
    # read `X | None`, hence `Union[X, None]`)
    from papermill.translators import PythonTranslator

    inferred = {p.name: p for p in PythonTranslator.inspect(cell)}
    assert set(inferred) == names, f"papermill cannot read {sorted(names - set(inferred))}"
    assert all(p.inferred_type_name != "None" for p in inferred.values()), inferred
    url = book_config()["repository"]["url"]
    assert "twolayer" in code[0].source and f"git+{url}" in code[0].source, (
        "the first code cell must install twolayer from the repository in _config.yml"
    )
    # ... or from $TWOLAYER_INSTALL_SOURCE (tests/notebooks/test_colab.py: a git+file:// clone)
    assert 'os.environ.get("TWOLAYER_INSTALL_SOURCE")' in code[0].source
    assert '%pip install -q "{_source}"' in code[0].source


# --- the contract, in-process -----------------------------------------------------------------


def _spec(md):
    """The chapter's :class:`~twolayer.page.contract.ChapterSpec` (its module's ``SPEC``)."""
    from twolayer import chapters

    return chapters.spec(chapter_name(md))


def _validate(md, profile="smoke", **values):
    """The chapter's parameters at ``profile`` with ``values`` changed, validated as the page
    would (the parameters cell's values, then papermill's)."""
    return _spec(md).params(profile, **values)


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_page_builds_its_contract_from_its_module(md):
    """The chapter module is named after the chapter (the book build writes the results to
    _build/results/<chapter>.json, which the claims index reads), and the page declares no
    parameter of its own: it builds its contract from the module's ``SPEC``."""
    import re

    spec = _spec(md)
    assert spec is not None, f"{chapter_name(md)} has no chapter module"
    assert spec.chapter == chapter_name(md)
    text = md.read_text(encoding="utf-8")
    assert "SPEC.contract(globals())" in text
    declared = re.findall(r"\b(Contract|ChapterSpec|Int|Float|Choice|ListOf|Bool)\(", text)
    assert not declared, f"{md.name} declares parameter types itself: {sorted(set(declared))}"


@pytest.mark.parametrize("profile", ["smoke", "book", "paper"])
@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_defaults_valid_in_every_profile(md, profile):
    P = _validate(md, profile)
    assert P.profile == profile and P.seed == 0 and P.results_path is None


def test_profile_from_the_environment(monkeypatch):
    from twolayer.core.params import ParameterError

    md = NOTEBOOKS[0]
    monkeypatch.setenv("BOOK_PROFILE", "paper")
    assert _validate(md, None).profile == "paper"
    monkeypatch.setenv("BOOK_PROFILE", "enormous")
    with pytest.raises(ParameterError, match="BOOK_PROFILE"):
        _validate(md, None)


def _bad_values(spec):
    """(wrong-type value, out-of-range value) for a parameter type; None when it has none."""
    from twolayer.core import params as nbk

    if isinstance(spec, nbk.Optional):
        return _bad_values(spec.inner)
    if isinstance(spec, nbk.Int):
        return "1", (
            spec.lo - 1 if spec.lo is not None else spec.hi + 1 if spec.hi is not None else None
        )
    if isinstance(spec, nbk.Float):
        if spec.lo is not None:
            out = spec.lo if spec.lo_open else spec.lo - 1.0
        elif spec.hi is not None:
            out = spec.hi if spec.hi_open else spec.hi + 1.0
        else:
            out = float("nan")
        return "0.5", out
    if isinstance(spec, nbk.Choice):
        return 1j, "__not_an_allowed_value__"
    if isinstance(spec, nbk.Bool):
        return "yes", 2
    if isinstance(spec, nbk.ListOf):
        return "1, 2", [] if spec.min_len >= 1 else None
    if isinstance(spec, nbk.OptionalPath):
        return 3, "results.txt"
    if isinstance(spec, nbk.OptionalDir):
        return 3, ""
    wrong = getattr(spec, "bad_values", None)
    assert wrong is not None, f"no bad values known for parameter type {type(spec).__name__}"
    return wrong()


def _cases():
    for md in NOTEBOOKS:
        for name, spec in _spec(md).unbound().spec.items():
            for kind, value in zip(("wrong_type", "out_of_range"), _bad_values(spec)):
                if value is not None:
                    yield pytest.param(md, name, value, id=f"{md.stem}-{name}-{kind}")
        yield pytest.param(md, "not_a_parameter", 1, id=f"{md.stem}-unknown_name")


@pytest.mark.parametrize("md, name, value", list(_cases()))
def test_every_parameter_is_validated(md, name, value):
    from twolayer.core.params import ParameterError

    _validate(md)  # the defaults are valid
    with pytest.raises(ParameterError) as err:
        _validate(md, **{name: value})
    msg = str(err.value)
    assert repr(name) in msg and ("must be" in msg or "unknown parameter" in msg), msg


# cross-parameter rules: Contract constraints, checked by validate() (no kernel needed)
CONSTRAINTS = [
    ("paper_a/setting", {"gamma": 1.5}, "gamma"),
    ("paper_a/setting", {"ns": [8, 4]}, "ns"),
    ("paper_a/setting", {"ratio_min": 10.0, "ratio_max": 5.0}, "ratio_max"),
    ("paper_a/gradient_flow", {"d": 4, "n": 8}, "d"),
    ("paper_a/gradient_flow", {"gap": 3.0}, "gap"),  # gap > 1 is allowed (outside Thm 3.2)
    ("paper_a/kkt_not_max_margin", {"eps_min": 0.3, "eps_max": 0.1}, "eps_max"),
    ("paper_a/noisy_xor", {"dims": [64, 2]}, "dims"),
    ("paper_a/real_images", {"init_scales": [0.1, 0.5]}, "init_scales"),
    ("paper_a/real_images", {"dataset": "mnist"}, "dataset"),
]


@pytest.mark.parametrize(
    "chapter, values, name", CONSTRAINTS, ids=[f"{c}-{n}" for c, _, n in CONSTRAINTS]
)
def test_cross_parameter_constraints(chapter, values, name):
    from twolayer.core.params import ParameterError

    md = NOTEBOOKS[CHAPTERS.index(chapter)]
    with pytest.raises(ParameterError) as err:
        _validate(md, **values)
    assert repr(name) in str(err.value), str(err.value)


def test_real_images_default_checksum_is_the_official_one():
    from twolayer.paper_a import images

    md = NOTEBOOKS[CHAPTERS.index("paper_a/real_images")]
    assert _validate(md).archive_md5 == images.CIFAR10_MD5


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_harness_draws_valid_parameter_sets(md):
    """What `make robustness` and the light harness run: valid sets, deterministic."""
    from twolayer.tools import robustness

    nb = md.with_suffix(".ipynb")
    sets = robustness.random_parameter_sets(nb, 3, "smoke", sample_seed=0)
    assert len(sets) == 3, "no parameter of this chapter has an explore= range"
    assert sets == robustness.random_parameter_sets(nb, 3, "smoke", sample_seed=0)
    for params in sets:
        drawn = {k: v for k, v in params.items() if k != "profile"}
        _validate(md, **drawn)


@pytest.mark.slow
def test_bad_parameter_through_papermill_writes_nothing(tmp_path):
    """Through a kernel: the run stops at validate() with one ParameterError naming the
    parameter, and nothing is written to results_path."""
    import papermill as pm

    path = tmp_path / "r.json"
    with pytest.raises(pm.PapermillExecutionError) as err:
        execute(NOTEBOOKS[0], tmp_path, seed="zero", results_path=str(path))
    assert err.value.ename == "ParameterError"
    assert "'seed'" in err.value.evalue and "must be" in err.value.evalue, err.value.evalue
    assert not path.exists() and not list(tmp_path.glob("*.json"))
