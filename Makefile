# Quick start: `make train` and `make test` create .venv on first use.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.polyak-installed
# pytest-xdist workers for `make test`: one per core, at most 4 (a test file stays on one worker; tests/conftest.py).
TEST_WORKERS ?= auto
# Where pip finds torch (empty: pip's own index and configuration); see the setup recipe below.
TORCH_INDEX ?=

.PHONY: setup train test test-fast lint docs clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# torch first, pinned for reproducible CI (polyak itself takes torch>=2.3,<3). PyPI's Linux wheel of torch is a
	# CUDA build; on a machine without a GPU, `make setup TORCH_INDEX=https://download.pytorch.org/whl/cpu` takes the
	# CPU build instead (where pip already finds a CPU build, as on this project's CI machines, leave it empty).
	$(PY) -m pip install -qq torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install -qq -e '.[dev,distributed,bench,bullet,onnx,docs]'
	@touch $(STAMP)

setup: $(STAMP)

train: setup
	$(VENV)/bin/polyak train

test: setup
	$(PY) -m pytest -q -n $(TEST_WORKERS) --maxprocesses 4 --dist loadgroup

test-fast: setup
	$(PY) -m pytest -q -m "not slow" -p no:cacheprovider tests/unit tests/component  # seconds; `make test` runs every tier

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks

# The documentation site, into build/site; strict: a warning (a broken link, a page not in the nav) fails it.
docs: setup
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
