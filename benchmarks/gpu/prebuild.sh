#!/bin/bash
# Prebuild, on this machine, a core without LLVM for another machine's Python (same CPU
# architecture, a glibc at least as new as this one's), and copy that Python's headers next to
# it, into build/gpu-carry/: the fallbacks of benchmarks/gpu/device_run.sh where the other
# machine cannot build the core itself (no Python.h there, or a failing compiler).
#
#     PYTHON=/path/to/python3.12 bash benchmarks/gpu/prebuild.sh
#
# PYTHON must be the same minor version as the other machine's and have NumPy 2 installed
# (a NumPy 2 core runs with any later NumPy 2). Needs CMake and a C compiler here.
set -eu
cd "$(dirname "$0")/../.."
PY=${PYTHON:?set PYTHON to the interpreter to build for}
PATH="$(dirname "$(command -v "$PY")"):$PATH"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
rm -rf build/gpu-prebuild build/gpu-carry
cmake -S . -B build/gpu-prebuild "${GEN[@]}" -DGTSCRIPT_LLVM=OFF -DPython_EXECUTABLE="$(command -v "$PY")" > build/gpu-prebuild.log
cmake --build build/gpu-prebuild >> build/gpu-prebuild.log
mkdir -p build/gpu-carry/include
cp build/gpu-prebuild/_core*.so build/gpu-carry/
INC=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
cp -r "$INC" build/gpu-carry/include/
ls -l build/gpu-carry build/gpu-carry/include
du -sh build/gpu-carry
