"""Stencil definitions in GT4Py's spelling: GT4Py's ``Field`` objects (aliases from another
module and written in place), GT4Py's axis indices as externals, GT4Py functions reached
three ways, an IntEnum, a GlobalTable."""

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    FORWARD,
    IJ,
    PARALLEL,
    Field,
    I,
    J,
    K,
    __INLINED,
    abs,
    compile_assert,
    computation,
    exp,
    horizontal,
    interval,
    max,
    min,
    region,
    sqrt,
)

import gt4py_style.ppm as fv_ppm
from gt4py_style import ppm
from gt4py_style.fields import (
    BoolField,
    FloatField,
    FloatFieldIJ,
    FloatFieldK,
    IntField,
    Pair32FieldIJ,
    Phase,
    Table4,
    Vec3Field,
)
from gt4py_style.ppm import edge_sum, limited

#: A region bound held by a module global, as GT4Py's own object.
FIRST_TWO = I[0] + 1


def annotations(
    a: FloatField,
    s: FloatFieldIJ,
    dz: FloatFieldK,
    n: IntField,
    v: Vec3Field,
    w: Pair32FieldIJ,
    b: gtscript.Field[np.float64],
    c: Field[IJ, np.float64],
    out: Field[gtscript.IJK, np.float64],
    vout: Field[gtscript.IJK, (np.float64, (3,))],
):
    with computation(PARALLEL), interval(...):
        out = a + s * dz + n + v[0, 0, 0][2] + w[0, 0][1] + b - c
        vout[0, 0, 0][0] = v[0, 0, 0][1]
        vout[0, 0, 0][1] = v[0, 0, 0][2] * 2.0
        vout[0, 0, 0][2] = w[0, 0][0]


def corners(q: FloatField, out: FloatField):
    from __externals__ import i_end, i_start, j_end, j_start, local_is

    with computation(PARALLEL), interval(...):
        out = q
        with horizontal(region[i_start - 1, :], region[i_end + 1, :]):
            out = 2.0 * q
        with horizontal(region[local_is : i_start + 2, j_start]):
            out = out + 10.0
        with horizontal(region[:, j_end]):
            out = out - 1.0
    with computation(PARALLEL), interval(...), horizontal(region[FIRST_TWO, J[-1] - 1]):
        out = out + 100.0
    with computation(PARALLEL), interval(...):
        with horizontal(region[I[-1], j_start:]):
            out = out + 1000.0


def module_axes(q: FloatField, out: FloatField):
    # GT4Py's axes reached through its module: GT4Py itself refuses these bounds ("Invalid
    # interval range specification"), gtscript reads them as it reads `I[-1]`
    with computation(PARALLEL), interval(...):
        out = q
        with horizontal(region[gtscript.I[-1], gtscript.J[0] : gtscript.J[0] + 2]):
            out = q + 1.0


def fluxes(q: FloatField, c: FloatField, out: FloatField, lim: FloatField, e: FloatField):
    with computation(PARALLEL), interval(...):
        out = ppm.upwind(q, c) + fv_ppm.sign(q, c)
        lim = limited(q, c)
        e = edge_sum(q)


def phases(t: FloatField, n: IntField, out: FloatField):
    from __externals__ import PHASE

    with computation(PARALLEL), interval(...):
        if PHASE == Phase.ICE:
            out = t + PHASE
        else:
            out = t - Phase.ICE
        if n == Phase.LIQUID:
            out = out * 10.0


def table(coef: Table4, x: FloatField, out: FloatField):
    with computation(PARALLEL), interval(...):
        out = coef.A[0] + coef.A[1] * x + coef.A[3] * x * x


def column(a: FloatField, sfc: FloatFieldIJ, dz: FloatFieldK, out: FloatField):
    with computation(FORWARD):
        with interval(0, 1):
            out = sfc + a
        with interval(1, None):
            out = out[0, 0, -1] + a * dz


def placeholder(a: Field["T"], b: Field[IJ, ("T", (2,))], out: Field["T"]):
    with computation(PARALLEL), interval(...):
        out = a * b[0, 0][1] + b[0, 0][0]


def function_external(q: FloatField, c: FloatField, out: FloatField):
    from __externals__ import FLUX

    with computation(PARALLEL), interval(...):
        out = FLUX(q, c)


def held_bounds(q: FloatField, out: FloatField):
    # GT4Py's axis indices held in a dict and a tuple (GT4Py refuses both as externals)
    from __externals__ import BOUNDS, EDGES

    with computation(PARALLEL), interval(...):
        out = q
        with horizontal(region[BOUNDS["west"], EDGES[1]]):
            out = q + 1.0


def builtins_by_name(a: FloatField, mask: BoolField, out: FloatField, acc: FloatField):
    from __externals__ import USE_EXP
    from gt4py.cartesian.__gtscript__ import BACKWARD

    with computation(PARALLEL), interval(...):
        compile_assert(USE_EXP or not USE_EXP)
        if __INLINED(USE_EXP):
            out = exp(a) + sqrt(abs(a))
        else:
            out = max(a, 0.0) + min(a, 0.0) * 2.0
        if mask:
            out = -out
    with computation(BACKWARD):
        with interval(-1, None):
            acc = a
        with interval(0, -1):
            acc = acc[0, 0, 1] + a


def axes_as_values(a: FloatField, out: FloatField):
    # GT4Py's K as the level's index and its axes in the offset shorthand
    with computation(PARALLEL), interval(...):
        if K == 1:
            out = a[I - 1, J] + 100.0
        else:
            out = K * a[J + 1]
