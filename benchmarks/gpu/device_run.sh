#!/bin/bash
# Build and check gtscript on a CUDA machine without network access, in one command:
#
#     OUT=/some/empty/dir bash benchmarks/gpu/device_run.sh
#
# from the root of a checkout. It
#   1. prints the machine (nvidia-smi, Python, NumPy, CuPy, NVRTC) and builds the C core in
#      place with the machine's CMake and C compiler, against its Python; without LLVM 19
#      (no llvm-config-19, no /usr/lib/llvm-19) the core is built with GTSCRIPT_LLVM=OFF
#      (numpy and cuda backends; the tests then compare the cuda backend with numpy).
#      If that build fails and build/gpu-carry/ holds a prebuilt core for this Python
#      (_core.cpython-3XY-*.so, see benchmarks/gpu/README.md), that one is used instead; where
#      the Python headers are missing, build/gpu-carry/include/python3.XY is tried;
#   2. runs the tests that need a GPU (tests/backends/cuda/test_cuda_gpu.py, the cuda storage test);
#   3. runs the cuda benchmark (benchmarks/run.py --backend cuda);
#   4. runs every stencil of the test registry on the cuda backend, NumPy and CuPy arrays,
#      against the reference backend (benchmarks/gpu/check_registry.py).
# Each step is bounded by `timeout`, and by what is left of TOTAL_LIMIT_S (default 450 s) for
# the whole run: it ends in under 8 minutes even when a step hangs (a cut step's output says
# so; the later steps still get their share). What it writes into $OUT (at most 8 files):
#   run.log        everything printed, with the machine facts and each step's exit status
#   build.log      the CMake configure and build
#   tests.txt      pytest -rA of the GPU tests (every test's outcome, failures in full)
#   registry.md    the registry check: counts, and each failing case with its largest error
#   registry.json  the same, every case
#   bench.md       the benchmark's Markdown table (GB/s, % of the device copy, CuPy columns)
#   bench.json     the benchmark's full results
# Environment: PYTHON (default python3), OUT (default ./gpu-results), TOTAL_LIMIT_S,
# GTSCRIPT_LLVM (ON/OFF: force the choice), GTSCRIPT_CACHE_DIR (default build/gpu-cache).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-results}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
T0=$(date +%s)
TOTAL=${TOTAL_LIMIT_S:-450}
step() { echo; echo "=== $* ($(( $(date +%s) - T0 )) s)"; }
# limit CAP RESERVE: CAP seconds, or less: what is left of the total minus RESERVE for the
# steps after this one (at least 20 s)
limit() {
  local left=$(( T0 + TOTAL - $(date +%s) - $2 ))
  [ $left -lt 20 ] && left=20
  [ $left -lt $1 ] && echo $left || echo $1
}
export GTSCRIPT_CACHE_DIR=${GTSCRIPT_CACHE_DIR:-$ROOT/build/gpu-cache}
status=0
note() { echo "--- $1: exit $2"; [ "$2" = 0 ] || status=1; }

main() {
step "machine"
date -u
timeout 30 nvidia-smi || echo "nvidia-smi failed"
timeout 30 nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.memory --format=csv 2>/dev/null
echo "python: $(command -v "$PY")"
timeout 60 "$PY" - <<'EOF'
import glob, os, platform, site, sys, sysconfig
print("python", platform.python_version(), sys.executable)
print("Python.h:", os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")),
      sysconfig.get_paths()["include"])
for name in ("numpy", "cupy", "torch", "pytest", "pytest_timeout", "hypothesis", "scipy", "cmake", "ninja"):
    try:
        mod = __import__(name)
        print(f"{name:<15}", getattr(mod, "__version__", "?"))
    except Exception as e:
        print(f"{name:<15} missing ({type(e).__name__}: {e})")
dirs = [d for p in site.getsitepackages() + [site.getusersitepackages()] for d in glob.glob(os.path.join(p, "nvidia", "*", "lib"))]
for d in dirs:
    for lib in glob.glob(os.path.join(d, "libnvrtc*")):
        print("nvrtc:", lib)
try:
    import cupy
    print("cupy device:", cupy.cuda.runtime.getDeviceProperties(0)["name"], "driver", cupy.cuda.runtime.driverGetVersion())
except Exception as e:
    print("cupy device: none:", e)
EOF
echo "nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo none)"
echo "CUDA_HOME=${CUDA_HOME:-} ; cmake: $(command -v cmake || echo none) ; ninja: $(command -v ninja || echo none) ; cc: $(command -v cc || command -v gcc || echo none)"
ldconfig -p 2>/dev/null | grep -E "libnvrtc|libcuda\.so" | head -5

step "build"
PYBIN=$(dirname "$(command -v "$PY")")
export PATH="$PYBIN:$PATH"  # CMake and Ninja installed into the Python environment first
LLVM=${GTSCRIPT_LLVM:-}  # ON or OFF forces it; by default ON where LLVM 19 is installed
if [ -z "$LLVM" ]; then
  LLVM=OFF
  if command -v llvm-config-19 >/dev/null || [ -d /usr/lib/llvm-19/lib/cmake/llvm ]; then LLVM=ON; fi
fi
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
PYVER=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
CARRY=$ROOT/build/gpu-carry
EXTRA=()
if ! "$PY" -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
   && [ -f "$CARRY/include/python$PYVER/Python.h" ]; then
  echo "no Python.h for $PY: using $CARRY/include/python$PYVER"
  EXTRA=(-DPython_INCLUDE_DIR="$CARRY/include/python$PYVER")
fi
echo "GTSCRIPT_LLVM=$LLVM"
rm -f gtscript/_core*.so
timeout -k 10 "$(limit 180 240)" bash -c 'cmake -S . -B build/device "$@" && cmake --build build/device -j "$(nproc)" && cmake --install build/device --prefix "$PWD"' _ \
  ${GEN[@]+"${GEN[@]}"} -DGTSCRIPT_LLVM=$LLVM -DPython_EXECUTABLE="$(command -v "$PY")" ${EXTRA[@]+"${EXTRA[@]}"} > "$OUT/build.log" 2>&1
rc=$?
note "build (log in build.log)" $rc
if [ $rc != 0 ]; then
  tail -40 "$OUT/build.log"
  TAG=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  if [ -f "$CARRY/_core$TAG" ]; then
    echo "using the prebuilt core $CARRY/_core$TAG"
    cp "$CARRY/_core$TAG" gtscript/
  fi
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}
timeout 30 "$PY" -m gtscript info
note "import gtscript" $?

step "GPU tests"
PER_TEST=()
"$PY" -c "import pytest_timeout" 2>/dev/null && PER_TEST=(--timeout=60)
timeout -k 10 "$(limit 150 220)" "$PY" -m pytest -p no:cacheprovider -o addopts="" -rA -q ${PER_TEST[@]+"${PER_TEST[@]}"} \
  tests/backends/cuda/test_cuda_gpu.py tests/api/test_storage.py::test_cuda_needs_cupy_and_gives_a_cuda_array \
  > "$OUT/tests.txt" 2>&1
note "GPU tests (tests.txt)" $?
tail -15 "$OUT/tests.txt"

step "benchmark"
timeout -k 10 "$(limit 150 90)" "$PY" benchmarks/run.py --backend cuda --all --repeat 30 --overhead-calls 20000 \
  --json "$OUT/bench.json" > "$OUT/bench.md"
note "benchmark (bench.md)" $?
cat "$OUT/bench.md"

step "registry on the GPU"
timeout -k 10 "$(limit 120 5)" "$PY" benchmarks/gpu/check_registry.py --md "$OUT/registry.md" --json "$OUT/registry.json"
note "registry check (registry.md)" $?

step "done: exit $status"
return $status
}

main 2>&1 | tee -a "$OUT/run.log"
exit "${PIPESTATUS[0]}"
