# Two entry points for a fresh machine (Python 3.11+ and Java 17 present):
#   make check   set up .venv on first use, then check the default model and print the verdicts
#   make test    set up .venv (and the system packages the tests need), then run the whole test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: check test lint setup system-deps bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# Debian packages the test suite needs (ZooKeeper for the real cluster, Chromium for the viewer test).
system-deps:
	@bash scripts/system-deps.sh

check: $(STAMP)
	$(VENV)/bin/isr check  # every core by default (--workers)

test: $(STAMP) system-deps
	$(PY) -m pytest -q -n auto --maxprocesses 4

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: $(STAMP)
	$(PY) bench/checker_throughput.py
	$(PY) bench/spark_scaling.py
	$(PY) bench/parallel_scaling.py
	$(PY) bench/validate_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
