"""gtscript.storage: arrays laid out and aligned for a backend.

Checked: the element at aligned_index (and every unit-stride line through it) sits on a
64-byte boundary, values and dtypes are what was asked for, the unit-stride axis is the
backend's, bad arguments raise errors naming them, and stencils run on these arrays with
the same results as on plain NumPy arrays, writing nothing into the padding.
"""

import importlib.util
import itertools

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval, sqrt, storage

HAS_CUPY = importlib.util.find_spec("cupy") is not None
ALIGN = storage.ALIGNMENT


def address(arr, index):
    return arr.__array_interface__["data"][0] + sum(i * s for i, s in zip(index, arr.strides))


def laplacian_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = -4.0 * inp[0, 0, 0] + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]


def scale_ij_defn(a: Field[np.float32], w: Field[gtscript.IJ, np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        out = a * w


# ============================================================================== alignment

@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("shape,aligned_index", [
    ((5, 6, 7), (0, 0, 0)),
    ((5, 6, 7), (2, 2, 0)),
    ((9, 4, 13), (3, 1, 5)),
    ((1, 1, 1), None),
    ((17, 3), (1, 2)),
    ((33,), (7,)),
])
def test_aligned_index_is_on_a_64_byte_boundary(backend, dtype, shape, aligned_index):
    arr = storage.empty(shape, dtype, backend=backend, aligned_index=aligned_index)
    index = aligned_index or (0,) * len(shape)
    assert arr.shape == shape and arr.dtype == np.dtype(dtype)
    assert address(arr, index) % ALIGN == 0
    # every line along the unit-stride (last) axis starts at the same alignment
    for lead in itertools.product(*(range(n) for n in shape[:-1])):
        assert address(arr, lead + (index[-1],)) % ALIGN == 0, lead


def test_alignment_holds_for_many_allocations():
    """The offset is computed from each buffer's own address, not assumed."""
    for n in range(1, 40):
        arr = storage.zeros((3, 2, n), np.float32, aligned_index=(1, 1, n // 2))
        assert address(arr, (1, 1, n // 2)) % ALIGN == 0


# ================================================================================ layout

@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_cpu_layout_is_c_order_with_padded_unit_stride_axis(backend):
    arr = storage.zeros((4, 5, 6), backend=backend)
    assert arr.strides == (5 * 8 * 8, 8 * 8, 8)   # K padded from 6 to 8 doubles
    assert not arr.flags.c_contiguous
    lay = storage.layout((4, 5, 6), np.float64, backend)
    assert lay.padded == (4, 5, 8) and lay.strides == arr.strides


def test_cuda_layout_has_unit_stride_i():
    lay = storage.layout((6, 5, 4), np.float32, "cuda")
    assert lay.order == "F"
    assert lay.padded == (16, 5, 4)
    assert lay.strides == (4, 16 * 4, 16 * 5 * 4)


def test_unit_stride_axis_already_a_multiple_is_not_padded():
    arr = storage.ones((3, 3, 16))
    assert arr.strides == (3 * 16 * 8, 16 * 8, 8)


def test_subarray_dtype_appends_data_dimensions():
    arr = storage.zeros((4, 5, 6), (np.float64, (3,)), aligned_index=(1, 1, 0, 0))
    assert arr.shape == (4, 5, 6, 3) and arr.dtype == np.float64
    assert address(arr, (1, 1, 0, 0)) % ALIGN == 0
    assert storage.layout((4, 5, 6), (np.float32, (2, 2)), "cpu").padded == (4, 5, 8, 2, 2)
    assert storage.layout((4, 5, 6), (np.float32, (2,)), "cuda").padded == (16, 5, 6, 2)
    named = storage.zeros((4, 5, 6, 3), dimensions=["I", "J", "K", "0"])
    assert named.strides == (5 * 8 * 24, 8 * 24, 24, 8)
    assert storage.layout((4, 5, 6, 3), np.float64, dimensions="IJK0").padded == (4, 5, 8, 3)


def test_zero_sized_shape():
    arr = storage.zeros((0, 4, 3))
    assert arr.shape == (0, 4, 3) and arr.size == 0


# ================================================================================ values

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.bool_])
def test_values_and_dtypes(dtype):
    shape = (4, 3, 5)
    z = storage.zeros(shape, dtype)
    o = storage.ones(shape, dtype)
    f = storage.full(shape, 7 if dtype is not np.bool_ else True, dtype)
    for arr in (z, o, f):
        assert arr.dtype == np.dtype(dtype) and arr.shape == shape
    np.testing.assert_array_equal(z, np.zeros(shape, dtype))
    np.testing.assert_array_equal(o, np.ones(shape, dtype))
    np.testing.assert_array_equal(f, np.full(shape, 7 if dtype is not np.bool_ else True, dtype))


def test_from_array_copies_values_and_keeps_or_casts_dtype():
    data = np.arange(60, dtype=np.int64).reshape(3, 4, 5)
    same = storage.from_array(data, aligned_index=(1, 1, 1))
    assert same.dtype == np.int64
    np.testing.assert_array_equal(same, data)
    assert not np.shares_memory(same, data)
    assert address(same, (1, 1, 1)) % ALIGN == 0

    cast = storage.from_array(data, np.float32)
    assert cast.dtype == np.float32
    np.testing.assert_array_equal(cast, data.astype(np.float32))

    nested = storage.from_array([[1.5, 2.5], [3.5, 4.5]])
    np.testing.assert_array_equal(nested, [[1.5, 2.5], [3.5, 4.5]])

    fortran = np.asfortranarray(np.random.default_rng(0).random((5, 4, 3)))
    np.testing.assert_array_equal(storage.from_array(fortran), fortran)


def test_gt4py_keyword_form():
    arr = storage.zeros(backend="numpy", shape=(3, 4, 5), dtype=np.float32,
                        aligned_index=(0, 0, 0), dimensions=["I", "J", "K"])
    assert arr.shape == (3, 4, 5) and arr.dtype == np.float32


# ================================================================================ errors

@pytest.mark.parametrize("kwargs,exc,words", [
    (dict(shape=(3, 3, 3), backend="gpu"), ValueError, "unknown backend 'gpu'"),
    (dict(shape=(3, 3, 3), aligned_index=(0, 0)), ValueError, "one entry per dimension"),
    (dict(shape=(3, 3, 3), aligned_index=(0, 3, 0)), ValueError, "outside shape"),
    (dict(shape=(3, 3, 3), aligned_index=(0, -1, 0)), ValueError, "outside shape"),
    (dict(shape=(3, -1, 3)), ValueError, "negative"),
    (dict(shape="abc"), TypeError, "shape must be"),
    (dict(shape=(3, 3, 3), dtype=object), TypeError, "dtype must be"),
    (dict(shape=(3, 3, 3), dtype=np.complex128), TypeError, "dtype must be"),
    (dict(shape=(3, 3, 3), dimensions=["I", "J"]), ValueError, "dimensions"),
    (dict(shape=(3, 3, 3), dimensions=["I", "0", "K"]), ValueError, "grid axes"),
    (dict(shape=(3, 3), dimensions=["0", "1"]), ValueError, "grid axes"),
    (dict(shape=()), ValueError, "at least one dimension"),
])
def test_bad_arguments_raise_clear_errors(kwargs, exc, words):
    with pytest.raises(exc, match=words):
        storage.zeros(**kwargs)


def test_from_array_with_subarray_dtype_needs_data_ending_in_its_shape():
    # as GT4Py: the data's last axes are the data dimensions (tests/compat_gt4py/test_call_gt4py.py)
    with pytest.raises(ValueError, match=r"does not end in the shape \(3,\)"):
        storage.from_array(np.zeros((2, 2, 2)), (np.float64, (3,)))


def test_cuda_needs_cupy_and_gives_a_cuda_array():
    if not HAS_CUPY:
        with pytest.raises(RuntimeError, match="needs CuPy"):
            storage.zeros((3, 3, 3), backend="cuda")
        with pytest.raises(RuntimeError, match="needs CuPy"):
            storage.from_array(np.zeros((3, 3, 3)), backend="cuda")
        return
    cupy = pytest.importorskip("cupy")
    try:
        arr = storage.from_array(np.arange(24.0).reshape(2, 3, 4), backend="cuda",
                                 aligned_index=(1, 0, 0))
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        pytest.skip(f"no GPU: {exc}")
    assert hasattr(arr, "__cuda_array_interface__")
    assert arr.strides[0] == 8
    assert (arr.data.ptr + 8) % ALIGN == 0
    np.testing.assert_array_equal(cupy.asnumpy(arr), np.arange(24.0).reshape(2, 3, 4))


# ============================================================= stencils run on storages

@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_stencil_on_storages_matches_numpy_reference(backend):
    lap = gtscript.stencil(backend, laplacian_defn)
    rng = np.random.default_rng(1)
    data = rng.standard_normal((10, 9, 7))
    halo = (1, 1, 0)
    inp = storage.from_array(data, backend=backend, aligned_index=halo)
    out = storage.zeros(data.shape, backend=backend, aligned_index=halo)
    lay = storage.layout(data.shape, np.float64, backend)
    padded = np.lib.stride_tricks.as_strided(out, shape=lay.padded, strides=out.strides)
    padded[...] = 1234.5           # the padding around the view must stay untouched
    out[...] = 0.0
    lap(inp, out)
    expected = (-4.0 * data[1:-1, 1:-1] + data[2:, 1:-1] + data[:-2, 1:-1]
                + data[1:-1, 2:] + data[1:-1, :-2])
    np.testing.assert_allclose(out[1:-1, 1:-1], expected, rtol=1e-12, atol=1e-12)
    assert np.all(out[0] == 0.0) and np.all(out[:, -1] == 0.0)
    assert np.all(padded[..., out.shape[2]:] == 1234.5)

    plain = np.zeros_like(data)
    lap(data, plain)
    np.testing.assert_array_equal(out, plain)


def test_ij_field_storage_and_float32():
    rng = np.random.default_rng(2)
    a = rng.random((6, 5, 4)).astype(np.float32)
    w = rng.random((6, 5)).astype(np.float32)
    results = []
    for backend in ("cpu", "numpy"):
        stencil = gtscript.stencil(backend, scale_ij_defn)
        out = storage.zeros(a.shape, np.float32, backend=backend)
        stencil(storage.from_array(a, backend=backend), storage.from_array(w, backend=backend), out)
        results.append(out)
    np.testing.assert_allclose(results[0], a * w[:, :, None], rtol=1e-6)
    np.testing.assert_allclose(results[1], a * w[:, :, None], rtol=1e-6)


def vector_norm_defn(vec: Field[(np.float64, (3,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = sqrt(vec[0, 0, 0][0] ** 2 + vec[0, 0, 0][1] ** 2 + vec[0, 0, 0][2] ** 2)


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_data_dimension_storage_in_a_stencil(backend):
    values = np.random.default_rng(3).standard_normal((5, 4, 3, 3))
    vec = storage.from_array(values, backend=backend, dimensions=["I", "J", "K", "0"])
    # components contiguous (never padded); K padded from 3 to 8 points of 24 bytes so
    # that every (i, j) column starts on a 64-byte boundary
    assert vec.strides == (4 * 8 * 24, 8 * 24, 24, 8)
    for i in range(5):
        for j in range(4):
            assert address(vec, (i, j, 0, 0)) % ALIGN == 0
    out = storage.zeros((5, 4, 3), backend=backend)
    gtscript.stencil(backend, vector_norm_defn)(vec, out)
    np.testing.assert_allclose(out, np.linalg.norm(values, axis=3), rtol=1e-12)
