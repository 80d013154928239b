"""GT4Py's axis shorthand with qualified axes: ``a[gtscript.I - 1]``, through the module or an
alias of it, means what the bare ``a[I - 1]`` means. Checked on the cpu and numpy backends and
on the cuda backend's source in host emulation, against hand-written NumPy."""

import numpy as np
import pytest

import gtscript
import gtscript as gs
from cuda_emulation.runner import emulate, require_compiler
from gtscript import IJ, PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSyntaxError


def qualified(a: Field[np.float64], ij: Field[IJ, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, -1):
        out = (a[gtscript.I - 1] + a[gs.J + 1] + 2.0 * a[gtscript.K + 1]
               - a[gs.I + 1, gtscript.J - 2] + ij[gs.I, gs.J - 1] + a[gtscript.I])


@pytest.mark.parametrize("backend", ["cpu", "numpy", "cuda"])
def test_qualified_axes_shift_like_bare_ones(fields, backend):
    if backend == "cuda":
        require_compiler()
    stencil = gtscript.stencil(backend, qualified)
    if backend == "cuda":
        stencil = emulate(stencil)  # the generated CUDA source, run on the host
    ni, nj, nk = 9, 10, 6
    a = fields.random((ni, nj, nk))
    ij = fields.random((ni, nj))
    out = fields.sentinel((ni, nj, nk))
    before = out.copy()
    origin, domain = (1, 2), (ni - 2, nj - 3)
    stencil(a, ij, out, origin={"_all_": (*origin, 0), "ij": origin}, domain=(*domain, nk))

    def sh(di, dj, dk):
        i0, j0 = origin[0] + di, origin[1] + dj
        return a[i0:i0 + domain[0], j0:j0 + domain[1], dk:dk + nk - 1]

    ij_part = ij[origin[0]:origin[0] + domain[0], origin[1] - 1:origin[1] - 1 + domain[1]]
    values = (sh(-1, 0, 0) + sh(0, 1, 0) + 2.0 * sh(0, 0, 1) - sh(1, -2, 0)
              + ij_part[:, :, None] + sh(0, 0, 0))
    expected = before.copy()
    expected[origin[0]:origin[0] + domain[0], origin[1]:origin[1] + domain[1], 0:nk - 1] = values
    np.testing.assert_allclose(out, expected, rtol=1e-14)


def test_qualified_axis_the_field_lacks_is_an_error():
    def bad(ij: Field[IJ, np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = ij[gtscript.K + 1]

    with pytest.raises(GTScriptSyntaxError, match="the field has axes IJ, not K"):
        gtscript.stencil("numpy", bad)
