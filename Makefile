# Canopy: thin wrapper over CMake. `make run` and `make test` install what a fresh Debian lacks.
PACKAGES := cmake g++ make pkg-config libsystemc-dev libboost-dev libboost-program-options-dev \
            libgtest-dev googletest libbenchmark-dev nlohmann-json3-dev libssl-dev \
            gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libelf-dev gdb-multiarch \
            clang libclang-rt-14-dev python3-matplotlib slurm-wlm munge dpkg-dev

# The sanitizer build is clang's, instrumented for libFuzzer too: its fuzz targets (tests/fuzz)
# link the libraries its tests do. Line tables are all a sanitizer report needs of debug info.
SANITIZE_BUILD := build-asan
ifeq ($(SANITIZE),1)
  BUILD ?= $(SANITIZE_BUILD)
  CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Debug -DCANOPY_SANITIZE=ON \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DCMAKE_C_FLAGS_DEBUG="-O1 -gline-tables-only"
  # SystemC switches coroutine stacks under ASan's feet and keeps its kernel alive at exit.
  export ASAN_OPTIONS ?= detect_stack_use_after_return=0:detect_leaks=0
  export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
else
  BUILD ?= build
  CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Release
endif
JOBS ?= 2
RUN_ARGS ?= --vcd --trace
# libFuzzer targets (tests/fuzz), in the sanitizer build: `make fuzz` runs each for FUZZ_SECONDS;
# the sanitizer test run (`make test SANITIZE=1`, which CI runs) gives each CI_FUZZ_SECONDS so
# regressions surface.
FUZZ_SECONDS ?= 60
CI_FUZZ_SECONDS ?= 20
FUZZ_TARGETS ?= $(patsubst tests/fuzz/fuzz_%.cpp,%,$(wildcard tests/fuzz/fuzz_*.cpp))

PREFIX ?= /usr/local

.PHONY: deps build run test bench fuzz fuzz-run install package clean

deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

# TARGETS: only these (default: all).
build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) $(if $(TARGETS),--target $(TARGETS)) -- --no-print-directory

run: build
	./$(BUILD)/canopy run $(RUN_ARGS)

test: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure --timeout 300
ifeq ($(SANITIZE),1)
	@$(MAKE) --no-print-directory fuzz-run FUZZ_SECONDS=$(CI_FUZZ_SECONDS)
endif

# canopy in PREFIX/bin, the SPU firmware in PREFIX/share/canopy/firmware (found from the binary),
# the headers, SDK, model libraries and CMake package (docs/sdk.md).
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The same as a Debian package, $(BUILD)/canopy_VERSION_ARCH.deb (installs under /usr).
package: build
	cd $(BUILD) && cpack -G DEB

bench: build
	@for b in $(BUILD)/bench/bench_*; do echo "== $$b"; $$b; done

# Each target runs FUZZ_SECONDS from its seed corpus (tests/fuzz/corpus/NAME, read only); what it
# learns goes to $(SANITIZE_BUILD)/fuzz/corpus/NAME, a finding to $(SANITIZE_BUILD)/fuzz/crashes/
# (and fails).
FUZZ_DIR := $(SANITIZE_BUILD)/fuzz
fuzz:
	@$(MAKE) --no-print-directory build SANITIZE=1 TARGETS="$(addprefix fuzz_,$(FUZZ_TARGETS))"
	@$(MAKE) --no-print-directory fuzz-run

fuzz-run:
	@mkdir -p $(FUZZ_DIR)/crashes
	@export ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 CANOPY_FUZZ_ARTIFACTS=$(FUZZ_DIR)/crashes; \
	for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t; \
	  ./$(SANITIZE_BUILD)/tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
	    -timeout=20 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crashes/$$t- \
	    $(FUZZ_DIR)/corpus/$$t tests/fuzz/corpus/$$t >$(FUZZ_DIR)/fuzz_$$t.log 2>&1 \
	  || { tail -40 $(FUZZ_DIR)/fuzz_$$t.log; echo "fuzz_$$t: FOUND A CRASH (above)"; exit 1; }; \
	  echo "fuzz_$$t: $$(grep -h '^stat::number_of_executed_units' $(FUZZ_DIR)/fuzz_$$t.log \
	    | awk '{print $$2}') inputs in $(FUZZ_SECONDS) s, no finding"; \
	done

clean:
	rm -rf build $(SANITIZE_BUILD) build-fuzz out
