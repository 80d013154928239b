"""A horizontal region reading a temporary at a horizontal offset, computed tile by tile (cpu
tiles, cuda thread blocks) on tiles smaller than the domain: per-region extents size the
temporary for what the regions read of the whole domain, but a tile reads its neighbour's
points at its edge, so each tile computes the temporary on the halo its readers need
(inside the analysed extent; analysis/tiles.c). cpu with many tiles, emulated cuda (several
block sizes, both thread mappings) and numpy against hand-written NumPy, with
sentinel-filled margins; NVRTC compiles the source."""

import numpy as np
import pytest
from cuda_emulation.runner import emulate, require_compiler

import gtscript
from gtscript import PARALLEL, Field, I, J, computation, horizontal, interval, region

H = 2
N = (10, 7, 3)
SENTINEL = -7777.0
BLOCKS = [(4, 2), (8, 8), (16, 16), (32, 4), (3, 5)]


# each temporary has two writers, so it is stored, not computed on the fly at its reads
def left(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a * 2.0
        with horizontal(region[I[-1], :]):
            t = 0.0
        out = a
        with horizontal(region[I[1]:, :]):
            out = t[-1, 0, 0]


def left_numpy(c, A):
    t = 2.0 * c
    t[-1] = 0.0
    out = c.copy()
    out[1:] = t[:-1]
    return out


def up_j(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a + 1.0
        with horizontal(region[:, J[-1]]):
            t = -a
        out = a * 0.5
        with horizontal(region[:, :J[-1]]):
            out = t[0, 1, 0]


def up_j_numpy(c, A):
    t = c + 1.0
    t[:, -1] = -c[:, -1]
    out = 0.5 * c
    out[:, :-1] = t[:, 1:]
    return out


def middle(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a - 1.0
        with horizontal(region[I[0], :]):
            t = 5.0
        out = a
        with horizontal(region[I[2]:I[5], J[1]:]):
            out = t[-1, -1, 0] + t[1, 0, 0]


def middle_numpy(c, A):
    t = c - 1.0
    t[0] = 5.0
    out = c.copy()
    out[2:5, 1:] = t[1:4, :-1] + t[3:6, 1:]
    return out


def chain(a: Field[np.float64], out: Field[np.float64]):
    """A temporary read at an offset by another one, which a region reads at an offset."""
    with computation(PARALLEL), interval(...):
        t = a * 3.0
        with horizontal(region[I[-1], :]):
            t = a
        u = t[1, 0, 0] - a
        with horizontal(region[:, J[0]]):
            u = 0.0
        out = a
        with horizontal(region[:, J[2]:]):
            out = u[0, -1, 0] + u[0, -2, 0]


def chain_numpy(c, A):
    ni, nj, _ = N
    ce = A[H:H + ni + 1, H:H + nj]  # t is computed one point beyond the domain's end in I
    t = 3.0 * ce
    t[ni - 1] = ce[ni - 1]
    u = t[1:] - c
    u[:, 0] = 0.0
    out = c.copy()
    out[:, 2:] = u[:, 1:-1] + u[:, :-2]
    return out


CASES = {"left": (left, left_numpy), "up_j": (up_j, up_j_numpy), "middle": (middle, middle_numpy),
         "chain": (chain, chain_numpy)}


def run(st, A, layout):
    a = A.copy(order=layout)
    out = np.full(A.shape, SENTINEL, order=layout)
    st(a, out, origin=(H, H, 0), domain=N)
    np.testing.assert_array_equal(a, A)
    return out


def expected_of(hand, A):
    exp = np.full(A.shape, SENTINEL)
    exp[H:H + N[0], H:H + N[1]] = hand(A[H:H + N[0], H:H + N[1]], A)
    return exp


@pytest.mark.parametrize("tile", ["3x2", "4x4", "1x7", "10x1", "2x3"])
@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("layout", ["C", "F"])
def test_cpu_tiles_read_region_temporaries_across_tiles(rng, monkeypatch, name, layout, tile):
    defn, hand = CASES[name]
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", tile)
    A = rng.uniform(-1, 1, (N[0] + 2 * H, N[1] + 2 * H, N[2]))
    st = gtscript.stencil("cpu", defn)
    out = run(st, A, layout)
    np.testing.assert_array_equal(out, expected_of(hand, A), err_msg=f"cpu tiles {tile}")


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("layout", ["C", "F"])
def test_cuda_blocks_read_region_temporaries_across_tiles(rng, name, layout):
    defn, hand = CASES[name]
    A = rng.uniform(-1, 1, (N[0] + 2 * H, N[1] + 2 * H, N[2]))
    expected = expected_of(hand, A)
    reference = run(gtscript.stencil("numpy", defn), A, layout)
    np.testing.assert_array_equal(reference, expected, err_msg="numpy")
    np.testing.assert_array_equal(run(gtscript.stencil("cpu", defn), A, layout), expected, err_msg="cpu")
    require_compiler()
    for block in BLOCKS:
        for reverse in (False, True):
            st = emulate(gtscript.stencil("cuda", defn), block, reverse=reverse)
            np.testing.assert_array_equal(run(st, A, layout), reference, err_msg=f"cuda {block} {reverse}")


# the halo (I, J) of each temporary's shared-memory tile (8-byte points, each tile 16-byte
# aligned): what its block reads beyond the tile, though the analysed extents (clipped to
# what the regions read of the domain) have none on these sides
HALOS = {"left": [(1, 0)], "up_j": [(0, 1)], "middle": [(2, 1)], "chain": [(1, 2), (0, 2)]}


@pytest.mark.parametrize("name", CASES)
def test_the_tiles_hold_the_halo_and_nvrtc_compiles_the_source(name):
    st = gtscript.stencil("cuda", CASES[name][0])
    info = st._cuda_info()
    bi, bj = info["block"]
    assert set(info["storage"].values()) == {"shared"}
    tiles = [(8 * (bi + x) * (bj + y) + 15) // 16 * 16 for x, y in HALOS[name]]
    assert info["kernels"][0]["shared_bytes"] == sum(tiles)
    assert ".target sm_80" in st._cuda_ptx("sm_80")
