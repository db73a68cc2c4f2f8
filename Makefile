# The two entry points a newcomer needs (see README):
#   make run   install dependencies, build, start recoveryd on the shipped config
#   make test  install dependencies, build with sanitizers, run every test
BUILD      ?= build
TEST_BUILD ?= build-test
CONFIG     ?= config/recovery.yaml
JOBS       ?= $(shell nproc)

.PHONY: deps build run test test-only clean

deps:
	scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRD_E2E=OFF
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/recoveryd --config $(CONFIG)

test: deps test-only

test-only:
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRD_SANITIZE=ON -DRD_E2E=ON
	cmake --build $(TEST_BUILD) -j $(JOBS)
	cd $(TEST_BUILD) && ctest --output-on-failure -j 2

clean:
	rm -rf $(BUILD) $(TEST_BUILD)
