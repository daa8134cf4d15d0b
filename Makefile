# planner — build, test and run targets. `make help` lists them.
GO          ?= go
BIN         ?= bin/planner
PKGS        ?= ./...
# Configs for the demo comparison: every shipped config except those built for
# another suite (tot_game24 verifies Game of 24 answers; run it with make run-game24;
# react_fever and react_hotpotqa are paper-faithful ReAct over a Wikipedia page dump).
RUN_CONFIGS ?= $(filter-out configs/tot_game24.yaml configs/react_fever.yaml configs/react_hotpotqa.yaml configs/got.yaml,$(wildcard configs/*.yaml))
GAME24      ?= ../shared/data/game24/24.csv
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: help build test unit test-all integration-deps lint fmt-check vet staticcheck staticcheck-bin run run-game24 demo bench clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/planner
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/planner

# make test runs in three steps. Every go command in them builds with the race
# detector (RACE) and the integration suites' build tag (TAGS), the mode the
# tests need, so the standard library, each dependency and each package is
# compiled once and go vet, staticcheck and the tests all reuse that one build:
#   1. at once: gofmt; building the staticcheck binary pinned in go.mod; go vet,
#      which fetches the modules and compiles everything; and
#      scripts/integration-deps.sh, which finds or installs what the
#      integration suites need (npm's MCP filesystem server, Chromium, the
#      Temporal CLI) and fails, naming what is missing and how to get it,
#      when it cannot;
#   2. at once: staticcheck and the tests, integration suites included
#      (-count=1: every test runs each time);
#   3. the embedding example;
# then it says which integration suites ran (scripts/integration-report.sh)
# and fails if one did not.
# The integration suites are the tests built only with -tags integration:
# they need npm, Chromium or a Temporal dev server, and fail (never skip)
# without them. make unit runs every other test, for quick local work.
# The README's Development section gives the timings of a first and a later run.
RACE        ?= -race
TAGS        ?= integration
# What scripts/integration-deps.sh found (sourced before the tests) and the
# log in which the integration suites' harnesses note each run.
INTEGRATION_ENV ?= out/integration/env
INTEGRATION_LOG ?= out/integration/ran.tsv

test: ## lint, every test (the integration suites included) with the race detector, the embedding example, and which integration suites ran
	@echo "make test 1/3: gofmt, go vet (fetches modules and compiles everything once), staticcheck's binary, the integration suites' binaries"
	@$(MAKE) --no-print-directory -j4 fmt-check staticcheck-bin vet integration-deps
	@echo "make test 2/3: staticcheck and go test $(RACE) -tags $(TAGS) -count=1, at once"
	@rm -f $(INTEGRATION_LOG); . "$(abspath $(INTEGRATION_ENV))" && \
	PLANNER_INTEGRATION_LOG="$(abspath $(INTEGRATION_LOG))" $(MAKE) --no-print-directory -j2 staticcheck test-all || \
	{ scripts/integration-report.sh $(INTEGRATION_LOG); exit 1; }
	@echo "make test 3/3: the embedding example"
	@GOFLAGS="$$GOFLAGS $(RACE)" $(MAKE) --no-print-directory example
	@scripts/integration-report.sh $(if $(filter ./...,$(PKGS)),--require-all) $(INTEGRATION_LOG)

.PHONY: example
example: ## build and run examples/embed (the full set) and examples/embed/minimal (only what it names), outside modules using the public Go API, and check their answers
	@out=$$(cd examples/embed && $(GO) run .) || exit 1; echo "$$out"; \
	echo "$$out" | grep -q '^answer: 1173$$' || { echo "examples/embed: expected 'answer: 1173'"; exit 1; }
	@out=$$(cd examples/embed/minimal && $(GO) run .) || exit 1; echo "$$out"; \
	echo "$$out" | grep -q '^answer: 1173$$' || { echo "examples/embed/minimal: expected 'answer: 1173'"; exit 1; }

unit: ## go test -race over every package, without the integration suites (no npm, Chromium or Temporal needed)
	$(GO) test $(RACE) -count=1 $(PKGS)

# test-all needs the integration suites' binaries named in the environment
# (PLANNER_MCP_FILESYSTEM_BIN, PLANNER_CHROMIUM, PLANNER_TEMPORAL_BIN);
# make test sets them from scripts/integration-deps.sh.
test-all: ## go test -race -tags integration over every package: the unit tests and the integration suites
	$(GO) test $(RACE) -tags $(TAGS) -count=1 $(PKGS)

integration-deps: ## find or install what the integration suites need (scripts/integration-deps.sh; writes out/integration/env)
	@scripts/integration-deps.sh $(INTEGRATION_ENV)

lint: fmt-check vet staticcheck ## gofmt, go vet and staticcheck

fmt-check:
	@out=$$(gofmt -l $$( (git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go') | \
		while read -r f; do [ -f "$$f" ] && echo "$$f"; done)); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

# vet and staticcheck type-check against the $(RACE) build the tests use,
# with the integration suites' files (-tags $(TAGS)).
vet:
	$(GO) vet $(RACE) -tags $(TAGS) $(PKGS)

staticcheck: ## staticcheck, pinned as a tool in go.mod (no download at each run), integration suites included
	@sc=$$($(GO) tool -n staticcheck) && echo "staticcheck -tags $(TAGS) $(PKGS)" && GOFLAGS="$$GOFLAGS $(RACE)" "$$sc" -tags $(TAGS) $(PKGS)

# staticcheck-bin builds the staticcheck binary into the build cache (go tool -n
# builds it and prints its path without running it).
staticcheck-bin:
	@$(GO) tool -n staticcheck >/dev/null

# The autopilot's held-out check (docs/autopilot.md): the fixed paradigms on the
# odd tasks of the mixed suite, a policy fitted on them, then the fixed paradigms,
# the learned autopilot and the cascade on the even tasks, each compared with the
# best fixed one.
AUTOPILOT_FIXED ?= direct cot cot_sc tot rewoo react plan_execute

run: build ## offline main job: compare every shipped paradigm on the demo suite (3 repeats), got on the sorting suite, and the autopilot on the mixed suite's held-out half, with the SIMULATED sim model (reports in out/compare/demo, out/compare/sorting and out/autopilot)
	rm -rf out/compare/demo # a fresh comparison; compare resumes from an existing run folder
	$(BIN) compare --suite demo $(addprefix --config ,$(RUN_CONFIGS)) --llm sim:noisy --seed 1 --repeats 3 --out out/compare/demo --quiet
	rm -rf out/compare/sorting # Graph of Thoughts against one attempt on the built-in sorting suite
	$(BIN) compare --suite sorting --config configs/got.yaml --config examples/pipelines/sort_io.yaml --llm sim:noisy --seed 1 --out out/compare/sorting --quiet
	rm -rf out/autopilot # the autopilot: fit on the odd half of the mixed suite, evaluate on the even half
	$(BIN) compare --suite mixed --tasks odd $(foreach c,$(AUTOPILOT_FIXED),--config configs/$(c).yaml) --llm sim:perfect --repeats 3 --out out/autopilot/fit --quiet > /dev/null
	$(BIN) autopilot fit out/autopilot/fit --suite mixed --tasks odd --cost-weight 0.1 -o out/autopilot/policy.json
	PLANNER_AUTOPILOT_POLICY=$(abspath out/autopilot/policy.json) $(BIN) compare --suite mixed --tasks even $(foreach c,$(AUTOPILOT_FIXED),--config configs/$(c).yaml) \
		--config examples/pipelines/autopilot_learned.yaml --config configs/autopilot.yaml --baseline best --llm sim:perfect --repeats 3 --out out/autopilot/eval --quiet

run-game24: build ## Game of 24 rows 900-999 (needs ../shared/data): cot vs tot vs tot_game24, SIMULATED model
	rm -rf out/game24
	$(BIN) compare --suite $(GAME24) --slice 900:1000 --config configs/cot.yaml --config configs/tot.yaml \
		--config configs/tot_game24.yaml --llm sim:noisy --seed 1 --out out/game24 --quiet

demo: build ## one traced ReAct run on the scripted model (offline)
	$(BIN) run --config configs/react.yaml --llm scripted:examples/scripts/react_demo.yaml \
		"By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?"

# make bench (about 3–5 minutes on 2 cores) runs, each into out/bench/*.txt:
#   1. the micro-benchmarks of every package that has some, but eval/compare,
#      briefly (BENCHTIME);
#   2. eval/compare's CPU per run: react and plan_execute on the demo suite
#      (200 tasks, zero-latency sim), process user+sys CPU and allocations
#      per run, 5 times each (take the median);
#   3. 1,000 runs at concurrency 1,000 against a 100 ms sim (efficiency-%:
#      ideal over actual wall time), 5 times each;
#   4. one zero-latency comparison of 1,000 tasks x 6 configs (runs/s, peak heap);
# then prints the cpu-ms/run and efficiency-% lines again.
BENCHTIME   ?= 200ms
BENCH_OUT   ?= out/bench

bench: ## run the benchmarks (see the comment above; results in out/bench)
	@mkdir -p $(BENCH_OUT)
	@bench() { out=$$1; shift; echo "go test $$*"; \
		$(GO) test -run='^$$' "$$@" >$(BENCH_OUT)/$$out.txt 2>&1; st=$$?; cat $(BENCH_OUT)/$$out.txt; return $$st; }; \
	bench micro -bench=. -benchmem -benchtime=$(BENCHTIME) $$(grep -rl --include='*_test.go' '^func Benchmark' . | \
		xargs -n1 dirname | sort -u | grep -v -e '^./eval/compare$$' -e '^./examples/') && \
	bench cpu -bench='^BenchmarkCPUPerRun$$' -benchtime=10x -count=5 ./eval/compare/ && \
	bench concurrent -bench='^BenchmarkCompareConcurrentLatency$$' -benchtime=1x -count=5 ./eval/compare/ && \
	bench zero -bench='^BenchmarkCompareZeroLatency$$' -benchmem -benchtime=1x ./eval/compare/ && \
	echo && echo "CPU per run (user+sys, GC included), then efficiency at 1,000 concurrent runs; take the medians:" && \
	grep -h -e 'cpu-ms/run' -e 'efficiency-%' $(BENCH_OUT)/cpu.txt $(BENCH_OUT)/concurrent.txt

clean:
	rm -rf bin out
