"""Column blocks: C-order column sweeps through a column-fastest scratch copy.

In C order a column group's fields are copied, a block of columns at a time, into a scratch
buffer where one level of the block is contiguous (w x w tiles transposed in registers, the
edges element by element); the sweeps then run level by level with the columns innermost, and
the fields the group wrote are copied back (csrc/backend/cpu/blocks.c, columns.c). The plan
chooses blocks or the former bundles per call (`GTSCRIPT_COLUMN_BLOCKS=0/1` forces either).
Nothing of that may change a result: every case is compared bit for bit with the numpy
backend, between blocks and bundles, and the solver also with hand-written NumPy, on sizes
that leave partial blocks and partial tiles (J not a multiple of the block or the vector
width, K not a multiple of the vector width, K from 1 level), in float32, float64 and int32,
with sentinel margins around the domain.
"""

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, K, computation, exp, interval
from shared_stencils import tridiagonal_solver

F64, F32, I32 = np.float64, np.float32, np.int32

thomas64, thomas32 = tridiagonal_solver(F64), tridiagonal_solver(F32)


def make_advection(dtype):
    def advection(q: Field[dtype], w: Field[dtype], out: Field[dtype], dt: dtype):
        # a column-local implicit sweep, then a PARALLEL clip in the same column loop; `out`
        # is only written (in place), q and w are read at their own column
        with computation(FORWARD):
            with interval(0, 1):
                qn = q / (1.0 + dt * w)
            with interval(1, None):
                qn = (q + dt * w[0, 0, -1] * qn[0, 0, -1]) / (1.0 + dt * w)
        with computation(PARALLEL), interval(...):
            out = qn if qn > 0.5 else 0.0

    return advection


advection64, advection32 = make_advection(F64), make_advection(F32)


def int_scan(a: Field[I32], out: Field[I32]):
    # int32 through the vector copies; a guarded write and a while loop in the block
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            out = out[0, 0, -1] + a
            if a > 50:
                out = out - 7
    with computation(BACKWARD), interval(0, -1):
        t = out[0, 0, 1] // 3
        while t > 100:
            t = t - 100
        out = out + t


def shifted_reader(a: Field[F64], b: Field[F64], out: Field[F64]):
    # `b` is read at a horizontal offset: it stays in place, `a` goes through the scratch
    with computation(FORWARD):
        with interval(0, 1):
            out = a + b[1, 0, 0]
        with interval(1, None):
            out = 0.5 * out[0, 0, -1] + a - b[0, 1, 0]


def scale(a: Field[F64], out: Field[F64]):
    # any number of levels, from 1; no value crosses a level, so the FORWARD computation runs
    # as PARALLEL (schedule.c): no column group, no blocks, the same bits
    with computation(FORWARD), interval(...):
        t = 2.0 * a
        out = t + a * a


def guarded_out(a: Field[F64], out: Field[F64]):
    # `out` is only written, under a condition (the sentinel stays where the condition is
    # false); as `scale`, it runs as PARALLEL
    with computation(FORWARD), interval(...):
        if a > 0.5:
            out = 2.0 * a


def partial_out(a: Field[F32], out: Field[F32]):
    # written on levels [1, nk - 1) only: the first and last keep the sentinel
    with computation(FORWARD):
        with interval(0, 1):
            t = a
        with interval(1, -1):
            t = 0.5 * t[0, 0, -1] + a
            out = t


def flux_sweep(q: Field[F64], u: Field[F64], v: Field[F64], out: Field[F64]):
    # temporaries computed on a halo, read at horizontal offsets by the column group: one
    # scratch buffer per offset
    with computation(PARALLEL), interval(...):
        fx = u * q[-1, 0, 0]
        fy = v * q[0, -1, 0]
    with computation(FORWARD):
        with interval(0, 1):
            qn = q - (fx[1, 0, 0] - fx) - (fy[0, 1, 0] - fy)
        with interval(1, None):
            qn = 0.5 * qn[0, 0, -1] + q - (fx[1, 0, 0] - fx) - (fy[0, 1, 0] - fy)
    with computation(PARALLEL), interval(...):
        out = qn if qn > 0.0 else 0.0


def backward_reads_below(a: Field[F64], x: Field[F64]):
    # x is written on every level, but each level reads the level below before the sweep has
    # written it: the old values must be copied in
    with computation(BACKWARD):
        with interval(1, None):
            x = a + 0.5 * x[0, 0, -1]
        with interval(0, 1):
            x = a


def forward_reads_below(a: Field[F64], x: Field[F64]):
    # every level read was written earlier in the sweep: no copy in needed
    with computation(FORWARD):
        with interval(0, 1):
            x = a
        with interval(1, None):
            x = a + 0.5 * x[0, 0, -1]


CASES = {
    "thomas64": (thomas64, F64, ("a", "b", "c", "d"), ("x",)),
    "thomas32": (thomas32, F32, ("a", "b", "c", "d"), ("x",)),
    "advection64": (advection64, F64, ("q", "w"), ("out",)),
    "advection32": (advection32, F32, ("q", "w"), ("out",)),
    "int_scan": (int_scan, I32, ("a",), ("out",)),
    "shifted_reader": (shifted_reader, F64, ("a", "b"), ("out",)),
    "scale": (scale, F64, ("a",), ("out",)),
    "guarded_out": (guarded_out, F64, ("a",), ("out",)),
    "partial_out": (partial_out, F32, ("a",), ("out",)),
    "flux_sweep": (flux_sweep, F64, ("q", "u", "v"), ("out",)),
    "backward_reads_below": (backward_reads_below, F64, ("a",), ("x",)),
    "forward_reads_below": (forward_reads_below, F64, ("a",), ("x",)),
}

HALO = 1


def _arrays(name, shape, rng, order="C"):
    defn, dtype, inputs, outputs = CASES[name]
    arrays = {}
    for n in inputs:
        if dtype == I32:
            values = rng.integers(0, 100, size=shape).astype(I32)
        else:
            values = rng.random(shape).astype(dtype)
            if n == "b":
                values += 4.0
        arrays[n] = np.array(values, order=order)
    for n in outputs:
        arrays[n] = np.full(shape, 1234.5 if dtype != I32 else 12345, dtype=dtype, order=order)
    scalars = {"dt": dtype(0.25)} if "advection" in name else {}
    return arrays, scalars


def _run(backend, name, arrays, scalars, blocks=None, monkeypatch=None, **call):
    defn = CASES[name][0]
    if blocks is not None:
        monkeypatch.setenv("GTSCRIPT_COLUMN_BLOCKS", "1" if blocks else "0")
    out = {k: v.copy(order="K") for k, v in arrays.items()}
    info = {}
    stencil = gtscript.stencil(backend, defn)
    if backend == "cpu":
        # a plan is made per domain: a one-point call first, so this call makes a fresh one
        small = {k: v[:3, :3, :].copy(order="K") for k, v in arrays.items()}
        stencil(**small, **scalars, origin=(1, 1, 0), domain=(1, 1, small["a" if "a" in small else "q"].shape[2]))
        stencil(**out, **scalars, exec_info=info, **call)
    else:
        stencil(**out, **scalars, **call)
    return out, info


SIZES = [(3, 70, 19), (2, 133, 33), (4, 9, 3), (3, 66, 2), (2, 67, 5), (1, 200, 16)]
# one level: the stencil whose intervals allow it
ONE_LEVEL = [("scale", (3, 71, 1)), ("scale", (2, 65, 1)), ("guarded_out", (2, 70, 1))]


MIN_LEVELS = {"partial_out": 3}
# FORWARD computations no value crosses a level of: run as PARALLEL, no blocks
LEVELS_FREE = {"scale", "guarded_out"}


# tiles fewer than 8 columns wide in J and wider in I: the blocks run along I (physics
# schemes call columns of shape (ncol, 1, nk)); partial blocks, one to seven J rows
SIZES_ALONG_I = [(70, 1, 19), (133, 3, 33), (9, 2, 5), (200, 1, 16), (67, 7, 4)]


@pytest.mark.parametrize("name,shape", [(n, s[:2] + (max(s[2], MIN_LEVELS.get(n, 2)),))
                                        for n in CASES for s in SIZES] + ONE_LEVEL
                         + [(n, s[:2] + (max(s[2], MIN_LEVELS.get(n, 2)),))
                            for n in CASES if n not in LEVELS_FREE for s in SIZES_ALONG_I],
                         ids=lambda v: v if isinstance(v, str) else "x".join(map(str, v)))
def test_blocks_match_bundles_and_the_numpy_backend(monkeypatch, rng, name, shape):
    full = (shape[0] + 2 * HALO, shape[1] + 2 * HALO, shape[2])
    arrays, scalars = _arrays(name, full, rng)
    call = dict(origin=(HALO, HALO, 0), domain=shape)
    blocks, info = _run("cpu", name, arrays, scalars, True, monkeypatch, **call)
    bundles, info0 = _run("cpu", name, arrays, scalars, False, monkeypatch, **call)
    ref, _ = _run("numpy", name, arrays, scalars, **call)
    assert info["plan"]["layout"] == "C"
    if name in LEVELS_FREE:
        assert info["plan"]["column_blocks"] == 0 and info["plan"]["column_blocks_why"] == "none"
        assert "runs as PARALLEL" in gtscript.stencil("cpu", CASES[name][0]).ir()
    else:
        assert info["plan"]["column_blocks"] > 0 and info["plan"]["column_blocks_why"] == "env"
        along_i = shape in [s[:2] + (shape[2],) for s in SIZES_ALONG_I]
        assert info["plan"]["column_blocks_axis"] == ("I" if along_i else "J"), info["plan"]
    assert info0["plan"]["column_blocks"] == 0
    for k in CASES[name][3]:
        np.testing.assert_array_equal(blocks[k], ref[k])
        np.testing.assert_array_equal(bundles[k], ref[k])
        # the margins around the domain keep their sentinel
        inside = np.zeros(full, bool)
        inside[HALO:-HALO, HALO:-HALO, :] = True
        assert np.all(blocks[k][~inside] == arrays[k][~inside])
    for k in CASES[name][2]:
        np.testing.assert_array_equal(blocks[k], arrays[k])  # inputs unchanged


def ij_and_k_reader(a: Field[F64], s: Field[IJ, F64], w: Field[K, F64], out: Field[F64]):
    # an IJ and a K field stay in place (the scratch holds 3-D fields): read at each column of
    # a block by its own I and J, whichever axis the block runs along
    with computation(FORWARD):
        with interval(0, 1):
            out = a * s
        with interval(1, None):
            out = 0.5 * out[0, 0, -1] + a * s[1, 0] + w * s[0, 1]


@pytest.mark.parametrize("shape", [(70, 1, 9), (9, 70, 9), (133, 3, 6), (5, 5, 4)])
def test_fields_in_place_in_blocks(monkeypatch, rng, shape):
    full = (shape[0] + 2, shape[1] + 2, shape[2])
    a = rng.random(full)
    s, w = rng.random(full[:2]), rng.random(full[2])
    outs = {}
    for backend, blocks in (("cpu", True), ("cpu", False), ("numpy", None)):
        if blocks is not None:
            monkeypatch.setenv("GTSCRIPT_COLUMN_BLOCKS", "1" if blocks else "0")
        out, info = np.full(full, 1234.5), {}
        gtscript.stencil(backend, ij_and_k_reader)(a, s, w, out, origin=(1, 1, 0), domain=shape,
                                                    **({"exec_info": info} if backend == "cpu" else {}))
        if blocks:
            assert info["plan"]["column_blocks"] > 0
        outs[backend, blocks] = out
    want = np.full(full, 1234.5)
    for k in range(shape[2]):
        lvl = (slice(1, 1 + shape[0]), slice(1, 1 + shape[1]), k)
        here = a[lvl] * s[2:2 + shape[0], 1:1 + shape[1]] + w[k] * s[1:1 + shape[0], 2:2 + shape[1]]
        want[lvl] = a[lvl] * s[1:1 + shape[0], 1:1 + shape[1]] if k == 0 else \
            0.5 * want[lvl[0], lvl[1], k - 1] + here
    for key, out in outs.items():
        np.testing.assert_allclose(out, want, rtol=1e-15, atol=0, err_msg=str(key))
        np.testing.assert_array_equal(out, outs["numpy", None])


def test_many_fields_take_narrower_blocks(monkeypatch, rng):
    # more than 24 scratch buffers: blocks of fewer columns (the scratch stays about the size
    # of 24 buffers of 64 columns); 40 fields read and written by one sweep, along I and J
    names = [f"f{i}" for i in range(40)]
    params = ", ".join(f"{n}: Field[np.float64]" for n in names)
    body = "\n".join(f"            {n} = {n} + 0.5 * {n}[0, 0, -1] + {names[i - 1]}"
                      for i, n in enumerate(names))
    src = (f"def many({params}):\n    with computation(FORWARD):\n"
           f"        with interval(1, None):\n{body}\n")
    namespace = {"np": np, "Field": Field, "computation": computation, "interval": interval,
                 "FORWARD": FORWARD}
    exec(compile(src, "<many fields>", "exec"), namespace)
    many = namespace["many"]
    many.__exec_source__ = src
    monkeypatch.setenv("GTSCRIPT_COLUMN_BLOCKS", "1")
    for shape in [(90, 1, 12), (2, 70, 12)]:
        arrays = {n: rng.random(shape) for n in names}
        want = {n: v.copy() for n, v in arrays.items()}
        gtscript.stencil("numpy", many)(**want)
        info = {}
        gtscript.stencil("cpu", many)(**arrays, exec_info=info)
        assert info["plan"]["column_blocks"] == 32, info["plan"]["column_blocks"]
        for n in names:
            np.testing.assert_array_equal(arrays[n], want[n])


def test_blocks_are_the_default_in_c_order_and_report_their_buffers(monkeypatch, rng):
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE", "0")  # the model's choice (measured: test_plan_tuning.py)
    arrays, _ = _arrays("thomas64", (4, 70, 12), rng)
    info = {}
    gtscript.stencil("cpu", thomas64)(**arrays, exec_info=info)
    plan = info["plan"]
    assert plan["column_blocks"] == 64 and plan["column_blocks_why"] == "model"
    assert {t: b["buffer"] for t, b in plan["temporaries"].items()} == {"cp": "block", "dp": "block"}
    f_arrays, _ = _arrays("thomas64", (4, 70, 12), rng, order="F")
    gtscript.stencil("cpu", thomas64)(**f_arrays, exec_info=info)
    assert info["plan"]["layout"] == "F" and info["plan"]["column_blocks"] == 0


@pytest.mark.parametrize("name,shape,tile",
                         [("thomas32", (5, 150, 24), t) for t in ("1x1", "3x5", "2x64", "4x65", "1x200")]
                         + [("advection32", (133, 7, 21), t) for t in ("64x1", "5x3", "130x7", "200x2")])
def test_any_tile_size(monkeypatch, rng, name, shape, tile):
    # the kernel decides the blocks' axis per tile: a domain cut into tiles of either kind,
    # and edge tiles narrower than the rest, give the same values
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", tile)
    arrays, scalars = _arrays(name, shape, rng)
    got, info = _run("cpu", name, arrays, scalars, True, monkeypatch)
    ref, _ = _run("numpy", name, arrays, scalars)
    ti, tj = map(int, tile.split("x"))
    assert info["plan"]["column_blocks"] > 0
    assert info["plan"]["column_blocks_axis"] == ("I" if tj < 8 and ti > tj else "J")
    for k in CASES[name][3]:
        np.testing.assert_array_equal(got[k], ref[k])


@pytest.mark.parametrize("dtype", [F64, F32])
def test_thomas_in_blocks_against_hand_written_numpy(monkeypatch, rng, dtype):
    name = "thomas64" if dtype == F64 else "thomas32"
    arrays, scalars = _arrays(name, (3, 77, 40), rng)
    got, _ = _run("cpu", name, arrays, scalars, True, monkeypatch)
    a, b, c, d = (arrays[k].astype(F64) for k in "abcd")
    n = a.shape[2]
    matrix = np.zeros(a.shape[:2] + (n, n))
    idx = np.arange(n)
    matrix[..., idx, idx] = b
    matrix[..., idx[1:], idx[:-1]] = a[..., 1:]
    matrix[..., idx[:-1], idx[1:]] = c[..., :-1]
    want = np.linalg.solve(matrix, d[..., None])[..., 0]
    tol = 1e-12 if dtype == F64 else 2e-5
    np.testing.assert_allclose(got["x"], want, rtol=tol, atol=tol)


def test_views_with_reversed_and_padded_j(monkeypatch, rng):
    # K stays the unit stride (C-order kernel), J runs backwards through a padded buffer
    base, _ = _arrays("thomas64", (3, 150, 17), rng)
    views = {k: v[:, ::-2, :] for k, v in base.items()}
    got, info = _run("cpu", "thomas64", views, {}, True, monkeypatch)
    ref, _ = _run("numpy", "thomas64", views, {})
    assert info["plan"]["layout"] == "C" and info["plan"]["column_blocks"] > 0
    np.testing.assert_array_equal(got["x"], ref["x"])


def test_threads_share_no_scratch(monkeypatch, rng):
    # many tiles on the pool's threads, each with its own scratch
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", "2x70")
    arrays, scalars = _arrays("advection64", (16, 140, 40), rng)
    got, info = _run("cpu", "advection64", arrays, scalars, True, monkeypatch)
    ref, _ = _run("numpy", "advection64", arrays, scalars)
    np.testing.assert_array_equal(got["out"], ref["out"])


def test_aliased_arrays_run_in_bundles(rng):
    # the same array for an input and the output: the shared-memory kernel keeps bundles
    def inplace(a: Field[F64], out: Field[F64]):
        with computation(FORWARD):
            with interval(0, 1):
                out = a
            with interval(1, None):
                out = a + 0.5 * out[0, 0, -1]

    arr = rng.random((3, 70, 9))
    ref = arr.copy()
    gtscript.stencil("numpy", inplace)(ref, ref)
    info = {}
    gtscript.stencil("cpu", inplace)(arr, arr, exec_info=info)
    assert info["plan"]["shared_memory"] and info["plan"]["column_blocks"] == 0
    np.testing.assert_array_equal(arr, ref)


def test_a_scratch_too_large_for_its_use_falls_back_to_bundles(monkeypatch, rng):
    # the scratch grows with the levels (64 columns x nk per buffer): with tens of thousands
    # of levels it would take hundreds of MiB per thread for a few columns; past 64 MiB the
    # plan keeps the bundles, even when blocks are asked for
    arrays, scalars = _arrays("thomas64", (3, 3, 20000), rng)
    for forced in (None, True):
        if forced:
            got, info = _run("cpu", "thomas64", arrays, scalars, True, monkeypatch)
        else:
            got, info = _run("cpu", "thomas64", arrays, scalars)
        assert info["plan"]["column_blocks"] == 0
        assert info["plan"]["column_blocks_why"] == "model: scratch over 64 MiB"
        ref, _ = _run("numpy", "thomas64", arrays, scalars)
        np.testing.assert_array_equal(got["x"], ref["x"])


def _decay(t: Field[np.float64], q: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD), interval(0, 1):
        out = q * exp(-t)
    with computation(FORWARD), interval(1, None):
        out = out[0, 0, -1] * 0.5 + q ** 1.5 * exp(-t)


@pytest.mark.parametrize("vector_math", [False, True])
def test_libm_calls_take_bundles_unless_vector_math(monkeypatch, rng, vector_math):
    """A group calling libm's exp or `**` runs them once per lane in a block's vector loop:
    the model keeps it in bundles (one column at a time) unless vector_math makes the calls
    libmvec's; both plans compute the same, and what NumPy computes."""
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE", "0")
    t, q = rng.random((40, 1, 30)), rng.random((40, 1, 30))
    want = np.empty_like(t)
    want[:, :, 0] = q[:, :, 0] * np.exp(-t[:, :, 0])
    for k in range(1, 30):
        want[:, :, k] = want[:, :, k - 1] * 0.5 + q[:, :, k] ** 1.5 * np.exp(-t[:, :, k])
    stencil = gtscript.stencil("cpu", _decay, vector_math=vector_math)
    outs = {}
    for env in (None, "1", "0"):  # the model's choice, then blocks and bundles by force
        if env is None:
            monkeypatch.delenv("GTSCRIPT_COLUMN_BLOCKS", raising=False)
        else:
            monkeypatch.setenv("GTSCRIPT_COLUMN_BLOCKS", env)
        info, out = {}, np.zeros_like(t)
        stencil(t, q, out, exec_info=info)
        outs[env] = out
        if env is None:
            plan = info["plan"]
            if vector_math:
                assert plan["column_blocks"] > 0 and plan["column_blocks_why"] == "model", plan
            else:
                assert plan["column_blocks"] == 0, plan
                assert plan["column_blocks_why"] == "model: libm calls (no vector_math)", plan
    rtol = 1e-12 if vector_math else 1e-14
    for out in outs.values():
        np.testing.assert_allclose(out, want, rtol=rtol, atol=0)
    if not vector_math:  # libm in both plans: the same bits
        np.testing.assert_array_equal(outs["1"], outs["0"])
