"""Expressions: constants, names, field accesses and offsets, operators."""

from __future__ import annotations

import ast
import copy
from typing import Any

import numpy as np

from .. import lang
from ..errors import (
    GTScriptSemanticError,
    GTScriptSyntaxError,
)
from .gt4py_objects import from_gt4py
from .scope import _Scope
from .syntax import (
    _BINOPS,
    _BOOLOPS,
    _CMPOPS,
    _EXPRESSION_HINTS,
    _UNARYOPS,
    _dotted_parts,
    _number,
)


class _ShiftedAxis:
    """``I - 1`` while an index in the axis shorthand is evaluated."""

    __slots__ = ("axis", "shift")

    def __init__(self, axis: str, shift: int):
        self.axis = axis
        self.shift = shift

    def _moved(self, other: Any, sign: int) -> _ShiftedAxis:
        if isinstance(other, bool) or not isinstance(other, (int, np.integer)):
            return NotImplemented
        return _ShiftedAxis(self.axis, self.shift + sign * int(other))

    def __add__(self, other: Any) -> _ShiftedAxis:
        return self._moved(other, 1)

    __radd__ = __add__

    def __sub__(self, other: Any) -> _ShiftedAxis:
        return self._moved(other, -1)


class _Expressions:
    """The translator's methods for expressions: constants, names, field accesses and offsets, operators."""

    # ---------------------------------------------------------------- expressions

    def expr(self, scope: _Scope, node: ast.expr, pre: list[tuple]) -> tuple:
        """The tree expression of ``node``; statements of functions inlined into it are
        appended to ``pre``."""
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            hint = _EXPRESSION_HINTS.get(
                type(node), f"`{type(node).__name__}` expressions are not part of GTScript"
            )
            raise scope.error(GTScriptSyntaxError, hint, node)
        return handler(scope, node, pre)

    def constant(self, scope: _Scope, node: ast.AST, value: Any, what: str) -> tuple:
        """``("const", ...)`` for a number; an error naming ``what`` otherwise."""
        number = _number(value)
        if number is None:
            raise scope.error(
                GTScriptSyntaxError,
                f"{what} is a {type(value).__name__}, not a number: only bool, int and float "
                f"values can be used in expressions",
                node,
            )
        return ("const", *scope.position(node), number)

    def expr_Constant(self, scope: _Scope, node: ast.Constant, pre: list[tuple]) -> tuple:
        return self.constant(scope, node, node.value, f"the literal {node.value!r}")

    def axis_value(self, scope: _Scope, node: ast.expr) -> tuple | None:
        """GT4Py's ``K`` as a value, the index of the point's K level: a ``kindex`` node; None
        when ``node`` names no axis. ``I`` and ``J`` as values are errors, as in GT4Py."""
        axis = self.axis_of_node(scope, node)
        if axis == "K":
            return ("kindex", *scope.position(node))
        if axis is not None:
            raise scope.error(
                GTScriptSyntaxError,
                f"parallel axis {axis} can't be queried, only K (as in GT4Py): "
                f"`{ast.unparse(node)}` as a value is not part of the language; only K's level "
                f"index is (use a field holding I or J positions, or horizontal regions)",
                node,
            )
        return None

    def expr_Name(self, scope: _Scope, node: ast.Name, pre: list[tuple]) -> tuple:
        kind, value = self.resolve_name(scope, node.id)
        pos = scope.position(node)
        axis = self.axis_value(scope, node)
        if axis is not None:
            return axis
        if kind == "binding":
            return (value[0], *pos, *value[3:]) if value[0] in ("name", "index") else value
        if kind == "local":
            return ("name", *pos, value)
        if kind == "external":
            return self.constant(scope, node, value, f"external {node.id!r}")
        if kind == "global" and _number(value) is not None:
            return ("const", *pos, _number(value))
        if scope.function is not None:
            raise scope.error(
                GTScriptSemanticError,
                f"name {node.id!r} is not defined in gtscript function {scope.function!r} "
                f"(it can use its parameters, its local variables, externals and numeric "
                f"constants)",
                node,
            )
        return ("name", *pos, node.id)  # a stencil name: the C core resolves it

    def expr_Attribute(self, scope: _Scope, node: ast.Attribute, pre: list[tuple]) -> tuple:
        """``ns.NAME`` on an external (or global) namespace object -> a constant (``gtscript.K``:
        the level's index); ``m.T`` on a field (or expression) with two data dimensions -> its
        transpose (vectors.py)."""
        axis = self.axis_value(scope, node)
        if axis is not None:  # gtscript.K
            return axis
        if node.attr == "T" and self.is_field_expression(scope, node.value):
            return ("transpose", *scope.position(node), self.expr(scope, node.value, pre))
        value = self.dotted_value(scope, node)
        return self.constant(scope, node, value, f"`{ast.unparse(node)}`")

    def is_field_expression(self, scope: _Scope, node: ast.expr) -> bool:
        """Whether ``node`` is run-time data (a field, a temporary, an expression), not an
        external or global namespace."""
        if isinstance(node, ast.Name):
            return self.resolve_name(scope, node.id)[0] in ("binding", "local", "runtime")
        return not isinstance(node, ast.Attribute)

    def dotted_value(self, scope: _Scope, node: ast.expr) -> Any:
        """The object ``a`` / ``a.b.c`` names, resolving ``a`` as an external or global."""
        parts = _dotted_parts(node)
        if parts is None:
            raise scope.error(
                GTScriptSyntaxError, "attribute access is only allowed on externals", node
            )
        kind, value = self.resolve_name(scope, parts[0])
        if kind in ("binding", "local", "runtime"):
            raise scope.error(
                GTScriptSyntaxError,
                f"attribute access on {parts[0]!r} is not allowed: fields are read as "
                f"{parts[0]}[i, j, k] and have no attributes",
                node,
            )
        if kind == "missing":
            raise scope.error(GTScriptSyntaxError, f"unknown name {parts[0]!r}", node)
        for depth, attr in enumerate(parts[1:], start=1):
            try:
                value = from_gt4py(getattr(value, attr))  # ppm.fn, gtscript.I[0]: GT4Py's
            except AttributeError:
                raise scope.error(
                    GTScriptSyntaxError,
                    f"`{'.'.join(parts[:depth])}` has no attribute {attr!r}",
                    node,
                ) from None
        return value

    def expr_Subscript(self, scope: _Scope, node: ast.Subscript, pre: list[tuple]) -> tuple:
        return self.subscript(scope, node, pre)

    def subscript(self, scope: _Scope, node: ast.Subscript, pre: list[tuple]) -> tuple:
        """``f[i, j, k]``, ``f[i, j, k][n, ...]`` or ``f.at(K=k)[n, ...]`` -> an ``index``
        (or ``absk``) expression."""
        if isinstance(node.value, ast.Call) and self.is_absolute_k(scope, node.value):
            access = self.absolute_k(scope, node.value, pre)
        elif self.is_data_accessor(scope, node.value):
            access = self.data_accessor(scope, node.value)
        elif not isinstance(node.value, ast.Subscript):
            return self.field_access(scope, node, pre)
        else:
            access = self.field_access(scope, node.value, pre)
        if access[0] not in ("index", "absk"):
            raise scope.error(GTScriptSyntaxError, "only fields can take a data index", node)
        if access[5]:
            raise scope.error(GTScriptSyntaxError, "a data index is given twice", node)
        indices = self.data_index(scope, node.slice, pre)
        if all(isinstance(index, int) for index in indices):
            return (*access[:5], tuple(indices))
        # a run-time index: a choice among the components, the index checked by the call
        return self.select_component(
            scope, node, access, indices,
            lambda fixed, _: (*access[:5], fixed),
            lambda pos, cond, a, b: ("ternary", *pos, cond, a, b),
        )

    def is_data_accessor(self, scope: _Scope, node: ast.expr) -> bool:
        """Whether ``node`` is ``f.A`` on a field (GT4Py's data-dimension accessor)."""
        return (isinstance(node, ast.Attribute) and node.attr == "A"
                and isinstance(node.value, ast.Name)
                and self.resolve_name(scope, node.value.id)[0] in ("binding", "local", "runtime"))

    def data_accessor(self, scope: _Scope, node: ast.Attribute) -> tuple:
        """``f.A`` (indexed next with ``[n, ...]``): field f at the current point; its data
        index is absolute, as in GT4Py (the only way to index a field without I, J, K axes,
        such as a GlobalTable)."""
        name = node.value.id
        kind, value = self.resolve_name(scope, name)
        if kind == "runtime" and self.params.get(name, ("field",))[0] == "scalar":
            raise scope.error(
                GTScriptSyntaxError, f"scalar parameter {name!r} has no data accessor `.A`", node
            )
        if kind == "binding":
            if value[0] == "index" and value[4:] == ((0, 0, 0), ()):
                value = ("name", *value[1:4])
            if value[0] != "name":
                raise scope.error(
                    GTScriptSyntaxError,
                    f"`{name}.A[...]` needs a field passed as the argument {name!r}, not an "
                    f"expression or a shifted field",
                    node,
                )
            name = value[3]
        elif kind == "local":
            name = value
        return ("index", *scope.position(node), name, (0, 0, 0), ())

    def data_index(self, scope: _Scope, node: ast.expr, pre: list[tuple]) -> list:
        """The data indices: ints, or expressions for indices only known at run time."""
        indices = node.elts if isinstance(node, ast.Tuple) else [node]
        values: list = []
        for index in indices:
            if not self.is_compile_time(scope, index):
                values.append(self.expr(scope, index, pre))  # a run-time index
                continue
            value = self.compile_time_int(scope, index, "a data index")
            if value < 0:
                raise scope.error(GTScriptSyntaxError, "data indices must be >= 0", index)
            values.append(value)
        return values

    #: most components a run-time data index may choose among (the product of the sizes of
    #: the dimensions indexed at run time)
    MAX_RUNTIME_COMPONENTS = 256

    def select_component(self, scope: _Scope, node: ast.AST, access: tuple, indices: list,
                         leaf, choose) -> tuple:
        """``f[0, 0, 0][n]`` with ``n`` known at run time, as a choice among the static
        components: ``leaf(fixed_indices, last)`` makes the access to one component and
        ``choose(pos, cond, then, otherwise)`` the choice (a ternary expression when reading,
        an ``if`` when writing). Each run-time index is wrapped in ``__data_index(n, size)``,
        which the call checks against the dimension's size before anything runs, so an
        index outside it raises instead of picking the last component."""
        pos = scope.position(node)
        name = access[3]
        param = self.params.get(name)
        if param is None or param[0] != "field" or len(param[4]) != len(indices):
            dims = () if param is None or param[0] != "field" else param[4]
            raise scope.error(
                GTScriptSyntaxError,
                f"{name!r} has {len(dims)} data dimension(s) but is indexed with "
                f"{len(indices)} data index(es)",
                node,
            )
        sizes = param[4]
        count = 1
        for index, size in zip(indices, sizes):
            count *= 1 if isinstance(index, int) else size
        if count > self.MAX_RUNTIME_COMPONENTS:
            raise scope.error(
                GTScriptSyntaxError,
                f"run-time data indices of {name!r} choose among {count} components (at most "
                f"{self.MAX_RUNTIME_COMPONENTS})",
                node,
            )
        checked = [
            index if isinstance(index, int)
            else ("call", *pos, "__data_index", [index, ("const", *pos, size)])
            for index, size in zip(indices, sizes)
        ]

        def build(d: int, fixed: tuple) -> tuple:
            if d == len(checked):
                return leaf(fixed, None)
            if isinstance(checked[d], int):
                return build(d + 1, fixed + (checked[d],))
            result = build(d + 1, fixed + (sizes[d] - 1,))
            for v in range(sizes[d] - 2, -1, -1):
                cond = ("cmp", *pos, "==", checked[d], ("const", *pos, v))
                result = choose(pos, cond, build(d + 1, fixed + (v,)), result)
            return result

        return build(0, ())

    def field_access(self, scope: _Scope, node: ast.Subscript, pre: list[tuple]) -> tuple:
        """``f[di, dj, dk]`` (``f[di, dj]`` on IJ fields, ``f[dk]`` on K fields)."""
        if not isinstance(node.value, ast.Name):
            raise scope.error(GTScriptSyntaxError, "only fields can be indexed", node)
        name = node.value.id
        kind, value = self.resolve_name(scope, name)
        if kind in ("external", "global"):
            raise scope.error(
                GTScriptSyntaxError,
                f"{name!r} is not a field: only fields can be indexed",
                node,
            )
        if kind == "runtime" and self.params.get(name, ("field",))[0] == "scalar":
            raise scope.error(
                GTScriptSyntaxError, f"scalar parameter {name!r} cannot be indexed", node
            )
        if kind == "missing" and scope.function is not None:
            raise scope.error(
                GTScriptSemanticError,
                f"name {name!r} is not defined in gtscript function {scope.function!r}",
                node,
            )
        if kind == "binding":  # the field passed as the argument, if one was
            field_name = value[3] if value[0] in ("name", "index") else None
        else:
            field_name = value if kind == "local" else name
        axes = self.field_axes.get(field_name, "IJK")
        if not axes:
            raise scope.error(
                GTScriptSyntaxError,
                f"{field_name!r} is a GlobalTable, without grid axes: read it as "
                f"{field_name}.A[i] (the same value at every point)",
                node,
            )
        offsets = self.offsets(scope, node, axes, pre)
        if kind == "binding":
            return self.compose(scope, node, value, offsets)
        return ("index", *scope.position(node), field_name, offsets, ())

    def is_absolute_k(self, scope: _Scope, node: ast.Call) -> bool:
        """Whether a call is ``f.at(...)`` on a field (not a function of a namespace)."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "at"):
            return False
        if not isinstance(func.value, ast.Name):
            return False
        return self.resolve_name(scope, func.value.id)[0] not in ("external", "global")

    def absolute_k(self, scope: _Scope, node: ast.Call, pre: list[tuple]) -> tuple:
        """``f.at(K=k)``: a read of field f at absolute K index k (0 is the first level of
        the domain), centred in I and J, as GT4Py's cartesian gtscript allows."""
        name = node.func.value.id
        if node.args or [kw.arg for kw in node.keywords] != ["K"]:
            raise scope.error(
                GTScriptSyntaxError,
                f"`{name}.at(...)` takes exactly one keyword argument, the absolute K index "
                f"(e.g. `{name}.at(K=0)`); reads at an absolute index are centred in I and J",
                node,
            )
        kind, value = self.resolve_name(scope, name)
        if kind == "binding":  # a gtscript function parameter: the field passed as argument
            if value[0] == "index" and value[4:] == ((0, 0, 0), ()):
                value = ("name", *value[1:4])
            if value[0] != "name":
                raise scope.error(
                    GTScriptSyntaxError,
                    f"`{name}.at(K=...)` needs a field passed as the argument {name!r}, not an "
                    f"expression, a shifted field or a data index of one",
                    node,
                )
            field_name = value[3]
        elif kind == "runtime" and self.params.get(name, ("field",))[0] == "scalar":
            raise scope.error(
                GTScriptSyntaxError, f"scalar parameter {name!r} cannot be indexed", node
            )
        elif kind == "missing" and scope.function is not None:
            raise scope.error(
                GTScriptSemanticError,
                f"name {name!r} is not defined in gtscript function {scope.function!r}",
                node,
            )
        else:
            field_name = value if kind == "local" else name
        kexpr = self.expr(scope, node.keywords[0].value, pre)
        return ("absk", *scope.position(node), field_name, kexpr, ())

    def offsets(self, scope: _Scope, node: ast.Subscript, axes: str, pre: list[tuple]) -> tuple:
        """The (di, dj, dk) of an index; dk may be an expression (a variable K offset)."""
        if isinstance(node.slice, ast.Constant) and node.slice.value is Ellipsis:
            return (0, 0, 0)  # GT4Py's f[...]: the field at the point itself, on any axes
        indices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for index in indices:
            if isinstance(index, ast.Slice):
                raise scope.error(GTScriptSyntaxError, _EXPRESSION_HINTS[ast.Slice], index)
        if any(
            isinstance(sub, (ast.Name, ast.Attribute)) and self.axis_of_node(scope, sub) is not None
            for index in indices
            for sub in ast.walk(index)
        ):  # the axis shorthand, with bare (I - 1) or qualified (gtscript.I - 1) axes
            return self.axis_offsets(scope, node, indices, axes)
        if len(indices) not in (3, len(axes)):
            raise scope.error(
                GTScriptSyntaxError,
                f"a field with axes {axes} is indexed with {len(axes)} offsets "
                f"(e.g. [{', '.join('0' * len(axes))}]), got {len(indices)}",
                node,
            )
        by_axis = dict(zip("IJK" if len(indices) == 3 else axes, indices))
        di = dj = 0
        if "I" in by_axis:
            di = self.compile_time_int(scope, by_axis["I"], "a horizontal offset")
        if "J" in by_axis:
            dj = self.compile_time_int(scope, by_axis["J"], "a horizontal offset")
        k_node = by_axis.get("K")
        if k_node is None:
            dk = 0
        elif self.is_compile_time(scope, k_node):
            dk = self.compile_time_int(scope, k_node, "a K offset")
        else:
            dk = self.expr(scope, k_node, pre)  # a variable K offset
        return (di, dj, dk)

    def axis_offsets(
        self, scope: _Scope, node: ast.Subscript, indices: list[ast.expr], axes: str
    ) -> tuple:
        """GT4Py's axis shorthand: ``f[I - 1, J]``, ``f[K + 1]``, ``f[J - 2]``: each index
        names an axis of the field, shifted by a constant; axes not named are not shifted."""
        shifted = {}  # the names of axes, as axes that arithmetic shifts
        for sub in (sub for index in indices for sub in ast.walk(index)):
            axis = self.axis_of_name(scope, sub.id) if isinstance(sub, ast.Name) else None
            if axis is not None:
                shifted[sub.id] = _ShiftedAxis(axis, 0)
        shifts: dict[str, int] = {}
        for index in indices:
            value = self.compile_time_value(
                scope, self.qualified_axes_named(scope, index, shifted),
                "an axis offset such as I - 1", override=shifted
            )
            if isinstance(value, lang.Axis):
                value = _ShiftedAxis(value.name, 0)
            if not isinstance(value, _ShiftedAxis):
                raise scope.error(
                    GTScriptSyntaxError,
                    f"`{ast.unparse(index)}`: with the axis shorthand every index names an axis "
                    f"(e.g. f[I - 1, J + 1]), not a bare offset; write f[-1, 1, 0] otherwise",
                    index,
                )
            if value.axis not in axes:
                raise scope.error(
                    GTScriptSyntaxError,
                    f"`{ast.unparse(index)}`: the field has axes {axes}, not {value.axis}",
                    index,
                )
            if value.axis in shifts:
                raise scope.error(
                    GTScriptSyntaxError, f"axis {value.axis} is given twice in the index", index
                )
            if shifts and "IJK".index(value.axis) < "IJK".index(list(shifts)[-1]):
                raise scope.error(
                    GTScriptSyntaxError,
                    f"axis {value.axis} is given out of order: index axes in the order I, J, K",
                    index,
                )
            shifts[value.axis] = value.shift
        return (shifts.get("I", 0), shifts.get("J", 0), shifts.get("K", 0))

    def qualified_axes_named(self, scope: _Scope, index: ast.expr, shifted: dict) -> ast.expr:
        """``index`` with each qualified axis (``gtscript.I``, ``gs.K``) replaced by a name
        that ``shifted`` maps to the axis, so that it shifts like a bare ``I``."""
        outer = self

        class _Rename(ast.NodeTransformer):
            def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
                axis = outer.axis_of_node(scope, node)
                if axis is None:
                    return self.generic_visit(node)
                name = f"__gtscript_axis_{axis}"  # not a dunder: the evaluator refuses those
                shifted[name] = _ShiftedAxis(axis, 0)
                return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)

        return _Rename().visit(copy.deepcopy(index))

    def compose(self, scope: _Scope, node: ast.AST, binding: tuple, offsets: tuple) -> tuple:
        """Index a gtscript function's parameter: offsets add to those of the argument."""
        pos = scope.position(node)
        if binding[0] == "name":
            return ("index", *pos, binding[3], offsets, ())
        if binding[0] == "index":
            (a, b, c), data_index = binding[4], binding[5]
            di, dj, dk = offsets
            offsets = (a + di, b + dj, self._add_k(pos, c, dk))
            return ("index", *pos, binding[3], offsets, data_index)
        if offsets == (0, 0, 0):
            return binding
        raise scope.error(
            GTScriptSyntaxError,
            f"cannot read the argument of {scope.function!r} at offset {list(offsets)}: it is "
            f"an expression, not a field (assign it to a temporary and pass that instead)",
            node,
        )

    @staticmethod
    def _add_k(pos: tuple[int, int], a: Any, b: Any) -> Any:
        """Sum of two K offsets (ints or expressions)."""
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(a, int) and a == 0:
            return b
        as_expr = lambda v: ("const", *pos, v) if isinstance(v, int) else v  # noqa: E731
        return ("binop", *pos, "+", as_expr(a), as_expr(b))

    def expr_BinOp(self, scope: _Scope, node: ast.BinOp, pre: list[tuple]) -> tuple:
        op = "@" if isinstance(node.op, ast.MatMult) else _BINOPS.get(type(node.op))
        if op is None:
            raise scope.error(
                GTScriptSyntaxError,
                "this operator is not part of GTScript (use + - * / // % **, or @ on "
                "fields with data dimensions)",
                node,
            )
        left = self.expr(scope, node.left, pre)
        right = self.expr(scope, node.right, pre)
        return ("binop", *scope.position(node), op, left, right)

    def expr_UnaryOp(self, scope: _Scope, node: ast.UnaryOp, pre: list[tuple]) -> tuple:
        op = _UNARYOPS.get(type(node.op))
        if op is None:
            raise scope.error(GTScriptSyntaxError, "`~` is not part of GTScript", node)
        operand = self.expr(scope, node.operand, pre)
        pos = scope.position(node)
        if op == "-" and operand[0] == "const" and not isinstance(operand[3], bool):
            return ("const", *pos, -operand[3])
        return ("unop", *pos, op, operand)

    def expr_Compare(self, scope: _Scope, node: ast.Compare, pre: list[tuple]) -> tuple:
        """``a < b`` -> cmp; ``a < b < c`` -> (a < b) and (b < c)."""
        names = [_CMPOPS.get(type(op)) for op in node.ops]
        if None in names:
            raise scope.error(
                GTScriptSyntaxError,
                "`is` and `in` are not part of GTScript: use < <= > >= == !=",
                node,
            )
        operands = [self.expr(scope, node.left, pre)]
        operands += [self.expr(scope, comparator, pre) for comparator in node.comparators]
        pos = scope.position(node)
        comparisons = [
            ("cmp", *pos, name, operands[i], operands[i + 1]) for i, name in enumerate(names)
        ]
        return comparisons[0] if len(comparisons) == 1 else ("boolop", *pos, "and", comparisons)

    def expr_BoolOp(self, scope: _Scope, node: ast.BoolOp, pre: list[tuple]) -> tuple:
        values = [self.expr(scope, value, pre) for value in node.values]
        return ("boolop", *scope.position(node), _BOOLOPS[type(node.op)], values)

    def expr_IfExp(self, scope: _Scope, node: ast.IfExp, pre: list[tuple]) -> tuple:
        cond = self.expr(scope, node.test, pre)
        body = self.expr(scope, node.body, pre)
        orelse = self.expr(scope, node.orelse, pre)
        return ("ternary", *scope.position(node), cond, body, orelse)
