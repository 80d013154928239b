import numbers
from typing import Tuple

import numpy as np
from gt4py.cartesian.gtc import ufuncs
from gt4py.cartesian.utils import Field


def run(*, a, m, out, _domain_, _origin_):

    # --- begin domain boundary shortcuts ---
    _di_, _dj_, _dk_ = 0, 0, 0
    _dI_, _dJ_, _dK_ = _domain_
    __k_mask = np.empty(_domain_, dtype=int)
    __k_mask[:, :] = np.arange(_dK_, dtype=int)
    # --- end domain padding ---

    a = Field(a, _origin_["a"], (True, True, True))
    m = Field(m, _origin_["m"], (True, True, True))
    out = Field(out, _origin_["out"], (True, True, True))

    t = Field.empty((_dI_ + 1, _dJ_ + 0, _dK_, 3), np.float64, (0, 0, 0, 0), (True, True, True))

    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):

        # --- begin vertical block ---
        k, K = _dk_, _dK_

        # --- begin horizontal block --
        i, I = _di_ - 0, _dI_ + 1
        j, J = _dj_ - 0, _dJ_ + 0

        t[i:I, j:J, k:K, 0] = np.float64(1.0)
        t[i:I, j:J, k:K, 1] = np.float64(1.0)
        t[i:I, j:J, k:K, 2] = np.float64(1.0)
        # --- end horizontal block --

        # --- end vertical block ---

        # --- begin vertical block ---
        k, K = _dk_ + 1, _dK_

        # --- begin horizontal block --
        i, I = _di_ - 0, _dI_ + 1
        j, J = _dj_ - 0, _dJ_ + 0

        t[i:I, j:J, k:K, 0] = (
            (m[i:I, j:J, k:K, 0, 0] * a[i:I, j:J, k:K, 0])
            + (m[i:I, j:J, k:K, 0, 1] * a[i:I, j:J, k:K, 1])
        ) + (m[i:I, j:J, k:K, 0, 2] * a[i:I, j:J, k:K, 2])
        t[i:I, j:J, k:K, 1] = (
            (m[i:I, j:J, k:K, 1, 0] * a[i:I, j:J, k:K, 0])
            + (m[i:I, j:J, k:K, 1, 1] * a[i:I, j:J, k:K, 1])
        ) + (m[i:I, j:J, k:K, 1, 2] * a[i:I, j:J, k:K, 2])
        t[i:I, j:J, k:K, 2] = (
            (m[i:I, j:J, k:K, 2, 0] * a[i:I, j:J, k:K, 0])
            + (m[i:I, j:J, k:K, 2, 1] * a[i:I, j:J, k:K, 1])
        ) + (m[i:I, j:J, k:K, 2, 2] * a[i:I, j:J, k:K, 2])
        # --- end horizontal block --

        # --- end vertical block ---

        # --- begin vertical block ---
        k, K = _dk_, _dK_

        # --- begin horizontal block --
        i, I = _di_ - 0, _dI_ + 0
        j, J = _dj_ - 0, _dJ_ + 0

        out[i:I, j:J, k:K, 0] = t[i + 1 : I + 1, j:J, k:K, 0] + (
            np.float64(2.0) * a[i:I, j:J, k:K, 0]
        )
        out[i:I, j:J, k:K, 1] = t[i + 1 : I + 1, j:J, k:K, 1] + (
            np.float64(2.0) * a[i:I, j:J, k:K, 1]
        )
        out[i:I, j:J, k:K, 2] = t[i + 1 : I + 1, j:J, k:K, 2] + (
            np.float64(2.0) * a[i:I, j:J, k:K, 2]
        )
        # --- end horizontal block --

        # --- end vertical block ---
