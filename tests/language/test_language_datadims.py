"""Typed temporaries as GT4Py declares them: `tmp: Field[IJ, dtype] = ...` inside a
computation (a 2-D temporary: one value per column, kept from level to level), and
`tmp: Field[dtype]` / `tmp: Field[dtype] = 0.0` before the computations (an IJK temporary,
typed, initialised over every level first). Every construct on the cpu and numpy backends
(every layout) and the cuda emulation, against hand-written NumPy and, where GT4Py's numpy
backend runs it, against GT4Py itself."""

import linecache
import tempfile
import warnings

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, GlobalTable, computation, interval
from gtscript.errors import GTScriptSemanticError, GTScriptSyntaxError
from cuda_emulation.runner import emulate, require_compiler
from language_helpers import check_construct

SHAPE = (7, 6, 5)


def cuda_run(defn, args, **call):
    require_compiler()
    st = emulate(gtscript.stencil("cuda", defn), (3, 2))
    args = {k: np.array(v) for k, v in args.items()}
    st(**args, **call)
    return args


# ---------------------------------------------------------------- IJ temporaries


def column_sum_defn(x: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            s: Field[IJ, np.float64] = x
            out = s
        with interval(1, None):
            s = s + x
            out = s


def column_max_below_defn(x: Field[np.float32], out: Field[np.float32]):
    with computation(BACKWARD):
        with interval(-1, None):
            m: Field[IJ, float] = x
            out = 0.0
        with interval(0, -1):
            out = m  # the largest value above this level
            m = max(m, x)


def shifted_plane_defn(x: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            p: Field[IJ, np.float64] = 2.0 * x
            out = 0.0
        with interval(1, None):
            out = p[1, 0, 0] - p[0, -1, 0]  # the plane written at the bottom, shifted
    with computation(PARALLEL), interval(0, 1):
        q: Field[IJ, np.int64] = 3
        out = out + q


def test_ij_temporary_accumulates_over_levels(rng):
    x = rng.uniform(-1, 1, SHAPE)
    out = np.zeros(SHAPE)
    expected = {"out": np.cumsum(x, axis=2)}
    check_construct(column_sum_defn, {"x": x, "out": out}, expected, ["out"], bitwise=False)
    got = cuda_run(column_sum_defn, {"x": x, "out": out})
    np.testing.assert_allclose(got["out"], expected["out"], rtol=1e-13, atol=1e-13)


def test_ij_temporary_in_a_backward_sweep(rng):
    x = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    out = np.zeros(SHAPE, np.float32)
    e = np.zeros(SHAPE, np.float32)
    for k in range(SHAPE[2] - 2, -1, -1):
        e[:, :, k] = x[:, :, k + 1:].max(axis=2)
    check_construct(column_max_below_defn, {"x": x, "out": out}, {"out": e}, ["out"])
    got = cuda_run(column_max_below_defn, {"x": x, "out": out})
    np.testing.assert_array_equal(got["out"], e)


def test_ij_temporary_read_with_a_horizontal_offset(rng):
    x = rng.uniform(-1, 1, SHAPE)
    out = np.full(SHAPE, 1234.5)
    origin, domain = (1, 1, 0), (5, 5, 5)
    p = 2.0 * x[:, :, 0]
    e = out.copy()
    inner = e[1:6, 1:6]
    inner[:, :, 1:] = (p[2:7, 1:6] - p[1:6, 0:5])[:, :, None]
    inner[:, :, 0] = 3.0
    check_construct(shifted_plane_defn, {"x": x, "out": out}, {"out": e}, ["out"],
                    origin=origin, domain=domain)
    got = cuda_run(shifted_plane_defn, {"x": x, "out": out}, origin=origin, domain=domain)
    np.testing.assert_allclose(got["out"], e, rtol=1e-13, atol=1e-13)


def test_ij_temporary_shows_in_the_ir():
    st = gtscript.stencil("numpy", column_sum_defn)
    assert "temporary s: float64 (IJ)" in st.ir()
    assert ("s", "float64", ((0, 0), (0, 0), (0, 0)), "IJ", ()) in st.ir_tree()["temporaries"]


def ij_parallel_levels(x: Field[float], out: Field[float]):
    with computation(PARALLEL), interval(...):
        s: Field[IJ, float] = x
        out = s


def ij_k_offset(x: Field[float], out: Field[float]):
    with computation(FORWARD), interval(1, None):
        s: Field[IJ, float] = x
        out = s[0, 0, -1]


def ij_declared_late(x: Field[float], out: Field[float]):
    with computation(FORWARD), interval(...):
        s = x
        s: Field[IJ, float] = x + 1.0
        out = s


@pytest.mark.parametrize("defn, match", [
    (ij_parallel_levels, "IJ field written in a PARALLEL computation over several K levels"),
    (ij_k_offset, "no K axis and cannot be read with a K offset"),
    (ij_declared_late, "declared as an IJ field after its first use"),
])
def test_ij_temporary_misuse_is_rejected(defn, match):
    for backend in ("cpu", "numpy"):
        with pytest.raises(GTScriptSemanticError, match=match):
            gtscript.stencil(backend, defn)


# ------------------------------------------------- declarations before the computations


def top_level_defn(x: Field[np.float64], out: Field[np.float64]):
    t: Field[np.float64] = 2.0
    u: Field[np.float32]
    with computation(PARALLEL), interval(1, None):
        t = x
    with computation(PARALLEL), interval(...):
        u = x  # rounded to float32
        out = t + u


def test_top_level_declarations_type_and_initialise(rng):
    x = rng.uniform(-1, 1, SHAPE)
    out = np.zeros(SHAPE)
    e = x + x.astype(np.float32)
    e[:, :, 0] = np.float64(2.0) + x[:, :, 0].astype(np.float32)
    check_construct(top_level_defn, {"x": x, "out": out}, {"out": e}, ["out"])
    got = cuda_run(top_level_defn, {"x": x, "out": out})
    np.testing.assert_allclose(got["out"], e, rtol=1e-13, atol=1e-13)
    temps = {t[0]: t[1] for t in gtscript.stencil("numpy", top_level_defn).ir_tree()["temporaries"]}
    assert temps == {"t": "float64", "u": "float32"}


def top_level_ij(x: Field[float], out: Field[float]):
    t: Field[IJ, float]
    with computation(PARALLEL), interval(...):
        out = x


def top_level_not_constant(x: Field[float], out: Field[float]):
    t: Field[float] = x
    with computation(PARALLEL), interval(...):
        out = x + t


@pytest.mark.parametrize("defn, match", [
    (top_level_ij, "declared before the computations is an IJK field"),
    (top_level_not_constant, "the initial value"),
])
def test_top_level_declaration_misuse_is_rejected(defn, match):
    with pytest.raises((GTScriptSyntaxError, GTScriptSemanticError), match=match):
        gtscript.stencil("numpy", defn)


# ------------------------------------------------ whole vectors and matrices, .A accessor

V3 = Field[(np.float64, (3,))]
M3 = Field[(np.float64, (3, 3))]
M32 = Field[(np.float64, (3, 2))]


def vector_ops_defn(a: V3, b: V3, m: M3, out: V3, s: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = 2.0 * a + b[1, 0, 0]
        out = out - m.T @ a
        out += -a * (a > 0.5)
        s = a.A[1] + m.A[2, 0]


def matrix_ops_defn(m: M3, n: M32, v: V3, mm: M32, w: Field[(np.float64, (2,))]):
    with computation(PARALLEL), interval(...):
        mm = m @ n + 1.0  # matrix-matrix (GT4Py 1.1.12 has matrix-vector only)
        w = v @ n  # vector-matrix, as NumPy's matmul
        mm = mm * 0.5 if v.A[0] > 0.5 else mm


def test_vector_and_matrix_expressions(rng):
    shape = SHAPE
    a, b = rng.uniform(-1, 1, shape + (3,)), rng.uniform(-1, 1, shape + (3,))
    m = rng.uniform(-1, 1, shape + (3, 3))
    out, s = np.full(shape + (3,), 1234.5), np.full(shape, 1234.5)
    e_out = out.copy()
    inner = (slice(0, 6),)  # b is read at I + 1: the domain stops one short of the end
    ai, mi = a[inner], m[inner]
    e_out[inner] = 2.0 * ai + b[1:] - np.einsum("...ji,...j->...i", mi, ai) - ai * (ai > 0.5)
    e_s = s.copy()
    e_s[inner] = ai[..., 1] + mi[..., 2, 0]
    args = {"a": a, "b": b, "m": m, "out": out, "s": s}
    check_construct(vector_ops_defn, args, {"out": e_out, "s": e_s}, ["out", "s"], bitwise=False)
    got = cuda_run(vector_ops_defn, args)
    np.testing.assert_allclose(got["out"], e_out, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got["s"], e_s, rtol=1e-13, atol=1e-13)


def test_matrix_products_and_transpose(rng):
    m, n = rng.uniform(-1, 1, SHAPE + (3, 3)), rng.uniform(-1, 1, SHAPE + (3, 2))
    v = rng.uniform(0, 1, SHAPE + (3,))
    mm, w = np.zeros(SHAPE + (3, 2)), np.zeros(SHAPE + (2,))
    e_mm = m @ n + 1.0
    e_mm = np.where((v[..., 0] > 0.5)[..., None, None], e_mm * 0.5, e_mm)
    e_w = np.einsum("...i,...ij->...j", v, n)
    args = {"m": m, "n": n, "v": v, "mm": mm, "w": w}
    check_construct(matrix_ops_defn, args, {"mm": e_mm, "w": e_w}, ["mm", "w"], bitwise=False)
    got = cuda_run(matrix_ops_defn, args)
    np.testing.assert_allclose(got["mm"], e_mm, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got["w"], e_w, rtol=1e-13, atol=1e-13)


def test_a_scalar_assigned_to_a_vector_field_fills_it(rng):
    def fill(a: V3, out: V3):
        with computation(PARALLEL), interval(...):
            out = 1.5
            out += a.A[2]
    a = rng.uniform(-1, 1, SHAPE + (3,))
    e = np.repeat(1.5 + a[..., 2:3], 3, axis=-1)
    check_construct(fill, {"a": a, "out": np.zeros_like(a)}, {"out": e}, ["out"])


def vector_in_a_condition(a: V3, out: V3):
    with computation(PARALLEL), interval(...):
        if a > 0.0:
            out = a


def vector_to_scalar(a: V3, out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = 2.0 * a


def vector_shapes_differ(a: V3, m: M3, out: V3):
    with computation(PARALLEL), interval(...):
        out = a + m


def matmul_sizes_differ(a: V3, n: M32, out: V3):
    with computation(PARALLEL), interval(...):
        out = n @ a


def transpose_of_a_vector(a: V3, out: V3):
    with computation(PARALLEL), interval(...):
        out = a.T


def reads_what_it_overwrote(m: M3, v: V3):
    with computation(PARALLEL), interval(...):
        v = m @ v


@pytest.mark.parametrize("defn, match", [
    (vector_in_a_condition, "the condition is a whole vector"),
    (vector_to_scalar, "the value assigned is a whole vector"),
    (vector_shapes_differ, r"shapes \[3\] and \[3, 3\] do not match"),
    (matmul_sizes_differ, r"got shapes \[3, 2\] and \[3\]"),
    (transpose_of_a_vector, "attribute `.T` is the transpose of a matrix"),
    (reads_what_it_overwrote, r"reads its element \[0\], which this assignment writes first"),
])
def test_vector_expression_misuse_is_rejected(defn, match):
    with pytest.raises(GTScriptSyntaxError, match=match):  # GTScriptSemanticError derives
        gtscript.stencil("numpy", defn)


# ---------------------------------------------------------- temporaries with data dimensions


def vector_temporary_defn(a: V3, m: M3, out: V3, s: Field[np.float64]):
    t: Field[(np.float64, (3,))] = 1.0
    u: Field[(np.float32, (2,))]
    with computation(PARALLEL), interval(1, None):
        t = m @ a
    with computation(PARALLEL), interval(...):
        u = 0.5
        u.A[1] = t.A[0]
        out = t[1, 0, 0] + 2.0 * a
        s = u.A[0] + u.A[1]


def test_temporaries_with_data_dimensions(rng):
    a, m = rng.uniform(-1, 1, SHAPE + (3,)), rng.uniform(-1, 1, SHAPE + (3, 3))
    t = np.einsum("...ij,...j->...i", m, a)
    t[:, :, 0] = 1.0
    out, s = np.full(SHAPE + (3,), 1234.5), np.full(SHAPE, 1234.5)
    e_out, e_s = out.copy(), s.copy()
    e_out[:-1] = t[1:] + 2.0 * a[:-1]
    e_s[:-1] = np.float64(np.float32(0.5) + t[:-1, ..., 0].astype(np.float32))
    args = {"a": a, "m": m, "out": out, "s": s}
    check_construct(vector_temporary_defn, args, {"out": e_out, "s": e_s}, ["out", "s"],
                    bitwise=False)
    got = cuda_run(vector_temporary_defn, args)
    np.testing.assert_allclose(got["out"], e_out, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got["s"], e_s, rtol=1e-6)
    temps = {t[0]: t[3:] for t in gtscript.stencil("numpy", vector_temporary_defn).ir_tree()["temporaries"]}
    assert temps == {"t": ("IJK", (3,)), "u": ("IJK", (2,))}


def vector_temporary_inside(a: V3, out: V3):
    with computation(PARALLEL), interval(...):
        t: Field[(np.float64, (3,))] = a
        out = t


def vector_temporary_too_many_dims(a: V3, out: V3):
    t: Field[(np.float64, (2, 2, 2, 2))]
    with computation(PARALLEL), interval(...):
        out = a


@pytest.mark.parametrize("defn, match", [
    (vector_temporary_inside, "is declared before the computations"),
    (vector_temporary_too_many_dims, "at most 3 data dimensions"),
])
def test_vector_temporary_misuse_is_rejected(defn, match):
    with pytest.raises(GTScriptSyntaxError, match=match):
        gtscript.stencil("numpy", defn)


# ------------------------------------------------------------------------ GlobalTable


def lookup_defn(t1: GlobalTable[(np.float64, (4,))], t2: GlobalTable[(np.float32, (2, 3))],
                x: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = x[1, 0, 0] * t1.A[2] + t2.A[1, 2] - t1.A[0]


def test_global_tables_are_read_at_every_point(rng):
    t1 = rng.uniform(-1, 1, 4)
    t2 = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    x = rng.uniform(-1, 1, SHAPE)
    out = np.full(SHAPE, 1234.5)
    e = out.copy()
    e[:-1] = x[1:] * t1[2] + np.float64(t2[1, 2]) - t1[0]
    args = {"t1": t1, "t2": t2, "x": x, "out": out}
    check_construct(lookup_defn, args, {"out": e, "t1": t1, "t2": t2}, ["out", "t1", "t2"])
    got = cuda_run(lookup_defn, args)
    np.testing.assert_allclose(got["out"], e, rtol=1e-13, atol=1e-13)
    info = gtscript.stencil("numpy", lookup_defn).field_info["t2"]
    assert (info["axes"], info["data_dims"], info["intent"]) == ("", (2, 3), "in")


@pytest.mark.parametrize("table, match", [
    (np.zeros(5), "'t1': data dimension 0 has size 5, the stencil declares 4"),
    (np.zeros((4, 1)), "'t1' must have 1 dimensions"),
    (np.zeros(4, np.float32), "'t1'"),
])
def test_a_table_of_the_wrong_shape_or_dtype_is_refused(table, match):
    st = gtscript.stencil("cpu", lookup_defn)
    x, out = np.ones(SHAPE), np.zeros(SHAPE)
    with pytest.raises((TypeError, ValueError), match=match):
        st(table, np.zeros((2, 3), np.float32), x, out)
    assert not out.any()


def table_written(t: GlobalTable[(np.float64, (3,))], x: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t.A[0] = x


def table_out_of_range(t: GlobalTable[(np.float64, (3,))], x: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        x = t.A[3]


def table_with_offsets(t: GlobalTable[(np.float64, (3,))], x: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        x = t[0, 0, 0][1]


@pytest.mark.parametrize("defn, match", [
    (table_written, "'t' is a GlobalTable: tables are read-only"),
    (table_out_of_range, "data index 3 of 't' is out of range"),
    (table_with_offsets, "'t' is a GlobalTable, without grid axes: read it as t.A"),
])
def test_global_table_misuse_is_rejected(defn, match):
    with pytest.raises((GTScriptSyntaxError, GTScriptSemanticError), match=match):
        gtscript.stencil("numpy", defn)


# ------------------------------------------------------------------ against GT4Py

GT4PY_SOURCE = """
def vector_ops(a: Field[(np.float64, (3,))], b: Field[(np.float64, (3,))],
               m: Field[(np.float64, (3, 3))], out: Field[(np.float64, (3,))],
               s: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = 2.0 * a + b[1, 0, 0]
        out = out - m.T @ a
        s = a.A[1] + m.A[2, 0]


def lookup(t1: GlobalTable[(np.float64, (4,))], t2: GlobalTable[(np.float64, (2, 3))],
           x: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = x[1, 0, 0] * t1.A[2] + t2.A[1, 2]


def vector_temporary(a: Field[(np.float64, (3,))], m: Field[(np.float64, (3, 3))],
                     out: Field[(np.float64, (3,))]):
    t: Field[(np.float64, (3,))] = 1.0
    with computation(PARALLEL), interval(1, None):
        t = m @ a
    with computation(PARALLEL), interval(...):
        out = t[1, 0, 0] + 2.0 * a


def column_sum(x: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            s: Field[IJ, np.float64] = x
            out = s
        with interval(1, None):
            s = s + x[1, 0, 0]
            out = s * 0.5

"""
# GT4Py 1.1.12 builds a top-level declaration only with data dimensions and an initial
# value (vector_temporary): `t: Field[np.float64]` fails with "Symbols {t} not found" and
# `t: Field[np.float64] = 2.0` in its init computation, which takes the bare float.
# gtscript follows what that code means (test_top_level_declarations_type_and_initialise).


def from_source(module, name):
    """The definition `name` of GT4PY_SOURCE, with the names of `module` (only the import
    line differs between gtscript and GT4Py)."""
    filename = f"<typed temporaries for {module.__name__}>"
    linecache.cache[filename] = (len(GT4PY_SOURCE), None, GT4PY_SOURCE.splitlines(True), filename)
    scope = {n: getattr(module, n) for n in
             ("Field", "GlobalTable", "IJ", "PARALLEL", "FORWARD", "computation", "interval")}
    scope["np"] = np
    exec(compile(GT4PY_SOURCE, filename, "exec"), scope)
    return scope[name]


GT4PY_ARGS = {
    "vector_temporary": lambda rng: {
        "a": rng.uniform(-1, 1, SHAPE + (3,)), "m": rng.uniform(-1, 1, SHAPE + (3, 3)),
        "out": np.zeros(SHAPE + (3,))},
    "lookup": lambda rng: {"t1": rng.uniform(-1, 1, 4), "t2": rng.uniform(-1, 1, (2, 3)),
                           "x": rng.uniform(-1, 1, SHAPE), "out": np.zeros(SHAPE)},
    "column_sum": lambda rng: {"x": rng.uniform(-1, 1, SHAPE), "out": np.zeros(SHAPE)},
    "vector_ops": lambda rng: {
        "a": rng.uniform(-1, 1, SHAPE + (3,)), "b": rng.uniform(-1, 1, SHAPE + (3,)),
        "m": rng.uniform(-1, 1, SHAPE + (3, 3)), "out": np.zeros(SHAPE + (3,)),
        "s": np.zeros(SHAPE)},
}


@pytest.mark.parametrize("name", sorted(GT4PY_ARGS))
def test_matches_gt4py(rng, monkeypatch, name):
    gt4py_gtscript = pytest.importorskip("gt4py.cartesian.gtscript")
    monkeypatch.setenv("GT_CACHE_ROOT", tempfile.mkdtemp(prefix="gt4py-cache-"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2-D temporaries are experimental, layouts advised
        ref = gt4py_gtscript.stencil(backend="numpy", definition=from_source(gt4py_gtscript, name),
                                     rebuild=True)
        args = GT4PY_ARGS[name](rng)
        expected = {k: v.copy() for k, v in args.items()}
        call = {"origin": (0, 0, 0), "domain": (SHAPE[0] - 1,) + SHAPE[1:]}
        ref(**expected, **call)
    assert any(not np.array_equal(expected[k], args[k]) for k in args)  # GT4Py wrote something
    for backend in ("cpu", "numpy"):
        got = {k: v.copy() for k, v in args.items()}
        gtscript.stencil(backend, from_source(gtscript, name))(**got, **call)
        for k in args:
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-13, err_msg=f"{k} ({backend})")
