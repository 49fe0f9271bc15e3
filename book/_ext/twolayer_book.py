"""The book's own Sphinx hooks (``_config.yml``: ``sphinx: local_extensions``).

Results for the claims index
    Every chapter executed in a build writes its results to ``_build/results/<chapter>.json``
    (the environment variable ``TWOLAYER_RESULTS_DIR``, read by
    :meth:`twolayer.page.contract.Contract.finish`; kernels inherit it). The pages that
    summarize them (the claims index, the errata) are read, hence executed, after every
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

Glued Markdown is MyST
    ``{glue:md}`` renders a glued sentence with the book's own parser (dollar math,
    ``{prf:ref}``), not MyST-NB's default CommonMark, unless the page names a format.
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
    """A hash of the library files a notebook imports, of its recorded paper-profile run, of
    the profile and of the lock (``requirements.lock``): a new lock re-runs every chapter."""
    h = hashlib.sha256(profile().encode())
    lock = LIB.parent / "requirements.lock"
    if lock.exists():
        h.update(lock.read_bytes())
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


# --- the paper profile needs CIFAR-10 -----------------------------------------------------------


def paper_profile_data_error() -> str | None:
    """Why a ``BOOK_PROFILE=paper`` build cannot run (``None``: it can). Its Figure 2 page
    (``paper_a/real_images``) trains on CIFAR-10 there, found as the page finds it: its
    ``data_dir`` parameter is left at ``None``, so the archive ``cifar-10-binary.tar.gz`` is
    looked for in ``$CIFAR10_DIR`` (``twolayer.paper_a.images.find_cifar10``)."""
    if profile() != "paper":
        return None
    from twolayer.paper_a.images import DatasetUnavailable, find_cifar10

    try:
        find_cifar10(None)
    except DatasetUnavailable as exc:
        return (
            "BOOK_PROFILE=paper needs the CIFAR-10 archive (Figure 2, paper_a/real_images, "
            f"trains on it at the paper's scale), and nothing has run: {exc}. At the paper's "
            "scale each chapter takes from under a minute to about an hour on 2 CPU cores "
            "(about 2 hours for all but Figure 2, whose 10^6 SGD steps want a GPU: about 5 "
            "hours on 2 CPU cores); the measured table is on the book's Execution times page "
            "(book/timings.md), the way to run them in book/how-to-run.md, The papers' scale. "
            "`make paper-times` runs the chapters one by one instead."
        )
    return None


def _config_inited(app, config):
    problem = paper_profile_data_error()
    if problem:  # before any page is read or executed
        from sphinx.errors import ConfigError

        raise ConfigError(problem)
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


# --- which lock built the site ("Execution times") -----------------------------------------------


def lock_sentence() -> str:
    """One paragraph (MyST) on the environment this build ran in: the lock's SHA-256 and
    whether the installed packages are exactly the locked ones."""
    from twolayer.core.lockfile import summary

    lock = summary()
    if lock["sha256"] is None:
        return "This build ran without `requirements.lock` (not from a checkout)."
    text = (
        f"This site was built in the environment of `requirements.lock`, SHA-256 "
        f"`{lock['sha256'][:16]}…` ({lock['packages']} packages, exact versions and hashes; "
        "`make lock` regenerates it)."
    )
    if lock["matches"]:
        return text + " Every locked package was installed at its locked version."
    return (
        text
        + " **The installed packages differed from the lock:** "
        + "; ".join(f"`{m}`" for m in lock["mismatched"])
        + "."
    )


def _lock_directive():
    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

    class LockInfo(SphinxDirective):
        """``{lock-info}``: :func:`lock_sentence`, parsed as MyST."""

        has_content = False

        def run(self):
            lock = LIB.parent / "requirements.lock"
            if lock.exists():  # a new lock re-reads the page
                self.env.note_dependency(str(lock))
            return self.parse_text_to_nodes(lock_sentence()) or [nodes.paragraph()]

    return LockInfo


# --- glued Markdown is MyST ------------------------------------------------------------------


def _glue_markdown_as_myst(app, config) -> None:
    """``{glue:md}`` (role and directive) renders glued Markdown as the book's own MyST (the
    ``nb_render_markdown_format`` of ``_config.yml``: dollar math, ``{prf:ref}``) unless the
    page names a format (``{glue:md}`key:commonmark```, ``:format: gfm``). MyST-NB's default
    is CommonMark whatever that setting says, so a glued sentence with ``$n = 4$`` showed the
    raw TeX."""
    from myst_nb.ext.glue.directives import PasteMarkdownDirective
    from myst_nb.ext.glue.roles import PasteMarkdownRole

    fmt = config.nb_render_markdown_format

    class MystMarkdownRole(PasteMarkdownRole):
        def run(self):
            if ":" not in self.text:
                self.text = f"{self.text}:{fmt}"
            return super().run()

    class MystMarkdownDirective(PasteMarkdownDirective):
        def run(self):
            self.options.setdefault("format", fmt)
            return super().run()

    app.add_role_to_domain("glue", "md", MystMarkdownRole(), override=True)
    app.add_directive_to_domain("glue", "md", MystMarkdownDirective, override=True)


def setup(app):
    app.add_directive("lock-info", _lock_directive())
    # Sphinx re-reads every page when a config value marked "env" changes: the profile is one.
    app.add_config_value("twolayer_profile", profile(), "env")
    app.connect("config-inited", _config_inited)
    app.connect("config-inited", _glue_markdown_as_myst)
    app.connect("builder-inited", _builder_inited)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-before-read-docs", _read_last)
    app.connect("doctree-read", _doctree_read)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
