"""Calls: builtins, casts, and inlining of ``@gtscript.function`` calls."""

from __future__ import annotations

import ast
import itertools
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
    _expr_names,
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
        returned expressions are returned.

        Parameters are passed as GT4Py passes them (call by name): a parameter whose argument
        is a plain name (a field, a temporary, a parameter or local of the caller) and that
        the body never plain-assigns (``x = ...``) is that name, so a write to it
        (``x += ...``, also in a branch, a loop or a nested call) writes the caller's field or
        variable. Any other parameter is a local copy of its argument: one the body
        plain-assigns, or one bound to an expression, a shifted field, a constant or a
        default. A read-only parameter bound to an expression is substituted where it is
        read, unless the call writes something that expression reads: then it is copied
        first, so it keeps the value it had at the call."""
        info: GTScriptFunction = function_info(fn)
        if fn in self.inlining:
            raise scope.error(
                GTScriptSyntaxError, f"gtscript function {info.name!r} is recursive", call
            )
        bindings, by_name = self.bind_arguments(scope, call, info, pre)
        through = self.written_through(fn)
        pos = scope.position(call)
        n = next(self.counter)
        renames = {name: f"__fn_{info.name}_{n}_{name}" for name in info.assigned}
        aliases = {p for p in bindings if p in through and p in by_name
                   and bindings[p][0] == "name"}
        written = {bindings[p][3] for p in aliases}
        local = [
            p for p in bindings
            if p not in aliases and (
                p in info.plain_assigned or p in through
                or (bindings[p][0] != "name" and _expr_names(bindings[p]) & written))
        ]
        for name in local:  # a local copy of its argument, made before the body runs
            renames[name] = f"__fn_{info.name}_{n}_{name}"
            pre.append(("assign", *pos, ("name", *pos, renames[name]), bindings.pop(name)))
        for name in bindings:  # a parameter that is its argument is not a local
            renames.pop(name, None)
        # Positions refer to the stencil's file: code from another file takes the call's.
        same_file = info.source.filename == self.source.filename
        callee = _Scope(
            source=info.source,
            func=fn,
            imported=self._resolve_imports(info.source, info.imports),
            bindings=bindings,
            renames=renames,
            aliases=frozenset(aliases),
            origin=None if same_file else pos,
            function=info.name,
        )
        self._check_external_assignments(callee, info.body)
        self.inlining.append(fn)
        try:
            for stmt in info.body:
                self.statement(callee, stmt, pre)
            # the returned expressions are a statement of the function's own
            self.statement_writes.append(self.writes_by_calls(callee, info.returns))
            try:
                values = [self.expr(callee, value, pre) for value in info.returns]
            finally:
                self.statement_writes.pop()
        finally:
            self.inlining.pop()
        return self.captured_returns(info, pos, values, pre)

    def captured_returns(
        self, info: GTScriptFunction, pos: tuple, values: list[tuple], pre: list[tuple]
    ) -> list[tuple]:
        """The returned values, copied to temporaries where a gtscript call inlined after
        this one in the same statement writes a name they read: GT4Py assigns a return
        value where the call is, so `aug(a) + aug(a)` adds the value before a's second
        update to the one after it."""
        frame = self.statement_writes[-1] if self.statement_writes else None
        if frame is None:
            return values
        frame[0] -= 1
        if frame[0] <= 0 or not frame[1]:
            return values
        captured = []
        for value in values:
            if _expr_names(value) & frame[1]:
                # `return` is a keyword: no local of the function has this name
                temp = ("name", *pos, f"__fn_{info.name}_{next(self.counter)}_return")
                pre.append(("assign", *pos, temp, value))
                value = temp
            captured.append(value)
        return captured

    def writes_by_calls(self, scope: _Scope, nodes: ast.stmt | list[ast.expr]) -> list:
        """``[count, names]`` for a statement (its own expressions, not the bodies of its
        branches or loop) or a function's returned expressions: how many gtscript function
        calls they make, and the names (as the translated code spells them) those calls may
        write through."""
        calls = []
        if isinstance(nodes, ast.stmt):
            nodes = [c for c in ast.iter_child_nodes(nodes) if not isinstance(c, ast.stmt)]
        todo = list(nodes)
        while todo:
            node = todo.pop()
            if isinstance(node, ast.Call):
                calls.append(node)
            todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt))
        functions = 0
        names: set[ast.Name] = set()
        for call in calls:
            try:
                if self.callee(scope, call.func)[0] != "function":
                    continue
            except GTScriptSyntaxError:
                continue  # not a call of a gtscript function (translation says what it is)
            functions += 1
            passed = {arg.id: arg for arg in [*call.args, *(kw.value for kw in call.keywords)]
                      if isinstance(arg, ast.Name)}
            names |= {passed[name] for name in self._passed_through(scope, call, set(passed))}
        if functions < 2:
            return [functions, set()]
        resolved = set()
        for name in names:
            try:
                value = self.expr(scope, name, [])
            except GTScriptSyntaxError:
                continue
            if value[0] == "name":
                resolved.add(value[3])
        return [functions, resolved]

    def written_through(self, fn: Callable) -> frozenset[str]:
        """The parameters of gtscript function ``fn`` that a call may write when they are
        bound to a name: those it never plain-assigns but writes otherwise (``x += ...``,
        ``x[0, 0, 0] -= ...``) or passes by name to a function that writes them.  Computed
        from the source before inlining; where a callee cannot be resolved the answer errs
        on the side of more (a parameter counted here but never written only costs a copy
        of an expression argument, never a value)."""
        known = self.through_cache.get(fn)
        if known is not None:
            return known
        info = function_info(fn)
        params = [p for p in info.signature.parameters if p not in info.plain_assigned]
        if fn in self.inlining or fn in self.through_pending:  # recursive: refused later
            return frozenset(params)
        self.through_pending.add(fn)
        try:
            through = self._written_through(fn, info, set(params))
        finally:
            self.through_pending.discard(fn)
        self.through_cache[fn] = through
        return through

    def _written_through(
        self, fn: Callable, info: GTScriptFunction, params: set[str]
    ) -> frozenset[str]:
        through: set[str] = set()
        scope = None
        for node in itertools.chain.from_iterable(ast.walk(stmt) for stmt in info.body):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                through.add(node.id)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
                root = node.target.value
                root = root.value if isinstance(root, ast.Subscript) else root
                if isinstance(root, ast.Name):
                    through.add(root.id)
            elif isinstance(node, ast.Call) and any(
                isinstance(arg, ast.Name) and arg.id in params
                for arg in [*node.args, *(kw.value for kw in node.keywords)]
            ):
                if scope is None:
                    scope = self._analysis_scope(fn, info)
                through |= self._passed_through(scope, node, params)
        return frozenset(through & params)

    def _analysis_scope(self, fn: Callable, info: GTScriptFunction) -> _Scope | None:
        """A scope of ``fn``'s body that resolves its callees (None if its externals do not
        resolve: inlining reports that)."""
        try:
            imported = self._resolve_imports(info.source, info.imports)
        except GTScriptSyntaxError:
            return None
        placeholder = ("const", 0, 0, 0)
        return _Scope(
            source=info.source,
            func=fn,
            imported=imported,
            bindings={p: placeholder for p in info.signature.parameters},
            renames={name: name for name in info.assigned},
            function=info.name,
        )

    def _passed_through(self, scope: _Scope | None, call: ast.Call, params: set[str]) -> set[str]:
        """The parameters among ``params`` that ``call`` passes by name to a gtscript
        function that writes them (all it passes by name if the callee does not resolve)."""
        named = [
            (param, arg.id)
            for param, arg in self._call_arguments(scope, call)
            if isinstance(arg, ast.Name) and arg.id in params
        ]
        if any(param is None for param, _ in named):
            return {name for _, name in named}
        if not named or named[0][0] == "":
            return set()  # a builtin or a cast writes nothing
        inner = self.written_through(self.callee(scope, call.func)[1])
        return {name for param, name in named if param in inner}

    def _call_arguments(self, scope: _Scope | None, call: ast.Call) -> list[tuple]:
        """``(parameter, argument node)`` of a call of a gtscript function; the parameter is
        None where the callee or the binding is not known."""
        unknown = [(None, arg) for arg in [*call.args, *(kw.value for kw in call.keywords)]]
        if _construct_name(call) in (_INLINED, "compile_assert"):
            return [("", arg) for _, arg in unknown]  # compile-time: writes nothing
        if scope is None:
            return unknown
        try:
            kind, target = self.callee(scope, call.func)
        except GTScriptSyntaxError:
            return unknown
        if kind != "function":
            return [("", arg) for _, arg in unknown]
        try:
            bound = function_info(target).signature.bind(
                *call.args, **{kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
            )
        except (TypeError, GTScriptSyntaxError):  # a lazy function's error: inlining reports it
            return unknown
        return list(bound.arguments.items())

    def bind_arguments(
        self, scope: _Scope, call: ast.Call, info: GTScriptFunction, pre: list[tuple]
    ) -> tuple[dict[str, tuple], set[str]]:
        """The arguments of a call, translated, by parameter name (defaults included), and
        the parameters whose argument is a plain name (GT4Py passes those by name)."""
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
        nodes = info.signature.bind(*call.args, **{kw.arg: kw.value for kw in call.keywords})
        by_name = {p for p, arg in nodes.arguments.items() if isinstance(arg, ast.Name)}
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
        return bindings, by_name
