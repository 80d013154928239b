# Two commands do all set-up on a fresh Debian/Ubuntu machine with Python 3.11:
#   make run   - install what running needs (LLVM 19, a .venv with numpy and the core's build
#                tools), build the C core, run examples/quickstart.py; each step says what it
#                does and how long it took
#   make test  - the same, plus the test tools (the test, mpi, cuda, docs and wheel extras of
#                pyproject.toml, a second stamp), then the test suite
#   make test-sanitize - a broad part of the test suite again (FULL=1: all of it), on a copy
#                        of the C core built with ASan + UBSan
#   make docs  - build the documentation site into build/docs/html (Sphinx, -W: warnings fail)
# Both are idempotent and quiet when everything is already there.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
# the extras `make test` installs on top of what running needs (the docs site, the wheel and
# the cuda generator's NVRTC are tested too)
TEST_EXTRAS := test mpi cuda docs wheel
# a step's line, then its time: $(call timed,what,commands) (a comma in them: $(comma))
comma := ,
timed = t0=$$(date +%s); printf '%s ... ' "$(1)"; { $(2); } && echo "done in $$(( $$(date +%s) - t0 )) s"
CORE_STAMP := build/.core-built
CSRC   := $(shell find csrc -name '*.c' -o -name '*.h' 2>/dev/null)
# The core's build (CMakeLists.txt) with the tools of the venv (cmake, ninja from the package
# registry); development builds turn warnings into errors, a user's `pip install .` does not.
CMAKE  := PATH="$(abspath $(VENV))/bin:$$PATH" cmake
CMAKE_DEV := -G Ninja -DGTSCRIPT_WERROR=ON -DPython_EXECUTABLE="$(abspath $(VPY))"

.PHONY: run test test-sanitize test-gt4py12 build bench llvm browser static-llvm-deps clean format docs wheel wheel-test wheel-portable wheel-portable-test gt4py-upstream

run: build
	@$(VPY) examples/quickstart.py

test: build $(TEST_STAMP) browser static-llvm-deps
	@$(VPY) -m pytest -q $(PYTEST_ARGS)

# GT4Py 1.2.x needs Python 3.12: the tests that compare with GT4Py or go through its API run a
# second time there (.ci/run calls this after make test), in a second venv with GT4Py 1.2 and
# the core built for that Python (build/core312; its _core.cpython-312*.so sits beside the
# 3.11 one). Python 3.12 comes from pyenv or PATH (the first that runs) (PY312= names another).
PY312 ?= $(shell for p in $$(ls -d $(HOME)/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null) \
  $$(command -v python3.12); do $$p -c 'import sys; assert sys.version_info[:2] == (3, 12)' \
  2>/dev/null && { echo $$p; break; }; done)
V312  := .venv312
V312PY := $(V312)/bin/python
STAMP312 := $(V312)/.installed
CORE312_STAMP := build/.core312-built
GT4PY12_REQS := "gt4py>=1.2,<1.3" "numpy>=1.26" pytest hypothesis xarray ipython nvidia-cuda-nvrtc \
  'scikit-build-core>=0.10' 'cmake>=3.21' ninja
# gtscript as a GT4Py backend (the corpus through GT4Py's API, the framework test), GT4Py's
# objects in definitions, the constructs GT4Py accepts, and the call and error tests that
# compare with GT4Py; the corpus through gtscript's own API (test_conformance_gt4py.py, the
# same oracle) runs on GT4Py 1.1 only.
GT4PY12_TESTS ?= tests/compat_gt4py/test_gt4py_backend.py \
  tests/compat_gt4py/test_corpus_gt4py_api.py tests/compat_gt4py/test_framework_gt4py.py \
  tests/compat_gt4py/test_gt4py_objects.py tests/compat_gt4py/test_gt4py_accepted.py \
  tests/compat_gt4py/test_unused_arguments.py tests/compat_gt4py/test_call_gt4py.py \
  tests/compat_gt4py/test_errors_gt4py.py tests/compat_gt4py/test_field_info_gt4py_rules.py \
  tests/compat_gt4py/test_function_semantics_gt4py.py tests/compat_gt4py/test_gt4py_compat.py \
  tests/language/test_interval_bound_temporaries.py

test-gt4py12: $(CORE312_STAMP)
	@PYTHONPATH=$(CURDIR) $(V312PY) -m pytest -q -p no:cacheprovider -o addopts=-ra \
	  $(GT4PY12_TESTS) $(PYTEST_ARGS)

$(STAMP312):
	@if [ -z "$(PY312)" ]; then echo "Python 3.12 is missing (GT4Py 1.2 needs it): install it" \
	  "(pyenv install 3.12, or apt/conda) or name it with PY312=/path/to/python3.12"; exit 1; fi
	@echo "Installing GT4Py 1.2 and the test tools into $(V312) (Python 3.12; log: build/install312.log)"
	@mkdir -p build
	@{ $(PY312) -m venv $(V312) && \
	   $(V312PY) -m pip install --disable-pip-version-check $(GT4PY12_REQS); \
	 } >build/install312.log 2>&1 || { tail -40 build/install312.log; exit 1; }
	@touch $@

$(CORE312_STAMP): $(STAMP312) $(CSRC) CMakeLists.txt
	@mkdir -p build
	@{ PATH="$(abspath $(V312))/bin:$$PATH" cmake -S . -B build/core312 -G Ninja -DGTSCRIPT_WERROR=ON \
	     -DPython_EXECUTABLE="$(abspath $(V312PY))" && \
	   PATH="$(abspath $(V312))/bin:$$PATH" cmake --build build/core312 && \
	   PATH="$(abspath $(V312))/bin:$$PATH" cmake --install build/core312 --prefix $(CURDIR); \
	 } >build/core312.log 2>&1 || { cat build/core312.log; exit 1; }
	@touch $@

# The sanitizer job (.ci/run runs it after make test): the core built with AddressSanitizer
# and UndefinedBehaviorSanitizer into build/sanitize/gtscript (its Python files are links to
# the sources, the in-place build is left alone), the tests run against it with libasan
# preloaded into Python (and so into every process the tests start; libstdc++ with it, or ASan
# cannot intercept C++ exceptions of extensions loaded later).
# What runs: SANITIZE_TESTS, the modules that drive the C core broadly (the call path and its
# hostile inputs, the analyses and their errors, cpu code generation of every construct, the
# cache and its corruption tests, the measured call plans and their disk records, streaming
# stores, the cuda generator through the emulation, the build and Ctrl-C hardening), and a
# sample of the GT4Py
# conformance corpus (SANITIZE_K: every test but the corpus's differential one, which runs for
# its regions module, and but the process-pool and eight-process tests, minutes of process
# start-up under ASan), the tree fuzzer and the hardening tests of definition trees, duck
# arrays, function write-through, run-time checks, aliased calls, unused arguments and the
# cuda call path: 2,581 tests, 24 minutes on a 2-core machine running the whole suite beside
# it for half of that time (the GT4Py API tests are left out: Python and GT4Py's builds). The
# whole suite under the sanitizers is
# several times that, too long for every CI run on a 2-core machine;
# `make test-sanitize FULL=1` runs all of it.
# ASan writes its reports (leaks included) to build/sanitize/reports/; UBSan's, in the
# core's own libubsan, ignore log_path and go to the process's stderr, so pytest captures
# at the Python level only (--capture=sys) and the C-level stderr goes to reports/stderr.
# Only tests/, with --confcutdir=tests and the project's addopts replaced: the doctests of
# gtscript/ and the root conftest.py (the Markdown pages and notebooks) would put the checkout
# first on sys.path, and with it the core built without the sanitizers.
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
SANITIZE_TESTS ?= tests/call/test_call_errors.py tests/compat_gt4py/test_call_gt4py.py \
  tests/api/test_stencil_object.py tests/api/test_storage.py tests/call/test_int64_limits.py \
  tests/frontend/test_datadim_write_bounds.py tests/call/test_interrupt_while.py \
  tests/call/test_interrupt.py tests/backends/cpu/test_deep_builds.py \
  tests/frontend/test_definition_tree.py tests/compat_gt4py/test_errors_gt4py.py \
  tests/frontend/test_build_errors.py tests/analysis/test_temporary_levels.py \
  tests/frontend/test_compile_time_evaluator.py tests/analysis/test_parallel_model.py \
  tests/analysis/test_region_extents.py tests/language/test_checked_k_writes.py \
  tests/backends/cpu/test_column_sweeps.py tests/language/test_language_control.py \
  tests/language/test_language_datadims.py tests/language/test_language_runtime.py \
  tests/language/test_language_vertical.py tests/language/test_language_regions.py \
  tests/language/test_language_operators.py tests/language/test_language_field_kinds.py \
  tests/language/test_interval_field_bounds.py tests/language/test_interval_bound_temporaries.py \
  tests/analysis/test_register_temporaries.py tests/cache/test_cache.py \
  tests/cache/test_disk_cache_safety.py tests/cache/test_cache_index.py \
  tests/backends/cuda/test_cuda.py tests/backends/cuda/test_cuda_call_overhead.py \
  tests/backends/cuda/test_cuda_slab_loads.py tests/backends/cuda/test_cuda_gpu_array_checks.py \
  tests/compat_gt4py/test_conformance_gt4py.py tests/language/test_global_regions.py \
  tests/backends/cpu/test_column_blocks.py tests/fuzz/test_fuzz_calls.py \
  tests/backends/cpu/test_plan_tuning.py tests/backends/cpu/test_streaming_stores.py \
  tests/backends/cpu/test_joined_rows.py tests/call/test_duck_arrays.py \
  tests/language/test_function_writethrough.py tests/call/test_runtime_check_stops.py \
  tests/language/test_k_reads_in_array.py tests/analysis/test_tree_validation.py \
  tests/fuzz/test_fuzz_trees.py tests/cache/test_cache_repair.py \
  tests/analysis/test_aliased_calls.py tests/compat_gt4py/test_unused_arguments.py \
  tests/backends/cpu/test_threads.py tests/analysis/test_nest_registers.py \
  tests/analysis/test_levels_free_sweeps.py tests/backends/cpu/test_vector_math.py \
  tests/language/test_min_max_ties.py
SANITIZE_K ?= (not test_gtscript_agrees_with_gt4py or c06_regions) and not process_pools \
  and not eight_processes_building
ifeq ($(FULL),1)
SAN_SELECT := tests
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
	    --confcutdir=tests -o addopts=-ra \
	  $(SAN_SELECT) $(PYTEST_ARGS) 2>$(SAN_LOGS)/stderr || status=$$?; \
	reports=$$(grep -l -e 'gtscript/_core\.cpython' -e ' csrc/' -e 'ERROR: AddressSanitizer' -e 'CHECK failed' -e 'runtime error' \
	  $(SAN_LOGS)/asan.* 2>/dev/null; grep -l -e 'runtime error' -e '==ERROR: ' -e 'CHECK failed' $(SAN_LOGS)/stderr); \
	if [ -n "$$reports" ]; then cat $$reports; echo "sanitizer reports:" $$reports; exit 1; fi; \
	if [ $$status -ne 0 ]; then tail -50 $(SAN_LOGS)/stderr; fi; \
	exit $$status

$(SAN_STAMP): $(TEST_STAMP) $(CSRC) CMakeLists.txt
	@mkdir -p $(SAN_DIR)
	@{ $(CMAKE) -S . -B $(SAN_DIR)/obj $(CMAKE_DEV) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	     -DCMAKE_C_FLAGS="$(SAN_FLAGS)" -DCMAKE_MODULE_LINKER_FLAGS="$(SAN_FLAGS)" && \
	   $(CMAKE) --build $(SAN_DIR)/obj && \
	   $(CMAKE) --install $(SAN_DIR)/obj --prefix $(CURDIR)/$(SAN_DIR); \
	 } >$(SAN_DIR)/core.log 2>&1 || { cat $(SAN_DIR)/core.log; exit 1; }
	@touch $@

# The site: docs/*.md, the notebooks executed (their outputs cached in build/docs/.jupyter_cache,
# so a rebuild runs only the notebooks that changed), the API reference from the docstrings.
docs: build $(TEST_STAMP)
	@$(VPY) -m sphinx -W --keep-going -q -b html -d build/docs/doctrees docs build/docs/html
	@echo "docs: build/docs/html/index.html"

bench: build
	@$(VPY) benchmarks/run.py

build: $(CORE_STAMP)

# LLVM 19's development files: found, or installed with apt-get as root (part of the first
# install step, so a later make says nothing of it)
llvm:
	@$(LLVM_CHECK)

LLVM_CHECK = if command -v llvm-config-19 >/dev/null 2>&1; then \
    echo "LLVM 19: found ($$(llvm-config-19 --prefix))"; \
  elif [ "$$(id -u)" = 0 ]; then \
    $(call timed,LLVM 19: installing llvm-19-dev with apt-get (log: build/llvm.log),\
      mkdir -p build && { apt-get update && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y llvm-19-dev; } >build/llvm.log 2>&1 || { tail -20 build/llvm.log; exit 1; }); \
  else \
    echo "LLVM 19 is missing. Run:  sudo apt-get install -y llvm-19-dev"; exit 1; \
  fi

# The headless browser tests/docs/test_docs_browser.py reads the built site with (Selenium, from the
# test extra, drives it): Debian's Chromium and its WebDriver, installed when missing.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing Chromium for the docs' browser test (apt-get install -y chromium chromium-driver)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else \
	    echo "Chromium is missing, so the docs' browser test is skipped. Run:  sudo apt-get install -y chromium chromium-driver"; \
	  fi; \
	fi

# What the core linked to LLVM's static libraries (GTSCRIPT_LLVM_STATIC=ON, the portable
# wheel's build) needs of a Debian LLVM besides llvm-19-dev: the compression libraries its
# LLVMSupport links (tests/packaging/test_static_llvm.py builds one), installed when missing.
static-llvm-deps:
	@if [ ! -e /usr/include/zstd.h ] || [ ! -e /usr/include/zlib.h ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing zlib's and zstd's development files for the static-LLVM test (apt-get install -y zlib1g-dev libzstd-dev)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zlib1g-dev libzstd-dev >/dev/null; \
	  else \
	    echo "zlib's or zstd's development files are missing, the static-LLVM test will fail. Run:  sudo apt-get install -y zlib1g-dev libzstd-dev"; \
	  fi; \
	fi

$(VPY):
	@$(call timed,Python: creating $(VENV) with $(PYTHON) ($$($(PYTHON) -V 2>&1)),$(PYTHON) -m venv $(VENV))

# What running needs: the core's build requirements (scikit-build-core, CMake, Ninja) and
# gtscript's dependencies (numpy), and a .pth file that puts this checkout on the venv's path:
# the package runs from the sources, with the core `make build` puts next to them (an
# installed gtscript, such as an editable install of an older checkout, is removed first).
$(STAMP): pyproject.toml .ci/requirements.py | $(VPY)
	@mkdir -p build
	@$(LLVM_CHECK)
	@$(call timed,Python packages: numpy and the core's build tools into $(VENV) (log: build/install.log),\
	  { $(VPY) -m pip install --disable-pip-version-check --upgrade pip numpy \
	      'scikit-build-core>=0.10' 'cmake>=3.21' ninja && \
	    $(VPY) .ci/requirements.py >build/requirements.txt && \
	    $(VPY) -m pip install --disable-pip-version-check -r build/requirements.txt && \
	    { $(VPY) -m pip uninstall --disable-pip-version-check -y gtscript || true; } && \
	    $(VPY) -c "import pathlib; import site; pathlib.Path(site.getsitepackages()[0]$(comma) \
	      'gtscript-checkout.pth').write_text('$(CURDIR)\n')"; \
	  } >build/install.log 2>&1 || { echo; tail -40 build/install.log; exit 1; })
	@touch $@

# What the tests need on top: the extras TEST_EXTRAS (pytest, GT4Py as the oracle, mypy,
# threadpoolctl, Sphinx and the notebook runner, mpi4py and MPICH, NVRTC, auditwheel).
$(TEST_STAMP): $(STAMP) pyproject.toml .ci/requirements.py
	@$(call timed,Python packages: the test tools into $(VENV) ($(TEST_EXTRAS) extras; log: build/install-test.log),\
	  { $(VPY) .ci/requirements.py $(TEST_EXTRAS) >build/requirements-test.txt && \
	    $(VPY) -m pip install --disable-pip-version-check -r build/requirements-test.txt; \
	  } >build/install-test.log 2>&1 || { echo; tail -40 build/install-test.log; exit 1; })
	@touch $@

# The in-place core the tests use: gtscript/_core*.so, built in build/core (kept between runs,
# so only changed sources recompile; a `pip install .` never reads it).
$(CORE_STAMP): $(STAMP) $(CSRC) CMakeLists.txt
	@mkdir -p build
	@$(call timed,C core: building gtscript/_core (log: build/core.log),\
	  { $(CMAKE) -S . -B build/core $(CMAKE_DEV) && $(CMAKE) --build build/core && \
	    $(CMAKE) --install build/core --prefix $(CURDIR); \
	  } >build/core.log 2>&1 || { echo; cat build/core.log; exit 1; })
	@touch $@

# A relocatable wheel in dist/: built without build isolation by the venv's scikit-build-core
# (in a temporary build directory), then auditwheel copies libLLVM and the libraries it loads
# into gtscript.libs/ and points the core at them. Its platform tag is the oldest the build
# machine's glibc and libstdc++ allow (a manylinux_2_28 wheel needs a build on a glibc 2.28
# system, such as the manylinux_2_28 image; see CONTRIBUTING.md).
wheel: $(TEST_STAMP)
	@rm -rf build/wheel && mkdir -p build/wheel dist
	@{ $(VPY) -m pip wheel --disable-pip-version-check --no-deps --no-build-isolation \
	     -w build/wheel . && \
	   PATH="$(abspath $(VENV))/bin:$$PATH" auditwheel repair -w dist build/wheel/gtscript-*.whl; \
	 } >build/wheel.log 2>&1 || { tail -40 build/wheel.log; exit 1; }
	@ls -l dist/gtscript-*manylinux*.whl

# The package as a user gets it (slow): `pip install .` into a fresh venv, and the wheel
# installed into another one run with the system's LLVM hidden (tests_install/).
# GT4Py's backend-parametrised tests with the gtscript backends added (long; not in make test):
# GT4Py's StencilTestSuite suites, and GT4Py's own test files where GT4PY_SOURCE names a GT4Py
# source tree (its sdists ship no tests). See tests/gt4py_upstream/run_upstream.py.
gt4py-upstream: build $(TEST_STAMP)
	@$(VPY) tests/gt4py_upstream/run_upstream.py $(if $(GT4PY_SOURCE),--source $(GT4PY_SOURCE))

wheel-test: wheel
	@$(VPY) -m pytest -q -p no:cacheprovider tests_install/test_install.py $(PYTEST_ARGS)

# Wheels that install on glibc 2.28 and later (manylinux_2_28), built here without a container:
# zig as the compiler for glibc 2.28, LLVM 19 compiled from Debian's source package into static
# libraries linked into the core (packaging/portable_wheel.py says each step). Long the first
# time (LLVM: about an hour on two cores, kept in build/portable); not in CI. PORTABLE_ARGS
# passes options, e.g. PORTABLE_ARGS="--python .venv312/bin/python --python .venv/bin/python".
wheel-portable: $(TEST_STAMP)
	@PATH="$(abspath $(VENV))/bin:$$PATH" $(VPY) packaging/portable_wheel.py $(PORTABLE_ARGS)

wheel-portable-test: wheel-portable
	@$(VPY) -m pytest -q -p no:cacheprovider tests_install/test_portable_wheel.py $(PYTEST_ARGS)

clean:
	rm -rf build dist $(VENV) $(V312) gtscript/_core*.so *.egg-info build.log

format:
	clang-format -i $$(find csrc -name '*.c' -o -name '*.h')
