"""The threads a cpu call may use, at run time.

The C core runs a call's tiles on a pool of threads. Its size starts as
``GTSCRIPT_NUM_THREADS`` (else the CPUs this process may run on, at most 256) and
:func:`set_num_threads` changes it for the calls that start afterwards; a call already running
keeps the threads it started with. Plans (tile sizes) and the tuner's measurements are kept per
thread count, so a plan measured on 8 threads is never used on 1 (docs/performance.md).

When threadpoolctl (3.5 or later) is installed, importing gtscript registers a controller for
it, so ``threadpoolctl.threadpool_limits(1)`` limits gtscript as it limits OpenMP and BLAS, and
``threadpoolctl.threadpool_info()`` lists gtscript (``user_api`` ``"gtscript"``). The controller
calls the C functions ``gtscript_get_num_threads`` and ``gtscript_set_num_threads`` that the
core exports for it (threadpoolctl finds libraries among the loaded shared objects).
"""

from __future__ import annotations

import operator
from typing import Any

from . import _core

__all__ = ["set_num_threads", "get_num_threads", "MAX_THREADS"]

#: The most threads a call may use (the pool's bound).
MAX_THREADS = 256


def get_num_threads() -> int:
    """The threads a cpu call that starts now may use (small domains, and stencils that must
    run as one tile, use one). Starts as ``GTSCRIPT_NUM_THREADS``, else the CPUs this process
    may run on (at most 256); :func:`set_num_threads` and ``threadpoolctl`` change it.

    Returns
    -------
    int
        The count, from 1 to 256.

    Examples
    --------
    >>> import gtscript
    >>> 1 <= gtscript.get_num_threads() <= 256
    True
    """
    return _core.num_threads()


def set_num_threads(n: int) -> None:
    """Let the cpu calls that start from now on use ``n`` threads (a whole number from 1 to
    256). A call already running (on another Python thread) keeps its threads. The numpy and
    cuda backends are not affected.

    Parameters
    ----------
    n : int
        The count (an ``int`` or a NumPy integer; not a bool or a float).

    Raises
    ------
    TypeError
        ``n`` is not a whole number.
    ValueError
        ``n`` is below 1 or above 256.

    Examples
    --------
    >>> import gtscript
    >>> before = gtscript.get_num_threads()
    >>> gtscript.set_num_threads(1)
    >>> gtscript.get_num_threads()
    1
    >>> gtscript.set_num_threads(before)
    """
    if isinstance(n, bool):  # an int to Python, never meant as a count
        raise TypeError(f"set_num_threads: n must be a whole number, not {n!r}")
    try:
        count = operator.index(n)  # int and NumPy's integers; not 2.0 or "2"
    except TypeError:
        raise TypeError(f"set_num_threads: n must be a whole number, not "
                        f"{type(n).__name__} ({n!r})") from None
    if not 1 <= count <= MAX_THREADS:
        raise ValueError(f"set_num_threads: n must be between 1 and {MAX_THREADS}, not {count}")
    _core.set_num_threads(count)


def _register_threadpoolctl() -> bool:
    """Registers the threadpoolctl controller when threadpoolctl 3.5+ is installed (True)."""
    try:
        import threadpoolctl
    except ImportError:
        return False
    if not hasattr(threadpoolctl, "register"):  # before 3.5: no custom controllers
        return False

    class GtscriptController(threadpoolctl.LibController):
        """gtscript's cpu thread pool, for threadpoolctl."""

        user_api = "gtscript"
        internal_api = "gtscript"
        # the extension module (gtscript/_core.cpython-*.so); the symbols tell it from other
        # packages' modules of that name
        filename_prefixes = ("_core",)
        check_symbols = ("gtscript_get_num_threads", "gtscript_set_num_threads")

        def get_num_threads(self) -> int:
            return int(self.dynlib.gtscript_get_num_threads())

        def set_num_threads(self, num_threads: Any) -> None:
            # threadpoolctl passes what the user gave threadpool_limits; the core clamps it to
            # 1..256 rather than failing inside a `with` block
            count = min(max(int(num_threads), 1), MAX_THREADS)  # (a C int: never overflows)
            self.dynlib.gtscript_set_num_threads(count)

        def get_version(self) -> str:
            from ._version import __version__

            return __version__

    threadpoolctl.register(GtscriptController)
    return True


#: Whether importing gtscript registered the threadpoolctl controller.
THREADPOOLCTL = _register_threadpoolctl()
