# Two commands on a fresh machine: `make synth` and `make test`.
# Both create (or refresh) the virtualenv and the Node tooling when missing or stale.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
# CI and tests validate against the upstream CRDs beside the repository when present.
SHARED_CRDS := $(abspath ../shared/crds)
export FLEET_CRDS_DIR ?= $(if $(wildcard $(SHARED_CRDS)),$(SHARED_CRDS),)

.PHONY: setup synth test lint typecheck unit bench clean

setup: $(PY_STAMP) $(NODE_STAMP)

$(PY_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

synth: setup
	$(BIN)/fleet synth

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest

test: lint typecheck unit

bench: setup
	$(BIN)/python benchmarks/synth_bench.py --clusters 1000

clean:
	rm -rf $(VENV) node_modules .cdk8s.out .fleet .pytest_cache .mypy_cache .ruff_cache
