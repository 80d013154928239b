"""Horizontal regions: AxisIndex bounds, slices, integer bounds, externals as bounds."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import FORWARD, PARALLEL, Field, I, J, computation, horizontal, interval, region

from gt4py_corpus.case import Case

CASES = []


def region_first_i(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[0], :]):
            out = 0.0


CASES.append(Case(region_first_i))


def region_last_points(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[-1], :], region[:, J[-1]]):
            out = -1.0


CASES.append(Case(region_last_points))


def region_slices(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[0]:I[0] + 2, J[0] + 1:J[-1]]):
            out = 2.0 * a


CASES.append(Case(region_slices))


def region_corner(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = 0.0
        with horizontal(region[I[0], J[0]]):
            out = a


CASES.append(Case(region_corner))


def region_with_offset_reads(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[0], :]):
            out = a[1, 0, 0] - a
        with horizontal(region[I[-1], :]):
            out = a - a[-1, 0, 0]


CASES.append(Case(region_with_offset_reads))


def region_open_ended(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[0] + 2:, :J[0] + 2]):
            out = a * a


CASES.append(Case(region_open_ended))


def region_in_forward(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            out = out[0, 0, -1] + a
            with horizontal(region[:, J[0]]):
                out = a


CASES.append(Case(region_in_forward))


def region_on_temporary(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        tmp = a
        with horizontal(region[I[0], :]):
            tmp = 0.0
        out = tmp[1, 0, 0] + tmp


CASES.append(Case(region_on_temporary))


def region_axis_offset(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[0] + 1, :]):
            out = 5.0


CASES.append(Case(region_axis_offset))


def region_bounds_from_externals(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import i_start, j_end

    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[i_start, :], region[:, j_end]):
            out = a + 10.0


CASES.append(Case(region_bounds_from_externals,
                  externals=lambda m: {"i_start": m.gtscript.I[0], "j_end": m.gtscript.J[-1]}))


def region_integer_bounds(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[3:-3, :]):
            out = 0.0


CASES.append(Case(region_integer_bounds, needs="integer region bounds"))


def region_integer_upper(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[:, :-1]):
            out = a * 3.0


CASES.append(Case(region_integer_upper, needs="integer region bounds"))


def region_one_line(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
    with computation(PARALLEL), interval(...), horizontal(region[I[0], :]):
        out = 1.0


CASES.append(Case(region_one_line, needs="computation, interval and horizontal on one line"))


def region_reads_halo_only_there(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[0], :]):
            out = a[1, 0, 0] + a[0, 1, 0]
        with horizontal(region[:, J[-1]]):
            out = a[0, -1, 0]


CASES.append(Case(region_reads_halo_only_there, origin=(0, 0, 0), domain=(10, 8, 7),
                  needs="per-region extents (reads outside the domain only inside a region)"))
