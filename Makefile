# Two commands on a fresh machine: `make synth` and `make test`.
# Both create (or refresh) the virtualenv and the Node tooling when missing or stale.
# The pinned upstream CRDs ship inside the package (constructs/fleet/data/crds, checked
# against crds.lock.yaml beside them): nothing outside the repository is needed.
# FLEET_CRDS_DIR=DIR validates against another folder.
#
# The virtualenv is exactly uv.lock: every distribution, transitive ones included, at one
# version with its sha256 (uv sync --locked). uv itself is in that lock: on a fresh checkout
# pip installs the locked uv, checked against the lock's hashes, into .fleet/uv, and that uv
# installs the rest (uv among it). `make lock` re-locks after a change of pyproject.toml's
# dependencies; `make setup` refuses a lock that does not match them.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
WHEELS := build/wheels
BOOT := .fleet/uv
# The virtualenv's uv once it exists, else the one bootstrapped from uv.lock's pin.
UV ?= $(firstword $(wildcard $(BIN)/uv) $(BOOT)/bin/uv)
# `make lock LOCK_ARGS=--upgrade` moves every unpinned (transitive) dependency to its newest
# release; `LOCK_ARGS='--upgrade-package NAME'` moves one.
LOCK_ARGS ?=
# uv runs with the Python that `make` was given, and never downloads one.
UV_PYTHON = --python $(PYTHON) --no-python-downloads
# uv.lock's pin of uv and the sha256 of each of its wheels, as one pip requirement line.
UV_PIN = $(PYTHON) -c 'import tomllib; (p,) = [p for p in tomllib.load(open("uv.lock", "rb"))["package"] if p["name"] == "uv"]; print("uv==" + p["version"], *("--hash=" + w["hash"] for w in p["wheels"]))'
STALE_LOCK = error: uv.lock does not match the dependencies in pyproject.toml: run `make lock`, then commit uv.lock
MISSING_LOCK = error: uv.lock is missing: it is part of the repository (git checkout -- uv.lock)
UV_ERR := .fleet/uv.err

.PHONY: setup lock synth test lint fmt typecheck unit bench wheel clean example

setup: $(PY_STAMP) $(NODE_STAMP)

uv.lock:
	@echo '$(MISSING_LOCK)' >&2; exit 2

# A virtualenv without uv in it was not made from the lock (pip left in it by an older
# Makefile would stay: uv sync keeps pip and setuptools it did not install), so it goes.
$(BOOT)/bin/uv: | uv.lock
	@rm -rf $(BOOT) $(VENV) && mkdir -p $(BOOT)
	@$(UV_PIN) > $(BOOT)/requirements.txt
	PIP_ROOT_USER_ACTION=ignore $(PYTHON) -m pip install --quiet --disable-pip-version-check \
	  --require-hashes --no-deps --only-binary :all: --target $(BOOT) -r $(BOOT)/requirements.txt

# The lock is checked offline before anything is installed; then the virtualenv is made
# exactly the lock (the project editable, with the dev extra), whatever was in it before.
$(PY_STAMP): pyproject.toml uv.lock | $(UV)
	@mkdir -p $(dir $(UV_ERR))
	@$(UV) lock --check --offline --quiet $(UV_PYTHON) 2> $(UV_ERR); case $$? in 0) ;; \
	  1) echo '$(STALE_LOCK)' >&2; exit 2;; *) cat $(UV_ERR) >&2; exit 2;; esac
	$(UV) sync --locked --extra dev --quiet $(UV_PYTHON)
	@touch $@

lock: | $(UV)
	$(UV) lock $(UV_PYTHON) $(LOCK_ARGS)

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

# The distribution (fleet-as-code) as a wheel in build/wheels/, to publish to a package index
# (built with the locked setuptools of the virtualenv).
wheel: setup
	$(UV) build --quiet --wheel --no-build-isolation --python $(BIN)/python --out-dir $(WHEELS) .

bench: setup
	$(BIN)/python benchmarks/synth_bench.py --clusters 1000

clean:
	rm -rf $(VENV) node_modules .cdk8s.out .fleet .pytest_cache .mypy_cache .ruff_cache

# The example fleet (clusters/) is a copy of the tool's fixture fleet, its one source.
example:
	rm -rf clusters && cp -r tests/fixtures/fleets/hybrid/clusters clusters && rm -rf clusters/__pycache__
