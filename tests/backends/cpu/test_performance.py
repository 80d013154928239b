"""The performance machinery must not change a single result.

Tiles (temporaries recomputed on their halos in tile-private buffers), threads, layout
variants (a kernel per unit-stride axis), column-wise K sweeps and cached call plans are
all checked against the numpy reference backend and hand-written NumPy. The speed itself
is measured in benchmarks/, never asserted here; what is asserted is that the optimised
code is what we think it is (vector instructions in the laplacian's inner loop).
"""

import os
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, horizontal, interval, region, I, J
from shared_stencils import np_hdiff, np_thomas
from shared_stencils import hdiff_defn, run_cpu_and_numpy
from shared_stencils import laplacian_defn as lap_defn

F64 = np.float64


def thomas_defn(a: Field[F64], b: Field[F64], c: Field[F64], d: Field[F64], x: Field[F64]):
    with computation(FORWARD):
        with interval(0, 1):
            c = c / b
            d = d / b
        with interval(1, None):
            m = 1.0 / (b - a * c[0, 0, -1])
            c = c * m
            d = (d - a * d[0, 0, -1]) * m
    with computation(BACKWARD):
        with interval(-1, None):
            x = d
        with interval(0, -1):
            x = d - c * x[0, 0, 1]


def forward_shifted_defn(inp: Field[F64], out: Field[F64]):
    # level by level: `t` is read with a horizontal offset in the computation that writes it
    with computation(FORWARD):
        with interval(0, 1):
            t = inp
            out = t[1, 0, 0] + t[0, -1, 0]
        with interval(1, None):
            t = inp + 0.5 * t[0, 0, -1]
            out = t[1, 0, 0] + t[0, -1, 0]


def regions_defn(inp: Field[F64], out: Field[F64]):
    with computation(PARALLEL), interval(...):
        tmp = 2.0 * inp
        out = tmp[1, 0, 0] - tmp[-1, 0, 0]
        with horizontal(region[I[0], :]):
            out = tmp[0, 1, 0]
        with horizontal(region[:, J[-1]]):
            out = -tmp[0, -1, 0]


def extended_write_defn(inp: Field[F64], mid: Field[F64], out: Field[F64]):
    # an argument written on an extended domain (read afterwards with an offset): one tile
    with computation(PARALLEL), interval(...):
        mid = 3.0 * inp
        out = mid[1, 0, 0] + mid[-1, 0, 0]


def _arrays(rng, shape, n, order="C"):
    return [np.asarray(rng.random(shape), order=order) for _ in range(n)]


def _np_lap(a):
    return -4.0 * a[1:-1, 1:-1] + a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2]


# ---------------------------------------------------------------------- vectorisation


def test_laplacian_inner_loop_is_vectorised():
    st = gtscript.stencil("cpu", lap_defn)
    ir = st.source()
    target = gtscript._core.target()["target"]
    # 512-bit vectors where the host has them (codegen.c asks for them), else AVX2's 256
    width = 8 if "+avx512f" in target else 4 if "+avx2" in target else 2
    if target.startswith("x86_64"):
        assert re.search(rf"load <{width} x double>", ir), "laplacian inner loop not vectorised"
        assert re.search(rf"store <{width} x double>", ir)
    else:
        assert re.search(r"<\d+ x double>", ir)


def test_temporaries_need_no_runtime_alias_checks():
    # tile-private temporaries are noalias: hdiff's stages vectorise without overlap checks
    # against the temporaries (argument fields may still be checked against each other)
    st = gtscript.stencil("cpu", hdiff_defn)
    assert st.source().count("vector.memcheck") <= 6


# ---------------------------------------------------------------------- tiles


@pytest.mark.parametrize("tile", ["1x1", "3x2", "5x7", "64x64"])
@pytest.mark.parametrize(
    "defn, n", [(hdiff_defn, 3), (thomas_defn, 5), (forward_shifted_defn, 2), (regions_defn, 2)])
def test_any_tile_size_gives_the_reference_result(monkeypatch, rng, tile, defn, n):
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", tile)
    arrays = _arrays(rng, (13, 11, 6), n)
    if defn is thomas_defn:
        arrays[1] += 4.0
    got, want = run_cpu_and_numpy(defn, arrays)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_tiles_against_hand_written_numpy(monkeypatch, rng):
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", "3x4")
    inp, coeff = _arrays(rng, (17, 14, 5), 2)
    out = np.zeros_like(inp)
    gtscript.stencil("cpu", hdiff_defn, rebuild=True)(inp, coeff, out)
    np.testing.assert_allclose(out[2:-2, 2:-2], np_hdiff(inp, coeff), rtol=1e-13, atol=1e-13)
    assert not out[:2].any() and not out[-2:].any() and not out[:, :2].any()


def test_extended_argument_writes_run_as_one_tile(monkeypatch, rng):
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", "2x2")
    inp, mid, out = _arrays(rng, (12, 9, 4), 3)
    got, want = run_cpu_and_numpy(extended_write_defn, [inp, mid, out])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_allclose(got[2][1:-1, :], 3.0 * (inp[2:] + inp[:-2]), rtol=1e-14)


# ---------------------------------------------------------------------- layouts


@pytest.mark.parametrize("layout", ["C", "F", "sliced", "k-strided"])
def test_layout_variants(rng, layout):
    shape = (14, 12, 7)

    def make():
        base = rng.random(shape)
        if layout == "F":
            return np.asfortranarray(base)
        if layout == "sliced":
            big = np.zeros((shape[0] + 3, shape[1] + 2, shape[2] + 4))
            view = big[2:2 + shape[0], 1:1 + shape[1], 3:3 + shape[2]]
            view[...] = base
            return view
        if layout == "k-strided":
            big = np.zeros(shape[:2] + (2 * shape[2],))
            view = big[:, :, ::2]
            view[...] = base
            return view
        return base

    inp, coeff, out = make(), make(), make()
    before = out.copy()
    gtscript.stencil("cpu", hdiff_defn)(inp, coeff, out)
    np.testing.assert_allclose(out[2:-2, 2:-2], np_hdiff(np.asarray(inp), np.asarray(coeff)),
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(out[:2], before[:2])
    a, b, c, d, x = make(), make(), make(), make(), make()
    b += 4.0
    want = np_thomas(np.asarray(a), np.asarray(b), np.asarray(c), np.asarray(d))
    gtscript.stencil("cpu", thomas_defn)(a, b, c, d, x)
    np.testing.assert_allclose(x, want, rtol=1e-12)


def test_mixed_layouts_in_one_call(rng):
    inp = np.asfortranarray(rng.random((10, 9, 5)))
    out = np.zeros((10, 9, 5))
    gtscript.stencil("cpu", lap_defn)(inp, out)
    np.testing.assert_allclose(out[1:-1, 1:-1], _np_lap(inp), rtol=1e-14)


# ---------------------------------------------------------------------- plans and threads


def test_plans_follow_the_domain(rng):
    st = gtscript.stencil("cpu", hdiff_defn)
    for shape in [(12, 10, 4), (20, 7, 3), (12, 10, 4), (9, 9, 9)]:
        inp, coeff = _arrays(rng, shape, 2)
        out = np.zeros(shape)
        st(inp, coeff, out)
        np.testing.assert_allclose(out[2:-2, 2:-2], np_hdiff(inp, coeff), rtol=1e-13, atol=1e-13)


def test_concurrent_calls_from_python_threads(rng):
    st = gtscript.stencil("cpu", hdiff_defn)
    inputs = [_arrays(rng, (40, 36, 24), 2) for _ in range(4)]
    outs = [np.zeros((40, 36, 24)) for _ in range(4)]
    errors = []

    def work(t):
        try:
            for _ in range(5):
                st(inputs[t][0], inputs[t][1], outs[t])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for (inp, coeff), out in zip(inputs, outs):
        np.testing.assert_allclose(out[2:-2, 2:-2], np_hdiff(inp, coeff), rtol=1e-13, atol=1e-13)


_THREAD_SCRIPT = textwrap.dedent("""
    import sys, numpy as np
    sys.path[:0] = [{here!r}, {tests!r}]
    import gtscript
    from test_performance import hdiff_defn, thomas_defn
    rng = np.random.default_rng(7)
    shape = (48, 40, 24)
    inp, coeff = rng.random(shape), rng.random(shape)
    out = np.zeros(shape)
    gtscript.stencil("cpu", hdiff_defn)(inp, coeff, out)
    a, b, c, d = (rng.random(shape) for _ in range(4))
    x = np.zeros(shape)
    gtscript.stencil("cpu", thomas_defn)(a, b + 4.0, c, d, x)
    np.save(sys.argv[1], np.stack([out, x]))
""")


def test_thread_count_does_not_change_results(tmp_path):
    results = []
    for n in ("1", "3"):
        path = tmp_path / f"out{n}.npy"
        env = dict(os.environ, GTSCRIPT_NUM_THREADS=n, GTSCRIPT_TILE_SIZE="5x6")
        here = os.path.dirname(os.path.abspath(__file__))
        script = _THREAD_SCRIPT.format(here=here, tests=os.path.dirname(os.path.dirname(here)))
        subprocess.run([sys.executable, "-c", script, str(path)], env=env, check=True)
        results.append(np.load(path))
    np.testing.assert_array_equal(results[0], results[1])


# ---------------------------------------------------------------------- the plan in exec_info


@pytest.mark.parametrize("order, layout", [("C", "C"), ("F", "F")])
@pytest.mark.parametrize("shape", [(13, 11, 6), (9, 7, 37)])
def test_tile_buffers_start_their_interior_on_a_cache_line(rng, order, layout, shape):
    # the seeds' block-private temporaries, first interior point aligned, whatever the sizes
    inp, out = _arrays(rng, shape, 2, order)
    info = {}
    gtscript.stencil("cpu", forward_shifted_defn)(inp, out, origin=(0, 1, 0),
                                                  domain=(shape[0] - 1, shape[1] - 1, shape[2]),
                                                  exec_info=info)
    plan = info["plan"]
    assert plan["layout"] == layout and not plan["shared_memory"]
    assert plan["temporaries"]["t"] == {"buffer": "tile", "aligned": True}
    assert plan["threads"] >= 1 and all(n >= 1 for n in plan["tile"])


def point_wise_defn(inp: Field[F64], out: Field[F64]):
    with computation(PARALLEL), interval(...):
        out = 2.0 * inp + 1.0


def test_plan_reports_bundle_buffers_and_shared_memory(rng):
    a, b, c, d, x = _arrays(rng, (6, 9, 5), 5)
    b += 4.0
    info = {}
    gtscript.stencil("cpu", thomas_defn)(a, b, c, d, x, exec_info=info)
    # the solver's temporary `m` lives only inside each column's sweep and is written before it
    # is read at each level: in C order the sweep keeps it in a register, no buffer at all
    # (test_register_temporaries.py); in Fortran order, level by level, a tile buffer
    assert info["plan"]["layout"] == "C"
    assert info["plan"]["temporaries"]["m"]["buffer"] == "register"
    af, bf, cf, df, xf = (np.asfortranarray(v) for v in (a, b, c, d, x))
    gtscript.stencil("cpu", thomas_defn)(af, bf, cf, df, xf, exec_info=info)
    assert info["plan"]["layout"] == "F"
    assert info["plan"]["temporaries"]["m"]["buffer"] == "tile"
    st = gtscript.stencil("cpu", point_wise_defn)
    y = rng.random((6, 9, 5))
    st(y, np.zeros_like(y), exec_info=info)
    assert info["plan"]["shared_memory"] is False
    st(y, y, exec_info=info)  # an in-place update: the kernel variant without noalias fields
    assert info["plan"]["shared_memory"] is True


def test_rows_are_cut_so_a_read_window_stays_in_cache(rng):
    # hdiff reads rows i-2..i+2 of `inp`: a tile's J extent is cut so that the window of rows
    # (times the K columns) fits the cache, instead of whole rows of 600 columns
    inp, coeff = _arrays(rng, (12, 600, 80), 2)
    out = np.zeros_like(inp)
    info = {}
    gtscript.stencil("cpu", hdiff_defn)(inp, coeff, out, exec_info=info)
    ti, tj = info["plan"]["tile"]
    assert 16 <= tj < 300
    np.testing.assert_allclose(out[2:-2, 2:-2], np_hdiff(inp, coeff), rtol=1e-13, atol=1e-13)
