"""Absolute K reads, GT4Py's ``f.at(K=k)``: field f read at K index k (0 is the first level
of the compute domain) whatever the level being computed, with k a compile-time constant, an
int scalar or an int field expression; centred in I and J. An index outside the array is a
ValueError naming the field, raised before anything is written."""

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSemanticError, GTScriptSyntaxError
from language_helpers import BACKENDS, FLOATS, LAYOUTS, as_layout, build, check_construct

SHAPE = (5, 4, 9)
NI, NJ, NK = SHAPE


def rand(rng, dt, shape=SHAPE):
    return rng.uniform(-1, 1, size=shape).astype(dt)


@gtscript.function
def surface(f):
    return f.at(K=0)


def surface_anomaly_defn(dt):
    def surface_anomaly(f: Field[dt], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            out = f - f.at(K=0)
    return surface_anomaly


def scalar_index_defn(dt):
    def scalar_index(f: Field[dt], out: Field[dt], n: int):
        with computation(FORWARD):
            with interval(0, 1):
                out = f.at(K=n)
            with interval(1, None):
                out = out[0, 0, -1] + f.at(K=n) * f.at(K=n + 1)
    return scalar_index


def field_index_defn(dt):
    def field_index(f: Field[dt], idx: Field[np.int32], top: Field[IJ, np.int64], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            out = f.at(K=abs(idx)) - surface(f) + f.at(K=abs(top - 1))
    return field_index


def data_index_defn(dt):
    def data_index(v: Field[(dt, (3,))], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            out = v.at(K=2)[1] - v[0, 0, 0][2]
    return data_index


@pytest.mark.parametrize("dt", FLOATS)
def test_surface_value_is_read_at_the_domain_origin(rng, dt):
    f, out = rand(rng, dt), np.zeros(SHAPE, dt)
    expected = out.copy()
    # the domain starts at array level 2: K index 0 is that level
    expected[:, :, 2:] = f[:, :, 2:] - f[:, :, 2:3]
    check_construct(surface_anomaly_defn(dt), {"f": f, "out": out}, {"out": expected}, ["out"],
                    origin=(0, 0, 2), domain=(NI, NJ, NK - 2))


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("n", [0, 3, NK - 2])
def test_scalar_index_in_forward(rng, dt, n):
    f, out = rand(rng, dt), np.zeros(SHAPE, dt)
    expected = out.copy()
    expected[:, :, 0] = f[:, :, n]
    for k in range(1, NK):
        expected[:, :, k] = expected[:, :, k - 1] + f[:, :, n] * f[:, :, n + 1]
    check_construct(scalar_index_defn(dt), {"f": f, "out": out}, {"out": expected}, ["out"],
                    scalars={"n": n})


@pytest.mark.parametrize("dt", FLOATS)
def test_int_field_index_in_parallel(rng, dt):
    f, out = rand(rng, dt), np.zeros(SHAPE, dt)
    idx = rng.integers(-(NK - 1), NK, size=SHAPE).astype(np.int32)
    top = rng.integers(1, NK + 1, size=(NI, NJ)).astype(np.int64)
    ii, jj, _ = np.meshgrid(np.arange(NI), np.arange(NJ), np.arange(NK), indexing="ij")
    expected = f[ii, jj, np.abs(idx)] - f[:, :, :1] + f[ii, jj, np.abs(top[:, :, None] - 1)]
    check_construct(field_index_defn(dt), {"f": f, "idx": idx, "top": top, "out": out},
                    {"out": expected.astype(dt)}, ["out"])


@pytest.mark.parametrize("dt", FLOATS)
def test_data_index_of_an_absolute_read(rng, dt):
    v, out = rand(rng, dt, SHAPE + (3,)), np.zeros(SHAPE, dt)
    expected = v[:, :, 2:3, 1] - v[:, :, :, 2]
    check_construct(data_index_defn(dt), {"v": v, "out": out}, {"out": expected}, ["out"])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_index_outside_the_array_is_caught_before_writing(backend, layout, rng):
    stencil = build(scalar_index_defn(np.float64), backend)
    f = as_layout(rand(rng, np.float64), layout)
    out = as_layout(np.full(SHAPE, 3.0), layout)
    for n in (NK - 1, NK, -1):  # n = NK - 1 reads n + 1 = NK
        with pytest.raises(ValueError, match=r"argument 'f'.*absolute K index.*'n'"):
            stencil(f, out, n)
        assert np.all(out == 3.0)
    # the index is counted from the origin: level 0 of a shifted domain is array level 1
    with pytest.raises(ValueError, match="'f'"):
        stencil(f, out, NK - 2, origin=(0, 0, 1), domain=(NI, NJ, NK - 1))
    stencil(f, out, NK - 3, origin=(0, 0, 1), domain=(NI, NJ, NK - 1))
    assert np.array_equal(out[:, :, 1], f[:, :, NK - 2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_field_index_outside_the_array_names_both_fields(backend, rng):
    stencil = build(field_index_defn(np.float64), backend)
    f, out = rand(rng, np.float64), np.zeros(SHAPE)
    idx = np.zeros(SHAPE, np.int32)
    top = np.ones((NI, NJ), np.int64)
    idx[1, 2, 3] = NK
    with pytest.raises(ValueError, match="'f'.*'idx'"):
        stencil(f, idx, top, out)
    idx[1, 2, 3] = 0
    top[0, 0] = NK + 1
    with pytest.raises(ValueError, match="'f'.*'top'"):
        stencil(f, idx, top, out)
    assert not out.any()


def relative_defn(kind):
    def same_name(f: Field[np.float64], out: Field[np.float64], kk: int):
        with computation(PARALLEL), interval(...):
            if __INLINED(kind == "absolute"):  # noqa: F821 - a gtscript builtin
                out = f.at(K=kk)
            elif __INLINED(kind == "variable"):  # noqa: F821
                out = f[0, 0, kk]
            elif __INLINED(kind == "surface"):  # noqa: F821
                out = f.at(K=0) + 0.0 * kk
            else:
                out = f[0, 0, 0] + 0.0 * kk
    return same_name


def test_cache_key_differs_from_relative_reads(rng):
    from gtscript import __INLINED  # noqa: F401 - used by the definitions

    keys = {}
    for kind in ("absolute", "variable", "surface", "centre"):
        st = gtscript.stencil("cpu", relative_defn(kind), externals={"kind": kind})
        keys[kind] = st.cache_key
    assert len(set(keys.values())) == 4, keys
    f = rand(rng, np.float64)
    absolute, variable = (np.zeros(SHAPE) for _ in range(2))
    gtscript.stencil("cpu", relative_defn("absolute"), externals={"kind": "absolute"})(f, absolute, 2)
    gtscript.stencil("cpu", relative_defn("variable"), externals={"kind": "variable"})(
        f, variable, 2, domain=(NI, NJ, NK - 2))
    assert np.array_equal(absolute, np.broadcast_to(f[:, :, 2:3], SHAPE))
    assert np.array_equal(variable[:, :, :NK - 2], f[:, :, 2:])


# ------------------------------------------------------------------------- build errors


def test_horizontal_offsets_are_rejected():
    def bad(f: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = f.at(K=0, I=1)

    with pytest.raises(GTScriptSyntaxError, match="one keyword argument") as info:
        build(bad, "cpu")
    assert info.value.lineno == bad.__code__.co_firstlineno + 2


def test_index_must_be_an_integer():
    def bad(f: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = f.at(K=f)

    with pytest.raises(GTScriptSemanticError, match="absolute K index must be an integer"):
        build(bad, "cpu")


def test_index_from_a_written_field_is_checked_while_running():
    # the index is only known while the stencil runs: the kernel checks it (see
    # tests/language/test_language_runtime.py), and the call undoes itself when it leaves the domain
    def shifted(f: Field[np.float64], idx: Field[np.int64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            idx = idx + 1
            out = f.at(K=idx)

    f = np.arange(4.0)[None, None, :] * np.ones((2, 2, 1))
    for backend in ("cpu", "numpy"):
        stencil = build(shifted, backend)
        idx, out = np.zeros((2, 2, 4), np.int64), np.zeros((2, 2, 4))
        stencil(f, idx, out)
        assert (out == 1.0).all() and (idx == 1).all()
        with pytest.raises(ValueError, match="'f': .*line .* outside the array's 4 levels"):
            stencil(f, idx + 2, out)  # index 4
        assert (out == 1.0).all() and (idx == 1).all()


def test_fields_without_k_and_temporaries_are_rejected():
    def no_k(f: Field[IJ, np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = f.at(K=0)

    def temporary(f: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            t = 2.0 * f
            out = t.at(K=0)

    with pytest.raises(GTScriptSemanticError, match="'f' is an IJ field.*absolute K"):
        build(no_k, "cpu")
    with pytest.raises(GTScriptSemanticError, match="'t' is a temporary"):
        build(temporary, "cpu")


@gtscript.function
def at_base(x):
    return x.at(K=1)


def test_function_argument_must_be_an_unshifted_field():
    def bad(f: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = at_base(f[1, 0, 0])

    with pytest.raises(GTScriptSyntaxError, match="needs a field passed as the argument 'x'"):
        build(bad, "cpu")
