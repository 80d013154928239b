"""Calls: builtins, casts, and inlining of ``@gtscript.function`` calls."""

from __future__ import annotations

import ast
from typing import Any, Callable

from .. import lang
from ..errors import (
    GTScriptSyntaxError,
)
from .externals import _MISSING
from .functions import GTScriptFunction, function_info, is_gtscript_function
from .scope import _Scope
from .syntax import (
    _BUILTIN_ALIASES,
    _CASTS,
    _EXPRESSION_HINTS,
    _INLINED,
    _construct_name,
    _dtype_of,
    _is_builtin_module,
    _number,
)


class _Calls:
    """The translator's methods for calls: builtins, casts, and inlining of ``@gtscript.function`` calls."""

    # ---------------------------------------------------------------- calls

    def expr_Call(self, scope: _Scope, node: ast.Call, pre: list[tuple]) -> tuple:
        if self.is_absolute_k(scope, node):
            return self.absolute_k(scope, node, pre)
        name = _construct_name(node)
        if name == _INLINED:
            return self.constant(scope, node, self.inlined_value(scope, node), "__INLINED(...)")
        if name in ("compile_assert", "computation", "interval", "horizontal"):
            raise scope.error(
                GTScriptSyntaxError, f"{name}(...) cannot be used in an expression", node
            )
        kind, target = self.callee(scope, node.func)
        if kind == "function":
            values = self.inline(scope, node, target, pre)
            if len(values) != 1:
                raise scope.error(
                    GTScriptSyntaxError,
                    f"{target.__name__!r} returns {len(values)} values: assign them with "
                    f"`{', '.join('v%d' % i for i in range(len(values)))} = "
                    f"{target.__name__}(...)`",
                    node,
                )
            return values[0]
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            raise scope.error(
                GTScriptSyntaxError, f"{target}() takes positional arguments only", node
            )
        args = [self.expr(scope, arg, pre) for arg in node.args]
        arity = 1 if kind == "cast" else {**lang.MATH_BUILTINS, **lang.OPERATOR_BUILTINS}[target]
        pos = scope.position(node)
        if target in ("min", "max") and len(args) > 2:  # min(a, b, c) = min(min(a, b), c)
            result = args[0]
            for arg in args[1:]:
                result = ("call", *pos, target, [result, arg])
            return result
        if len(args) != arity:
            raise scope.error(
                GTScriptSyntaxError,
                f"{target}() takes {arity} argument(s), got {len(args)}",
                node,
            )
        if target in lang.OPERATOR_BUILTINS:  # GT4Py's mod(a, b): NumPy's np.mod, a % b
            return ("binop", *pos, "%", *args)
        return ("call", *pos, target, args)

    def callee(self, scope: _Scope, node: ast.expr) -> tuple[str, Any]:
        """What a call calls: ``("function", gtscript function)``, ``("builtin", name)`` or
        ``("cast", dtype)``."""
        if isinstance(node, ast.Name):
            kind, value = self.resolve_name(scope, node.id)
            if kind in ("binding", "local", "runtime"):
                raise scope.error(
                    GTScriptSyntaxError, f"{node.id!r} is a variable, not a function", node
                )
            return self._callee_by_name(
                scope, node, node.id, _MISSING if kind == "missing" else value
            )
        if isinstance(node, ast.Attribute):
            value = self.dotted_value(scope, node)
            owner = self.dotted_value(scope, node.value)
            if not is_gtscript_function(value) and _is_builtin_module(owner):
                return self._callee_by_name(scope, node, node.attr, _MISSING)  # np.sqrt, ...
            return self._callee_by_name(scope, node, None, value)
        hint = _EXPRESSION_HINTS.get(type(node), "only named functions can be called")
        raise scope.error(GTScriptSyntaxError, hint, node)

    def _callee_by_name(
        self, scope: _Scope, node: ast.AST, name: str | None, value: Any
    ) -> tuple[str, Any]:
        """Resolve a callee by its value (a gtscript function) or else by its name."""
        if is_gtscript_function(value):
            return "function", value
        dtype = _dtype_of(value)
        if dtype is not None:  # a dtype held by an external or a variable: DT(x) casts
            return "cast", dtype
        if name is not None:
            if name in _CASTS:
                return "cast", _CASTS[name]
            name = _BUILTIN_ALIASES.get(name, name)
            if name in lang.MATH_BUILTINS or name in lang.OPERATOR_BUILTINS:
                return "builtin", name
        label = ast.unparse(node)
        what = "unknown function" if value is _MISSING else "not a gtscript function"
        raise scope.error(
            GTScriptSyntaxError,
            f"{label!r}: {what}; only the math builtins ({', '.join(lang.MATH_BUILTINS)}), "
            f"casts (float, int, bool, np.float32, np.float64, np.int32, np.int64, np.int16, np.int8) and "
            f"functions decorated with @gtscript.function can be called",
            node,
        )

    # ---------------------------------------------------------------- inlining

    def inline(self, scope: _Scope, call: ast.Call, fn: Callable, pre: list[tuple]) -> list[tuple]:
        """Inline a call of gtscript function ``fn``: its statements go to ``pre``; the
        returned expressions are returned."""
        info: GTScriptFunction = function_info(fn)
        if fn in self.inlining:
            raise scope.error(
                GTScriptSyntaxError, f"gtscript function {info.name!r} is recursive", call
            )
        bindings = self.bind_arguments(scope, call, info, pre)
        pos = scope.position(call)
        n = next(self.counter)
        renames = {name: f"__fn_{info.name}_{n}_{name}" for name in info.assigned}
        # A parameter the function assigns is a local copy of its argument (as in Python).
        for name in [p for p in bindings if p in renames]:
            pre.append(("assign", *pos, ("name", *pos, renames[name]), bindings.pop(name)))
        # Positions refer to the stencil's file: code from another file takes the call's.
        same_file = info.source.filename == self.source.filename
        callee = _Scope(
            source=info.source,
            func=fn,
            imported=self._resolve_imports(info.source, info.imports),
            bindings=bindings,
            renames=renames,
            origin=None if same_file else pos,
            function=info.name,
        )
        self._check_external_assignments(callee, info.body)
        self.inlining.append(fn)
        try:
            for stmt in info.body:
                self.statement(callee, stmt, pre)
            return [self.expr(callee, value, pre) for value in info.returns]
        finally:
            self.inlining.pop()

    def bind_arguments(
        self, scope: _Scope, call: ast.Call, info: GTScriptFunction, pre: list[tuple]
    ) -> dict[str, tuple]:
        """The arguments of a call, translated, by parameter name (defaults included)."""
        if any(isinstance(arg, ast.Starred) for arg in call.args) or any(
            kw.arg is None for kw in call.keywords
        ):
            raise scope.error(
                GTScriptSyntaxError, "`*` and `**` arguments are not part of GTScript", call
            )
        args = [self.expr(scope, arg, pre) for arg in call.args]
        kwargs = {kw.arg: self.expr(scope, kw.value, pre) for kw in call.keywords}
        try:
            bound = info.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise scope.error(GTScriptSyntaxError, f"calling {info.name!r}: {exc}", call) from None
        bindings = dict(bound.arguments)
        for name, param in info.signature.parameters.items():
            if name not in bindings:
                default = _number(param.default)
                if default is None:
                    raise scope.error(
                        GTScriptSyntaxError,
                        f"the default value of parameter {name!r} of {info.name!r} must be "
                        f"a number",
                        call,
                    )
                bindings[name] = ("const", *scope.position(call), default)
        return bindings
