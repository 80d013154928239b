"""``field_info[name].access`` and ``.boundary`` in K follow GT4Py's rules: access in program
order (a read before the first write makes READ_WRITE), and the K boundary counted from the
interval each access is in (negative where the accesses stay inside the domain). The
expectations are written out by hand; tests/compat_gt4py/test_conformance_gt4py.py compares the corpus
with GT4Py itself."""

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, computation, interval
from gtscript.info import AccessKind


def _info(definition, backend="cpu"):
    return gtscript.stencil(backend, definition).field_info


def test_read_below_inside_interval_starting_at_one_needs_no_level_below():
    def f(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(1, None):
            out = a[0, 0, -1]

    info = _info(f)
    # lowest level read: 1 - 1 = 0; highest: the top level - 1
    assert info["a"].boundary == ((0, 0), (0, 0), (0, -1))
    assert info["a"]["extent"] == ((0, 0), (0, 0), (-1, 0))  # the signed offsets stay
    assert info["out"].boundary == ((0, 0), (0, 0), (-1, 0))


def test_top_anchored_and_bottom_anchored_sides():
    def f(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(0, -2):
            out = a[0, 0, 3]
        with computation(PARALLEL), interval(2, 5):
            out = b
        with computation(PARALLEL), interval(-3, -1):
            out = b[0, 0, -1]

    info = _info(f)
    # (0, -2) reading +3: from level 3 up to one level above the top
    assert info["a"].boundary[2] == (-3, 1)
    # only bottom-anchored starts count below: (2, 5) gives -2; only (-3, -1)'s end above,
    # read at -1: -2
    assert info["b"].boundary[2] == (-2, -2)
    assert info["out"].boundary[2] == (0, -1)


def test_variable_k_offsets_add_nothing():
    def f(a: Field[np.float64], out: Field[np.float64], lag: int):
        with computation(PARALLEL), interval(0, -2):
            out = a[0, 0, lag]

    info = _info(f)
    assert info["a"].boundary == ((0, 0), (0, 0), (0, 0))
    assert info["out"].boundary == ((0, 0), (0, 0), (0, -2))


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_access_follows_program_order(backend):
    def f(a: Field[np.float64], out: Field[np.float64], acc: Field[np.float64],
          col: Field[np.float64], tot: Field[IJ, np.float64]):
        with computation(PARALLEL), interval(...):
            out = a
            out += 1.0
        with computation(FORWARD), interval(1, None):
            acc = 0.5 * acc[0, 0, -1] + a
        with computation(BACKWARD):
            with interval(-1, None):
                col = a
            with interval(0, -1):
                col = col[0, 0, 1] + a
        with computation(FORWARD), interval(...):
            tot = tot + a

    info = _info(f, backend)
    assert info["a"].access is AccessKind.READ
    assert info["out"].access is AccessKind.WRITE and info["out"]["intent"] == "inout"
    assert info["acc"].access is AccessKind.READ_WRITE  # level 0 is read, never written
    assert info["col"].access is AccessKind.WRITE
    assert info["tot"].access is AccessKind.READ_WRITE
    assert info["col"].boundary[2] == (0, 0)


def test_unused_field_has_no_boundary():
    def f(a: Field[np.float64], out: Field[np.float64], spare: Field[np.float64]):
        with computation(PARALLEL), interval(3, None):
            out = a

    info = _info(f)
    assert info["spare"].access is AccessKind.NONE
    assert info["spare"].boundary == ((0, 0), (0, 0), (0, 0))
    assert info["a"].boundary == ((0, 0), (0, 0), (-3, 0))
