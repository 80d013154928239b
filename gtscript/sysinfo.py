"""What this installation of gtscript is and what it finds: ``python -m gtscript info``.

Bug reports start with it: the versions of gtscript, LLVM, Python and NumPy, whether NVRTC
(the cuda backend's compiler) is found, the CPU the cpu backend compiles for and the libm entry
points its kernels call, the cache directory and the threads a call may use.
"""

from __future__ import annotations

import platform
import sys
from typing import Any

import numpy as np

from . import _core, cache
from ._version import __version__

__all__ = ["info", "format_info"]


def info() -> dict[str, Any]:
    """The installation's facts, as a dict of plain values (``python -m gtscript info``
    prints them).

    >>> import gtscript.sysinfo
    >>> facts = gtscript.sysinfo.info()
    >>> facts["gtscript"] == gtscript.__version__ and facts["llvm"].startswith("19.")
    True
    """
    target = _core.target()
    triple, cpu, features = target["target"].split("/", 2)
    try:
        nvrtc: str | None = _core.nvrtc()
        nvrtc_note = ""
    except RuntimeError as exc:
        nvrtc, nvrtc_note = None, str(exc)
    return {
        "gtscript": __version__,
        "location": __file__.rsplit("/", 1)[0],
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "numpy": np.__version__,
        "llvm": target["llvm"],
        "target": triple,
        "cpu": cpu,
        "cpu_features": sorted(f[1:] for f in features.split(",") if f.startswith("+")),
        "libm_direct": list(target["libm_direct"]),
        "nvrtc": nvrtc,
        "nvrtc_note": nvrtc_note,
        "cache_dir": str(cache.path()),
        "threads": _core.num_threads(),
        "platform": f"{platform.system()} {platform.machine()} ({sys.platform})",
    }


def format_info(facts: dict[str, Any]) -> str:
    """``info()`` as the aligned text ``python -m gtscript info`` prints."""
    rows = [
        ("gtscript", f"{facts['gtscript']} ({facts['location']})"),
        ("python", facts["python"]),
        ("numpy", facts["numpy"]),
        ("llvm", facts["llvm"] if facts["llvm"] != "none"
         else "none: no cpu backend (built with GTSCRIPT_LLVM=OFF)"),
        ("target", facts["target"]),
        ("cpu", facts["cpu"]),
        ("cpu features", " ".join(facts["cpu_features"]) or "-"),
        ("libm", (" ".join(facts["libm_direct"]) + ": called without the C library's errno "
                  "wrappers (same results)") if facts["libm_direct"] else "called as linked"),
        ("nvrtc", facts["nvrtc"] if facts["nvrtc"] else f"not found: {facts['nvrtc_note']}"),
        ("cache", facts["cache_dir"]),
        ("threads", str(facts["threads"])),
        ("platform", facts["platform"]),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
