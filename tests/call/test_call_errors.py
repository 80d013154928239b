"""Call-time validation: bad calls raise TypeError/ValueError naming the offending argument,
before any code runs, so every array (and the buffer behind every view) is left bit-identical."""

import re

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval

SHAPE = (12, 10, 8)
NX, NY, NZ = SHAPE


def lap_defn(src: Field[np.float64], dst: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        dst = -4.0 * src[0, 0, 0] + src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0]


def axpy_defn(xin: Field[np.float64], yin: Field[np.float64], res: Field[np.float64], weight: float):
    with computation(PARALLEL), interval(...):
        res = weight * xin + yin


def kshift_defn(src: Field[np.float64], dst: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        dst = src[0, 0, 1]


def copy_defn(src: Field[np.float64], dst: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        dst = src


def names(*args):
    """A regex that matches a message naming any of the arguments (as a whole word)."""
    return "|".join(rf"\b{re.escape(a)}\b" for a in args)


@pytest.fixture
def lap(backend):
    return gtscript.stencil(backend, lap_defn)


@pytest.fixture
def axpy(backend):
    return gtscript.stencil(backend, axpy_defn)


def assert_call_fails(fields, stencil, exc, name_pattern, *args, **kwargs):
    """The call raises `exc` with a message matching `name_pattern`, and no array changes."""
    arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, np.ndarray)]
    snap = fields.snapshot(*arrays)
    with pytest.raises(exc, match=name_pattern) as info:
        stencil(*args, **kwargs)
    fields.assert_unchanged(snap)
    return info.value


# ===================================================================================== dtype

@pytest.mark.parametrize("bad", ["src", "dst"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.bool_, np.complex128])
def test_wrong_dtype_is_type_error_naming_argument(fields, lap, bad, dtype):
    args = {"src": fields.random(SHAPE), "dst": fields.sentinel(SHAPE)}
    args[bad] = args[bad].astype(dtype)
    assert_call_fails(fields, lap, TypeError, names(bad), **args)


def test_wrong_dtype_positional(fields, axpy):
    xin, yin, res = fields.random(SHAPE), fields.random(SHAPE).astype(np.float32), fields.sentinel(SHAPE)
    assert_call_fails(fields, axpy, TypeError, names("yin"), xin, yin, res, 2.0)


# ===================================================================================== ndim

@pytest.mark.parametrize("bad", ["src", "dst"])
@pytest.mark.parametrize("shape", [(NX, NY), (NX, NY, NZ, 2), (NX,)], ids=["2d", "4d", "1d"])
def test_wrong_ndim_is_value_error_naming_argument(fields, lap, bad, shape):
    args = {"src": fields.random(SHAPE), "dst": fields.sentinel(SHAPE)}
    args[bad] = fields.random(shape)
    assert_call_fails(fields, lap, ValueError, names(bad), **args)


# =========================================================================== bounds / halo

@pytest.mark.parametrize(
    "origin, domain, dst_shape, culprit",
    [
        # the domain fits dst, but src is also read one point beyond it (the halo)
        ((1, 1, 0), (NX - 1, NY - 2, NZ), SHAPE, "src"),
        ((1, 1, 0), (NX - 2, NY - 1, NZ), SHAPE, "src"),
        # origin inside dst, but src is read at i = -1 / j = -1
        ((0, 1, 0), (NX - 2, NY - 2, NZ), SHAPE, "src"),
        ((1, 0, 0), (NX - 2, NY - 2, NZ), SHAPE, "src"),
        # dst is smaller than the domain; src fits
        ((1, 1, 0), (NX - 2, NY - 2, NZ), (NX - 2, NY, NZ), "dst"),
        ((1, 1, 0), (NX - 2, NY - 2, NZ), (NX, NY, NZ - 1), "dst"),
        # past the end in K: both are outside
        ((1, 1, 0), (NX - 2, NY - 2, NZ + 1), SHAPE, ("src", "dst")),
        ((1, 1, 1), (NX - 2, NY - 2, NZ), SHAPE, ("src", "dst")),
    ],
)
def test_domain_outside_array_is_value_error(fields, lap, origin, domain, dst_shape, culprit):
    src, dst = fields.random(SHAPE), fields.sentinel(dst_shape)
    pattern = names(*culprit) if isinstance(culprit, tuple) else names(culprit)
    assert_call_fails(fields, lap, ValueError, pattern, src, dst, origin=origin, domain=domain)


def test_per_field_origin_outside_array(fields, lap):
    src, dst = fields.random(SHAPE), fields.sentinel(SHAPE)
    assert_call_fails(fields, lap, ValueError, names("dst"), src, dst,
                      origin={"_all_": (1, 1, 0), "dst": (3, 1, 0)}, domain=(NX - 2, NY - 2, NZ))


def test_per_field_origin_inside_halo_with_default_domain(fields, lap):
    # src's origin leaves no room for the read at i - 1: no domain can fix that
    src, dst = fields.random(SHAPE), fields.sentinel(SHAPE)
    assert_call_fails(fields, lap, ValueError, names("src"), src, dst, origin={"_all_": (1, 1, 0), "src": (0, 1, 0)})


def test_k_offset_read_needs_k_halo(fields, backend):
    st = gtscript.stencil(backend, kshift_defn)
    src, dst = fields.random(SHAPE), fields.sentinel(SHAPE)
    assert_call_fails(fields, st, ValueError, names("src"), src, dst, origin=(0, 0, 0), domain=SHAPE)
    # the default domain leaves out the top level instead
    st(src, dst)
    np.testing.assert_array_equal(dst[:, :, :-1], src[:, :, 1:])
    assert np.all(dst[:, :, -1] == fields.SENTINEL)


def test_domain_fits_with_halo_works(fields, lap):
    # the boundary case of the failing ones above: exactly fits
    src, dst = fields.random(SHAPE), fields.sentinel(SHAPE)
    lap(src, dst, origin=(1, 1, 0), domain=(NX - 2, NY - 2, NZ))
    assert not np.any(dst[1:-1, 1:-1] == fields.SENTINEL)


# ============================================================================ the signature

def test_missing_field_argument(fields, lap):
    src = fields.random(SHAPE)
    assert_call_fails(fields, lap, TypeError, names("dst"), src)


def test_missing_field_argument_by_keyword(fields, lap):
    dst = fields.sentinel(SHAPE)
    assert_call_fails(fields, lap, TypeError, names("src"), dst=dst)


def test_missing_scalar_argument(fields, axpy):
    xin, yin, res = fields.random(SHAPE), fields.random(SHAPE), fields.sentinel(SHAPE)
    assert_call_fails(fields, axpy, TypeError, names("weight"), xin, yin, res)


def test_unknown_keyword_argument(fields, lap):
    src, dst, extra = fields.random(SHAPE), fields.sentinel(SHAPE), fields.random(SHAPE)
    assert_call_fails(fields, lap, TypeError, names("bogus"), src, dst, bogus=extra)


def test_too_many_positional_arguments(fields, lap):
    src, dst, extra = fields.random(SHAPE), fields.sentinel(SHAPE), fields.random(SHAPE)
    assert_call_fails(fields, lap, TypeError, None, src, dst, extra)


def test_argument_given_twice(fields, lap):
    src, dst = fields.random(SHAPE), fields.sentinel(SHAPE)
    assert_call_fails(fields, lap, TypeError, names("src"), src, dst, src=src)


@pytest.mark.parametrize("value", [1.0, None, "field"], ids=["float", "None", "str"])
@pytest.mark.parametrize("bad", ["src", "dst"])
def test_non_array_for_field_is_type_error(fields, lap, bad, value):
    args = {"src": fields.random(SHAPE), "dst": fields.sentinel(SHAPE)}
    args[bad] = value
    assert_call_fails(fields, lap, TypeError, names(bad), **args)


@pytest.mark.parametrize("value", [[[[1.0]]], (1.0, 2.0)], ids=["nested-list", "tuple"])
def test_list_for_a_field_is_read_as_numpy_converts_it_or_refused_when_written(fields, lap,
                                                                                value):
    """A read argument may be a list or tuple (NumPy converts it; here to an array of the
    wrong shape), a written one may not: it cannot be written in place."""
    src, dst = fields.random(SHAPE), fields.sentinel(SHAPE)
    assert_call_fails(fields, lap, ValueError, names("src"), value, dst)
    err = assert_call_fails(fields, lap, TypeError, names("dst"), src, value)
    assert "pass np.asarray(data) and read the result from that array" in str(err)


# ============================================================================== fix lines

def test_wrong_dtype_says_the_cast_or_the_declaration(fields, lap):
    src, dst = fields.random(SHAPE).astype(np.float32), fields.sentinel(SHAPE)
    err = assert_call_fails(fields, lap, TypeError, "no implicit cast", src, dst)
    assert str(err) == ("argument 'src' has dtype float32 but the stencil declares float64 (no "
                        "implicit cast): pass src.astype(np.float64), or declare "
                        "Field[np.float32]")
    # a dtype no field can declare (here: another byte order) gets the cast only
    err = assert_call_fails(fields, lap, TypeError, "no implicit cast",
                            fields.random(SHAPE), dst.astype(">f8"))
    assert str(err).endswith("(no implicit cast): pass dst.astype(np.float64)")


def test_wrong_dtype_declaration_keeps_the_fields_axes_and_data_dimensions(fields, backend):
    def defn(w: Field[gtscript.IJ, (np.float32, (3,))], out: Field[np.float32]):
        with computation(PARALLEL), interval(...):
            out = w[0, 0][1]

    st = gtscript.stencil(backend, defn)
    w, out = fields.random((NX, NY, 3)), fields.sentinel(SHAPE).astype(np.float32)
    err = assert_call_fails(fields, st, TypeError, names("w"), w, out)
    assert str(err).endswith("pass w.astype(np.float32), or declare "
                             "Field[IJ, (np.float64, (3,))]")


def test_disagreeing_sizes_name_the_array_to_fix(fields, backend):
    st = gtscript.stencil(backend, axpy_defn)
    xin, res = fields.random(SHAPE), fields.sentinel(SHAPE)
    yin = fields.random((NX, NY + 1, NZ))
    err = assert_call_fails(fields, st, ValueError, "pass domain=", xin, yin, res, 2.0)
    assert str(err).endswith("pass domain= to say which box to compute, or fix the shape of "
                             "'yin'")
    lap = gtscript.stencil(backend, copy_defn)
    err = assert_call_fails(fields, lap, ValueError, "pass domain=", xin, yin)
    assert str(err).endswith("or fix the shape of 'src' or of 'dst'")
    err = assert_call_fails(fields, st, ValueError, "pass domain=", xin, yin,
                            fields.sentinel((NX, NY + 2, NZ)), 2.0)
    assert str(err).endswith("or give the arrays shapes that agree")


class DeviceArray:
    """A stand-in for a GPU array that NumPy cannot convert: only __cuda_array_interface__."""

    def __init__(self, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f8", "data": (0, False),
                                         "strides": None, "version": 3}


class CupyLikeArray(DeviceArray):
    """As CuPy's ndarray: an __array__ that refuses the implicit copy to the host."""

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")


@pytest.mark.parametrize("kind", [DeviceArray, CupyLikeArray])
def test_a_gpu_array_on_a_host_backend_says_to_use_cuda(fields, lap, kind):
    src, dst = fields.random(SHAPE), fields.sentinel(SHAPE)
    err = assert_call_fails(fields, lap, TypeError, names("src"), kind(SHAPE), dst)
    assert f"argument 'src' ({kind.__name__}) is a GPU array" in str(err)
    assert 'backend="cuda", which takes GPU arrays in place' in str(err)
    assert "(src.get(), cupy.asnumpy(src))" in str(err)
    err = assert_call_fails(fields, lap, TypeError, names("dst"), src, kind(SHAPE))
    assert "is a GPU array" in str(err) and "the result back to the device" in str(err)


@pytest.mark.parametrize("value", ["2.0", None, np.ones(3)], ids=["str", "None", "array"])
def test_wrong_type_for_scalar_is_type_error(fields, axpy, value):
    xin, yin, res = fields.random(SHAPE), fields.random(SHAPE), fields.sentinel(SHAPE)
    assert_call_fails(fields, axpy, TypeError, names("weight"), xin, yin, res, weight=value)


# ============================================================================ writability

def test_read_only_output_is_value_error(fields, lap):
    src, dst = fields.random(SHAPE), fields.sentinel(SHAPE)
    dst.flags.writeable = False
    assert_call_fails(fields, lap, ValueError, names("dst"), src, dst)


def test_read_only_view_output_is_value_error(fields, lap):
    src = fields.random(SHAPE)
    dst = fields.sentinel(SHAPE, layout="sliced")
    dst.flags.writeable = False
    assert_call_fails(fields, lap, ValueError, names("dst"), src, dst)


def test_read_only_input_is_accepted(fields, lap):
    src, dst = fields.random(SHAPE), fields.sentinel(SHAPE)
    src.flags.writeable = False
    lap(src, dst)
    expect = -4.0 * src[1:-1, 1:-1] + src[2:, 1:-1] + src[:-2, 1:-1] + src[1:-1, 2:] + src[1:-1, :-2]
    fields.assert_close(dst[1:-1, 1:-1], expect, what="laplacian of a read-only input")


# ================================================================================ aliasing

def test_aliased_fields_breaking_the_offset_rule_is_value_error(fields, lap):
    # dst = f(src[+-1]) with src and dst the same memory: parallel-model rule 1 is broken
    a = fields.random(SHAPE)
    assert_call_fails(fields, lap, ValueError, names("src", "dst"), a, a)


def test_overlapping_views_breaking_the_offset_rule_is_value_error(fields, lap):
    big = fields.random((NX + 1, NY, NZ))
    assert_call_fails(fields, lap, ValueError, names("src", "dst"), big[1:], big[:-1])


def test_aliased_fields_without_offsets_are_allowed(fields, backend):
    st = gtscript.stencil(backend, copy_defn)
    a = fields.random(SHAPE)
    before = a.copy()
    st(a, a)
    np.testing.assert_array_equal(a, before)
