# packlab — `make test` is the one command CI runs (.ci/run); it installs what
# the tests need first.
GO      ?= go
PKGS    := ./...
# GOTESTFLAGS is added to the go test stages' flags (make test passes -v to
# count the tests; `make unit GOTESTFLAGS=-v` by hand).
GOTESTFLAGS ?=

.PHONY: test deps unit race wasm ports bench bench-once vet fmt-check build clean

# test: every stage in order, each printing one line when it ends (with its
# time, and the tests it passed), a line every 20 s while it runs, its
# output in build/logs/stage-NAME.log (shown when it fails), and the tests
# added up at the end (build/test.sh, build/stage.sh). Then bin/packlab is
# there too.
TEST_STAGES := deps deps-desktop deps-web refs chdb fmt-check vet build unit race wasm ports bench-once test-desktop test-web
test:
	@bash build/test.sh $(TEST_STAGES)

# deps installs what the tests need. The Go toolchain and gcc (for -race) are
# on the machine; modules come from the module proxy.
deps:
	$(GO) mod download

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# With bin/packlab-refs built (make refs, which make test runs first), the
# tests of the C++ reference maps must pass; without it they skip.
REFS_TEST_ENV = $(if $(wildcard bin/packlab-refs),PACKLAB_REFS_WORKER=$(CURDIR)/bin/packlab-refs) \
	$(if $(wildcard bin/packlab-ch),PACKLAB_CH_WORKER=$(CURDIR)/bin/packlab-ch)

# go test runs two packages at a time (2 cores) in the order given, a
# package named twice once: the slowest first (ClickHouse's fidelity test,
# the command line's plans), so that the stage does not end on one of them
# running alone (in one clean-clone run their 301 and 229 s started after
# most of the rest; experiments/server's real servers take about a minute
# and a half).
TEST_PKGS := ./experiments/chdriver ./app/cli ./experiments/server ./core ./experiments $(PKGS)

unit:
	$(REFS_TEST_ENV) $(GO) test -count=1 -timeout 20m $(GOTESTFLAGS) $(TEST_PKGS)

race:
	$(REFS_TEST_ENV) $(GO) test -count=1 -timeout 20m -race -short $(GOTESTFLAGS) $(TEST_PKGS)

# core must build for the browser.
wasm:
	GOOS=js GOARCH=wasm $(GO) build ./core/...

# core must build and vet where this machine cannot run it: big-endian with
# no unaligned loads (mips64: bytes_portable.go, compact_endian_big.go,
# prefetch_other.go), 32-bit addresses (386, arm: mmap2), s390x's mmap
# (its arguments in memory), macOS's slabs (darwin) and the Go heap's
# (windows). Then every test of core runs as a 32-bit program (linux/386),
# where the kernel runs those: slabs are real mappings there too (mmap2), an
# 8-byte integer is 4-aligned in a struct, so a padded <UInt64,UInt16> cell
# is 12 bytes, and Predict follows (types.go's wordAlign); only the tests of
# ClickHouse's x86-64 figures skip (need64BitCells).
PORTS = linux/mips64 linux/386 linux/arm linux/s390x darwin/arm64 windows/amd64
# Two ports at a time (each vet of core is one process on one core: 3m09s
# one after the other after a change to core, on this 2-core machine).
ports:
	@printf '%s\n' $(PORTS) | xargs -P 2 -I{} sh -c 'p={}; GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./core || { echo "core does not build for $$p"; exit 255; }'
	@if GOARCH=386 $(GO) test -count=1 -run '^$$' ./core >/dev/null 2>&1; then \
	  GOARCH=386 $(GO) test -count=1 $(GOTESTFLAGS) ./core; \
	else echo "ports: this kernel does not run 32-bit programs: core's tests as linux/386 skipped"; fi

# bench prints the benchmarks' table (three runs each of core's, with the
# large sizes: docs/performance.md). make test runs every benchmark once
# (bench-once), to prove they still work, and shows no table.
bench: bench-full

bench-once:
	$(GO) test -run=NONE -bench=. -benchtime=1x $(PKGS)

bench-full:
	$(GO) test -run=NONE -bench=. -benchtime=3x -count=1 ./core -large

# build: bin/packlab, the command line (no window, no site inside). The
# window build is bin/packlab-desktop (make desktop), the one with the site
# inside bin/packlab-web (make web-binary): one name per kind of binary, and
# `packlab version` says what each has.
build:
	$(GO) build -o bin/packlab .

clean:
	rm -rf bin

# ---- the desktop lab (Wails v2 over GTK 3 and WebKitGTK 4.1) ----
DESKTOP_TAGS := desktop,production,webkit2_41
DESKTOP_DEBS := build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev xvfb xauth imagemagick

.PHONY: lab desktop deps-desktop test-desktop

# deps-desktop installs the Debian packages the desktop build and its test
# need, with sudo when not root; it installs only what is missing, prints
# one line (what, how long, where apt's output went: build/logs/) and shows
# apt's output only when it fails (build/install-debs.sh).
deps-desktop:
	@bash build/install-debs.sh deps-desktop $(DESKTOP_DEBS)

# desktop builds bin/packlab-desktop: the lab window, and the whole CLI.
desktop: deps-desktop
	$(GO) build -tags $(DESKTOP_TAGS) -o bin/packlab-desktop .

# lab: the README's first command — install what is missing, build (the
# window and the C++ reference maps), open.
lab: desktop refs
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		echo "lab: no display (DISPLAY is not set); bin/packlab-desktop is built: run it on a desktop"; exit 1; fi
	./bin/packlab-desktop

# test-desktop builds the app, drives it under Xvfb through a comparison
# run, checks the window's screenshot, and with SCREENSHOT=docs/desktop.png
# saves it as the README's picture.
SCREENSHOT ?=
test-desktop: deps-desktop
	$(REFS_TEST_ENV) PACKLAB_DESKTOP_TEST=1 PACKLAB_SCREENSHOT=$(SCREENSHOT) $(GO) test -count=1 -timeout 20m -run '^TestDesktopSmoke$$' -v ./app

# ---- the browser lab (the core in WebAssembly, in a Web Worker) ----
WEB_DIR ?= build/web
WEB_SCREENSHOT ?=

.PHONY: web web-binary deps-web test-web

# web builds the static site folder (index.html, the frontend, packlab.wasm,
# wasm_exec.js, ECharts, gzip copies) that any static host can serve;
# `packlab serve` builds it by itself when it is missing or stale.
web:
	$(GO) run . serve --build --dir $(WEB_DIR)

# deps-web installs Chromium (the end-to-end test's browser) and Node (the
# js/wasm unit tests' runtime) when their commands are missing, as quietly
# as deps-desktop.
deps-web:
	@bash build/install-debs.sh deps-web chromium=chromium nodejs=node

# test-web: everything the browser build needs builds for js/wasm, the
# binding's tests run under Node, and the end-to-end test drives the lab in
# headless Chromium against `packlab serve` on 127.0.0.1 (first paint and
# the 1e6-row browser/native ratio are in its log). With
# WEB_SCREENSHOT=docs/browser.png it saves the README's picture.
test-web: deps-web
	GOOS=js GOARCH=wasm $(GO) build ./core/... ./experiments/... ./app ./app/browser ./cmd/packlab-wasm
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec "$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" -run JS $(GOTESTFLAGS) ./app/browser
	PACKLAB_WEB_TEST=1 PACKLAB_SCREENSHOT=$(WEB_SCREENSHOT) $(GO) test -count=1 -timeout 15m -run '^(TestBrowserLab|TestEmbeddedSite|TestChartsFitTheirBox|TestBrowserStringKey)$$' -v ./web

# web-binary builds bin/packlab-web with the site inside (tag embedweb):
# `bin/packlab-web serve` then needs no site folder and no Go toolchain.
web-binary: web
	$(GO) build -tags embedweb -o bin/packlab-web .

# ---- the C++ reference maps (reference/, built into bin/packlab-refs) ----
# boost::unordered_flat_map needs Boost 1.81 (Debian 12's libboost-dev is 1.74).
REFS_DEBS     := g++=g++ pkg-config=pkg-config libboost1.81-dev libabsl-dev libsparsehash-dev libtsl-hopscotch-map-dev
REFS_CXX      ?= g++
REFS_CXXFLAGS ?= -O2 -DNDEBUG -std=c++17 -Wall -Wextra
REFS_OBJ      := $(patsubst reference/%.cpp,bin/refs-obj/%.o,$(wildcard reference/*.cpp))

.PHONY: refs deps-refs

# deps-refs installs the C++ libraries and compiler when any is missing, as
# quietly as deps-desktop (build/install-debs.sh).
deps-refs:
	@bash build/install-debs.sh deps-refs $(REFS_DEBS)

# refs builds bin/packlab-refs, the worker the lab runs the reference maps
# in: one object per map, two compilers at once, about two minutes of
# CPU. The Go build does not need it.
refs: deps-refs
	@$(MAKE) --no-print-directory -s -j2 bin/packlab-refs

bin/packlab-refs: $(REFS_OBJ)
	@echo "refs: linking $@"
	@$(REFS_CXX) -o $@ $(REFS_OBJ) $$(pkg-config --libs absl_flat_hash_map)

bin/refs-obj/%.o: reference/%.cpp $(wildcard reference/*.h)
	@mkdir -p $(@D)
	@echo "refs: compiling $<"
	@$(REFS_CXX) $(REFS_CXXFLAGS) -c $< -o $@

# ---- ClickHouse itself (chDB's libchdb.so, built into bin/packlab-ch) ----
# The library is ClickHouse as a shared library, published as an npm
# package: fetched on demand (npm pack, the tarball's sha256 checked) into
# build/chdb/VERSION/, never into git. bin/packlab-ch (reference/chdb/) links
# it and finds it again through its run path. The Go build and the browser
# lab need none of it.
CHDB_VERSION := 26.7.3-stable.1
CHDB_PKG     := @chdb/lib-linux-x64-gnu@$(CHDB_VERSION)
CHDB_SHA256  := c0d32b129e988f2b9a9a31c9141aecf5e1e2453f9a079efc4d36ab8e3f92b2ad
CHDB_DIR     := build/chdb/$(CHDB_VERSION)
CHSERVER_CC  ?= gcc

.PHONY: chdb
chdb: deps-refs
	@bash build/fetch-chdb.sh $(CHDB_DIR) $(CHDB_PKG) $(CHDB_SHA256)
	@$(MAKE) --no-print-directory -s bin/packlab-ch bin/packlab-chserver

bin/packlab-ch: reference/chdb/worker.cpp reference/chdb/chdb.h bin/refs-obj/plumbing.o $(wildcard reference/*.h) $(CHDB_DIR)/libchdb.so
	@echo "chdb: building $@ (ClickHouse $(CHDB_VERSION))"
	@$(REFS_CXX) $(REFS_CXXFLAGS) -o $@ reference/chdb/worker.cpp bin/refs-obj/plumbing.o \
		-L$(CHDB_DIR) -lchdb -pthread -Wl,-rpath,'$$ORIGIN/../$(CHDB_DIR)' -Wl,-rpath,$(CURDIR)/$(CHDB_DIR)

# bin/packlab-chserver (reference/chdb/server.c) is a ClickHouse server from
# the same library, for the tests of packlab inspect (experiments/server):
# clickhouse-local listening on 127.0.0.1 until it is killed.
bin/packlab-chserver: reference/chdb/server.c $(CHDB_DIR)/libchdb.so
	@echo "chdb: building $@ (a test server, ClickHouse $(CHDB_VERSION))"
	@mkdir -p $(@D)
	@$(CHSERVER_CC) -O2 -Wall -Wextra -o $@ reference/chdb/server.c \
		-L$(CHDB_DIR) -lchdb -Wl,-rpath,'$$ORIGIN/../$(CHDB_DIR)' -Wl,-rpath,$(CURDIR)/$(CHDB_DIR)
