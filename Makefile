# SPDX-License-Identifier: BSD-3-Clause
# The targets users type. Everything real happens in CMake + Ninja.
PREFIX ?= $(CURDIR)/install
BUILD  ?= $(CURDIR)/build
BUILD_TYPE ?= RelWithDebInfo
NP ?= 4

.PHONY: all deps configure build install demo test bench clean status

all: install

deps:
	@maint/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	    -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null

build: configure
	@ninja -C $(BUILD) --quiet

install: build
	@ninja -C $(BUILD) install >/dev/null
	@cp $(BUILD)/STATUS.md docs/STATUS.md
	@$(BUILD)/tools/weft-info --tunables --markdown > docs/tunables.md
	@echo "weft: installed into $(PREFIX)"

demo: install
	@echo "== mpirun -n $(NP) hello (oversubscribed on $$(nproc) cores)"
	@$(PREFIX)/bin/mpirun -n $(NP) $(PREFIX)/libexec/weft/examples/hello
	@echo "== weft-bench latency and bw, 2 ranks"
	@if [ -x $(PREFIX)/bin/weft-bench ]; then \
	    $(PREFIX)/bin/weft-bench run latency -n 2 -- -m 0:4096 && \
	    $(PREFIX)/bin/weft-bench run bw -n 2 -- -m 1:1048576 ; \
	else echo "weft-bench not built yet"; fi

test: install
	@tests/run_all.sh

bench: install
	@$(PREFIX)/bin/weft-bench standard --out bench/results

status: install

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(PREFIX)
