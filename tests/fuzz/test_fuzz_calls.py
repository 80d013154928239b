"""Fuzzing the call path: random arguments for two fixed stencils - shapes, dtypes (wrong
ones too), memory layouts (C, Fortran, negative strides, axis permutations, strided views of
bigger buffers whose margins hold a sentinel, broadcast and read-only arrays), origins and
domains (per field, too big, zero, negative, near 2**63, of the wrong length or type) and
aliasing of inputs and outputs.

Every call is judged three ways:
- an independent NumPy model of the rules of docs/calling.md says whether the call is valid
  (every point read or written inside its array, sizes positive, dtypes and dimensions as
  declared, outputs writable, no output sharing memory with an input read at an offset),
  invalid, or either (rules the model does not decide, such as the default domain); a valid
  call must run and give the model's result, an invalid one must raise TypeError or
  ValueError;
- whatever happens, a call that raises leaves every array and every buffer behind a view
  bit-for-bit unchanged, and a call that runs writes nothing outside the compute domain of
  its outputs nor into the margins of any buffer;
- the cpu and numpy backends, called on identical arguments, agree on the outcome: the same
  exception class, or bitwise-equal buffers.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import gtscript
from fuzz_grammar import fuzz_settings
from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval

SENTINEL = -4321.0
#: sizes and indices that wrap 64-bit arithmetic when added to a small one (or do not fit)
HUGE = (2**31, 2**32 + 1, 2**62, 2**63 - 1, 2**63 - 2, 2**63 - 5, 2**63, 2**64 + 2, -(2**63),
        -(2**63) + 1, -(2**62))
WRAP = (2**63 - 1, 2**63 - 2, 2**63 - 3, -(2**63), -(2**63) + 1)


def shift_defn(src: Field[np.float64], dst: Field[np.float64], w: float):
    with computation(PARALLEL), interval(...):
        dst = w * src[1, 0, 0] + src[0, -1, 0] - src[0, 0, 0]


def column_defn(vec: Field[(np.float64, (2,))], top: Field[IJ, np.float64],
                out: Field[np.float32]):
    with computation(FORWARD):
        with interval(0, 1):
            out = vec[0, 0, 0][0] + top
        with interval(1, None):
            out = out[0, 0, -1] * 0.5 + vec[0, 0, 0][1]


@dataclass
class Spec:
    """What the model knows of a stencil: per field its dtype, axes, data-dimension shape,
    extent (per grid axis of the field: (low, high) offsets) and whether it is written."""

    defn: object
    fields: dict  # name -> (dtype, axes, data_shape, extent, written)
    scalars: dict  # name -> value
    reads_output_at_offset: tuple = ()  # (output, input) pairs that may not share memory
    min_k: int = 1  # the fewest K levels the intervals need

    def model(self, arrays, origin, domain):
        """The model's expected outputs (name -> full array after the call), for a call with
        explicit, valid origin and domain."""
        raise NotImplementedError


class ShiftSpec(Spec):
    def model(self, arrays, origins, domain):
        src, dst = np.asarray(arrays["src"]), np.array(arrays["dst"])
        (si, sj, sk), (di, dj, dk) = origins["src"], origins["dst"]
        ni, nj, nk = domain
        w = self.scalars["w"]
        s = lambda a, b: src[si + a:si + a + ni, sj + b:sj + b + nj, sk:sk + nk]  # noqa: E731
        dst[di:di + ni, dj:dj + nj, dk:dk + nk] = w * s(1, 0) + s(0, -1) - s(0, 0)
        return {"dst": dst}


class ColumnSpec(Spec):
    def model(self, arrays, origins, domain):
        vec, top, out = np.asarray(arrays["vec"]), np.asarray(arrays["top"]), np.array(arrays["out"])
        (vi, vj, vk), (ti, tj), (oi, oj, ok) = origins["vec"], origins["top"][:2], origins["out"]
        ni, nj, nk = domain
        v = vec[vi:vi + ni, vj:vj + nj, vk:vk + nk]
        col = out[oi:oi + ni, oj:oj + nj, ok:ok + nk]
        col[:, :, 0] = (v[:, :, 0, 0] + top[ti:ti + ni, tj:tj + nj]).astype(np.float32)
        for k in range(1, nk):  # float32 output: the previous level is read as float32
            col[:, :, k] = (col[:, :, k - 1].astype(np.float64) * 0.5 + v[:, :, k, 1]).astype(np.float32)
        return {"out": out}


SPECS = {
    "shift": ShiftSpec(shift_defn, {
        "src": (np.float64, "IJK", (), ((0, 1), (-1, 0), (0, 0)), False),
        "dst": (np.float64, "IJK", (), ((0, 0), (0, 0), (0, 0)), True)},
        {"w": 0.5}, (("dst", "src"),)),
    "column": ColumnSpec(column_defn, {
        "vec": (np.float64, "IJK", (2,), ((0, 0), (0, 0), (0, 0)), False),
        "top": (np.float64, "IJ", (), ((0, 0), (0, 0)), False),
        # out[0, 0, -1] is read from the second level on: never below the domain
        "out": (np.float32, "IJK", (), ((0, 0), (0, 0), (0, 0)), True)},
        {}, (), min_k=2),
}
STENCILS = {(name, backend): gtscript.stencil(backend=backend, definition=spec.defn)
            for name, spec in SPECS.items() for backend in ("cpu", "numpy")}
AXES = "IJK"


# ----------------------------------------------------------------------------- arguments

@dataclass
class Recipe:
    """How to make one argument array (made twice, identically, for the two backends)."""

    shape: tuple
    dtype: object
    layout: str  # C, F, reversed, permuted, margin, broadcast, readonly
    seed: int
    flips: tuple = ()
    perm: tuple = ()
    steps: tuple = ()


def make(recipe: Recipe, alias_of: np.ndarray | None = None, alias_mode: str = "") -> np.ndarray:
    rng = np.random.default_rng(recipe.seed)
    shape, dtype = recipe.shape, recipe.dtype
    if alias_of is not None:  # a view of another argument's buffer
        base = alias_of
        if alias_mode == "same":
            return base
        if alias_mode == "reversed" and base.ndim >= 3:
            return base[:, :, ::-1]
        if alias_mode == "shifted" and base.ndim >= 3 and base.shape[0] > 1:
            return base[1:]
        return base
    values = rng.uniform(-1.0, 1.0, shape).astype(dtype) if np.dtype(dtype).kind == "f" \
        else rng.integers(-3, 4, shape).astype(dtype)
    if recipe.layout == "C":
        return np.array(values, order="C")
    if recipe.layout == "F":
        return np.array(values, order="F")
    if recipe.layout == "reversed":  # negative strides along some axes
        arr = np.array(values[tuple(slice(None, None, -1) if a in recipe.flips else slice(None)
                                    for a in range(len(shape)))])
        return arr[tuple(slice(None, None, -1) if a in recipe.flips else slice(None)
                         for a in range(len(shape)))]
    if recipe.layout == "permuted":  # memory order of the axes permuted
        perm = recipe.perm
        arr = np.array(np.transpose(values, perm), order="C")
        return np.transpose(arr, np.argsort(perm))
    if recipe.layout == "broadcast":  # zero strides (a read-only view)
        return np.broadcast_to(values[:1], shape)
    if recipe.layout == "readonly":
        arr = np.array(values)
        arr.flags.writeable = False
        return arr
    # a view into a bigger buffer filled with SENTINEL: steps (negative ones too) and margins
    steps = recipe.steps
    big = np.full([n * abs(s) + 3 for n, s in zip(shape, steps)], SENTINEL, dtype=dtype)
    index = tuple(slice(1, 1 + n * s, s) if s > 0 else slice(n * -s, 0, s)
                  for n, s in zip(shape, steps))
    view = big[index]
    assert view.shape == tuple(shape)
    view[...] = values
    return view


def owner(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


@st.composite
def calls(draw):
    """(stencil name, {field: Recipe}, alias, origin, domain, scalars, "valid"/"invalid"/
    "either", why) with the model's verdict."""
    name = draw(st.sampled_from(sorted(SPECS)))
    spec = SPECS[name]
    domain = tuple(draw(st.integers(1, 5)) for _ in range(2)) + (draw(st.integers(spec.min_k, 5)),)
    # a third of the calls are well-formed by construction (the model must find them valid,
    # or undecided where a default applies), a fifth are well-formed but for one size or
    # index at the edge of 64-bit arithmetic, the others carry one or more hostile choices
    scenario = draw(st.sampled_from(["clean"] * 3 + ["wrap", "wrap"] + ["hostile"] * 3))
    hostile = scenario == "hostile"
    odd = lambda n: hostile and draw(st.integers(0, n)) == 0  # noqa: E731
    per_field = draw(st.booleans()) if hostile else True
    common = tuple(draw(st.integers(0, 2)) for _ in range(3))
    origins, recipes, verdicts = {}, {}, []
    for fname, (dtype, axes, data, extent, written) in spec.fields.items():
        lo = [max(0, -e[0]) for e in extent]
        o = [draw(st.integers(l, l + 2)) for l in lo] if per_field else \
            [c for c, a in zip(common, AXES) if a in axes]
        if not per_field:
            o = [common[AXES.index(a)] for a in axes]
        origins[fname] = tuple(o)
        sizes = [AXES.index(a) for a in axes]
        shape = [o[i] + domain[ax] + extent[i][1] + draw(st.integers(0, 1))
                 for i, ax in enumerate(sizes)]
        if odd(6):  # one axis one point too small (or zero)
            axis = draw(st.integers(0, len(shape) - 1))
            shape[axis] = max(0, shape[axis] - draw(st.integers(1, 3)))
        shape = tuple(shape) + data
        dt = dtype if not odd(8) else draw(st.sampled_from(
            [np.float32, np.float64, np.int32, np.int64, np.bool_]))
        layout = draw(st.sampled_from(["C", "F", "reversed", "permuted", "margin", "margin",
                                       "broadcast" if not written else "C",
                                       "readonly" if odd(2) else "F"]))
        if odd(12):  # the wrong number of dimensions
            shape = shape[:-1] if len(shape) > 1 else shape + (2,)
        ndim = len(shape)
        recipes[fname] = Recipe(
            shape, dt, layout, draw(st.integers(0, 2**32 - 1)),
            flips=tuple(a for a in range(ndim) if draw(st.booleans())),
            perm=tuple(draw(st.permutations(range(ndim)))),
            steps=tuple(draw(st.sampled_from([1, 2, -1, -2, 3])) for _ in range(ndim)))
    # origin: explicit per field, one tuple for all, or none; sometimes hostile
    kind = draw(st.sampled_from(["dict", "tuple", "none"] + ["hostile"] * hostile))
    if kind == "dict" or (kind == "tuple" and per_field):
        origin = {f: o for f, o in origins.items()}
        if draw(st.booleans()) and len(origin) > 1:  # one field through "_all_"
            first = next(iter(origin))
            if spec.fields[first][1] == "IJK" and not per_field:
                origin = {"_all_": origin.pop(first), **origin}
    elif kind == "tuple":
        origin = common
    elif kind == "none":
        origin = None
    else:
        axis, huge = draw(st.integers(0, 2)), draw(st.sampled_from(HUGE))
        one_field = next(iter(origins))
        origin = draw(st.sampled_from([
            # one entry huge, the others right: only the overflow stands between the call
            # and memory it must not touch
            tuple(huge if a == axis else c for a, c in enumerate(common)),
            {**origins, one_field: tuple(huge if a == axis else c
                                         for a, c in enumerate(origins[one_field]))},
            tuple(draw(st.sampled_from(HUGE + (0, 1, -1))) for _ in range(3)),
            (draw(st.sampled_from(HUGE)), 0, 0), (0, 0), (0, 0, 0, 0), (0.5, 0, 0), "000",
            {"nosuch": (0, 0, 0)}, {"_all_": (0, -1, 0)}]))
    dkind = draw(st.sampled_from(["given", "given", "given", "none"] + ["hostile"] * hostile))
    if dkind == "given":
        dom = domain
    elif dkind == "none":
        dom = None
    else:
        axis, huge = draw(st.integers(0, 2)), draw(st.sampled_from(HUGE))
        dom = draw(st.sampled_from([
            tuple(huge if a == axis else n for a, n in enumerate(domain)),
            tuple(huge if a == axis else n for a, n in enumerate(domain)),
            tuple(draw(st.sampled_from(HUGE + (0, -1, 1, 3))) for _ in range(3)),
            (domain[0], draw(st.sampled_from(HUGE)), domain[2]), (0, 1, 1), (1, -1, 1),
            (domain[0] + 50, domain[1], domain[2]), (1, 1), (1.0, 1, 1), None]))
    if draw(st.integers(0, 3)) == 0:  # NumPy integers (and bools) count as integers
        wrap = draw(st.sampled_from([np.int64, np.int32, np.intp, np.int16]))
        if isinstance(dom, tuple) and all(type(d) is int and abs(d) < 2**15 for d in dom):
            dom = tuple(wrap(d) for d in dom)
        if isinstance(origin, tuple) and all(type(o) is int and 0 <= o < 2**15 for o in origin):
            origin = tuple(wrap(o) for o in origin)
    if scenario == "wrap":
        # the call as it is but one size or index at the edge of 64-bit arithmetic: only the
        # overflow checks stand between it and memory it must not touch
        wrap = draw(st.sampled_from(WRAP))
        axis = draw(st.integers(0, 2))
        if draw(st.booleans()) or origin is None or dom is None:
            dom = tuple(wrap if a == axis else n for a, n in enumerate(domain))
        elif isinstance(origin, tuple) and len(origin) == 3:
            origin = tuple(wrap if a == axis else o for a, o in enumerate(origin))
        elif isinstance(origin, dict):
            field = draw(st.sampled_from(sorted(origin)))
            o = origin[field]
            if isinstance(o, tuple) and axis < len(o):
                origin = {**origin, field: tuple(wrap if a == axis else v
                                                 for a, v in enumerate(o))}
    alias = draw(st.sampled_from(["none"] * 3 + ["same", "reversed", "shifted"])) if hostile \
        else "none"
    return name, recipes, alias, origin, dom


def build_args(name, recipes, alias):
    spec = SPECS[name]
    arrays = {}
    names = list(spec.fields)
    for fname in names:
        arrays[fname] = make(recipes[fname])
    if alias != "none":
        out = next(f for f in names if spec.fields[f][4])
        src = next(f for f in names if not spec.fields[f][4] and spec.fields[f][1] == "IJK")
        arrays[out] = make(recipes[out], alias_of=arrays[src], alias_mode=alias)
    return arrays


def field_origins(spec, origin, arrays):
    """The model's origin of every field, or None where the model does not decide it."""
    if origin is None or not isinstance(origin, (tuple, dict)):
        return None
    result = {}
    for fname, (_, axes, data, _, _) in spec.fields.items():
        o = origin.get(fname, origin.get("_all_")) if isinstance(origin, dict) else origin
        if o is None or not isinstance(o, tuple):
            return None
        if data and len(o) == len(axes) + len(data) and not any(o[len(axes):]):
            o = o[:len(axes)]  # a field's own origin may end in a zero per data dimension
        if len(o) == 3 and axes != "IJK":
            o = tuple(o[AXES.index(a)] for a in axes)
        if len(o) != len(axes) or not all(isinstance(v, numbers.Integral) for v in o):
            return None
        result[fname] = tuple(int(v) for v in o)
    if isinstance(origin, dict) and set(origin) - set(spec.fields) - {"_all_"}:
        return None
    return result


def verdict(spec, arrays, origin, domain) -> tuple[str, str]:
    """("valid", "") or ("invalid", why) or ("either", why)."""
    for fname, (dtype, axes, data, _, written) in spec.fields.items():
        a = arrays[fname]
        if a.ndim != len(axes) + len(data):
            return "invalid", f"{fname} has {a.ndim} dimensions"
        if a.dtype != np.dtype(dtype):
            return "invalid", f"{fname} has dtype {a.dtype}"
        if a.shape[len(axes):] != data:
            return "invalid", f"{fname} data dimensions {a.shape[len(axes):]}"
        if written and not a.flags.writeable:
            return "invalid", f"{fname} is read-only"
    for out, inp in spec.reads_output_at_offset:
        if np.shares_memory(arrays[out], arrays[inp]):
            a, b = arrays[out], arrays[inp]
            same_view = (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
                         and a.strides == b.strides and a.shape == b.shape)
            if same_view and isinstance(domain, tuple) and domain[:2] == (1, 1):
                # one column: no read at an offset meets the point written, and the call runs
                # where both get the same origin (docs/parallel-model.md, aliases at call time)
                return "either", f"{out} is {inp} on a 1 x 1 domain"
            return "invalid", f"{out} shares memory with {inp}"
    for f in spec.fields:  # an output sharing memory with another argument
        for g in spec.fields:
            a, b = arrays[f], arrays[g]
            if f == g or not spec.fields[f][4] or not np.shares_memory(a, b):
                continue
            same_view = (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
                         and a.strides == b.strides and a.shape == b.shape)
            if not same_view:
                return "invalid", f"{f} overlaps {g} at another position"
            if spec.fields[g][4]:
                return "invalid", f"{f} and {g} are the same output"
    if domain is not None:
        if not (isinstance(domain, tuple) and len(domain) == 3
                and all(isinstance(d, numbers.Integral) for d in domain)):
            return "invalid", f"domain {domain!r}"
        domain = tuple(int(d) for d in domain)
        if min(domain) <= 0:
            return "invalid", f"domain {domain} not positive"
        if domain[2] < spec.min_k:
            return "invalid", f"domain {domain}: the intervals need {spec.min_k} levels"
    origins = field_origins(spec, origin, arrays)
    if origins is None or domain is None:
        return "either", "origin or domain by default or not a valid form"
    for fname, (dtype, axes, data, extent, _) in spec.fields.items():
        for i, a in enumerate(axes):
            o, n, (lo, hi) = origins[fname][i], domain[AXES.index(a)], extent[i]
            if o + lo < 0 or o + n + hi > arrays[fname].shape[i]:
                return "invalid", f"{fname} along {a}: {o}+{n} with extent {lo, hi}"
    if any(a.strides and 0 in a.strides for f, a in arrays.items() if spec.fields[f][4]):
        return "either", "zero stride output"
    return "valid", ""


def snapshot(arrays):
    return {f: (np.array(a, copy=True), np.array(owner(a), copy=True)) for f, a in arrays.items()}


def call(stencil, spec, arrays, origin, domain, exec_info=None):
    kwargs = {} if origin is None else {"origin": origin}
    if domain is not None:
        kwargs["domain"] = domain
    try:
        stencil(**arrays, **spec.scalars, **kwargs, exec_info=exec_info)
        return None
    except Exception as error:  # noqa: BLE001 - judged by the caller
        return error


OUTCOMES: dict = {}


def _seed(name, layouts, origin, domain, alias="none", shape=(6, 6, 3)):
    """A seed-corpus call: every field of stencil `name` as a (shape, layout) recipe."""
    recipes = {}
    for (fname, (dtype, axes, data, _, _)), lay in zip(SPECS[name].fields.items(), layouts):
        grid = tuple(shape[AXES.index(a)] for a in axes) + data
        recipes[fname] = Recipe(grid, dtype, lay, 1, flips=(0,), perm=tuple(range(len(grid)))[::-1],
                                steps=(2, -1) + (1,) * (len(grid) - 2))
    return (name, recipes, alias, origin, domain)


#: the seed corpus of the call fuzzer: calls that once reached memory they must not (sizes
#: and indices near 2**63 wrapping the bounds check) or that the strategy rarely draws
CALL_CORPUS = [
    _seed("shift", ("C", "C"), (1, 1, 1), (2**63 - 1, 2, 1)),
    _seed("shift", ("margin", "margin"), (2**63 - 1, 0, 0), (1, 1, 1)),
    _seed("shift", ("margin", "reversed"), {"src": (0, 2**63 - 1, 0), "dst": (0, 0, 0)},
          (1, 2, 1)),
    _seed("shift", ("C", "C"), (0, 1, 0), (2**62, 2**62, 4)),
    _seed("shift", ("C", "C"), (-(2**63), 1, 0), (1, 1, 1)),
    _seed("column", ("C", "C", "margin"), (0, 0, 0), (1, 1, 2**64 + 2)),
    _seed("column", ("permuted", "reversed", "margin"), {"_all_": (1, 1, 1)}, (3, 2, 2)),
    _seed("shift", ("margin", "C"), (0, 1, 0), (5, 5, 3), alias="shifted"),
    _seed("shift", ("C", "C"), (0, 1, 0), (5, 5, 3), alias="reversed"),
]


def _with_corpus(test):
    for case in CALL_CORPUS:
        test = example(case=case)(test)
    return test


@fuzz_settings(bounded=500)
@_with_corpus
@given(case=calls())
def test_random_calls_run_correctly_or_raise_leaving_every_array_unchanged(case):
    name, recipes, alias, origin, domain = case
    spec = SPECS[name]
    results = {}
    for backend in ("cpu", "numpy"):
        arrays = build_args(name, recipes, alias)
        before = snapshot(arrays)
        info = {}
        error = call(STENCILS[name, backend], spec, arrays, origin, domain, info)
        results[backend] = (arrays, before, error, info)
    arrays, before, error, info = results["cpu"]
    expect, why = verdict(spec, arrays, origin, domain)
    OUTCOMES[expect, error is None] = OUTCOMES.get((expect, error is None), 0) + 1
    what = f"{name} {recipes} alias={alias} origin={origin} domain={domain}: {why}"
    if error is not None:
        assert isinstance(error, (TypeError, ValueError)) and not isinstance(
            error, gtscript.GTScriptSyntaxError), f"{what}: {error!r}"
        assert expect != "valid", f"a valid call was refused: {what}: {error!r}"
        for f, a in arrays.items():  # nothing written, not even inside the domain
            assert a.tobytes() == before[f][0].tobytes(), f"{f} changed by a failed call: {what}"
            assert owner(a).tobytes() == before[f][1].tobytes(), f"{f}'s buffer changed: {what}"
    else:
        assert expect != "invalid", f"an invalid call ran: {what}"
        for f, a in arrays.items():  # margins of every buffer, and the inputs
            buf, old = owner(a), before[f][1]
            if not spec.fields[f][4]:
                if not any(spec.fields[o][4] and np.shares_memory(arrays[o], a) for o in arrays):
                    assert buf.tobytes() == old.tobytes(), f"input {f} changed: {what}"
                continue
            flat = np.arange(buf.size).reshape(buf.shape)
            mine = np.zeros(buf.size, bool)
            mine[view_like(flat, buf, a).ravel()] = True
            outside = ~mine.reshape(buf.shape) & ~((buf == old) | (np.isnan(buf) & np.isnan(old)))
            assert not outside.any(), f"{f}: the buffer around the view was written: {what}"
        if expect == "either":  # defaults applied: the origin and domain the call used
            # (exec_info) must be ones the model finds valid, and give its result
            origin, domain = info["origin"], info["domain"]
            used, why = verdict(spec, arrays, origin, domain)
            assert used == "valid", f"the call ran on origin={origin} domain={domain}: {why}: {what}"
            expect = "valid"
        if expect == "valid":
            origins = field_origins(spec, origin, arrays)
            want = spec.model({f: before[f][0] for f in before}, origins, domain)
            for f, w in want.items():
                np.testing.assert_allclose(arrays[f], w, rtol=1e-6 if w.dtype == np.float32
                                           else 1e-14, err_msg=what)
    # the two backends agree
    ref_arrays, _, ref_error, _ = results["numpy"]
    if error is None or ref_error is None:
        assert error is None and ref_error is None, f"cpu: {error!r}, numpy: {ref_error!r}: {what}"
        for f in arrays:
            x, y = np.asarray(arrays[f]), np.asarray(ref_arrays[f])
            same = (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y
            assert same.all(), f"{f} differs between cpu and numpy: {what}"
    else:
        assert type(error) is type(ref_error), f"cpu: {error!r}, numpy: {ref_error!r}: {what}"


def view_like(flat, buf, a):
    """The elements of `flat` (an index array shaped as `buf`) that `a`, a view of `buf`,
    covers."""
    offset = (a.__array_interface__["data"][0] - buf.__array_interface__["data"][0]) // a.itemsize
    strides = tuple(s // a.itemsize * flat.itemsize for s in a.strides)
    base = flat.reshape(-1)[offset:] if offset >= 0 else None
    return np.lib.stride_tricks.as_strided(base, a.shape, strides) if a.size else flat.ravel()[:0]


def test_the_bounded_run_reaches_every_verdict():
    """The argument strategy is worth its time only if valid, invalid and undecided calls
    all occur (runs after the fuzz test in file order)."""
    if OUTCOMES:
        print("fuzz calls (verdict, ran):", OUTCOMES)
        kinds = {k for k, _ in OUTCOMES}
        assert kinds == {"valid", "invalid", "either"}, OUTCOMES
        assert OUTCOMES.get(("valid", True), 0) >= 0.2 * sum(OUTCOMES.values()), OUTCOMES
