# Two commands on a fresh machine: `make synth` and `make test`.
# Both create (or refresh) the virtualenv and the Node tooling when missing or stale.
# The pinned upstream CRDs ship inside the package (constructs/fleet/data/crds, checked
# against crds.lock.yaml beside them): nothing outside the repository is needed.
# FLEET_CRDS_DIR=DIR validates against another folder.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.installed
# What the install depends on: [build-system], [project] and [tool.setuptools] of
# pyproject.toml, not the rest (editing [tool.fleet] or [tool.ruff] reinstalls nothing).
# Rewritten only when that part changes, so its mtime tracks it.
DEPS_STAMP := .fleet/install-inputs.json
NODE_STAMP := node_modules/.installed
WHEELS := build/wheels

.PHONY: setup synth test lint fmt typecheck unit bench wheel clean FORCE

setup: $(PY_STAMP) $(NODE_STAMP)

$(DEPS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@$(PYTHON) -c 'import json, sys, tomllib; d = tomllib.load(open("pyproject.toml", "rb")); \
	new = json.dumps([d.get("build-system"), d.get("project"), d.get("tool", {}).get("setuptools")], sort_keys=True); \
	old = open(sys.argv[1]).read() if __import__("os").path.exists(sys.argv[1]) else None; \
	new != old and open(sys.argv[1], "w").write(new)' $@

$(PY_STAMP): $(DEPS_STAMP)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# npm ci empties node_modules first: through a symlink (a node_modules shared by several
# checkouts) that would empty it for all of them, so a symlinked one is left alone.
$(NODE_STAMP): package.json package-lock.json
	@if [ -L node_modules ]; then echo "node_modules is a symlink: not reinstalling it"; \
	else npm ci --no-audit --no-fund --loglevel=error && touch $@; fi

synth: setup
	$(BIN)/fleet synth

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

fmt: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: setup
	$(BIN)/mypy
	node node_modules/pyright/index.js --pythonpath $(BIN)/python constructs/fleet

unit: setup
	$(BIN)/pytest

test: lint typecheck unit

# The distribution (fleet-as-code) as a wheel in build/wheels/, to publish to a package index.
wheel: setup
	$(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir $(WHEELS) .

bench: setup
	$(BIN)/python benchmarks/synth_bench.py --clusters 1000

clean:
	rm -rf $(VENV) node_modules .cdk8s.out .fleet .pytest_cache .mypy_cache .ruff_cache
