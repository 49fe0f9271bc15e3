# The two commands of the README:
#   make book   install everything into .venv and build the site into _build/html
#   make test   install everything into .venv and run every test (CI runs this via .ci/run)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: book test sync bench robustness clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# Executes every notebook (profile from BOOK_PROFILE, default "book") and writes _build/html.
book: $(STAMP)
	$(VENV)/bin/jupyter-book build . --keep-going
	@echo "Open _build/html/index.html in a browser."

# Unit tests, notebook tests (nbval, smoke profile), papermill contract tests, and a strict
# build of the whole book with a check of its HTML. On CI (CI=true) Debian's chromium is
# installed when missing, so the rendered pages are also screenshotted.
test: $(STAMP)
	@if [ "$${CI:-}" = "true" ] && ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the screenshot test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi
	BOOK_PROFILE=smoke $(PY) -m pytest

# Regenerate every notebooks/*/*.ipynb from its MyST .md source (and vice versa, newest wins).
sync: $(STAMP)
	$(VENV)/bin/jupytext --sync notebooks/*/*.md

# The robustness harness (issue 11): every chapter on 20 seeds no page uses and 4 random valid
# parameter sets in the smoke profile, then 3 seeds and 1 random set in the book profile; the
# table becomes the book's "Robustness" page (book/generated/robustness.md).
ROBUSTNESS_OUT ?= runs/robustness
robustness: $(STAMP)
	$(PY) -m twolayer.robustness --profile smoke --seeds 20 --random 4 \
		--out $(ROBUSTNESS_OUT)/smoke --markdown $(ROBUSTNESS_OUT)/smoke.md
	$(PY) -m twolayer.robustness --profile book --seeds 3 --random 1 \
		--out $(ROBUSTNESS_OUT)/book --markdown $(ROBUSTNESS_OUT)/book.md
	{ printf '## Smoke profile\n\n'; cat $(ROBUSTNESS_OUT)/smoke.md; \
	  printf '\n## Book profile\n\n'; cat $(ROBUSTNESS_OUT)/book.md; } > book/generated/robustness.md

clean:
	rm -rf _build .pytest_cache
