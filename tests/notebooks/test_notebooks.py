"""The notebook contract, for every chapter in notebooks/.

* each MyST ``.md`` has a paired ``.ipynb`` with the same cells, committed without outputs;
* each chapter is listed in ``_toc.yml`` and its Colab install cell points at the repository
  named in ``_config.yml``;
* a papermill run in the smoke profile with ``results_path`` writes exactly
  ``{"params", "metrics", "checks"}`` with every check true, identically on a second run;
* a wrong type, an out-of-range value or an unknown parameter stops the run with one message
  naming the parameter, and writes nothing.
"""
from __future__ import annotations

import json
import re

import jupytext
import nbformat
import papermill as pm
import pytest
import yaml

from conftest import NOTEBOOKS, ROOT

IDS = [p.stem for p in NOTEBOOKS]


def _cells(nb):
    out = []
    for c in nb.cells:
        meta = {k: v for k, v in c.metadata.items() if k in ("tags", "mystnb")}
        out.append((c.cell_type, c.source.strip(), json.dumps(meta, sort_keys=True)))
    return out


def test_there_are_chapters():
    assert NOTEBOOKS, "no notebooks/*/*.md found"


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_pair_in_sync(md):
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} is missing: run `make sync`"
    from_md = jupytext.read(md)
    from_ipynb = jupytext.read(ipynb)
    assert _cells(from_md) == _cells(from_ipynb), (
        f"{md.name} and {ipynb.name} differ: run `make sync` (jupytext --sync)")


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_ipynb_committed_without_outputs(md):
    nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code":
            assert not c.outputs and c.execution_count is None, f"cell {i} has outputs"


def _config():
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            files.append(ch["file"])
            files += [s["file"] for s in ch.get("sections", [])]
    return files


def test_toc_entries_exist_and_cover_every_chapter():
    files = _toc_files()
    for f in files:
        assert any((ROOT / f).with_suffix(s).exists() for s in (".md", ".ipynb")), f
    for md in NOTEBOOKS:
        assert md.relative_to(ROOT).with_suffix("").as_posix() in files, f"{md.stem} is not in _toc.yml"


def test_book_config_contract():
    cfg = _config()
    assert cfg["only_build_toc_files"] is True
    assert cfg["execute"]["execute_notebooks"] == "cache"  # see book/_ext/twolayer_book.py
    assert cfg["execute"]["timeout"] > 0
    assert "sphinx_proof" in cfg["sphinx"]["extra_extensions"]
    assert cfg["launch_buttons"]["colab_url"] and cfg["launch_buttons"]["binderhub_url"]
    assert all((ROOT / b).exists() for b in cfg["bibtex_bibfiles"])


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_parameters_cell_and_colab_install(md):
    nb = jupytext.read(md)
    code = [c for c in nb.cells if c.cell_type == "code"]
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, "exactly one cell must be tagged `parameters`"
    names = set(re.findall(r"^(\w+)\s*=", params[0].source, flags=re.M))
    assert {"seed", "profile", "results_path"} <= names
    assert re.search(r"^profile\s*=\s*None\b", params[0].source, flags=re.M), \
        "profile must default to None (read from $BOOK_PROFILE)"
    url = _config()["repository"]["url"]
    assert "import twolayer" in code[0].source and f"git+{url}" in code[0].source, \
        "the first code cell must install twolayer from the repository in _config.yml"


def _run(md, tmp_path, **params):
    out = tmp_path / f"{md.stem}-out.ipynb"
    return pm.execute_notebook(str(md.with_suffix(".ipynb")), str(out), parameters=params,
                               cwd=str(md.parent), progress_bar=False, kernel_name="python3")


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
def test_papermill_smoke_writes_results_and_is_reproducible(md, tmp_path):
    path, other = tmp_path / "a.json", tmp_path / "b.json"
    _run(md, tmp_path, profile="smoke", seed=0, results_path=str(path))
    first = path.read_bytes()
    res = json.loads(first)
    assert set(res) == {"params", "metrics", "checks"}
    assert res["params"]["profile"] == "smoke" and res["params"]["seed"] == 0
    assert res["checks"] and all(v is True for v in res["checks"].values())
    assert res["metrics"]
    # same parameters (results_path included) and seed: the same bytes; another seed: other numbers
    _run(md, tmp_path, profile="smoke", seed=0, results_path=str(path))
    assert path.read_bytes() == first
    _run(md, tmp_path, profile="smoke", seed=1, results_path=str(other))
    assert json.loads(other.read_text())["metrics"] != res["metrics"]
    assert not list(tmp_path.glob(".*.tmp")), "temporary files left behind"


@pytest.mark.parametrize("md", NOTEBOOKS, ids=IDS)
@pytest.mark.parametrize("params, name", [
    ({"seed": "zero"}, "seed"),                   # wrong type
    ({"not_a_parameter": 1}, "not_a_parameter"),  # unknown name
])
def test_bad_parameter_stops_with_clear_message(md, tmp_path, params, name):
    """Through papermill: the run stops with a ParameterError naming the parameter, and
    nothing is written to results_path. (Every parameter is covered in-process below.)"""
    path = tmp_path / "r.json"
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(md, tmp_path, **{"profile": "smoke", "results_path": str(path), **params})
    assert err.value.ename == "ParameterError"
    assert repr(name) in err.value.evalue, err.value.evalue
    assert not path.exists()


def test_setting_rejects_out_of_range_gamma_and_list(tmp_path):
    md = ROOT / "notebooks" / "paper_a" / "setting.md"
    for params, name in (({"gamma": 1.5}, "gamma"), ({"gamma": "0.5"}, "gamma"),
                         ({"ns": [8, 4]}, "ns"), ({"ratio_min": 10.0, "ratio_max": 5.0}, "ratio_max")):
        with pytest.raises(pm.PapermillExecutionError) as err:
            _run(md, tmp_path, profile="smoke", **params)
        assert repr(name) in err.value.evalue, err.value.evalue


def test_profile_comes_from_environment(tmp_path, monkeypatch):
    md = ROOT / "notebooks" / "paper_a" / "setting.md"
    path = tmp_path / "r.json"
    monkeypatch.setenv("BOOK_PROFILE", "smoke")
    _run(md, tmp_path, results_path=str(path))
    assert json.loads(path.read_text())["params"]["profile"] == "smoke"
    monkeypatch.setenv("BOOK_PROFILE", "enormous")
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(md, tmp_path)
    assert "BOOK_PROFILE" in err.value.evalue


# --- every parameter of every chapter, in-process -------------------------------------------

def _chapter_contract(md):
    """Run a chapter's setup cells and its parameters cell in a fresh namespace (no kernel):
    return the namespace and its Contract. The Colab install cell (the first) is skipped."""
    from twolayer.common.contract import Contract

    nb = jupytext.read(md)
    code = [c for c in nb.cells if c.cell_type == "code"]
    i = next(k for k, c in enumerate(code) if "parameters" in c.metadata.get("tags", []))
    ns = {"__name__": "__chapter__"}
    for c in code[1:i]:
        exec(compile(c.source, f"{md.name}:setup", "exec"), ns)
    contracts = [v for v in ns.values() if isinstance(v, Contract)]
    assert len(contracts) == 1, "the setup cells must create exactly one Contract"
    return ns, contracts[0], code[i].source


def _bad_values(spec):
    """(wrong-type value, out-of-range value) for a parameter type; None when it has none."""
    from twolayer.common import contract as nbk

    if isinstance(spec, nbk.Optional):
        return _bad_values(spec.inner)
    if isinstance(spec, nbk.Int):
        return "1", (spec.lo - 1 if spec.lo is not None else spec.hi + 1
                     if spec.hi is not None else None)
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
        _, contract, _ = _chapter_contract(md)
        for name, spec in contract.spec.items():
            for kind, value in zip(("wrong_type", "out_of_range"), _bad_values(spec)):
                if value is not None:
                    yield pytest.param(md, name, value, id=f"{md.stem}-{name}-{kind}")
        yield pytest.param(md, "not_a_parameter", 1, id=f"{md.stem}-unknown_name")


@pytest.mark.parametrize("md, name, value", list(_cases()))
def test_every_parameter_is_validated(md, name, value):
    from twolayer.common.contract import ParameterError

    ns, contract, params_source = _chapter_contract(md)
    exec(compile(params_source, f"{md.name}:parameters", "exec"), ns)
    ns["profile"] = "smoke"
    contract.validate()  # the defaults are valid
    ns[name] = value
    with pytest.raises(ParameterError) as err:
        contract.validate()
    msg = str(err.value)
    assert repr(name) in msg and ("must be" in msg or "unknown parameter" in msg), msg
