# Canopy: thin wrapper over CMake. `make run` and `make test` install what a fresh Debian lacks.
PACKAGES := cmake g++ make pkg-config libsystemc-dev libboost-dev libboost-program-options-dev \
            libgtest-dev googletest libbenchmark-dev nlohmann-json3-dev libssl-dev \
            gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libelf-dev gdb-multiarch

ifeq ($(SANITIZE),1)
  BUILD ?= build-asan
  CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Debug -DCANOPY_SANITIZE=ON -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g"
  # SystemC switches coroutine stacks under ASan's feet and keeps its kernel alive at exit.
  export ASAN_OPTIONS ?= detect_stack_use_after_return=0:detect_leaks=0
  export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
else
  BUILD ?= build
  CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Release
endif
JOBS ?= 2
RUN_ARGS ?= --vcd --trace

.PHONY: deps build run test bench clean

deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

run: build
	./$(BUILD)/canopy run $(RUN_ARGS)

test: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure --timeout 300

bench: build
	@for b in $(BUILD)/bench/bench_*; do echo "== $$b"; $$b; done

clean:
	rm -rf build build-asan out
