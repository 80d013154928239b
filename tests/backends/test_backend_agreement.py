"""The spine of the suite: every stencil runs on each backend and is compared with an
independent, hand-written NumPy expression; then the cpu and numpy backends are compared with
each other on the same inputs.

Semantics (gtscript-parallel-model): statements of a PARALLEL computation act like whole-array
NumPy statements, in order, over the (extended) compute domain; FORWARD/BACKWARD computations
run level by level; intervals are relative to the compute domain; temporaries are 3-D fields.
"""

import copy as copy_module

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, __INLINED, computation, interval  # noqa: F401
from shared_stencils import hdiff_defn, laplacian_defn, thomas_defn

SHAPE = (12, 10, 8)
NX, NY, NZ = SHAPE


# ================================================================================ functions

@gtscript.function
def lap(f):
    return -4.0 * f[0, 0, 0] + f[1, 0, 0] + f[-1, 0, 0] + f[0, 1, 0] + f[0, -1, 0]


# ============================================================================== definitions

def copy_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp


def scaled_add_defn(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64], alpha: float):
    with computation(PARALLEL), interval(...):
        out = a + alpha * b


def lap_lap_function_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        tmp = lap(inp)
        out = lap(tmp)


def lap_lap_written_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        tmp = -4.0 * inp[0, 0, 0] + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]
        out = -4.0 * tmp[0, 0, 0] + tmp[1, 0, 0] + tmp[-1, 0, 0] + tmp[0, 1, 0] + tmp[0, -1, 0]


def cumsum_forward_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            out = inp
        with interval(1, None):
            out = out[0, 0, -1] + inp


def cumsum_backward_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(BACKWARD):
        with interval(-1, None):
            out = inp
        with interval(0, -1):
            out = out[0, 0, 1] + inp


def k_centered_diff_temp_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        tmp = inp * 2.0
    with computation(PARALLEL), interval(1, -1):
        out = tmp[0, 0, 1] - tmp[0, 0, -1]


def k_centered_diff_field_defn(inp: Field[np.float64], mid: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        mid = inp * 2.0
        out = mid[0, 0, 1] - mid[0, 0, -1]


def forward_extended_defn(inp: Field[np.float64], out: Field[np.float64]):
    # the seed's "forward iteration in k": a temporary on an extended compute domain
    with computation(FORWARD), interval(...):
        t = inp[1, 1, 0]
        out = 2.0 * t[1, 1, 0]


def intervals_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL):
        with interval(0, 1):
            out = inp + 100.0
        with interval(1, -1):
            out = 2.0 * inp
        with interval(-1, None):
            out = inp - 100.0


def laplacian32_defn(inp: Field[np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        out = -4.0 * inp[0, 0, 0] + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]


def scaled_add32_defn(a: Field[np.float32], b: Field[np.float32], out: Field[np.float32], alpha: np.float32):
    with computation(PARALLEL), interval(...):
        out = a + alpha * b


def externals_defn(inp: Field[np.float64], out: Field[np.float64]):
    from __externals__ import FACTOR, SHIFT

    with computation(PARALLEL), interval(...):
        if __INLINED(SHIFT):
            out = FACTOR * inp[1, 0, 0]
        else:
            out = FACTOR * inp


@gtscript.function
def scaled_lap(f):
    from __externals__ import FACTOR

    return FACTOR * (-4.0 * f[0, 0, 0] + f[1, 0, 0] + f[-1, 0, 0] + f[0, 1, 0] + f[0, -1, 0])


def externals_in_function_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = scaled_lap(inp)


# =========================================================================== NumPy references

def np_lap(f):
    """Laplacian of the interior of `f` (the result is 2 smaller in I and J)."""
    return -4.0 * f[1:-1, 1:-1] + f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2]


def np_hdiff(inp, coeff):
    """hdiff on the interior (2 smaller on each side in I and J), written with explicit
    neighbour arrays on a common index space, independently of benchmarks/reference.py."""
    nx, ny, _ = inp.shape

    def at(f, di, dj, i0, i1, j0, j1):
        return f[i0 + di:i1 + di, j0 + dj:j1 + dj]

    def lap4(i0, i1, j0, j1):
        return 4.0 * at(inp, 0, 0, i0, i1, j0, j1) - (
            at(inp, 1, 0, i0, i1, j0, j1) + at(inp, -1, 0, i0, i1, j0, j1)
            + at(inp, 0, 1, i0, i1, j0, j1) + at(inp, 0, -1, i0, i1, j0, j1)
        )

    def flux_x(i0, i1, j0, j1):
        res = lap4(i0 + 1, i1 + 1, j0, j1) - lap4(i0, i1, j0, j1)
        grad = at(inp, 1, 0, i0, i1, j0, j1) - at(inp, 0, 0, i0, i1, j0, j1)
        return np.where(res * grad > 0.0, 0.0, res)

    def flux_y(i0, i1, j0, j1):
        res = lap4(i0, i1, j0 + 1, j1 + 1) - lap4(i0, i1, j0, j1)
        grad = at(inp, 0, 1, i0, i1, j0, j1) - at(inp, 0, 0, i0, i1, j0, j1)
        return np.where(res * grad > 0.0, 0.0, res)

    i0, i1, j0, j1 = 2, nx - 2, 2, ny - 2
    return at(inp, 0, 0, i0, i1, j0, j1) - at(coeff, 0, 0, i0, i1, j0, j1) * (
        flux_x(i0, i1, j0, j1) - flux_x(i0 - 1, i1 - 1, j0, j1)
        + flux_y(i0, i1, j0, j1) - flux_y(i0, i1, j0 - 1, j1 - 1)
    )


def scipy_thomas(a, b, c, d):
    """Column by column with scipy.linalg.solve_banded (row k: a x[k-1] + b x[k] + c x[k+1] = d)."""
    # imported here: the cuda tests collect this module's stencils on GPU machines without SciPy
    from scipy.linalg import solve_banded

    x = np.empty(a.shape)
    nz = a.shape[2]
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            ab = np.zeros((3, nz))
            ab[0, 1:] = c[i, j, :-1]
            ab[1, :] = b[i, j, :]
            ab[2, :-1] = a[i, j, 1:]
            x[i, j] = solve_banded((1, 1), ab, d[i, j])
    return x


def thomas_inputs(fields, shape=SHAPE, layout="C"):
    rng = fields.rng
    a = rng.uniform(-1.0, 1.0, shape)
    c = rng.uniform(-1.0, 1.0, shape)
    b = rng.uniform(3.0, 4.0, shape) * rng.choice([-1.0, 1.0], shape)
    d = rng.uniform(-1.0, 1.0, shape)
    return [fields.as_layout(v, layout) for v in (a, b, c, d)]


# ================================================================================== copy

def test_copy_decorator_form(backend, fields, layout):
    @gtscript.stencil(backend=backend)
    def copy(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp

    inp = fields.random(SHAPE, layout=layout)
    out = fields.sentinel(SHAPE, layout=layout)
    inp_before = inp.copy()
    copy(inp, out)
    assert np.array_equal(out, inp), f"copy on {layout} arrays: out != inp"
    assert np.array_equal(inp, inp_before), "copy modified its input"
    fields.assert_view_padding_untouched(out, what="out")
    fields.assert_view_padding_untouched(inp, what="inp")


@pytest.mark.parametrize(
    "origin, domain",
    [((0, 0, 0), SHAPE), ((1, 2, 1), (5, 4, 3)), ((NX - 1, NY - 1, NZ - 1), (1, 1, 1)), ((3, 0, 2), (9, 10, 6))],
)
def test_copy_explicit_region(backend, fields, origin, domain):
    st = gtscript.stencil(backend, copy_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    st(inp, out, origin=origin, domain=domain)
    fields.assert_written_only_in(out, before, origin, domain, inp[fields.region(origin, domain)])


def test_copy_origin_dict_per_field(backend, fields):
    st = gtscript.stencil(backend, copy_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    domain = (6, 5, 4)
    st(inp, out, origin={"_all_": (1, 1, 0), "out": (4, 3, 2)}, domain=domain)
    expect_vals = inp[fields.region((1, 1, 0), domain)]
    fields.assert_written_only_in(out, before, (4, 3, 2), domain, expect_vals)


def test_copy_keyword_arguments_and_exec_info(backend, fields):
    st = gtscript.stencil(backend, copy_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    exec_info = {}
    st(out=out, inp=inp, exec_info=exec_info)
    assert np.array_equal(out, inp)
    assert exec_info, "exec_info was not filled in by the call"


# ============================================================================ scaled add

@pytest.mark.parametrize("alpha", [0.0, 1.0, -2.5, 1e-3])
@pytest.mark.parametrize("by_keyword", [False, True])
def test_scaled_add_with_scalar(backend, fields, alpha, by_keyword):
    st = gtscript.stencil(backend, scaled_add_defn)
    a, b = fields.random(SHAPE), fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    if by_keyword:
        st(a, b, out, alpha=alpha)
    else:
        st(a, b, out, alpha)
    fields.assert_close(out, a + alpha * b, what=f"a + {alpha} * b")


def test_scaled_add_accepts_python_int_scalar_for_float(backend, fields):
    st = gtscript.stencil(backend, scaled_add_defn)
    a, b = fields.random(SHAPE), fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    st(a, b, out, alpha=3)
    fields.assert_close(out, a + 3.0 * b, what="a + 3 * b")


# ============================================================================= laplacian

@pytest.mark.parametrize(
    "origin, domain",
    [((1, 1, 0), (NX - 2, NY - 2, NZ)), ((2, 3, 1), (6, 4, 5)), ((1, 1, 7), (1, 8, 1)), ((5, 4, 0), (6, 5, 8))],
)
def test_laplacian_explicit_origin_domain(backend, fields, origin, domain):
    st = gtscript.stencil(backend, laplacian_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    st(inp, out, origin=origin, domain=domain)
    expect = fields.expected_after(before, (1, 1, 0), (NX - 2, NY - 2, NZ), np_lap(inp))
    sl = fields.region(origin, domain)
    fields.assert_written_only_in(out, before, origin, domain, expect[sl])


def test_laplacian_default_origin_is_halo(backend, fields):
    st = gtscript.stencil(backend, laplacian_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    st(inp, out)
    fields.assert_written_only_in(out, before, (1, 1, 0), (NX - 2, NY - 2, NZ), np_lap(inp))


@pytest.mark.parametrize(
    "in_layout, out_layout",
    [("C", "C"), ("F", "F"), ("sliced", "C"), ("C", "sliced"), ("kij", "F"), ("strided", "strided"), ("F", "kij")],
)
def test_laplacian_layouts(backend, fields, in_layout, out_layout):
    st = gtscript.stencil(backend, laplacian_defn)
    inp = fields.random(SHAPE, layout=in_layout)
    out = fields.sentinel(SHAPE, layout=out_layout)
    before = out.copy()
    origin, domain = (1, 1, 0), (NX - 2, NY - 2, NZ)
    st(inp, out, origin=origin, domain=domain)
    fields.assert_written_only_in(out, before, origin, domain, np_lap(np.ascontiguousarray(inp)),
                                  what=f"out ({out_layout}) from inp ({in_layout})")
    fields.assert_view_padding_untouched(out, what=f"out ({out_layout})")
    fields.assert_view_padding_untouched(inp, what=f"inp ({in_layout})")


def test_laplacian_different_shapes_per_field(backend, fields):
    # out is smaller than inp; the per-field origin puts both on the same domain
    st = gtscript.stencil(backend, laplacian_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel((NX - 2, NY - 2, NZ))
    st(inp, out, origin={"inp": (1, 1, 0), "out": (0, 0, 0)}, domain=(NX - 2, NY - 2, NZ))
    fields.assert_close(out, np_lap(inp), what="laplacian into a smaller output")


# ====================================================================== laplacian of laplacian

@pytest.mark.parametrize("defn", [lap_lap_function_defn, lap_lap_written_defn], ids=["function", "written-out"])
def test_lap_of_lap_through_temporary(backend, fields, defn):
    st = gtscript.stencil(backend, defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    st(inp, out)  # default origin: the halo is 2 in I and J
    expect = np_lap(np_lap(inp))
    fields.assert_written_only_in(out, before, (2, 2, 0), (NX - 4, NY - 4, NZ), expect)


@pytest.mark.parametrize("defn", [lap_lap_function_defn, lap_lap_written_defn], ids=["function", "written-out"])
def test_lap_of_lap_subdomain(backend, fields, defn, layout):
    st = gtscript.stencil(backend, defn)
    inp = fields.random(SHAPE, layout=layout)
    out = fields.sentinel(SHAPE, layout=layout)
    before = out.copy()
    origin, domain = (3, 2, 2), (5, 4, 3)
    st(inp, out, origin=origin, domain=domain)
    full = fields.expected_after(before, (2, 2, 0), (NX - 4, NY - 4, NZ), np_lap(np_lap(np.asarray(inp))))
    fields.assert_written_only_in(out, before, origin, domain, full[fields.region(origin, domain)])
    fields.assert_view_padding_untouched(out, what=f"out ({layout})")


# ===================================================================== horizontal diffusion

@pytest.mark.parametrize(
    "in_layout, out_layout", [("C", "C"), ("F", "F"), ("sliced", "strided"), ("kij", "C"), ("C", "kij")]
)
def test_hdiff(backend, fields, in_layout, out_layout):
    st = gtscript.stencil(backend, hdiff_defn)
    inp = fields.random(SHAPE, layout=in_layout)
    coeff = fields.random(SHAPE, layout=in_layout, low=0.0, high=0.2)
    out = fields.sentinel(SHAPE, layout=out_layout)
    before = out.copy()
    st(inp, coeff, out)  # default origin (2, 2, 0), default domain the largest that fits
    expect = np_hdiff(np.asarray(inp), np.asarray(coeff))
    fields.assert_written_only_in(out, before, (2, 2, 0), (NX - 4, NY - 4, NZ), expect,
                                  what=f"hdiff out ({out_layout}) from inp ({in_layout})")
    fields.assert_view_padding_untouched(out, what=f"out ({out_layout})")


def test_hdiff_limiter_takes_both_branches(fields):
    # guards the test data of test_hdiff: the flux limiter must be active somewhere, and not everywhere
    inp = fields.random(SHAPE)
    lap4 = -np_lap(inp)
    res = lap4[1:, :] - lap4[:-1, :]
    grad = inp[2:-1, 1:-1] - inp[1:-2, 1:-1]
    limited = res * grad > 0.0
    assert 0.1 < limited.mean() < 0.9


def test_hdiff_explicit_subdomain_and_per_field_origin(backend, fields):
    st = gtscript.stencil(backend, hdiff_defn)
    inp = fields.random(SHAPE)
    coeff = fields.random((4, 3, 2), low=0.0, high=0.2)  # covers the domain only (read at zero offset)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    origin, domain = (4, 5, 3), (4, 3, 2)
    st(inp, coeff, out, origin={"_all_": origin, "coeff": (0, 0, 0)}, domain=domain)
    coeff_full = np.zeros(SHAPE)
    coeff_full[fields.region(origin, domain)] = coeff
    full = fields.expected_after(before, (2, 2, 0), (NX - 4, NY - 4, NZ), np_hdiff(inp, coeff_full))
    fields.assert_written_only_in(out, before, origin, domain, full[fields.region(origin, domain)])


# ============================================================================ vertical solver

@pytest.mark.parametrize("layout", ["C", "F", "kij", "sliced"])
def test_thomas_solver(backend, fields, layout):
    st = gtscript.stencil(backend, thomas_defn)
    a, b, c, d = thomas_inputs(fields, layout=layout)
    x = fields.sentinel(SHAPE, layout=layout)
    st(a, b, c, d, x)
    expect = scipy_thomas(*(np.asarray(v) for v in (a, b, c, d)))
    fields.assert_close(x, expect, what=f"Thomas solution ({layout})")
    m = np.diag(np.asarray(b)[3, 4]) + np.diag(np.asarray(a)[3, 4, 1:], -1) + np.diag(np.asarray(c)[3, 4, :-1], 1)
    np.testing.assert_allclose(m @ np.asarray(x)[3, 4], np.asarray(d)[3, 4], rtol=1e-10, atol=1e-12,
                               err_msg="column (3, 4) does not solve its system")


def test_thomas_solver_on_k_subdomain(backend, fields):
    # intervals are relative to the compute domain: solving on k in [2, NZ-1) only
    st = gtscript.stencil(backend, thomas_defn)
    a, b, c, d = thomas_inputs(fields)
    x = fields.sentinel(SHAPE)
    before = x.copy()
    origin, domain = (1, 0, 2), (NX - 3, NY, NZ - 3)
    st(a, b, c, d, x, origin=origin, domain=domain)
    sl = fields.region(origin, domain)
    expect = scipy_thomas(a[sl], b[sl], c[sl], d[sl])
    fields.assert_written_only_in(x, before, origin, domain, expect, what="x")


# ============================================================================ cumulative sums

@pytest.mark.parametrize(
    "defn, reference",
    [
        (cumsum_forward_defn, lambda v: np.cumsum(v, axis=2)),
        (cumsum_backward_defn, lambda v: np.cumsum(v[:, :, ::-1], axis=2)[:, :, ::-1]),
    ],
    ids=["forward", "backward"],
)
@pytest.mark.parametrize(
    "origin, domain", [((0, 0, 0), SHAPE), ((1, 2, 2), (5, 6, 4))], ids=["full", "subdomain"]
)
def test_cumulative_sum(backend, fields, defn, reference, origin, domain):
    st = gtscript.stencil(backend, defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    st(inp, out, origin=origin, domain=domain)
    expect = reference(inp[fields.region(origin, domain)])
    fields.assert_written_only_in(out, before, origin, domain, expect, what=f"{defn.__name__} out")


@pytest.mark.parametrize("defn", [cumsum_forward_defn, cumsum_backward_defn], ids=["forward", "backward"])
def test_default_origin_accounts_for_intervals(backend, fields, defn):
    # out[0, 0, -1] is read only on interval(1, None) (out[0, 0, 1] only on interval(0, -1)):
    # no K halo is needed, so the default compute domain is the whole array
    st = gtscript.stencil(backend, defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    st(inp, out)
    assert not np.any(out == fields.SENTINEL), "the default domain did not cover every K level"
    expect = np.cumsum(inp, axis=2) if defn is cumsum_forward_defn else np.cumsum(inp[:, :, ::-1], axis=2)[:, :, ::-1]
    fields.assert_close(out, expect, what=defn.__name__)


# ================================================================ PARALLEL with K offsets

def test_parallel_temporary_read_at_k_plus_and_minus_one(backend, fields):
    st = gtscript.stencil(backend, k_centered_diff_temp_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    st(inp, out)
    expect = 2.0 * inp[:, :, 2:] - 2.0 * inp[:, :, :-2]
    fields.assert_written_only_in(out, before, (0, 0, 1), (NX, NY, NZ - 2), expect)


def test_parallel_statement_sees_previous_statement_everywhere(backend, fields):
    # `mid = inp * 2` runs over the whole domain before `out = mid[k+1] - mid[k-1]` reads it: the
    # read at k+1 must see the new value, as in NumPy; outside the domain the old mid is read
    st = gtscript.stencil(backend, k_centered_diff_field_defn)
    inp = fields.random(SHAPE)
    mid = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    mid_before, out_before = mid.copy(), out.copy()
    origin, domain = (0, 0, 1), (NX, NY, NZ - 2)
    st(inp, mid, out, origin=origin, domain=domain)

    mid_ref = mid_before.copy()
    mid_ref[:, :, 1:-1] = inp[:, :, 1:-1] * 2.0
    out_ref = mid_ref[:, :, 2:] - mid_ref[:, :, :-2]
    fields.assert_written_only_in(mid, mid_before, origin, domain, mid_ref[:, :, 1:-1], what="mid")
    fields.assert_written_only_in(out, out_before, origin, domain, out_ref, what="out")


def test_forward_extended_compute_domain(backend, fields):
    st = gtscript.stencil(backend, forward_extended_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    st(inp, out)  # halo: 0 below, 2 above in I and J
    fields.assert_written_only_in(out, before, (0, 0, 0), (NX - 2, NY - 2, NZ), 2.0 * inp[2:, 2:, :])


# ===================================================================== interval specialisation

@pytest.mark.parametrize(
    "origin, domain", [((0, 0, 0), SHAPE), ((1, 1, 2), (4, 5, 5)), ((0, 0, 3), (NX, NY, 3))],
    ids=["full", "subdomain", "three-levels"],
)
def test_interval_specialisation(backend, fields, origin, domain):
    st = gtscript.stencil(backend, intervals_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    st(inp, out, origin=origin, domain=domain)
    v = inp[fields.region(origin, domain)]
    expect = 2.0 * v
    expect[:, :, 0] = v[:, :, 0] + 100.0
    expect[:, :, -1] = v[:, :, -1] - 100.0
    fields.assert_written_only_in(out, before, origin, domain, expect)


def test_interval_specialisation_needs_three_levels(backend, fields):
    # interval(0, 1) + interval(1, -1) + interval(-1, None) need 3 K levels; 2 is an error that
    # says both numbers, and nothing is written
    st = gtscript.stencil(backend, intervals_defn)
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    with pytest.raises(ValueError, match=r"2 K levels.*at least 3"):
        st(inp, out, origin=(0, 0, 3), domain=(NX, NY, 2))
    np.testing.assert_array_equal(out, before)


# ==================================================================================== float32

def test_float32_laplacian(backend, fields, layout):
    st = gtscript.stencil(backend, laplacian32_defn)
    inp = fields.random(SHAPE, dtype=np.float32, layout=layout)
    out = fields.sentinel(SHAPE, dtype=np.float32, layout=layout)
    before = out.copy()
    st(inp, out)
    assert out.dtype == np.float32
    fields.assert_written_only_in(out, before, (1, 1, 0), (NX - 2, NY - 2, NZ), np_lap(np.asarray(inp)))


def test_float32_scaled_add(backend, fields):
    st = gtscript.stencil(backend, scaled_add32_defn)
    a = fields.random(SHAPE, dtype=np.float32)
    b = fields.random(SHAPE, dtype=np.float32)
    out = fields.sentinel(SHAPE, dtype=np.float32)
    st(a, b, out, alpha=np.float32(0.75))
    fields.assert_close(out, a + np.float32(0.75) * b, what="float32 a + alpha * b")


@pytest.mark.parametrize("bad", ["inp", "out"])
def test_float32_stencil_rejects_float64(backend, fields, bad):
    st = gtscript.stencil(backend, laplacian32_defn)
    args = {"inp": fields.random(SHAPE, dtype=np.float32), "out": fields.sentinel(SHAPE, dtype=np.float32)}
    args[bad] = args[bad].astype(np.float64)
    snap = fields.snapshot(*args.values())
    with pytest.raises(TypeError, match=rf"\b{bad}\b"):
        st(**args)
    fields.assert_unchanged(snap)


# ==================================================================== functional form, externals

@pytest.mark.parametrize("factor", [2.0, -0.5])
def test_functional_form_with_externals(backend, fields, factor):
    inp = fields.random(SHAPE)

    plain = gtscript.stencil(backend, externals_defn, externals={"FACTOR": factor, "SHIFT": False})
    out = fields.sentinel(SHAPE)
    plain(inp, out)
    fields.assert_close(out, factor * inp, what=f"FACTOR={factor}, SHIFT=False")

    shifted = gtscript.stencil(backend, externals_defn, externals={"FACTOR": factor, "SHIFT": True})
    out = fields.sentinel(SHAPE)
    before = out.copy()
    shifted(inp, out)  # the inlined branch reads inp[1, 0, 0]: halo 1 above in I
    fields.assert_written_only_in(out, before, (0, 0, 0), (NX - 1, NY, NZ), factor * inp[1:, :, :],
                                  what=f"FACTOR={factor}, SHIFT=True")


def test_decorator_form_with_externals(backend, fields):
    @gtscript.stencil(backend=backend, externals={"FACTOR": 3.0, "SHIFT": False})
    def scale(inp: Field[np.float64], out: Field[np.float64]):
        from __externals__ import FACTOR, SHIFT

        with computation(PARALLEL), interval(...):
            if __INLINED(SHIFT):
                out = inp[1, 0, 0]
            else:
                out = FACTOR * inp

    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    scale(inp, out)
    fields.assert_close(out, 3.0 * inp, what="decorated stencil with externals")


def test_externals_reach_gtscript_functions(backend, fields):
    st = gtscript.stencil(backend, externals_in_function_defn, externals={"FACTOR": 0.25})
    inp = fields.random(SHAPE)
    out = fields.sentinel(SHAPE)
    before = out.copy()
    st(inp, out)
    fields.assert_written_only_in(out, before, (1, 1, 0), (NX - 2, NY - 2, NZ), 0.25 * np_lap(inp))


def test_stencil_reused_across_calls_and_shapes(backend, fields):
    st = gtscript.stencil(backend, laplacian_defn)
    for shape in [SHAPE, (5, 7, 3), (20, 4, 1)]:
        inp = fields.random(shape)
        out = fields.sentinel(shape)
        st(inp, out)
        fields.assert_close(out[1:-1, 1:-1], np_lap(inp), what=f"laplacian on shape {shape}")


# ================================================================= cpu backend == numpy backend

def _thomas_args(fields):
    a, b, c, d = thomas_inputs(fields)
    return dict(a=a, b=b, c=c, d=d, x=fields.sentinel(SHAPE)), {}


AGREEMENT_CASES = {
    "copy": (copy_defn, lambda f: (dict(inp=f.random(SHAPE), out=f.sentinel(SHAPE)), {})),
    "scaled_add": (scaled_add_defn, lambda f: (
        dict(a=f.random(SHAPE), b=f.random(SHAPE), out=f.sentinel(SHAPE), alpha=0.3), {})),
    "laplacian": (laplacian_defn, lambda f: (
        dict(inp=f.random(SHAPE), out=f.sentinel(SHAPE)), dict(origin=(2, 1, 1), domain=(7, 8, 6)))),
    "lap_lap_function": (lap_lap_function_defn, lambda f: (dict(inp=f.random(SHAPE), out=f.sentinel(SHAPE)), {})),
    "lap_lap_written": (lap_lap_written_defn, lambda f: (dict(inp=f.random(SHAPE), out=f.sentinel(SHAPE)), {})),
    "hdiff": (hdiff_defn, lambda f: (
        dict(inp=f.random(SHAPE), coeff=f.random(SHAPE, low=0.0, high=0.2), out=f.sentinel(SHAPE)), {})),
    "thomas": (thomas_defn, _thomas_args),
    "cumsum_forward": (cumsum_forward_defn, lambda f: (
        dict(inp=f.random(SHAPE), out=f.sentinel(SHAPE)), dict(origin=(0, 0, 0), domain=SHAPE))),
    "cumsum_backward": (cumsum_backward_defn, lambda f: (
        dict(inp=f.random(SHAPE), out=f.sentinel(SHAPE)), dict(origin=(0, 0, 0), domain=SHAPE))),
    "k_centered_temp": (k_centered_diff_temp_defn, lambda f: (dict(inp=f.random(SHAPE), out=f.sentinel(SHAPE)), {})),
    "k_centered_field": (k_centered_diff_field_defn, lambda f: (
        dict(inp=f.random(SHAPE), mid=f.random(SHAPE), out=f.sentinel(SHAPE)),
        dict(origin=(0, 0, 1), domain=(NX, NY, NZ - 2)))),
    "forward_extended": (forward_extended_defn, lambda f: (dict(inp=f.random(SHAPE), out=f.sentinel(SHAPE)), {})),
    "intervals": (intervals_defn, lambda f: (
        dict(inp=f.random(SHAPE), out=f.sentinel(SHAPE)), dict(origin=(1, 1, 2), domain=(4, 5, 5)))),
    "laplacian32": (laplacian32_defn, lambda f: (
        dict(inp=f.random(SHAPE, dtype=np.float32), out=f.sentinel(SHAPE, dtype=np.float32)), {})),
}


@pytest.mark.parametrize("case", sorted(AGREEMENT_CASES))
def test_cpu_and_numpy_backends_agree(fields, case):
    defn, make = AGREEMENT_CASES[case]
    args, call_kwargs = make(fields)
    results = {}
    for name in ("cpu", "numpy"):
        st = gtscript.stencil(name, defn)
        run_args = copy_module.deepcopy(args)
        st(**run_args, **call_kwargs)
        results[name] = run_args
    for arg, value in args.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_allclose(
                results["cpu"][arg], results["numpy"][arg], equal_nan=True, **fields.tolerance(value.dtype),
                err_msg=f"{case}: argument {arg!r} differs between the cpu and numpy backends",
            )
