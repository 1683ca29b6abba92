# packlab — `make test` is the one command CI runs (.ci/run); it installs what
# the tests need first.
GO      ?= go
PKGS    := ./...
GOFLAGS_TEST ?=

.PHONY: test deps unit race wasm bench vet fmt-check build clean

test: deps fmt-check vet unit race wasm bench

# deps installs what the tests need. The Go toolchain and gcc (for -race) are
# on the machine; modules come from the module proxy.
deps:
	$(GO) mod download

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -count=1 $(PKGS)

race:
	$(GO) test -count=1 -race -short $(PKGS)

# core must build for the browser.
wasm:
	GOOS=js GOARCH=wasm $(GO) build ./core/...

# Benchmarks run once each, to prove they still work; real figures come from
# `make bench-full` (see the README's performance section).
bench:
	$(GO) test -run=NONE -bench=. -benchtime=1x $(PKGS)

bench-full:
	$(GO) test -run=NONE -bench=. -benchtime=3x -count=1 ./core -large

build:
	$(GO) build -o bin/packlab .

clean:
	rm -rf bin
