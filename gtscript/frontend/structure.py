"""The structure of a stencil: computations, intervals and horizontal regions."""

from __future__ import annotations

import ast

import numpy as np

from .. import lang
from ..errors import (
    GTScriptDefinitionError,
    GTScriptSemanticError,
    GTScriptSyntaxError,
)
from .externals import _is_docstring
from .scope import _Scope
from .syntax import _POLICIES, _construct_name, _int_value, _is_call_to
from .vectors import unroll_vectors


_INT_DTYPES = ("int8", "int16", "int32", "int64")


class _Structure:
    """The translator's methods for the structure of a stencil: computations, intervals and horizontal regions."""

    # ---------------------------------------------------------------- stencil structure

    def stencil(self) -> list[tuple]:
        """The ``[computation, ...]`` body of the stencil."""
        scope = self.stencil_scope()
        computations = []
        declared: list[tuple] = []
        self.temp_data_dims: dict[str, tuple] = {}
        for stmt in self.source.node.body:
            if _is_docstring(stmt) or isinstance(stmt, (ast.ImportFrom, ast.Pass)):
                continue  # externals were collected by stencil_scope
            if isinstance(stmt, ast.AnnAssign):
                declared.append(self.top_level_declaration(scope, stmt))
            elif isinstance(stmt, ast.Expr) and _is_call_to(stmt.value, "compile_assert"):
                self.compile_assert(scope, stmt.value)
            elif isinstance(stmt, ast.With):
                computations.append(self.computation(scope, stmt))
            else:
                hint = (
                    "`return` is not allowed in a stencil: write the results to fields"
                    if isinstance(stmt, ast.Return)
                    else "only `with computation(...), interval(...):` blocks (and "
                    "`from __externals__ import ...`) may appear at the top level of a stencil"
                )
                raise scope.error(GTScriptSyntaxError, hint, stmt)
        if not computations:
            raise scope.error(
                GTScriptDefinitionError,
                f"stencil {self.source.name!r} has no `with computation(...)` block",
                self.source.node,
            )
        body = self.with_declarations(declared, computations)
        return unroll_vectors(body, self.source, self.data_dims_of)

    def data_dims_of(self, name: str) -> tuple:
        """The data dimensions of field parameter or declared temporary ``name``."""
        param = self.params.get(name)
        if param is not None:
            return tuple(param[4]) if param[0] == "field" else ()
        return self.temp_data_dims.get(name, ())

    def top_level_declaration(self, scope: _Scope, node: ast.AnnAssign) -> tuple:
        """``tmp: Field[float]`` or ``tmp: Field[float] = 0.0`` before the computations (as
        GT4Py): an IJK temporary, typed, optionally initialised with a constant."""
        if not isinstance(node.target, ast.Name):
            raise scope.error(
                GTScriptSyntaxError, "only a plain name can be declared: `name: dtype`", node
            )
        name = node.target.id
        if name in self.params:
            raise scope.error(
                GTScriptSyntaxError, f"{name!r} is a parameter: it cannot be declared", node
            )
        dtype, axes, data_dims = self.declared_type(scope, node.annotation, data_dims=True)
        if axes != "IJK":
            raise scope.error(
                GTScriptSyntaxError,
                f"a temporary declared before the computations is an IJK field, not {axes}: "
                f"declare `{name}: Field[IJ, ...] = ...` inside a computation instead",
                node.annotation,
            )
        value = None
        if node.value is not None:
            value = self.compile_time_value(scope, node.value, "the initial value")
            if isinstance(value, np.generic):
                value = value.item()
            if not isinstance(value, (bool, int, float)):
                raise scope.error(
                    GTScriptSyntaxError,
                    f"the initial value of {name!r} must be a constant number",
                    node.value,
                )
            value = ("const", *scope.position(node.value), value)
        self.temp_data_dims[name] = data_dims
        return ("decl", *scope.position(node), name, dtype, value, axes, data_dims)

    @staticmethod
    def with_declarations(declared: list[tuple], computations: list[tuple]) -> list[tuple]:
        """Top-level declarations as GT4Py reads them: those with an initial value are
        assigned by a first PARALLEL computation over every level; the others only type
        their temporary, at the start of the first computation."""
        if not declared:
            return computations
        initialised = [d for d in declared if d[5] is not None]
        typed_only = [d for d in declared if d[5] is None]
        if initialised:
            line, col = initialised[0][1], initialised[0][2]
            stmts = []
            for d in initialised:
                if d[7]:  # every element: the assignment of a scalar to a vector (vectors.py)
                    stmts.append((*d[:5], None, *d[6:]))
                    stmts.append(("assign", *d[1:3], ("name", *d[1:3], d[3]), d[5]))
                else:
                    stmts.append(d)
            body = ("interval", line, col, (0, 0), (1, 0), stmts)
            computations = [("computation", line, col, "PARALLEL", [body]), *computations]
        if typed_only:
            first = computations[0]
            iv = first[4][0]
            iv = (*iv[:5], typed_only + list(iv[5]))
            computations[0] = (*first[:4], [iv, *first[4][1:]])
        return computations

    def _with_calls(self, scope: _Scope, node: ast.With) -> list[ast.Call]:
        """The constructs called by a with-statement (``as`` is not allowed)."""
        calls = []
        for item in node.items:
            if item.optional_vars is not None:
                raise scope.error(
                    GTScriptSyntaxError,
                    "`with ... as name` is not part of GTScript",
                    item.optional_vars,
                )
            if not isinstance(item.context_expr, ast.Call):
                raise scope.error(
                    GTScriptSyntaxError,
                    "expected computation(...), interval(...) or horizontal(...) here",
                    item.context_expr,
                )
            calls.append(item.context_expr)
        return calls

    def computation(self, scope: _Scope, node: ast.With) -> tuple:
        """``with computation(P), interval(...):`` or ``with computation(P):`` containing
        ``with interval(...):`` blocks."""
        calls = self._with_calls(scope, node)
        names = [_construct_name(call) for call in calls]
        if len(names) == 2 and set(names) == {"computation", "interval"}:
            comp_call = calls[names.index("computation")]
            intervals = [self.interval(scope, calls[names.index("interval")], node.body)]
        elif names == ["computation"]:
            comp_call = calls[0]
            intervals = self._nested_intervals(scope, node.body, ast.unparse(comp_call))
        elif len(names) == 3 and set(names) == {"computation", "interval", "horizontal"}:
            # GT4Py's one-line `with computation(P), interval(...), horizontal(region[...]):`
            comp_call = calls[names.index("computation")]
            interval_call = calls[names.index("interval")]
            start, end = self.interval_bounds(scope, interval_call)
            region: list[tuple] = []
            self.horizontal_region(scope, calls[names.index("horizontal")], node, region)
            intervals = [("interval", *scope.position(interval_call), start, end, region)]
        else:
            raise scope.error(
                GTScriptSyntaxError,
                "expected `with computation(PARALLEL|FORWARD|BACKWARD), interval(...):` (with "
                "an optional `, horizontal(region[...])`) or `with computation(...):` holding "
                "`with interval(...):` blocks",
                node,
            )
        policy = self.policy(scope, comp_call)
        return ("computation", *scope.position(comp_call), policy, intervals)

    def _nested_intervals(self, scope: _Scope, body: list[ast.stmt],
                          computation: str = "computation(PARALLEL)") -> list[tuple]:
        """The ``with interval(...):`` blocks of ``with computation(...):``; ``computation``
        is its call as written, for the fix of a forgotten interval."""
        fix = (f"give each statement its interval: `with {computation}, interval(...):`, or "
               f"`with interval(...):` blocks inside the computation")
        intervals = []
        for stmt in body:
            if _is_docstring(stmt) or isinstance(stmt, ast.Pass):
                continue
            if isinstance(stmt, ast.Expr) and _is_call_to(stmt.value, "compile_assert"):
                self.compile_assert(scope, stmt.value)
                continue
            calls = self._with_calls(scope, stmt) if isinstance(stmt, ast.With) else []
            if len(calls) != 1 or _construct_name(calls[0]) != "interval":
                raise scope.error(
                    GTScriptSyntaxError,
                    "a `with computation(...):` block may only contain `with interval(...):` "
                    f"blocks: {fix}",
                    stmt,
                )
            intervals.append(self.interval(scope, calls[0], stmt.body))
        if not intervals:
            raise scope.error(GTScriptSyntaxError, f"computation without an interval: {fix}",
                              body[0])
        return intervals

    def policy(self, scope: _Scope, call: ast.Call) -> str:
        """The iteration policy named by ``computation(POLICY)``."""
        if len(call.args) != 1 or call.keywords:
            raise scope.error(
                GTScriptSyntaxError, "computation takes one of PARALLEL, FORWARD, BACKWARD", call
            )
        arg = call.args[0]
        name = _construct_name(arg) if isinstance(arg, (ast.Name, ast.Attribute)) else None
        if isinstance(arg, ast.Name):  # an alias, e.g. an external holding a policy
            kind, value = self.resolve_name(scope, arg.id)
            if kind in ("external", "global") and isinstance(value, lang.IterationPolicy):
                name = value.value
        if name not in _POLICIES:
            raise scope.error(
                GTScriptSyntaxError,
                "the iteration policy must be PARALLEL, FORWARD or BACKWARD",
                arg,
            )
        return name

    def interval(self, scope: _Scope, call: ast.Call, body: list[ast.stmt]) -> tuple:
        """``("interval", line, col, start, end, stmts)``. A bound given by an IJ field (GT4Py:
        per column, ``interval(0, top)`` is levels ``[0, top[i, j])``) becomes the domain's
        end on its side, and the statements are guarded by the level index ``K`` compared
        with the field: no new node, so every backend runs it as the conditional it is."""
        start, end = self.interval_bounds(scope, call)
        stmts = self.statements(scope, body)
        pos = scope.position(call)
        guards = []
        for bound, is_end in ((start, False), (end, True)):
            if len(bound) == 4 and bound[3] == "field":
                level = ("binop", *pos, "+", ("name", *pos, bound[2]), ("const", *pos, bound[1]))
                # the call checks the level is one of the domain's (0 <= level <= nk) before
                # anything runs, the kernel where it evaluates a level computed from values
                # the stencil writes: a column is never silently cut at the domain's edge
                level = ("call", *pos, "__level_bound", [level])
                guards.append(("cmp", *pos, "<" if is_end else ">=", ("kindex", *pos), level))
        if guards:
            start = (0, 0) if len(start) == 4 else start
            end = (1, 0) if len(end) == 4 else end
            cond = guards[0] if len(guards) == 1 else ("boolop", *pos, "and", guards)
            stmts = [("if", *pos, cond, stmts, [])]
        return ("interval", *pos, start, end, stmts)

    def interval_bounds(self, scope: _Scope, call: ast.Call) -> tuple[tuple, tuple]:
        """The (level, offset) bounds of ``interval(...)`` / ``interval(start, end)``:
        non-negative ints count from the bottom (level 0), negative ones from the top
        (level 1), None is the end."""
        args = list(call.args)
        for kw in call.keywords:
            if kw.arg not in ("start", "end"):
                raise scope.error(GTScriptSyntaxError, "interval takes start and end", kw)
            args.append(kw.value)
        if len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value is Ellipsis:
            return (0, 0), (1, 0)
        if len(args) != 2:
            raise scope.error(
                GTScriptSyntaxError,
                "expected interval(...) or interval(start, end), e.g. interval(1, -1)",
                call,
            )
        bounds = []
        for arg, is_end in zip(args, (False, True)):
            runtime = self.runtime_interval_bound(scope, arg)
            if runtime is not None:
                bounds.append(runtime)
                continue
            value = self.compile_time_value(scope, arg, "an interval bound", fallback={"K": lang.K})
            if value is None:
                bounds.append((1, 0) if is_end else (0, 0))
                continue
            if isinstance(value, lang.AxisIndex) and value.axis == "K":
                bounds.append((value.level, value.offset))  # K[0] + 1, K[-1], ...
                continue
            offset = _int_value(value)
            if offset is None:
                raise scope.error(
                    GTScriptSyntaxError,
                    "interval bounds must be integers, None or K[n] (+/- an integer)",
                    arg,
                )
            bounds.append((0, offset) if offset >= 0 else (1, offset))
        start, end = bounds
        if len(start) < 4 and len(end) < 4 and start[0] == end[0] and start[2:] == end[2:] \
                and start[1] >= end[1]:
            raise scope.error(
                GTScriptSemanticError,
                f"empty interval: `{ast.unparse(call)}` contains no level",
                call,
            )
        return start, end

    def runtime_interval_bound(self, scope: _Scope, node: ast.expr) -> tuple | None:
        """``(0, offset, name)`` for a run-time bound: an integer scalar parameter ``name``
        (plus or minus a compile-time integer), counted from the bottom of the domain as in
        GT4Py; ``(0, offset, name, "field")`` for an integer IJ field or IJ temporary (a level
        per column); None for anything else (a compile-time bound)."""
        offset, name_node = 0, node
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            for name_node, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(name_node, (ast.Name, ast.Subscript)) \
                        and self.is_compile_time(scope, other):
                    break
            else:
                return None
            if isinstance(node.op, ast.Sub) and name_node is node.right:
                return None  # `2 - n` counts downwards: not a bound GT4Py has either
            offset = _int_value(self.compile_time_value(scope, other, "an interval bound"))
            if offset is None:
                raise scope.error(
                    GTScriptSyntaxError, "a run-time interval bound's offset must be an integer",
                    other,
                )
            offset = -offset if isinstance(node.op, ast.Sub) else offset
        indexed = isinstance(name_node, ast.Subscript) and isinstance(name_node.value, ast.Name)
        if indexed:  # GT4Py's `interval(0, idx[0, 0])`: the field at the column itself
            name_node, index = name_node.value, name_node
        if not isinstance(name_node, ast.Name):
            return None
        if self.resolve_name(scope, name_node.id)[0] != "runtime":
            return None
        param = self.params.get(name_node.id)
        if indexed and param is not None and (param[0] != "field"
                                              or not self.centred_ij_index(scope, index)):
            raise scope.error(
                GTScriptSyntaxError,
                f"an interval bound reads an integer IJ field at the column itself: "
                f"{name_node.id}[0, 0] (or {name_node.id}), not `{ast.unparse(index)}` (GT4Py "
                f"refuses it too)",
                index,
            )
        if param is None:
            # a temporary (GT4Py's debug backend takes an IJ one): its levels are known only
            # while the stencil runs, so the kernel checks them (csrc/analysis/types.c), which
            # also refuses a temporary that is not an integer IJ one
            return (0, offset, name_node.id, "field")
        if param[0] == "field":
            # ("field", name, dtype, axes, data_dims)
            if param[3] != "IJ" or param[4] or param[2] not in _INT_DTYPES:
                why = ""
                if param[3] == "IJ" and not param[4]:  # a float (or bool) IJ field
                    why = (f" (GT4Py's debug backend truncates a float bound toward zero, and "
                           f"NaN or inf is no level at all: convert it in a computation before, "
                           f"t: Field[IJ, np.int64] = {name_node.id}, and bound by t)")
                raise scope.error(
                    GTScriptSyntaxError,
                    f"interval bound {name_node.id!r} is a field of axes {param[3] or '()'} and "
                    f"dtype {param[2]}: a field bound must be an integer IJ field (one level per "
                    f"column) without data dimensions{why}",
                    name_node,
                )
            return (0, offset, name_node.id, "field")
        if param[2] not in _INT_DTYPES:
            raise scope.error(
                GTScriptSyntaxError,
                f"interval bound {name_node.id!r} is a {param[2]} scalar: a run-time bound must "
                f"be an integer",
                name_node,
            )
        return (0, offset, name_node.id)

    def centred_ij_index(self, scope: _Scope, node: ast.Subscript) -> bool:
        """Whether ``f[0, 0]`` (or ``f[0, 0, 0]``, as GT4Py also reads it) indexes an IJ field
        at the point itself."""
        indices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return len(indices) in (2, 3) and all(
            self.is_compile_time(scope, i) and _int_value(
                self.compile_time_value(scope, i, "an interval bound")) == 0 for i in indices)

    # ---------------------------------------------------------------- regions

    def region_box(self, scope: _Scope, node: ast.expr) -> tuple:
        """``region[i, j]`` -> ``(i_lo, i_hi, j_lo, j_hi)``."""
        if not (isinstance(node, ast.Subscript) and _construct_name(node.value) == "region"):
            raise scope.error(
                GTScriptSyntaxError,
                "horizontal takes region[...] arguments, e.g. horizontal(region[I[0], :])",
                node,
            )
        specs = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(specs) != 2:
            raise scope.error(
                GTScriptSyntaxError,
                "region takes an I and a J part, e.g. region[I[0]:I[2], :]",
                node,
            )
        return (*self.region_axis(scope, specs[0], "I"), *self.region_axis(scope, specs[1], "J"))

    def region_axis(self, scope: _Scope, node: ast.expr, axis: str) -> tuple:
        """The (lo, hi) bounds of one axis of a region: a point ``I[n]`` or a slice."""
        if isinstance(node, ast.Slice):
            if node.step is not None:
                raise scope.error(GTScriptSyntaxError, "regions take no step", node.step)
            lo = None if node.lower is None else self.axis_bound(scope, node.lower, axis)
            hi = None if node.upper is None else self.axis_bound(scope, node.upper, axis)
            return lo, hi
        point = self.axis_bound(scope, node, axis)
        if point is None:
            raise scope.error(GTScriptSyntaxError, f"expected {axis}[n] or a slice", node)
        return point, (point[0], point[1] + 1)

    def axis_bound(self, scope: _Scope, node: ast.expr, axis: str) -> tuple | None:
        """``I[0]`` -> (0, 0), ``I[-1]`` -> (1, -1), ``I[0] - 1`` -> (0, -1), None -> None;
        an int counts from the domain's start, a negative one from its end, as in GT4Py
        (``region[3:-3, :]``: ``3`` is ``I[0] + 3``, ``-3`` is ``I[-1] - 2``)."""
        axes = {"I": lang.I, "J": lang.J, "K": lang.K}
        value = self.compile_time_value(scope, node, "a region bound", fallback=axes)
        if value is None:
            return None
        offset = _int_value(value)
        if offset is not None:
            return (0, offset) if offset >= 0 else (1, offset)
        if not isinstance(value, lang.AxisIndex) or value.axis != axis:
            raise scope.error(
                GTScriptSyntaxError,
                f"expected a bound on axis {axis} such as {axis}[0], {axis}[-1] or "
                f"{axis}[0] + 1, got {value!r}",
                node,
            )
        return value.level, value.offset
