"""GT4Py's spelling of the language runs unchanged: the imports a definition makes, the names of
GT4Py's ``gtscript`` module, the axis shorthand ``f[I - 1, J]``, ``K`` as a value, the one-line
``with computation(...), interval(...), horizontal(...)``, integer region bounds, NumPy integers
as data dimensions and GT4Py's math builtins. Every construct runs on the cpu and numpy
backends against hand-written NumPy (tests/cuda_emulation/registry.py runs the module-level
definitions through the cuda backend too), and a few against GT4Py itself."""

import atexit
import enum
import math
import os
import shutil
import tempfile
import warnings

import numpy as np
import pytest

import gtscript
import gtscript as gs  # noqa: F401  (an alias: `from gs.__externals__ import X` works too)
from gtscript import (
    BACKWARD,
    FORWARD,
    IJ,
    PARALLEL,
    Field,
    I,
    J,
    K,
    computation,
    horizontal,
    interval,
    region,
)
from gtscript.errors import GTScriptDefinitionError, GTScriptSyntaxError
from language_helpers import BACKENDS, FLOATS, build, check_construct

SHAPE = (6, 7, 5)
NI, NJ, NK = SHAPE

#: Externals of the module-level definitions (the cuda emulation registry reads this too).
EXTERNALS = {
    "imports_defn": {"SCALE": 2.0, "SHIFT": 1},
    "gtscript_module_imports": {"SCALE": 2.0},
    "k_value_defn": {"OFFSET": 3},
    "function_imports": {"SCALE": 0.5},
}


def rand(rng, dt=np.float64, shape=SHAPE, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(dt)


# ============================================================================ imports


def imports_defn(dt):
    def imports(a: Field[dt], out: Field[dt]):
        from gt4py.cartesian.__gtscript__ import PARALLEL, computation, interval
        from gt4py.cartesian.__externals__ import SCALE
        from gtscript.__externals__ import SHIFT as S

        with computation(PARALLEL), interval(...):
            out = SCALE * a[S, 0, 0]

    return imports


def gtscript_module_imports(a: Field[np.float64], out: Field[np.float64]):
    from __gtscript__ import PARALLEL, computation, interval
    from gs.__externals__ import SCALE

    with computation(PARALLEL), interval(...):
        out = SCALE * a


@gtscript.function
def scaled(f):
    from gt4py.cartesian.__externals__ import SCALE

    return SCALE * f


def function_imports(a: Field[np.float64], out: Field[np.float64]):
    from gt4py.cartesian.__gtscript__ import computation, interval, PARALLEL

    with computation(PARALLEL), interval(...):
        out = scaled(a) + scaled(a[1, 0, 0])


@pytest.mark.parametrize("dt", FLOATS)
def test_externals_and_gtscript_imported_through_gt4py_and_gtscript_paths(rng, dt):
    a, out = rand(rng, dt), np.zeros(SHAPE, dt)
    expected = out.copy()
    expected[:-1] = 2 * a[1:]
    check_construct(imports_defn(dt), {"a": a, "out": out}, {"out": expected}, ["out"],
                    domain=(NI - 1, NJ, NK), externals=EXTERNALS["imports_defn"])


def test_externals_through_an_alias_of_the_gtscript_module(rng):
    a, out = rand(rng), np.zeros(SHAPE)
    check_construct(gtscript_module_imports, {"a": a, "out": out}, {"out": 2 * a}, ["out"],
                    externals=EXTERNALS["gtscript_module_imports"])


def test_externals_imported_through_gt4py_inside_a_gtscript_function(rng):
    a, out = rand(rng), np.zeros(SHAPE)
    expected = out.copy()
    expected[:-1] = 0.5 * a[:-1] + 0.5 * a[1:]
    check_construct(function_imports, {"a": a, "out": out}, {"out": expected}, ["out"],
                    domain=(NI - 1, NJ, NK), externals=EXTERNALS["function_imports"])


def test_other_imports_are_still_rejected():
    def bad(a: Field[np.float64]):
        from gt4py.cartesian.gtscript import computation  # noqa: F401

        with computation(PARALLEL), interval(...):
            a = 1.0

    with pytest.raises(GTScriptSyntaxError, match="imports are not allowed"):
        gtscript.stencil("cpu", bad)


def test_a_missing_external_names_the_gt4py_import():
    def needs(a: Field[np.float64]):
        from gt4py.cartesian.__externals__ import MISSING

        with computation(PARALLEL), interval(...):
            a = MISSING

    with pytest.raises(GTScriptDefinitionError, match="external 'MISSING' is not defined"):
        gtscript.stencil("cpu", needs)


# ============================================================================ names

#: GT4Py 1.2's ``gtscript.__all__`` beyond 1.1's (GlobalTable belongs to the data-dimension
#: fields and is tested with them).
GT4PY_12_NAMES = ("IK", "JK", "Sequence", "lazy_stencil", "lazy_function", "mod", "asin", "acos",
                  "atan", "float32", "float64", "int32", "int64", "externals", "__externals__",
                  "__gtscript__", "AxisIndex", "AxisInterval", "enum")


_GT4PY_CACHE = []


def gt4py_gtscript():
    """GT4Py's gtscript module, its dependencies' import warnings silenced, writing its cache
    into a temporary directory removed at exit (never into the working directory, whoever
    imported GT4Py first)."""
    if not _GT4PY_CACHE:
        _GT4PY_CACHE.append(tempfile.mkdtemp(prefix="gt4py-cache-"))
        atexit.register(shutil.rmtree, _GT4PY_CACHE[0], ignore_errors=True)
        os.environ.setdefault("GT_CACHE_ROOT", _GT4PY_CACHE[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from gt4py.cartesian import config
        from gt4py.cartesian import gtscript as module
    config.cache_settings["root_path"] = _GT4PY_CACHE[0]
    return module


def test_every_name_of_gt4py_gtscript_is_importable_from_gtscript():
    gt4py = gt4py_gtscript()

    missing = [n for n in [*gt4py.__all__, *GT4PY_12_NAMES] if not hasattr(gtscript, n)]
    assert missing == []
    assert set(GT4PY_12_NAMES) <= set(gtscript.__all__)
    for name in gt4py.__all__:
        assert name in gtscript.__all__, name
    # what they are
    assert gtscript.IK == (I, K) and gtscript.JK == (J, K)
    assert gtscript.asin is gtscript.arcsin and gtscript.atanh is gtscript.arctanh
    assert gtscript.float32 is np.float32 and gtscript.int64 is np.int64
    assert gtscript.externals(1, 2) == (1, 2)
    assert len(gtscript.AxisInterval("I", 2, 5)) == 3
    with pytest.raises(ValueError):
        gtscript.AxisInterval("I", 5, 2)
    with pytest.raises(RuntimeError, match="can only be used inside"):
        gtscript.gamma(1.0)


def test_gt4py_names_of_builtins_compile_alike(rng):
    def spelled(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = gtscript.asin(a) + gtscript.acos(a) + gtscript.atan(a) + gtscript.mod(a, 0.3)

    a, out = rand(rng), np.zeros(SHAPE)
    expected = np.arcsin(a) + np.arccos(a) + np.arctan(a) + np.mod(a, 0.3)
    check_construct(spelled, {"a": a, "out": out}, {"out": expected}, ["out"], bitwise=False)


def lazy_defn():
    def lazy(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = a * 3.0

    return lazy


@pytest.mark.parametrize("backend", BACKENDS)
def test_lazy_stencil_builds_on_first_call(backend, rng):
    st = gtscript.lazy_stencil(backend=backend)(lazy_defn())
    assert st._implementation is None and "not built yet" in repr(st)
    a, out = rand(rng), np.zeros(SHAPE)
    st(a, out)
    assert np.array_equal(out, a * 3.0)
    assert isinstance(st.implementation, gtscript._core.Module)
    # attribute access reaches the built stencil
    other = gtscript.lazy_stencil(backend, lazy_defn())
    assert set(other.field_info) == {"a", "out"}
    eager = gtscript.lazy_stencil(backend, lazy_defn(), eager=True)
    assert eager._implementation is not None


def test_lazy_stencil_checks_syntax_at_decoration_unless_told_not_to():
    def broken(a: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            for x in a:  # noqa: B007
                a = 1.0

    with pytest.raises(GTScriptSyntaxError, match="for"):
        gtscript.lazy_stencil("cpu", broken)
    st = gtscript.lazy_stencil("cpu", broken, check_syntax=False)
    with pytest.raises(GTScriptSyntaxError, match="for"):
        st(np.zeros(SHAPE))
    with pytest.raises(ValueError, match="unknown backend"):
        gtscript.lazy_stencil("nope", broken)


def test_lazy_function_is_read_when_a_stencil_first_uses_it(rng):
    def twice(f):
        return 2.0 * f

    lazy = gtscript.lazy_function(twice)
    assert not isinstance(lazy.__gtscript_function__, gtscript.frontend.GTScriptFunction)

    def uses(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = lazy(a) + 1.0

    a, out = rand(rng), np.zeros(SHAPE)
    check_construct(uses, {"a": a, "out": out}, {"out": 2.0 * a + 1.0}, ["out"])
    assert isinstance(lazy.__gtscript_function__, gtscript.frontend.GTScriptFunction)


@gtscript.enum
class Phase(enum.IntEnum):
    LIQUID = 1
    ICE = 3


@gtscript.enum(category="flag")
class Mode(enum.Enum):
    OFF = 0
    ON = 7


def enum_defn():
    def with_enum(a: Field[np.float64], out: Field[np.float64], phase: Phase):
        with computation(PARALLEL), interval(...):
            if phase == Phase.ICE:
                out = a + Mode.ON
            else:
                out = a - Phase.LIQUID

    return with_enum


@pytest.mark.parametrize("phase, shift", [(Phase.ICE, 7.0), (Phase.LIQUID, -1.0)])
def test_enum_members_fold_to_ints_and_enum_parameters_are_ints(rng, phase, shift):
    a, out = rand(rng), np.zeros(SHAPE)
    check_construct(enum_defn(), {"a": a, "out": out}, {"out": a + shift}, ["out"],
                    scalars={"phase": phase})
    st = build(enum_defn(), "cpu")
    assert ("scalar", "phase", "int64") in st.ir_tree()["params"]


def test_enum_rejects_non_integer_members():
    with pytest.raises(TypeError, match="not an int"):
        @gtscript.enum
        class Bad(enum.Enum):
            X = "x"
    with pytest.raises(TypeError, match="Enum classes"):
        gtscript.enum(int)


# ============================================================================ axis shorthand


def shorthand_defn(dt):
    def shorthand(a: Field[dt], ij: Field[IJ, dt], kf: Field[K, dt], out: Field[dt]):
        with computation(PARALLEL), interval(1, -1):
            out = (a[I - 1, J] + a[J + 1] + 2 * a[K + 1] - a[I] + a[I + 1, J - 2, K]
                   + ij[I + 1] + ij[I, J - 1] + kf[K - 1])

    return shorthand


@pytest.mark.parametrize("dt", FLOATS)
def test_axis_shorthand_offsets(rng, dt):
    a, out = rand(rng, dt), np.zeros(SHAPE, dt)
    ij, kf = rand(rng, dt, (NI, NJ)), rand(rng, dt, (NK,))
    o = (1, 2)  # origin in I and J: the reads reach I - 1 and J - 2
    n = (NI - 2, NJ - 3)
    c = (slice(1, 1 + n[0]), slice(2, 2 + n[1]), slice(1, NK - 1))
    sh = lambda di, dj, dk: a[c[0].start + di:c[0].stop + di, c[1].start + dj:c[1].stop + dj,  # noqa: E731
                              c[2].start + dk:c[2].stop + dk]
    expected = out.copy()
    expected[c] = (sh(-1, 0, 0) + sh(0, 1, 0) + 2 * sh(0, 0, 1) - sh(0, 0, 0) + sh(1, -2, 0)
                   + (ij[2:2 + n[0], 2:2 + n[1]] + ij[1:1 + n[0], 1:1 + n[1]])[:, :, None]
                   + kf[0:NK - 2][None, None, :])
    check_construct(shorthand_defn(dt), {"a": a, "ij": ij, "kf": kf, "out": out},
                    {"out": expected}, ["out"], origin={"_all_": (*o, 0), "ij": o, "kf": (0,)},
                    domain=(*n, NK), bitwise=False)


def define(tmp_path, statement):
    """A definition whose computation holds ``statement``, written to a file (so its source
    can be read); ``statement`` is on line 5."""
    source = (
        "import numpy as np\n"
        "from gtscript import Field, IJ, PARALLEL, computation, interval, I, J, K\n"
        "def bad(a: Field[np.float64], ij: Field[IJ, np.float64], out: Field[np.float64]):\n"
        "    with computation(PARALLEL), interval(...):\n"
        f"        {statement}\n"
    )
    path = tmp_path / "definition.py"
    path.write_text(source)
    namespace = {"__name__": "definition"}
    exec(compile(source, str(path), "exec"), namespace)  # noqa: S102
    return namespace["bad"]


@pytest.mark.parametrize("index, message", [
    ("a[J, I]", "out of order"),
    ("a[I, I + 1]", "given twice"),
    ("a[I - 1, 0, 0]", "names an axis"),
    ("ij[K]", "axes IJ, not K"),
])
def test_axis_shorthand_errors(index, message, tmp_path):
    with pytest.raises(GTScriptSyntaxError, match=message) as info:
        gtscript.stencil("cpu", define(tmp_path, f"out = {index}"))
    assert info.value.lineno == 5


# ============================================================================ K as a value


def k_value_defn(dt):
    def k_value(a: Field[dt], out: Field[dt], level: Field[np.int64]):
        from __externals__ import OFFSET

        with computation(PARALLEL), interval(...):
            if K == 2:
                out = a + 100.0
            else:
                out = float(K + OFFSET) * a
            level = K

    return k_value


@pytest.mark.parametrize("dt", FLOATS)
def test_k_is_the_level_counted_from_the_domain_start(rng, dt):
    a, out, level = rand(rng, dt), np.zeros(SHAPE, dt), np.full(SHAPE, -1, np.int64)
    expected, expected_level = out.copy(), level.copy()
    ks = np.arange(NK - 1)  # the domain starts at array level 1: K is 0 there
    expected[:, :, 1:] = (ks + 3).astype(dt) * a[:, :, 1:]
    expected[:, :, 3] = a[:, :, 3] + dt(100.0)
    expected_level[:, :, 1:] = ks
    check_construct(k_value_defn(dt), {"a": a, "out": out, "level": level},
                    {"out": expected, "level": expected_level}, ["out", "level"],
                    origin=(0, 0, 1), domain=(NI, NJ, NK - 1), externals={"OFFSET": 3})


@gtscript.function
def level_above_half(f):
    return f if K > 1 else -f


def k_sweeps(a: Field[np.float64], fwd: Field[np.float64], bwd: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            fwd = K * 1.0
        with interval(1, None):
            fwd = fwd[0, 0, -1] + K + level_above_half(a)
    with computation(BACKWARD):
        with interval(-1, None):
            bwd = 10.0 * K
        with interval(0, -1):
            bwd = bwd[0, 0, 1] - K + a.at(K=K // 2)


def test_k_in_forward_and_backward_sweeps_and_in_functions(rng):
    a, fwd, bwd = rand(rng), np.zeros(SHAPE), np.zeros(SHAPE)
    ef, eb = fwd.copy(), bwd.copy()
    for k in range(NK):
        ef[:, :, k] = 0.0 if k == 0 else ef[:, :, k - 1] + k + (a[:, :, k] if k > 1 else -a[:, :, k])
    for k in reversed(range(NK)):
        eb[:, :, k] = 10.0 * k if k == NK - 1 else eb[:, :, k + 1] - k + a[:, :, k // 2]
    check_construct(k_sweeps, {"a": a, "fwd": fwd, "bwd": bwd}, {"fwd": ef, "bwd": eb},
                    ["fwd", "bwd"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_k_dependent_absolute_index_is_checked_at_the_call(backend, rng):
    def reads_above(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = a.at(K=K + 2)

    st = build(reads_above, backend)
    a, out = rand(rng), np.full(SHAPE, 5.0)
    with pytest.raises(ValueError, match="argument 'a'"):
        st(a, out)
    assert np.all(out == 5.0)
    st(a, out, domain=(NI, NJ, NK - 2))
    assert np.array_equal(out[:, :, :NK - 2], a[:, :, 2:])


@pytest.mark.parametrize("axis", ["I", "J"])
def test_i_and_j_as_values_are_rejected_as_gt4py_does(axis, tmp_path):
    bad = define(tmp_path, f"if {axis} == 2:\n            out = 1.0")
    with pytest.raises(GTScriptSyntaxError, match=f"parallel axis {axis} can't be queried, only K"):
        gtscript.stencil("cpu", bad)


# ============================================================================ structure


def one_line_region(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...), horizontal(region[I[0], :], region[:, J[-1]]):
        out = a + 1.0


def int_region_bounds(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        with horizontal(region[1:-1, :]):
            out = a + 1.0
        with horizontal(region[:, :-1]):
            out = out * 2.0
        with horizontal(region[0, :], region[-1, 2]):
            out = out - 10.0


def data_dims_numpy_ints(v: Field[(np.float64, (np.int64(3),))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = v[0, 0, 0][0] - v[0, 0, 0][2]


def test_one_line_computation_interval_and_horizontal(rng):
    a, out = rand(rng), np.zeros(SHAPE)
    expected = out.copy()
    expected[1, 1:NJ - 1] = a[1, 1:NJ - 1] + 1.0
    expected[1:NI - 1, NJ - 2] = a[1:NI - 1, NJ - 2] + 1.0
    check_construct(one_line_region, {"a": a, "out": out}, {"out": expected}, ["out"],
                    origin=(1, 1, 0), domain=(NI - 2, NJ - 2, NK))


def test_integer_region_bounds_count_from_the_domain_start_and_end(rng):
    a, out = rand(rng), np.zeros(SHAPE)
    o, n = (1, 1), (NI - 2, NJ - 2)
    e = out.copy()
    d = e[1:1 + n[0], 1:1 + n[1]]  # the compute domain
    ad = a[1:1 + n[0], 1:1 + n[1]]
    d[1:-1, :] = ad[1:-1, :] + 1.0
    d[:, :-1] *= 2.0
    d[0, :] -= 10.0
    d[-1, 2] -= 10.0
    check_construct(int_region_bounds, {"a": a, "out": out}, {"out": e}, ["out"],
                    origin=(*o, 0), domain=(*n, NK))


def test_data_dimensions_given_as_numpy_integers(rng):
    v, out = rand(rng, shape=SHAPE + (3,)), np.zeros(SHAPE)
    assert Field[(np.float64, (np.int64(3),))] == Field[(np.float64, (3,))]
    assert Field[(np.float32, np.int32(2))].data_dims == (2,)
    check_construct(data_dims_numpy_ints, {"v": v, "out": out},
                    {"out": v[..., 0] - v[..., 2]}, ["out"])


# ============================================================================ math builtins


def _scalar_ufunc(fn):
    def call(a):
        return np.array([fn(float(x)) for x in np.ravel(a)]).reshape(np.shape(a))
    return call


def builtins_defn(dt):
    def builtins(a: Field[dt], p: Field[dt], out: Field[(dt, (9,))]):
        with computation(PARALLEL), interval(...):
            out[0, 0, 0][0] = gtscript.gamma(p)
            out[0, 0, 0][1] = gtscript.erf(a)
            out[0, 0, 0][2] = gtscript.erfc(a)
            out[0, 0, 0][3] = gtscript.cbrt(a)
            out[0, 0, 0][4] = gtscript.round(a * 4.0)
            out[0, 0, 0][5] = gtscript.round_away_from_zero(a * 4.0)
            out[0, 0, 0][6] = gtscript.asinh(a)
            out[0, 0, 0][7] = gtscript.acosh(p)
            out[0, 0, 0][8] = gtscript.atanh(a * 0.9)

    return builtins


@pytest.mark.parametrize("dt", FLOATS)
def test_gt4py_math_builtins(rng, dt):
    # a * 4 hits exact halves: the two roundings differ there
    a = (rng.integers(-8, 9, SHAPE) / 8.0).astype(dt)
    a[0, 0, 0], a[1, 0, 0] = 0.375, -0.625  # 1.5 and -2.5 after * 4
    p = rand(rng, dt, lo=1.0, hi=5.0)
    out = np.zeros(SHAPE + (9,), dt)
    a4 = a * dt(4.0)
    half_away = np.where(np.abs(a4 - np.trunc(a4)) >= 0.5, np.trunc(a4) + np.sign(a4), np.trunc(a4))
    expected = np.stack([
        _scalar_ufunc(math.gamma)(p), _scalar_ufunc(math.erf)(a), _scalar_ufunc(math.erfc)(a),
        np.cbrt(a), np.round(a4), half_away, np.arcsinh(a), np.arccosh(p),
        np.arctanh(a * dt(0.9)),
    ], axis=-1).astype(dt)
    assert expected[0, 0, 0, 4] == 2.0 and expected[0, 0, 0, 5] == 2.0  # 1.5
    assert expected[1, 0, 0, 4] == -2.0 and expected[1, 0, 0, 5] == -3.0  # -2.5
    check_construct(builtins_defn(dt), {"a": a, "p": p, "out": out}, {"out": expected}, ["out"],
                    bitwise=False)


def test_gamma_poles_and_overflow_follow_c(rng):
    def poles(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = gtscript.gamma(a)

    a = np.zeros(SHAPE)
    a[0], a[1], a[2], a[3] = 0.0, -0.0, -2.0, 200.0
    a[4] = -np.inf
    a[5] = np.nan
    out = np.zeros(SHAPE)
    expected = np.empty(SHAPE)
    expected[0], expected[1], expected[2], expected[3] = np.inf, -np.inf, np.nan, np.inf
    expected[4] = expected[5] = np.nan
    check_construct(poles, {"a": a, "out": out}, {"out": expected}, ["out"])


def int_rounding(n: Field[np.int32], out: Field[np.int32]):
    with computation(PARALLEL), interval(...):
        out = gtscript.round(n) + gtscript.round_away_from_zero(n)


def test_rounding_an_integer_keeps_it_an_integer(rng):
    n = rng.integers(-50, 50, SHAPE).astype(np.int32)
    check_construct(int_rounding, {"n": n, "out": np.zeros(SHAPE, np.int32)}, {"out": 2 * n},
                    ["out"])


# ============================================================================ against GT4Py


def _gt4py_run(source_defn, arrays, **call):
    """Runs a definition with GT4Py's numpy backend."""
    gt4py = gt4py_gtscript()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = gt4py.stencil(backend="numpy", definition=source_defn)
        st(**arrays, **call)
    return arrays


GT4PY_SOURCE = '''
import numpy as np
from {module} import Field, PARALLEL, computation, interval, horizontal, region, I, J, K
from {module} import round, round_away_from_zero

def k_and_regions(a: Field[np.float64], out: Field[np.float64], r: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if K == 1:
            out = a[I - 1, J] + 100.0
        else:
            out = K * a[J + 1]
    with computation(PARALLEL), interval(...), horizontal(region[1:-1, 0]):
        out = out + 1000.0
    with computation(PARALLEL), interval(...):
        r = round(a * 4.0) + 10.0 * round_away_from_zero(a * 4.0)
'''


def test_results_match_gt4py(rng, tmp_path):
    gt4py_gtscript()  # imported quietly before the definitions import it
    definitions = {}
    for module in ("gtscript", "gt4py.cartesian.gtscript"):
        path = tmp_path / f"defs_{module.replace('.', '_')}.py"
        source = GT4PY_SOURCE.format(module=module)
        path.write_text(source)
        namespace = {"__name__": path.stem}
        exec(compile(source, str(path), "exec"), namespace)  # noqa: S102
        definitions[module] = namespace["k_and_regions"]
    a = (rng.integers(-8, 9, SHAPE) / 8.0)
    call = {"origin": (1, 0, 1), "domain": (NI - 2, NJ - 1, NK - 1)}
    gt4py = _gt4py_run(definitions["gt4py.cartesian.gtscript"],
                       {"a": a.copy(), "out": np.zeros(SHAPE), "r": np.zeros(SHAPE)}, **call)
    for backend in BACKENDS:
        ours = {"a": a.copy(), "out": np.zeros(SHAPE), "r": np.zeros(SHAPE)}
        gtscript.stencil(backend, definitions["gtscript"])(**ours, **call)
        for name in ("out", "r"):
            np.testing.assert_array_equal(ours[name], gt4py[name], err_msg=f"{name} ({backend})")
    assert np.any(gt4py["out"] > 500.0) and np.any(gt4py["out"] == 0.0)


# ============================================================================ cuda (emulated)


def test_k_and_the_new_builtins_on_the_cuda_backend_with_a_shifted_origin(rng):
    """The registry runs every definition above through the cuda emulation at origin 0; here
    the domain starts at array level 1, where K must still be 0."""
    from cuda_emulation.runner import compiler, emulate

    assert compiler() is not None, "the cuda emulation needs a host C compiler"
    a, out, level = rand(rng), np.zeros(SHAPE), np.full(SHAPE, -1, np.int64)
    call = {"origin": (0, 0, 1), "domain": (NI, NJ, NK - 1)}
    results = {}
    for backend in ("cpu", "cuda"):
        st = gtscript.stencil(backend, k_value_defn(np.float64), externals={"OFFSET": 3})
        if backend == "cuda":
            st = emulate(st, (4, 2))
        args = {"a": a.copy(), "out": out.copy(), "level": level.copy()}
        st(**args, **call)
        results[backend] = args
    expected_level = level.copy()
    expected_level[:, :, 1:] = np.arange(NK - 1)
    for backend, args in results.items():
        np.testing.assert_array_equal(args["level"], expected_level, err_msg=backend)
    np.testing.assert_array_equal(results["cuda"]["out"], results["cpu"]["out"])
    sweeps = {}
    for backend in ("cpu", "cuda"):
        st = gtscript.stencil(backend, k_sweeps)
        if backend == "cuda":
            st = emulate(st, (3, 2))
        args = {"a": a.copy(), "fwd": np.zeros(SHAPE), "bwd": np.zeros(SHAPE)}
        st(**args, origin=(0, 0, 1), domain=(NI, NJ, NK - 1))
        sweeps[backend] = args
    for name in ("fwd", "bwd"):
        np.testing.assert_allclose(sweeps["cuda"][name], sweeps["cpu"][name], rtol=1e-13)
    assert sweeps["cpu"]["bwd"][0, 0, NK - 1] == 10.0 * (NK - 2)  # the top level is K = NK - 2


def test_k_is_printed_and_in_the_cache_key():
    def level_of(out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = float(K)

    def zero(out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = float(0)

    a, b = gtscript.stencil("cpu", level_of), gtscript.stencil("cpu", zero)
    assert "float64(K)" in a.ir()
    assert a.build_info["cache_key"] != b.build_info["cache_key"]
    assert ("cast", "float64", ("kindex", "int64")) in [s[-1] for c in a.ir_tree()["computations"]
                                                       for _, _, body in c[1] for s in body]


def test_qualified_k_is_the_level_too(rng):
    def qualified(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            if gtscript.K == 1:
                out = a
            else:
                out = -a

    a, out = rand(rng), np.zeros(SHAPE)
    expected = -a
    expected[:, :, 1] = a[:, :, 1]
    check_construct(qualified, {"a": a, "out": out}, {"out": expected}, ["out"])
