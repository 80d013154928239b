"""Shared fixtures for the gtscript test suite.

- `backend`: every test that asks for it runs on the "cpu" (LLVM JIT) and "numpy" (reference
  oracle) backends.
- `rng`: a seeded NumPy generator (fresh per test, so tests do not depend on their order).
- `fields`: a `FieldMaker` that builds arrays of a given shape, dtype and memory layout (C order,
  Fortran order, padded slices, strided views, a transposed copy), fills outputs with a sentinel
  and checks that nothing outside the origin/domain region - or outside a view's own
  elements - was written.
- `in_layout` / `out_layout` / `layout`: the layouts, for tests that sweep them.

The test modules live in folders by the part of gtscript they test (docs/testing.md, "Where the
tests are"); the helper modules and data folders they share stay here in tests/. This folder and
every folder of test modules (``SUITE_FOLDERS``) go on ``sys.path`` before any test module is
collected, so a test module imports a helper (``from shared_stencils import ...``) or another
test module (``from test_language_runtime import ...``) by its bare name, whichever folder it is
in. pytest imports test modules by their bare names too (its default "prepend" import mode, the
folders being no packages), so two test modules may not share a name.
"""

import os
import shutil
import sys
import tempfile

import numpy as np
import pytest

BACKENDS = ("cpu", "numpy")

#: Memory layouts a stencil must accept for any field (inputs and outputs alike).
#:  C          C-contiguous
#:  F          Fortran-contiguous (np.asfortranarray)
#:  sliced     padded slice of a bigger C array, unit stride in K: big[1:-1, 2:-1, 1:]
#:  strided    every axis strided, no unit-stride axis: big[::2, 1::3, ::2]
#:  kij        view of a C-ordered (K, I, J) copy: K is the slowest axis, J the fastest
LAYOUTS = ("C", "F", "sliced", "strided", "kij")

#: The folders of test modules, relative to tests/ (docs/testing.md, "Where the tests are").
SUITE_FOLDERS = ("frontend", "analysis", "language", "backends", "backends/cpu", "backends/cuda",
                 "call", "api", "cache", "compat_gt4py", "distributed", "fuzz", "docs",
                 "packaging", "benchmarks")
TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
for _folder in (TESTS_DIR, *(os.path.join(TESTS_DIR, f) for f in SUITE_FOLDERS)):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

#: Value written into outputs before a call: a stencil must leave it alone outside its domain.
SENTINEL = 1234.5


def pytest_configure(config):
    """Every stencil the suite compiles goes to a fresh private disk cache, never the user's:
    set before collection (test modules decorate stencils at import time); the C core reads
    GTSCRIPT_CACHE_DIR at each lookup and subprocesses inherit it."""
    config._gtscript_saved_cache_dir = os.environ.get("GTSCRIPT_CACHE_DIR")
    config._gtscript_cache_dir = tempfile.mkdtemp(prefix="gtscript-test-cache-")  # mode 0700
    os.environ["GTSCRIPT_CACHE_DIR"] = config._gtscript_cache_dir
    # GT4Py, the differential oracle of the conformance tests, writes the code it generates
    # under GT_CACHE_ROOT (default: a .gt_cache folder in the working directory), read once
    # when gt4py is imported: point it at a private directory before any test module imports it
    config._gt4py_cache_dir = tempfile.mkdtemp(prefix="gt4py-test-cache-")
    os.environ["GT_CACHE_ROOT"] = config._gt4py_cache_dir


def pytest_unconfigure(config):
    gt4py_dir = getattr(config, "_gt4py_cache_dir", None)
    if gt4py_dir is not None:
        shutil.rmtree(gt4py_dir, ignore_errors=True)
    path = getattr(config, "_gtscript_cache_dir", None)
    if path is None:
        return
    shutil.rmtree(path, ignore_errors=True)
    saved = config._gtscript_saved_cache_dir
    if saved is None:
        os.environ.pop("GTSCRIPT_CACHE_DIR", None)
    else:
        os.environ["GTSCRIPT_CACHE_DIR"] = saved


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def region(origin, domain):
    """The index expression of the compute domain starting at `origin` with size `domain`."""
    return tuple(slice(o, o + d) for o, d in zip(origin, domain))


def _owner(arr):
    base = arr
    while isinstance(base.base, np.ndarray):
        base = base.base
    return base


class FieldMaker:
    """Builds test arrays; see the module docstring."""

    SENTINEL = SENTINEL
    LAYOUTS = LAYOUTS

    def __init__(self, rng):
        self.rng = rng

    # ----------------------------------------------------------------------------- layouts
    @staticmethod
    def as_layout(values, layout="C", pad_value=SENTINEL):
        """A new array equal to `values` in the given memory layout.

        For the view layouts the memory around the view (the padding of its owner) holds
        `pad_value`, so that `assert_view_padding_untouched` can detect stray writes.
        """
        values = np.asarray(values)
        shape = values.shape
        if layout == "C":
            arr = np.array(values, order="C", copy=True)
        elif layout == "F":
            arr = np.asfortranarray(values.copy())
        elif layout == "sliced":
            big = np.full((shape[0] + 2, shape[1] + 3, shape[2] + 1), pad_value, dtype=values.dtype)
            arr = big[1:-1, 2:-1, 1:]
            arr[...] = values
        elif layout == "strided":
            big = np.full((2 * shape[0], 3 * shape[1] + 1, 2 * shape[2]), pad_value, dtype=values.dtype)
            arr = big[::2, 1::3, ::2]
            arr[...] = values
        elif layout == "kij":
            # np.array(..., copy=True), not np.ascontiguousarray: for values that are already
            # kij-ordered the moved view is C-contiguous and ascontiguousarray would return it,
            # so the "new" array would be `values` itself and a call writing it would change
            # the caller's reference data.
            arr = np.array(np.moveaxis(values, 2, 0), order="C", copy=True).transpose(1, 2, 0)
        else:
            raise ValueError(f"unknown layout {layout!r}")
        assert arr.shape == shape and arr.dtype == values.dtype
        assert np.array_equal(arr, values, equal_nan=True)
        if layout in ("sliced", "strided"):
            assert not arr.flags.c_contiguous and not arr.flags.f_contiguous
        if layout == "kij":
            assert arr.strides[1] == arr.itemsize and not arr.flags.c_contiguous
        assert not np.shares_memory(arr, values), "as_layout must return a new array"
        return arr

    # ----------------------------------------------------------------------------- makers
    def random(self, shape, dtype=np.float64, layout="C", low=-1.0, high=1.0):
        """Uniform random values in [low, high)."""
        values = self.rng.uniform(low, high, size=shape).astype(dtype)
        return self.as_layout(values, layout)

    def sentinel(self, shape, dtype=np.float64, layout="C", value=SENTINEL):
        """An output array filled with the sentinel value."""
        return self.as_layout(np.full(shape, value, dtype=dtype), layout)

    # ----------------------------------------------------------------------------- checks
    @staticmethod
    def region(origin, domain):
        return region(origin, domain)

    @staticmethod
    def expected_after(before, origin, domain, values):
        """`before` with the region at origin/domain replaced by `values`."""
        expect = np.array(before, copy=True)
        expect[region(origin, domain)] = values
        return expect

    @staticmethod
    def tolerance(dtype):
        return {"rtol": 1e-5, "atol": 1e-5} if np.dtype(dtype) == np.float32 else {"rtol": 1e-12, "atol": 1e-12}

    @classmethod
    def assert_close(cls, actual, expected, what="result"):
        """Element-wise comparison with a dtype-dependent tolerance (NaN equals NaN)."""
        np.testing.assert_allclose(
            actual, expected, equal_nan=True, err_msg=f"{what} differs from the reference",
            **cls.tolerance(np.asarray(actual).dtype),
        )

    @classmethod
    def assert_written_only_in(cls, out, before, origin, domain, values, what="out"):
        """`out` equals `values` on the region and is bit-for-bit `before` everywhere else."""
        sl = region(origin, domain)
        cls.assert_close(out[sl], values, what=f"{what} inside origin={origin} domain={domain}")
        mask = np.ones(out.shape, dtype=bool)
        mask[sl] = False
        changed = np.argwhere(mask & ~((out == before) | (np.isnan(out) & np.isnan(before))))
        assert changed.size == 0, (
            f"{what} was written outside origin={origin} domain={domain}: "
            f"{len(changed)} points changed, first ones at {changed[:5].tolist()}"
        )

    @staticmethod
    def assert_view_padding_untouched(view, pad_value=SENTINEL, what="array"):
        """For a view into a bigger buffer: every element of the buffer outside the view still
        holds `pad_value` (nothing wrote through wrong strides or past the view's extent)."""
        owner = _owner(view)
        if owner is view:
            return
        assert owner.flags.c_contiguous and owner.dtype == view.dtype
        item = view.itemsize
        start = view.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        assert start % item == 0
        flat_index = np.full(view.shape, start // item, dtype=np.int64)
        for axis, (n, stride) in enumerate(zip(view.shape, view.strides)):
            assert stride % item == 0
            shape = [1] * view.ndim
            shape[axis] = n
            flat_index = flat_index + (np.arange(n) * (stride // item)).reshape(shape)
        outside = np.ones(owner.size, dtype=bool)
        outside[flat_index.ravel()] = False
        flat = owner.reshape(-1)
        bad = np.flatnonzero(outside & (flat != pad_value))
        assert bad.size == 0, (
            f"{what}: {bad.size} elements of the buffer around the view were overwritten "
            f"(flat indices {bad[:5].tolist()})"
        )

    @staticmethod
    def snapshot(*arrays):
        """Bit-exact copies of the arrays and of the buffers they view."""
        return [(a, np.array(a, copy=True), np.array(_owner(a), copy=True)) for a in arrays]

    @staticmethod
    def assert_unchanged(snapshots):
        for arr, copy, owner_copy in snapshots:
            assert arr.tobytes() == copy.tobytes(), "an array was modified"
            assert _owner(arr).tobytes() == owner_copy.tobytes(), "the buffer behind a view was modified"


@pytest.fixture
def fields(rng):
    return FieldMaker(rng)


@pytest.fixture(params=LAYOUTS)
def layout(request):
    return request.param


@pytest.fixture(params=LAYOUTS)
def in_layout(request):
    return request.param


@pytest.fixture(params=LAYOUTS)
def out_layout(request):
    return request.param


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory):
    """The documentation site, built once per session (tests/docs_site.py): its html folder."""
    pytest.importorskip("sphinx", reason="the docs extra (pip install -e '.[docs]') is not installed")
    pytest.importorskip("myst_nb", reason="the docs extra (pip install -e '.[docs]') is not installed")
    from docs_site import build_site

    return build_site(tmp_path_factory.mktemp("docs-site"))
