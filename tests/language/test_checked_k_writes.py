"""A write at a K offset computed from values the stencil writes (``lev`` a temporary, then
``out[0, 0, lev] = a``): the kernel checks each level written; a level outside the compute
domain undoes the call (every array it wrote put back) and raises a ValueError naming the
line. cpu, numpy and the cuda backend's source in host emulation, against hand-written
loops."""

import inspect

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import emulate, require_compiler
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSemanticError

BACKENDS = ["cpu", "numpy", "cuda"]
NI, NJ, NK = 4, 5, 6


def build(backend, definition):
    if backend == "cuda":
        require_compiler()
    stencil = gtscript.stencil(backend, definition)
    return emulate(stencil) if backend == "cuda" else stencil


def push(a: Field[np.float64], up: Field[np.int64], out: Field[np.float64]):
    with computation(FORWARD), interval(...):
        lev = 1 if up > 0 else 0
        out[0, 0, lev] = a


def pull(a: Field[np.float64], out: Field[np.float64]):
    with computation(BACKWARD), interval(1, None):
        out = a
        lev = -1 if out > 0.5 else 0  # from a field the stencil writes
        out[0, 0, lev] = 2.0 * a


def reference_push(a, up, out, nk):
    out = out.copy()
    for k in range(nk):
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                out[i, j, k + (1 if up[i, j, k] > 0 else 0)] = a[i, j, k]
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_levels_inside_the_domain(fields, backend):
    stencil = build(backend, push)
    a = fields.random((NI, NJ, NK))
    up = fields.rng.integers(0, 2, (NI, NJ, NK))
    up[:, :, NK - 2] = 0  # the domain's last level (NK - 2) stays in place
    out = fields.sentinel((NI, NJ, NK))
    expected = reference_push(a, up, out, NK - 1)
    stencil(a, up, out, domain=(NI, NJ, NK - 1))
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_offset_from_a_written_field(fields, backend):
    stencil = build(backend, pull)
    a = fields.random((NI, NJ, NK))
    out = fields.sentinel((NI, NJ, NK))
    expected = out.copy()
    for k in range(NK - 1, 0, -1):
        expected[:, :, k] = a[:, :, k]
        below = a[:, :, k] > 0.5
        expected[:, :, k - 1] = np.where(below, 2.0 * a[:, :, k], expected[:, :, k - 1])
        expected[:, :, k] = np.where(below, expected[:, :, k], 2.0 * a[:, :, k])
    stencil(a, out)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_level_outside_the_domain_undoes_the_call(fields, backend):
    stencil = build(backend, push)
    a = fields.random((NI, NJ, NK))
    up = np.zeros((NI, NJ, NK), np.int64)
    up[2, 3, NK - 2] = 1  # the domain's last level writes one above it: level NK - 1
    out = fields.sentinel((NI, NJ, NK))
    snapshots = fields.snapshot(a, up, out)
    line = inspect.getsourcelines(push)[1] + 3
    with pytest.raises(ValueError, match=f"line {line}.*outside the compute domain's 5 levels"):
        stencil(a, up, out, domain=(NI, NJ, NK - 1))
    fields.assert_unchanged(snapshots)


def test_parallel_stays_an_error():
    def par(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(0, -1):
            lev = 1
            out[0, 0, lev] = a

    with pytest.raises(GTScriptSemanticError, match="PARALLEL"):
        gtscript.stencil("numpy", par)
