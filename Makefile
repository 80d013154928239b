# Two commands do all set-up on a fresh Debian/Ubuntu machine with Python 3.11:
#   make run   - install what is missing, build, run examples/quickstart.py
#   make test  - install what is missing, build, run the test suite
# Both are idempotent and quiet when everything is already there.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
CORE_STAMP := build/.core-built
CSRC   := $(shell find csrc -name '*.c' -o -name '*.h' 2>/dev/null)

.PHONY: run test build bench llvm clean format

run: build
	@$(VPY) examples/quickstart.py

test: build
	@$(VPY) -m pytest -q $(PYTEST_ARGS)

bench: build
	@$(VPY) benchmarks/run.py

build: $(CORE_STAMP)

llvm:
	@if ! command -v llvm-config-19 >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing LLVM 19 development files (apt-get install -y llvm-19-dev)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq llvm-19-dev >/dev/null; \
	  else \
	    echo "LLVM 19 is missing. Run:  sudo apt-get install -y llvm-19-dev"; exit 1; \
	  fi; \
	fi

$(VPY):
	@$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml setup.py | $(VPY) llvm
	@echo "Installing gtscript into $(VENV) (log: build/install.log)"
	@mkdir -p build
	@{ $(VPY) -m pip install --disable-pip-version-check --upgrade pip setuptools wheel numpy && \
	   $(VPY) -m pip install --disable-pip-version-check --no-build-isolation -e '.[test,mpi]'; \
	 } >build/install.log 2>&1 || { tail -40 build/install.log; exit 1; }
	@touch $@

$(CORE_STAMP): $(STAMP) $(CSRC) setup.py
	@mkdir -p build
	@$(VPY) setup.py -q build_ext --inplace >build/core.log 2>&1 || { cat build/core.log; exit 1; }
	@touch $@

clean:
	rm -rf build $(VENV) gtscript/_core*.so *.egg-info build.log

format:
	clang-format -i $$(find csrc -name '*.c' -o -name '*.h')
