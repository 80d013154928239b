"""A cpu kernel's float64 ``exp``, ``log`` and ``**`` call glibc's implementations without the
errno wrappers the C library exports as ``exp``, ``log`` and ``pow`` (csrc/backend/cpu/libm.c):
``_core.target()`` and ``python -m gtscript info`` say so where glibc has them, and the
results are the wrappers' (called through ctypes) bit for bit, on the inputs where the
wrappers do more than call the implementation (overflow, underflow, zero and negative
arguments of log, pow's special cases) as on ordinary ones."""

import platform

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, exp, interval, log
from gtscript import _core, sysinfo
from libm_reference import libm


def glibc_at_least(major, minor):
    name, version = platform.libc_ver()
    if name != "glibc" or not version:
        return False
    return tuple(int(x) for x in version.split(".")[:2]) >= (major, minor)


def test_direct_entries_reported():
    direct = _core.target()["libm_direct"]
    if glibc_at_least(2, 29) and platform.machine() == "x86_64":
        assert direct == ("exp", "log", "pow")
    else:
        assert direct == ()
    facts = sysinfo.info()
    assert facts["libm_direct"] == list(direct)
    line = [row for row in sysinfo.format_info(facts).splitlines() if row.startswith("libm")]
    assert len(line) == 1 and all(name in line[0] for name in direct)


def edge_inputs():
    """(x, y): exp's overflow and underflow (to subnormals and zero), log's zero, negative and
    subnormal arguments, and pow's special pairs (zero, negative and infinite bases with
    integer, odd, fractional and infinite exponents), with ordinary values between them."""
    rng = np.random.default_rng(3)
    x = np.concatenate([
        rng.uniform(-760, 760, 2000), [709.78, 709.79, -708.4, -745.1, -745.2, 1e308, -1e308],
        [0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1.0, -1.0, np.inf, -np.inf, np.nan],
        -np.exp(rng.uniform(-700, 700, 200)), np.exp(rng.uniform(-740, 709, 400))])
    special = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1e308, -1e-308,
                        np.inf, -np.inf, np.nan, 1e-320])
    bases, exponents = np.repeat(special, special.size), np.tile(special, special.size)
    y = np.concatenate([rng.uniform(-400, 400, x.size - bases.size), exponents])
    base = np.concatenate([np.exp(rng.uniform(-10, 10, x.size - bases.size)), bases])
    n = x.size - x.size % 16
    shape = (n // 16, 4, 4)
    return x[:n].reshape(shape), base[:n].reshape(shape), y[:n].reshape(shape)


def functions(x: Field[np.float64], base: Field[np.float64], y: Field[np.float64],
              e: Field[np.float64], lg: Field[np.float64], pw: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        e = exp(x)
        lg = log(x)
        pw = base ** y


@pytest.mark.parametrize("order", ["C", "F"])
def test_results_are_the_wrappers_bit_for_bit(order):
    x, base, y = (np.asarray(a, order=order) for a in edge_inputs())
    out = {n: np.zeros_like(x) for n in ("e", "lg", "pw")}
    st = gtscript.stencil("cpu", functions)
    with np.errstate(all="ignore"):
        st(x, base, y, **out)
    # libm's exported functions: the wrappers, where glibc has them
    want = {"e": libm("exp", np.float64, x), "lg": libm("log", np.float64, x),
            "pw": libm("pow", np.float64, base, y)}
    for name, w in want.items():
        differ = np.flatnonzero(out[name].view(np.int64) != w.view(np.int64))
        assert differ.size == 0, (
            f"{name}: {differ.size} results differ from libm's, the first at flat index "
            f"{differ[0]}: {out[name].ravel()[differ[0]]!r} vs {w.ravel()[differ[0]]!r}")
    # the inputs reach what the wrappers test for
    assert np.isinf(want["e"]).any() and (want["e"] == 0).any() and np.isnan(want["lg"]).any()
    assert np.isinf(want["pw"]).any() and np.isnan(want["pw"]).any() and (want["pw"] == 0).any()
