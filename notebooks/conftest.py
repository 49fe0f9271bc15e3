"""``pytest --nbval`` (or ``--nbval-lax``) on the chapter notebooks: ``make nbval``, and
part of ``make test``. Any chapter or the whole folder, e.g. ``pytest --nbval-lax
notebooks/paper_a/figure1.ipynb``.

* Each notebook runs in the smoke profile (``BOOK_PROFILE``, unless set otherwise), with
  one BLAS thread and the tests' network guard (``tests/guards/network_plugin.py``): a
  chapter that tries to reach the network fails.
* A failing theorem or observation check stops its notebook, so the cell fails.
* Outputs compared: only the cells tagged ``nbval-check-output`` (each chapter's
  parameter table and check table), against the outputs committed in the paired
  ``.ipynb``, in both ``--nbval`` and ``--nbval-lax`` (every other cell's output is a
  figure, a progress bar or a glued number, which no committed output could pin down on
  every machine). Numbers, times and paths are replaced by
  ``notebooks/nbval_sanitize.cfg`` before the comparison, so what is compared is each
  check's kind, name, statement and result and each parameter's name, meaning and
  allowed values. ``make nbval-update`` refreshes the committed outputs.
* Cells of one notebook share its kernel: under xdist, each notebook is one group.
"""

from __future__ import annotations

from nbval_plugin import (  # noqa: F401  (pytest hooks, registered by import)
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_sessionfinish,
)
