"""A model's stencils, written for GT4Py as PyFV3 writes them: this module imports GT4Py's
gtscript only; axis offsets come from the framework as externals (``I[0] + n``)."""

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    BACKWARD,
    FORWARD,
    IJ,
    PARALLEL,
    Field,
    computation,
    horizontal,
    interval,
    region,
)

FloatField = Field[np.float64]
FloatFieldIJ = Field[IJ, np.float64]
IntField = Field[np.int64]


# ---------------------------------------------------------------- regions with I[0] + n


def edge_update(q: FloatField, out: FloatField, w: float):
    """Interior: a 5-point average; the compute domain's edges (FV3's i_start/i_end/j_start/
    j_end regions) one-sided; the corners a copy."""
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        out = q + w * (q[-1, 0, 0] + q[1, 0, 0] + q[0, -1, 0] + q[0, 1, 0] - 4.0 * q)
        with horizontal(region[i_start, :], region[i_end, :]):
            out = 0.5 * (q[0, -1, 0] + q[0, 1, 0])
        with horizontal(region[:, j_start], region[:, j_end]):
            out = 0.5 * (q[-1, 0, 0] + q[1, 0, 0])
        with horizontal(region[i_start, j_start], region[i_end, j_end],
                        region[i_start, j_end], region[i_end, j_start]):
            out = q


# ---------------------------------------------------------------- corner fill in place


@gtscript.function
def fill_corners_2cells_x(q, q_corner):
    """The x-direction corner fill of two halo cells: each corner point takes a value of the
    halo's edge strip, which no region writes."""
    from __externals__ import i_end, i_start, j_end, j_start

    with horizontal(region[i_start - 1, j_start - 1]):
        q = q_corner[0, 1, 0]
    with horizontal(region[i_start - 2, j_start - 1]):
        q = q_corner[1, 2, 0]
    with horizontal(region[i_end + 1, j_start - 1]):
        q = q_corner[0, 1, 0]
    with horizontal(region[i_end + 2, j_start - 1]):
        q = q_corner[-1, 2, 0]
    with horizontal(region[i_start - 1, j_end + 1]):
        q = q_corner[0, -1, 0]
    with horizontal(region[i_start - 2, j_end + 1]):
        q = q_corner[1, -2, 0]
    with horizontal(region[i_end + 1, j_end + 1]):
        q = q_corner[0, -1, 0]
    with horizontal(region[i_end + 2, j_end + 1]):
        q = q_corner[-1, -2, 0]
    return q


def fill_corners_x(q_out: FloatField, q_in: FloatField):
    """NDSL's ``fill_corners_2cells_x_stencil``: called with one array as both arguments."""
    with computation(PARALLEL), interval(...):
        q_out = fill_corners_2cells_x(q_out, q_in)


# ---------------------------------------------------------------- unused argument


def scale_or_add(q: FloatField, bias: FloatFieldIJ, out: FloatField, c: float):
    """``bias`` is read only when USE_BIAS: a model built without it passes whatever array it
    has at hand (here a 3-D one) and GT4Py does not check it."""
    from __externals__ import USE_BIAS

    with computation(PARALLEL), interval(...):
        if __INLINED(USE_BIAS):
            out = c * q + bias
        else:
            out = c * q


# ---------------------------------------------------------------- column search


def first_level_above(q: FloatField, kfound: IntField, thresh: float):
    """The first level (from k = 0 up) where q exceeds ``thresh``, in every column (-1 where
    none does): a FORWARD search with a found flag, the answer spread down the column by a
    BACKWARD sweep."""
    with computation(FORWARD):
        with interval(0, 1):
            lev = 0
            found = 0
            kfound = -1
            if q > thresh:
                found = 1
                kfound = 0
        with interval(1, None):  # (a temporary named k breaks GT4Py's numpy backend)
            lev = lev[0, 0, -1] + 1
            found = found[0, 0, -1]
            kfound = kfound[0, 0, -1]
            if found == 0 and q > thresh:
                found = 1
                kfound = lev
    with computation(BACKWARD), interval(0, -1):
        kfound = kfound[0, 0, 1]


def count_halvings(q: FloatField, n: IntField, limit: float):
    """A search inside each point: how many halvings bring q under ``limit`` (a while loop)."""
    with computation(PARALLEL), interval(...):
        x = q
        count = 0
        while x > limit:
            x = x * 0.5
            count = count + 1
        n = count


# ---------------------------------------------------------------- a column relaxation


def column_relax(q: FloatField, out: FloatField, a: float):
    """An implicit-like sweep up then down each column (the shape of a vertical solver)."""
    with computation(FORWARD):
        with interval(0, 1):
            out = q
        with interval(1, None):
            out = q + a * out[0, 0, -1]
    with computation(BACKWARD), interval(0, -1):
        out = out + a * out[0, 0, 1]


# ------------------------------------------ K levels computed at run time (vertical remap)


def remap_to_levels(pe1: FloatField, pe2: FloatField, q1: FloatField, q2: FloatField):
    """FV3's remapping shape: pe1 and pe2 are interfaces (nz + 1 levels) and the search reads
    level nz of pe1 while the stencil computes nz layers."""
    with computation(PARALLEL), interval(...):
        kk = 0
        while pe1.at(K=kk + 1) < pe2:
            kk = kk + 1
        q2 = q1.at(K=kk) + (pe2 - pe1.at(K=kk)) * (pe1.at(K=kk + 1) - pe2)
