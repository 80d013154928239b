"""Temporaries are checked level by level: a read on K levels that no interval writes is an
error when none of the levels it reads is ever written, a warning when some may not be; the
sequential sweeps that read the previous level of a temporary written at every level, and
K-offset reads of levels that are written, stay quiet (and compute what hand-written NumPy
computes on cpu and numpy)."""

import inspect
import warnings

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSemanticError

F64 = Field[np.float64]
SHAPE = (3, 2, 6)


def _line_of(defn, text):
    lines, first = inspect.getsourcelines(defn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _build_quietly(defn, backend="numpy", **externals):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all
        return gtscript.stencil(backend=backend, definition=defn, rebuild=True,
                                externals=externals or None)


def _one_warning(defn, **externals):
    with pytest.warns(UserWarning) as record:
        gtscript.stencil(backend="numpy", definition=defn, rebuild=True,
                         externals=externals or None)
    level_warnings = [w for w in record if "no interval writes" in str(w.message)]
    assert len(level_warnings) == 1, [str(w.message) for w in record]
    return level_warnings[0]


def test_a_read_on_levels_never_written_is_an_error():
    def defn(a: F64, out: F64):
        with computation(PARALLEL):
            with interval(0, 1):
                t = a
            with interval(1, None):
                out = t  # <- here

    with pytest.raises(GTScriptSemanticError, match="'t' is read here on K levels that no "
                                                    "interval writes") as info:
        gtscript.stencil(backend="numpy", definition=defn, rebuild=True)
    assert info.value.lineno == _line_of(defn, "# <- here")


def test_a_read_in_another_computation_on_levels_never_written_is_an_error():
    def defn(a: F64, out: F64):
        with computation(PARALLEL), interval(-2, None):
            t = a
        with computation(FORWARD), interval(0, -2):
            out = t + 1.0  # <- here

    with pytest.raises(GTScriptSemanticError, match="no interval writes") as info:
        gtscript.stencil(backend="cpu", definition=defn, rebuild=True)
    assert info.value.lineno == _line_of(defn, "# <- here")


def test_a_shifted_read_of_levels_never_written_is_an_error():
    def defn(a: F64, out: F64):
        with computation(PARALLEL):
            with interval(0, 1):
                t = a
            with interval(2, None):
                out = t[0, 0, -1]  # <- here: levels 1 .. N - 2

    with pytest.raises(GTScriptSemanticError, match="no interval writes"):
        gtscript.stencil(backend="numpy", definition=defn, rebuild=True)


def test_a_read_of_levels_written_only_for_some_sizes_is_a_warning():
    def defn(a: F64, out: F64):
        with computation(PARALLEL):
            with interval(0, 3):
                t = a
            with interval(-3, None):
                t = 2.0 * a
        with computation(PARALLEL), interval(...):
            out = t  # <- here: levels 3 .. N - 4 when N > 6

    w = _one_warning(defn)
    assert w.lineno == _line_of(defn, "# <- here")


def test_reading_the_previous_level_of_a_partly_written_temporary_is_a_warning():
    def defn(a: F64, out: F64):
        with computation(FORWARD):
            with interval(0, 1):
                t = a
            with interval(1, None):
                out = t[0, 0, -1]  # <- here

    w = _one_warning(defn)
    assert "'t'" in str(w.message)


def _sweeps(a: F64, up: F64, down: F64, lagged: F64):
    with computation(FORWARD):
        with interval(0, 1):
            acc = a
        with interval(1, None):
            acc = acc[0, 0, -1] + a
    with computation(BACKWARD):
        with interval(-1, None):
            rev = a
        with interval(0, -1):
            rev = rev[0, 0, 1] + a
    with computation(PARALLEL), interval(...):
        up = acc
        down = rev
        whole = 2.0 * a
    with computation(PARALLEL), interval(1, None):
        lagged = whole[0, 0, -1]


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_sweeps_and_shifted_reads_of_written_levels_stay_quiet_and_compute(backend):
    stencil = _build_quietly(_sweeps, backend)
    rng = np.random.default_rng(11)
    a = rng.random(SHAPE)
    up, down, lagged = (np.full(SHAPE, -5.0) for _ in range(3))
    stencil(a, up, down, lagged)
    np.testing.assert_allclose(up, np.cumsum(a, axis=2))
    np.testing.assert_allclose(down, np.cumsum(a[:, :, ::-1], axis=2)[:, :, ::-1])
    expected = np.full(SHAPE, -5.0)
    expected[:, :, 1:] = 2.0 * a[:, :, :-1]
    np.testing.assert_allclose(lagged, expected)


def test_top_and_bottom_pieces_that_cover_every_level_stay_quiet():
    def defn(a: F64, out: F64):
        with computation(PARALLEL):
            with interval(0, 2):
                t = a
            with interval(2, -1):
                t = 3.0 * a
            with interval(-1, None):
                t = -a
        with computation(PARALLEL), interval(...):
            out = t

    stencil = _build_quietly(defn, "cpu")
    a = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
    out = np.zeros(SHAPE)
    stencil(a, out)
    expected = 3.0 * a
    expected[:, :, :2] = a[:, :, :2]
    expected[:, :, -1] = -a[:, :, -1]
    np.testing.assert_array_equal(out, expected)


def test_bounds_from_externals_are_checked_too():
    def defn(a: F64, out: F64):
        from __externals__ import TOP

        with computation(PARALLEL):
            with interval(0, TOP):
                t = a
            with interval(TOP, None):
                out = t

    with pytest.raises(GTScriptSemanticError, match="no interval writes"):
        gtscript.stencil(backend="numpy", definition=defn, rebuild=True, externals={"TOP": 2})


def test_a_variable_k_read_is_left_to_the_call():
    def defn(a: F64, out: F64, dk: int):
        with computation(PARALLEL), interval(0, 1):
            t = a
        with computation(PARALLEL), interval(...):
            out = t[0, 0, dk]

    _build_quietly(defn)


def test_off_centre_writes_count_for_the_levels_they_write():
    def defn(a: F64, out: F64):
        with computation(FORWARD):
            with interval(0, 1):
                t = a
                t[0, 0, 1] = a[0, 0, 1] * 0.5
            with interval(1, -1):
                t[0, 0, 1] = t + a[0, 0, 1]
        with computation(PARALLEL), interval(...):
            out = t

    stencil = _build_quietly(defn, "cpu")
    a = np.random.default_rng(5).random(SHAPE)
    out = np.zeros(SHAPE)
    stencil(a, out)
    expected = np.zeros(SHAPE)
    expected[:, :, 0] = a[:, :, 0]
    expected[:, :, 1] = 0.5 * a[:, :, 1]
    for k in range(1, SHAPE[2] - 1):
        expected[:, :, k + 1] = expected[:, :, k] + a[:, :, k + 1]
    np.testing.assert_allclose(out, expected)


def test_an_off_centre_write_that_leaves_levels_unwritten_is_caught():
    def defn(a: F64, out: F64):
        with computation(FORWARD), interval(0, -1):
            t[0, 0, 1] = a  # writes levels 1 .. N - 1 only
        with computation(PARALLEL), interval(0, 1):
            out = t  # <- here: level 0

    with pytest.raises(GTScriptSemanticError, match="no interval writes") as info:
        gtscript.stencil(backend="numpy", definition=defn, rebuild=True)
    assert info.value.lineno == _line_of(defn, "# <- here")


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_an_ij_temporary_written_on_one_level_serves_the_later_ones(backend):
    """An IJ temporary holds one plane from level to level: written at the bottom, it is
    defined on every later level of a FORWARD sweep (no level error, no warning)."""
    from gtscript import IJ

    def defn(a: F64, out: F64):
        with computation(FORWARD):
            with interval(0, 1):
                base: Field[IJ, np.float64] = a
                out = a
            with interval(1, None):
                out = a - base

    st = _build_quietly(defn, backend)
    a = np.random.default_rng(3).random(SHAPE)
    out = np.zeros(SHAPE)
    st(a, out)
    expected = a - a[:, :, :1]
    expected[:, :, 0] = a[:, :, 0]
    np.testing.assert_allclose(out, expected)


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_run_time_interval_bounds_are_left_to_the_call(backend):
    """With a bound known only at the call, the levels a temporary is written on are not known
    when the stencil is built: no level error (the call checks the intervals)."""

    def defn(a: F64, out: F64, nk: int):
        with computation(PARALLEL):
            with interval(0, nk):
                t = a
            with interval(nk, None):
                t = 2.0 * a
        with computation(PARALLEL), interval(...):
            out = t

    st = _build_quietly(defn, backend)
    a = np.random.default_rng(4).random(SHAPE)
    out = np.zeros(SHAPE)
    st(a, out, nk=2)
    expected = a.copy()
    expected[:, :, 2:] *= 2.0
    np.testing.assert_allclose(out, expected)
