# pslab: a thin wrapper over CMake.
#   make demo   a small simulated comparison of policies: a table and a plot
#   make test   install what is missing, configure, build, run every test
#   make reference   rerun the shipped specs into results/reference/ (minutes),
#                    and draw staleness_frontier's frontier (scripts/staleness-frontier.sh)
# Variables: BUILD (build dir, default build), SANITIZE=1 (ASan+UBSan build
# in build-asan), TSAN=1 (ThreadSanitizer build in build-tsan; tests read the
# suppressions in tests/tsan.supp), JOBS (parallel build jobs).

BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
ifeq ($(SANITIZE),1)
BUILD := build-asan
CMAKE_FLAGS += -DPSLAB_SANITIZE=ON
endif
ifeq ($(TSAN),1)
BUILD := build-tsan
CMAKE_FLAGS += -DPSLAB_TSAN=ON
endif

.PHONY: all deps configure build test demo bench reference clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DPSLAB_WERROR=ON $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	@$(BUILD)/pslab run experiments/specs/quickstart.json

# Each spec into a fresh directory first, which replaces the old one only when
# every run succeeded and every plot was drawn: never a half-written reference.
reference: build
	@for spec in experiments/specs/*.json; do \
	  name=$$(basename $$spec .json); new=results/reference/.$$name.new; \
	  rm -rf $$new; echo "== $$spec"; \
	  $(BUILD)/pslab run $$spec --out $$new || { rm -rf $$new; exit 1; }; \
	  rm -rf results/reference/$$name && mv $$new results/reference/$$name; \
	done
	@bash scripts/staleness-frontier.sh results/reference/staleness_frontier

bench: build
	@for b in $(BUILD)/bench/*; do echo "== $$b"; $$b || exit 1; done

clean:
	@rm -rf build build-asan build-tsan
