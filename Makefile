# todoharness — see README.md.
GO      ?= go
PKGS    := ./...
BIN     := bin/todoharness

.PHONY: all build test stress vet fmt-check unit bench tiers fuzz golden demo peers record record-mock cassette-from-log release-check actionlint clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/todoharness

# The test command of the README and of .ci/run: formatting, vet, and every
# suite but one under the race detector, one package more at once than the machine
# has CPUs, one line per package as it finishes (scripts/testrun); and, in the
# same queue, the exploration package's long explorations again without
# -race (they skip or shrink under -race, saying so: they take ten minutes
# and more there; its other tests ran under -race already, and
# scripts/testrun's TestPlainRunNamesEveryRaceDependentTest keeps this list
# whole), and the session log's allocation counts (the race detector
# allocates, so they are not asserted under it). The conformance tier runs
# without -race: its CPU is the catalogue run again and again in its
# process, 137 s under -race and 52 s without,
# and the code it runs is race-tested by its packages' own specs
# (docs/performance.md says which); make stress still runs it under -race.
# With-key specs skip (with a reason) when DEEPSEEK_API_KEY is unset and
# replay their cassettes instead.
PLAIN_RUN := ^(TestExplorationFindsEveryBreakage|TestReferenceAgreesWithTheOracle|TestPooledRunFailsWhatAProcessPerCaseFails|TestAppendEncodesTheDataOnce|TestFastDecodeTakesTheFastPath)$$
test: fmt-check vet
	$(GO) run ./scripts/testrun -race -norace ./suites/conformance/ -plain ./harness/session/ -plain ./conformance/explore/ -plain-run '$(PLAIN_RUN)' $(PKGS)

# The race-enabled suite N times, optionally beside K busy loops: the pass
# count and the slowest package (docs/performance.md). Not part of make test.
#   make stress N=5 BUSY=2 [STRESS_PKGS='./suites/conformance/ ./harness/acp/']
N     ?= 5
BUSY  ?= 0
stress:
	scripts/stress-test.sh -n $(N) -busy $(BUSY) $(STRESS_PKGS)

# -trimpath as in scripts/testrun: a fresh clone reuses the build cache.
vet:
	$(GO) vet -trimpath $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# Benchmarks: speed and memory are measured here, never asserted in tests.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# The test tiers timed with their binaries built first: wall time and peak
# RSS per tier (docs/performance.md, "Test tiers"); RACE=1 for -race.
tiers:
	scripts/tier-times.sh $(TIERS)

# Fuzzing, bounded: each target runs for FUZZTIME. Inputs the fuzzer finds
# interesting land in Go's cache ($(go env GOCACHE)/fuzz), failing ones in
# the package's testdata/fuzz/<Target>/; commit both kinds there (they run
# as seeds in every go test).
# One target per line, package:FuzzName.
FUZZTIME ?= 30s
# Minimising a new input from a large seed can otherwise take a minute of
# the budget with no executions counted; bounded by a count, not a time, so
# that a target whose inputs are slow (FuzzScenarioFolder writes a folder)
# neither spends its budget minimising nor has the budget end mid-
# minimisation ("context deadline exceeded").
FUZZMINIMIZETIME ?= 50x
FUZZ_TARGETS := \
	./harness/session:FuzzReadAndCheck \
	./harness/session:FuzzFastDecode \
	./harness/acp:FuzzLineFilter \
	./mockmodel:FuzzDecodeOpenAIChat \
	./mockmodel:FuzzDecodeOpenAIResponses \
	./mockmodel:FuzzDecodeAnthropic \
	./mockmodel:FuzzDecodeGemini \
	./conformance:FuzzLoadCase \
	./conformance:FuzzUnmarshalEvidence \
	./conformance:FuzzParseExpectedFailures \
	./conformance/explore:FuzzParseResult \
	./conformance/explore:FuzzMerge \
	./snapshot:FuzzScenarioFolder \
	./harness/llm/cassette/replay:FuzzCassette \
	./harness/llm/cassette/scrub:FuzzFragmentScan \

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg; \
	done

# Rewrite golden files; read every diff before you commit it.
golden:
	GOLDIE_UPDATE=1 $(GO) test -count=1 $(PKGS)

# The main job: the conformance catalogue against the built-in reference agent
# on the scripted mock model.
demo: build
	./$(BIN) conform --json bin/conform.json --junit bin/conform.xml --html bin/conform.html --out bin/conform-transcripts

# Opt-in, never part of make test: install the public ACP agents that have a
# conform preset (opencode-ai, @zed-industries/codex-acp + @openai/codex,
# @google/gemini-cli, @zed-industries/claude-code-acp) from the npm registry
# into .cache/peers/ and run the catalogue against each, one summary row per
# agent (also in .cache/peers/summary.md; reports and transcripts beside it).
#   make peers PEERS_FLAGS='--preset gemini --skip-install'
peers: build
	./$(BIN) peers --cache .cache/peers $(PEERS_FLAGS)

# Record the e2e cassettes (fixtures/e2e/*/cassette.yaml) against DeepSeek,
# credentials scrubbed, then rewrite the e2e goldens for review:
#   DEEPSEEK_API_KEY=… make record   (DEEPSEEK_BASE_URL, DEEPSEEK_MODEL optional)
# Without a key the e2e tier replays the committed cassettes offline.
record: build
	@if [ -z "$$DEEPSEEK_API_KEY" ]; then \
		echo "make record: DEEPSEEK_API_KEY is not set (the e2e tier replays the committed cassettes without it; make record-mock records the scripted scenarios against the local mock server)"; \
		exit 2; fi
	./$(BIN) record --all
	GOLDIE_UPDATE=1 $(GO) test -count=1 ./suites/e2e/

# Re-record the scenarios that have a mock-script.yaml against the local mock
# model server (labelled mock-server: scripted answers, not model output).
record-mock: build
	./$(BIN) record --mock --all
	GOLDIE_UPDATE=1 $(GO) test -count=1 ./suites/e2e/

# Rebuild the todo-plan cassette (real DeepSeek output) from the interop
# session log of the original implementation.
cassette-from-log: build
	./$(BIN) cassette from-log fixtures/interop/deepseek-harness/todo-plan/session.jsonl \
		fixtures/e2e/todo-plan/cassette.yaml --scenario todo-plan --real-model-output \
		--recorded-by "the original implementation against DeepSeek"

# Release tooling, pinned in tools/goreleaser and tools/actionlint: modules of their own, so neither
# GoReleaser nor actionlint is in the product's module graph. Built from the
# Go module proxy into bin/ (GoReleaser: a few minutes the first time).
bin/goreleaser: tools/goreleaser/go.mod tools/goreleaser/go.sum
	cd tools/goreleaser && $(GO) build -o ../../bin/goreleaser github.com/goreleaser/goreleaser/v2
bin/actionlint: tools/actionlint/go.mod tools/actionlint/go.sum
	cd tools/actionlint && $(GO) build -o ../../bin/actionlint github.com/rhysd/actionlint/cmd/actionlint

# goreleaser check, a snapshot release (six binaries, archives, checksums;
# nothing published) and the npm packages built from it, installed with the
# registry unreachable and run (scripts/release-check.sh, docs/releasing.md).
# Not part of make test; .ci/run runs it after.
release-check: bin/goreleaser
	scripts/release-check.sh

# The GitHub Action (action.yml) and the example workflows, linted.
actionlint: bin/actionlint
	bin/actionlint .github/workflows/*.yml docs/examples/workflows/*.yml

clean:
	rm -rf bin dist
