"""Streaming (non-temporal) stores into the fields a stencil only writes
(csrc/backend/cpu/stream.c, docs/performance.md#streaming-stores).

With streaming on, the kernel writes such a field with non-temporal stores: aligned vectors
whole, the elements around them (the start and end of each unit-stride row, and any row
that is not aligned) one by one. Checked here: the bits equal the numpy backend's and
hand-written NumPy's with streaming on and off, for every dtype that streams, both layouts,
rows of every alignment relative to a cache line, views with sentinel margins, odd row
lengths, two outputs of different alignment, and several threads; which fields stream (read
fields and 1- or 2-byte fields never do); what exec_info["plan"] says; and the tuner
measuring streaming on and off on a domain whose outputs do not fit the L2 caches.
"""

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval

SENTINEL = -77
MARGIN = 2


def defn_lap(dtype):
    def lap(inp: Field[dtype], out: Field[dtype]):
        with computation(PARALLEL), interval(...):
            out = inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0] - 4 * inp
    return lap


def np_lap(inp):
    return inp[2:, 1:-1] + inp[:-2, 1:-1] + inp[1:-1, 2:] + inp[1:-1, :-2] - 4 * inp[1:-1, 1:-1]


def two_outputs(a: Field[np.float64], b: Field[np.float64], c: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = 2.0 * a
        c = a + 1.0


def placed(values, order, shift_bytes):
    """(buffer, view): `values` in a view whose first element sits `shift_bytes` past a
    64-byte boundary (plus whole elements of margin), inside a buffer whose margins on every
    side hold SENTINEL."""
    dt = values.dtype
    outer = tuple(n + 2 * MARGIN for n in values.shape)
    count = int(np.prod(outer))
    raw = np.empty(count * dt.itemsize + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + shift_bytes
    flat = raw[start:start + count * dt.itemsize].view(dt)
    big = flat.reshape(outer, order=order)
    big[...] = SENTINEL
    view = big[MARGIN:-MARGIN, MARGIN:-MARGIN, MARGIN:-MARGIN]
    view[...] = values
    return big, view


def margins_untouched(big):
    inside = np.zeros(big.shape, bool)
    inside[MARGIN:-MARGIN, MARGIN:-MARGIN, MARGIN:-MARGIN] = True
    return bool(np.all(big[~inside] == SENTINEL))


def call(stencil, arrays, **kw):
    info = {}
    stencil(*arrays, exec_info=info, **kw)
    return info["plan"]


@pytest.fixture
def streaming(monkeypatch):
    def set_to(on):
        monkeypatch.setenv("GTSCRIPT_STREAMING_STORES", "1" if on else "0")
    monkeypatch.delenv("GTSCRIPT_AUTOTUNE_MIN_MS", raising=False)
    return set_to


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shift", [0, 4, 8, 16, 40, 60])
def test_streamed_output_equals_numpy_and_plain(streaming, rng, dtype, order, shift):
    shift -= shift % np.dtype(dtype).itemsize  # whole elements: NumPy's aligned arrays
    shape = (13, 11, 37)  # rows of 37 (C) and 13 (F): every row starts elsewhere in its line
    inp = (rng.random(shape) * 100).astype(dtype)
    want = np_lap(inp)
    ref = np.zeros(shape, dtype)
    gtscript.stencil("numpy", defn_lap(dtype))(inp, ref, origin=(1, 1, 0), domain=(11, 9, 37))
    np.testing.assert_array_equal(ref[1:-1, 1:-1], want)
    stencil = gtscript.stencil("cpu", defn_lap(dtype))
    for on in (True, False):
        streaming(on)
        big_in, vin = placed(inp, order, shift)
        big_out, vout = placed(np.zeros(shape, dtype), order, shift)
        # each setting on a domain of its own: the plan of a (stencil, domain) is kept
        domain = (11, 9, 37) if on else (11, 9, 36)
        plan = call(stencil, [vin, vout], origin=(1, 1, 0), domain=domain)
        assert plan["streaming_stores"] is on and plan["streaming_stores_why"] == "env"
        np.testing.assert_array_equal(vout[1:-1, 1:-1, :domain[2]], want[..., :domain[2]])
        assert np.all(vout[1:-1, 1:-1, domain[2]:] == 0)
        assert np.all(vout[[0, -1]] == 0) and np.all(vout[:, [0, -1]] == 0)
        np.testing.assert_array_equal(vin, inp)
        assert margins_untouched(big_in) and margins_untouched(big_out)


@pytest.mark.parametrize("nk", [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65])
def test_rows_of_every_length(streaming, rng, nk):
    streaming(True)
    shape = (6, 5, nk)
    inp = rng.random(shape)
    stencil = gtscript.stencil("cpu", defn_lap(np.float64))
    for shift in (0, 8, 24, 56):
        big, out = placed(np.zeros(shape), "C", shift)
        assert call(stencil, [inp, out], origin=(1, 1, 0), domain=(4, 3, nk))["streaming_stores"]
        np.testing.assert_array_equal(out[1:-1, 1:-1], np_lap(inp))
        assert margins_untouched(big)


def test_two_outputs_of_different_alignment(streaming, rng):
    streaming(True)
    shape = (9, 10, 29)
    a = rng.random(shape)
    stencil = gtscript.stencil("cpu", two_outputs)
    for sb, sc in [(0, 8), (8, 40), (56, 16), (24, 24)]:
        bb, b = placed(np.zeros(shape), "C", sb)
        bc, c = placed(np.zeros(shape), "C", sc)
        assert call(stencil, [a, b, c])["streaming_stores"]
        np.testing.assert_array_equal(b, 2.0 * a)
        np.testing.assert_array_equal(c, a + 1.0)
        assert margins_untouched(bb) and margins_untouched(bc)


def test_many_tiles_on_several_threads(streaming, monkeypatch, rng):
    streaming(True)
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", "5x3")  # dozens of tiles, rows cut mid-line
    shape = (40, 33, 45)
    inp = rng.random(shape)
    big, out = placed(np.zeros(shape), "C", 8)
    stencil = gtscript.stencil("cpu", defn_lap(np.float64))
    for _ in range(3):
        plan = call(stencil, [inp, out], origin=(1, 1, 0), domain=(38, 31, 45))
        assert plan["streaming_stores"] and tuple(plan["tile"]) == (5, 3)
        np.testing.assert_array_equal(out[1:-1, 1:-1], np_lap(inp))
        assert margins_untouched(big)


def test_which_fields_stream():
    def reads_its_output(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = out + inp

    def small_ints(inp: Field[np.float64], out: Field[np.int16], flag: Field[np.bool_]):
        with computation(PARALLEL), interval(...):
            out = inp
            flag = inp > 0.5

    streamed = gtscript.stencil("cpu", defn_lap(np.float64)).source()
    assert "!nontemporal" in streamed and "movntiq" in streamed and "sfence" in streamed
    f32 = gtscript.stencil("cpu", defn_lap(np.float32)).source()
    assert "!nontemporal" in f32 and "movntil" in f32
    for defn in (reads_its_output, small_ints):
        text = gtscript.stencil("cpu", defn).source()
        assert "nontemporal" not in text and "movnti" not in text and "sfence" not in text


def test_plan_of_a_stencil_without_streamed_fields(rng):
    def in_place(a: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            a = a * 2.0

    a = rng.random((4, 4, 4))
    want = a * 2.0
    plan = call(gtscript.stencil("cpu", in_place), [a])
    assert plan["streaming_stores"] is False and plan["streaming_stores_why"] == "none"
    np.testing.assert_array_equal(a, want)


def test_small_outputs_never_stream(monkeypatch, rng):
    monkeypatch.delenv("GTSCRIPT_STREAMING_STORES", raising=False)
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE_MIN_MS", "0")
    inp = rng.random((10, 10, 10))
    out = np.zeros_like(inp)
    stencil = gtscript.stencil("cpu", defn_lap(np.float64))
    for _ in range(12):
        plan = call(stencil, [inp, out], origin=(1, 1, 0), domain=(8, 8, 10))
        assert plan["streaming_stores"] is False
        assert plan["streaming_stores_why"] == "model: outputs fit the L2 caches"
        # nothing to measure: no candidate streams
        assert all(not c["streaming_stores"] for c in plan["tuning"]["candidates"])
    np.testing.assert_array_equal(out[1:-1, 1:-1], np_lap(inp))


def test_tuner_measures_streaming_on_large_outputs(monkeypatch, rng):
    """Outputs beyond the threads' L2 caches: the tuner runs the fastest plan with streaming
    toggled, and every call, whichever way it stored, gives the same bits."""
    monkeypatch.delenv("GTSCRIPT_STREAMING_STORES", raising=False)
    monkeypatch.delenv("GTSCRIPT_TILE_SIZE", raising=False)
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE_MIN_MS", "0")
    stencil = gtscript.stencil("cpu", defn_lap(np.float64))
    probe = np.zeros((40, 40, 40))
    facts = call(stencil, [probe.copy(), probe], origin=(1, 1, 0), domain=(38, 38, 40))
    threads = facts["threads"]
    l2 = facts["machine"]["l2_bytes"] or 1 << 20
    # an output of about 1.5 times the L2 caches of the threads a large call uses
    nk = 64
    side = int(np.sqrt(1.5 * l2 * max(threads, 1) / (8 * nk))) + 3
    shape = (side, side, nk)
    inp = rng.random(shape)
    want = np_lap(inp)
    big, out = placed(np.zeros(shape), "C", 16)
    seen = set()
    for _ in range(16):
        plan = call(stencil, [inp, out], origin=(1, 1, 0), domain=(side - 2, side - 2, nk))
        seen.add(plan["streaming_stores"])
        np.testing.assert_array_equal(out[1:-1, 1:-1], want)
        assert margins_untouched(big)
    tuning = plan["tuning"]
    assert tuning["state"] == "measured"
    assert {c["streaming_stores"] for c in tuning["candidates"]} == {True, False}
    assert seen == {True, False}  # both ran
    chosen = tuning["candidates"][tuning["chosen"]]
    assert plan["streaming_stores"] is chosen["streaming_stores"]
    word = "streaming" if chosen["streaming_stores"] else "plain"
    assert plan["streaming_stores_why"].startswith(f"measured: {word} of ")


def test_elements_off_their_natural_alignment(streaming, rng):
    """An array whose data starts an odd number of bytes into its buffer (NumPy marks it not
    aligned): no vector is ever aligned there, every element is written by movnti."""
    streaming(True)
    shape = (7, 6, 21)
    inp = rng.random(shape)
    raw = np.full(8 * (int(np.prod(shape)) + 2 * 64) + 64, 0x5A, np.uint8)
    start = (-raw.ctypes.data) % 64 + 64 + 3
    out = raw[start:start + 8 * int(np.prod(shape))].view(np.float64).reshape(shape)
    assert not out.flags.aligned
    out[...] = 0.0
    plan = call(gtscript.stencil("cpu", defn_lap(np.float64)), [inp, out], origin=(1, 1, 0),
                domain=(5, 4, 21))
    assert plan["streaming_stores"]
    np.testing.assert_array_equal(out[1:-1, 1:-1], np_lap(inp))
    assert np.all(out[[0, -1]] == 0) and np.all(out[:, [0, -1]] == 0)
    assert np.all(raw[:start] == 0x5A) and np.all(raw[start + out.nbytes:] == 0x5A)
