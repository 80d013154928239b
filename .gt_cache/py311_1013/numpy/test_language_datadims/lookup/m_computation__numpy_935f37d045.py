import numbers
from typing import Tuple

import numpy as np
from gt4py.cartesian.gtc import ufuncs
from gt4py.cartesian.utils import Field


def run(*, t1, t2, x, out, _domain_, _origin_):

    # --- begin domain boundary shortcuts ---
    _di_, _dj_, _dk_ = 0, 0, 0
    _dI_, _dJ_, _dK_ = _domain_
    __k_mask = np.empty(_domain_, dtype=int)
    __k_mask[:, :] = np.arange(_dK_, dtype=int)
    # --- end domain padding ---

    t1 = Field(t1, _origin_["t1"], (False, False, False))
    t2 = Field(t2, _origin_["t2"], (False, False, False))
    x = Field(x, _origin_["x"], (True, True, True))
    out = Field(out, _origin_["out"], (True, True, True))

    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):

        # --- begin vertical block ---
        k, K = _dk_, _dK_

        # --- begin horizontal block --
        i, I = _di_ - 0, _dI_ + 0
        j, J = _dj_ - 0, _dJ_ + 0

        out[i:I, j:J, k:K] = (x[i + 1 : I + 1, j:J, k:K] * t1[2]) + t2[1, 2]
        # --- end horizontal block --

        # --- end vertical block ---
