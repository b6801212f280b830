# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv if needed and
# installs the project with everything it needs, the embedded backend (extra `local`) included
# (llama-cpp-python builds from source once, about 6 minutes on 2 cores, in its own rule below).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
LLAMA_STAMP := $(VENV)/.llama-stamp

# llama.cpp is built for this CPU's instruction sets but never for AMX: on machines whose CPU
# reports AMX without the kernel or hypervisor enabling its tile state, -march=native builds
# crash with a general protection fault in ldtilecfg on the first multi-token prompt (seen on
# this project's 2-core machines, docs/efficiency.md). So GGML_NATIVE is off and the x86
# extensions the CPU has are named one by one; elsewhere llama.cpp's defaults apply.
X86_FLAG = $(if $(shell grep -m1 -ow $(1) /proc/cpuinfo 2>/dev/null),-D$(2)=ON)
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	$(call X86_FLAG,bmi2,GGML_BMI2) $(call X86_FLAG,avx512f,GGML_AVX512) \
	$(call X86_FLAG,avx512vbmi,GGML_AVX512_VBMI) $(call X86_FLAG,avx512_vnni,GGML_AVX512_VNNI) \
	$(call X86_FLAG,avx512_bf16,GGML_AVX512_BF16) $(call X86_FLAG,avx_vnni,GGML_AVX_VNNI)
endif

.PHONY: setup demo test lint fuzz bench clean

# built without pip's wheel cache: a wheel cached by an earlier -march=native build would
# otherwise be reused whatever the flags
$(LLAMA_STAMP):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 \
		$(BIN)/pip install --quiet --no-cache-dir "llama-cpp-python[server]>=0.3.2,<0.4"
	touch $(LLAMA_STAMP)

# torch pinned first: a CPU build of 2.13.0 lies on this project's machines, while the distill
# extra's loose range (torch>=2.4) would otherwise fetch a CUDA build of several GB
$(STAMP): pyproject.toml $(LLAMA_STAMP)
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[dev,distill,local]"
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/evotrainer run -c configs/demo.yaml --run-dir runs/demo-$$(date +%Y%m%d-%H%M%S)

lint: setup
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/lint-imports
	$(BIN)/python -m mypy

test: lint
	$(BIN)/python -m pytest -q

# many more randomised malformed configs and JSONL files through run/eval (docs/reliability.md)
fuzz: setup
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q tests/test_fuzz.py

$(VENV)/.bench-stamp: $(STAMP)
	$(BIN)/pip install --quiet -e ".[dev,bench,local]"
	touch $@

bench: $(VENV)/.bench-stamp
	$(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
