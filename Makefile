# Two commands do all set-up on a fresh Debian/Ubuntu machine with Python 3.11:
#   make run   - install what is missing, build, run examples/quickstart.py
#   make test  - install what is missing, build, run the test suite
#   make test-sanitize - a broad part of the test suite again (FULL=1: all of it), on a copy
#                        of the C core built with ASan + UBSan
# Both are idempotent and quiet when everything is already there.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
CORE_STAMP := build/.core-built
CSRC   := $(shell find csrc -name '*.c' -o -name '*.h' 2>/dev/null)

.PHONY: run test test-sanitize build bench llvm clean format

run: build
	@$(VPY) examples/quickstart.py

test: build
	@$(VPY) -m pytest -q $(PYTEST_ARGS)

# The sanitizer job (.ci/run runs it after make test): the core built with AddressSanitizer
# and UndefinedBehaviorSanitizer into build/sanitize/gtscript (its Python files are links to
# the sources, the in-place build is left alone), the tests run against it with libasan
# preloaded into Python (and so into every process the tests start; libstdc++ with it, or ASan
# cannot intercept C++ exceptions of extensions loaded later).
# What runs: SANITIZE_TESTS, the modules that drive the C core broadly (the call path and its
# hostile inputs, the analyses and their errors, cpu code generation of every construct, the
# cache and its corruption tests, the cuda generator through the emulation, the build and
# Ctrl-C hardening), and a sample of the GT4Py conformance corpus (SANITIZE_K: every test
# but the corpus's differential one, which runs for three of its twelve modules): 2,204
# tests, 10.4 minutes of CPU time (26 minutes of wall time measured on a 2-core machine
# shared with a load of 10-12; alone, about the CPU time). The whole suite under the
# sanitizers is several times that, too long for every CI run on a 2-core machine;
# `make test-sanitize FULL=1` runs all of it.
# ASan writes its reports (leaks included) to build/sanitize/reports/; UBSan's, in the
# core's own libubsan, ignore log_path and go to the process's stderr, so pytest captures
# at the Python level only (--capture=sys) and the C-level stderr goes to reports/stderr.
# The run fails on a failing test (ASan and UBSan stop the process they find an error in) and
# on any report that is an ASan or UBSan error or a leak with the core in its stack: leaks of
# the tools the tests start (the C compiler of the cuda emulation) and CPython's own
# exit-time allocations (.ci/lsan.supp) are not the core's. PYTHONMALLOC=malloc puts Python
# objects on the heap LeakSanitizer scans, so memory that live objects point to is not
# reported as leaked.
SAN_DIR   := build/sanitize
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_STAMP := $(SAN_DIR)/.core-built
SAN_LOGS  := $(CURDIR)/$(SAN_DIR)/reports
SANITIZE_TESTS ?= tests/test_call_errors.py tests/test_call_gt4py.py tests/test_stencil_object.py \
  tests/test_storage.py tests/test_harden_call_overflow.py tests/test_harden_datadim_writes.py \
  tests/test_harden_interrupt_while.py tests/test_interrupt.py tests/test_build_hardening.py \
  tests/test_frontend.py tests/test_errors_gt4py.py tests/test_frontharden_errors.py \
  tests/test_frontharden_temp_levels.py tests/test_frontharden_consteval.py \
  tests/test_parallel_model.py tests/test_region_extents.py tests/test_checked_k_writes.py \
  tests/test_column_sweeps.py tests/test_language_control.py tests/test_language_datadims.py \
  tests/test_language_runtime.py tests/test_language_vertical.py tests/test_language_regions.py \
  tests/test_language_operators.py tests/test_language_field_kinds.py \
  tests/test_interval_field_bounds.py tests/test_cache.py tests/test_cache_hardening.py \
  tests/test_cache_index.py tests/test_cuda.py tests/test_conformance_gt4py.py
SANITIZE_K ?= not test_gtscript_agrees_with_gt4py or c03_statements or c06_regions or c11
ifeq ($(FULL),1)
SAN_SELECT :=
else
SAN_SELECT := $(SANITIZE_TESTS) -k "$(SANITIZE_K)"
endif

test-sanitize: $(SAN_STAMP)
	@find $(SAN_DIR)/gtscript \( -type l -o -name '*.py' \) -delete
	@cd gtscript && find . -name '*.py' | while read -r f; do \
	  mkdir -p "$(CURDIR)/$(SAN_DIR)/gtscript/$$(dirname "$$f")"; \
	  ln -s "$(CURDIR)/gtscript/$$f" "$(CURDIR)/$(SAN_DIR)/gtscript/$$f"; done
	@rm -rf $(SAN_LOGS) && mkdir -p $(SAN_LOGS)
	@status=0; asan="$$(gcc -print-file-name=libasan.so)"; cxx="$$(gcc -print-file-name=libstdc++.so)"; \
	PYTHONMALLOC=malloc LD_PRELOAD="$$asan $$cxx" \
	  ASAN_OPTIONS=detect_leaks=1:log_path=$(SAN_LOGS)/asan \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp:print_suppressions=0:exitcode=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  PYTHONPATH=$(CURDIR)/$(SAN_DIR) $(VPY) -P -m pytest -q -p no:cacheprovider --capture=sys \
	  $(SAN_SELECT) $(PYTEST_ARGS) 2>$(SAN_LOGS)/stderr || status=$$?; \
	reports=$$(grep -l -e 'gtscript/_core\.cpython' -e ' csrc/' -e 'ERROR: AddressSanitizer' -e 'CHECK failed' -e 'runtime error' \
	  $(SAN_LOGS)/asan.* 2>/dev/null; grep -l -e 'runtime error' -e '==ERROR: ' -e 'CHECK failed' $(SAN_LOGS)/stderr); \
	if [ -n "$$reports" ]; then cat $$reports; echo "sanitizer reports:" $$reports; exit 1; fi; \
	if [ $$status -ne 0 ]; then tail -50 $(SAN_LOGS)/stderr; fi; \
	exit $$status

$(SAN_STAMP): $(STAMP) $(CSRC) setup.py
	@mkdir -p $(SAN_DIR)
	@CFLAGS="$(SAN_FLAGS)" LDFLAGS="$(SAN_FLAGS)" $(VPY) setup.py -q build_ext \
	  --build-lib $(SAN_DIR) --build-temp $(SAN_DIR)/obj >$(SAN_DIR)/core.log 2>&1 \
	  || { cat $(SAN_DIR)/core.log; exit 1; }
	@touch $@

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
