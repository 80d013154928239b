"""An IJ field as an interval bound (GT4Py's ``interval(0, top)`` with ``top: Field[IJ, int]``):
per column, the levels ``[start, top[i, j])`` of the domain. Checked on the cpu and numpy
backends and on the cuda backend's source in host emulation, against hand-written loops, with
sentinel-filled outputs (nothing outside the levels asked for changes)."""

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import compiler, emulate
from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSemanticError, GTScriptSyntaxError

BACKENDS = ["cpu", "numpy", "cuda"]
NI, NJ, NK = 5, 6, 7


def build(backend, definition):
    if backend == "cuda" and compiler() is None:
        pytest.skip("no host C compiler for the cuda emulation")
    stencil = gtscript.stencil(backend, definition)
    return emulate(stencil) if backend == "cuda" else stencil


def up_to_top(a: Field[np.float64], top: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, top):
        out = 2.0 * a + a[0, 0, 1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_end_bound_field(fields, backend):
    stencil = build(backend, up_to_top)
    a = fields.random((NI, NJ, NK))
    top = fields.rng.integers(0, NK, (NI, NJ))  # 0: an empty column
    top[0, 0], top[1, 1] = 0, NK - 1
    out = fields.sentinel((NI, NJ, NK))
    expected = out.copy()
    for i in range(NI):
        for j in range(NJ):
            for k in range(top[i, j]):
                expected[i, j, k] = 2.0 * a[i, j, k] + a[i, j, k + 1]
    stencil(a, top, out, domain=(NI, NJ, NK - 1))
    np.testing.assert_array_equal(out, expected)


def above_bottom(a: Field[np.float64], bot: Field[IJ, np.int32], out: Field[np.float64]):
    with computation(FORWARD), interval(bot + 1, -1):
        out = out[0, 0, -1] + a


@pytest.mark.parametrize("backend", BACKENDS)
def test_start_bound_field_with_offset_in_forward(fields, backend):
    stencil = build(backend, above_bottom)
    a = fields.random((NI, NJ, NK))
    bot = fields.rng.integers(-1, NK - 2, (NI, NJ)).astype(np.int32)
    out = fields.random((NI, NJ, NK))
    expected = out.copy()
    # the read out[0, 0, -1] may reach one level below the domain: the domain starts at 1
    for i in range(NI):
        for j in range(NJ):
            for k in range(bot[i, j] + 1, NK - 2):  # domain levels; array level k + 1
                expected[i, j, k + 1] = expected[i, j, k] + a[i, j, k + 1]
    stencil(a, bot, out, origin=(0, 0, 1), domain=(NI, NJ, NK - 1))
    np.testing.assert_allclose(out, expected, rtol=1e-14)


def between(a: Field[np.float64], lo: Field[IJ, np.int64], hi: Field[IJ, np.int64],
            out: Field[np.float64]):
    with computation(PARALLEL), interval(lo, hi - 1):
        out = a


@pytest.mark.parametrize("backend", BACKENDS)
def test_both_bounds_fields(fields, backend):
    stencil = build(backend, between)
    a = fields.random((NI, NJ, NK))
    lo = fields.rng.integers(0, NK, (NI, NJ))
    hi = fields.rng.integers(0, NK + 2, (NI, NJ))  # beyond the domain: clipped to it
    out = fields.sentinel((NI, NJ, NK))
    expected = out.copy()
    for i in range(NI):
        for j in range(NJ):
            for k in range(lo[i, j], min(hi[i, j] - 1, NK)):
                expected[i, j, k] = a[i, j, k]
    stencil(a, lo, hi, out)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("annotation", ["Field[np.int64]", "Field[IJ, np.float64]"])
def test_only_integer_ij_fields_bound_intervals(tmp_path, annotation):
    source = ("import numpy as np\n"
              "from gtscript import Field, IJ, PARALLEL, computation, interval\n"
              f"def bad(a: Field[np.float64], top: {annotation}, out: Field[np.float64]):\n"
              "    with computation(PARALLEL), interval(0, top):\n"
              "        out = a\n")
    path = tmp_path / "bad.py"
    path.write_text(source)
    namespace = {"__name__": "bad"}
    exec(compile(source, str(path), "exec"), namespace)  # noqa: S102
    with pytest.raises(GTScriptSyntaxError, match="must be an integer IJ field"):
        gtscript.stencil("numpy", namespace["bad"])


def test_a_field_bound_interval_shares_its_computation_with_no_other():
    def two(a: Field[np.float64], top: Field[IJ, np.int64], out: Field[np.float64]):
        with computation(FORWARD):
            with interval(0, top):
                out = a
            with interval(top, None):
                out = -a

    with pytest.raises(GTScriptSemanticError, match="overlapping intervals"):
        gtscript.stencil("numpy", two)
