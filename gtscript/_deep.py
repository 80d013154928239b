"""Running a recursive walk over a deep tree without RecursionError or a stack overflow.

The frontend and the numpy backend recurse over expressions; a 1,000-term sum, 1,000 nested
unary operators or a chain of 800 gtscript functions nest deeper than Python's default
recursion limit (1,000).  ``run_deep`` runs such a walk on a thread of its own with a large
stack and a recursion limit sized for that stack, so deep definitions build and run, and a
definition deeper still gets a RecursionError instead of a crash.

The recursion limit is one for the whole interpreter: while a deep walk runs it is raised,
and other threads could recurse deeper than their own stacks allow before they get a
RecursionError.  The limit is raised only while a walk needs it (a lock counts the walks in
progress) and put back after the last one."""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable

#: The deep thread's stack, and the recursion limit it holds: CPython 3.11 uses well under
#: 2 KiB of C stack for a Python frame called through C (a method lookup, ast.unparse),
#: so 256 MiB holds 60,000 frames with a wide margin.
_STACK_BYTES = 256 * 1024 * 1024
_DEEP_LIMIT = 60_000

_lock = threading.Lock()
_active = 0
_saved_limit = 0


def _raise_limit() -> None:
    global _active, _saved_limit
    with _lock:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, _DEEP_LIMIT))
        _active += 1


def _restore_limit() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            sys.setrecursionlimit(_saved_limit)


def run_deep(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a thread with a large stack and a raised recursion limit; its result,
    or its exception re-raised here (KeyboardInterrupt included, once the thread stops)."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as it is
            outcome["error"] = exc

    _raise_limit()  # before the thread starts: it must never run under the default limit
    try:
        with _lock:  # stack_size is process-wide: set it only around this thread's creation
            previous = threading.stack_size(_STACK_BYTES)
            try:
                thread = threading.Thread(target=target, name="gtscript-deep", daemon=True)
                thread.start()
            finally:
                threading.stack_size(previous)
        thread.join()
    finally:
        _restore_limit()
    if "error" in outcome:
        error = outcome.pop("error")
        try:
            raise error.with_traceback(error.__traceback__)
        finally:
            del error
    return outcome["value"]


def nesting_depth(tree: Any, limit: int) -> int:
    """How deeply tuples and lists nest in ``tree`` (iteratively), stopping at ``limit``."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest >= limit:
                return deepest
        if isinstance(node, (tuple, list)):
            stack.extend(
                (item, depth + 1) for item in node if isinstance(item, (tuple, list, dict))
            )
        elif isinstance(node, dict):
            stack.extend(
                (item, depth + 1)
                for item in node.values()
                if isinstance(item, (tuple, list, dict))
            )
    return deepest
