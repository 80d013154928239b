"""gtscript's build log: the ``gtscript`` logger of the standard :mod:`logging` module.

Each build says its phases with their times, where its code came from (the decorator's memory
table, the disk index, the core's memory cache, the disk cache and its directory, or a fresh
compilation) and the build's choices (LLVM functions, how many got the cheaper optimisation
pipeline because the build went over its budget). Records are DEBUG records; a stencil built
with ``verbose=True`` logs its build at INFO, and prints it on stderr when logging is not
configured::

    import logging
    logging.basicConfig(level=logging.DEBUG)      # every build, or:
    logging.getLogger("gtscript").setLevel(logging.DEBUG)
"""

from __future__ import annotations

import logging
import sys
from typing import Any

logger = logging.getLogger("gtscript")
logger.addHandler(logging.NullHandler())  # a library logs; the application decides where to

_verbose_handler: logging.Handler | None = None

#: build_info's phases, in pipeline order, and the names the log gives them
_PHASES = (("frontend_time", "frontend"), ("analysis_time", "analysis"),
           ("llvm_ir_time", "llvm-ir"), ("optimise_time", "optimise"),
           ("object_time", "object"), ("load_time", "load"))

_SOURCES = {
    "pre-key": "the decorator's memory table (same definition, externals and options)",
    "memory": "the core's memory cache",
    "build": "a fresh compilation",
}


def wants(verbose: bool) -> bool:
    """Whether a build's record would go anywhere (the facts cost a dict to gather)."""
    return logger.isEnabledFor(logging.INFO if verbose else logging.DEBUG)


def _show_verbose() -> None:
    """verbose=True and logging not configured: the records go to stderr (once set up)."""
    global _verbose_handler
    if _verbose_handler is not None or logging.getLogger().handlers \
            or any(not isinstance(h, logging.NullHandler) for h in logger.handlers):
        return
    _verbose_handler = logging.StreamHandler(sys.stderr)
    _verbose_handler.setFormatter(logging.Formatter("gtscript: %(message)s"))
    logger.addHandler(_verbose_handler)
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)


def build(name: str, info: dict[str, Any], cache_dir: str, verbose: bool) -> None:
    """Log one build: ``info`` is the build_info dict gtscript.stencil filled."""
    if verbose:
        _show_verbose()
    level = logging.INFO if verbose else logging.DEBUG
    if not logger.isEnabledFor(level):
        return
    source = info["module_source"]
    where = f"the disk cache in {cache_dir}" if source == "disk" else _SOURCES.get(source, source)
    key = (info.get("cache_key") or "")[:16]
    if source == "pre-key":
        logger.log(level, "%s (%s): %.2f ms, from %s", name, info["backend"],
                   1e3 * info["build_time"], where)
        return
    phases = ", ".join(f"{label} {1e3 * info[k]:.1f}" for k, label in _PHASES if info.get(k))
    index = ("the disk index gave the definition tree (frontend skipped)"
             if info.get("index") == "hit" else "disk index miss: frontend ran")
    logger.log(level, "%s (%s): built in %.1f ms (%s ms); code from %s; %s; key %s",
               name, info["backend"], 1e3 * info["build_time"], phases or "-", where, index,
               key or "-")
    if source == "build" and info.get("llvm_functions"):
        cheap = info.get("llvm_cheap_functions", 0)
        logger.log(level, "%s (%s): %d LLVM function(s)%s", name, info["backend"],
                   info["llvm_functions"],
                   f", {cheap} optimised with the cheaper pipeline (over the optimisation "
                   f"budget, GTSCRIPT_LLVM_BUDGET)" if cheap else ", all fully optimised")
