"""GT4Py's spelling under ``from __future__ import annotations``: every annotation is a
string evaluated in this module's namespace."""

from __future__ import annotations

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import IJ, PARALLEL, Field, computation, interval

from gt4py_style import fields
from gt4py_style.fields import FloatField, FloatFieldIJ, Vec3Field


def strings(
    a: FloatField,
    s: FloatFieldIJ,
    v: Vec3Field,
    dz: fields.FloatFieldK,
    b: Field[IJ, np.float64],
    c: gtscript.Field[gtscript.IJK, (np.float64, (3,))],
    out: Field[np.float64],
    scale: float,
):
    with computation(PARALLEL), interval(...):
        out = scale * a + s * dz + v[0, 0, 0][0] + b + c[0, 0, 0][2]
