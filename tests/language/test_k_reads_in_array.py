"""A K level computed at run time from values the stencil writes may read any level its array
holds, as in GT4Py, not only the compute domain's: FV3's vertical remapping reads level nz of
an interface field (nz + 1 levels) while computing nz levels. Writes keep their rule (the
compute domain's levels: tests/language/test_checked_k_writes.py); a read outside the array undoes the
call and raises a ValueError naming the argument. cpu, numpy and the cuda backend's source in
host emulation, against hand-written NumPy, with the arrays as views inside buffers of
sentinels: a level just outside a view is inside its buffer, and must raise, never be read.

GT4Py 1.1.12 (numpy backend) reads level nz of an nz + 1 level field computed at run time;
beyond the array its debug backend raises IndexError, its numpy backend returns a level the
array holds."""

import inspect

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import emulate, require_compiler
from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval

BACKENDS = ["cpu", "numpy", "cuda"]
NI, NJ, NZ = 4, 5, 6


def build(backend, definition):
    if backend == "cuda":
        require_compiler()
    stencil = gtscript.stencil(backend, definition)
    return emulate(stencil) if backend == "cuda" else stencil


def in_margins(fields, values, below=2, above=2):
    """`values` as a view inside a buffer of sentinels, with `below` and `above` levels of
    sentinels around it in K (and some in I and J)."""
    ni, nj, nk = values.shape
    buf = np.full((ni + 2, nj + 3, nk + below + above), fields.SENTINEL, values.dtype)
    view = buf[1:-1, 2:-1, below:below + nk]
    view[...] = values
    return view


def remap(pe1: Field[np.float64], pe2: Field[np.float64], q1: Field[np.float64],
          q2: Field[np.float64]):
    # pe1, pe2: interfaces (nz + 1 levels); q1, q2: layers (nz levels)
    with computation(PARALLEL), interval(...):
        kk = 0
        while pe1.at(K=kk + 1) < pe2:  # kk + 1 reaches nz: the interface field's top
            kk = kk + 1
        q2 = q1.at(K=kk) + (pe2 - pe1.at(K=kk)) * (pe1.at(K=kk + 1) - pe2)


def remap_reference(pe1, pe2, q1, q2):
    q2 = q2.copy()
    for i in range(q2.shape[0]):
        for j in range(q2.shape[1]):
            for k in range(q2.shape[2]):
                kk = 0
                while pe1[i, j, kk + 1] < pe2[i, j, k]:
                    kk += 1
                q2[i, j, k] = q1[i, j, kk] + (pe2[i, j, k] - pe1[i, j, kk]) * (pe1[i, j, kk + 1] - pe2[i, j, k])
    return q2


def shift_up(pe: Field[np.float64], stop: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(FORWARD), interval(...):
        lev = 0
        while lev < stop:
            lev = lev + 1
        out = pe[0, 0, lev]  # level k + lev: nz at the top for lev = 1


def remap_inputs(fields, surface_jump=0.0):
    pe1 = np.cumsum(fields.rng.uniform(0.5, 1.5, (NI, NJ, NZ + 1)), axis=2)
    # targets inside (pe1[0], pe1[nz]]: every search stops at an interface the array holds
    pe2 = np.sort(fields.rng.uniform(pe1[:, :, :1], pe1[:, :, -1:], (NI, NJ, NZ + 1)), axis=2)
    pe2[:, :, NZ - 1] = pe1[:, :, NZ]  # the last layer's search reads level nz
    pe2[1, 2, NZ - 1] += surface_jump
    return pe1, pe2, fields.random((NI, NJ, NZ))


@pytest.mark.parametrize("backend", BACKENDS)
def test_remap_reads_the_interface_fields_top(fields, backend):
    stencil = build(backend, remap)
    pe1, pe2, q1 = remap_inputs(fields)
    pe1, pe2, q1 = (in_margins(fields, a) for a in (pe1, pe2, q1))
    q2 = in_margins(fields, np.full((NI, NJ, NZ), 7.0))
    expected = remap_reference(pe1, pe2, q1, q2)
    stencil(pe1, pe2, q1, q2, domain=(NI, NJ, NZ))
    np.testing.assert_allclose(q2, expected, rtol=1e-14, atol=0)
    for a in (pe1, pe2, q1, q2):
        fields.assert_view_padding_untouched(a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_read_just_outside_the_array_raises(fields, backend):
    stencil = build(backend, remap)
    pe1, pe2, q1 = remap_inputs(fields, surface_jump=1.0)  # one search passes the top
    pe1, pe2, q1 = (in_margins(fields, a) for a in (pe1, pe2, q1))
    q2 = in_margins(fields, np.full((NI, NJ, NZ), 7.0))
    snapshots = fields.snapshot(pe1, pe2, q1, q2)
    source, first = inspect.getsourcelines(remap)
    line = first + next(n for n, text in enumerate(source) if "while pe1.at" in text)
    with pytest.raises(ValueError, match=rf"argument 'pe1': the K level read on line {line}, .*"
                                         rf"outside the array's {NZ + 1} levels \(levels 0 to {NZ}.*restored"):
        stencil(pe1, pe2, q1, q2, domain=(NI, NJ, NZ))
    fields.assert_unchanged(snapshots)


def remap_moved(pe1: Field[np.float64], pe2: Field[np.float64], q1: Field[np.float64],
                q2: Field[np.float64]):
    # remap's body on other lines: the same code but for the line its failed check names


    with computation(PARALLEL), interval(...):
        kk = 0
        while pe1.at(K=kk + 1) < pe2:
            kk = kk + 1
        q2 = q1.at(K=kk) + (pe2 - pe1.at(K=kk)) * (pe1.at(K=kk + 1) - pe2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_definition_names_its_own_line(fields, backend):
    """Two definitions that differ only in where they stand in the file: each failed check
    names its own definition's line (the line is compiled into the kernel, so the two must
    not share a cached module)."""
    pe1, pe2, q1 = remap_inputs(fields, surface_jump=1.0)
    for definition in (remap, remap_moved, remap):
        stencil = build(backend, definition)
        source, first = inspect.getsourcelines(definition)
        line = first + next(n for n, text in enumerate(source) if "while pe1.at" in text)
        with pytest.raises(ValueError, match=rf"the K level read on line {line}, "):
            stencil(pe1, pe2, q1, np.zeros((NI, NJ, NZ)), domain=(NI, NJ, NZ))


@pytest.mark.parametrize("backend", BACKENDS)
def test_relative_offsets_read_the_levels_above_the_domain(fields, backend):
    stencil = build(backend, shift_up)
    pe = in_margins(fields, fields.random((NI, NJ, NZ + 1)))
    stop = fields.rng.integers(0, 2, (NI, NJ))
    out = in_margins(fields, np.full((NI, NJ, NZ), 7.0))
    stencil(pe, stop, out, domain=(NI, NJ, NZ))
    k = np.arange(NZ)[None, None, :] + stop[:, :, None]
    np.testing.assert_array_equal(out, np.take_along_axis(np.asarray(pe), k, axis=2))
    fields.assert_view_padding_untouched(pe)
    fields.assert_view_padding_untouched(out)
    # one level more: level nz + 1 of the view, a sentinel of its buffer
    stop[3, 4] = 2
    out[...] = 7.0
    snapshots = fields.snapshot(pe, out)
    with pytest.raises(ValueError, match=rf"'pe': .*outside the array's {NZ + 1} levels"):
        stencil(pe, stop, out, domain=(NI, NJ, NZ))
    fields.assert_unchanged(snapshots)


@pytest.mark.parametrize("backend", BACKENDS)
def test_levels_below_the_origin(fields, backend):
    # the domain starts at level 2 of pe: offsets down to -2 read inside the array
    def down(pe: Field[np.float64], depth: Field[IJ, np.int64], out: Field[np.float64]):
        with computation(FORWARD), interval(...):
            lev = 0
            while lev > -depth:
                lev = lev - 1
            out = pe[0, 0, lev]

    stencil = build(backend, down)
    pe = in_margins(fields, fields.random((NI, NJ, NZ + 2)))
    out = in_margins(fields, np.full((NI, NJ, NZ), 7.0))
    depth = fields.rng.integers(0, 3, (NI, NJ))
    origin = {"pe": (0, 0, 2), "_all_": (0, 0, 0)}
    stencil(pe, depth, out, origin=origin, domain=(NI, NJ, NZ))
    k = 2 + np.arange(NZ)[None, None, :] - depth[:, :, None]
    np.testing.assert_array_equal(out, np.take_along_axis(np.asarray(pe), k, axis=2))
    fields.assert_view_padding_untouched(pe)
    fields.assert_view_padding_untouched(out)
    depth[0, 1] = 3  # level -1 of the array at the domain's first level
    out[...] = 7.0
    snapshots = fields.snapshot(pe, out)
    with pytest.raises(ValueError, match=rf"'pe': .*outside the array's {NZ + 2} levels "
                                         rf"\(levels -2 to {NZ - 1} counted"):
        stencil(pe, depth, out, origin=origin, domain=(NI, NJ, NZ))
    fields.assert_unchanged(snapshots)


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_keep_the_domains_levels(fields, backend):
    # a write at a level computed from values the stencil writes: the domain's levels only,
    # even where the array holds more
    def push(a: Field[np.float64], up: Field[IJ, np.int64], out: Field[np.float64]):
        with computation(FORWARD), interval(...):
            lev = up
            out[0, 0, lev] = a

    stencil = build(backend, push)
    a = fields.random((NI, NJ, NZ))
    up = np.zeros((NI, NJ), np.int64)
    up[2, 2] = 1  # the domain's top level writes level nz: inside the array, not the domain
    out = in_margins(fields, np.full((NI, NJ, NZ + 1), 7.0))
    snapshots = fields.snapshot(out)
    with pytest.raises(ValueError, match=rf"the K level written on line .* outside the compute "
                                         rf"domain's {NZ} levels"):
        stencil(a, up, out, domain=(NI, NJ, NZ))
    fields.assert_unchanged(snapshots)
