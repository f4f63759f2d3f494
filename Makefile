# todoharness — see README.md.
GO      ?= go
PKGS    := ./...
BIN     := bin/todoharness

.PHONY: all build test vet fmt-check unit bench golden demo record clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/todoharness

# The test command of the README and of .ci/run: formatting, vet, and every
# suite under the race detector. With-key specs skip (with a reason) when
# DEEPSEEK_API_KEY is unset and replay their cassettes instead.
test: fmt-check vet
	$(GO) test -race -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# Benchmarks: speed and memory are measured here, never asserted in tests.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Rewrite golden files; read every diff before you commit it.
golden:
	GOLDIE_UPDATE=1 $(GO) test -count=1 $(PKGS)

# The main job: the conformance catalogue against the built-in reference agent
# on the scripted mock model.
demo: build
	./$(BIN) log show ../shared/interop/deepseek-harness/todo-plan/session.jsonl

clean:
	rm -rf bin
