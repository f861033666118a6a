# Two entry points for a fresh machine (Python 3.11+ and Java 17 present):
#   make check   set up .venv on first use, then check the default model (one record first) and print the verdicts
#   make test    set up .venv (and the system packages the tests need), then run the whole test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
BUILT  := $(VENV)/.compiled
# the hot path setup.py compiles with Cython (pyproject.toml's [tool.isr] compiled)
HOT_SRC := $(shell $(PYTHON) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["tool"]["isr"]["compiled"])' 2>/dev/null)

.PHONY: check test lint setup system-deps kafka bench clean

# pip builds the compiled hot path too (setup.py; a failed build is a warning, not an error)
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# A hot module's .py changed since: rebuild it (only what changed), else it runs as Python.
# Then one line saying whether the hot path is compiled (a warning if not).
$(BUILT): $(STAMP) $(HOT_SRC)
	@mkdir -p build && $(PY) setup.py build_ext --inplace > build/compiled-build.log 2>&1 || true
	@$(PY) -c 'import isr._hotpath as h; h.main()'
	@touch $(BUILT)

setup: $(BUILT)

# Debian packages the test suite needs (ZooKeeper for the real cluster, Chromium for the viewer test).
system-deps:
	@bash scripts/system-deps.sh

# First the default model with one record (a subset of its behaviours, so a violation there is
# one of the default model too): its verdicts in seconds. Then the default model itself.
check: $(BUILT)
	$(VENV)/bin/isr check --records 1  # kip-320 3/1/2/1: 173,371 states, about 8 s on 2 cores
	$(VENV)/bin/isr check  # kip-320 3/2/2/1, the default: every core by default (--workers)

# Apache Kafka's broker, tools and clients from Maven Central, once, into .kafka/ (ignored):
# the newest 4.x the kit knows and 4.0.x (traces/conformance/apache_kafka/install.py)
kafka: $(BUILT)
	@$(PY) -m isr.traces.conformance.apache_kafka.install 4.4.0 4.0.2

test: $(BUILT) system-deps kafka
	$(PY) -m pytest -q -n auto --maxprocesses 4

lint: $(BUILT)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: $(BUILT)
	$(PY) bench/checker_throughput.py
	$(PY) bench/spark_scaling.py
	$(PY) bench/parallel_scaling.py
	$(PY) bench/validate_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build isr/_compiled.json .kafka
	find spec checker -name '*.so' -delete
