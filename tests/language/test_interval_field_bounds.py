"""An IJ field as an interval bound (GT4Py's ``interval(0, top)`` with ``top: Field[IJ, int]``):
per column, the levels ``[start, top[i, j])`` of the domain. Checked on the cpu and numpy
backends and on the cuda backend's source in host emulation, against hand-written loops, with
sentinel-filled outputs (nothing outside the levels asked for changes)."""

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import emulate, require_compiler
from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSemanticError, GTScriptSyntaxError

BACKENDS = ["cpu", "numpy", "cuda"]
NI, NJ, NK = 5, 6, 7


def build(backend, definition):
    if backend == "cuda":
        require_compiler()
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
    hi = fields.rng.integers(1, NK + 2, (NI, NJ))  # hi - 1: any level from 0 to the top, NK
    hi[0, 0], hi[0, 1] = 1, NK + 1
    out = fields.sentinel((NI, NJ, NK))
    expected = out.copy()
    for i in range(NI):
        for j in range(NJ):
            for k in range(lo[i, j], hi[i, j] - 1):
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


# ---- a bound outside the domain's levels: the call refuses before anything runs ------------

def _outputs_unchanged_after_error(fields, stencil, args, kwargs, match):
    snap = fields.snapshot(*[x for x in args if isinstance(x, np.ndarray)])
    with pytest.raises(ValueError, match=match):
        stencil(*args, **kwargs)
    fields.assert_unchanged(snap)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad", [NK, NK + 5, -1, np.iinfo(np.int64).max])
def test_end_bound_outside_the_domain_raises(fields, backend, layout, bad):
    stencil = build(backend, up_to_top)
    a = fields.random((NI, NJ, NK), layout=layout)
    top = fields.rng.integers(0, NK, (NI, NJ))
    top[3, 2] = bad
    out = fields.sentinel((NI, NJ, NK), layout=layout)
    # the domain has NK - 1 levels (a[0, 0, 1] reads one above): top == NK is one too many
    _outputs_unchanged_after_error(
        fields, stencil, (a, top, out), {"domain": (NI, NJ, NK - 1)},
        rf"argument 'top': the interval bound on line \d+ is level {bad} in column \(3, 2\) "
        rf"of the domain \('top' there is {bad}\), outside the domain's levels \[0, {NK - 1}\]")
    # the same column inside the levels: the call runs, and computes exactly that column
    top[3, 2] = NK - 1
    stencil(a, top, out, domain=(NI, NJ, NK - 1))
    expected = np.full((NK,), fields.SENTINEL)
    expected[:NK - 1] = 2.0 * a[3, 2, :-1] + a[3, 2, 1:]
    np.testing.assert_array_equal(out[3, 2], expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_start_bound_with_offset_below_the_domain_raises(fields, backend):
    stencil = build(backend, above_bottom)
    a = fields.random((NI, NJ, NK))
    bot = np.zeros((NI, NJ), np.int32)
    bot[0, 4] = -2  # bot + 1 == -1: below the first level
    out = fields.random((NI, NJ, NK))
    _outputs_unchanged_after_error(
        fields, stencil, (a, bot, out), {"origin": (0, 0, 1), "domain": (NI, NJ, NK - 1)},
        r"argument 'bot': .* level -1 in column \(0, 4\) of the domain \('bot' there is -2\), "
        rf"outside the domain's levels \[0, {NK - 1}\]")


@pytest.mark.parametrize("backend", BACKENDS)
def test_only_the_columns_the_interval_runs_on_are_checked(fields, backend):
    # the call's domain is the inner 3 x 4 columns: a bad bound outside them is never used
    stencil = build(backend, up_to_top)
    a = fields.random((NI, NJ, NK))
    top = np.full((NI, NJ), 2)
    top[0, :] = top[:, 0] = NK + 3
    out = fields.sentinel((NI, NJ, NK))
    expected = out.copy()
    expected[1:4, 1:5, :2] = 2.0 * a[1:4, 1:5, :2] + a[1:4, 1:5, 1:3]
    stencil(a, top, out, origin=(1, 1, 0), domain=(3, 4, NK - 1))
    np.testing.assert_array_equal(out, expected)
    # one column further (origin 0 in I): the bad bound is in the domain now
    with pytest.raises(ValueError, match=r"argument 'top'.* column \(0, 0\) .* there is 10\)"):
        stencil(a, top, out, origin=(0, 1, 0), domain=(3, 4, NK - 1))


def through_temporary(a: Field[np.float64], top: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, top):
        t = a * 3.0
    with computation(PARALLEL), interval(...):
        out = t[1, 0, 0] + t[-1, 0, 0]


@pytest.mark.filterwarnings("ignore:temporary 't' may be read before it is written")
@pytest.mark.parametrize("backend", BACKENDS)
def test_bounds_are_checked_where_a_temporary_is_computed_too(fields, backend):
    # t runs one column beyond the domain in I on each side, under the same guard: the bound
    # field is read (and must be a level of the domain) there as well
    stencil = build(backend, through_temporary)
    a = fields.random((NI, NJ, NK))
    top = np.full((NI, NJ), NK)
    out = fields.sentinel((NI, NJ, NK))
    expected = out.copy()
    expected[1:-1] = 3.0 * a[2:] + 3.0 * a[:-2]
    stencil(a, top, out, origin=(1, 0, 0), domain=(NI - 2, NJ, NK))
    np.testing.assert_array_equal(out, expected)
    top[0, 3] = NK + 1  # outside the domain's columns, where only t is computed
    _outputs_unchanged_after_error(
        fields, stencil, (a, top, out), {"origin": (1, 0, 0), "domain": (NI - 2, NJ, NK)},
        r"argument 'top'.* column \(-1, 3\) of the domain")
