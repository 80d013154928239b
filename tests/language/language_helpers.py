"""Helpers shared by the tests/language/test_language_*.py files (no tests of its own).

Each language test builds a stencil for the cpu and numpy backends, runs it on copies of the
same inputs laid out in memory in several ways (C order, Fortran order, padded slices), and
compares every output with an independent hand-written NumPy / plain-loop reference.
"""

from __future__ import annotations

import numpy as np

import gtscript

BACKENDS = ("cpu", "numpy")
#: Memory layouts every construct is run on.
LAYOUTS = ("C", "F", "sliced")
#: Float dtypes every construct is run on.
FLOATS = (np.float64, np.float32)
PAD = 7  # value around sliced views: a stray write shows up in `check_padding`


def as_layout(values: np.ndarray, layout: str) -> np.ndarray:
    """A new array equal to ``values`` (any number of dimensions) in ``layout``."""
    values = np.asarray(values)
    if layout == "C":
        return np.array(values, order="C", copy=True)
    if layout == "F":
        return np.asfortranarray(values.copy())
    if layout == "sliced":
        # pad each axis differently so no stride is a simple multiple of another
        pads = [(1 + d % 2, 2 - d % 2) for d in range(values.ndim)]
        big = np.full([n + lo + hi for n, (lo, hi) in zip(values.shape, pads)], PAD, values.dtype)
        view = big[tuple(slice(lo, lo + n) for n, (lo, _) in zip(values.shape, pads))]
        view[...] = values
        assert not view.flags.c_contiguous or values.ndim < 2
        return view
    raise ValueError(layout)


def check_padding(view: np.ndarray) -> None:
    """For a sliced view: the owner's elements outside the view still hold PAD."""
    owner = view.base
    if owner is None or not isinstance(owner, np.ndarray):
        return
    mask = np.ones(owner.shape, bool)
    start = (view.__array_interface__["data"][0] - owner.__array_interface__["data"][0])
    index = np.unravel_index(start // view.itemsize, owner.shape)
    mask[tuple(slice(i, i + n) for i, n in zip(index, view.shape))] = False
    pad = np.array(PAD).astype(owner.dtype)
    assert np.all(owner[mask] == pad), "a stencil wrote outside the view it was given"


def build(defn, backend, **options):
    return gtscript.stencil(backend=backend, definition=defn, **options)


def run(defn, backend, arrays, scalars=None, layout="C", origin=None, domain=None, **options):
    """Run ``defn`` on copies of ``arrays`` (dict name -> ndarray) in ``layout``; return the
    arrays after the call (as C-ordered copies)."""
    stencil = build(defn, backend, **options)
    args = {name: as_layout(value, layout) for name, value in arrays.items()}
    kwargs = {}
    if origin is not None:
        kwargs["origin"] = origin
    if domain is not None:
        kwargs["domain"] = domain
    stencil(**args, **(scalars or {}), **kwargs)
    for value in args.values():
        check_padding(value)
    return {name: np.array(value) for name, value in args.items()}


def tolerance(dtype) -> dict:
    if np.dtype(dtype) == np.float32:
        return {"rtol": 2e-6, "atol": 1e-6}
    return {"rtol": 1e-13, "atol": 1e-13}


def assert_matches(actual, expected, what="result"):
    """Equal up to the rounding of the dtype (exact for ints and bools; NaN equals NaN)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if actual.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, equal_nan=True, err_msg=what,
                                   **tolerance(actual.dtype))
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def assert_same_bits(a, b, what="cpu vs numpy"):
    """Bitwise equal values (NaN equals NaN, -0.0 equals 0.0)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype
    if a.dtype.kind == "f":
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        assert same.all(), f"{what}: {np.count_nonzero(~same)} values differ, e.g. " \
            f"{a[~same][:3]} vs {b[~same][:3]}"
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def check_construct(defn, arrays, reference, outputs, scalars=None, layouts=LAYOUTS,
                    origin=None, domain=None, bitwise=True, **options):
    """Run ``defn`` on both backends and every layout; each output must match
    ``reference`` (dict name -> expected full array), and the two backends must agree
    bitwise (``bitwise=False``: to the dtype's rounding, for transcendental functions)."""
    results = {}
    for backend in BACKENDS:
        for layout in layouts:
            out = run(defn, backend, arrays, scalars, layout, origin, domain, **options)
            for name in outputs:
                assert_matches(out[name], reference[name], f"{name} ({backend}, {layout})")
            results[backend, layout] = out
    for layout in layouts:
        for name in outputs:
            a, b = results["cpu", layout][name], results["numpy", layout][name]
            if bitwise:
                assert_same_bits(a, b, f"{name}: cpu vs numpy ({layout})")
            else:
                assert_matches(a, b, f"{name}: cpu vs numpy ({layout})")
    return results
