import numbers
from typing import Tuple

import numpy as np
from gt4py.cartesian.gtc import ufuncs
from gt4py.cartesian.utils import Field


def run(*, x, out, _domain_, _origin_):

    # --- begin domain boundary shortcuts ---
    _di_, _dj_, _dk_ = 0, 0, 0
    _dI_, _dJ_, _dK_ = _domain_
    __k_mask = np.empty(_domain_, dtype=int)
    __k_mask[:, :] = np.arange(_dK_, dtype=int)
    # --- end domain padding ---

    x = Field(x, _origin_["x"], (True, True, True))
    out = Field(out, _origin_["out"], (True, True, True))

    s = Field.empty((_dI_ + 0, _dJ_ + 0), np.float64, (0, 0), (True, True, False))

    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):

        # --- begin vertical block ---
        k, K = _dk_, _dk_ + 1
        for k_ in range(k, K):

            # --- begin horizontal block --
            i, I = _di_ - 0, _dI_ + 0
            j, J = _dj_ - 0, _dJ_ + 0

            s[i:I, j:J] = x[i:I, j:J, k_ : k_ + 1]
            out[i:I, j:J, k_ : k_ + 1] = s[i:I, j:J]
            # --- end horizontal block --

        # --- end vertical block ---

        # --- begin vertical block ---
        k, K = _dk_ + 1, _dK_
        for k_ in range(k, K):

            # --- begin horizontal block --
            i, I = _di_ - 0, _dI_ + 0
            j, J = _dj_ - 0, _dJ_ + 0

            s[i:I, j:J] = s[i:I, j:J] + x[i + 1 : I + 1, j:J, k_ : k_ + 1]
            out[i:I, j:J, k_ : k_ + 1] = s[i:I, j:J] * np.float64(0.5)
            # --- end horizontal block --

        # --- end vertical block ---
