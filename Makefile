# The two commands of the README, and the rest of the developer loop.
#   make demo    install what is missing, build the CLI, run the example, print the verdict and
#                where its report.html is
#   make test    install what is missing, build (warnings are errors), run every test with CTest
#   make bench   Release build of the benchmarks; prints one BENCH line per figure at the end
#   make asan    the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make fuzz    the libFuzzer targets (clang, build-fuzz/), each run FUZZ_SECONDS (default 60)
#   make format  clang-format every source file
#   make package the Debian package: $(BUILD)/fieldproof_<version>_amd64.deb (CPack DEB)

BUILD   ?= build
JOBS    ?= $(shell nproc)
CTEST_ARGS ?=

FUZZ_SECONDS ?= 60

.PHONY: all deps configure build test demo bench asan fuzz format package clean

all: build

deps:
	@bash scripts/install-deps.sh

# -g1 (line tables: backtraces and perf still name file and line) instead of -g: a third less
# compile time for make test on CI's two cores, measured on tests/scenario/scenario_test.cpp
# (14.2 s -> 9.9 s); the test executables' own files are at -O1 (cmake/fieldproof.cmake).
RELWITHDEBINFO_FLAGS ?= -O2 -g1 -DNDEBUG

configure: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFIELDPROOF_WERROR=ON \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(RELWITHDEBINFO_FLAGS)" \
	  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$(RELWITHDEBINFO_FLAGS)"

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Only what the demo runs: the fieldproof executable, which brings the reference stack's plugin
# and program (no tests, no benchmarks).
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target fieldproof
	@bash scripts/demo.sh $(BUILD)

bench: deps
	cmake --preset release >/dev/null
	cmake --build build-release -j $(JOBS)
	@bash scripts/run-bench.sh build-release

asan: deps
	cmake --preset asan >/dev/null
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Only the four fuzz targets and what they reach are compiled (tests/fuzz/CMakeLists.txt); CTest's
# label `fuzz` then runs each for FUZZ_SECONDS under ASan + UBSan, and the corpus replay.
fuzz: deps
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DFIELDPROOF_FUZZ=ON \
	  -DFIELDPROOF_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target fuzz_targets fuzz_driver_test
	cd build-fuzz && ctest --output-on-failure -L fuzz $(CTEST_ARGS)

# Everything the install rules name is built first (the whole tree, as for make test).
package: build
	cd $(BUILD) && cpack -G DEB
	@ls $(BUILD)/fieldproof_*_amd64.deb

format:
	git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' | xargs -r clang-format -i

clean:
	rm -rf build build-debug build-release build-asan build-fuzz
