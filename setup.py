"""Builds the C core, gtscript._core, against NumPy and LLVM 19 (LLVM-C API only)."""
import glob
import os
import shutil
import subprocess

import numpy
from setuptools import Extension, setup


def llvm_config(*args):
    exe = os.environ.get("LLVM_CONFIG") or shutil.which("llvm-config-19") or shutil.which("llvm-config")
    if exe is None:
        raise SystemExit("llvm-config-19 not found: install LLVM 19 (apt-get install -y llvm-19-dev)")
    return subprocess.check_output([exe, *args], text=True).split()


cflags = [f for f in llvm_config("--cflags") if not f.startswith("-I")]
include_dirs = [f[2:] for f in llvm_config("--cflags") if f.startswith("-I")]
libdir = llvm_config("--libdir")[0]
warnings = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
if os.environ.get("GTSCRIPT_WERROR", "1") == "1":
    warnings.append("-Werror")

core = Extension(
    "gtscript._core",
    sources=sorted(glob.glob("csrc/**/*.c", recursive=True)),
    depends=sorted(glob.glob("csrc/**/*.h", recursive=True)),
    include_dirs=["csrc", numpy.get_include(), *include_dirs],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_20_API_VERSION")],
    extra_compile_args=["-std=c11", "-O2", "-fvisibility=hidden", *warnings, *cflags],
    library_dirs=[libdir],
    runtime_library_dirs=[libdir],
    libraries=["LLVM-19", "pthread", "dl"],
)

setup(ext_modules=[core])
