"""Stencil definitions in a module with ``from __future__ import annotations`` (not a test
module itself): every annotation reaches the frontend as a string, which it evaluates at
compile time (tests/frontend/test_future_annotations.py)."""

from __future__ import annotations

import numpy as np

from gtscript import IJ, PARALLEL, Field, GlobalTable, computation, interval


def polynomial(coef: GlobalTable[(np.float64, (3,))], x: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = coef.A[0] + coef.A[1] * x + coef.A[2] * x * x


def lookup(tab: GlobalTable[(np.float32, (2, 4))], w: Field[IJ, np.float64], x: Field[np.float64],
           out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = tab.A[1, 3] * x[1, 0, 0] - tab.A[0, 2] * w + x[0, -1, 0]
