"""Run under mpiexec by tests/distributed/test_distributed.py: every case compares the distributed run
with a single-process run of the same stencil on the global grid (each rank computes the
reference itself) and prints "OK <case> rank <r>"; a failure raises (mpi4py then aborts
every rank)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

from gtscript import distributed as dist  # noqa: E402

COMM = dist.MPI.COMM_WORLD


def say(line):
    """One write per line, so the lines of several ranks never run together."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()

RANK, SIZE = COMM.rank, COMM.size
STEPS = 20


def ok(case):
    say(f"OK {case} rank {RANK}")


def global_field(shape, h, seed, dtype=np.float64, order="C"):
    rng = np.random.default_rng(seed)
    g = rng.uniform(-1.0, 1.0, (shape[0] + 2 * h, shape[1] + 2 * h, shape[2])).astype(dtype)
    return np.asarray(g, order=order)


def local_copy(dec, g, order="C"):
    """This rank's part of a global array with halo (the halo included)."""
    h = dec.halo
    si, sj, _ = dec.global_slices
    loc = dec.zeros(g.dtype, order=order)
    loc[...] = g[si.start:si.stop + 2 * h, sj.start:sj.stop + 2 * h]
    return loc


def single(stencil, g, steps, h, periodic, **scalars):
    """The single-process run: the whole global grid, halo wrapped (periodic) or left as
    the wall's values."""
    a, b = g.copy(), g.copy()
    dom = (g.shape[0] - 2 * h, g.shape[1] - 2 * h, g.shape[2])
    for _ in range(steps):
        if periodic:
            common.periodic_fill(a, h)
        stencil(a, b, **scalars, origin=(h, h, 0), domain=dom)
        a, b = b, a
    return a


def distributed(dec, stencil, g, steps, overlap, order="C", **scalars):
    a, b = local_copy(dec, g, order), local_copy(dec, g, order)
    for _ in range(steps):
        dec.run(stencil, a, b, overlap=overlap, **scalars)
        a, b = b, a
    return a


def compare(dec, g_ref, loc, case, walls_from=None):
    """Bit-for-bit: the gathered interior equals the reference's interior; on walls, the
    outer halo this rank holds is still the global array's."""
    h = dec.halo
    whole = dec.gather(loc)
    if RANK == 0:
        ref = g_ref[h:-h, h:-h]
        assert whole.dtype == ref.dtype
        assert np.array_equal(whole, ref), (case, np.abs(whole - ref).max())
    if walls_from is not None:
        si, sj, _ = dec.global_slices
        orig = walls_from[si.start:si.stop + 2 * h, sj.start:sj.stop + 2 * h]
        if dec.coords[0] == 0:
            assert np.array_equal(loc[:h], orig[:h]), case
        if dec.coords[1] == 0:
            assert np.array_equal(loc[:, :h], orig[:, :h]), case
        if dec.coords[0] == dec.dims[0] - 1:
            assert np.array_equal(loc[-h:], orig[-h:]), case
    ok(case)


def dims_choices():
    return {4: [(2, 2), (4, 1), (1, 4)], 2: [(2, 1), (1, 2)], 1: [(1, 1)]}[SIZE]


def case_hdiff_periodic(backend="cpu"):
    hdiff = common.build(common.hdiff_def, backend, builder=dist.stencil)
    shape, h = (24, 20, 4), 2
    g = global_field(shape, h, 1)
    ref = single(hdiff, g, STEPS, h, True, alpha=0.02)
    for overlap in (False, True):
        dec = dist.Decomposition(shape, h, periodic=(True, True))
        assert dec.halo_widths(hdiff) == {"inp": ((2, 2), (2, 2))}
        loc = distributed(dec, hdiff, g, STEPS, overlap, alpha=0.02)
        compare(dec, ref, loc, f"hdiff-periodic-{backend}-overlap{int(overlap)}")


def case_walls_uneven():
    lap = common.build(common.lap_def, builder=dist.stencil)
    shape, h = (37, 29, 3), 1
    g = global_field(shape, h, 2)
    # the single-process run against hand-written NumPy (one step)
    one = single(lap, g, 1, h, False)
    assert np.allclose(one[h:-h, h:-h], common.hand_laplacian(g, h), rtol=1e-14, atol=1e-14)
    ref = single(lap, g, STEPS, h, False)
    for dims in dims_choices():
        for overlap in (False, True):
            dec = dist.Decomposition(shape, h, dims=dims)
            assert dec.halo_widths(lap) == {"inp": ((1, 1), (1, 1))}
            loc = distributed(dec, lap, g, STEPS, overlap)
            compare(dec, ref, loc, f"walls-{dims[0]}x{dims[1]}-overlap{int(overlap)}",
                    walls_from=g)


def case_regions():
    """Boundary conditions in horizontal regions on the global grid's edges and corners:
    every rank runs the same compiled stencil, the regions landing on the ranks that own
    those edges; bit for bit the single-process run over 20 steps, for every split."""
    walls = common.build(common.walls_def, builder=dist.stencil)
    shape, h = (37, 29, 3), 1
    g = global_field(shape, h, 6)
    one = single(walls, g, 1, h, False)
    assert np.allclose(one[h:-h, h:-h], common.hand_walls(g, h), rtol=1e-14, atol=1e-14)
    ref = single(walls, g, STEPS, h, False)
    for dims in dims_choices():
        for overlap in (False, True):
            dec = dist.Decomposition(shape, h, dims=dims)
            assert dec.halo_widths(walls) == {"inp": ((1, 1), (1, 1))}
            loc = distributed(dec, walls, g, STEPS, overlap)
            compare(dec, ref, loc, f"regions-{dims[0]}x{dims[1]}-overlap{int(overlap)}",
                    walls_from=g)
    # one compiled kernel on every rank: the same cache key everywhere
    keys = COMM.allgather(walls.build_info["cache_key"])
    assert len(set(keys)) == 1, keys
    # periodic in I and J: the grid's edges are still where the regions are
    ref = single(walls, g, STEPS, h, True)
    dec = dist.Decomposition(shape, h, periodic=(True, True))
    for overlap in (False, True):
        loc = distributed(dec, walls, g, STEPS, overlap)
        compare(dec, ref, loc, f"regions-periodic-overlap{int(overlap)}")
    # one-sided reads in the regions: I[0] reads one point right, which no rank's halo
    # needs (the grid's first column has its neighbour inside the same rank)
    sided = common.build(common.one_sided_def, builder=dist.stencil)
    ref = single(sided, g, STEPS, h, False)
    for dims in dims_choices()[:2]:
        dec = dist.Decomposition(shape, h, dims=dims)
        assert dec.halo_widths(sided) == {"inp": ((1, 0), (0, 1))}
        for overlap in (False, True):
            loc = distributed(dec, sided, g, STEPS, overlap)
            compare(dec, ref, loc, f"regions-one-sided-{dims[0]}x{dims[1]}-overlap{int(overlap)}")
    ok("regions-one-build")


def case_regions_float32_fortran():
    walls = common.build(common.walls_def, dtype=np.float32, builder=dist.stencil)
    shape, h = (23, 19, 2), 2
    g = global_field(shape, h, 7, np.float32, order="F")
    ref = single(walls, g, STEPS, h, False)
    for overlap in (False, True):
        dec = dist.Decomposition(shape, h)
        loc = distributed(dec, walls, g, STEPS, overlap, order="F")
        assert loc.flags.f_contiguous and loc.dtype == np.float32
        compare(dec, ref, loc, f"regions-float32-F-overlap{int(overlap)}", walls_from=g)


def case_float32_fortran():
    hdiff = common.build(common.hdiff_def, dtype=np.float32, builder=dist.stencil)
    shape, h = (22, 18, 3), 2
    g = global_field(shape, h, 3, np.float32, order="F")
    ref = single(hdiff, g, STEPS, h, True, alpha=np.float32(0.03))
    for overlap in (False, True):
        dec = dist.Decomposition(shape, h, periodic=(True, True))
        loc = distributed(dec, hdiff, g, STEPS, overlap, order="F", alpha=np.float32(0.03))
        assert loc.flags.f_contiguous and loc.dtype == np.float32
        compare(dec, ref, loc, f"float32-F-overlap{int(overlap)}")


def case_numpy_backend():
    hdiff = common.build(common.hdiff_def, "numpy", builder=dist.stencil)
    cpu = common.build(common.hdiff_def, builder=dist.stencil)
    shape, h = (16, 14, 3), 2
    g = global_field(shape, h, 4)
    ref = single(cpu, g, 3, h, True, alpha=0.02)
    dec = dist.Decomposition(shape, h, periodic=(True, True))
    for overlap in (False, True):
        loc = distributed(dec, hdiff, g, 3, overlap, alpha=0.02)
        whole = dec.gather(loc)
        if RANK == 0:
            assert np.allclose(whole, ref[h:-h, h:-h], rtol=1e-13, atol=1e-13)
        ok(f"numpy-backend-overlap{int(overlap)}")


def case_column_solver():
    tri = common.build(common.tridiag_def, builder=dist.stencil)
    shape, h = (13, 11, 7), 1
    dec = dist.Decomposition(shape, h)
    assert dec.halo_widths(tri) == {}
    rng = np.random.default_rng(5)
    a, c, d = (rng.uniform(-1, 1, shape) for _ in range(3))
    b = 4.0 + rng.uniform(0, 1, shape)
    args = [dec.scatter(arr if RANK == 0 else None) for arr in (a, b, c, d)]
    x = dec.zeros()
    dec.run(tri, *args, x=x)
    whole = dec.gather(x)
    if RANK == 0:
        xs = np.zeros(shape)
        tri(a, b, c, d, xs)
        assert np.array_equal(whole, xs)
        # and the solution solves the systems (hand-written NumPy)
        lhs = b * xs
        lhs[:, :, 1:] += a[:, :, 1:] * xs[:, :, :-1]
        lhs[:, :, :-1] += c[:, :, :-1] * xs[:, :, 1:]
        assert np.allclose(lhs, d, atol=1e-12)
    ok("column-solver")


def case_scatter_gather_exchange():
    h = 2
    for shape, dtype, order in (((9, 7, 3), np.float64, "C"), ((11, 10, 2), np.int64, "C"),
                                ((8, 9, 2), np.int32, "F"), ((10, 8, 2), (np.float32, (3,)),
                                                             "C")):
        dt = np.dtype(dtype)
        full_shape = shape + (dt.shape if dt.subdtype else ())
        base = dt.base
        g = (np.arange(np.prod(full_shape)) % 1000).astype(base).reshape(full_shape)
        for periodic in ((True, True), (False, True), (True, False), (False, False)):
            dec = dist.Decomposition(shape, h, periodic=periodic)
            loc = dec.scatter(g if RANK == 0 else None, order=order)
            assert loc.dtype == base and loc.shape[:3] == dec.local_shape
            assert not loc[:h].any() and not loc[:, :h].any()  # halos zero
            back = dec.gather(loc)
            if RANK == 0:
                assert np.array_equal(back, g)
            else:
                assert back is None
            # the exchange against the global array wrapped where periodic; halos on the
            # non-periodic outer edges keep their sentinel
            loc[:h] = -7
            loc[-h:] = -7
            loc[:, :h] = -7
            loc[:, -h:] = -7
            for method in ("datatype", "pack"):
                dec.exchange(loc, method=method)
                si, sj, _ = dec.global_slices
                ii = np.arange(si.start - h, si.stop + h)
                jj = np.arange(sj.start - h, sj.stop + h)
                expect = np.full(loc.shape, -7, dtype=base)
                vi = (ii >= 0) & (ii < shape[0]) if not periodic[0] else np.ones(len(ii), bool)
                vj = (jj >= 0) & (jj < shape[1]) if not periodic[1] else np.ones(len(jj), bool)
                sub = g[(ii % shape[0])[vi]][:, (jj % shape[1])[vj]]
                expect[np.ix_(np.nonzero(vi)[0], np.nonzero(vj)[0])] = sub
                assert np.array_equal(loc, expect), (shape, dtype, periodic, method)
            dec.free()
    ok("scatter-gather-exchange")


def case_overlap_bands():
    """With overlap, the interior and the four bands cover every point exactly once, for
    asymmetric extents (1 up in I, 1 down in I, 2 down and 1 up in J) and uneven splits,
    and subdomains too small for an interior fall back to one call."""
    count = common.build(common.count_def, builder=dist.stencil)
    for shape, dims in (((37, 29, 2), None), ((23, 31, 2), (SIZE, 1)), ((12, 9, 2), (1, SIZE)),
                        ((3 * SIZE, 11, 2), (SIZE, 1))):
        dec = dist.Decomposition(shape, 2, dims=dims, periodic=(True, False))
        assert dec.halo_widths(count) == {"inp": ((1, 1), (2, 1))}
        inp, out = dec.zeros(), dec.zeros()
        dec.run(count, inp, out, overlap=True)
        assert (dec.interior(out) == 1.0).all(), (shape, dims)
        h = dec.halo
        assert not out[:h].any() and not out[-h:].any()
        assert not out[:, :h].any() and not out[:, -h:].any()
        dec.free()
    ok("overlap-bands")


def case_errors():
    def expect(make, fragment):
        try:
            make()
        except dist.DecompositionError as exc:
            assert fragment in str(exc), str(exc)
            say(f"ERROR {fragment!r} rank {RANK}: {exc}")
            return
        raise AssertionError(f"no error for {fragment!r}")

    # subdomain smaller than the halo: 5 points over 4 ranks leaves 1 < 2
    dims = (SIZE, 1)
    expect(lambda: dist.Decomposition((2 * SIZE - 1, 8, 2), 2, dims=dims), "smaller than the halo")
    expect(lambda: dist.Decomposition((8, 8, 2), 1, dims=(SIZE + 1, 1)), "ranks")
    # one rank disagrees about the global shape
    expect(lambda: dist.Decomposition((16 + (RANK == SIZE - 1), 16, 2), 1), "disagree")
    # a field that does not fit, on one rank only
    dec = dist.Decomposition((16, 16, 2), 1, periodic=(True, True))
    good = dec.zeros()
    bad = np.zeros((good.shape[0] + 1,) + good.shape[1:]) if RANK == SIZE - 1 else good
    expect(lambda: dec.exchange(good, bad), "field 1 of the exchange has shape")
    # scatter of a global array of the wrong shape (given on the root only), gather of a
    # local array of the wrong shape on one rank
    expect(lambda: dec.scatter(np.zeros((16, 15, 2)) if RANK == 0 else None), "scatter:")
    expect(lambda: dec.gather(bad), "gather: the local array has shape")
    # and the decomposition still works afterwards (nobody is left inside the exchange)
    dec.exchange(good)
    back = dec.gather(dec.scatter(np.ones((16, 16, 2)) if RANK == 0 else None))
    assert (back == 1).all() if RANK == 0 else back is None
    # a region that the one compiled stencil cannot run where a rank's edge cuts it (it
    # reads a temporary beyond what the analysis computed): the same error on every rank,
    # before any exchange, every array unchanged
    cut = common.build(common.cut_region_def, builder=dist.stencil)
    out = dec.zeros()
    before = good.copy()
    expect(lambda: dec.run(cut, good, out), "horizontal region of this statement")
    assert not out.any() and np.array_equal(good, before)
    ok("errors")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    for name in sys.argv[1:] or CASES:
        CASES[name]()
    COMM.Barrier()
