"""C-order rows joined (csrc/backend/cpu/codegen.c, "C-order rows joined").

Where every array a PARALLEL nest touches has its K rows back to back (J stride equal to the
rows' length), the nest runs each I row's J columns as one loop along K. Checked here against
the numpy backend and hand-written NumPy, with sentinel margins on every side (K included,
where a wrongly joined run would write): contiguous arrays (joined), views cut in K, arrays
of which only some are contiguous, sub-intervals, temporaries whose rows are padded, many
tiles, regions; and which nests may join at all (not with K as a value, 2-D fields, variable
K offsets).
"""

import numpy as np
import pytest

import gtscript
from gtscript import IJ, PARALLEL, Field, I, J, K, computation, horizontal, interval, region

SENTINEL = -55.0


def smooth(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        tmp = inp[1, 0, 0] + inp[0, -1, 0]
        out = 0.5 * tmp + inp


def np_smooth(inp):
    return 0.5 * (inp[2:, 1:-1] + inp[1:-1, :-2]) + inp[1:-1, 1:-1]


def in_k(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(1, -1):
        out = inp[0, 0, -1] + 2.0 * inp[0, 0, 1] - inp[1, 1, 0]


def in_k_numpy(inp, out):
    out[1:-1, 1:-1, 1:-1] = inp[1:-1, 1:-1, :-2] + 2.0 * inp[1:-1, 1:-1, 2:] - inp[2:, 2:, 1:-1]


def framed(values, cut_k=True):
    """A C-order view of `values` inside a buffer holding SENTINEL around it in I and J, and
    in K when `cut_k` (its rows then no longer back to back: they do not join)."""
    k = 2 if cut_k else 0
    big = np.full((values.shape[0] + 4, values.shape[1] + 4, values.shape[2] + 2 * k), SENTINEL)
    view = big[2:-2, 2:-2, k:k + values.shape[2]]
    view[...] = values
    return view


@pytest.mark.parametrize("tile", [None, "1x1", "3x2", "4x7"])
@pytest.mark.parametrize("nk", [1, 5, 13, 80])
def test_joined_and_row_by_row_agree_with_numpy(monkeypatch, rng, fields, tile, nk):
    if tile:
        monkeypatch.setenv("GTSCRIPT_TILE_SIZE", tile)
    else:
        monkeypatch.delenv("GTSCRIPT_TILE_SIZE", raising=False)
    shape = (9, 8, nk)
    inp = rng.random(shape)
    want = np_smooth(inp)
    ref = np.zeros(shape)
    gtscript.stencil("numpy", smooth)(inp, ref, origin=(1, 1, 0), domain=(7, 6, nk))
    np.testing.assert_array_equal(ref[1:-1, 1:-1], want)
    stencil = gtscript.stencil("cpu", smooth)
    # contiguous rows (joined), K cut views (row by row), and one of each
    for kind in ("joined", "cut", "mixed"):
        vin = framed(inp, cut_k=kind == "cut")
        vout = framed(np.zeros(shape), cut_k=kind != "joined")
        stencil(vin, vout, origin=(1, 1, 0), domain=(7, 6, nk))
        np.testing.assert_array_equal(vout[1:-1, 1:-1], want)
        assert np.all(vout[[0, -1]] == 0) and np.all(vout[:, [0, -1]] == 0)
        np.testing.assert_array_equal(vin, inp)
        for view in (vin, vout):
            fields.assert_view_padding_untouched(view, SENTINEL)


def test_a_sub_interval_runs_row_by_row(rng, fields):
    shape = (7, 9, 12)
    inp = rng.random(shape)
    want = np.zeros(shape)
    in_k_numpy(inp, want)
    out = framed(np.zeros(shape), cut_k=False)
    gtscript.stencil("cpu", in_k)(inp, out, origin=(1, 1, 0), domain=(5, 7, 12))
    np.testing.assert_array_equal(out[:-1, :-1], want[:-1, :-1])
    fields.assert_view_padding_untouched(out, SENTINEL)


def test_regions_join_within_their_box(rng, fields):
    def edges(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp
            with horizontal(region[I[0], :], region[:, J[-1]]):
                out = 2.0 * inp

    shape = (6, 7, 16)
    inp = rng.random(shape)
    want = inp.copy()
    want[0] *= 2.0
    want[1:, -1] *= 2.0
    out = framed(np.zeros(shape), cut_k=False)
    gtscript.stencil("cpu", edges)(inp, out)
    np.testing.assert_array_equal(out, want)
    fields.assert_view_padding_untouched(out, SENTINEL)


def test_which_nests_may_join():
    def uses_k(out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = K * 1.0

    def reads_a_plane(inp: Field[np.float64], plane: Field[IJ, np.float64],
                      out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp + plane

    assert "joined" in gtscript.stencil("cpu", smooth).source()
    for defn in (uses_k, reads_a_plane):
        assert "joined" not in gtscript.stencil("cpu", defn).source()


def test_k_as_a_value_and_planes_stay_right(rng):
    def uses_k(inp: Field[np.float64], plane: Field[IJ, np.float64],
               out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp * K + plane

    shape = (5, 6, 11)
    inp, plane = rng.random(shape), rng.random(shape[:2])
    out = np.zeros(shape)
    gtscript.stencil("cpu", uses_k)(inp, plane, out)
    np.testing.assert_array_equal(out, inp * np.arange(11) + plane[:, :, None])
