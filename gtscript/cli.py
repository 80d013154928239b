"""The command line: ``python -m gtscript COMMAND``.

    python -m gtscript cache info|clear|path     the on-disk module cache
    python -m gtscript show FILE.py:NAME [--ir|--llvm|--cuda] [--backend B]
                                                 what gtscript makes of a stencil
    python -m gtscript bench [ARGS...]           benchmarks/run.py (ARGS are its own), or,
                                                 without a checkout, the built-in benchmark
    python -m gtscript info [--json]             versions, LLVM, NVRTC, CPU, cache, threads
    python -m gtscript --version                 gtscript's version
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

from ._version import __version__
from .errors import GTScriptSyntaxError

#: The benchmark script, found next to the package in a source checkout.
BENCH_SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "run.py"


class CommandError(Exception):
    """A user mistake: printed as ``gtscript: <message>``, exit status 2."""


# ==================================================================================== cache

def _cache_module():
    try:
        return importlib.import_module("gtscript.cache")
    except ModuleNotFoundError as exc:
        if exc.name != "gtscript.cache":
            raise
        raise CommandError("this build of gtscript has no on-disk cache (gtscript.cache)") from None


#: Keys of ``gtscript.cache.info()`` that count this process's activity.
_PROCESS_COUNTERS = {"memory_entries", "hits", "memory_hits", "disk_hits", "misses",
                     "invalid_entries", "stores"}


def _format_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("KiB", "MiB"):
        size /= 1024
        if size < 1024:
            return f"{size:.1f} {unit}"
    return f"{size / 1024:.1f} GiB"


def cmd_cache(args) -> int:
    cache = _cache_module()
    if args.action == "path":
        print(cache.path())
    elif args.action == "info":
        info = cache.info()
        if isinstance(info, dict):
            # a fresh process has loaded nothing: only the disk's numbers say anything here
            info = {k: v for k, v in info.items() if k not in _PROCESS_COUNTERS}
            width = max(map(len, info), default=0)
            for key, value in info.items():
                text = _format_size(value) if "bytes" in key and isinstance(value, int) else value
                print(f"{key:<{width}}  {text}")
        else:
            print(info)
    else:
        removed = cache.clear()
        print(f"cleared {cache.path()}" + ("" if removed is None else f": {removed} entries removed"))
    return 0


# ===================================================================================== show

def _load_file(path: Path):
    """Import ``path`` as a fresh module (its folder first on sys.path, as for a script),
    so that ``inspect`` finds the definitions' source."""
    if not path.is_file():
        raise CommandError(f"no such file: {path}")
    name = f"_gtscript_show_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CommandError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.resolve().parent))
    return module


def _find(module, name: str | None, path: Path):
    from .stencil import Stencil

    stencils = sorted(k for k, v in vars(module).items() if isinstance(v, Stencil))
    if name is None:
        if len(stencils) == 1:
            return getattr(module, stencils[0])
        raise CommandError(f"name the stencil: {path}:NAME (stencils in the file: "
                           f"{', '.join(stencils) or 'none'})")
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise CommandError(f"{path} has no {name!r} (stencils in the file: "
                               f"{', '.join(stencils) or 'none'})")
        obj = getattr(obj, part)
    return obj


def _stencil_for(obj, backend: str | None, name: str):
    """A stencil of ``backend`` (default: the object's own, cpu for a plain function)."""
    from .frontend import GTSCRIPT_FUNCTION_ATTR
    from .stencil import BACKENDS, Stencil, stencil

    if backend is not None and backend not in BACKENDS:
        raise CommandError(f"the {backend} backend is not available in this build "
                           f"(available: {', '.join(BACKENDS)})")
    if isinstance(obj, Stencil):
        if backend is None or backend == obj.build_info["backend"]:
            return obj
        definition, externals, options = obj.definition, obj.externals, obj.options
    elif hasattr(obj, GTSCRIPT_FUNCTION_ATTR):
        raise CommandError(f"{name} is a @gtscript.function; only stencils can be shown")
    elif callable(obj):
        definition, externals, options = obj, None, {}
    else:
        raise CommandError(f"{name} is a {type(obj).__name__}, not a stencil or a definition")
    backend = backend or "cpu"
    try:
        return stencil(backend, definition, externals=externals, **options)
    except RuntimeError as exc:  # a backend whose compiler or driver is missing here
        raise CommandError(f"the {backend} backend is not available here: {exc}") from None


def _summary(st) -> str:
    info = st.build_info
    lines = [st.signature, f"  backend  {info['backend']}"]
    if info.get("cache_key"):
        lines.append(f"  key      {info['cache_key']}")
    lines += [f"  halo     {st.halo}", f"  built in {1e3 * info['build_time']:.1f} ms "
              f"({info['module_source']})", "  fields:"]
    for field, fi in st.field_info.items():
        lines.append(f"    {field:<12} {fi['intent']:<6} {fi['dtype']:<8} {fi['axes']:<4} "
                     f"extent {fi['extent']}")
    return "\n".join(lines)


def cmd_show(args) -> int:
    file_part, sep, name = args.target.rpartition(":")
    if not sep or not file_part.endswith(".py"):
        file_part, name = args.target, None
    path = Path(file_part)
    obj = _find(_load_file(path), name or None, path)
    label = name or getattr(obj, "__name__", "stencil")
    backend = {"llvm": "cpu", "cuda": "cuda"}.get(args.what, args.backend)
    st = _stencil_for(obj, backend, label)
    if args.what == "summary":
        print(_summary(st))
        print()
        print(st.ir())
    elif args.what == "ir":
        print(st.ir())
    else:
        print(st.source())
    return 0


# ==================================================================================== bench

class ProgressLine:
    """Passes a child's log lines through to ``stream`` and, once the work has taken
    ``delay`` seconds, keeps a status line under them (rewritten in place with ``\\r``,
    erased at the end): elapsed time and how many log lines have arrived."""

    SPINNER = "|/-\\"

    def __init__(self, stream, label: str, show: bool = True, delay: float = 3.0,
                 interval: float = 0.2):
        self.stream, self.label, self.show = stream, label, show
        self.delay, self.interval = delay, interval
        self.lines = 0
        self._status = ""                 # what the status line shows now ("" = nothing)
        self._lock = threading.Lock()
        self._start = time.perf_counter()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        if self.show:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        with self._lock:
            self._erase()
            self.stream.flush()

    def write(self, text: str) -> None:
        """Write a log line above the status line."""
        with self._lock:
            status = self._status
            self._erase()
            self.stream.write(text)
            self.lines += text.count("\n")
            if status:
                self._draw(status[-1])
            self.stream.flush()

    def status(self, spin: str = "") -> str:
        elapsed = time.perf_counter() - self._start
        return f"{self.label}: running {elapsed:.0f} s, progress lines: {self.lines} {spin}".rstrip()

    def _erase(self) -> None:
        if self._status:
            self.stream.write("\r" + " " * len(self._status) + "\r")
            self._status = ""

    def _draw(self, spin: str) -> None:
        previous = len(self._status)
        self._status = self.status(spin)
        self.stream.write("\r" + self._status.ljust(previous))

    def _run(self) -> None:
        if self._done.wait(self.delay):
            return
        for spin in itertools.cycle(self.SPINNER):
            with self._lock:
                self._draw(spin)
                self.stream.flush()
            if self._done.wait(self.interval):
                return


def cmd_bench(args, rest: list[str]) -> int:
    """Run the benchmark script in a child process (its stdout goes straight to ours; its
    stderr, where it logs progress, through the progress line): the checkout's
    benchmarks/run.py, or, where it is absent (an installed gtscript), the package's small
    built-in benchmark (gtscript/_bench.py)."""
    if args.script is not None:  # named on purpose: that script or an error
        script = Path(args.script)
        if not script.is_file():
            raise CommandError(f"the benchmark suite is not installed here ({script} is "
                               f"missing; it comes with a source checkout)")
        command = [sys.executable, str(script), *rest]
    elif BENCH_SCRIPT.is_file():
        command = [sys.executable, str(BENCH_SCRIPT), *rest]
    else:
        print(f"gtscript bench: {BENCH_SCRIPT} is not here (the full suite comes with a source "
              f"checkout): running the built-in benchmark", file=sys.stderr, flush=True)
        command = [sys.executable, "-m", "gtscript._bench", *rest]
        # the child imports this very gtscript, wherever the parent found it
        package_dir = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (package_dir, os.environ.get("PYTHONPATH")) if p)}
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    sys.stdout.flush()
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, bufsize=1,
                            env=env if command[1] == "-m" else None)
    assert proc.stderr is not None  # stderr=PIPE
    try:
        with ProgressLine(sys.stderr, "gtscript bench", show=show) as progress:
            for line in proc.stderr:
                progress.write(line)
        return proc.wait()
    finally:
        if proc.poll() is None:  # interrupted: do not leave the child running
            proc.terminate()
            proc.wait()


# ===================================================================================== info

def cmd_info(args) -> int:
    from . import sysinfo

    facts = sysinfo.info()
    print(json.dumps(facts, indent=2) if args.json else sysinfo.format_info(facts))
    return 0


# ===================================================================================== main

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m gtscript", description="gtscript tools")
    parser.add_argument("--version", action="version", version=f"gtscript {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    cache = commands.add_parser("cache", help="the on-disk module cache",
                                description="Inspect or clear the on-disk module cache.")
    cache.add_argument("action", choices=["info", "clear", "path"])

    show = commands.add_parser("show", help="print a stencil's summary, IR or generated code",
                               description="Import FILE.py and print what gtscript makes of "
                                           "the stencil (or definition) NAME in it.")
    show.add_argument("target", metavar="FILE.py:NAME")
    what = show.add_mutually_exclusive_group()
    what.set_defaults(what="summary")
    what.add_argument("--ir", dest="what", action="store_const", const="ir",
                      help="the analysed IR only")
    what.add_argument("--llvm", dest="what", action="store_const", const="llvm",
                      help="the LLVM IR of the cpu backend")
    what.add_argument("--cuda", dest="what", action="store_const", const="cuda",
                      help="the CUDA C of the cuda backend")
    show.add_argument("--backend", help="build for this backend (default: the stencil's own)")

    bench = commands.add_parser("bench", help="run the benchmark suite (benchmarks/run.py)",
                                description="Run benchmarks/run.py; other arguments "
                                            "(--repeat, --sizes, --json ...) are passed to it. "
                                            "Without a source checkout (an installed "
                                            "gtscript), run the built-in benchmark instead: a "
                                            "few stencils against NumPy (--sizes, --repeat, "
                                            "--backend, --stencils, --json).")
    bench.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="show the progress line even when stderr is not a terminal")
    bench.add_argument("--no-progress", dest="progress", action="store_false")
    bench.add_argument("--script", default=None, help=argparse.SUPPRESS)

    info = commands.add_parser("info", help="versions, LLVM, NVRTC, CPU target, cache, threads",
                               description="Print what this installation is and finds: "
                                           "gtscript, Python, NumPy and LLVM versions, NVRTC "
                                           "(found or not), the CPU target and its features, "
                                           "the cache directory and the threads a call uses.")
    info.add_argument("--json", action="store_true", help="as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    r"""``python -m gtscript``: run the command in ``argv`` (default: ``sys.argv[1:]``) and
    return its exit status (0: done, 1: a GTScript error in the stencil's file, 2: a usage or
    command error). See docs/cli.md for the commands.

    Examples
    --------
    >>> import os, tempfile
    >>> from gtscript.cli import main
    >>> saved = os.environ.get("GTSCRIPT_CACHE_DIR")
    >>> private = tempfile.TemporaryDirectory()
    >>> os.environ["GTSCRIPT_CACHE_DIR"] = private.name
    >>> main(["cache", "path"]) == 0              # doctest: +ELLIPSIS
    /...
    True
    >>> with open("stencils.py", "w") as f:
    ...     _ = f.write(
    ...         "import numpy as np\n"
    ...         "from gtscript import PARALLEL, Field, computation, interval\n"
    ...         "def copy(inp: Field[np.float64], out: Field[np.float64]):\n"
    ...         "    with computation(PARALLEL), interval(...):\n"
    ...         "        out = inp\n")
    >>> main(["show", "stencils.py:copy", "--ir"])   # doctest: +ELLIPSIS
    stencil copy(inp: Field float64, out: Field float64)
    ...
    0
    >>> if saved is None:
    ...     del os.environ["GTSCRIPT_CACHE_DIR"]
    ... else:
    ...     os.environ["GTSCRIPT_CACHE_DIR"] = saved
    >>> private.cleanup()
    """
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and args.command != "bench":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        if args.command == "cache":
            return cmd_cache(args)
        if args.command == "show":
            return cmd_show(args)
        if args.command == "info":
            return cmd_info(args)
        return cmd_bench(args, rest)
    except CommandError as exc:
        print(f"gtscript: {exc}", file=sys.stderr)
        return 2
    except GTScriptSyntaxError as exc:  # file, line, source line and caret; no traceback
        sys.stderr.write("".join(traceback.format_exception_only(exc)))
        return 1
