"""Duck arrays as stencil arguments: an argument the stencil writes must be memory written in
place. A lazily computed array (dask's, an xarray DataArray over one, any object whose
__array__ returns new memory) used to run and stay all zeros; it is refused with a TypeError
that says what to pass. Inputs may still be converted by a copy. xarray arguments that put the
same dimension name on different axes (a transposed DataArray) are refused, not combined by
position. Every backend's call path: cpu, numpy and the cuda emulation."""

import dask.array as da  # test dependencies (pyproject's test extra)
import numpy as np
import pytest
import xarray as xr

import gtscript
from gtscript import PARALLEL, Field, computation, interval

# dask warns that it cannot give a view before handing over its copy: the behaviour refused here
pytestmark = pytest.mark.filterwarnings("ignore:Can't acquire a memory view:FutureWarning")

SHAPE = (5, 5, 5)  # a cube: a transposed argument still has the shape of the others


def add(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a + 2.0 * b


def surface(a: Field[np.float64], s: Field[gtscript.IJ, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a + s


_STENCILS = {}


def build(defn, backend):
    key = (defn.__name__, backend)
    if key not in _STENCILS:
        if backend == "cuda":
            from cuda_emulation.runner import emulate, require_compiler

            require_compiler()
            _STENCILS[key] = emulate(gtscript.stencil("cuda", defn))
        else:
            _STENCILS[key] = gtscript.stencil(backend, defn)
    return _STENCILS[key]


BACKENDS = ("cpu", "numpy", "cuda")


@pytest.fixture(params=BACKENDS)
def any_backend(request):
    return request.param


@pytest.fixture
def inputs():
    rng = np.random.default_rng(24)
    return rng.standard_normal(SHAPE), rng.standard_normal(SHAPE)


class CopyOnArray:
    """A duck array whose __array__ returns a fresh copy at every conversion (ignoring
    copy=False, as a lazy array does)."""

    def __init__(self, values):
        self.values = values

    def __array__(self, dtype=None, copy=None):
        return np.array(self.values, dtype=dtype, copy=True)


class RefusesNoCopy:
    """A lazy array that says so: __array__(copy=False) raises, as NumPy 2 asks (and as dask
    says it will)."""

    def __init__(self, values):
        self.values = values

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("cannot give a view")
        return np.array(self.values, dtype=dtype, copy=True)


class ViewOnArray:
    """A duck array whose __array__ returns its own memory: written in place."""

    def __init__(self, values):
        self.values = values

    def __array__(self, dtype=None, copy=None):
        return self.values


def xr_dask(values, dims=("x", "y", "z")):
    return xr.DataArray(da.from_array(values, chunks=2), dims=dims)


LAZY_OUTPUTS = {
    "dask": lambda: da.zeros(SHAPE, chunks=2),
    "xarray over dask": lambda: xr_dask(np.zeros(SHAPE)),
    "__array__ copy": lambda: CopyOnArray(np.zeros(SHAPE)),
    "__array__ refusing copy=False": lambda: RefusesNoCopy(np.zeros(SHAPE)),
}


@pytest.mark.parametrize("kind", LAZY_OUTPUTS)
def test_output_that_converts_by_copy_is_refused(any_backend, inputs, kind):
    a, b = inputs
    out = LAZY_OUTPUTS[kind]()
    with pytest.raises(TypeError) as err:
        build(add, any_backend)(a, b, out)
    message = str(err.value)
    assert "'out'" in message and ("new memory" in message or "without a copy" in message)
    assert "writable NumPy array" in message and "map_overlap" in message
    assert not np.asarray(out).any()


def test_output_refused_by_keyword_and_inputs_untouched(inputs):
    a, b = inputs
    a0, b0 = a.copy(), b.copy()
    with pytest.raises(TypeError, match="argument 'out'"):
        build(add, "cpu")(a=a, b=b, out=xr_dask(np.zeros(SHAPE)))
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_lazy_inputs_are_read(any_backend, inputs):
    a, b = inputs
    out = np.zeros(SHAPE)
    build(add, any_backend)(da.from_array(a, chunks=2), xr_dask(b), out)
    np.testing.assert_allclose(out, a + 2.0 * b, rtol=1e-15)


def test_outputs_written_in_place(any_backend, inputs):
    """A DataArray over NumPy memory, and a duck array whose __array__ is its own memory, are
    written where the caller reads them."""
    a, b = inputs
    target = xr.DataArray(np.zeros(SHAPE), dims=("x", "y", "z"))
    build(add, any_backend)(xr.DataArray(a, dims=("x", "y", "z")), b, target)
    np.testing.assert_allclose(target.values, a + 2.0 * b, rtol=1e-15)
    duck = ViewOnArray(np.zeros(SHAPE))
    build(add, any_backend)(a, b, duck)
    np.testing.assert_allclose(duck.values, a + 2.0 * b, rtol=1e-15)


def test_transposed_dataarray_is_refused(any_backend, inputs):
    a, b = inputs
    xa = xr.DataArray(a, dims=("x", "y", "z"))
    xb = xr.DataArray(b, dims=("x", "y", "z")).transpose("z", "y", "x")
    out = np.zeros(SHAPE)
    with pytest.raises(ValueError) as err:
        build(add, any_backend)(xa, xb, out)
    message = str(err.value)
    assert "'a'" in message and "'b'" in message and "('z', 'y', 'x')" in message
    assert "by position" in message
    assert not out.any()
    # in one order, it runs and matches NumPy
    build(add, any_backend)(xa, xb.transpose(*xa.dims), out)
    np.testing.assert_allclose(out, a + 2.0 * b, rtol=1e-15)


def test_output_dims_are_compared_too(inputs):
    a, b = inputs
    target = xr.DataArray(np.zeros(SHAPE), dims=("z", "x", "y"))
    with pytest.raises(ValueError, match="'a'.*'out'"):
        build(add, "cpu")(xr.DataArray(a, dims=("x", "y", "z")), b, target)
    assert not target.values.any()


def test_different_names_and_lower_dimensional_fields_are_fine(backend, inputs):
    """Only a name on two different axes is refused: staggered dimension names differ, and a
    2-D field names I and J where the 3-D ones do."""
    a, b = inputs
    s = b[:, :, 0]
    out = xr.DataArray(np.zeros(SHAPE), dims=("x_interface", "y", "z"))
    build(surface, backend)(xr.DataArray(a, dims=("x", "y", "z")), xr.DataArray(s, dims=("x", "y")), out)
    np.testing.assert_allclose(out.values, a + s[:, :, None], rtol=1e-15)
    xa, xs = xr.DataArray(a, dims=("x", "y", "z")), xr.DataArray(s.T.copy(), dims=("y", "x"))
    out = np.zeros(SHAPE)
    with pytest.raises(ValueError, match="dimension 'y'") as err:
        build(surface, backend)(xa, xs, out)
    assert "s.transpose(*a.dims, missing_dims='ignore')" in str(err.value)
    build(surface, backend)(xa, xs.transpose(*xa.dims, missing_dims="ignore"), out)  # the advice
    np.testing.assert_allclose(out, a + s[:, :, None], rtol=1e-15)


def test_map_overlap_runs_the_stencil_per_block(backend):
    """The documented dask route: each block a NumPy array with its halo, the stencil's
    output a fresh NumPy array per block."""
    rng = np.random.default_rng(3)
    values = rng.standard_normal((12, 10, 4))

    @gtscript.stencil(backend=backend)
    def laplace(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0] - 4.0 * inp

    def block(x):
        out = np.zeros_like(x)
        laplace(x, out, origin=(1, 1, 0), domain=(x.shape[0] - 2, x.shape[1] - 2, x.shape[2]))
        return out

    lazy = da.from_array(values, chunks=(6, 5, 4)).map_overlap(
        block, depth={0: 1, 1: 1, 2: 0}, boundary="none", dtype=values.dtype)
    result = lazy.compute()
    c = values[1:-1, 1:-1]
    expected = values[2:, 1:-1] + values[:-2, 1:-1] + values[1:-1, 2:] + values[1:-1, :-2] - 4.0 * c
    np.testing.assert_allclose(result[1:-1, 1:-1], expected, rtol=1e-13)
