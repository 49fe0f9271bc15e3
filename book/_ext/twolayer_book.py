"""The book's own Sphinx hooks (``_config.yml``: ``sphinx: local_extensions``).

* Every chapter executed in a build writes its results to ``_build/results/<chapter>.json``
  (the environment variable ``TWOLAYER_RESULTS_DIR``, read by
  :meth:`twolayer.common.contract.Contract.finish`; kernels inherit it).
* The pages that summarise those results (the claims index, the errata) are read, hence
  executed, after every chapter, and are re-read in every build.
"""
from __future__ import annotations

import os
from pathlib import Path

RESULTS_DIR_ENV = "TWOLAYER_RESULTS_DIR"
SUMMARY_PAGES = ("book/claims", "book/errata")


def results_dir(app) -> Path:
    return Path(app.outdir).parent / "results"


def _builder_inited(app):
    path = results_dir(app)
    path.mkdir(parents=True, exist_ok=True)
    os.environ[RESULTS_DIR_ENV] = str(path)


def _always_reread(app, env, added, changed, removed):
    return [d for d in SUMMARY_PAGES if d in env.found_docs]


def _read_last(app, env, docnames):
    for d in SUMMARY_PAGES:
        if d in docnames:
            docnames.remove(d)
            docnames.append(d)


def setup(app):
    app.connect("builder-inited", _builder_inited)
    app.connect("env-get-outdated", _always_reread)
    app.connect("env-before-read-docs", _read_last)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
