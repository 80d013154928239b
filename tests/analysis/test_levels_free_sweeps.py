"""FORWARD and BACKWARD computations that no value crosses a level of (csrc/analysis/schedule.c).

A sweep runs level after level so that a level can read what the levels before it wrote. One
that reads nothing it writes at another level, writes only at its own level and only arrays
with all three axes, reads no argument field at another level and has constant interval
bounds computes the same values in any order of its levels: the cpu backend runs it as
PARALLEL (loop nests along K in C order, its temporaries in registers). ``stencil.ir()`` says
so. Every case, converted or not, is compared bit for bit with the numpy backend (which runs
every sweep level by level) and with hand-written NumPy.
"""

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, computation, interval

F64 = np.float64
NOTE = "runs as PARALLEL"


def point_wise(a: Field[F64], b: Field[F64], out: Field[F64]):
    with computation(FORWARD), interval(...):
        x = a * 2.0 + b
        y = 0.0
        if x > 1.0:
            y = x - 1.0
        n = 0.0
        while n < a * 3.0:
            n = n + 1.0
        out = x * y + n


def point_wise_numpy(a, b):
    x = a * 2.0 + b
    return x * np.where(x > 1.0, x - 1.0, 0.0) + np.maximum(np.ceil(a * 3.0), 0.0)


def backward_two_intervals(a: Field[F64], out: Field[F64]):
    with computation(BACKWARD):
        with interval(-1, None):
            t = a * 3.0
            out = t - 1.0
        with interval(0, -1):
            t = a * 0.5 + a[1, 0, 0]  # a horizontal offset: fine, it is not written
            out = t + a


def backward_two_intervals_numpy(a, out):
    out = out.copy()
    n = a.shape[0] - 1
    out[:n, :, -1] = a[:n, :, -1] * 3.0 - 1.0
    out[:n, :, :-1] = a[:n, :, :-1] * 0.5 + a[1:, :, :-1] + a[:n, :, :-1]
    return out


def shifted_temporary(a: Field[F64], out: Field[F64]):
    # a temporary written and read at a horizontal offset at the same level: not a column
    # sweep, but still no value crosses a level
    with computation(FORWARD), interval(...):
        t = a * a
        out = t[1, 0, 0] - t[-1, 0, 0]


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_sweep_no_value_crosses_runs_as_parallel_with_the_same_bits(order):
    rng = np.random.default_rng(3)
    shape = (7, 6, 9)
    a, b = (np.asarray(rng.random(shape), order=order) for _ in range(2))
    cases = [
        (point_wise, (a, b, np.zeros(shape, order=order)), {}, lambda x: point_wise_numpy(a, b), 2),
        (backward_two_intervals, (a, np.full(shape, -5.0, order=order)),
         {"domain": (6, 6, 9)}, lambda x: backward_two_intervals_numpy(a, x[1]), 1),
        (shifted_temporary, (a, np.full(shape, -5.0, order=order)),
         {"origin": (1, 0, 0), "domain": (5, 6, 9)}, None, 1),
    ]
    for defn, arrays, call, hand, result in cases:
        st = gtscript.stencil("cpu", defn)
        assert NOTE in st.ir(), defn.__name__
        got = [x.copy(order="K") for x in arrays]
        ref = [x.copy(order="K") for x in arrays]
        st(*got, **call)
        gtscript.stencil("numpy", defn)(*ref, **call)
        for x, y in zip(got, ref):
            np.testing.assert_array_equal(x, y)
        if hand is not None:
            np.testing.assert_array_equal(got[result], hand(arrays))
    expected = np.full(shape, -5.0)
    expected[1:6] = a[2:] ** 2 - a[:5] ** 2
    np.testing.assert_array_equal(got[1], expected)


def carried(a: Field[F64], out: Field[F64]):
    with computation(FORWARD):
        with interval(0, 1):
            t = a
            out = t
        with interval(1, None):
            t = 0.5 * t[0, 0, -1] + a  # a value carried from the level below
            out = t


def reads_an_argument_below(a: Field[F64], out: Field[F64]):
    with computation(FORWARD), interval(1, None):
        out = a[0, 0, -1] * 0.5 + a  # `a` may be `out` itself (an in-place call)


def reads_an_argument_below_in_two_nests(a: Field[F64], b: Field[F64], out: Field[F64]):
    with computation(FORWARD), interval(1, None):
        # written under a condition (always true here): not recomputed where read (inline.c)
        t = 0.0
        if b > -1.0:
            t = a[0, 0, -1] * 0.5
        u = 0.0
        if b > -1.0:
            u = b * 2.0  # read one point further in I below: a loop nest of its own
        out = t + a + u[1, 0, 0]


def writes_an_ij_field(a: Field[F64], last: Field[IJ, F64]):
    with computation(FORWARD), interval(...):
        last = a * 2.0  # the top level's value is what remains


def runtime_bound(a: Field[F64], out: Field[F64], k0: int):
    with computation(FORWARD), interval(k0, None):
        out = a * 2.0


@pytest.mark.parametrize("name", ["carried", "reads_an_argument_below", "writes_an_ij_field",
                                  "runtime_bound"])
def test_sweeps_that_order_their_levels_stay_sweeps(name):
    defn = globals()[name]
    st = gtscript.stencil("cpu", defn)
    assert NOTE not in st.ir()
    rng = np.random.default_rng(5)
    a = rng.random((4, 5, 6))
    if name == "writes_an_ij_field":
        arrays, call = (a, np.zeros((4, 5))), {}
    elif name == "runtime_bound":
        arrays, call = (a, np.zeros(a.shape)), {"k0": 2}
    else:
        arrays, call = (a, np.zeros(a.shape)), {}
    got = [x.copy() for x in arrays]
    ref = [x.copy() for x in arrays]
    st(*got, **call)
    gtscript.stencil("numpy", defn)(*ref, **call)
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)
    if name == "writes_an_ij_field":
        np.testing.assert_array_equal(got[1], a[:, :, -1] * 2.0)


def test_an_in_place_sweep_reading_the_level_below_sees_the_new_values():
    """out = a[0, 0, -1] * 0.5 + a with `a` and `out` one array: level by level, each level
    reads the one below as the sweep left it (a recurrence), so the computation must keep
    its order even though `out` is never read as such."""
    rng = np.random.default_rng(9)
    x = rng.random((3, 4, 7))
    hand = x.copy()
    for k in range(1, x.shape[2]):
        hand[:, :, k] = hand[:, :, k - 1] * 0.5 + hand[:, :, k]
    for backend in ("cpu", "numpy"):
        y = x.copy()
        gtscript.stencil(backend, reads_an_argument_below)(y, y)
        np.testing.assert_array_equal(y, hand)
    # the same through several loop nests (u over one more point in I): run as PARALLEL,
    # the first would read every level's old value
    b = rng.random(x.shape)
    hand = x.copy()
    for k in range(1, x.shape[2]):
        hand[:2, :, k] = hand[:2, :, k - 1] * 0.5 + hand[:2, :, k] + b[1:, :, k] * 2.0
    for backend in ("cpu", "numpy"):
        y = x.copy()
        gtscript.stencil(backend, reads_an_argument_below_in_two_nests)(y, b, y, domain=(2, 4, 7))
        np.testing.assert_array_equal(y, hand)


def gt4py_definitions(F):
    """The converted computations, annotated with one frontend's Field (GT4Py's or gtscript's:
    the same text, so both frontends read the same definition)."""

    def point_wise(a: F[np.float64], b: F[np.float64], out: F[np.float64]):
        with computation(FORWARD), interval(...):
            x = a * 2.0 + b
            y = 0.0
            if x > 1.0:
                y = x - 1.0
            out = x * y

    def backward_two_intervals(a: F[np.float64], out: F[np.float64]):
        with computation(BACKWARD):
            with interval(-1, None):
                t = a * 3.0
                out = t - 1.0
            with interval(0, -1):
                t = a * 0.5 + a[1, 0, 0]
                out = t + a

    def reads_an_argument_below_in_two_nests(a: F[np.float64], b: F[np.float64],
                                             out: F[np.float64]):
        with computation(FORWARD), interval(1, None):
            t = 0.0
            if b > -1.0:
                t = a[0, 0, -1] * 0.5
            u = 0.0
            if b > -1.0:
                u = b * 2.0
            out = t + a + u[1, 0, 0]

    return {"point_wise": point_wise, "backward_two_intervals": backward_two_intervals,
            "in_place": reads_an_argument_below_in_two_nests}


@pytest.mark.parametrize("name", ["point_wise", "backward_two_intervals", "in_place"])
def test_converted_sweeps_give_gt4pys_results(name):
    """GT4Py's own numpy backend on the same definitions (the in-place call included: GT4Py
    runs it level by level, each level reading the one below as the sweep left it)."""
    gt = pytest.importorskip("gt4py.cartesian.gtscript")
    mine = gt4py_definitions(Field)[name]
    theirs = gt4py_definitions(gt.Field)[name]
    if name != "in_place":
        assert NOTE in gtscript.stencil("cpu", mine).ir()
    rng = np.random.default_rng(13)
    a, b = rng.random((6, 5, 7)), rng.random((6, 5, 7))
    domain = (5, 5, 7)
    if name == "in_place":
        got, want = a.copy(), a.copy()
        gtscript.stencil("cpu", mine)(got, b, got, domain=domain)
        gt.stencil(backend="numpy", definition=theirs)(want, b, want, origin=(0, 0, 0),
                                                          domain=domain)
        np.testing.assert_array_equal(got, want)
        return
    args = (a, b, np.zeros(a.shape)) if name == "point_wise" else (a, np.full(a.shape, -5.0))
    got = [x.copy() for x in args]
    want = [x.copy() for x in args]
    gtscript.stencil("cpu", mine)(*got, domain=domain)
    gt.stencil(backend="numpy", definition=theirs)(*want, origin=(0, 0, 0), domain=domain)
    for x, y in zip(got, want):
        np.testing.assert_allclose(x, y, rtol=1e-15, atol=0)
