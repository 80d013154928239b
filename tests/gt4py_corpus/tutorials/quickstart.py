"""The quickstart: allocate storages, define a stencil with the decorator, call it on a
sub-domain, read the result back as a NumPy array."""

import numpy as np

import gt4py.storage as gt_storage
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

NX, NY, NZ = 12, 10, 6


def run(backend):
    @gtscript.stencil(backend=backend)
    def scaled_sum(
        field_a: gtscript.Field[np.float64],
        field_b: gtscript.Field[np.float64],
        result: gtscript.Field[np.float64],
        *,
        weight: np.float64,
    ):
        with computation(PARALLEL), interval(...):
            result = weight * field_a + field_b

    rng = np.random.default_rng(1)
    a = gt_storage.from_array(rng.uniform(size=(NX, NY, NZ)), np.float64, backend=backend,
                              aligned_index=(0, 0, 0))
    b = gt_storage.ones((NX, NY, NZ), np.float64, backend=backend, aligned_index=(0, 0, 0))
    out = gt_storage.zeros((NX, NY, NZ), np.float64, backend=backend, aligned_index=(0, 0, 0))
    scaled_sum(a, b, out, weight=2.0, origin=(1, 1, 0), domain=(NX - 2, NY - 2, NZ))

    expected = np.zeros((NX, NY, NZ))
    expected[1:-1, 1:-1] = 2.0 * np.asarray(a)[1:-1, 1:-1] + 1.0
    return {"result": np.asarray(out)}, {"result": expected}
