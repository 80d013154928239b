"""``@gtscript.function`` parameters are passed by name, as GT4Py inlines them: a parameter
bound to a plain name (a field, a temporary, a parameter or local of the caller) that the body
never plain-assigns IS that name, so `p *= r` (in a branch, a loop, a nested call too) updates
the caller's field or variable; a parameter the body plain-assigns, or one bound to an
expression, a shifted field, a constant or a default, is a local copy.

Each case runs on the numpy, cpu and (emulated) cuda backends against hand-written NumPy;
the values of GT4Py 1.1.12 itself are checked by tests/compat_gt4py/test_function_semantics_gt4py.py."""

from __future__ import annotations

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, PARALLEL, Field, computation, interval
from cuda_emulation.runner import emulate, require_compiler

F = Field[np.float64]
SHAPE = (5, 4, 3)
BACKENDS = ("numpy", "cpu", "cuda")


def _build(defn, backend, **kw):
    stencil = gtscript.stencil(backend, defn, **kw)
    return emulate(stencil) if backend == "cuda" else stencil


def _fields(*names, seed=0):
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(0.5, 2.0, SHAPE) for name in names}


# ------------------------------------------------------------------ functions used below


@gtscript.function
def scale(p, r):
    p *= r
    return p + 1.0


@gtscript.function
def scale_then_assign(p, r):
    p *= r
    p = p + 1.0  # a plain assignment anywhere makes p a local copy
    return p


@gtscript.function
def scale_in_branch(p, c):
    if c > 1.0:
        p += 10.0
    else:
        p -= 10.0
    return c


@gtscript.function
def add_in_loop(p, n):
    i = 0.0
    while i < n:
        p += 1.0
        i += 1.0
    return i


@gtscript.function
def outer(q, r):
    s = scale(q, r)  # writes q through, hence the caller's argument
    return q + s


@gtscript.function
def outer_plain(q, r):
    q = q * 1.0  # q is local here: scale() writes the copy
    s = scale(q, r)
    return q + s


@gtscript.function
def limit_sinks(q, s1, s2, s3):
    """A microphysics sink limiter: scales the sinks so they do not exceed q; only the ratio
    is returned, the sinks are written through."""
    total = s1 + s2 + s3
    ratio = q / total if total > q else 1.0
    s1 *= ratio
    s2 *= ratio
    s3 *= ratio
    return ratio


@gtscript.function
def bump_other(p, q):
    q += 10.0
    return p


@gtscript.function
def bump_centre(p):
    p[0, 0, 0] += 2.0
    return p + 1.0


@gtscript.function
def bump_both(p, q):
    p += 1.0
    q += 1.0
    return p


# ------------------------------------------------------------------ the cases


def field_case():
    def defn(a: F, r: F, out: F):
        with computation(PARALLEL), interval(...):
            out = scale(a, r)

    def expect(a, r, out):
        return {"a": a * r, "out": a * r + 1.0}

    return defn, ("a", "r", "out"), expect, {}


def temporary_case():
    def defn(a: F, r: F, out: F, t_out: F):
        with computation(PARALLEL), interval(...):
            t = a + 1.0
            out = scale(t, r)
            t_out = t

    def expect(a, r, out, t_out):
        return {"out": (a + 1.0) * r + 1.0, "t_out": (a + 1.0) * r}

    return defn, ("a", "r", "out", "t_out"), expect, {}


def keyword_case():
    def defn(a: F, r: F, out: F):
        with computation(PARALLEL), interval(...):
            out = scale(r=r, p=a)

    def expect(a, r, out):
        return {"a": a * r, "out": a * r + 1.0}

    return defn, ("a", "r", "out"), expect, {}


def written_and_returned_case():
    @gtscript.function
    def scale_return(p, r):
        p *= r
        return p

    def defn(a: F, r: F, out: F):
        with computation(PARALLEL), interval(...):
            out = scale_return(a, r) + a

    def expect(a, r, out):
        return {"a": a * r, "out": 2.0 * a * r}

    return defn, ("a", "r", "out"), expect, {}


def expression_case():
    def defn(a: F, r: F, out: F):
        with computation(PARALLEL), interval(...):
            out = scale(a * 1.0, r)

    def expect(a, r, out):
        return {"a": a, "out": a * r + 1.0}

    return defn, ("a", "r", "out"), expect, {}


def shifted_field_case():
    def defn(a: F, r: F, out: F):
        with computation(FORWARD), interval(1, None):
            out = scale(a[0, 0, -1], r)

    def expect(a, r, out):
        new = out.copy()
        new[:, :, 1:] = a[:, :, :-1] * r[:, :, 1:] + 1.0
        return {"a": a, "out": new}

    return defn, ("a", "r", "out"), expect, {}


def external_case():
    def defn(a: F, out: F):
        from __externals__ import EXT

        with computation(PARALLEL), interval(...):
            out = scale(EXT, a) + EXT

    def expect(a, out):
        return {"a": a, "out": 3.0 * a + 1.0 + 3.0}

    return defn, ("a", "out"), expect, {"externals": {"EXT": 3.0}}


def plain_assignment_case():
    def defn(a: F, r: F, out: F):
        with computation(PARALLEL), interval(...):
            out = scale_then_assign(a, r)

    def expect(a, r, out):
        return {"a": a, "out": a * r + 1.0}

    return defn, ("a", "r", "out"), expect, {}


def branch_case():
    def defn(a: F, c: F, out: F):
        with computation(PARALLEL), interval(...):
            out = scale_in_branch(a, c)

    def expect(a, c, out):
        return {"a": np.where(c > 1.0, a + 10.0, a - 10.0), "out": c}

    return defn, ("a", "c", "out"), expect, {}


def loop_case():
    def defn(a: F, out: F):
        with computation(PARALLEL), interval(...):
            out = add_in_loop(a, 3.0)

    def expect(a, out):
        return {"a": a + 3.0, "out": np.full_like(a, 3.0)}

    return defn, ("a", "out"), expect, {}


def nested_case():
    def defn(a: F, r: F, out: F):
        with computation(PARALLEL), interval(...):
            out = outer(a, r)

    def expect(a, r, out):
        return {"a": a * r, "out": a * r + a * r + 1.0}

    return defn, ("a", "r", "out"), expect, {}


def nested_local_case():
    def defn(a: F, r: F, out: F):
        with computation(PARALLEL), interval(...):
            out = outer_plain(a, r)

    def expect(a, r, out):
        return {"a": a, "out": a * r + a * r + 1.0}

    return defn, ("a", "r", "out"), expect, {}


def nested_expression_case():
    def defn(a: F, r: F, out: F):
        with computation(PARALLEL), interval(...):
            out = outer(a + 0.0, r)  # q is a local copy: scale() writes the copy

    def expect(a, r, out):
        return {"a": a, "out": a * r + a * r + 1.0}

    return defn, ("a", "r", "out"), expect, {}


def sink_limiter_case():
    def defn(q: F, s1: F, s2: F, s3: F, ratio: F):
        with computation(PARALLEL), interval(...):
            ratio = limit_sinks(q, s1, s2, s3)
            q = q - (s1 + s2 + s3)

    def expect(q, s1, s2, s3, ratio):
        total = s1 + s2 + s3
        r = np.where(total > q, q / total, 1.0)
        return {"ratio": r, "s1": s1 * r, "s2": s2 * r, "s3": s3 * r,
                "q": q - (s1 * r + s2 * r + s3 * r)}

    return defn, ("q", "s1", "s2", "s3", "ratio"), expect, {}


def expression_snapshot_case():
    def defn(a: F, out: F):
        with computation(PARALLEL), interval(...):
            out = bump_other(a + 1.0, a)  # p keeps the value a + 1 had at the call

    def expect(a, out):
        return {"a": a + 10.0, "out": a + 1.0}

    return defn, ("a", "out"), expect, {}


def two_calls_case():
    def defn(a: F, r: F, out: F):
        with computation(PARALLEL), interval(...):
            out = scale(a, r) + scale(a, r)  # each value is taken where its call is

    def expect(a, r, out):
        return {"a": a * r * r, "out": (a * r + 1.0) + (a * r * r + 1.0)}

    return defn, ("a", "r", "out"), expect, {}


def subscript_augmented_case():
    def defn(a: F, out: F):
        with computation(PARALLEL), interval(...):
            out = bump_centre(a)

    def expect(a, out):
        return {"a": a + 2.0, "out": a + 3.0}

    return defn, ("a", "out"), expect, {}


def same_name_twice_case():
    def defn(a: F, out: F):
        with computation(PARALLEL), interval(...):
            out = bump_both(a, a)

    def expect(a, out):
        return {"a": a + 2.0, "out": a + 2.0}

    return defn, ("a", "out"), expect, {}


def column_case():
    """A write-through in a FORWARD sweep is seen by the next level's read."""

    def defn(a: F, r: F, out: F):
        with computation(FORWARD):
            with interval(0, 1):
                out = a
            with interval(1, None):
                out = scale(a, r) + a[0, 0, -1]

    def expect(a, r, out):
        new_a = a.copy()
        new_a[:, :, 1:] = a[:, :, 1:] * r[:, :, 1:]
        new_out = a.copy()
        new_out[:, :, 1:] = new_a[:, :, 1:] + 1.0 + new_a[:, :, :-1]
        return {"a": new_a, "out": new_out}

    return defn, ("a", "r", "out"), expect, {}


CASES = [
    field_case, temporary_case, keyword_case, written_and_returned_case, expression_case,
    shifted_field_case, external_case, plain_assignment_case, branch_case, loop_case,
    nested_case, nested_local_case, nested_expression_case, sink_limiter_case,
    expression_snapshot_case, two_calls_case, subscript_augmented_case, same_name_twice_case,
    column_case,
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=[c.__name__[:-5] for c in CASES])
def test_parameters_are_written_through_as_in_gt4py(case, backend):
    if backend == "cuda":
        require_compiler()
    defn, names, expect, build = case()
    args = _fields(*names, seed=len(names))
    before = {k: v.copy() for k, v in args.items()}
    wanted = {**before, **expect(**{k: v.copy() for k, v in args.items()})}
    _build(defn, backend, **build)(**args)
    for name, value in args.items():  # the arrays not in `wanted` must be left unchanged
        np.testing.assert_allclose(
            value, wanted[name], rtol=1e-13, err_msg=f"{case.__name__}: {name} on {backend}"
        )


def test_a_write_through_to_a_scalar_parameter_is_refused():
    """GT4Py refuses it too (it fails building the stencil)."""

    def defn(out: F, s: float):
        with computation(PARALLEL), interval(...):
            out = scale(s, 2.0)

    with pytest.raises(gtscript.GTScriptSemanticError, match="scalar parameter 's'"):
        gtscript.stencil("numpy", defn)


def test_a_plain_write_to_an_indexed_parameter_is_refused():
    """GT4Py refuses `p[0, 0, 0] = ...` in a function ("Unsupported assignment target")."""

    @gtscript.function
    def set_centre(p):
        p[0, 0, 0] = 2.0
        return p

    def defn(a: F, out: F):
        with computation(PARALLEL), interval(...):
            out = set_centre(a)

    with pytest.raises(gtscript.GTScriptSyntaxError, match="cannot write to its parameter 'p'"):
        gtscript.stencil("numpy", defn)
