# Parallax: `make` builds in place under build/; `make demo`, `make test`, `make bench`.
PREFIX ?= /usr/local
PYTHON ?= python3
BUILD := $(CURDIR)/build
CARGO ?= $(shell command -v cargo 2>/dev/null || echo $(HOME)/.cargo/bin/cargo)
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: all deps runtime viewer engine wrappers java python demo test test-runtime test-sanitizers \
        test-engine test-e2e test-python python-manylinux bench fuzz install clean

all: runtime viewer engine wrappers java

deps:
	@scripts/install-deps.sh

runtime:
	@cmake -S runtime -B $(BUILD)/runtime -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@ninja -C $(BUILD)/runtime --quiet
	@mkdir -p $(BUILD)/lib $(BUILD)/include
	@# new files, never written over: a process running with the old library keeps it mapped
	@cp --remove-destination $(BUILD)/runtime/libplx.so $(BUILD)/lib/
	@cp --remove-destination $(BUILD)/runtime/libplx-mpi*.so $(BUILD)/runtime/libplx-par*.so \
	  $(BUILD)/lib/ 2>/dev/null || true
	@cp runtime/include/plx.h $(BUILD)/include/

# the viewer's bundle, embedded into plx by plx-view's build.rs
VIEWER_SRC := $(wildcard viewer/src/*.ts) viewer/package.json viewer/tsconfig.json
viewer: viewer/dist/viewer.js

viewer/node_modules/.package-lock.json: viewer/package-lock.json
	@cd viewer && npm ci --no-audit --no-fund --loglevel=error

viewer/dist/viewer.js: viewer/node_modules/.package-lock.json $(VIEWER_SRC)
	@cd viewer && npx tsc --noEmit -p . && npx esbuild src/main.ts --bundle --minify --target=es2020 \
	  --log-level=warning --outfile=dist/viewer.js

engine: viewer
	@cd engine && $(CARGO) build --release --quiet
	@mkdir -p $(BUILD)/bin
	@cp engine/target/release/plx $(BUILD)/bin/plx.new && mv -f $(BUILD)/bin/plx.new $(BUILD)/bin/plx
	@rm -rf $(BUILD)/share.new && $(BUILD)/bin/plx generate $(BUILD)/share.new && \
	  rm -rf $(BUILD)/share && mv $(BUILD)/share.new $(BUILD)/share

wrappers:
	@mkdir -p $(BUILD)/bin
	@sed -e 's/@COMPILER_VAR@/PLX_CC/' -e 's/@DEFAULT@/cc/' scripts/plx-cc.in > $(BUILD)/bin/plx-cc
	@sed -e 's/@COMPILER_VAR@/PLX_CXX/' -e 's/@DEFAULT@/c++/' scripts/plx-cc.in > $(BUILD)/bin/plx-c++
	@sed -e 's/@COMPILER_VAR@/PLX_MPICC/' -e 's/@DEFAULT@/mpicc/' scripts/plx-cc.in > $(BUILD)/bin/plx-mpicc
	@chmod +x $(BUILD)/bin/plx-cc $(BUILD)/bin/plx-c++ $(BUILD)/bin/plx-mpicc

# plx-agent.jar and parallax-api.jar (Maven; offline when the local repository has everything:
# that try's messages, on standard output, are dropped, the online build's shown).
# the shaded agent jar is removed first: Maven rebuilds no jar whose classes did not change and
# shades the old jar again, keeping the ASM it held (a new asm.version would not reach it)
java:
	@if command -v mvn >/dev/null && command -v javac >/dev/null; then \
	  cd java && rm -f agent/target/*.jar && { mvn -q -B -o package >/dev/null 2>&1 || mvn -q -B package; } && \
	  mkdir -p $(BUILD)/lib $(BUILD)/bin && cp --remove-destination agent/target/plx-agent.jar api/target/parallax-api.jar $(BUILD)/lib/ && \
	  cp ../scripts/plx-mpj.in $(BUILD)/bin/plx-mpj && chmod +x $(BUILD)/bin/plx-mpj; \
	else echo "make: no mvn/javac: the Java agent is not built"; fi

# the parallax Python package's wheel in build/wheels/: the native module (engine/crates/plx-python,
# built in the engine's target directory: only that crate is compiled after `make engine`), the
# python/ sources, and the plx command (installed on PATH with the wheel). A wheel for this
# machine (tag linux: plx links the system's OTF2 library). The module is also put into
# python/parallax/, so that python/ on sys.path imports this tree's package.
python: engine
	@rm -rf $(BUILD)/python-data $(BUILD)/wheels && mkdir -p $(BUILD)/python-data/scripts
	@strip -o $(BUILD)/python-data/scripts/plx $(BUILD)/bin/plx
	@cd python && python3 -m maturin build --release --strip --compatibility linux --quiet -o $(BUILD)/wheels
	@cd python/parallax && unzip -q -o -j $(BUILD)/wheels/parallax_hpc-*.whl parallax/_native.abi3.so

demo: deps all
	@scripts/demo.sh

# the same wheel made a manylinux one (build/wheels/manylinux/): auditwheel (scripts/deps) copies
# the shared libraries plx and the native module link beyond the manylinux set (libotf2...) into
# the wheel and points both at them; the tag is the oldest glibc the symbols they use allow
python-manylinux: python
	@rm -rf $(BUILD)/wheels/manylinux
	@$(PYTHON) -m auditwheel repair -w $(BUILD)/wheels/manylinux $(BUILD)/wheels/parallax_hpc-*.whl

test: deps all test-runtime test-sanitizers test-engine test-e2e test-python
	@echo "make test: all suites passed"

# Many tests measure real programs whose timing the scheduler decides (a wait's length, a share of
# samples); on a loaded machine one of them can miss its bound. A failed test runs once more, and
# the second result counts: the summary names every test that needed it (pytest's `R` lines,
# ctest's repeat), so a test failing now and then stays visible.
PYTEST := python3 -m pytest -q -rfER --reruns 1
CTEST := ctest --output-on-failure --repeat until-pass:2

test-runtime:
	@$(CTEST) --test-dir $(BUILD)/runtime

test-sanitizers:
	@cmake -S runtime -B $(BUILD)/asan -G Ninja -DPLX_SANITIZE=address -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@ninja -C $(BUILD)/asan --quiet
	@$(CTEST) --test-dir $(BUILD)/asan
	@cmake -S runtime -B $(BUILD)/tsan -G Ninja -DPLX_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@ninja -C $(BUILD)/tsan --quiet
	@$(CTEST) --test-dir $(BUILD)/tsan -L threads

test-engine:
	@cd engine && $(CARGO) fmt --all -- --check
	@cd engine && $(CARGO) clippy --quiet --workspace --all-targets -- -D warnings
	@cd engine && $(CARGO) test --quiet

test-e2e: viewer python
	@$(PYTEST) tests/e2e
	@$(PYTEST) tests/exports

# the Python package from its wheel in a fresh virtual environment (its own run: the conftests of
# tests/exports and tests/python are loaded apart)
test-python: python
	@$(PYTEST) tests/python

bench: deps all
	@bench/run.sh

# the mutation fuzzer of the reading commands at length (make test runs 240 cases)
fuzz: all
	@bench/fuzz.sh

# installs what `make` built under build/ (it builds nothing: run `make` first, as yourself)
install:
	@test -x $(BUILD)/bin/plx -a -d $(BUILD)/share/man/man1 || \
	  { echo "make install: nothing built under $(BUILD): run make first" >&2; exit 2; }
	install -d $(PREFIX)/bin $(PREFIX)/lib $(PREFIX)/include $(PREFIX)/share/man/man1 \
	  $(PREFIX)/share/bash-completion/completions $(PREFIX)/share/zsh/site-functions \
	  $(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(BUILD)/bin/plx $(BUILD)/bin/plx-cc $(BUILD)/bin/plx-c++ $(BUILD)/bin/plx-mpicc $(PREFIX)/bin/
	install -m 755 $(BUILD)/lib/libplx*.so $(PREFIX)/lib/
	if [ -f $(BUILD)/lib/plx-agent.jar ]; then install -m 644 $(BUILD)/lib/*.jar $(PREFIX)/lib/ && \
	  install -m 755 $(BUILD)/bin/plx-mpj $(PREFIX)/bin/; fi
	install -m 644 runtime/include/plx.h $(PREFIX)/include/
	install -m 644 $(BUILD)/share/man/man1/*.1 $(PREFIX)/share/man/man1/
	install -m 644 $(BUILD)/share/bash-completion/completions/plx $(PREFIX)/share/bash-completion/completions/
	install -m 644 $(BUILD)/share/zsh/site-functions/_plx $(PREFIX)/share/zsh/site-functions/
	install -m 644 $(BUILD)/share/fish/vendor_completions.d/plx.fish $(PREFIX)/share/fish/vendor_completions.d/
	@# the parallax Python package, when `make python` built its wheel: into PREFIX's site-packages
	@# ($(PYTHON) -m pip install --prefix: PREFIX/lib/pythonX.Y/site-packages), its plx the one above
	@set -e; whl=$$(ls $(BUILD)/wheels/parallax_hpc-*.whl 2>/dev/null || true); \
	if [ -n "$$whl" ]; then \
	  $(PYTHON) -m pip install -q --no-deps --no-index --force-reinstall --prefix $(PREFIX) $$whl; \
	  install -m 755 $(BUILD)/bin/plx $(PREFIX)/bin/; \
	  echo "make install: the parallax package is in $$($(PYTHON) -c 'import sysconfig, sys; print(sysconfig.get_path("purelib", vars={"base": sys.argv[1], "platbase": sys.argv[1]}))' $(PREFIX))"; \
	else echo "make install: no wheel in $(BUILD)/wheels: the Python package is not installed (make python)"; fi

clean:
	rm -rf $(BUILD) engine/target
