"""Constructs of GT4Py's own test suite that GT4Py 1.1 accepts and gtscript refused: an
indexed IJ field as an interval bound (``interval(0, idx[0, 0])``), ``f[...]``, ``dtypes=``
naming Field types or keyed by Python types, definitions made with exec() (their text in
``__exec_source__``, GT4Py's convention), ``gtscript.storage`` with a sub-array dtype and
``dimensions=``, and the name ``types`` of GT4Py's gtscript module. Each is built on the cpu and
numpy backends and the cuda backend's host emulation and compared with GT4Py (its numpy
backend; its debug backend for run-time interval bounds, which only it implements) and with
hand-written NumPy. tests/gt4py_corpus/c13_gt4py_accepted.py runs more of them through the
corpus."""

import types

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import emulate, require_compiler
from gtscript import FORWARD, IJ, IJK, K, PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptDefinitionError, GTScriptSyntaxError

gt = pytest.importorskip("gt4py.cartesian.gtscript")
GT4PY_VERSION = tuple(int(part) for part in __import__("gt4py").__version__.split(".")[:2])

BACKENDS = ["cpu", "numpy", "cuda"]
NI, NJ, NK = 5, 4, 7


def build(backend, definition, **kw):
    if backend == "cuda":
        require_compiler()
    stencil = gtscript.stencil(backend, definition, **kw)
    return emulate(stencil) if backend == "cuda" else stencil


def gt4py_run(oracle, definition, args, **kw):
    """GT4Py's results: the arrays after calling its ``oracle`` backend on copies."""
    stencil = gt.stencil(backend=oracle, definition=definition, **kw)
    mine = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    stencil(**mine)
    return mine


def gtscript_run(backend, definition, args, **kw):
    mine = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    build(backend, definition, **kw)(**mine)
    return mine


def assert_same(got, want):
    assert got.keys() == want.keys()
    for name, value in want.items():
        if isinstance(value, np.ndarray):
            assert got[name].dtype == value.dtype, name
            np.testing.assert_allclose(got[name], value, rtol=1e-13, atol=0, err_msg=name)


def fields(F, IJ_, K_):
    """The definitions, annotated with one frontend's Field (GT4Py's or gtscript's)."""

    def bound_end(a: F[np.float64], idx: F[IJ_, np.int64], out: F[np.float64]):
        with computation(PARALLEL), interval(0, idx[0, 0]):
            out = a * 2.0 + a[0, 0, 1]

    def bound_start(a: F[np.float64], idx: F[IJ_, np.int32], out: F[np.float64]):
        with computation(FORWARD), interval(idx[0, 0], None):
            out = out[0, 0, -1] + a

    def bound_plus(a: F[np.float64], idx: F[IJ_, np.int64], out: F[np.float64]):
        with computation(PARALLEL), interval(0, idx[0, 0] + 1):
            out = a

    def bound_off_centre(a: F[np.float64], idx: F[IJ_, np.int64], out: F[np.float64]):
        with computation(PARALLEL), interval(0, idx[0, 1]):
            out = a

    def ellipsis(a: F[np.float64], b: F[IJ_, np.float64], c: F[K_, np.float64],
                 v: F[(np.float64, (2,))], out: F[np.float64]):
        with computation(PARALLEL), interval(...):
            tmp = a[...] * b[...]
            out[...] = tmp[...] + c[...] * v[...][1]

    def ellipsis_scalar(a: F[np.float64], out: F[np.float64], s: float):
        with computation(PARALLEL), interval(...):
            out = a + s[...]

    return dict(bound_end=bound_end, bound_start=bound_start, bound_plus=bound_plus,
                bound_off_centre=bound_off_centre, ellipsis=ellipsis,
                ellipsis_scalar=ellipsis_scalar)


OURS = fields(Field, IJ, K)
THEIRS = fields(gt.Field, gt.IJ, gt.K)


# ---- interval bounds from an indexed IJ field


@pytest.mark.parametrize("backend", BACKENDS)
def test_indexed_ij_field_as_end_bound(backend):
    rng = np.random.default_rng(0)
    idx = rng.integers(0, NK, (NI, NJ))  # up to NK - 1: a[0, 0, 1] stays in the array
    idx[0, 0], idx[1, 1] = 0, NK - 1
    args = {"a": rng.random((NI, NJ, NK)), "idx": idx, "out": np.full((NI, NJ, NK), -7.0),
            "domain": (NI, NJ, NK - 1)}
    expected = gt4py_run("debug", THEIRS["bound_end"], args)
    hand = args["out"].copy()
    for i in range(NI):
        for j in range(NJ):
            for k in range(idx[i, j]):
                hand[i, j, k] = 2.0 * args["a"][i, j, k] + args["a"][i, j, k + 1]
    np.testing.assert_array_equal(expected["out"], hand)
    assert_same(gtscript_run(backend, OURS["bound_end"], args), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_indexed_ij_field_as_start_bound_of_a_forward_sweep(backend):
    rng = np.random.default_rng(1)
    # the domain starts at level 1, where the read one level down stays inside the array
    # whatever idx holds (gtscript checks the extent, GT4Py does not)
    idx = rng.integers(0, NK - 1, (NI, NJ)).astype(np.int32)
    idx[0, 0], idx[1, 1] = 0, NK - 2
    args = {"a": rng.random((NI, NJ, NK)), "idx": idx, "out": rng.random((NI, NJ, NK)),
            "origin": (0, 0, 1), "domain": (NI, NJ, NK - 1)}
    expected = gt4py_run("debug", THEIRS["bound_start"], args)
    hand = args["out"].copy()
    for i in range(NI):
        for j in range(NJ):
            for k in range(1 + idx[i, j], NK):
                hand[i, j, k] = hand[i, j, k - 1] + args["a"][i, j, k]
    np.testing.assert_allclose(expected["out"], hand, rtol=1e-13)
    assert_same(gtscript_run(backend, OURS["bound_start"], args), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_indexed_ij_field_plus_an_offset_counts_the_offset(backend):
    """``idx[0, 0] + 1`` as ``idx + 1`` (gtscript's run-time bounds): idx + 1 levels. GT4Py
    1.1's debug backend computes every level for both spellings; hand-written NumPy decides."""
    rng = np.random.default_rng(2)
    idx = rng.integers(0, NK, (NI, NJ))
    args = {"a": rng.random((NI, NJ, NK)), "idx": idx, "out": np.zeros((NI, NJ, NK))}
    got = gtscript_run(backend, OURS["bound_plus"], args)
    levels = np.arange(NK)[None, None, :] < (idx + 1)[:, :, None]
    np.testing.assert_array_equal(got["out"], np.where(levels, args["a"], 0.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_off_centre_index_as_a_bound_is_refused_as_in_gt4py(backend):
    with pytest.raises(Exception, match="Invalid interval range"):
        gt.stencil(backend="debug", definition=THEIRS["bound_off_centre"])
    with pytest.raises(GTScriptSyntaxError, match=r"idx\[0, 0\].*not `idx\[0, 1\]`"):
        build(backend, OURS["bound_off_centre"])


# ---- f[...]


@pytest.mark.parametrize("backend", BACKENDS)
def test_ellipsis_index_reads_and_writes_the_point_itself(backend):
    rng = np.random.default_rng(3)
    args = {"a": rng.random((NI, NJ, NK)), "b": rng.random((NI, NJ)), "c": rng.random(NK),
            "v": rng.random((NI, NJ, NK, 2)), "out": np.zeros((NI, NJ, NK))}
    hand = (args["a"] * args["b"][:, :, None] + args["c"][None, None, :] * args["v"][..., 1])
    if GT4PY_VERSION >= (1, 2):  # GT4Py 1.2 refuses f[...] (spell it f); gtscript keeps 1.1's
        with pytest.raises(Exception, match="ellipsis"):  # noqa: B017 - GT4Py's own error
            gt.stencil(backend="numpy", definition=THEIRS["ellipsis"])
        expected = {**args, "out": hand}
    else:
        expected = gt4py_run("numpy", THEIRS["ellipsis"], args)
        np.testing.assert_allclose(expected["out"], hand, rtol=1e-13)
    assert_same(gtscript_run(backend, OURS["ellipsis"], args), expected)


def test_ellipsis_on_a_scalar_is_refused_as_in_gt4py():
    with pytest.raises(Exception):  # noqa: B017 - GT4Py raises a bare AssertionError
        gt.stencil(backend="numpy", definition=THEIRS["ellipsis_scalar"])
    with pytest.raises(GTScriptSyntaxError, match="scalar parameter 's' cannot be indexed"):
        gtscript.stencil("numpy", OURS["ellipsis_scalar"])


@gtscript.function
def doubled(f):
    return f[...] * 2.0


def through_function(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = doubled(a[1, 0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_ellipsis_on_a_function_parameter_is_the_argument_itself(backend):
    a, out = np.random.default_rng(4).random((NI + 1, NJ, NK)), np.zeros((NI, NJ, NK))
    build(backend, through_function)(a, out, domain=(NI, NJ, NK))
    np.testing.assert_array_equal(out, 2.0 * a[1:])


# ---- dtypes=


def field_typed(a: "Tij", b: "T3", out: Field[np.float64], s: "S"):
    with computation(FORWARD), interval(0, 1):
        t: Tij = a * s
    with computation(PARALLEL), interval(...):
        out = t + b


def gt4py_field_typed(a: "Tij", b: "T3", out: gt.Field[np.float64], s: "S"):
    with computation(FORWARD), interval(0, 1):
        t: Tij = a * s
    with computation(PARALLEL), interval(...):
        out = t + b


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("spelling", ["gtscript", "gt4py"])
def test_dtypes_naming_field_types(backend, spelling):
    F, ij, ijk = (Field, IJ, IJK) if spelling == "gtscript" else (gt.Field, gt.IJ, gt.IJK)
    dtypes = {"Tij": F[ij, np.float64], "T3": F[ijk, np.float32], "S": np.float32}
    rng = np.random.default_rng(5)
    args = {"a": rng.random((NI, NJ)), "b": rng.random((NI, NJ, NK)).astype(np.float32),
            "out": np.zeros((NI, NJ, NK)), "s": np.float32(1.5)}
    theirs = gt.stencil(backend="numpy", definition=gt4py_field_typed,
                        dtypes={"Tij": gt.Field[gt.IJ, np.float64],
                                "T3": gt.Field[gt.IJK, np.float32], "S": np.float32})
    expected = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    theirs(**expected)
    np.testing.assert_allclose(expected["out"], 1.5 * args["a"][:, :, None] + args["b"],
                               rtol=1e-6)
    ours = build(backend, field_typed, dtypes=dtypes)
    for name, info in theirs.field_info.items():
        assert tuple(ours.field_info[name].axes) == tuple(info.axes), name
        assert np.dtype(ours.field_info[name].dtype) == info.dtype, name
    assert ours.parameter_info["s"].dtype == theirs.parameter_info["s"].dtype == np.float32
    got = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    ours(**got)
    assert_same(got, expected)


def placeholder_dtype(a: Field["T"], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a


def test_a_field_type_used_as_a_dtype_is_refused():
    with pytest.raises(GTScriptDefinitionError, match="names a Field type"):
        gtscript.stencil("numpy", placeholder_dtype, dtypes={"T": Field[IJ, np.float64]})


def python_keys(a: Field["T"], b: Field[np.int64], out: Field["T"]):
    with computation(PARALLEL), interval(...):
        out = a * 0.5 + b * 3 + 1.25


def gt4py_python_keys(a: gt.Field["T"], b: gt.Field[np.int64], out: gt.Field["T"]):
    with computation(PARALLEL), interval(...):
        out = a * 0.5 + b * 3 + 1.25


@pytest.mark.parametrize("backend", BACKENDS)
def test_dtypes_keyed_by_python_types_change_nothing_as_in_gt4py(backend):
    rng = np.random.default_rng(6)
    args = {"a": rng.random((NI, NJ, NK)), "b": rng.integers(-9, 9, (NI, NJ, NK)),
            "out": np.zeros((NI, NJ, NK))}
    keyed = {"T": np.float64, float: np.float32, int: np.int32}
    # rebuild: GT4Py's cache key leaves such keys out
    expected = gt4py_run("numpy", gt4py_python_keys, args, dtypes=keyed, rebuild=True)
    assert_same(gt4py_run("numpy", gt4py_python_keys, args, dtypes={"T": np.float64},
                          rebuild=True), expected)
    assert_same(gtscript_run(backend, python_keys, args, dtypes=keyed), expected)
    assert_same(gtscript_run(backend, python_keys, args, dtypes={"T": np.float64}), expected)


# ---- definitions made with exec()

EXEC_SOURCE = '''
def made(a: Field[np.float64], out: Field[np.float64], w: float):
    with computation(PARALLEL), interval(...):
        out = w * a + a[1, 0, 0]
'''


def made_with_exec(module, source=EXEC_SOURCE, with_source=True):
    namespace = {"np": np, "Field": module.Field, "PARALLEL": module.PARALLEL,
                 "computation": module.computation, "interval": module.interval}
    exec(compile(source, "<generated>", "exec"), namespace)  # noqa: S102 - under test
    if with_source:
        namespace["made"].__exec_source__ = source
    return namespace["made"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_definition_made_with_exec_builds_from_its_exec_source(backend):
    rng = np.random.default_rng(7)
    args = {"a": rng.random((NI + 1, NJ, NK)), "out": np.zeros((NI + 1, NJ, NK)), "w": 0.5,
            "domain": (NI, NJ, NK)}
    expected = gt4py_run("numpy", made_with_exec(gt), args)
    np.testing.assert_allclose(expected["out"][:NI], 0.5 * args["a"][:NI] + args["a"][1:])
    assert_same(gtscript_run(backend, made_with_exec(gtscript), args), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_indented_exec_source_builds_as_in_gt4py(backend):
    indented = EXEC_SOURCE.replace("\n", "\n    ")
    rng = np.random.default_rng(9)
    args = {"a": rng.random((NI + 1, NJ, NK)), "out": np.zeros((NI + 1, NJ, NK)), "w": 2.0,
            "domain": (NI, NJ, NK)}
    theirs = made_with_exec(gt)
    theirs.__exec_source__ = indented
    expected = gt4py_run("numpy", theirs, args)
    ours = made_with_exec(gtscript)
    ours.__exec_source__ = indented
    assert_same(gtscript_run(backend, ours, args), expected)


def test_without_exec_source_both_refuse():
    with pytest.raises(OSError):
        gt.stencil(backend="numpy", definition=made_with_exec(gt, with_source=False))
    with pytest.raises(GTScriptDefinitionError, match="__exec_source__"):
        gtscript.stencil("numpy", made_with_exec(gtscript, with_source=False))


def test_exec_sources_that_differ_build_different_stencils():
    a, out = np.ones((NI + 1, NJ, NK)), np.zeros((NI, NJ, NK))
    first = gtscript.stencil("numpy", made_with_exec(gtscript))
    other = gtscript.stencil("numpy", made_with_exec(gtscript, EXEC_SOURCE.replace("w * a", "w - a")))
    first(a, out, 2.0, domain=(NI, NJ, NK))
    np.testing.assert_array_equal(out, 3.0)
    other(a, out, 2.0, domain=(NI, NJ, NK))
    np.testing.assert_array_equal(out, 2.0)


def test_an_error_in_an_exec_definition_names_its_line():
    bad = EXEC_SOURCE.replace("out = w * a + a[1, 0, 0]", "out = w * a + a[1, 0]")
    with pytest.raises(GTScriptSyntaxError) as info:
        gtscript.stencil("numpy", made_with_exec(gtscript, bad))
    assert info.value.lineno == 4 and "<generated>" in str(info.value)


# ---- gtscript.storage: a sub-array dtype with dimensions=


@pytest.mark.parametrize("maker", ["zeros", "ones", "empty", "full", "from_array"])
@pytest.mark.parametrize("shape,dims", [((NI, NJ, NK), ["I", "J", "K"]), ((NI, NJ), ["I", "J"]),
                                        ((NK,), ["K"])])
def test_storage_with_a_sub_array_dtype_and_dimensions(maker, shape, dims):
    import gt4py.storage as gs

    dtype = (np.float64, (3, 2))

    def make(module, **kw):
        if maker == "full":
            return module.full(shape, 2.5, dtype=dtype, backend="numpy", **kw)
        if maker == "from_array":
            data = np.arange(np.prod(shape) * 6, dtype=np.float64).reshape(*shape, 3, 2)
            return module.from_array(data, dtype=dtype, backend="numpy", **kw)
        return getattr(module, maker)(shape, dtype=dtype, backend="numpy", **kw)

    theirs = make(gs, dimensions=dims)
    ours = make(gtscript.storage, dimensions=dims)
    plain = make(gtscript.storage)  # the same without dimensions=
    assert ours.shape == theirs.shape == (*shape, 3, 2)
    assert ours.dtype == theirs.dtype == np.float64
    assert ours.strides == plain.strides
    if maker != "empty":
        np.testing.assert_array_equal(ours, theirs)


def data_dims_sum(v: Field[(np.float64, (3,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = v[0, 0, 0][0] + v[0, 0, 0][1] + v[0, 0, 0][2]


def test_a_storage_with_a_sub_array_dtype_runs_in_a_stencil():
    v = gtscript.storage.from_array(np.random.default_rng(8).random((NI, NJ, NK, 3)),
                                    dtype=(np.float64, (3,)), dimensions=["I", "J", "K"],
                                    backend="cpu")
    out = gtscript.storage.zeros((NI, NJ, NK), backend="cpu", dimensions=["I", "J", "K"])
    gtscript.stencil("cpu", data_dims_sum)(v, out)
    np.testing.assert_allclose(out, v.sum(axis=3), rtol=1e-14)


def test_storage_dimensions_still_name_every_axis():
    with pytest.raises(ValueError, match="every axis but the 1 of the dtype"):
        gtscript.storage.zeros((NI, NJ, NK), dtype=(np.float64, (3,)), dimensions=["I", "J"])


# ---- types


def test_types_is_the_name_gt4py_gtscript_has():
    assert gtscript.types is gt.types is types
