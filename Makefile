# planner — build, test and run targets. `make help` lists them.
GO          ?= go
BIN         ?= bin/planner
PKGS        ?= ./...
# Configs for the demo comparison: every shipped config except those built for
# another suite (tot_game24 verifies Game of 24 answers; run it with make run-game24).
RUN_CONFIGS ?= $(filter-out configs/tot_game24.yaml,$(wildcard configs/*.yaml))
GAME24      ?= ../shared/data/game24/24.csv
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: help build test unit lint fmt-check vet staticcheck run run-game24 demo bench clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/planner
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/planner

test: lint unit example ## lint, every test with the race detector, then the embedding example

.PHONY: example
example: ## build and run examples/embed, an outside module using the public Go API (package planner), and check its answer
	@out=$$(cd examples/embed && $(GO) run .) || exit 1; echo "$$out"; \
	echo "$$out" | grep -q '^answer: 1173$$' || { echo "examples/embed: expected 'answer: 1173'"; exit 1; }

unit: ## go test -race over every package
	$(GO) test -race -count=1 $(PKGS)

lint: fmt-check vet staticcheck ## gofmt, go vet and staticcheck

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

staticcheck: ## staticcheck, pinned as a tool in go.mod (no download at each run)
	$(GO) tool staticcheck $(PKGS)

run: build ## offline main job: compare every shipped paradigm on the demo suite with the SIMULATED sim model
	rm -rf out/compare # a fresh comparison; compare resumes from an existing --out folder
	$(BIN) compare --suite demo $(addprefix --config ,$(RUN_CONFIGS)) --llm sim:noisy --seed 1 --out out/compare --quiet

run-game24: build ## Game of 24 rows 900-999 (needs ../shared/data): cot vs tot vs tot_game24, SIMULATED model
	rm -rf out/game24
	$(BIN) compare --suite $(GAME24) --slice 900:1000 --config configs/cot.yaml --config configs/tot.yaml \
		--config configs/tot_game24.yaml --llm sim:noisy --seed 1 --out out/game24 --quiet

demo: build ## one traced ReAct run on the scripted model (offline)
	$(BIN) run --config configs/react.yaml --llm scripted:examples/scripts/react_demo.yaml \
		"By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?"

bench: ## run the Go benchmarks
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

clean:
	rm -rf bin out
