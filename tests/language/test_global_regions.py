"""Horizontal regions on a global grid: `global_origin=` / `global_domain=` place a call's
compute domain inside a larger grid, and `region[I[0], :]` then means the grid's first
column (empty where the domain does not hold it). One compiled stencil serves every
placement. Checked on cpu, numpy and the emulated cuda backend against hand-written NumPy,
with sentinel-filled margins."""

import numpy as np
import pytest
from cuda_emulation.runner import emulate, require_compiler

import gtscript
from gtscript import PARALLEL, Field, I, J, computation, horizontal, interval, region

H = 2                  # halo of the local arrays
NG = (11, 9, 3)        # the global grid
SENTINEL = -7777.0


def edges(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[1, 0, 0] + a[-1, 0, 0] + a[0, 1, 0] + a[0, -1, 0]
        with horizontal(region[I[0], :]):
            out = a[1, 0, 0] - a
        with horizontal(region[I[-1], :]):
            out = a[-1, 0, 0] * 2.0
        with horizontal(region[:, J[0]]):
            out = a[0, 1, 0] + 100.0
        with horizontal(region[:, J[-1]]):
            out = out + a[0, -1, 0]
        with horizontal(region[I[0]:I[2], J[-2]:]):
            out = 5.0
        with horizontal(region[I[-1], J[0]]):
            out = -1.0


def edges_numpy(A):
    """`edges` on the whole grid, written by hand (A has H halo points in I and J)."""
    ni, nj, _ = NG
    c = A[H:H + ni, H:H + nj]
    sh = lambda di, dj: A[H + di:H + di + ni, H + dj:H + dj + nj]
    out = sh(1, 0) + sh(-1, 0) + sh(0, 1) + sh(0, -1)
    out[0] = (sh(1, 0) - c)[0]
    out[-1] = (sh(-1, 0) * 2.0)[-1]
    out[:, 0] = (sh(0, 1) + 100.0)[:, 0]
    out[:, -1] = out[:, -1] + sh(0, -1)[:, -1]
    out[0:2, nj - 2:] = 5.0
    out[-1, 0] = -1.0
    return out


def backends(defn=edges, block=(4, 2)):
    yield "cpu", gtscript.stencil("cpu", defn)
    yield "numpy", gtscript.stencil("numpy", defn)
    require_compiler()
    yield "cuda", emulate(gtscript.stencil("cuda", defn), block)


# (global_origin, domain): the whole grid, the part holding the low edges, one holding the
# high edges, one holding none (every region empty), a column holding I[0] and J[-1] only,
# and parts whose halo holds the edge (I[0] one point left of the domain: empty)
PLACEMENTS = [((0, 0), (11, 9)), ((0, 0), (5, 4)), ((6, 5), (5, 4)), ((3, 2), (5, 5)),
              ((0, 4), (3, 5)), ((1, 0), (4, 9)), ((2, 1), (9, 7)), ((10, 8), (1, 1))]


@pytest.mark.parametrize("go, n", PLACEMENTS)
@pytest.mark.parametrize("layout", ["C", "F"])
def test_regions_land_on_the_global_grid(rng, go, n, layout):
    A = rng.uniform(-1, 1, (NG[0] + 2 * H, NG[1] + 2 * H, NG[2]))
    full = edges_numpy(A)
    for name, st in backends():
        a = A[go[0]:go[0] + n[0] + 2 * H, go[1]:go[1] + n[1] + 2 * H].copy(order=layout)
        out = np.full(a.shape, SENTINEL, order=layout)
        st(a, out, origin=(H, H, 0), domain=(*n, NG[2]), global_origin=go, global_domain=NG[:2])
        expected = np.full(a.shape, SENTINEL)
        expected[H:H + n[0], H:H + n[1]] = full[go[0]:go[0] + n[0], go[1]:go[1] + n[1]]
        np.testing.assert_array_equal(out, expected, err_msg=f"{name} at {go} {n}")


def test_without_the_keywords_regions_refer_to_the_domain(rng):
    """The defaults: global_origin (0, 0) and global_domain the domain itself."""
    A = rng.uniform(-1, 1, (NG[0] + 2 * H, NG[1] + 2 * H, NG[2]))
    for name, st in backends():
        outs = []
        for kw in ({}, {"global_domain": NG[:2]}, {"global_origin": (0, 0, 0), "global_domain": NG}):
            out = np.full(A.shape, SENTINEL)
            st(A, out, origin=(H, H, 0), domain=NG, **kw)
            outs.append(out)
        expected = np.full(A.shape, SENTINEL)
        expected[H:-H, H:-H] = edges_numpy(A)
        for out in outs:
            np.testing.assert_array_equal(out, expected, err_msg=name)


def test_one_build_serves_every_placement(rng):
    st = gtscript.stencil("cpu", edges)
    info = dict(st.build_info)
    A = rng.uniform(-1, 1, (NG[0] + 2 * H, NG[1] + 2 * H, NG[2]))
    for go, n in PLACEMENTS:
        a = A[go[0]:go[0] + n[0] + 2 * H, go[1]:go[1] + n[1] + 2 * H].copy()
        st(a, np.zeros_like(a), origin=(H, H, 0), domain=(*n, NG[2]), global_origin=go,
           global_domain=NG[:2])
    assert gtscript.stencil("cpu", edges) is st or gtscript.stencil("cpu", edges).build_info == info
    assert st.build_info == info


@pytest.mark.parametrize("kw, match", [
    ({"global_origin": (0, 0)}, "global_origin needs global_domain"),
    ({"global_origin": (-1, 0), "global_domain": (11, 9)}, "global_origin is -1 along I"),
    ({"global_origin": (0, 4), "global_domain": (11, 9)}, "does not lie inside global_domain"),
    ({"global_origin": (7, 0), "global_domain": (11, 9)}, "along I"),
    ({"global_origin": (2**63 - 1, 0), "global_domain": (11, 9)}, "does not lie inside"),
    ({"global_domain": (2**63 - 1, 9)}, "between 1 and 2\\*\\*62"),
    ({"global_domain": (2**64, 9)}, "integers of at most 64 bits"),
    ({"global_domain": (0, 9)}, "between 1 and"),
    ({"global_domain": (11,)}, "global_domain must be a tuple of 2"),
    ({"global_domain": 11}, "global_domain must be a tuple"),
    ({"global_origin": (0, 0, 0), "global_domain": (11, 9)}, "K entry"),
    ({"global_origin": (0, 0, 1), "global_domain": (11, 9, 3)}, "along K"),
])
def test_bad_global_arguments_are_refused(rng, kw, match):
    for name, st in backends():
        a = rng.uniform(-1, 1, (9, 10, 3))
        out = np.full(a.shape, SENTINEL)
        before = a.copy()
        with pytest.raises(ValueError, match=match):
            st(a, out, origin=(H, H, 0), domain=(5, 6, 3), **kw)
        assert (out == SENTINEL).all() and (a == before).all(), name


def test_non_integer_global_arguments_are_a_type_error():
    st = gtscript.stencil("cpu", edges)
    a = np.zeros((9, 10, 3))
    with pytest.raises(TypeError, match="global_origin must contain integers"):
        st(a, a.copy(), origin=(H, H, 0), domain=(5, 6, 3), global_origin=(0.5, 0),
           global_domain=(11, 9))


def shifted_read(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[1]:, :]):
            out = a[-1, 0, 0]


def test_a_region_placed_off_the_edge_reads_its_real_extent(rng):
    """region[I[1]:] reading a[-1] reads no halo on the grid's first part, so field_info
    says no halo; a part further right reads one point left of its domain: its array must
    have it, and the call checks that with this placement's reach."""
    for name, st in backends(shifted_read):
        assert st.field_info["a"]["extent"][0] == (0, 0)
        A = rng.uniform(-1, 1, (8, 5, 2))
        # the first part needs no halo on the left (origin 0)
        out = np.full(A.shape, SENTINEL)
        st(A, out, origin=(0, 0, 0), domain=(4, 5, 2), global_origin=(0, 0), global_domain=(8, 5))
        expected = np.full(A.shape, SENTINEL)
        expected[0, :] = A[0]
        expected[1:4] = A[0:3]
        np.testing.assert_array_equal(out, expected, err_msg=name)
        # a part starting at 4 reads a[-1] at its first point: with origin 0 that leaves the
        # array, which is refused with every array unchanged
        a = A[4:].copy()
        out = np.full(a.shape, SENTINEL)
        with pytest.raises(ValueError, match="argument 'a'.*global_origin, global_domain.*indices -1"):
            st(a, out, origin=(0, 0, 0), domain=(4, 5, 2), global_origin=(4, 0), global_domain=(8, 5))
        assert (out == SENTINEL).all()
        # with a halo point it runs, and reads it
        out = np.full(A.shape, SENTINEL)
        st(A, out, origin=(4, 0, 0), domain=(4, 5, 2), global_origin=(4, 0), global_domain=(8, 5))
        expected = np.full(A.shape, SENTINEL)
        expected[4:] = A[3:7]
        np.testing.assert_array_equal(out, expected, err_msg=name)


def temp_in_region(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a * 2.0
        with horizontal(region[I[-1], :]):
            t = 0.0  # two writers: t stays a temporary (not computed on the fly)
        out = a
        with horizontal(region[I[1]:, :]):
            out = t[-1, 0, 0]


def test_a_region_reading_temporaries_beyond_its_analysis_is_refused(rng):
    """The temporary t is computed where the analysis placed region[I[1]:] (from the
    domain's second point); placed further left it would read t where it was never
    computed: the call is refused, before anything is written."""
    for name, st in backends(temp_in_region):
        A = rng.uniform(-1, 1, (10, 4, 2))
        out = np.full(A.shape, SENTINEL)
        with pytest.raises(ValueError, match="line .*global_origin 2 of global_domain 8 along I"):
            st(A, out, origin=(1, 0, 0), domain=(4, 4, 2), global_origin=(2, 0), global_domain=(8, 4))
        assert (out == SENTINEL).all(), name
        # the part holding the grid's first point is placed as analysed: it runs
        st(A, out, origin=(1, 0, 0), domain=(4, 4, 2), global_origin=(0, 0), global_domain=(8, 4))
        expected = np.full(A.shape, SENTINEL)
        expected[1] = A[1]
        expected[2:5] = 2.0 * A[1:4]
        np.testing.assert_array_equal(out, expected, err_msg=name)


def test_cuda_source_places_regions_at_run_time():
    """The CUDA C reads the anchors from the launch's domain array (no rank, origin or grid
    size is compiled in), and NVRTC compiles it."""
    st = gtscript.stencil("cuda", edges)
    src = st.source()
    for k in range(4, 8):
        assert f"gt_domain[{k}]" in src
    ptx = st._cuda_ptx("sm_80")
    assert ".target sm_80" in ptx


def edge_temps(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a[1, 0, 0] - a[-1, 0, 0]
        with horizontal(region[I[-1], :]):
            t = a  # two writers: t stays a temporary
        out = t + a[0, 1, 0]
        with horizontal(region[I[0], :]):
            out = t[1, 0, 0]
        with horizontal(region[I[-1], J[0]:J[2]]):
            out = t[-1, 0, 0] + 1.0


def edge_temps_numpy(A):
    ni, nj, _ = NG
    sh = lambda di, dj: A[H + di:H + di + ni, H + dj:H + dj + nj]
    t = A[H + 1:H + ni + 2, H:H + nj] - A[H - 1:H + ni, H:H + nj]  # t on I in [0, ni + 1)
    t[ni - 1] = sh(0, 0)[ni - 1]  # the grid's last column
    out = t[:ni] + sh(0, 1)
    out[0] = t[1]
    out[-1, 0:2] = t[ni - 2, 0:2] + 1.0
    return out


@pytest.mark.parametrize("defn, reference", [(edges, edges_numpy), (edge_temps, edge_temps_numpy)])
def test_every_placement_of_a_part_matches_the_whole_grid(rng, defn, reference):
    """Every part of the grid, of a few sizes, at every position: cut out with its halo and
    called with its placement, it computes the whole grid's values there (regions reading
    temporaries at the grid's edges included: such parts are placed as analysed, or the
    regions miss them)."""
    A = rng.uniform(-1, 1, (NG[0] + 2 * H, NG[1] + 2 * H, NG[2]))
    full = reference(A)
    for name, st in backends(defn):
        for n in ((3, 2), (4, 9), (11, 1), (2, 5)):
            for gi in range(NG[0] - n[0] + 1):
                for gj in range(NG[1] - n[1] + 1):
                    a = A[gi:gi + n[0] + 2 * H, gj:gj + n[1] + 2 * H]
                    out = np.full(a.shape, SENTINEL)
                    st(a, out, origin=(H, H, 0), domain=(*n, NG[2]), global_origin=(gi, gj),
                       global_domain=NG[:2])
                    expected = np.full(a.shape, SENTINEL)
                    expected[H:H + n[0], H:H + n[1]] = full[gi:gi + n[0], gj:gj + n[1]]
                    np.testing.assert_array_equal(out, expected, err_msg=f"{name} {n} {gi} {gj}")
