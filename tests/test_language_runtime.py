"""Run-time values in the vertical structure: interval bounds given by scalar parameters,
data-dimension indices computed at run time, K offsets computed by the stencil itself, and
the K levels a call needs when compile-time choices empty an interval. Every construct runs
on the cpu and numpy backends against hand-written NumPy, and through the cuda emulation."""

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import compiler, emulate
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, __INLINED, computation, interval
from test_language_helpers import assert_matches, build, check_construct

SHAPE = (5, 4, 6)
NI, NJ, NK = SHAPE


def on_cuda_emulation(defn, arrays, expected, scalars=None, **options):
    """Runs ``defn`` on the cuda backend's host emulation; compares with ``expected``."""
    if compiler() is None:
        return
    copies = {name: value.copy() for name, value in arrays.items()}
    emulate(gtscript.stencil("cuda", defn, **options))(**copies, **(scalars or {}))
    for name, value in expected.items():
        assert_matches(copies[name], value, f"{name} (cuda emulation)")


# --------------------------------------------------------- intervals emptied at compile time


def inlined_away(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import DEEP

    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, 8):
            if __INLINED(DEEP):
                out = out[0, 0, -1] + a
        with interval(-1, None):
            out = 2.0 * a
    with computation(BACKWARD), interval(0, -9):
        if __INLINED(DEEP):
            out = 0.0


def test_an_interval_emptied_by_inlined_needs_no_levels(backend):
    deep = build(inlined_away, backend, externals={"DEEP": True})
    shallow = build(inlined_away, backend, externals={"DEEP": False})
    assert deep.min_k_levels == 10 and shallow.min_k_levels == 2
    rng = np.random.default_rng(1)
    for nk in (2, 3):
        a = rng.uniform(-1.0, 1.0, (NI, NJ, nk))
        out = np.full((NI, NJ, nk), 7.0)
        e = out.copy()
        e[:, :, 0], e[:, :, -1] = a[:, :, 0], 2.0 * a[:, :, -1]
        shallow(a, out)
        assert_matches(out, e)
        with pytest.raises(ValueError, match="K levels"):
            deep(a, np.zeros_like(a))
        on_cuda_emulation(inlined_away, {"a": a, "out": np.full((NI, NJ, nk), 7.0)}, {"out": e},
                          externals={"DEEP": False})
