"""Aliased arguments that cannot race: FV3's and NDSL's halo corner fills pass one array as
input and output (``fill(q, q)``). gtscript accepts such a call when its result provably equals
the result with a separate copy of the input, whatever order the points run in, and refuses the
rest with the aliasing error (docs/parallel-model.md, "Aliases at call time").

The accepted definitions below have the access shapes of the model's corner fills (x and y,
two and three cells, with multipliers, B-grid and D-grid fills, copy_corners with and without a
copy everywhere first), written here from the index rules they implement. Each runs in place
on the cpu and numpy backends and the emulated cuda backend, on views with sentinel margins, and
is compared with the same call on a separate copy of the input, with hand-written NumPy and,
where GT4Py is installed, with GT4Py's numpy backend run in place. The refused definitions are
those a weaker analysis would accept: each breaks the order independence in one way."""

from __future__ import annotations

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, PARALLEL, Field, I, J, computation, horizontal, interval, region
from cuda_emulation.runner import compiler, emulate

F = Field[np.float64]
HALO = 3


def axis_offsets(halo=HALO):
    """NDSL's externals for a call whose domain covers the compute domain and its halo."""
    return {"i_start": I[0] + halo, "i_end": I[-1] - halo, "j_start": J[0] + halo, "j_end": J[-1] - halo}


# ============================================================== corner fills (accepted)

@gtscript.function
def fill_2cells_mult_x(q, q_corner, sw_mult, se_mult, nw_mult, ne_mult):
    from __externals__ import i_end, i_start, j_end, j_start

    with horizontal(region[i_start - 1, j_start - 1]):
        q = sw_mult * q_corner[0, 1, 0]
    with horizontal(region[i_start - 2, j_start - 1]):
        q = sw_mult * q_corner[1, 2, 0]
    with horizontal(region[i_end + 1, j_start - 1]):
        q = se_mult * q_corner[0, 1, 0]
    with horizontal(region[i_end + 2, j_start - 1]):
        q = se_mult * q_corner[-1, 2, 0]
    with horizontal(region[i_start - 1, j_end + 1]):
        q = nw_mult * q_corner[0, -1, 0]
    with horizontal(region[i_start - 2, j_end + 1]):
        q = nw_mult * q_corner[1, -2, 0]
    with horizontal(region[i_end + 1, j_end + 1]):
        q = ne_mult * q_corner[0, -1, 0]
    with horizontal(region[i_end + 2, j_end + 1]):
        q = ne_mult * q_corner[-1, -2, 0]
    return q


@gtscript.function
def fill_3cells_mult_x(q, q_corner, sw_mult, se_mult, nw_mult, ne_mult):
    from __externals__ import i_end, i_start, j_end, j_start

    q = fill_2cells_mult_x(q, q_corner, sw_mult, se_mult, nw_mult, ne_mult)
    with horizontal(region[i_start - 3, j_start - 1]):
        q = sw_mult * q_corner[2, 3, 0]
    with horizontal(region[i_end + 3, j_start - 1]):
        q = se_mult * q_corner[-2, 3, 0]
    with horizontal(region[i_start - 3, j_end + 1]):
        q = nw_mult * q_corner[2, -3, 0]
    with horizontal(region[i_end + 3, j_end + 1]):
        q = ne_mult * q_corner[-2, -3, 0]
    return q


@gtscript.function
def fill_2cells_mult_y(q, q_corner, sw_mult, se_mult, nw_mult, ne_mult):
    from __externals__ import i_end, i_start, j_end, j_start

    with horizontal(region[i_start - 1, j_start - 1]):
        q = sw_mult * q_corner[1, 0, 0]
    with horizontal(region[i_start - 1, j_start - 2]):
        q = sw_mult * q_corner[2, 1, 0]
    with horizontal(region[i_end + 1, j_start - 1]):
        q = se_mult * q_corner[-1, 0, 0]
    with horizontal(region[i_end + 1, j_start - 2]):
        q = se_mult * q_corner[-2, 1, 0]
    with horizontal(region[i_start - 1, j_end + 1]):
        q = nw_mult * q_corner[1, 0, 0]
    with horizontal(region[i_start - 1, j_end + 2]):
        q = nw_mult * q_corner[2, -1, 0]
    with horizontal(region[i_end + 1, j_end + 1]):
        q = ne_mult * q_corner[-1, 0, 0]
    with horizontal(region[i_end + 1, j_end + 2]):
        q = ne_mult * q_corner[-2, -1, 0]
    return q


@gtscript.function
def fill_3cells_mult_y(q, q_corner, sw_mult, se_mult, nw_mult, ne_mult):
    from __externals__ import i_end, i_start, j_end, j_start

    q = fill_2cells_mult_y(q, q_corner, sw_mult, se_mult, nw_mult, ne_mult)
    with horizontal(region[i_start - 1, j_start - 3]):
        q = sw_mult * q_corner[3, 2, 0]
    with horizontal(region[i_end + 1, j_start - 3]):
        q = se_mult * q_corner[-3, 2, 0]
    with horizontal(region[i_start - 1, j_end + 3]):
        q = nw_mult * q_corner[3, -2, 0]
    with horizontal(region[i_end + 1, j_end + 3]):
        q = ne_mult * q_corner[-3, -2, 0]
    return q


def fill_2cells_x(q_out: F, q_in: F):
    with computation(PARALLEL), interval(...):
        q_out = fill_2cells_mult_x(q_out, q_in, 1.0, 1.0, 1.0, 1.0)


def fill_2cells_y(q_out: F, q_in: F):
    with computation(PARALLEL), interval(...):
        q_out = fill_2cells_mult_y(q_out, q_in, 1.0, 1.0, 1.0, 1.0)


def fill_3cells_mult_x_stencil(q_out: F, q_in: F, sw: float, se: float, nw: float, ne: float):
    with computation(PARALLEL), interval(...):
        q_out = fill_3cells_mult_x(q_out, q_in, sw, se, nw, ne)


def fill_3cells_mult_y_stencil(q_out: F, q_in: F, sw: float, se: float, nw: float, ne: float):
    with computation(PARALLEL), interval(...):
        q_out = fill_3cells_mult_y(q_out, q_in, sw, se, nw, ne)


def fill_bgrid_x_sw(q_in: F, q_out: F):
    # B-grid: the south-west and south-east corners, one statement per pair of points
    from __externals__ import i_end, i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1], region[i_end + 2, j_start - 1]):
            q_out = q_in[0, 2, 0]
        with horizontal(region[i_start - 1, j_start - 2], region[i_end + 3, j_start - 1]):
            q_out = q_in[-1, 3, 0]
        with horizontal(region[i_start - 2, j_start - 1], region[i_end + 2, j_start - 2]):
            q_out = q_in[1, 3, 0]
        with horizontal(region[i_start - 2, j_start - 2], region[i_end + 3, j_start - 2]):
            q_out = q_in[0, 4, 0]


def fill_dgrid_sw(x_in: F, x_out: F, y_in: F, y_out: F, mysign: float):
    # D-grid vector: two aliased pairs, each output filled from the other input
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1]):
            x_out = mysign * y_in[0, 1, 0]
            y_out = mysign * x_in[1, 0, 0]
        with horizontal(region[i_start - 1, j_start - 2]):
            x_out = mysign * y_in[-1, 2, 0]
            y_out = mysign * x_in[2, 1, 0]
        with horizontal(region[i_start - 2, j_start - 1]):
            x_out = mysign * y_in[1, 2, 0]
            y_out = mysign * x_in[2, -1, 0]
        with horizontal(region[i_start - 2, j_start - 2]):
            x_out = mysign * y_in[0, 3, 0]
            y_out = mysign * x_in[3, 0, 0]


def copy_corners_x(q_in: F, q_out: F):
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 3, j_start - 3], region[i_end + 3, j_start - 3]):
            q_out = q_in[0, 5, 0]
        with horizontal(region[i_start - 3, j_start - 2], region[i_end + 2, j_start - 3]):
            q_out = q_in[1, 4, 0]
        with horizontal(region[i_start - 3, j_start - 1], region[i_end + 1, j_start - 3]):
            q_out = q_in[2, 3, 0]
        with horizontal(region[i_start - 2, j_start - 3], region[i_end + 3, j_start - 2]):
            q_out = q_in[-1, 4, 0]
        with horizontal(region[i_start - 2, j_start - 2], region[i_end + 2, j_start - 2]):
            q_out = q_in[0, 3, 0]
        with horizontal(region[i_start - 2, j_start - 1], region[i_end + 1, j_start - 2]):
            q_out = q_in[1, 2, 0]
        with horizontal(region[i_start - 1, j_start - 3], region[i_end + 3, j_start - 1]):
            q_out = q_in[-2, 3, 0]
        with horizontal(region[i_start - 1, j_start - 2], region[i_end + 2, j_start - 1]):
            q_out = q_in[-1, 2, 0]
        with horizontal(region[i_start - 1, j_start - 1], region[i_end + 1, j_start - 1]):
            q_out = q_in[0, 1, 0]
        with horizontal(region[i_start - 3, j_end + 1], region[i_end + 1, j_end + 3]):
            q_out = q_in[2, -3, 0]
        with horizontal(region[i_start - 3, j_end + 2], region[i_end + 2, j_end + 3]):
            q_out = q_in[1, -4, 0]
        with horizontal(region[i_start - 3, j_end + 3], region[i_end + 3, j_end + 3]):
            q_out = q_in[0, -5, 0]
        with horizontal(region[i_start - 2, j_end + 1], region[i_end + 1, j_end + 2]):
            q_out = q_in[1, -2, 0]
        with horizontal(region[i_start - 2, j_end + 2], region[i_end + 2, j_end + 2]):
            q_out = q_in[0, -3, 0]
        with horizontal(region[i_start - 2, j_end + 3], region[i_end + 3, j_end + 2]):
            q_out = q_in[-1, -4, 0]
        with horizontal(region[i_start - 1, j_end + 1], region[i_end + 1, j_end + 1]):
            q_out = q_in[0, -1, 0]
        with horizontal(region[i_start - 1, j_end + 2], region[i_end + 2, j_end + 1]):
            q_out = q_in[-1, -2, 0]
        with horizontal(region[i_start - 1, j_end + 3], region[i_end + 3, j_end + 1]):
            q_out = q_in[-2, -3, 0]


def copy_corners_y(q_in: F, q_out: F):
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 3, j_start - 3], region[i_start - 3, j_end + 3]):
            q_out = q_in[5, 0, 0]
        with horizontal(region[i_start - 2, j_start - 3], region[i_start - 3, j_end + 2]):
            q_out = q_in[4, 1, 0]
        with horizontal(region[i_start - 1, j_start - 3], region[i_start - 3, j_end + 1]):
            q_out = q_in[3, 2, 0]
        with horizontal(region[i_start - 3, j_start - 2], region[i_start - 2, j_end + 3]):
            q_out = q_in[4, -1, 0]
        with horizontal(region[i_start - 2, j_start - 2], region[i_start - 2, j_end + 2]):
            q_out = q_in[3, 0, 0]
        with horizontal(region[i_start - 1, j_start - 2], region[i_start - 2, j_end + 1]):
            q_out = q_in[2, 1, 0]
        with horizontal(region[i_start - 3, j_start - 1], region[i_start - 1, j_end + 3]):
            q_out = q_in[3, -2, 0]
        with horizontal(region[i_start - 2, j_start - 1], region[i_start - 1, j_end + 2]):
            q_out = q_in[2, -1, 0]
        with horizontal(region[i_start - 1, j_start - 1], region[i_start - 1, j_end + 1]):
            q_out = q_in[1, 0, 0]
        with horizontal(region[i_end + 1, j_start - 3], region[i_end + 3, j_end + 1]):
            q_out = q_in[-3, 2, 0]
        with horizontal(region[i_end + 2, j_start - 3], region[i_end + 3, j_end + 2]):
            q_out = q_in[-4, 1, 0]
        with horizontal(region[i_end + 3, j_start - 3], region[i_end + 3, j_end + 3]):
            q_out = q_in[-5, 0, 0]
        with horizontal(region[i_end + 1, j_start - 2], region[i_end + 2, j_end + 1]):
            q_out = q_in[-2, 1, 0]
        with horizontal(region[i_end + 2, j_start - 2], region[i_end + 2, j_end + 2]):
            q_out = q_in[-3, 0, 0]
        with horizontal(region[i_end + 3, j_start - 2], region[i_end + 2, j_end + 3]):
            q_out = q_in[-4, -1, 0]
        with horizontal(region[i_end + 1, j_start - 1], region[i_end + 1, j_end + 1]):
            q_out = q_in[-1, 0, 0]
        with horizontal(region[i_end + 2, j_start - 1], region[i_end + 1, j_end + 2]):
            q_out = q_in[-2, -1, 0]
        with horizontal(region[i_end + 3, j_start - 1], region[i_end + 1, j_end + 3]):
            q_out = q_in[-3, -2, 0]


def copy_corners_xy(q_in: F, q_out_x: F, q_out_y: F):
    # called (q, q, y): q becomes x-differenceable in place, y a y-differenceable copy
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        q_out_x = q_in
        q_out_y = q_in
        with horizontal(region[i_start - 3, j_start - 3], region[i_end + 3, j_start - 3]):
            q_out_x = q_in[0, 5, 0]
        with horizontal(region[i_start - 3, j_start - 2], region[i_end + 2, j_start - 3]):
            q_out_x = q_in[1, 4, 0]
        with horizontal(region[i_start - 3, j_start - 1], region[i_end + 1, j_start - 3]):
            q_out_x = q_in[2, 3, 0]
        with horizontal(region[i_start - 2, j_start - 3], region[i_end + 3, j_start - 2]):
            q_out_x = q_in[-1, 4, 0]
        with horizontal(region[i_start - 2, j_start - 2], region[i_end + 2, j_start - 2]):
            q_out_x = q_in[0, 3, 0]
        with horizontal(region[i_start - 2, j_start - 1], region[i_end + 1, j_start - 2]):
            q_out_x = q_in[1, 2, 0]
        with horizontal(region[i_start - 1, j_start - 3], region[i_end + 3, j_start - 1]):
            q_out_x = q_in[-2, 3, 0]
        with horizontal(region[i_start - 1, j_start - 2], region[i_end + 2, j_start - 1]):
            q_out_x = q_in[-1, 2, 0]
        with horizontal(region[i_start - 1, j_start - 1], region[i_end + 1, j_start - 1]):
            q_out_x = q_in[0, 1, 0]
        with horizontal(region[i_start - 3, j_end + 1], region[i_end + 1, j_end + 3]):
            q_out_x = q_in[2, -3, 0]
        with horizontal(region[i_start - 3, j_end + 2], region[i_end + 2, j_end + 3]):
            q_out_x = q_in[1, -4, 0]
        with horizontal(region[i_start - 3, j_end + 3], region[i_end + 3, j_end + 3]):
            q_out_x = q_in[0, -5, 0]
        with horizontal(region[i_start - 2, j_end + 1], region[i_end + 1, j_end + 2]):
            q_out_x = q_in[1, -2, 0]
        with horizontal(region[i_start - 2, j_end + 2], region[i_end + 2, j_end + 2]):
            q_out_x = q_in[0, -3, 0]
        with horizontal(region[i_start - 2, j_end + 3], region[i_end + 3, j_end + 2]):
            q_out_x = q_in[-1, -4, 0]
        with horizontal(region[i_start - 1, j_end + 1], region[i_end + 1, j_end + 1]):
            q_out_x = q_in[0, -1, 0]
        with horizontal(region[i_start - 1, j_end + 2], region[i_end + 2, j_end + 1]):
            q_out_x = q_in[-1, -2, 0]
        with horizontal(region[i_start - 1, j_end + 3], region[i_end + 3, j_end + 1]):
            q_out_x = q_in[-2, -3, 0]
        with horizontal(region[i_start - 3, j_start - 3], region[i_start - 3, j_end + 3]):
            q_out_y = q_in[5, 0, 0]
        with horizontal(region[i_start - 2, j_start - 3], region[i_start - 3, j_end + 2]):
            q_out_y = q_in[4, 1, 0]
        with horizontal(region[i_start - 1, j_start - 3], region[i_start - 3, j_end + 1]):
            q_out_y = q_in[3, 2, 0]
        with horizontal(region[i_start - 3, j_start - 2], region[i_start - 2, j_end + 3]):
            q_out_y = q_in[4, -1, 0]
        with horizontal(region[i_start - 2, j_start - 2], region[i_start - 2, j_end + 2]):
            q_out_y = q_in[3, 0, 0]
        with horizontal(region[i_start - 1, j_start - 2], region[i_start - 2, j_end + 1]):
            q_out_y = q_in[2, 1, 0]
        with horizontal(region[i_start - 3, j_start - 1], region[i_start - 1, j_end + 3]):
            q_out_y = q_in[3, -2, 0]
        with horizontal(region[i_start - 2, j_start - 1], region[i_start - 1, j_end + 2]):
            q_out_y = q_in[2, -1, 0]
        with horizontal(region[i_start - 1, j_start - 1], region[i_start - 1, j_end + 1]):
            q_out_y = q_in[1, 0, 0]
        with horizontal(region[i_end + 1, j_start - 3], region[i_end + 3, j_end + 1]):
            q_out_y = q_in[-3, 2, 0]
        with horizontal(region[i_end + 2, j_start - 3], region[i_end + 3, j_end + 2]):
            q_out_y = q_in[-4, 1, 0]
        with horizontal(region[i_end + 3, j_start - 3], region[i_end + 3, j_end + 3]):
            q_out_y = q_in[-5, 0, 0]
        with horizontal(region[i_end + 1, j_start - 2], region[i_end + 2, j_end + 1]):
            q_out_y = q_in[-2, 1, 0]
        with horizontal(region[i_end + 2, j_start - 2], region[i_end + 2, j_end + 2]):
            q_out_y = q_in[-3, 0, 0]
        with horizontal(region[i_end + 3, j_start - 2], region[i_end + 2, j_end + 3]):
            q_out_y = q_in[-4, -1, 0]
        with horizontal(region[i_end + 1, j_start - 1], region[i_end + 1, j_end + 1]):
            q_out_y = q_in[-1, 0, 0]
        with horizontal(region[i_end + 2, j_start - 1], region[i_end + 1, j_end + 2]):
            q_out_y = q_in[-2, -1, 0]
        with horizontal(region[i_end + 3, j_start - 1], region[i_end + 1, j_end + 3]):
            q_out_y = q_in[-3, -2, 0]


def guarded_fill(q_out: F, q_in: F):
    # a condition reading points no statement stores
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1]):
            if q_in[0, 1, 0] > 0.0:
                q_out = q_in[0, 1, 0]
            else:
                q_out = -q_in[0, 2, 0]


def forward_fill(q_out: F, q_in: F):
    # the level below, at a point no statement stores
    from __externals__ import i_start, j_start

    with computation(FORWARD), interval(1, None):
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out = q_in[0, 1, 0] + q_in[0, 1, -1]


# =========================================================== refused: the order could show

def region_reads_written_point(q_out: F, q_in: F):
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out = q_in[0, 1, 0]
        with horizontal(region[i_start - 1, j_start - 2]):
            q_out = q_in[0, 1, 0]  # the point the first region stores


def point_read_after_store(q_out: F, q_in: F, other: F):
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out = q_in[0, 1, 0]
        other = q_in  # at the point itself, after the region stored another value there


def copy_after_store(q_in: F, q_out: F):
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out = q_in[0, 1, 0]
        q_out = q_in  # a copy of its own value, but after the region changed it


def temporary_reaches_written_point(q_out: F, q_in: F):
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        tmp = q_in[1, 0, 0]
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out = tmp
        with horizontal(region[i_start - 2, j_start - 1]):
            q_out = tmp  # q_in at the point the first region stores


def condition_reads_written_point(q_out: F, q_in: F):
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out = q_in[0, 1, 0]
        with horizontal(region[i_start - 1, j_start - 2]):
            if q_in[0, 1, 0] > 0.0:  # the point the first region stores
                q_out = 1.0


def forward_reads_written_level(q_out: F, q_in: F):
    from __externals__ import i_start, j_start

    with computation(FORWARD), interval(1, None):
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out = q_in[0, 1, 0] + q_in[0, 0, -1]  # the level below: stored the step before


def k_offset_store(q_out: F, q_in: F):
    from __externals__ import i_start, j_start

    with computation(FORWARD), interval(0, -1):
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out[0, 0, 1] = q_in[0, 1, 0]  # stores the level above
    with computation(PARALLEL), interval(-1, None):
        with horizontal(region[i_start - 1, j_start - 2]):
            q_out = q_in[0, 1, 0]  # the top level of the point stored from the level below


def temporary_stored_at_a_k_offset(q_out: F, q_in: F):
    with computation(PARALLEL), interval(...):
        tmp = q_out  # a copy of the output's own value...
    with computation(FORWARD), interval(-2, -1):
        tmp[0, 0, 1] = 2.0 * q_in[0, 1, 1]  # ...replaced on the top level from the level below
    with computation(PARALLEL), interval(...):
        q_out = tmp  # stores another value on the top level, which the line above reads


def data_dimension_fill(q_out: Field[(np.float64, (2,))], q_in: Field[(np.float64, (2,))]):
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out[0, 0, 0][0] = q_in[0, 1, 0][1]
        with horizontal(region[i_start - 1, j_start - 2]):
            q_out[0, 0, 0][1] = q_in[0, 1, 0][0]  # the component the first region stores


def two_regions(q_out: F, q_in: F):
    # region points and read offsets from externals (test_two_regions_...)
    from __externals__ import AI, AJ, BI, BJ, DI1, DI2, DJ1, DJ2

    with computation(PARALLEL), interval(...):
        with horizontal(region[I[0] + AI, J[0] + AJ]):
            q_out = q_in[DI1, DJ1, 0]
        with horizontal(region[I[0] + BI, J[0] + BJ]):
            q_out = q_in[DI2, DJ2, 0]


# ====================================================================== the harness

NI, NJ, NK = 5, 6, 4
D0, D1 = NI + 2 * HALO, NJ + 2 * HALO
SENTINEL = -12345.5
BACKENDS = ["cpu", "numpy", pytest.param("cuda", marks=pytest.mark.skipif(
    compiler() is None, reason="no host C compiler for the cuda emulation"))]
_built = {}


def build(backend, definition):
    """cuda runs on the host emulation; "cuda-reversed" runs its thread blocks in reverse."""
    key = (backend, definition.__name__)
    if key not in _built:
        kind = backend.split("-")[0]
        st = gtscript.stencil(backend=kind, definition=definition, externals=axis_offsets())
        _built[key] = emulate(st, reverse=backend.endswith("reversed")) if kind == "cuda" else st
    return _built[key]


def layout(kind, values):
    """(whole buffer, array passed, call keywords, where the domain lies in the buffer)."""
    if kind == "exact":
        arr = values.copy()
        return arr, arr, {}, (slice(None),) * 3
    if kind == "view":  # a view with sentinel margins all round
        big = np.full((D0 + 4, D1 + 4, NK + 2), SENTINEL)
        arr = big[2:-2, 2:-2, 1:-1]
        arr[...] = values
        return big, arr, {"origin": (0, 0, 0), "domain": (D0, D1, NK)}, (slice(2, -2), slice(2, -2), slice(1, -1))
    big = np.full((D0 + 4, D1 + 5, NK + 3), SENTINEL)  # the domain placed inside by origin
    where = (slice(2, 2 + D0), slice(1, 1 + D1), slice(1, 1 + NK))
    big[where] = values
    return big, big, {"origin": (2, 1, 1), "domain": (D0, D1, NK)}, where


# ---- hand-written NumPy: indices of the domain's index space (is, ie: first and last compute
# points; the halo is HALO wide)
IS, IE, JS, JE = HALO, HALO + NI - 1, HALO, HALO + NJ - 1


def ref_fill_x(q, cells, mult=(1.0, 1.0, 1.0, 1.0)):
    sw, se, nw, ne = mult
    out = q.copy()
    for a in range(1, cells + 1):
        out[IS - a, JS - 1] = sw * q[IS - 1, JS + a - 1]
        out[IE + a, JS - 1] = se * q[IE + 1, JS + a - 1]
        out[IS - a, JE + 1] = nw * q[IS - 1, JE - a + 1]
        out[IE + a, JE + 1] = ne * q[IE + 1, JE - a + 1]
    return out


def ref_fill_y(q, cells, mult=(1.0, 1.0, 1.0, 1.0)):
    sw, se, nw, ne = mult
    out = q.copy()
    for a in range(1, cells + 1):
        out[IS - 1, JS - a] = sw * q[IS + a - 1, JS - 1]
        out[IE + 1, JS - a] = se * q[IE - a + 1, JS - 1]
        out[IS - 1, JE + a] = nw * q[IS + a - 1, JE + 1]
        out[IE + 1, JE + a] = ne * q[IE - a + 1, JE + 1]
    return out


def ref_copy_x(q, i_s=IS, i_e=IE, j_s=JS, j_e=JE):
    out = q.copy()
    for a in (1, 2, 3):
        for b in (1, 2, 3):
            out[i_s - a, j_s - b] = q[i_s - b, j_s + a - 1]
            out[i_e + b, j_s - a] = q[i_e + a, j_s + b - 1]
            out[i_s - a, j_e + b] = q[i_s - b, j_e - a + 1]
            out[i_e + b, j_e + a] = q[i_e + a, j_e - b + 1]
    return out


def ref_copy_y(q):
    t = q.transpose(1, 0, 2)
    return ref_copy_x(t, JS, JE, IS, IE).transpose(1, 0, 2)


def ref_bgrid_x_sw(q):
    out = q.copy()
    for a in (1, 2):
        for b in (1, 2):
            out[IS - a, JS - b] = q[IS - b, JS + a]
            out[IE + 1 + b, JS - a] = q[IE + 1 + a, JS + b]
    return out


def ref_dgrid_sw(x, y, mysign):
    xo, yo = x.copy(), y.copy()
    for a in (1, 2):
        for b in (1, 2):
            xo[IS - a, JS - b] = mysign * y[IS - b, JS + a - 1]
            yo[IS - a, JS - b] = mysign * x[IS + b - 1, JS - a]
    return xo, yo


def ref_guarded(q):
    out = q.copy()
    a, b = q[IS - 1, JS], q[IS - 1, JS + 1]
    out[IS - 1, JS - 1] = np.where(a > 0.0, a, -b)
    return out


def ref_forward(q):
    out = q.copy()
    out[IS - 1, JS - 1, 1:] = q[IS - 1, JS, 1:] + q[IS - 1, JS, :-1]
    return out


MULT = (0.5, 2.0, -1.0, 3.0)
# definition, the array passed for each field, the scalars, the inputs a separate call
# copies, the expected arrays from the originals
ACCEPTED = {
    "fill_2cells_x": (fill_2cells_x, ("q", "q"), (), (1,), lambda v: {"q": ref_fill_x(v["q"], 2)}),
    "fill_2cells_y": (fill_2cells_y, ("q", "q"), (), (1,), lambda v: {"q": ref_fill_y(v["q"], 2)}),
    "fill_3cells_mult_x": (fill_3cells_mult_x_stencil, ("q", "q"), MULT, (1,),
                           lambda v: {"q": ref_fill_x(v["q"], 3, MULT)}),
    "fill_3cells_mult_y": (fill_3cells_mult_y_stencil, ("q", "q"), MULT, (1,),
                           lambda v: {"q": ref_fill_y(v["q"], 3, MULT)}),
    "fill_bgrid_x": (fill_bgrid_x_sw, ("q", "q"), (), (0,), lambda v: {"q": ref_bgrid_x_sw(v["q"])}),
    "fill_dgrid": (fill_dgrid_sw, ("x", "x", "y", "y"), (-1.0,), (0, 2),
                   lambda v: dict(zip("xy", ref_dgrid_sw(v["x"], v["y"], -1.0)))),
    "copy_corners_x": (copy_corners_x, ("q", "q"), (), (0,), lambda v: {"q": ref_copy_x(v["q"])}),
    "copy_corners_y": (copy_corners_y, ("q", "q"), (), (0,), lambda v: {"q": ref_copy_y(v["q"])}),
    "copy_corners_xy": (copy_corners_xy, ("q", "q", "y"), (), (0,),
                        lambda v: {"q": ref_copy_x(v["q"]), "y": ref_copy_y(v["q"])}),
    "guarded_fill": (guarded_fill, ("q", "q"), (), (1,), lambda v: {"q": ref_guarded(v["q"])}),
    "forward_fill": (forward_fill, ("q", "q"), (), (1,), lambda v: {"q": ref_forward(v["q"])}),
}


def fresh(names, rng):
    return {n: rng.standard_normal((D0, D1, NK)) for n in dict.fromkeys(names)}


def call(stencil, names, scalars, arrays, kwargs, copies=()):
    args = [arrays[n].copy() if i in copies else arrays[n] for i, n in enumerate(names)]
    stencil(*args, *scalars, **kwargs)


# every layout on cpu; the other backends on the view with margins, whose origin and domain
# differ from the array's and whose neighbours must stay untouched
RUNS = [("cpu", "exact"), ("cpu", "view"), ("cpu", "origin"), ("numpy", "view"),
        pytest.param("cuda", "view", marks=BACKENDS[2].marks),
        pytest.param("cuda-reversed", "origin", marks=BACKENDS[2].marks)]


@pytest.mark.parametrize("backend, kind", RUNS)
@pytest.mark.parametrize("case", list(ACCEPTED))
def test_corner_fills_in_place_equal_separate_copies_and_numpy(case, backend, kind, rng):
    definition, names, scalars, inputs, reference = ACCEPTED[case]
    stencil = build(backend, definition)
    values = fresh(names, rng)
    expected = reference(values)
    bufs, arrays, kwargs, where = {}, {}, {}, None
    for n, v in values.items():
        bufs[n], arrays[n], kwargs, where = layout(kind, v)
    untouched = {n: b.copy() for n, b in bufs.items()}
    call(stencil, names, scalars, arrays, kwargs)  # in place: one array as input and output
    sep = {n: layout(kind, v)[:2] for n, v in values.items()}
    call(stencil, names, scalars, {n: a for n, (_, a) in sep.items()}, kwargs, copies=inputs)
    for n in values:
        np.testing.assert_array_equal(bufs[n][where], expected[n], err_msg=f"{n}: in place")
        np.testing.assert_array_equal(sep[n][0][where], expected[n], err_msg=f"{n}: separate copy")
        outside = np.ones(bufs[n].shape, bool)
        outside[where] = False
        np.testing.assert_array_equal(bufs[n][outside], untouched[n][outside], err_msg=f"{n}: margins")
    changed = any(not np.array_equal(expected[n], values[n]) for n in values)
    assert changed  # the fill did something


@pytest.mark.parametrize("backend", BACKENDS)
def test_corner_fill_in_place_on_parts_of_a_global_grid(backend, rng):
    # regions placed on the global grid (global_origin=, global_domain=): the part at the grid's
    # south-west corner fills that corner; a part inside the grid has no corner to fill
    stencil = build(backend, fill_2cells_x)
    grid = (D0 + 7, D1 + 9, NK)
    q = rng.standard_normal((D0, D1, NK))
    expected = q.copy()
    for a in (1, 2):
        expected[IS - a, JS - 1] = q[IS - 1, JS + a - 1]
    stencil(q, q, origin=(0, 0, 0), domain=(D0, D1, NK), global_origin=(0, 0), global_domain=grid[:2])
    np.testing.assert_array_equal(q, expected)
    inner = rng.standard_normal((D0, D1, NK))
    before = inner.copy()
    stencil(inner, inner, origin=(0, 0, 0), domain=(D0, D1, NK), global_origin=(4, 5),
            global_domain=grid[:2])
    np.testing.assert_array_equal(inner, before)


def two_region_cases(count=24, seed=7):
    """Region points A, B and read offsets d1, d2 (not both zero: that is the point-wise
    update accepted before any of this), and whether the call is order-free. A region reading
    at offset zero copies the point's own value and changes nothing; the others store another
    value. Order-free: A's read meets no such stored point (or is A itself, read before
    anything is stored there) and so does B's (or is B itself while A has not stored another
    value there)."""
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        a, b = (tuple(int(v) for v in rng.integers(2, 4, 2)) for _ in range(2))
        d1, d2 = (tuple(int(v) for v in rng.integers(-1, 2, 2)) for _ in range(2))
        if rng.random() < 0.3:  # often a read of the other region's point
            d1 = (b[0] - a[0], b[1] - a[1])
        if rng.random() < 0.3:
            d2 = (a[0] - b[0], a[1] - b[1])
        if d1 == d2 == (0, 0):
            continue
        stored = {p for p, d in ((a, d1), (b, d2)) if d != (0, 0)}
        read_a, read_b = (a[0] + d1[0], a[1] + d1[1]), (b[0] + d2[0], b[1] + d2[1])
        free = (d1 == (0, 0) or read_a not in stored) and (
            (d2 == (0, 0) and b != a) or (d2 != (0, 0) and read_b not in stored))
        cases.append((a, b, d1, d2, free))
    return cases


@pytest.mark.parametrize("a, b, d1, d2, free", two_region_cases())
def test_two_regions_accepted_exactly_when_no_read_sees_a_store(a, b, d1, d2, free, rng):
    externals = dict(AI=a[0], AJ=a[1], BI=b[0], BJ=b[1], DI1=d1[0], DJ1=d1[1], DI2=d2[0], DJ2=d2[1])
    q = rng.standard_normal((6, 6, 2))
    expected = q.copy()
    expected[a] = q[a[0] + d1[0], a[1] + d1[1]]
    expected[b] = q[b[0] + d2[0], b[1] + d2[1]]
    for backend in ("cpu", "numpy"):
        stencil = gtscript.stencil(backend=backend, definition=two_regions, externals=externals)
        x = q.copy()
        if free:
            stencil(x, x, origin=(0, 0, 0), domain=(6, 6, 2))
            np.testing.assert_array_equal(x, expected, err_msg=backend)
        else:
            with pytest.raises(ValueError, match="share memory"):
                stencil(x, x, origin=(0, 0, 0), domain=(6, 6, 2))
            np.testing.assert_array_equal(x, q, err_msg=backend)
        separate = q.copy()
        stencil(separate, q.copy(), origin=(0, 0, 0), domain=(6, 6, 2))
        np.testing.assert_array_equal(separate, expected, err_msg=backend)


REFUSED = {
    "region_reads_written_point": (region_reads_written_point, ("q", "q"), "horizontal offset"),
    "point_read_after_store": (point_read_after_store, ("q", "q", "o"), "horizontal offset"),
    "copy_after_store": (copy_after_store, ("q", "q"), "horizontal offset"),
    "temporary_reaches_written_point": (temporary_reaches_written_point, ("q", "q"), "horizontal offset"),
    "condition_reads_written_point": (condition_reads_written_point, ("q", "q"), "horizontal offset"),
    "forward_reads_written_level": (forward_reads_written_level, ("q", "q"), "horizontal offset"),
    "k_offset_store": (k_offset_store, ("q", "q"), "horizontal offset"),
    "temporary_stored_at_a_k_offset": (temporary_stored_at_a_k_offset, ("q", "q"), "horizontal offset"),
    "data_dimension_fill": (data_dimension_fill, ("d", "d"), "horizontal offset"),
    "partial_overlap": (copy_corners_x, ("q+", "q"), "different positions"),
    "other_origin": (fill_2cells_x, ("q", "q"), "different positions"),
}
TODAY = ("share memory: the first is written while the second is read with a horizontal offset",
         "share memory: they overlap at different positions")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(REFUSED))
def test_calls_that_could_depend_on_the_order_are_refused(case, backend, rng):
    definition, names, why = REFUSED[case]
    stencil = build(backend, definition)
    big = rng.standard_normal((D0 + 1, D1, NK, 2))
    before = big.copy()
    arrays = {"q": big[:D0, ..., 0], "q+": big[1:, ..., 0], "d": big[:D0], "o": np.zeros((D0, D1, NK))}
    kwargs = {"origin": (0, 0, 0), "domain": (D0, D1, NK)}
    if case == "other_origin":
        kwargs = {"origin": {"q_out": (1, 0, 0), "q_in": (0, 0, 0)}, "domain": (D0 - 1, D1, NK)}
    if case == "temporary_reaches_written_point":  # the temporary reads one point further in I
        kwargs["domain"] = (D0 - 1, D1, NK)
    if case == "temporary_stored_at_a_k_offset":  # reads one point further in J
        kwargs["domain"] = (D0, D1 - 1, NK)
    with pytest.raises(ValueError, match="share memory") as info:
        stencil(*(arrays[n] for n in names), **kwargs)
    message = str(info.value)
    assert why in message and any(t in message for t in TODAY)
    assert "on purpose, unlike GT4Py" in message
    np.testing.assert_array_equal(big, before)  # nothing ran
    assert not arrays["o"].any()
    # the same definitions run on separate arrays
    separate = [rng.standard_normal(arrays[n].shape) for n in names]
    stencil(*separate, origin=(0, 0, 0), domain=(D0 - 1, D1 - 1, NK))


# ================================================================ GT4Py, run in place

GT4PY_CASES = ["fill_2cells_x", "fill_dgrid", "copy_corners_xy"]


@pytest.fixture(scope="module")
def gt4py_definitions(tmp_path_factory):
    """This file's corner fills built by GT4Py: the same source, GT4Py's own objects."""
    pytest.importorskip("gt4py.cartesian")
    import importlib.util

    from gt4py.cartesian import config

    src = open(__file__).read()
    start = src.index("# " + "=" * 62 + " corner fills (accepted)")
    end = src.index("# " + "=" * 59 + " refused: the order could show")
    header = ("import numpy as np\nfrom gt4py.cartesian import gtscript\n"
              "from gt4py.cartesian.gtscript import FORWARD, PARALLEL, Field, I, J, computation, "
              "horizontal, interval, region\n\nF = Field[np.float64]\n\n\n")
    where = tmp_path_factory.mktemp("gt4py")
    (where / "corner_fills_gt4py.py").write_text(header + src[start:end])
    spec = importlib.util.spec_from_file_location("corner_fills_gt4py", where / "corner_fills_gt4py.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    before = config.cache_settings["root_path"]
    config.cache_settings["root_path"] = str(where / "cache")
    yield module
    config.cache_settings["root_path"] = before


@pytest.mark.parametrize("case", GT4PY_CASES)
def test_corner_fills_in_place_give_gt4py_numpy_result(case, gt4py_definitions, rng):
    from gt4py.cartesian import gtscript as gt4py_gtscript

    definition, names, scalars, _, reference = ACCEPTED[case]
    externals = {"i_start": gt4py_gtscript.I[0] + HALO, "i_end": gt4py_gtscript.I[-1] - HALO,
                 "j_start": gt4py_gtscript.J[0] + HALO, "j_end": gt4py_gtscript.J[-1] - HALO}
    theirs = gt4py_gtscript.stencil(backend="numpy", externals=externals,
                                    definition=getattr(gt4py_definitions, definition.__name__))
    values = fresh(names, rng)
    ours = {n: v.copy() for n, v in values.items()}
    gt4py_arrays = {n: v.copy() for n, v in values.items()}
    kwargs = {"origin": (0, 0, 0), "domain": (D0, D1, NK)}
    call(build("cpu", definition), names, scalars, ours, kwargs)
    call(theirs, names, scalars, gt4py_arrays, kwargs)
    expected = reference(values)
    for n in values:
        np.testing.assert_array_equal(gt4py_arrays[n], expected[n], err_msg=f"{n}: GT4Py in place")
        np.testing.assert_array_equal(ours[n], gt4py_arrays[n], err_msg=f"{n}: gtscript vs GT4Py")
