# The two commands of the README:
#   make book   install everything into .venv and build the site into _build/html
#   make test   install everything into .venv and run every test (CI runs this via .ci/run)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: help bugs lock test-latest update-reference nbval nbval-update book paper paper-times paper-collect test unit test-full lint mutate chromium sync bench robustness clean

LOCK   := requirements.lock
# Extra pip options for the install from the lock: elsewhere than this project's machines, the
# CPU wheel torch==2.13.0+cpu comes from PyTorch's own index, e.g.
#   make test PIP_EXTRA="--extra-index-url https://download.pytorch.org/whl/cpu"
PIP_EXTRA ?=

# The environment: exactly the lock (versions and hashes, no resolution), then this repository's
# `twolayer` package in editable mode without dependencies (they are all in the lock).
$(STAMP): $(LOCK) pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes --no-deps $(PIP_EXTRA) -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m pip check
	touch $(STAMP)

# Regenerate the lock from requirements.txt (loose ranges, and the package's own in
# pyproject.toml) with uv's resolver: CPython 3.11 on Linux x86_64, with every file's hash.
# Run `make test-latest` first: it says what the newest versions would change.
UV_VERSION := 0.13.9
# where torch's CPU wheel (2.13.0+cpu) is found: this project's machines keep it on disk
TORCH_WHEELS ?= $(if $(wildcard /opt/wheels/torch-*),--find-links /opt/wheels,\
	--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)
lock:
	$(PYTHON) -m pip install --quiet "uv==$(UV_VERSION)"
	$(PYTHON) -m uv pip compile requirements.txt --generate-hashes --python-version 3.11 \
		--python-platform x86_64-manylinux_2_28 --no-emit-package twolayer \
		$(TORCH_WHEELS) --custom-compile-command "make lock" -o $(LOCK)

# Executes every notebook (profile from BOOK_PROFILE, default "book") and writes _build/html.
book: $(STAMP)
	$(VENV)/bin/jupyter-book build . --keep-going
	@echo "Open _build/html/index.html in a browser."

# The site at the papers' scale (hours on 2 cores: see the book's "Execution times"). Executed
# notebooks are cached per profile, so an interrupted build resumes with what finished.
paper: $(STAMP)
	BOOK_PROFILE=paper $(VENV)/bin/jupyter-book build . --keep-going

# Each chapter's paper profile alone, timed with its peak memory (resumable, 1 hour cap per
# chapter); `python -m twolayer.tools.bench --only figure2` times Figure 2's training at its scale.
paper-times: $(STAMP)
	$(PY) -m twolayer.tools.bench --only notebooks --profile paper --no-build --timeout 3600 \
		--progress runs/paper_profile.json --json runs/paper_profile_bench.json --keep runs/paper

# What paper-times kept (runs/paper), recorded for the pages: book/generated/paper/<chapter>.json
# (checks, metrics, time, machine, date) and the run's figures; each chapter shows it beside its
# own run ("At the paper's scale"). Commit book/generated/paper after it.
paper-collect: $(STAMP)
	$(PY) -m twolayer.tools.paperscale runs/paper --progress runs/paper_profile.json

# Every test (see tests/conftest.py): ruff (lint and format check), the unit tests, every
# chapter once in a strict smoke build of the whole book (its HTML and each chapter's results
# are checked), the light robustness harness (5 unused seeds and 2 random parameter sets per
# chapter, on one local Dask cluster), the sweep runner and its faults. Two xdist workers:
# the book build starts first on one, the cluster tests on the other. Both the lint and the
# tests run; either failing fails the command. On CI (CI=true) Debian's chromium is installed
# first when missing, for the browser test (which fails on CI when there is no browser).
XDIST := -n 2 --dist loadgroup --no-loadscope-reorder
test: $(STAMP) chromium
	@rc=0; $(MAKE) --no-print-directory lint || rc=1; \
	BOOK_PROFILE=smoke $(PY) -m pytest $(XDIST) tests notebooks --nbval || rc=1; \
	exit $$rc

# nbval over every chapter notebook alone (notebooks/conftest.py: smoke profile, network guard,
# the parameter and check tables compared with the outputs committed in each .ipynb); one
# chapter: `.venv/bin/pytest --nbval-lax notebooks/paper_a/figure1.ipynb`.
nbval: $(STAMP)
	BOOK_PROFILE=smoke $(PY) -m pytest $(XDIST) notebooks --nbval

# Refresh the outputs nbval compares (the tagged cells of each .ipynb); commit them saying why.
nbval-update: $(STAMP)
	$(PY) tests/nbval_update.py

# Refresh the reference results (tests/reference/smoke): every chapter's smoke metrics at its
# defaults and their spread over 5 other seeds (twolayer/tools/reference.py); commit them saying why.
update-reference: $(STAMP)
	rm -rf runs/reference
	$(PY) -m twolayer.tools.reference update

# The newest versions the ranges of requirements.txt allow, in their own environment: the unit
# tests, the strict smoke build, and every smoke metric that moved against the locked build's
# reference (both values; the command fails when one moved beyond its tolerance). Run it
# before `make lock`.
LATEST := .venv-latest
test-latest:
	rm -rf $(LATEST) runs/latest
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet --upgrade $(PIP_EXTRA) -r requirements.txt
	@echo "== packages that differ from the lock"
	-$(LATEST)/bin/python -m twolayer.core.lockfile
	@echo "== unit tests"
	BOOK_PROFILE=smoke $(LATEST)/bin/python -m pytest tests/core tests/page tests/paper_a tests/paper_b \
		tests/entry_points -m "unit and not slow" -n 2 -q
	@echo "== strict smoke build"
	BOOK_PROFILE=smoke OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
		$(LATEST)/bin/jupyter-book build . --path-output runs/latest -W -n --keep-going
	@echo "== smoke metrics that moved against the reference (tests/reference/smoke)"
	$(LATEST)/bin/python -m twolayer.tools.reference compare runs/latest/_build/results --all

# The library's unit tests without the slow ones (seconds); `make test` runs everything.
unit: $(STAMP)
	$(PY) -m pytest tests/core tests/page tests/paper_a tests/paper_b tests/entry_points -m "unit and not slow" -n 2 -q

# Everything, with every chapter rerun for determinism (the `full` marker).
test-full: $(STAMP) chromium
	BOOK_PROFILE=smoke $(PY) -m pytest $(XDIST) -m "full or not full"

# ruff over the library, the tests, the notebooks and the book's Sphinx extension.
lint: $(STAMP)
	$(VENV)/bin/ruff check lib tests notebooks book/_ext
	$(VENV)/bin/ruff format --check lib tests notebooks book/_ext

# Mutation testing of every numerical module and the sweep's resume logic (tests/mutate.py):
# every mutant of a must-kill function must make a unit test fail unless it is a listed
# equivalent (keyed by its diff; a stale key fails); writes tests/mutation_summary.md. mutmut
# is pinned: the keys depend on its mutations (slow: about 19,100 mutants, 3 to 4 hours on 2 cores).
# A stopped run goes on with `make mutate MUTATE_ARGS=--resume`; after tests are added,
# `MUTATE_ARGS=--recheck` runs the must-kill survivors again. `MUTATE_ARGS=--checkpoint` saves
# a stopped run's results in tests/mutation_checkpoint.json (commit it): `--resume` in another
# checkout of the same code goes on from there.
MUTATE_ARGS ?=
mutate: $(STAMP)
	$(PY) -m pip install --quiet "mutmut==3.8.1"
	$(PY) tests/mutate.py $(MUTATE_ARGS)

# The benchmark (lib/twolayer/tools/bench/): the trainers against the machine's peak, the batched
# trainer against a naive loop, Figure 1's sweep, Paper B's gradient and every notebook; prints
# its figures and writes bench.json (the "Execution times" page shows the committed table).
bench: $(STAMP)
	$(PY) -m twolayer.tools.bench --json runs/bench/bench.json

# What each target does (the comments above each recipe in this file).
help:
	@awk '/^# / { doc = doc substr($$0, 3) " " } /^[a-z][a-z-]*:/ { split($$0, t, ":"); \
		if (doc != "") printf "  %-16s %s\n", t[1], substr(doc, 1, 110); doc = "" } \
		/^$$/ { doc = "" }' $(firstword $(MAKEFILE_LIST))

# The planted-bug benchmark (tests/bugs/run.py): every bug of tests/bugs/bugs.yml planted in a
# copy of the checkout, one at a time; `make unit`'s selection, then the smoke run of the page a
# missed bug would change. Writes book/generated/bugs.md (the Robustness page) (slow: ~1 h).
bugs: $(STAMP)
	$(PY) tests/bugs/run.py

chromium:
	@if [ "$${CI:-}" = "true" ] && ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# Regenerate every notebooks/*/*.ipynb from its MyST .md source (and vice versa, newest wins).
sync: $(STAMP)
	$(VENV)/bin/jupytext --sync notebooks/*/*.md

# The robustness harness: every chapter on 20 seeds no page uses, 4 random valid parameter
# sets and every explored parameter alone at both ends of its range in the smoke profile (warm
# kernels, reset between runs; about 700 runs), then 3 seeds, 1 random set and every explored
# parameter alone at both ends of its range in the book profile (about 400 runs, hours on 2
# cores); the table becomes the book's "Robustness" page (book/generated/robustness.md).
ROBUSTNESS_OUT ?= runs/robustness
robustness: $(STAMP)
	$(PY) -m twolayer.tools.robustness --profile smoke --seeds 20 --random 4 --warm \
		--one-at-a-time all --out $(ROBUSTNESS_OUT)/smoke --markdown $(ROBUSTNESS_OUT)/smoke.md
	$(PY) -m twolayer.tools.robustness --profile book --seeds 3 --random 1 --warm \
		--one-at-a-time all --out $(ROBUSTNESS_OUT)/book --markdown $(ROBUSTNESS_OUT)/book.md
	{ printf '## Smoke profile\n\n'; cat $(ROBUSTNESS_OUT)/smoke.md; \
	  printf '\n## Book profile\n\n'; cat $(ROBUSTNESS_OUT)/book.md; } > book/generated/robustness.md

clean:
	rm -rf _build .pytest_cache

# The Colab path, offline (tests/notebooks/test_colab.py, minutes; run it before each release):
# a fresh environment with only torch and ipykernel, twolayer installed there by a chapter's own
# install cell from a git+file:// clone of the working tree (the one step that reaches the
# package index), then paper_a/setting and paper_b/stage1 at the smoke profile in that kernel,
# under the network guard, from a folder outside the checkout.
.PHONY: test-colab
test-colab: $(STAMP)
	BOOK_PROFILE=smoke $(PY) -m pytest tests/notebooks/test_colab.py -m colab -n 0 -v -s
