"""Statements: assignments, declarations, if/while, ``with horizontal(...)``, targets."""

from __future__ import annotations

import ast
from typing import Iterable

import numpy as np

from .. import lang
from ..errors import (
    GTScriptDefinitionError,
    GTScriptSyntaxError,
)
from .externals import _is_docstring
from .params import resolve_placeholder
from .scope import _Scope
from .syntax import (
    _ALLOWED_STATEMENTS,
    _BINOPS,
    _STATEMENT_HINTS,
    _construct_name,
    _expr_names,
    _is_call_to,
)


class _Statements:
    """The translator's methods for statements: assignments, declarations, if/while, ``with horizontal(...)``, targets."""

    # ---------------------------------------------------------------- statements

    def statements(self, scope: _Scope, stmts: Iterable[ast.stmt]) -> list[tuple]:
        out: list[tuple] = []
        for stmt in stmts:
            self.statement(scope, stmt, out)
        return out

    def statement(self, scope: _Scope, node: ast.stmt, out: list[tuple]) -> None:
        """Append the translation of ``node`` to ``out`` (after any statements of functions
        inlined into it)."""
        handler = getattr(self, f"stmt_{type(node).__name__}", None)
        if handler is None:
            if isinstance(node, ast.Return):
                hint = (
                    "`return` is not allowed in a stencil: write the results to fields"
                    if scope.function is None
                    else f"gtscript function {scope.function!r} may only return at its end"
                )
            else:
                hint = _STATEMENT_HINTS.get(
                    type(node), f"`{type(node).__name__}` statements are not part of GTScript"
                )
                hint = f"{hint}; {_ALLOWED_STATEMENTS}"
            raise scope.error(GTScriptSyntaxError, hint, node)
        self.statement_writes.append(self.writes_by_calls(scope, node))
        try:
            handler(scope, node, out)
        finally:
            self.statement_writes.pop()

    def stmt_Pass(self, scope: _Scope, node: ast.Pass, out: list[tuple]) -> None:
        return

    def stmt_ImportFrom(self, scope: _Scope, node: ast.ImportFrom, out: list[tuple]) -> None:
        return  # externals were collected when the scope was made

    def stmt_Expr(self, scope: _Scope, node: ast.Expr, out: list[tuple]) -> None:
        if _is_docstring(node):
            return  # a string used as a comment
        if _is_call_to(node.value, "compile_assert"):
            self.compile_assert(scope, node.value)
            return
        raise scope.error(
            GTScriptSyntaxError,
            f"an expression on its own has no effect: assign its value; {_ALLOWED_STATEMENTS}",
            node,
        )

    def stmt_Assign(self, scope: _Scope, node: ast.Assign, out: list[tuple]) -> None:
        if len(node.targets) != 1:
            raise scope.error(
                GTScriptSyntaxError,
                "chained assignment (a = b = ...) is not supported: assign one name at a time",
                node,
            )
        target = node.targets[0]
        pre: list[tuple] = []
        if isinstance(target, ast.Tuple):
            self._tuple_assign(scope, node, target, pre)
        else:
            value = self.expr(scope, node.value, pre)
            pos = scope.position(node)
            written = self.target(scope, target, pre)
            if written[0] == "ternary":  # f[0, 0, 0][n] = ...: n is only known at run time
                pre.append(self.runtime_component_write(scope, target, value, pre))
            else:
                pre.append(("assign", *pos, written, value))
        out.extend(pre)

    def runtime_component_write(self, scope: _Scope, target: ast.Subscript, value: tuple,
                                pre: list[tuple]) -> tuple:
        """``f[0, 0, 0][n] = value``: an ``if`` chain writing the component ``n`` selects
        (the call checks ``n`` against the dimension before anything runs)."""
        pos = scope.position(target)
        access = self.field_access(scope, target.value, pre)
        indices = self.data_index(scope, target.slice, pre)
        return self.select_component(
            scope, target, access, indices,
            lambda fixed, _: ("assign", *pos, (*access[:5], fixed), value),
            lambda p, cond, a, b: ("if", *p, cond, [a], [b]),
        )

    def _tuple_assign(
        self, scope: _Scope, node: ast.Assign, target: ast.Tuple, out: list[tuple]
    ) -> None:
        """``a, b = f(...)`` with ``f`` a gtscript function returning a tuple."""
        call = node.value
        kind, fn = self.callee(scope, call.func) if isinstance(call, ast.Call) else (None, None)
        if kind != "function":
            raise scope.error(
                GTScriptSyntaxError,
                "tuple assignment is only supported as `a, b = f(...)` with f a gtscript "
                "function that returns a tuple",
                node,
            )
        values = self.inline(scope, call, fn, out)
        if len(values) != len(target.elts):
            raise scope.error(
                GTScriptSyntaxError,
                f"{fn.__name__!r} returns {len(values)} value(s), but {len(target.elts)} "
                f"names are assigned",
                node,
            )
        pos = scope.position(node)
        targets = [self.target(scope, elt, out) for elt in target.elts]
        # Python evaluates every value before assigning: stage the values through fresh
        # temporaries when a value reads one of the targets.
        if _expr_names(values) & _expr_names(targets) and len(values) > 1:
            staged = []
            n = next(self.counter)
            for i, value in enumerate(values):
                temp = ("name", *pos, f"__tuple_{n}_{i}")
                out.append(("assign", *pos, temp, value))
                staged.append(temp)
            values = staged
        for tgt, value in zip(targets, values):
            out.append(("assign", *pos, tgt, value))

    def stmt_AugAssign(self, scope: _Scope, node: ast.AugAssign, out: list[tuple]) -> None:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise scope.error(
                GTScriptSyntaxError, "this augmented assignment operator is not supported", node
            )
        if isinstance(node.target, ast.Tuple):
            raise scope.error(GTScriptSyntaxError, "cannot augment-assign a tuple", node)
        pre: list[tuple] = []
        value = self.expr(scope, node.value, pre)
        target = self.target(scope, node.target, pre, augmented=True)
        pos = scope.position(node)
        pre.append(("assign", *pos, target, ("binop", *pos, op, target, value)))
        out.extend(pre)

    def stmt_AnnAssign(self, scope: _Scope, node: ast.AnnAssign, out: list[tuple]) -> None:
        if not isinstance(node.target, ast.Name):
            raise scope.error(
                GTScriptSyntaxError,
                "only a plain name can be declared: `name: dtype = value`",
                node.target,
            )
        name = node.target.id
        if scope.function is None and name in self.params:
            raise scope.error(
                GTScriptSyntaxError, f"{name!r} is a parameter: it cannot be declared", node
            )
        dtype, axes, _ = self.declared_type(scope, node.annotation)
        pre: list[tuple] = []
        value = None if node.value is None else self.expr(scope, node.value, pre)
        pre.append(
            ("decl", *scope.position(node), scope.renames.get(name, name), dtype, value, axes)
        )
        out.extend(pre)

    def declared_type(
        self, scope: _Scope, annotation: ast.expr, data_dims: bool = False
    ) -> tuple[str, str, tuple]:
        """The dtype, axes and data dimensions of a temporary declaration's annotation: a
        dtype (an IJK temporary), or a Field over IJK or IJ (GT4Py's 2-D temporaries: one
        value per column, kept from level to level); data dimensions only where
        ``data_dims`` (declarations before the computations, as in GT4Py)."""
        value = self.compile_time_value(
            scope, annotation, "the annotation", fallback=self.annotation_names(self.dtypes)
        )
        try:
            if isinstance(value, lang.FieldDescriptor):
                if value.axes not in ("IJK", "IJ") or (value.data_dims and not data_dims):
                    raise GTScriptDefinitionError(
                        "temporaries are IJK or IJ fields; a temporary with data dimensions "
                        "is declared before the computations (tmp: Field[(dtype, (n,))])"
                    )
                dtype = resolve_placeholder(value.dtype, self.dtypes)
                return dtype, value.axes, tuple(value.data_dims)
            return resolve_placeholder(value, self.dtypes), "IJK", ()
        except GTScriptDefinitionError as exc:
            raise scope.error(GTScriptDefinitionError, exc.msg, annotation) from None

    @staticmethod
    def annotation_names(dtypes: dict) -> dict:
        """Names an annotation may use without importing them (as GT4Py evaluates them): the
        build's ``dtypes=`` names of Field types too (``dtypes={"Tij": Field[IJ, float]}``
        lets a temporary be declared ``t: Tij = ...``, as in GT4Py)."""
        fields = {k: v for k, v in dtypes.items() if isinstance(v, lang.FieldDescriptor)}
        return {"Field": lang.Field, "IJK": lang.IJK, "IJ": lang.IJ, "np": np, **fields}

    def stmt_If(self, scope: _Scope, node: ast.If, out: list[tuple]) -> None:
        static = self.static_condition(scope, node.test)
        if static is not None:  # keep only the branch taken
            out.extend(self.statements(scope, node.body if static else node.orelse))
            return
        pre: list[tuple] = []
        cond = self.expr(scope, node.test, pre)
        body = self.statements(scope, node.body)
        orelse = self.statements(scope, node.orelse)
        out.extend(pre)
        out.append(("if", *scope.position(node), cond, body, orelse))

    def stmt_While(self, scope: _Scope, node: ast.While, out: list[tuple]) -> None:
        if node.orelse:
            raise scope.error(GTScriptSyntaxError, "`while ... else` is not supported", node)
        pre: list[tuple] = []
        cond = self.expr(scope, node.test, pre)
        body = self.statements(scope, node.body)
        # Statements of functions inlined into the condition run before every test.
        out.extend(pre)
        out.append(("while", *scope.position(node), cond, body + pre))

    def stmt_With(self, scope: _Scope, node: ast.With, out: list[tuple]) -> None:
        calls = self._with_calls(scope, node)
        names = [_construct_name(call) for call in calls]
        if names != ["horizontal"]:
            hint = (
                "computations cannot be nested"
                if "computation" in names or "interval" in names
                else "only `with horizontal(region[...]):` is allowed inside a computation"
            )
            raise scope.error(GTScriptSyntaxError, hint, node)
        self.horizontal_region(scope, calls[0], node, out)

    def horizontal_region(
        self, scope: _Scope, call: ast.Call, node: ast.With, out: list[tuple]
    ) -> None:
        """``horizontal(region[...], ...)`` over the body of ``node``: a region statement."""
        if not call.args or call.keywords:
            raise scope.error(GTScriptSyntaxError, "horizontal takes region[...] arguments", call)
        boxes = [self.region_box(scope, arg) for arg in call.args]
        body = self.statements(scope, node.body)
        out.append(("region", *scope.position(node), boxes, body))

    # ---------------------------------------------------------------- assignment targets

    def target(
        self, scope: _Scope, node: ast.expr, pre: list[tuple], augmented: bool = False
    ) -> tuple:
        """The ``name`` / ``index`` expression written by an assignment (``augmented``: by
        ``x op= ...``). A gtscript function's parameter that is its argument by name writes
        that argument (GT4Py's call by name)."""
        if isinstance(node, ast.Name):
            kind, value = self.resolve_name(scope, node.id)
            if kind == "external":
                raise scope.error(
                    GTScriptSyntaxError, f"cannot assign to external {node.id!r}", node
                )
            if kind == "binding":
                if node.id not in scope.aliases:  # the inliner makes every written one so
                    raise scope.error(
                        GTScriptSyntaxError,
                        f"gtscript function {scope.function!r} cannot write to its parameter "
                        f"{node.id!r} here",
                        node,
                    )
                return ("name", *scope.position(node), value[3])
            name = value if kind == "local" else node.id
            return ("name", *scope.position(node), name)
        if isinstance(node, ast.Subscript):
            root = node.value.value if isinstance(node.value, ast.Subscript) else node.value
            # GT4Py refuses `p[0, 0, 0] = ...` on a parameter but writes `p[0, 0, 0] += ...`
            # through to the argument, as it does `p += ...`
            if (
                isinstance(root, ast.Name)
                and root.id in scope.bindings
                and not (augmented and root.id in scope.aliases)
            ):
                raise scope.error(
                    GTScriptSyntaxError,
                    f"gtscript function {scope.function!r} cannot write to its parameter "
                    f"{root.id!r}: return the value instead",
                    node,
                )
            access = self.subscript(scope, node, pre)
            if access[0] == "absk":
                raise scope.error(
                    GTScriptSyntaxError,
                    "`f.at(K=...)` reads a field at an absolute K index and cannot be assigned "
                    "to: write the field at a K offset instead (f[0, 0, dk] = ...)",
                    node,
                )
            return access
        raise scope.error(
            GTScriptSyntaxError,
            "can only assign to a name or an indexed field (f[0, 0, -1] = ...)",
            node,
        )
