# callrun's build, test and lint targets. `make ci` is what CI runs.
GO      ?= go
# VERSION, when given, is what --version prints; without it the build
# information decides (a tag, or v0.0.0-<time>-<commit> between tags).
VERSION ?=
LDFLAGS := $(if $(VERSION),-ldflags "-X main.version=$(VERSION)")
STATICCHECK_VERSION := v0.8.2
BENCHTIME ?= 1x

SHELL   := bash

.PHONY: all build install postgres browser test bench lint fmt tidy-check fuzz ci clean quickstart cross dist test-short

all: build

build:
	$(GO) build -trimpath -buildvcs=auto $(LDFLAGS) -o callrun .

install:
	$(GO) install -trimpath -buildvcs=auto $(LDFLAGS) .

# The tests of the PostgreSQL store need initdb and pg_ctl (see
# report/store/pgtest), or a server named by CALLRUN_TEST_DATABASE_URL. As
# root on Debian, install them, saying so first, without the packages
# Debian only recommends; the package's default cluster is switched off
# before it would be made (the tests start their own, and a default one
# failing to start would fail the install). Not root: say how, and fail in
# CI (where the tests must not skip), else go on (they skip).
postgres:
	@if [ -z "$$CALLRUN_TEST_DATABASE_URL" ] && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && ! command -v initdb >/dev/null; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "the PostgreSQL tests need PostgreSQL's server programs: sudo apt-get install --no-install-recommends postgresql (or set CALLRUN_TEST_DATABASE_URL)" >&2; \
	    [ -z "$$CI" ] || exit 1; exit 0; \
	  fi; \
	  echo "make: installing Debian's postgresql-common and postgresql, with what they depend on and not what they recommend (apt-get install --no-install-recommends), for the PostgreSQL tests; no default cluster is made"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql-common && \
	  sed -ri 's/^#? *create_main_cluster *=.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf && \
	  apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql; \
	fi

# The browser test of report.html drives headless Chromium: Debian's
# chromium-headless-shell (or CALLRUN_TEST_BROWSER naming another
# Chromium). As root on Debian, install it, saying so first, without the
# packages Debian only recommends (udev, upower, a notification daemon and
# what they bring) but with the one of them the screenshots want,
# fonts-liberation. Not root: say how, and fail in CI (where the test must
# not skip), else go on (it skips).
browser:
	@if [ -z "$$CALLRUN_TEST_BROWSER" ] && ! command -v chromium-headless-shell >/dev/null; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "the browser test of report.html needs headless Chromium: sudo apt-get install --no-install-recommends chromium-headless-shell fonts-liberation (or set CALLRUN_TEST_BROWSER)" >&2; \
	    [ -z "$$CI" ] || exit 1; exit 0; \
	  fi; \
	  echo "make: installing Debian's chromium-headless-shell and fonts-liberation, with what they depend on and not what they recommend (apt-get install --no-install-recommends), for the browser test of report.html"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium-headless-shell fonts-liberation; \
	fi

# Where the browser test writes its screenshots of report.html: its own
# default, named here so that make test can say where they are.
CALLRUN_SCREENSHOT_DIR ?= $(or $(TMPDIR),/tmp)/callrun-report-screenshots
export CALLRUN_SCREENSHOT_DIR

# The test command README.md gives. Race detector on, no cache. The root
# package's tests build callrun's release archives for six systems
# (TestDist), minutes on a cold build cache and a busy machine: 30 minutes
# rather than go test's 10. go test shows no output of a package that
# passes, so make says where the screenshots are, pass or fail.
test: postgres browser
	@echo "$(GO) test -race -count=1 -timeout 30m ./..."; status=0; \
	$(GO) test -race -count=1 -timeout 30m ./... || status=$$?; \
	echo "the browser test's screenshots of report.html (when it ran): $(CALLRUN_SCREENSHOT_DIR)"; \
	exit $$status

# The edit-test loop: every test but those that build the release
# archives, drive the browser, start PostgreSQL or run the docs' commands
# (-short skips them), without the race detector. make test stays the
# whole suite, the one CI runs.
test-short:
	$(GO) test -short -count=1 ./...

# Benchmarks print their numbers (rows/s, contacts/s, peak MiB, contacts
# a kill -9 leaves uncertain); none of them passes or fails on timing
# (BenchmarkCrashBound fails only if a kill breaks its bound).
# BenchmarkDispatch1M dispatches 1,000,000 contacts (3.5 to 5 minutes on 2
# cores shared with other work, most of the run; docs/performance.md has the
# figures); CALLRUN_BENCH_CONTACTS=100000 make bench for a quicker run.
# BenchmarkSuppression10M plans over a do-not-call file of 10,000,000
# numbers (CALLRUN_BENCH_SUPPRESS_NUMBERS for fewer) and prints its time,
# CPU time and peak memory. BenchmarkListen has 50 senders post 20,000
# webhook deliveries to listen (CALLRUN_BENCH_DELIVERIES for another
# count), stored in files and in PostgreSQL, and prints the deliveries
# acknowledged a second and the p99 time to acknowledge.
# BenchmarkDoNotCall10M imports 10,000,000 numbers onto the store's
# do-not-call list (files, then PostgreSQL; CALLRUN_BENCH_DNC_NUMBERS for
# fewer), then plans and runs a 100-contact campaign over it and times
# listen's first opt-out: seconds, CPU seconds and peak memory of each.
# BenchmarkListenStart starts listen on 3,000,000 past deliveries
# (CALLRUN_BENCH_PAST_DELIVERIES; about 1.1 GB of temporary files) and
# prints the seconds to its first acknowledgement and its peak memory.
# BenchmarkErase erases 10,000 people from a campaign of 1,000,000
# contacts in files (journal, call starts, deliveries, list, report;
# CALLRUN_BENCH_ERASE_CONTACTS for another size) and prints its seconds,
# CPU seconds and peak memory.
# In ./campaign, BenchmarkPlan1MRatio plans 1,000,000 rows with and
# without a do-not-call and a consent column, side by side, and prints
# the ratio; BenchmarkPlanWorkbook100k plans an .xlsx of 100,000 rows.
# The test binary's 10-minute default timeout is raised to leave room on
# a slow box (the root package's benchmarks take 20 to 40 minutes on 2
# busy cores).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -timeout 60m ./...

lint: fmt tidy-check
	$(GO) vet ./... ./.ci/dist
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./... ./.ci/dist

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt -w needed on:"; echo "$$out"; exit 1; fi

tidy-check:
	$(GO) mod tidy -diff

# Short runs of every fuzz target (seeds always run in `make test`).
fuzz:
	$(GO) test ./campaign/phone -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime 30s
	$(GO) test ./campaign/sheet -run '^$$' -fuzz '^FuzzSheetReader$$' -fuzztime 30s

# The systems callrun must build on besides this one. CI vets and builds
# for each of them but cannot run the binaries: Debian's Wine 8 lacks what
# Go 1.26's runtime needs on Windows, and there is no macOS here. The
# cross-platform code (atomic replace, file locks, paths) is tested on
# Linux; its Windows twins are compiled and vetted only. The flags are
# make dist's, so its builds find these packages in the build cache.
CROSS := windows/amd64 windows/arm64 darwin/amd64 darwin/arm64 linux/arm64

cross:
	@set -e; for t in $(CROSS); do \
	  echo "vet and build for $$t"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet ./... ./.ci/dist; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build -trimpath -o /dev/null .; \
	done

# Release archives for people without Go, one per system in .ci/dist's
# list, and SHA256SUMS, in $(DIST): make dist VERSION=v1.2.3. The same
# commit built with the same Go gives the same bytes.
DIST ?= dist
dist:
	@[ -n "$(VERSION)" ] || { echo "give the version: make dist VERSION=v1.2.3" >&2; exit 2; }
	$(GO) run ./.ci/dist -version $(VERSION) -out $(DIST)

ci: lint cross test build

# The newcomer's first command: run the example campaign against an
# in-process sandbox (nobody is phoned); its last line names report.html.
QUICKSTART := examples/quickstart/campaign.yaml
quickstart: build
	./callrun run --sandbox $(QUICKSTART)
