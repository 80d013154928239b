"""Arguments a build does not use (GT4Py's access NONE: the only read removed by
``__INLINED(False)``, or a parameter never mentioned) are not checked, exactly as GT4Py 1.1
does not check them: any value runs (a 3-D array where a 2-D field is declared, another
dtype, a list, a string for a scalar), on the cpu and numpy backends and the cuda call path
(host emulation); the value is never read or written, and a DEBUG record on the "gtscript"
logger says it was not checked. Used arguments are still checked as before."""

import logging

import numpy as np
import pytest

import gtscript
from gtscript.info import AccessKind
from gtscript import IJ, PARALLEL, Field, computation, interval, __INLINED
from cuda_emulation.runner import emulate, require_compiler


def unused_defn(a: Field[np.float64], b: Field[IJ, np.float64], out: Field[np.float64],
                s: float, t: int):
    with computation(PARALLEL), interval(...):
        if __INLINED(False):
            out = b + s
        out = a * 2.0


SHAPE = (5, 4, 3)

# (name, the arguments replaced): values a used argument would be refused for
BAD_VALUES = [
    ("b 3-D", {"b": np.full(SHAPE, 7.0)}),
    ("b 1-D", {"b": np.full((4,), 7.0)}),
    ("b int32", {"b": np.full(SHAPE[:2], 7, dtype=np.int32)}),
    ("b too small", {"b": np.full((1, 1), 7.0)}),
    ("b list", {"b": [1.0, 2.0]}),
    ("b float", {"b": 3.0}),
    ("s str", {"s": "x"}),
    ("s array", {"s": np.zeros(3)}),
    ("t float", {"t": 1.5}),
    ("all None", {"b": None, "s": None, "t": None}),
]


def make_args(rng, **replace):
    args = {"a": rng.random(SHAPE), "b": np.full(SHAPE[:2], 7.0), "out": np.zeros(SHAPE),
            "s": 1.0, "t": 1}
    args.update(replace)
    return args


def snapshot(value):
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value


def run(stencil, args):
    before = {k: snapshot(v) for k, v in args.items() if k not in ("a", "out")}
    stencil(**args, origin=(0, 0, 0), domain=SHAPE)
    np.testing.assert_array_equal(args["out"], 2.0 * args["a"])
    for k, v in before.items():  # the unused values are untouched
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(args[k], v)
        else:
            assert args[k] == v


@pytest.fixture(scope="module")
def stencils():
    """cpu and numpy; cuda (in host emulation) is built where a test asks for it."""
    return {"cpu": gtscript.stencil("cpu", unused_defn),
            "numpy": gtscript.stencil("numpy", unused_defn)}


def stencil_for(stencils, backend):
    if backend == "cuda" and "cuda" not in stencils:
        require_compiler()  # skips, saying why, where the emulation has no host C compiler
        stencils["cuda"] = emulate(gtscript.stencil("cuda", unused_defn))
    return stencils[backend]


@pytest.fixture(params=["cpu", "numpy", "cuda"])
def any_stencil(request, stencils):
    return stencil_for(stencils, request.param)


def test_access_is_none():
    st = gtscript.stencil("numpy", unused_defn)
    assert st.field_info["b"].access == AccessKind.NONE
    assert st.parameter_info["s"].access == AccessKind.NONE
    assert st.parameter_info["t"].access == AccessKind.NONE


@pytest.mark.parametrize("label,replace", BAD_VALUES, ids=[v[0] for v in BAD_VALUES])
def test_gt4py_accepts_these_values(label, replace):
    """The oracle: GT4Py 1.1's own numpy backend runs every one of these calls."""
    gt = pytest.importorskip("gt4py.cartesian.gtscript")

    def gt4py_unused_defn(a: gt.Field[np.float64], b: gt.Field[gt.IJ, np.float64],
                          out: gt.Field[np.float64], s: float, t: int):
        with computation(PARALLEL), interval(...):
            if __INLINED(False):
                out = b + s
            out = a * 2.0

    st = gt.stencil(backend="numpy", definition=gt4py_unused_defn)
    assert st.field_info["b"].access.name == "NONE"
    assert st.parameter_info["s"].access.name == "NONE"
    run(st, make_args(np.random.default_rng(0), **replace))


@pytest.mark.parametrize("label,replace", BAD_VALUES, ids=[v[0] for v in BAD_VALUES])
def test_unused_values_are_not_checked_nor_touched(any_stencil, label, replace):
    run(any_stencil, make_args(np.random.default_rng(0), **replace))


def test_positional_and_read_only_unused_arrays(any_stencil):
    rng = np.random.default_rng(1)
    args = make_args(rng)
    b = np.full(SHAPE, 7.0)
    b.flags.writeable = False
    any_stencil(args["a"], b, args["out"], "no", [1], origin=(0, 0, 0), domain=SHAPE)
    np.testing.assert_array_equal(args["out"], 2.0 * args["a"])
    np.testing.assert_array_equal(b, 7.0)


class _NoRepr(np.ndarray):
    def __repr__(self):
        return "<a view reaching outside its memory>"

    __str__ = __repr__


def test_an_unused_view_reaching_outside_memory_is_never_touched(any_stencil):
    """A view a used argument is refused for (its strides reach past its memory): unused,
    nothing reads it, so it runs (reading it would fault or read garbage)."""
    rng = np.random.default_rng(2)
    base = np.full((2, 2), 7.0)
    wild = np.lib.stride_tricks.as_strided(base, shape=(1000, 1000), strides=(8 << 20, 8 << 20))
    wild = wild.view(_NoRepr)  # a failure's report must not print (read) it either
    args = make_args(rng, b=wild)
    any_stencil(**args, origin=(0, 0, 0), domain=SHAPE)
    np.testing.assert_array_equal(args["out"], 2.0 * args["a"])
    np.testing.assert_array_equal(base, 7.0)


def test_a_debug_record_says_the_value_was_not_checked(any_stencil, caplog):
    rng = np.random.default_rng(3)
    with caplog.at_level(logging.DEBUG, logger="gtscript"):
        run(any_stencil, make_args(rng, b=np.zeros(SHAPE), t="x"))
    messages = [r.getMessage() for r in caplog.records
                if r.name == "gtscript" and r.levelno == logging.DEBUG]
    about_b = [m for m in messages if "argument 'b'" in m]
    about_t = [m for m in messages if "argument 't'" in m]
    assert len(about_b) == 1 and "3 dimensions where 2 are declared" in about_b[0], messages
    assert "not checked" in about_b[0] and "unused_defn" in about_b[0]
    assert len(about_t) == 1 and "str, not a scalar of dtype int64" in about_t[0], messages
    # a value that matches its declaration, and None, need no record
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="gtscript"):
        run(any_stencil, make_args(rng))
        run(any_stencil, make_args(rng, b=None, s=None))
    assert not [r for r in caplog.records if "argument '" in r.getMessage()]


def test_no_record_above_debug(any_stencil, caplog):
    with caplog.at_level(logging.INFO, logger="gtscript"):
        run(any_stencil, make_args(np.random.default_rng(4), b=np.zeros(SHAPE)))
    assert not [r for r in caplog.records if "argument 'b'" in r.getMessage()]


def test_used_arguments_are_still_checked(any_stencil):
    rng = np.random.default_rng(5)
    for replace, error, match in [
            ({"a": rng.random(SHAPE[:2])}, ValueError, "'a' must have 3 dimensions"),
            ({"a": np.ones(SHAPE, dtype=np.float32)}, TypeError, "'a' has dtype float32"),
            ({"out": None}, TypeError, "'out' is None")]:
        args = make_args(rng, b=np.zeros(SHAPE), **replace)
        out = args["out"]
        with pytest.raises(error, match=match):
            any_stencil(**args, origin=(0, 0, 0), domain=SHAPE)
        if out is not None:
            np.testing.assert_array_equal(out, 0.0)


def split_at(x: Field[np.float64], out: Field[np.float64], nk: int):
    with computation(PARALLEL):
        with interval(0, nk):
            out = x
        with interval(nk, None):
            out = -x


@pytest.mark.parametrize("backend", ["cpu", "numpy", "cuda"])
def test_a_scalar_read_only_as_an_interval_bound_is_used(backend):
    """Its value decides the levels: it is required and checked, never dropped as unused."""
    if backend == "cuda":
        require_compiler()
    st = gtscript.stencil(backend, split_at)
    if backend == "cuda":
        emulate(st)
    assert st.parameter_info["nk"].access == AccessKind.READ
    x, out = np.random.default_rng(6).random(SHAPE), np.zeros(SHAPE)
    st(x, out, 2)
    np.testing.assert_array_equal(out, np.concatenate([x[:, :, :2], -x[:, :, 2:]], axis=2))
    out[...] = 0.0
    with pytest.raises(TypeError, match="missing required argument 'nk'"):
        st(x, out)
    with pytest.raises(TypeError, match="'nk' must be a int64 scalar"):
        st(x, out, "2")
    with pytest.raises(ValueError, match="'nk'"):
        st(x, out, SHAPE[2] + 1)
    np.testing.assert_array_equal(out, 0.0)


class _BrokenDeviceArray:
    """An object whose __cuda_array_interface__ a used argument would be refused for."""

    __cuda_array_interface__ = {"shape": "not a tuple"}


def test_an_unused_device_array_is_not_viewed_on_cuda(stencils):
    """The cuda call path views device arrays before binding: an unused one is left alone
    (not viewed, its producer's stream not waited for), as binding then drops it."""
    st = stencil_for(stencils, "cuda")
    rng = np.random.default_rng(7)
    run(st, make_args(rng, b=_BrokenDeviceArray()))  # by keyword
    a = make_args(rng)
    st(a["a"], _BrokenDeviceArray(), a["out"], 1.0, 1, origin=(0, 0, 0), domain=SHAPE)
    np.testing.assert_array_equal(a["out"], 2.0 * a["a"])  # positionally
    with pytest.raises(TypeError, match="invalid __cuda_array_interface__"):
        st(_BrokenDeviceArray(), None, np.zeros(SHAPE), origin=(0, 0, 0), domain=SHAPE)
