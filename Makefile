# The two entry points a newcomer needs (see README):
#   make run   install what running needs, build, start recoveryd on the shipped config
#   make test  install everything the tests need, build with sanitizers, run every test
BUILD      ?= build
TEST_BUILD ?= build-test
CONFIG     ?= config/recovery.yaml
JOBS       ?= $(shell nproc)

FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 10

# A skipped test fails the run: every tool a test needs is installed by
# scripts/install-deps.sh --test (tests/rd_noskip.py).
export RD_NO_SKIP := 1

.PHONY: deps-run deps-test build run test test-only fuzz tsan clean

deps-run:
	scripts/install-deps.sh --run

deps-test:
	scripts/install-deps.sh --test

build: deps-run
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRD_E2E=OFF
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/recoveryd --config $(CONFIG)

test: deps-test test-only

# Bounded fuzzing and ThreadSanitizer first, so the whole suite's summary
# is the last word.
test-only: fuzz tsan
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRD_SANITIZE=ON -DRD_E2E=ON
	cmake --build $(TEST_BUILD) -j $(JOBS)
	rm -rf $(TEST_BUILD)/junit
	cd $(TEST_BUILD) && ctest --output-on-failure -j 2; status=$$?; \
	  cd $(CURDIR) && .venv/bin/python tests/junit_summary.py $(TEST_BUILD)/junit; exit $$status

# Every libFuzzer target (clang) over its seed corpus for FUZZ_SECONDS each.
fuzz:
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DRD_FUZZ=ON -DRD_E2E=OFF -DRD_FUZZ_SECONDS=$(FUZZ_SECONDS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all
	cd $(FUZZ_BUILD) && ctest -R '^fuzz\.' --output-on-failure

# ThreadSanitizer over the store and server tests.
tsan:
	scripts/run-tsan.sh

clean:
	rm -rf $(BUILD) $(TEST_BUILD) $(FUZZ_BUILD)
