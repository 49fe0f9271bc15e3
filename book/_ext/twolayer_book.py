"""The book's own Sphinx hooks (``_config.yml``: ``sphinx: local_extensions``).

Results for the claims index
    Every chapter executed in a build writes its results to ``_build/results/<chapter>.json``
    (the environment variable ``TWOLAYER_RESULTS_DIR``, read by
    :meth:`twolayer.common.contract.Contract.finish`; kernels inherit it). The pages that
    summarise them (the claims index, the errata) are read, hence executed, after every
    chapter, and are re-read in every build.

Builds that do not start over (``execute_notebooks: cache``)
    Executed notebooks are cached by jupyter-cache in ``_build/.jupyter_cache/<profile>``, one
    cache per ``BOOK_PROFILE``, so switching profiles never mixes outputs. jupyter-cache keys a
    notebook by its code; this extension adds the library: a chapter's key also covers the
    source of every ``twolayer`` module it imports, directly or through the library's own
    imports, and its recorded paper-profile run (``book/generated/paper``), which it shows. When
    one of those files changes, exactly the chapters that import it are marked outdated and
    their cache entries dropped, so they run again; every other page is reused. A chapter's key
    is recorded as soon as it has been read, so an interrupted build resumes with what finished.
    A change of profile re-reads every page (Sphinx's environment records the profile).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from pathlib import Path

RESULTS_DIR_ENV = "TWOLAYER_RESULTS_DIR"
PROFILE_ENV = "BOOK_PROFILE"
SUMMARY_PAGES = ("book/claims", "book/errata")
LIB = Path(__file__).resolve().parents[2] / "lib"


def profile() -> str:
    return os.environ.get(PROFILE_ENV, "book")


def results_dir(app) -> Path:
    return Path(app.outdir).parent / "results"


def cache_dir(app) -> Path:
    return Path(app.outdir).parent / ".jupyter_cache" / profile()


# --- which library files a chapter depends on --------------------------------------------------


def _module_file(name: str) -> Path | None:
    base = LIB / Path(*name.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.exists():
            return cand
    return None


def _imports(tree: ast.AST, package: str) -> set[str]:
    """Fully qualified ``twolayer`` modules imported by ``tree`` (``package``: for relative
    imports)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("twolayer")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if not mod.startswith("twolayer"):
                continue
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}  # "from pkg import module"
    return out


def library_files(code: str) -> list[Path]:
    """Every library file that ``code`` imports, transitively (parents' ``__init__`` too)."""
    seen: dict[str, Path] = {}
    todo = list(_imports(ast.parse(code), "twolayer"))
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name)
        if path is None:
            continue
        seen[name] = path
        parts = name.split(".")
        todo += [".".join(parts[:k]) for k in range(1, len(parts))]
        pkg = name if path.name == "__init__.py" else ".".join(parts[:-1])
        todo += list(_imports(ast.parse(path.read_text()), pkg))
    return sorted(set(seen.values()))


def _notebook_code(path: Path) -> str:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    lines = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            # IPython magics (the Colab install cell) are not Python: each becomes a `pass`
            for ln in cell.source.splitlines():
                body = ln.lstrip()
                magic = body.startswith(("%", "!"))
                lines.append(ln[: len(ln) - len(body)] + "pass" if magic else ln)
    return "\n".join(lines)


def paper_record_files(path: Path) -> list[Path]:
    """The chapter's recorded paper-profile run (``book/generated/paper/<paper>/<chapter>.json``
    and its figures), which the page shows: a new record re-runs the page."""
    rec = LIB.parent / "book" / "generated" / "paper" / path.parent.name / f"{path.stem}.json"
    if not rec.exists():
        return []
    return [rec, *sorted(rec.with_suffix("").glob("*.png"))]


def dependency_key(path: Path) -> str:
    """A hash of the library files a notebook imports, of its recorded paper-profile run and
    of the profile."""
    h = hashlib.sha256(profile().encode())
    for f in library_files(_notebook_code(path)):
        h.update(str(f.relative_to(LIB)).encode())
        h.update(f.read_bytes())
    for f in paper_record_files(path):
        h.update(str(f.relative_to(LIB.parent)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _keys_file(app) -> Path:
    return cache_dir(app) / "library-keys.json"


def _load_keys(app) -> dict:
    try:
        return json.loads(_keys_file(app).read_text())
    except (OSError, ValueError):
        return {}


def _save_key(app, docname: str, key: str) -> None:
    keys = _load_keys(app)
    keys[docname] = key
    path = _keys_file(app)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(keys, indent=1, sort_keys=True))
    os.replace(tmp, path)


def _is_chapter(env, docname: str) -> bool:
    return docname.startswith("notebooks/") and Path(env.doc2path(docname)).suffix == ".ipynb"


def _drop_cache_record(app, nb_path: Path) -> None:
    import nbformat
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_dir(app)))
    try:
        record = cache.match_cache_notebook(nbformat.read(nb_path, as_version=4))
    except KeyError:
        return
    cache.remove_cache(record.pk)


# --- Sphinx events ------------------------------------------------------------------------------


def _config_inited(app, config):
    if config.nb_execution_mode == "cache":
        config.nb_execution_cache_path = str(cache_dir(app))


def _builder_inited(app):
    path = results_dir(app)
    path.mkdir(parents=True, exist_ok=True)
    os.environ[RESULTS_DIR_ENV] = str(path)


def _outdated(app, env, added, changed, removed):
    out = [d for d in SUMMARY_PAGES if d in env.found_docs]
    if app.config.nb_execution_mode != "cache":
        return out
    keys = _load_keys(app)
    for docname in sorted(env.found_docs):
        if docname in added or docname in changed or not _is_chapter(env, docname):
            continue
        path = Path(env.doc2path(docname))
        if keys.get(docname) not in (None, dependency_key(path)):
            _drop_cache_record(app, path)
            out.append(docname)
    return out


def _read_last(app, env, docnames):
    for d in SUMMARY_PAGES:
        if d in docnames:
            docnames.remove(d)
            docnames.append(d)


def _doctree_read(app, doctree):
    env = app.env
    if app.config.nb_execution_mode == "cache" and _is_chapter(env, env.docname):
        _save_key(app, env.docname, dependency_key(Path(env.doc2path(env.docname))))


def setup(app):
    # Sphinx re-reads every page when a config value marked "env" changes: the profile is one.
    app.add_config_value("twolayer_profile", profile(), "env")
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-before-read-docs", _read_last)
    app.connect("doctree-read", _doctree_read)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
