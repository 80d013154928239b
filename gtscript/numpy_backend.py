"""The numpy reference backend: the oracle every compiled backend is tested against.

It executes the analysed IR that the C core exports (``Module.ir_tree()``, documented in
docs/architecture.md) literally, as the parallel-model seed's "behaves like" snippets read:

* computations run in order, intervals in the order of the iteration policy;
* a PARALLEL statement is one NumPy whole-array statement over its extended domain and the
  interval's K range;
* FORWARD/BACKWARD run level by level, each statement over its extended I-J plane;
* a guarded statement (a branch of a field condition) writes only where its mask holds;
* a ``while`` repeats its body where the condition still holds until no point does.

Operand types are explicit in the tree (the C core inserted every cast), so each operation
here is a single NumPy call on arrays of the result dtype.
"""

from __future__ import annotations

import math

import numpy as np

from ._deep import nesting_depth, run_deep

_DTYPES = {
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "float32": np.float32,
    "float64": np.float64,
}

_BINOPS = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": np.floor_divide,
    "%": np.remainder,
    "**": np.power,
}

_CMPS = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


def _elementwise(fn, on_error):
    """A float ufunc-like of a scalar math function; ``on_error(x)`` answers where ``fn``
    raises (poles and overflow, where C's libm returns inf or nan)."""

    def scalar(x):
        try:
            return fn(x)
        except (ValueError, OverflowError):
            return on_error(x)

    vectorised = np.frompyfunc(scalar, 1, 1)

    def call(a):
        a = np.asarray(a)
        return vectorised(a.astype(np.float64)).astype(a.dtype)

    return call


def _gamma_error(x):
    """tgamma at a pole or beyond the float range: +-inf at zeros, nan at negative
    integers and -inf, inf for large arguments."""
    if x == 0.0:
        return math.copysign(math.inf, x)
    if math.isnan(x) or x < 0.0:
        return math.nan
    return math.inf


def _round_away_from_zero(a):
    """Nearest integer, halves away from zero (C's round), exactly: x - trunc(x) is exact."""
    t = np.trunc(a)
    return np.where(np.abs(a - t) >= 0.5, t + np.sign(a), t).astype(np.asarray(a).dtype)


_CALLS = {
    "abs": np.abs,
    "min": np.minimum,
    "max": np.maximum,
    "sqrt": np.sqrt,
    "exp": np.exp,
    "log": np.log,
    "log10": np.log10,
    "pow": np.power,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arcsin": np.arcsin,
    "arccos": np.arccos,
    "arctan": np.arctan,
    "arctan2": np.arctan2,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "isfinite": np.isfinite,
    "isinf": np.isinf,
    "isnan": np.isnan,
    "arcsinh": np.arcsinh,
    "arccosh": np.arccosh,
    "arctanh": np.arctanh,
    "gamma": _elementwise(math.gamma, _gamma_error),
    "erf": _elementwise(math.erf, lambda x: math.nan),
    "erfc": _elementwise(math.erfc, lambda x: math.nan),
    "cbrt": np.cbrt,
    "round": np.round,  # halves to even, as np.round (GT4Py's numpy backend)
    "round_away_from_zero": _round_away_from_zero,
    # a run-time data index: its value (the call checked its range before running)
    "__data_index": lambda index, size: index,
    # an IJ field's level as an interval bound: its value (the call checked it is in [0, nk])
    "__level_bound": lambda level: level,
}


class _Field:
    """An array seen through the stencil's index space: index (0, 0, 0) is the origin."""

    __slots__ = ("array", "origin", "axes", "ndata")

    def __init__(self, array, origin, axes, ndata=0):
        self.array = array
        self.origin = origin
        self.axes = axes
        self.ndata = ndata

    def view(self, box, off, data_index=()):
        """The block box = ((i0, i1), (j0, j1), (k0, k1)) shifted by off, shaped 3-D."""
        index = []
        for axis, name in enumerate("IJK"):
            if name in self.axes:
                lo, hi = box[axis]
                start = self.origin[axis] + lo + off[axis]
                if start < 0 or start + hi - lo > self.array.shape[self.axes.index(name)]:
                    # the call's extent check should have refused this: never wrap around
                    raise IndexError(f"read of {name} indices {start}..{start + hi - lo - 1} "
                                     "outside the array")
                index.append(slice(start, start + hi - lo))
        block = self.array[tuple(index) + tuple(data_index)]
        # Broadcast lower-dimensional fields over the axes they lack.
        shape = [(box[a][1] - box[a][0]) if n in self.axes else 1 for a, n in enumerate("IJK")]
        return block.reshape(shape)

    def gather(self, box, off, kindex, data_index=(), absolute=False):
        """Variable K offset: kindex (3-D, broadcastable) added to each point's own K; or,
        with absolute, the K index itself (``f.at(K=kindex)``, 0 the domain's first level)."""
        (i0, i1), (j0, j1), (k0, k1) = box
        ii = np.arange(i0, i1)[:, None, None] + off[0] + self.origin[0]
        jj = np.arange(j0, j1)[None, :, None] + off[1] + self.origin[1]
        kk = np.arange(k0, k1)[None, None, :] * (not absolute) + off[2] + self.origin[2] + kindex
        ii, jj, kk = np.broadcast_arrays(ii, jj, kk)
        if np.any(kk < 0) or np.any(kk >= self.array.shape[self.axes.index("K")]):
            raise IndexError("variable K offset reads outside the array")
        index = [x for x, n in zip((ii, jj, kk), "IJK") if n in self.axes]
        return self.array[tuple(index) + tuple(data_index)]


def _scatter(self, box, kindex, data_index, value, where):
    """Write ``value`` at each point's own K plus ``kindex`` (where ``where`` holds)."""
    (i0, i1), (j0, j1), (k0, k1) = box
    ii = np.arange(i0, i1)[:, None, None] + self.origin[0]
    jj = np.arange(j0, j1)[None, :, None] + self.origin[1]
    kk = np.arange(k0, k1)[None, None, :] + self.origin[2] + kindex
    ii, jj, kk = np.broadcast_arrays(ii, jj, kk)
    value = np.broadcast_to(value, ii.shape)
    if where is not None:
        keep = np.broadcast_to(where, ii.shape)
        ii, jj, kk, value = ii[keep], jj[keep], kk[keep], value[keep]
    self.array[(ii, jj, kk) + tuple(data_index)] = value


_Field.scatter = _scatter  # type: ignore[attr-defined]  # kept next to the code it shares


#: The name of a _CheckedLevelError from an interval bound is (_BOUND, source, column, level).
_BOUND = "interval bound"


class _CheckedLevelError(Exception):
    """A K level computed from values the stencil writes fell outside the levels allowed: a
    read's (``name``: the field read) outside its array, a write's (``name`` None) outside the
    domain."""

    def __init__(self, line, name):
        super().__init__(line)
        self.line = line
        self.name = name


class _Executor:
    def __init__(self, tree, fields, scalars, domain, anchors):
        self.tree = tree
        self.domain = domain
        self.anchors = anchors
        self.scalars = scalars
        # checked K levels (computed from values the stencil writes): the points of the
        # expression being evaluated where one left the levels allowed, and the line (and
        # the field, for a read) of the first
        self.bad = None
        self.bad_line = 0
        self.bad_name = None
        # checked interval bounds of the expression: (bad, line, source, box, level) each
        self.bad_bounds = []
        self.fields = {}
        kinds = {p[1]: p for p in tree["params"] if p[0] == "field"}
        for name, (array, origin) in fields.items():
            _, _, _, axes, data_dims = kinds[name]
            self.fields[name] = _Field(array, origin, axes, len(data_dims))
        ni, nj, nk = domain
        for name, dtype, ext, axes, data_dims in tree["temporaries"]:
            (ilo, ihi), (jlo, jhi), (klo, khi) = ext
            lo = (-min(ilo, 0), -min(jlo, 0), -min(klo, 0))
            shape = (ni + lo[0] + max(ihi, 0), nj + lo[1] + max(jhi, 0), nk + lo[2] + max(khi, 0))
            if axes == "IJ":  # one plane, kept from level to level
                shape, lo = shape[:2], lo[:2] + (0,)
            array = np.zeros(shape + tuple(data_dims), _DTYPES[dtype])
            self.fields[name] = _Field(array, lo, axes, len(data_dims))

    # -- expressions ------------------------------------------------------------------
    def expr(self, e, box):
        tag, dtype = e[0], _DTYPES[e[1]]
        if tag == "const":
            return np.asarray(e[2], dtype=dtype)
        if tag == "field":
            return self.fields[e[2]].view(box, e[3], e[4])
        if tag in ("vfield", "afield"):
            kindex = self.expr(e[4], box)
            if len(e) > 6 and e[6]:
                kindex = self.checked_level(box, e[3], kindex, tag == "afield", e[6], e[2])
            return self.fields[e[2]].gather(box, e[3], kindex, e[5], absolute=tag == "afield")
        if tag == "scalar":
            return np.asarray(self.scalars[e[2]], dtype=dtype)
        if tag == "unop":
            a = self.expr(e[3], box)
            if e[2] == "not":
                return np.logical_not(a)
            return np.negative(a) if e[2] == "-" else a
        if tag == "binop":
            a, b = self.expr(e[3], box), self.expr(e[4], box)
            if e[2] == "**" and np.issubdtype(dtype, np.integer):
                # NumPy refuses negative integer powers; the compiled backends give 0.
                b = np.asarray(b)
                return np.where(b < 0, dtype(0), np.power(a, np.maximum(b, 0))).astype(dtype)
            return np.asarray(_BINOPS[e[2]](a, b)).astype(dtype, copy=False)
        if tag == "cmp":
            return _CMPS[e[2]](self.expr(e[3], box), self.expr(e[4], box))
        if tag == "boolop":
            f = np.logical_and if e[2] == "and" else np.logical_or
            return f(self.expr(e[3], box), self.expr(e[4], box))
        if tag == "ternary":
            c = self.expr(e[2], box)
            return np.where(c, self.expr(e[3], box), self.expr(e[4], box)).astype(dtype)
        if tag == "call":
            args = [self.expr(a, box) for a in e[3]]
            if len(e) > 4:  # a level bound computed from values the stencil writes
                self.checked_bound(box, args[0], e[4], e[5])
            return np.asarray(_CALLS[e[2]](*args)).astype(dtype, copy=False)
        if tag == "cast":
            return np.asarray(self.expr(e[2], box)).astype(dtype)
        if tag == "kindex":  # GT4Py's `K`: the level, 0 the domain's first
            (_, _), (_, _), (k0, k1) = box
            return np.arange(k0, k1, dtype=dtype)[None, None, :]
        raise RuntimeError(f"numpy backend: unknown expression {tag!r}")

    def checked_level(self, box, off, kindex, absolute, line, name=None):
        """A level computed from values the stencil writes, as the compiled kernels treat it:
        a read of field ``name`` may read any level its array holds, a write (``name`` None)
        only the domain's levels. Outside them the point is noted (an error once the point is
        known to execute) and accesses its own level instead."""
        k = np.arange(box[2][0], box[2][1])[None, None, :]
        shape = tuple(hi - lo for lo, hi in box)
        level = np.broadcast_to(kindex if absolute else k + off[2] + kindex, shape)
        lo, hi = self.levels(name)
        bad = (level < lo) | (level >= hi)
        if not bad.any():
            return kindex
        self.bad = bad if self.bad is None else self.bad | bad
        if not self.bad_line:
            self.bad_line, self.bad_name = line, name
        own = np.broadcast_to(k if absolute else -off[2] + 0 * k, shape)
        return np.where(bad, own, np.broadcast_to(kindex, shape))

    def checked_bound(self, box, level, line, source):
        """An interval bound computed from values the stencil writes (``source``), as the
        compiled kernels check it: a level of the domain, 0 <= level <= nk (an error once the
        point is known to execute, as a checked level's)."""
        shape = tuple(hi - lo for lo, hi in box)
        level = np.broadcast_to(level, shape)
        bad = (level < 0) | (level > self.domain[2])
        if not bad.any():
            return
        self.bad = bad if self.bad is None else self.bad | bad
        self.bad_bounds.append((bad, line, source, box, level))
        if not self.bad_line:
            self.bad_line, self.bad_name = line, (_BOUND,)

    def levels(self, name):
        """The levels [lo, hi) a checked access may reach, counted from the domain's first:
        for a read of field ``name`` those its array holds, for a write (None) the domain's."""
        if name is None:
            return 0, self.domain[2]
        f = self.fields[name]
        origin = f.origin[2]
        return -origin, f.array.shape[f.axes.index("K")] - origin

    def check_levels(self, where):
        """Raises when a checked level left the levels allowed at a point in ``where`` (None:
        all)."""
        bad, self.bad = self.bad, None
        bounds, self.bad_bounds = self.bad_bounds, []
        if bad is not None and (bad if where is None else np.logical_and(bad, where)).any():
            if isinstance(self.bad_name, tuple):  # a bound: the first point where one failed
                for bad, line, source, box, level in bounds:
                    at = np.argwhere(bad if where is None else np.logical_and(bad, where))
                    if len(at):
                        i, j, k = at[0]
                        column = (box[0][0] + int(i), box[1][0] + int(j))
                        raise _CheckedLevelError(
                            line, (_BOUND, source, column, int(level[i, j, k])))
            raise _CheckedLevelError(self.bad_line, self.bad_name)
        self.bad_line, self.bad_name = 0, None

    # -- statements -------------------------------------------------------------------
    def boxes(self, stmt_extent, regions, krange):
        (ilo, ihi), (jlo, jhi) = stmt_extent
        ni, nj, _ = self.domain
        full = [[ilo, ni + ihi], [jlo, nj + jhi]]
        anchors = self.anchors  # a bound's offset is from the grid's first point or its end
        if regions is None:
            yield ((full[0][0], full[0][1]), (full[1][0], full[1][1]), krange)
            return
        for region in regions:
            b = [list(full[0]), list(full[1])]
            for axis in (0, 1):
                lo, hi = region[2 * axis], region[2 * axis + 1]
                if lo is not None:
                    b[axis][0] = max(b[axis][0], anchors[2 * axis + lo[0]] + lo[1])
                if hi is not None:
                    b[axis][1] = min(b[axis][1], anchors[2 * axis + hi[0]] + hi[1])
            if b[0][0] < b[0][1] and b[1][0] < b[1][1]:
                yield ((b[0][0], b[0][1]), (b[1][0], b[1][1]), krange)

    def assign(self, s, krange, mask=None):
        _, _line, target, koff, data_index, extent, guard, regions, value = s
        for box in self.boxes(extent, regions, krange):
            self.assign_box(box, target, koff, data_index, guard, value, mask)

    def assign_box(self, box, target, koff, data_index, guard, value, mask):
        field = self.fields[target]
        where = None if guard is None else self.expr(guard, box)
        self.check_levels(mask)  # the guard is evaluated wherever the statement runs
        v = self.expr(value, box)
        if mask is not None:
            where = mask if where is None else np.logical_and(where, mask)
        if not isinstance(koff, int):  # a variable K offset (levels checked by the call)
            if koff[0] == "kchecked":  # computed from values the stencil writes: checked here
                level = self.checked_level(box, (0, 0, 0), self.expr(koff[2], box), False, koff[1])
            else:
                level = self.expr(koff, box)
            self.check_levels(where)  # the value and the level only where the guard holds
            field.scatter(box, level, data_index, v, where)
            return
        self.check_levels(where)  # the value only where the guard holds
        dest = field.view(box, (0, 0, koff), data_index)
        if where is None:
            dest[...] = v
        else:
            dest[...] = np.where(where, v, dest)

    def run_while(self, s, krange):
        _, _line, cond, guard, regions, extent, body = s
        for box in self.boxes(extent, regions, krange):
            active = None  # points whose loop still runs: the condition is evaluated there
            while True:
                m = self.expr(cond, box)
                if guard is not None:
                    m = np.logical_and(m, self.expr(guard, box))
                self.check_levels(active)
                m = np.broadcast_to(m, tuple(hi - lo for lo, hi in box))
                active = m
                if not m.any():
                    break
                for inner in body:
                    self.stmt_in_box(inner, box, m)

    def stmt_in_box(self, s, box, mask):
        if s[0] == "assign":
            _, _line, target, koff, data_index, _extent, guard, _regions, value = s
            self.assign_box(box, target, koff, data_index, guard, value, mask)
        else:  # a nested while: iterate where both conditions hold
            _, _line, cond, guard, _regions, _extent, body = s
            active = mask
            while True:
                m = np.logical_and(mask, self.expr(cond, box))
                if guard is not None:
                    m = np.logical_and(m, self.expr(guard, box))
                self.check_levels(active)
                active = m
                if not m.any():
                    break
                for inner in body:
                    self.stmt_in_box(inner, box, m)

    def stmt(self, s, krange):
        if s[0] == "assign":
            self.assign(s, krange)
        else:
            self.run_while(s, krange)

    def level(self, bound, nk):
        """The K index of an interval bound: (level, offset), or (0, offset, name) for a
        run-time bound, the integer scalar ``name`` (checked by the call) plus offset."""
        k = bound[1] if bound[0] == 0 else nk + bound[1]
        return k + int(self.scalars[bound[2]]) if len(bound) == 3 else k

    def run(self):
        nk = self.domain[2]
        for policy, intervals in self.tree["computations"]:
            for start, end, body in intervals:
                k0, k1 = self.level(start, nk), self.level(end, nk)
                if k0 >= k1:
                    continue
                if policy == "PARALLEL":
                    for s in body:
                        self.stmt(s, (k0, k1))
                    continue
                levels = range(k0, k1) if policy == "FORWARD" else range(k1 - 1, k0 - 1, -1)
                for k in levels:
                    for s in body:
                        self.stmt(s, (k, k + 1))


def execute(tree, fields, scalars, domain, anchors=None):
    """Runs the analysed IR `tree` on bound arguments (see Module.bind). ``anchors``: where
    region bounds are anchored along I and J (the grid's first point and one past its last,
    in the domain's index space); None: the domain's own edges."""
    if anchors is None:
        anchors = (0, domain[0], 0, domain[1])
    if 0 in domain:
        return
    saved = {}
    if tree.get("checked_k"):  # a checked level may fail mid-run: keep the arrays to restore
        saved = {name: np.array(array, copy=True) for name, (array, _) in fields.items()}
    try:
        if nesting_depth(tree, _DEEP_TREE) >= _DEEP_TREE:
            run_deep(_execute, tree, fields, scalars, domain, anchors)  # a 1,000-term expression recurses
        else:
            _execute(tree, fields, scalars, domain, anchors)
    except _CheckedLevelError as err:
        for name, copy in saved.items():
            fields[name][0][...] = copy
        undone = "the call was undone (every array it wrote was restored)"
        if isinstance(err.name, tuple):  # an interval bound (checked_bound)
            _, source, (i, j), level = err.name
            what = "field" if any(p[1] == source for p in tree["params"]) else "temporary"
            raise ValueError(
                f"the interval bound on line {err.line}, computed from the {what} '{source}' "
                f"the stencil writes, is level {level} in column ({i}, {j}) of the domain, "
                f"outside the domain's levels [0, {domain[2]}]: the interval would silently "
                f"run on fewer levels than asked for; {undone}"
            ) from None
        if err.name is None:
            raise ValueError(
                f"the K level written on line {err.line}, computed from values the stencil "
                f"writes, is outside the compute domain's {domain[2]} levels; {undone}"
            ) from None
        array, origin = fields[err.name]
        n, lo = array.shape[_k_axis(tree, err.name)], -origin[2]
        raise ValueError(
            f"argument '{err.name}': the K level read on line {err.line}, computed from values "
            f"the stencil writes, is outside the array's {n} levels (levels {lo} to {lo + n - 1} "
            f"counted from the compute domain's first); {undone}"
        ) from None


def _k_axis(tree, name):
    """The position of the K axis among the dimensions of field ``name``'s array."""
    axes = next(p[3] for p in tree["params"] if p[0] == "field" and p[1] == name)
    return axes.index("K")


#: The nesting of the analysed IR beyond which the executor's recursion runs on a deep stack.
_DEEP_TREE = 150


def _execute(tree, fields, scalars, domain, anchors):
    with np.errstate(all="ignore"):  # per thread: set where the executor runs
        _Executor(tree, fields, scalars, domain, anchors).run()
