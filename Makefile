# README's two commands live here: `make demo` and `make test`. Both set everything up first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
R_DEBS := r-base-core r-base-dev r-cran-reticulate r-cran-testthat r-cran-roxygen2 r-cran-knitr r-cran-jsonlite \
          r-cran-rmarkdown r-cran-broom r-cran-car r-cran-lmtest r-cran-multcomp r-cran-sandwich r-cran-ggplot2 pandoc
# pdflatex + booktabs: the LaTeX tables are compiled in a test (skipped where no engine exists)
TEX_DEBS := texlive-latex-base texlive-latex-recommended
# Java for the local Spark session of the Spark data-source tests (pyspark is in the test extra)
JAVA_DEBS := openjdk-17-jre-headless
STAMP := $(VENV)/.installed

.PHONY: demo test test-python test-r test-slow audit r-deps r-check docs vignettes bench lint clean

$(STAMP): pyproject.toml
	@command -v R >/dev/null 2>&1 || $(MAKE) r-deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench,plots,docs,sources,spark]'
	touch $(STAMP)

# R and its packages come from Debian (CRAN is not reachable from these machines).
r-deps:
	@missing=""; for p in $(R_DEBS) $(TEX_DEBS) $(JAVA_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

demo: $(STAMP)
	$(PY) -m dpreg.demo

test: r-deps $(STAMP)
	$(MAKE) lint
	$(PY) -m pytest -q -p no:cacheprovider tests
	$(MAKE) test-r
	$(MAKE) docs

test-python: $(STAMP)
	$(PY) -m pytest -q tests

# The long statistical tests; `.ci/scheduled` runs them (with `make audit`) as the nightly job.
test-slow: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m slow tests

# The privacy audit's quick mode (about 10 minutes on 2 cores): empirical eps lower bounds per method.
audit: $(STAMP)
	$(PY) -m benchmarks audit --quick

# The R package: build, check, and run its testthat suite against this venv's Python core.
test-r: r-deps $(STAMP)
	@if [ -f r-package/DESCRIPTION ]; then bash r-package/tools/check.sh "$(abspath $(PY))"; \
	else echo "r-package not present: skipped"; fi

# The documentation site (docs/, Sphinx + numpydoc + myst-nb): API reference from the docstrings, option
# tables generated from the estimators, the API contract, and the Python vignettes (vignettes/*.md, MyST
# notebooks executed by a Jupyter kernel). -n -W --keep-going: a broken cross-reference, a docstring that
# does not parse, or a vignette cell that raises fails the build (all problems are listed, then it fails;
# -T prints the failing cell and its traceback).
# HTML in docs/_build/html/index.html.
DOCS_FLAGS := -b html -n -W --keep-going -q -T
docs: $(STAMP)
	$(PY) -m sphinx $(DOCS_FLAGS) docs docs/_build/html

# The Python vignettes are pages of the documentation site: building it executes them.
vignettes: docs

# ISLP ships the Wage, Credit, Carseats, Auto, Default and OJ tables of the accuracy benchmark; only its
# data files are read, so it is installed without its (deep-learning) dependencies
bench: $(STAMP)
	@$(PY) -c "import ISLP" 2>/dev/null || $(PY) -m pip install --quiet --no-deps ISLP
	$(PY) -m benchmarks --help

# ruff (pinned in the test extra; rules in pyproject.toml [tool.ruff.lint])
lint: $(STAMP)
	$(VENV)/bin/ruff check python tests benchmarks vignettes docs

clean:
	rm -rf $(VENV) build *.egg-info python/*.egg-info .pytest_cache
