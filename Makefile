# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv if needed and
# installs the project with everything it needs (llama-cpp-python builds from source once; pip
# caches the wheel).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup demo test lint fuzz bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/evotrainer run -c configs/demo.yaml --run-dir runs/demo-$$(date +%Y%m%d-%H%M%S)

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

test: lint
	$(BIN)/python -m pytest -q

# many more randomised malformed configs and JSONL files through run/eval (docs/reliability.md)
fuzz: setup
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q tests/test_fuzz.py

$(VENV)/.bench-stamp: $(STAMP)
	$(BIN)/pip install --quiet -e ".[dev,bench]"
	touch $@

bench: $(VENV)/.bench-stamp
	$(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
