"""The environment variables gtscript reads, in one table (docs/configuration.md shows it),
and the check that warns about a value gtscript would not read as meant.

The C core reads most of them where it uses them (``getenv``); this table says what each one
accepts. :func:`check_environment` runs when gtscript is imported and at each build; a value
outside what the variable accepts gives one :class:`EnvironmentVariableWarning` naming the
variable and the value (once per value), instead of being ignored in silence.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["EnvironmentVariableWarning", "Variable", "VARIABLES", "build_settings",
           "check_environment"]


class EnvironmentVariableWarning(UserWarning):
    """An environment variable gtscript reads has a value it does not accept."""


@dataclass(frozen=True)
class Variable:
    name: str
    default: str
    meaning: str
    accepts: str  # what the warning says a valid value is ("" = anything)
    valid: Callable[[str], bool] | None = None  # None: not checked (a path, or not ours)


def _count(minimum: int) -> Callable[[str], bool]:
    return lambda v: v.isascii() and v.isdigit() and int(v) >= minimum


def _budget(v: str) -> bool:
    try:
        b = float(v)
    except ValueError:
        return False
    return b >= 0 and not math.isnan(b)


VARIABLES: tuple[Variable, ...] = (
    Variable("GTSCRIPT_CACHE_DIR", "$XDG_CACHE_HOME/gtscript, else ~/.cache/gtscript",
             "the disk cache's directory (docs/caching.md)", ""),
    Variable("GTSCRIPT_CACHE_MAX_BYTES", "1073741824 (1 GiB)",
             "size of the disk cache above which the least recently used entries are evicted",
             "a whole number of bytes", _count(0)),
    Variable("GTSCRIPT_CACHE_MEMORY_ENTRIES", "256",
             "stencils kept in memory (the decorator's table and the core's), least recently "
             "used dropped", "a whole number >= 0", _count(0)),
    Variable("GTSCRIPT_NUM_THREADS", "the CPUs the process may run on (at most 256)",
             "threads a cpu call may use (read at the first call; gtscript.set_num_threads "
             "and threadpoolctl change it at run time)", "a whole number >= 1",
             _count(1)),
    Variable("GTSCRIPT_TILE_SIZE", "chosen per call",
             "cpu tiles as TIxTJ points (measurements, tests; no plan tuning then); never for "
             "stencils that must run as one tile", "TIxTJ with positive whole numbers, e.g. 32x8",
             lambda v: re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*", v) is not None),
    Variable("GTSCRIPT_COLUMN_BLOCKS", "chosen per call",
             "C order column sweeps: 1 runs them in column blocks (a column-fastest scratch), "
             "0 in bundles (measurements, tests; no plan tuning then); never changes what is "
             "computed", "0 or 1",
             lambda v: v in ("0", "1")),
    Variable("GTSCRIPT_STREAMING_STORES", "chosen per call",
             "stores into the fields a stencil only writes: 1 writes them with non-temporal "
             "(streaming) stores that bypass the caches, 0 with plain stores (measurements, "
             "tests; no plan tuning then); never changes what is computed", "0 or 1",
             lambda v: v in ("0", "1")),
    Variable("GTSCRIPT_AUTOTUNE", "1",
             "1: cpu calls long enough to matter measure a few tile, column-block and "
             "streaming-store plans over their first calls on a domain and keep the fastest "
             "(docs/performance.md); 0: the model's plan only. Never changes what is computed",
             "0 or 1",
             lambda v: v in ("0", "1")),
    Variable("GTSCRIPT_AUTOTUNE_MIN_MS", "2",
             "tests only: the kernel time in ms one measurement of a plan spans (a shorter "
             "call is measured over several calls)",
             "a number of milliseconds >= 0", _budget),
    Variable("GTSCRIPT_LLVM_BUDGET", "10",
             "seconds of LLVM optimisation per build before the rest of the kernel gets the "
             "cheaper pipeline", "a number of seconds >= 0", _budget),
    Variable("GTSCRIPT_CODEGEN_LEVEL", "2",
             "LLVM code generator optimisation level (measurements)", "0, 1, 2 or 3",
             lambda v: v in ("0", "1", "2", "3")),
    Variable("GTSCRIPT_LSR", "0", "1 keeps LLVM's loop strength reduction (measurements)",
             "0 or 1", lambda v: v in ("0", "1")),
    Variable("GTSCRIPT_PART_NESTS", "16",
             "loop nests per kernel part (measurements, tests); changes how code is split, "
             "never what it computes", "a whole number >= 1", _count(1)),
    Variable("GTSCRIPT_PERF_MAP", "0",
             "1: every loaded cpu kernel's functions are appended to /tmp/perf-<pid>.map, so "
             "perf names them (docs/profiling.md)", "0 or 1", lambda v: v in ("0", "1")),
    Variable("GTSCRIPT_GDB_JIT", "0",
             "1: cpu kernels are registered through the GDB JIT interface, so gdb sees their "
             "symbols (docs/profiling.md)", "0 or 1", lambda v: v in ("0", "1")),
    Variable("GTSCRIPT_GPU_ARCH", "sm_90",
             "cuda: the architecture to compile for when no GPU is found and no gpu_arch "
             "option is given", "sm_XY or sm_XYZ, optionally with a or f (sm_90a)",
             lambda v: re.fullmatch(r"sm_[0-9]{2,3}[af]?", v) is not None),
    Variable("CUDA_HOME", "-", "cuda: a CUDA toolkit whose lib64/ or lib/ holds libnvrtc "
             "(looked in before the nvidia-cuda-nvrtc wheel)", ""),
    Variable("CUDA_PATH", "-", "cuda: as CUDA_HOME, when that is not set", ""),
    Variable("XDG_CACHE_HOME", "~/.cache", "where the disk cache goes when GTSCRIPT_CACHE_DIR "
             "is not set (absolute paths only, as the XDG specification says)", ""),
)

_warned: set[tuple[str, str]] = set()


def check_environment(environ: os._Environ[str] | dict[str, str] | None = None) -> None:
    """Warn once per (variable, value) about each value that its variable does not accept
    (an empty value means unset, as in the core)."""
    env = os.environ if environ is None else environ
    for var in VARIABLES:
        value = env.get(var.name)
        if not value or var.valid is None or var.valid(value):
            continue
        if (var.name, value) in _warned:
            continue
        _warned.add((var.name, value))
        warnings.warn(f"{var.name}={value!r} is not valid (expected {var.accepts}): gtscript "
                      f"may ignore it (default: {var.default}) or read it otherwise than "
                      f"meant; see docs/configuration.md", EnvironmentVariableWarning,
                      stacklevel=3)


#: GT4Py's ``gt4py.cartesian.config.build_settings``, with its keys and structure, so that code
#: written for GT4Py (``gt_config.build_settings["extra_compile_args"]["cxx"].append(...)``,
#: ``gt_config.build_settings["parallel_jobs"] = 4``) runs unchanged. Nothing in it has an
#: effect: gtscript compiles with LLVM and NVRTC, not with a C++ compiler, OpenMP or the
#: GridTools headers (docs/configuration.md says what to use instead).
build_settings: dict = {
    "cuda_bin_path": None,
    "cuda_include_path": None,
    "cuda_library_path": None,
    "cuda_arch": None,
    "gt_include_path": None,
    "openmp": {"use_openmp": True, "cppflags": [], "ldflags": []},
    "extra_compile_args": {"cxx": [], "cuda": []},
    "extra_link_args": [],
    "parallel_jobs": os.cpu_count() or 1,
    "cpp_template_depth": 1024,
}


def table() -> str:
    """The variables as a Markdown table (docs/configuration.md holds a copy; a test checks
    that the two agree)."""
    rows = ["| variable | default | meaning | accepts |", "| --- | --- | --- | --- |"]
    rows += [f"| `{v.name}` | {v.default} | {v.meaning} | {v.accepts or 'any value'} |"
             for v in VARIABLES]
    return "\n".join(rows)
