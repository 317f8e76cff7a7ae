# cairn: the two commands that matter are `make run` and `make test` (see README.md).
JOBS      ?= $(shell nproc)
RELEASE   := build/release
TESTBUILD := build/test
BENCHDIR  := build/bench
FUZZDIR   := build/fuzz
TSANDIR   := build/tsan
# `make fuzz`: seconds each target runs, and which targets (empty: all; see tests/fuzz/README.md).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
FUZZ_SEED ?=
FUZZ_RUNS ?=
WERROR    ?= $(if $(CI),ON,OFF)
# A Node.js newer than the system's, when scripts/install-deps had to fetch one (see there).
export PATH := $(CURDIR)/build/node/bin:$(PATH)

.PHONY: run test tsan bench fuzz deps deps-runtime deps-bench build build-test build-tsan build-fuzz clean format

# Each entry point installs only what it needs (scripts/install-deps runtime|test|bench).
deps-runtime:
	@scripts/install-deps runtime

deps:
	@scripts/install-deps test

deps-bench:
	@scripts/install-deps bench

$(RELEASE)/build.ninja: | deps-runtime
	cmake -S . -B $(RELEASE) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAIRN_BUILD_TESTS=OFF -DCAIRN_WERROR=$(WERROR)

build: deps-runtime $(RELEASE)/build.ninja
	cmake --build $(RELEASE) -j $(JOBS) --target cairn

# Builds the release binary and serves the API on 127.0.0.1:8081 with data in ./cairn-data.
run: build
	$(RELEASE)/src/app/cairn serve

$(TESTBUILD)/build.ninja: | deps
	cmake -S . -B $(TESTBUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCAIRN_SANITIZE=ON -DCAIRN_WERROR=$(WERROR)

build-test: deps $(TESTBUILD)/build.ninja
	cmake --build $(TESTBUILD) -j $(JOBS)

# Builds with AddressSanitizer + UBSan and runs every unit and end-to-end test.
test: build-test
	cd $(TESTBUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 300

# ThreadSanitizer: the suites where threads meet (tests/tsan/README.md says which and why), in a
# build of their own; the e2e suites run the TSan build of the cairn binary. Fails on any report.
TSAN_SUITES ?= $(shell cat tests/tsan/suites)

$(TSANDIR)/build.ninja: | deps
	cmake -S . -B $(TSANDIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCAIRN_TSAN=ON -DCAIRN_WERROR=$(WERROR)

build-tsan: deps $(TSANDIR)/build.ninja
	cmake --build $(TSANDIR) -j $(JOBS) --target cairn $(TSAN_SUITES)

tsan: build-tsan
	tests/tsan/run.sh $(TSANDIR) $(JOBS) $(TSAN_SUITES)

# The libFuzzer targets of tests/fuzz: clang with ASan and UBSan, only the libraries they link.
$(FUZZDIR)/build.ninja: | deps
	cmake -S . -B $(FUZZDIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-16 -DCAIRN_FUZZ=ON \
	  -DCAIRN_BUILD_TESTS=OFF -DCAIRN_WERROR=$(WERROR)

build-fuzz: deps $(FUZZDIR)/build.ninja
	cmake --build $(FUZZDIR) -j $(JOBS)

# Builds the fuzz targets and runs each for FUZZ_SECONDS on its corpus; fails on any crash.
# FUZZ_SEED and FUZZ_RUNS make the run repeatable (tests/fuzz/run.sh).
fuzz: build-fuzz
	FUZZ_SEED=$(FUZZ_SEED) FUZZ_RUNS=$(FUZZ_RUNS) tests/fuzz/run.sh $(FUZZDIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

$(BENCHDIR)/build.ninja: | deps-bench
	cmake -S . -B $(BENCHDIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAIRN_BUILD_TESTS=OFF -DCAIRN_BUILD_BENCH=ON

# Runs the benchmarks against same-run baselines (see docs/performance.md): the HTTP API against
# raw SQLite and GET /health, then event streaming against nats-server, the tool round trip (and
# with 1,000 tools and 500 webhooks against with the built-ins only),
# agents against LangGraph JS, the sessions facade against the bare agent path, CEL evaluation
# against cel-js, workflows against LangGraph JS, nested agents (an orchestrator and 8
# sub-agents) against LangGraph JS, the dashboard's live tail against a bare SSE client, MCP
# tool calls against the MCP SDK's own client, search (the vector index against an exact
# scan, full-text latency, writes with search on against off), and 1, 2 and 3 processes on
# PostgreSQL against one on SQLite.
bench: deps-bench $(BENCHDIR)/build.ninja
	cmake --build $(BENCHDIR) -j $(JOBS)
	bench/run.sh $(BENCHDIR)
	bench/sse/run.sh $(BENCHDIR)
	bench/tools/run.sh $(BENCHDIR)
	bench/executors/run.sh $(BENCHDIR)
	bench/agents/run.sh $(BENCHDIR)
	bench/sessions/run.sh $(BENCHDIR)
	bench/cel/run.sh $(BENCHDIR)
	bench/workflows/run.sh $(BENCHDIR)
	bench/ui/run.sh $(BENCHDIR)
	bench/nested/run.sh $(BENCHDIR)
	bench/auth/run.sh $(BENCHDIR)
	bench/mcp/run.sh $(BENCHDIR)
	bench/search/run.sh $(BENCHDIR)
	bench/cluster/run.sh $(BENCHDIR)

clean:
	rm -rf build
