"""Name resolution and compile-time evaluation (externals, ``__INLINED``, ``compile_assert``)."""

from __future__ import annotations

import ast
import itertools
from typing import Any

from .. import lang
from ..errors import (
    GTScriptDefinitionError,
    GTScriptSemanticError,
    GTScriptSyntaxError,
)
from .consteval import _BUILTINS as _CONST_BUILTINS
from .consteval import ConstEvalError, ConstEvaluator, truth
from .externals import _MISSING, _ExternalImport, _free_value, _scan_body
from .gt4py_objects import from_gt4py
from .scope import _Scope
from .source import _Source
from .syntax import (
    _COMPILE_TIME_NODES,
    _dotted_parts,
    _EXTERNALS_MODULE,
    _INLINED,
    _int_value,
    _is_call_to,
    _number,
)


class _Names:
    """The translator's methods for name resolution and compile-time evaluation (externals, ``__INLINED``, ``compile_assert``)."""

    # ---------------------------------------------------------------- scopes and names

    def _resolve_imports(self, source: _Source, imports: list[_ExternalImport]) -> dict:
        """The values of imported externals, by local name."""
        values = {}
        for imp in imports:
            if imp.name not in self.externals:
                known = ", ".join(sorted(self.externals)) or "none"
                raise source.error(
                    GTScriptDefinitionError,
                    f"external {imp.name!r} is not defined: pass it with "
                    f"externals={{{imp.name!r}: ...}} (defined externals: {known})",
                    imp.node,
                )
            values[imp.local] = self.externals[imp.name]
        return values

    def stencil_scope(self) -> _Scope:
        body = self.source.node.body
        imports, assigned = _scan_body(self.source, body)
        for imp in imports:
            if imp.local in self.params:
                raise self.source.error(
                    GTScriptDefinitionError,
                    f"external {imp.local!r} has the name of a parameter of the stencil",
                    imp.node,
                )
        scope = _Scope(
            source=self.source,
            func=self.func,
            imported=self._resolve_imports(self.source, imports),
            runtime=frozenset(self.params) | frozenset(assigned),
        )
        self._check_external_assignments(scope, body)
        return scope

    @staticmethod
    def _check_external_assignments(scope: _Scope, body: list[ast.stmt]) -> None:
        """Externals are constants: assigning one is an error."""
        for node in itertools.chain.from_iterable(ast.walk(stmt) for stmt in body):
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Store)
                and node.id in scope.imported
            ):
                raise scope.error(
                    GTScriptSyntaxError, f"cannot assign to external {node.id!r}", node
                )

    def resolve_name(self, scope: _Scope, name: str) -> tuple[str, Any]:
        """What ``name`` means in ``scope``: ``("binding", expr)`` (a function parameter),
        ``("local", temporary)``, ``("runtime", None)`` (a stencil parameter or temporary),
        ``("external", value)``, ``("global", value)`` or ``("missing", None)``."""
        if name in scope.bindings:
            return "binding", scope.bindings[name]
        if name in scope.renames:
            return "local", scope.renames[name]
        if name in scope.runtime:
            return "runtime", None
        # GT4Py's objects (a definition written for GT4Py) are read as the language's own
        if name in scope.imported:
            return "external", from_gt4py(scope.imported[name])
        value = _free_value(scope.func, name)
        if value is not _MISSING:
            return "global", from_gt4py(value)
        return "missing", None

    # ---------------------------------------------------------------- compile-time values

    def is_compile_time(self, scope: _Scope, node: ast.expr) -> bool:
        """Whether ``node`` only combines literals, externals and global constants."""
        for sub in ast.walk(node):
            if _is_call_to(sub, _INLINED) or (isinstance(sub, ast.Name) and sub.id == _INLINED):
                continue  # __INLINED(c) is compile-time when c is (checked when evaluated)
            if not isinstance(sub, _COMPILE_TIME_NODES):
                return False
            if isinstance(sub, ast.Name):
                kind, value = self.resolve_name(scope, sub.id)
                if kind not in ("external", "global") or isinstance(value, lang.Axis):
                    return False  # an axis as a value is the point's index (`K == 2`)
            elif isinstance(sub, ast.Attribute) and self.axis_of_node(scope, sub) is not None:
                return False  # `gtscript.K == 2`
        return True

    def axis_of_node(self, scope: _Scope, node: ast.expr) -> str | None:
        """The axis a name or a dotted name (``gtscript.K``) means here, else None."""
        if isinstance(node, ast.Name):
            return self.axis_of_name(scope, node.id)
        parts = _dotted_parts(node)
        if parts is None or self.resolve_name(scope, parts[0])[0] not in ("external", "global"):
            return None
        value = self.resolve_name(scope, parts[0])[1]
        for attr in parts[1:]:
            value = from_gt4py(getattr(value, attr, None))
        return value.name if isinstance(value, lang.Axis) else None

    def axis_of_name(self, scope: _Scope, name: str) -> str | None:
        """``"I"`` / ``"J"`` / ``"K"`` when ``name`` means an axis of the grid here: GT4Py's
        axis object (imported, or an external holding it), or the bare name when nothing
        defines it (``from __gtscript__ import K``)."""
        kind, value = self.resolve_name(scope, name)
        if kind in ("external", "global") and isinstance(value, lang.Axis):
            return value.name
        if kind == "missing" and name in ("I", "J", "K"):
            return name
        return None

    def compile_time_value(
        self,
        scope: _Scope,
        node: ast.expr,
        what: str,
        fallback: dict | None = None,
        override: dict | None = None,
    ) -> Any:
        """Evaluate ``node`` now with the compile-time evaluator (consteval: no ``eval``), in
        an environment of externals, global constants and the builtins it allows.  Names
        missing from the definition's namespace are looked up in ``fallback``; names in
        ``override`` mean what it says whatever the namespace holds.  Referencing a field,
        parameter or temporary is an error, and so is anything the evaluator refuses."""

        def lookup(name: str, sub: ast.Name) -> Any:
            if override is not None and name in override:
                return override[name]
            kind, value = self.resolve_name(scope, name)
            if kind in ("binding", "local", "runtime"):
                raise ConstEvalError(
                    f"{what} is evaluated at compile time and can only use externals and "
                    f"constants, but {name!r} is a field, parameter or temporary",
                    sub,
                )
            if kind != "missing":
                return value
            if fallback is not None and name in fallback:
                return fallback[name]
            if name in _CONST_BUILTINS:
                return _CONST_BUILTINS[name]
            raise ConstEvalError(
                f"unknown name {name!r} (externals must be imported with "
                f"`from {_EXTERNALS_MODULE} import {name}`)",
                sub,
            )

        try:
            return ConstEvaluator(lookup, _INLINED).eval(node)
        except ConstEvalError as exc:
            message = exc.message if exc.message.startswith(what) else f"{what}: {exc.message}"
            raise scope.error(GTScriptSyntaxError, message, exc.node) from None

    def compile_time_truth(self, scope: _Scope, node: ast.expr, what: str) -> bool:
        """The truth of a compile-time condition (a number, bool, string or None)."""
        value = self.compile_time_value(scope, node, what)
        try:
            return truth(value, node)
        except ConstEvalError as exc:
            raise scope.error(GTScriptSyntaxError, f"{what}: {exc.message}", exc.node) from None

    def compile_time_int(self, scope: _Scope, node: ast.expr, what: str) -> int:
        value = _int_value(self.compile_time_value(scope, node, what))
        if value is None:
            raise scope.error(GTScriptSyntaxError, f"{what} must be an integer constant", node)
        return value

    def static_condition(self, scope: _Scope, test: ast.expr) -> bool | None:
        """The value of an if-condition known at compile time (``__INLINED(c)``, or only
        literals, externals and global constants), else None."""
        if _is_call_to(test, _INLINED):
            if len(test.args) != 1 or test.keywords:
                raise scope.error(GTScriptSyntaxError, "__INLINED takes one expression", test)
            return self.compile_time_truth(scope, test.args[0], "__INLINED(...)")
        if self.is_compile_time(scope, test):
            value = _number(self.compile_time_value(scope, test, "condition"))
            if value is not None:
                return bool(value)
        return None

    def inlined_value(self, scope: _Scope, call: ast.Call) -> Any:
        """The value of ``__INLINED(expr)``."""
        if len(call.args) != 1 or call.keywords:
            raise scope.error(GTScriptSyntaxError, "__INLINED takes one expression", call)
        return self.compile_time_value(scope, call.args[0], "__INLINED(...)")

    def compile_assert(self, scope: _Scope, call: ast.Call) -> None:
        """Check ``compile_assert(expr)`` now."""
        if len(call.args) != 1 or call.keywords:
            raise scope.error(GTScriptSyntaxError, "compile_assert takes one expression", call)
        if not self.compile_time_truth(scope, call.args[0], "compile_assert(...)"):
            raise scope.error(
                GTScriptSemanticError,
                f"compile_assert failed: `{ast.unparse(call.args[0])}` is false",
                call,
            )
