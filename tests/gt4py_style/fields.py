"""Field aliases and an enumeration, made once with GT4Py's objects and imported by the
definitions (as NDSL's ``ndsl.dsl.typing`` makes ``FloatField``)."""

import enum

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import IJ, IJK, K, Field

Float = np.float64
Int = np.int32

FloatField = Field[Float]
FloatFieldIJ = Field[IJ, Float]
FloatFieldK = Field[K, Float]
IntField = Field[IJK, Int]
BoolField = Field[np.bool_]
Vec3Field = Field[gtscript.IJK, (np.float64, (3,))]
Pair32FieldIJ = Field[IJ, (np.float32, (2,))]
Table4 = gtscript.GlobalTable[(Float, (4,))]


class Phase(enum.IntEnum):
    LIQUID = 1
    ICE = 2
