"""The GTScript frontend: Python function -> definition tree (plain tuples) for the C core.

``parse_definition(func, externals)`` reads the definition's source with :mod:`inspect`, walks
its :mod:`ast`, folds externals and compile-time conditions (``__INLINED``,
``compile_assert``), inlines ``@gtscript.function`` calls, and returns the definition tree
described in ``docs/architecture.md`` ("The definition tree (Python -> C)").  Everything the
language does not contain is rejected here, with the source line; the semantic checks (types,
extents, the parallel model, unknown names) belong to the C core.

Conventions of the tree this module produces:

* positions are ``line, col``: absolute line numbers in the stencil's file, 0-based columns
  (characters, not UTF-8 bytes).  Statements and expressions inlined from a gtscript function
  defined in another file carry the position of the call in the stencil.
* ``source_lines`` are the lines of the stencil's file without their line endings.
* ``firstlineno`` is the first line of the definition, decorators included (as in
  ``func.__code__.co_firstlineno``).
* the locals of an inlined function become temporaries named ``__fn_<function>_<n>_<local>``.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import inspect
import itertools
import linecache
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from . import lang
from .errors import (
    GTScriptDefinitionError,
    GTScriptSemanticError,
    GTScriptSyntaxError,
    syntax_error,
)

__all__ = [
    "function",
    "is_gtscript_function",
    "parse_definition",
    "definition_fingerprint",
    "GTScriptFunction",
]

#: Attribute set by ``@gtscript.function`` on the functions it marks.
GTSCRIPT_FUNCTION_ATTR = "__gtscript_function__"

_EXTERNALS_MODULE = "__externals__"
_GTSCRIPT_MODULE = "__gtscript__"
_POLICIES = ("PARALLEL", "FORWARD", "BACKWARD")
_INLINED = "__INLINED"

# Operators of the language, as the tree spells them.
_BINOPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/",
    ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
}  # fmt: skip
_CMPOPS = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}  # fmt: skip
_BOOLOPS = {ast.And: "and", ast.Or: "or"}
_UNARYOPS = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not"}

# Casts by the name they are called with, and the function name they get in the tree.
_CASTS = {
    "float": "float64", "int": "int64", "bool": "bool", "bool_": "bool",
    "float64": "float64", "float32": "float32", "int64": "int64", "int32": "int32",
}  # fmt: skip

# Other spellings of the math builtins in NumPy and math (np.absolute, math.asin, ...).
_BUILTIN_ALIASES = {
    "absolute": "abs", "fabs": "abs", "minimum": "min", "fmin": "min", "maximum": "max",
    "fmax": "max", "power": "pow", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
    "atan2": "arctan2",
}  # fmt: skip

# Modules whose attributes name math builtins and casts (np.sqrt, math.exp, gtscript.sqrt).
_BUILTIN_MODULES = ("numpy", "math", "gtscript")

# AST nodes a compile-time expression may contain (beyond names, checked separately).
_COMPILE_TIME_NODES = (
    ast.Expression, ast.Constant, ast.Name, ast.Attribute, ast.Load, ast.BinOp, ast.UnaryOp,
    ast.BoolOp, ast.Compare, ast.IfExp, ast.Tuple, ast.operator, ast.unaryop, ast.boolop,
    ast.cmpop,
)  # fmt: skip

# Hints for Python constructs outside the language.
_STATEMENT_HINTS = {
    ast.For: "`for` loops are not part of GTScript: use `while` with a field condition, or a "
    "FORWARD/BACKWARD computation to iterate over K",
    ast.AsyncFor: "`for` loops are not part of GTScript",
    ast.Try: "`try` is not part of GTScript",
    ast.FunctionDef: "functions cannot be defined inside a stencil: define them at module "
    "level and decorate them with @gtscript.function",
    ast.AsyncFunctionDef: "functions cannot be defined inside a stencil",
    ast.ClassDef: "classes cannot be defined inside a stencil",
    ast.Import: "imports are not allowed here: use `from __externals__ import NAME`",
    ast.Global: "`global` is not part of GTScript",
    ast.Nonlocal: "`nonlocal` is not part of GTScript",
    ast.Delete: "`del` is not part of GTScript",
    ast.Raise: "`raise` is not part of GTScript",
    ast.Assert: "`assert` is not part of GTScript: use compile_assert(...) for compile-time "
    "checks",
    ast.Break: "`break` is not part of GTScript",
    ast.Continue: "`continue` is not part of GTScript",
}
_EXPRESSION_HINTS = {
    ast.Lambda: "`lambda` is not part of GTScript: use a @gtscript.function",
    ast.List: "list literals are not part of GTScript",
    ast.Tuple: "tuples are only allowed as `a, b = f(...)` with a gtscript function "
    "returning a tuple",
    ast.Set: "set literals are not part of GTScript",
    ast.Dict: "dict literals are not part of GTScript",
    ast.ListComp: "comprehensions are not part of GTScript",
    ast.SetComp: "comprehensions are not part of GTScript",
    ast.DictComp: "comprehensions are not part of GTScript",
    ast.GeneratorExp: "generator expressions are not part of GTScript",
    ast.NamedExpr: "`:=` is not part of GTScript",
    ast.JoinedStr: "strings are not part of GTScript",
    ast.Starred: "`*` unpacking is not part of GTScript",
    ast.Slice: "slices are not part of GTScript: index fields with integer offsets, "
    "e.g. f[1, 0, 0]",
    ast.Await: "`await` is not part of GTScript",
    ast.Yield: "`yield` is not part of GTScript",
    ast.YieldFrom: "`yield` is not part of GTScript",
}
_ALLOWED_STATEMENTS = (
    "allowed statements are assignments, `name: dtype = value` declarations, if/elif/else, "
    "while, `with horizontal(region[...])`, compile_assert(...) and pass"
)


# ============================================================================================
# Source capture
# ============================================================================================


@dataclass
class _Source:
    """The captured source of one Python function and the map from its AST back to the file."""

    name: str
    filename: str
    firstlineno: int  # file line of the first captured line (the first decorator, if any)
    node: ast.FunctionDef  # parsed from the dedented text: line 1 is `firstlineno`
    text_lines: list[str]  # the dedented captured lines
    shifts: list[int]  # characters the dedent removed from each captured line
    file_lines: list[str]  # every line of `filename`, without line ends

    def position(self, node: ast.AST) -> tuple[int, int]:
        """Absolute (line, 0-based character column) of ``node``."""
        index = node.lineno - 1
        text = self.text_lines[index] if index < len(self.text_lines) else ""
        # ast columns count UTF-8 bytes; the tree and SyntaxError count characters.
        col = len(text.encode("utf-8")[: node.col_offset].decode("utf-8", errors="ignore"))
        shift = self.shifts[index] if index < len(self.shifts) else 0
        return self.firstlineno + index, col + shift

    def error(
        self, cls: type[GTScriptSyntaxError], message: str, node: ast.AST
    ) -> GTScriptSyntaxError:
        """An error of class ``cls`` located at ``node``."""
        line, col = self.position(node)
        return syntax_error(cls, message, self.filename, line, col, self.file_lines)

    @property
    def text(self) -> str:
        return "\n".join(self.text_lines)


def _dedent(lines: list[str]) -> tuple[list[str], list[int]]:
    """Remove the first line's indentation from every line; return the lines and the number
    of characters removed from each (lines indented less, e.g. continuation lines or string
    contents, lose all their leading whitespace)."""
    first = lines[0].rstrip("\r\n")
    indent = first[: len(first) - len(first.lstrip())]
    text_lines, shifts = [], []
    for raw in lines:
        line = raw.rstrip("\r\n")
        cut = len(indent) if line.startswith(indent) else len(line) - len(line.lstrip())
        text_lines.append(line[cut:])
        shifts.append(cut)
    return text_lines, shifts


def _file_lines(func: Callable, filename: str, firstlineno: int, lines: list[str]) -> list[str]:
    """The lines of the definition's file (a notebook cell is found through linecache too).
    When they are unavailable or no longer match, the captured lines are placed at their
    line numbers instead."""
    captured = [line.rstrip("\r\n") for line in lines]
    file_lines = [line.rstrip("\r\n") for line in linecache.getlines(filename, func.__globals__)]
    if file_lines[firstlineno - 1 : firstlineno - 1 + len(captured)] == captured:
        return file_lines
    return [""] * (firstlineno - 1) + captured


def _capture_source(func: Callable) -> _Source:
    """Read and parse the source of ``func`` (a plain Python function)."""
    if not inspect.isfunction(func):
        raise TypeError(f"a GTScript definition must be a Python function, got {func!r}")
    try:
        lines, firstlineno = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise GTScriptDefinitionError(
            f"cannot read the source of {func.__qualname__!r} ({exc}): GTScript definitions "
            f"must be written in a file or a notebook cell; functions created with exec() or "
            f"typed into the plain interactive interpreter have no source to read"
        ) from None
    filename = inspect.getsourcefile(func) or inspect.getfile(func)
    text_lines, shifts = _dedent(lines)
    try:
        module = ast.parse("\n".join(text_lines), filename=filename)
    except SyntaxError as exc:
        raise GTScriptDefinitionError(
            f"cannot parse the source of {func.__qualname__!r}: {exc.msg}",
            (filename, firstlineno + (exc.lineno or 1) - 1, exc.offset, exc.text),
        ) from None
    node = module.body[0] if module.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != func.__name__:
        raise GTScriptDefinitionError(
            f"{func.__qualname__!r} must be defined with a `def` statement "
            f"(lambdas and async functions cannot be GTScript definitions)"
        )
    return _Source(
        name=func.__name__,
        filename=filename,
        firstlineno=firstlineno,
        node=node,
        text_lines=text_lines,
        shifts=shifts,
        file_lines=_file_lines(func, filename, firstlineno, lines),
    )


# ============================================================================================
# Body scanning, shared by stencils and gtscript functions
# ============================================================================================


@dataclass(frozen=True)
class _ExternalImport:
    """``from __externals__ import name as local``."""

    local: str
    name: str
    node: ast.ImportFrom


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _scan_body(source: _Source, body: list[ast.stmt]) -> tuple[list[_ExternalImport], set[str]]:
    """Collect the externals a body imports (anywhere in it) and the names it assigns."""
    imports: list[_ExternalImport] = []
    assigned: set[str] = set()
    for node in itertools.chain.from_iterable(ast.walk(stmt) for stmt in body):
        if isinstance(node, ast.ImportFrom):
            imports.extend(_external_imports(source, node))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            assigned.add(node.id)
    return imports, assigned


def _external_imports(source: _Source, node: ast.ImportFrom) -> list[_ExternalImport]:
    """The externals imported by ``node``; ``from __gtscript__ import ...`` imports none."""
    if node.level == 0 and node.module == _GTSCRIPT_MODULE:
        return []
    if node.level != 0 or node.module != _EXTERNALS_MODULE:
        raise source.error(
            GTScriptSyntaxError,
            f"imports are not allowed in GTScript, except `from {_EXTERNALS_MODULE} import NAME`",
            node,
        )
    if any(alias.name == "*" for alias in node.names):
        raise source.error(
            GTScriptSyntaxError,
            f"`from {_EXTERNALS_MODULE} import *` is not allowed: name the externals",
            node,
        )
    return [_ExternalImport(alias.asname or alias.name, alias.name, node) for alias in node.names]


def _construct_name(node: ast.AST) -> str | None:
    """``computation`` for ``computation(...)``, ``gtscript.computation(...)``, ``region`` for
    ``region``; None when ``node`` is not a (possibly qualified) name or call of one."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_call_to(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _construct_name(node) == name


def _dotted_parts(node: ast.AST) -> list[str] | None:
    """``["a", "b", "c"]`` for ``a.b.c``; None when ``node`` is not a dotted name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _is_builtin_module(obj: Any) -> bool:
    """Whether ``obj`` is NumPy, math or gtscript (their attributes name math builtins)."""
    return isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] in _BUILTIN_MODULES


# ============================================================================================
# @gtscript.function
# ============================================================================================


@dataclass
class GTScriptFunction:
    """What ``@gtscript.function`` records about a function, for inlining."""

    func: Callable
    source: _Source
    signature: inspect.Signature
    body: list[ast.stmt]  # the statements before the final return (docstring dropped)
    returns: list[ast.expr]  # the returned expressions (several for a tuple)
    imports: list[_ExternalImport]
    assigned: frozenset[str]  # names assigned in the body: they become temporaries

    @property
    def name(self) -> str:
        return self.func.__name__


def function(func: Callable) -> Callable:
    """Mark ``func`` as a gtscript function: stencils that call it inline it.

    The source is read and checked now; the function is returned unchanged, with its record in
    the ``__gtscript_function__`` attribute.
    """
    source = _capture_source(func)
    args = source.node.args
    for star in (args.vararg, args.kwarg):
        if star is not None:
            raise source.error(
                GTScriptDefinitionError,
                f"gtscript function {func.__name__!r}: *args and **kwargs are not supported",
                star,
            )
    body, returns = _function_parts(source)
    imports, assigned = _scan_body(source, body)
    info = GTScriptFunction(
        func=func,
        source=source,
        signature=inspect.signature(func),
        body=body,
        returns=returns,
        imports=imports,
        assigned=frozenset(assigned),
    )
    setattr(func, GTSCRIPT_FUNCTION_ATTR, info)
    return func


def _function_parts(source: _Source) -> tuple[list[ast.stmt], list[ast.expr]]:
    """Split a gtscript function's body into the statements before its final ``return`` and
    the returned expressions; a missing or early return is an error."""
    name = source.name
    body = source.node.body[1:] if _is_docstring(source.node.body[0]) else source.node.body
    last = body[-1] if body else source.node
    if not isinstance(last, ast.Return) or last.value is None:
        raise source.error(
            GTScriptDefinitionError,
            f"gtscript function {name!r} must end with `return <expression>`",
            last,
        )
    for node in itertools.chain.from_iterable(ast.walk(stmt) for stmt in body[:-1]):
        if isinstance(node, ast.Return):
            raise source.error(
                GTScriptSyntaxError, f"gtscript function {name!r} may only return at its end", node
            )
    returns = last.value.elts if isinstance(last.value, ast.Tuple) else [last.value]
    return body[:-1], list(returns)


def is_gtscript_function(obj: Any) -> bool:
    """Whether ``obj`` was decorated with ``@gtscript.function``."""
    return isinstance(getattr(obj, GTSCRIPT_FUNCTION_ATTR, None), GTScriptFunction)


# ============================================================================================
# Parameters
# ============================================================================================


_MISSING = object()


def _free_value(func: Callable, name: str) -> Any:
    """The value of ``name`` as a free variable of ``func`` (closure, then globals), or
    ``_MISSING``."""
    code = func.__code__
    if func.__closure__ and name in code.co_freevars:
        try:
            return func.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:  # an empty cell: the enclosing variable is not assigned yet
            return _MISSING
    return func.__globals__.get(name, _MISSING)


def _closure_namespace(func: Callable) -> dict[str, Any]:
    """The closure variables of ``func``, by name."""
    names = func.__code__.co_freevars
    values = {}
    for name, cell in zip(names, func.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:
            continue
    return values


def _evaluate_annotation(func: Callable, annotation: Any) -> Any:
    """A string annotation (``from __future__ import annotations``) evaluated in the function's
    namespace; other annotations as they are."""
    if not isinstance(annotation, str):
        return annotation
    if annotation in lang.DTYPES:
        return annotation
    return eval(annotation, func.__globals__, _closure_namespace(func))  # noqa: S307


def _parameters(source: _Source, func: Callable) -> list[tuple]:
    """The ``("field", ...)`` / ``("scalar", ...)`` entries of the stencil's parameters."""
    args = source.node.args
    for star in (args.vararg, args.kwarg):
        if star is not None:
            raise source.error(
                GTScriptDefinitionError,
                "*args and **kwargs are not allowed in a stencil definition",
                star,
            )
    params = []
    for node in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        params.append(_parameter(source, func, node))
    return params


def _parameter(source: _Source, func: Callable, node: ast.arg) -> tuple:
    """The tree entry of one parameter, from its (evaluated) annotation."""
    name = node.arg
    if name not in func.__annotations__:
        raise source.error(
            GTScriptDefinitionError,
            f"parameter {name!r} has no type annotation: annotate fields with Field[dtype] "
            f"(or Field[IJ, dtype], Field[K, dtype]) and scalars with float, int, bool, "
            f"np.float32, np.int32, ...",
            node,
        )
    try:
        annotation = _evaluate_annotation(func, func.__annotations__[name])
        if isinstance(annotation, lang.FieldDescriptor):
            return ("field", name, annotation.dtype, annotation.axes, annotation.data_dims)
        if annotation is lang.Field:
            raise GTScriptDefinitionError("Field needs a dtype: write Field[np.float64]")
        return ("scalar", name, lang.resolve_dtype(annotation))
    except Exception as exc:  # a bad annotation: report it at the parameter
        message = exc.msg if isinstance(exc, SyntaxError) else f"{type(exc).__name__}: {exc}"
        raise source.error(
            GTScriptDefinitionError, f"parameter {name!r}: {message}", node
        ) from None


# ============================================================================================
# The translator
# ============================================================================================


@dataclass
class _Scope:
    """The names visible while one function body (the stencil's or an inlined gtscript
    function's) is translated."""

    source: _Source
    func: Callable  # whose closure and globals resolve free names
    imported: dict[str, Any]  # externals imported by this body, by local name
    runtime: frozenset[str] = frozenset()  # stencil: parameters and assigned names
    bindings: dict[str, tuple] = field(default_factory=dict)  # function params -> arguments
    renames: dict[str, str] = field(default_factory=dict)  # function locals -> temporaries
    origin: tuple[int, int] | None = None  # the position of everything (callee in another file)
    function: str | None = None  # the gtscript function's name; None for the stencil

    def position(self, node: ast.AST) -> tuple[int, int]:
        return self.origin if self.origin is not None else self.source.position(node)

    def error(
        self, cls: type[GTScriptSyntaxError], message: str, node: ast.AST
    ) -> GTScriptSyntaxError:
        return self.source.error(cls, message, node)


def _number(value: Any) -> bool | int | float | None:
    """``value`` as a Python bool / int / float when it is a (NumPy) number, else None."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and not isinstance(value, np.longdouble):
        return float(value)
    return None


def _int_value(value: Any) -> int | None:
    number = _number(value)
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def _dtype_of(value: Any) -> str | None:
    """The dtype name of a scalar type (np.float32, float, np.dtype("int32"), ...), else None."""
    if not (isinstance(value, np.dtype) or isinstance(value, type)):
        return None
    try:
        return lang.resolve_dtype(value)
    except GTScriptDefinitionError:
        return None


def _expr_names(expr: Any) -> set[str]:
    """The field / temporary names an expression of the tree reads."""
    names: set[str] = set()
    if isinstance(expr, tuple) and expr and isinstance(expr[0], str):
        if expr[0] in ("name", "index", "absk"):
            names.add(expr[3])
        for item in expr[3:]:
            names |= _expr_names(item)
    elif isinstance(expr, (list, tuple)):
        for item in expr:
            names |= _expr_names(item)
    return names


class _Translator:
    """Translates one stencil definition (and the functions it calls) into the tree."""

    def __init__(self, source: _Source, func: Callable, externals: dict, params: list[tuple]):
        self.source = source
        self.func = func
        self.externals = externals
        self.params = {param[1]: param for param in params}
        self.field_axes = {p[1]: p[3] for p in params if p[0] == "field"}
        self.counter = itertools.count(1)
        self.inlining: list[Callable] = []  # the gtscript functions being inlined (recursion)

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
        if name in scope.imported:
            return "external", scope.imported[name]
        value = _free_value(scope.func, name)
        if value is not _MISSING:
            return "global", value
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
                if self.resolve_name(scope, sub.id)[0] not in ("external", "global"):
                    return False
        return True

    def compile_time_value(
        self, scope: _Scope, node: ast.expr, what: str, fallback: dict | None = None
    ) -> Any:
        """Evaluate ``node`` now, in an environment of externals, global constants and Python's
        builtins.  Names missing from the definition's namespace are looked up in
        ``fallback``.  Referencing a field, parameter or temporary is an error."""
        env: dict[str, Any] = {_INLINED: lambda value: value}  # inside, it is the identity
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
                raise scope.error(GTScriptSyntaxError, f"{what}: not a constant expression", sub)
            if not isinstance(sub, ast.Name) or sub.id == _INLINED:
                continue
            kind, value = self.resolve_name(scope, sub.id)
            if kind in ("binding", "local", "runtime"):
                raise scope.error(
                    GTScriptSyntaxError,
                    f"{what} is evaluated at compile time and can only use externals and "
                    f"constants, but {sub.id!r} is a field, parameter or temporary",
                    sub,
                )
            if kind == "missing":
                if fallback is not None and sub.id in fallback:
                    env[sub.id] = fallback[sub.id]
                elif not hasattr(builtins, sub.id):
                    raise scope.error(
                        GTScriptSyntaxError,
                        f"{what}: unknown name {sub.id!r} (externals must be imported with "
                        f"`from {_EXTERNALS_MODULE} import {sub.id}`)",
                        sub,
                    )
            else:
                env[sub.id] = value
        code = compile(ast.Expression(body=node), scope.source.filename, "eval")
        try:
            return eval(code, {"__builtins__": builtins}, env)  # noqa: S307
        except Exception as exc:
            raise scope.error(
                GTScriptSyntaxError,
                f"{what}: cannot evaluate `{ast.unparse(node)}` at compile time "
                f"({type(exc).__name__}: {exc})",
                node,
            ) from None

    def compile_time_int(self, scope: _Scope, node: ast.expr, what: str) -> int:
        value = _int_value(self.compile_time_value(scope, node, what))
        if value is None:
            raise scope.error(GTScriptSyntaxError, f"{what} must be an integer constant", node)
        return value

    def static_condition(self, scope: _Scope, test: ast.expr) -> bool | None:
        """The value of an if-condition known at compile time (``__INLINED(c)``, or only
        literals, externals and global constants), else None."""
        if _is_call_to(test, _INLINED):
            return bool(self.inlined_value(scope, test))
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
        if not self.compile_time_value(scope, call.args[0], "compile_assert(...)"):
            raise scope.error(
                GTScriptSemanticError,
                f"compile_assert failed: `{ast.unparse(call.args[0])}` is false",
                call,
            )

    # ---------------------------------------------------------------- stencil structure

    def stencil(self) -> list[tuple]:
        """The ``[computation, ...]`` body of the stencil."""
        scope = self.stencil_scope()
        computations = []
        for stmt in self.source.node.body:
            if _is_docstring(stmt) or isinstance(stmt, (ast.ImportFrom, ast.Pass)):
                continue  # externals were collected by stencil_scope
            if isinstance(stmt, ast.Expr) and _is_call_to(stmt.value, "compile_assert"):
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
            intervals = self._nested_intervals(scope, node.body)
        else:
            raise scope.error(
                GTScriptSyntaxError,
                "expected `with computation(PARALLEL|FORWARD|BACKWARD), interval(...):` or "
                "`with computation(...):` holding `with interval(...):` blocks",
                node,
            )
        policy = self.policy(scope, comp_call)
        return ("computation", *scope.position(comp_call), policy, intervals)

    def _nested_intervals(self, scope: _Scope, body: list[ast.stmt]) -> list[tuple]:
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
                    "blocks",
                    stmt,
                )
            intervals.append(self.interval(scope, calls[0], stmt.body))
        if not intervals:
            raise scope.error(GTScriptSyntaxError, "computation without an interval", body[0])
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
        """``("interval", line, col, start, end, stmts)``."""
        start, end = self.interval_bounds(scope, call)
        return ("interval", *scope.position(call), start, end, self.statements(scope, body))

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
            value = self.compile_time_value(
                scope, arg, "an interval bound", fallback={"K": lang.K}
            )
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
        if start[0] == end[0] and start[1] >= end[1]:
            raise scope.error(
                GTScriptSemanticError,
                f"empty interval: `{ast.unparse(call)}` contains no level",
                call,
            )
        return start, end

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
        handler(scope, node, out)

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
            pre.append(("assign", *scope.position(node), self.target(scope, target, pre), value))
        out.extend(pre)

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
        target = self.target(scope, node.target, pre)
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
        dtype = self.declared_dtype(scope, node.annotation)
        pre: list[tuple] = []
        value = None if node.value is None else self.expr(scope, node.value, pre)
        pre.append(("decl", *scope.position(node), scope.renames.get(name, name), dtype, value))
        out.extend(pre)

    def declared_dtype(self, scope: _Scope, annotation: ast.expr) -> str:
        """The dtype of a temporary declaration's annotation (a dtype or an IJK Field)."""
        value = self.compile_time_value(
            scope, annotation, "the annotation", fallback={"Field": lang.Field}
        )
        try:
            if isinstance(value, lang.FieldDescriptor):
                if value.axes != "IJK" or value.data_dims:
                    raise GTScriptDefinitionError(
                        "temporaries are IJK fields without data dimensions"
                    )
                return value.dtype
            return lang.resolve_dtype(value)
        except GTScriptDefinitionError as exc:
            raise scope.error(GTScriptDefinitionError, exc.msg, annotation) from None

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
        call = calls[0]
        if not call.args or call.keywords:
            raise scope.error(
                GTScriptSyntaxError, "horizontal takes region[...] arguments", call
            )
        boxes = [self.region_box(scope, arg) for arg in call.args]
        body = self.statements(scope, node.body)
        out.append(("region", *scope.position(node), boxes, body))

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
        """``I[0]`` -> (0, 0), ``I[-1]`` -> (1, -1), ``I[0] - 1`` -> (0, -1), None -> None."""
        axes = {"I": lang.I, "J": lang.J, "K": lang.K}
        value = self.compile_time_value(scope, node, "a region bound", fallback=axes)
        if value is None:
            return None
        if not isinstance(value, lang.AxisIndex) or value.axis != axis:
            raise scope.error(
                GTScriptSyntaxError,
                f"expected a bound on axis {axis} such as {axis}[0], {axis}[-1] or "
                f"{axis}[0] + 1, got {value!r}",
                node,
            )
        return value.level, value.offset

    # ---------------------------------------------------------------- assignment targets

    def target(self, scope: _Scope, node: ast.expr, pre: list[tuple]) -> tuple:
        """The ``name`` / ``index`` expression written by an assignment."""
        if isinstance(node, ast.Name):
            kind, value = self.resolve_name(scope, node.id)
            if kind == "external":
                raise scope.error(
                    GTScriptSyntaxError, f"cannot assign to external {node.id!r}", node
                )
            name = value if kind == "local" else node.id
            return ("name", *scope.position(node), name)
        if isinstance(node, ast.Subscript):
            root = node.value.value if isinstance(node.value, ast.Subscript) else node.value
            if isinstance(root, ast.Name) and root.id in scope.bindings:
                raise scope.error(
                    GTScriptSyntaxError,
                    f"gtscript function {scope.function!r} cannot write to its parameter "
                    f"{root.id!r}: return the value instead",
                    node,
                )
            return self.subscript(scope, node, pre)
        raise scope.error(
            GTScriptSyntaxError,
            "can only assign to a name or an indexed field (f[0, 0, -1] = ...)",
            node,
        )

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

    def expr_Name(self, scope: _Scope, node: ast.Name, pre: list[tuple]) -> tuple:
        kind, value = self.resolve_name(scope, node.id)
        pos = scope.position(node)
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
        """``ns.NAME`` on an external (or global) namespace object -> a constant."""
        value = self.dotted_value(scope, node)
        return self.constant(scope, node, value, f"`{ast.unparse(node)}`")

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
                value = getattr(value, attr)
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
        elif not isinstance(node.value, ast.Subscript):
            return self.field_access(scope, node, pre)
        else:
            access = self.field_access(scope, node.value, pre)
        if access[0] not in ("index", "absk"):
            raise scope.error(
                GTScriptSyntaxError, "only fields can take a data index", node
            )
        if access[5]:
            raise scope.error(GTScriptSyntaxError, "a data index is given twice", node)
        return (*access[:5], self.data_index(scope, node.slice))

    def data_index(self, scope: _Scope, node: ast.expr) -> tuple[int, ...]:
        indices = node.elts if isinstance(node, ast.Tuple) else [node]
        values = []
        for index in indices:
            value = self.compile_time_int(scope, index, "a data index")
            if value < 0:
                raise scope.error(GTScriptSyntaxError, "data indices must be >= 0", index)
            values.append(value)
        return tuple(values)

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
        offsets = self.offsets(scope, node, self.field_axes.get(field_name, "IJK"), pre)
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
        indices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for index in indices:
            if isinstance(index, ast.Slice):
                raise scope.error(GTScriptSyntaxError, _EXPRESSION_HINTS[ast.Slice], index)
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
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise scope.error(
                GTScriptSyntaxError,
                "this operator is not part of GTScript (use + - * / // % **)",
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
            f"casts (float, int, bool, np.float32, np.float64, np.int32, np.int64) and "
            f"functions decorated with @gtscript.function can be called",
            node,
        )

    # ---------------------------------------------------------------- inlining

    def inline(self, scope: _Scope, call: ast.Call, fn: Callable, pre: list[tuple]) -> list[tuple]:
        """Inline a call of gtscript function ``fn``: its statements go to ``pre``; the
        returned expressions are returned."""
        info: GTScriptFunction = getattr(fn, GTSCRIPT_FUNCTION_ATTR)
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
            raise scope.error(
                GTScriptSyntaxError, f"calling {info.name!r}: {exc}", call
            ) from None
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


# ============================================================================================
# Entry points
# ============================================================================================


def parse_definition(func: Callable, externals: dict | None = None) -> dict:
    """The definition tree of stencil definition ``func`` (see docs/architecture.md)."""
    externals = dict(externals or {})
    source = _capture_source(func)
    params = _parameters(source, func)
    translator = _Translator(source, func, externals, params)
    body = translator.stencil()
    return {
        "name": func.__name__,
        "filename": source.filename,
        "firstlineno": source.firstlineno,
        "source_lines": source.file_lines,
        "params": params,
        "body": body,
    }


def definition_fingerprint(func: Callable, externals: dict | None = None) -> str:
    """A cheap, stable key of everything ``parse_definition(func, externals)`` depends on: the
    source text, the annotations, the externals, and the global values the definition
    references (the gtscript functions it calls fingerprinted recursively).  Equal
    fingerprints give equal definition trees (up to line numbers)."""
    parts = [_function_token(func, set())]
    for name, value in sorted((externals or {}).items()):
        parts.append(f"{name}={_value_token(value, set(), 0)}")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


# inspect.getsource tokenises the whole file: remember its answer per code object, which is
# immutable (re-running a notebook cell or reloading a module makes a new one).
_source_by_code: "weakref.WeakKeyDictionary[types.CodeType, str]" = weakref.WeakKeyDictionary()


def _source_text(func: Callable) -> str:
    code = func.__code__
    text = _source_by_code.get(code)
    if text is None:
        try:
            text = inspect.getsource(func)
        except (OSError, TypeError):
            text = f"<no source {func.__module__}.{func.__qualname__}>"
        _source_by_code[code] = text
    return text


def _function_token(func: Callable, seen: set[int]) -> str:
    """Source, annotations, defaults and referenced free values of ``func``."""
    if id(func) in seen:
        return f"<recursive {func.__qualname__}>"
    seen.add(id(func))
    info = getattr(func, GTSCRIPT_FUNCTION_ATTR, None)
    text = info.source.text if isinstance(info, GTScriptFunction) else _source_text(func)
    parts = [func.__qualname__, text]
    for name, annotation in sorted(func.__annotations__.items()):
        parts.append(f"ann {name}={_value_token(annotation, seen, 0)}")
    for default in (func.__defaults__ or ()):
        parts.append(f"default {_value_token(default, seen, 0)}")
    for name, default in sorted((func.__kwdefaults__ or {}).items()):
        parts.append(f"kwdefault {name}={_value_token(default, seen, 0)}")
    code = func.__code__
    for name in sorted(set(code.co_names) | set(code.co_freevars)):
        value = _free_value(func, name)
        if value is not _MISSING:
            parts.append(f"free {name}={_value_token(value, seen, 0)}")
    return "\n".join(parts)


def _value_token(value: Any, seen: set[int], depth: int) -> str:
    """A string that changes when ``value`` changes in a way a definition could observe."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, np.generic):
        return f"{type(value).__name__}:{value!r}"
    if is_gtscript_function(value):
        return "gtfunction:" + _function_token(value, seen)
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, np.ndarray):
        return f"ndarray:{id(value)}"
    if isinstance(value, (type, np.dtype, lang.FieldDescriptor, lang.AxisIndex, lang.Axis,
                          lang.IterationPolicy)):  # fmt: skip
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)):
        module = getattr(value, "__module__", "")
        return f"function:{module}.{getattr(value, '__qualname__', value)}"
    if depth > 4:
        return f"{type(value).__name__}:{id(value)}"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_value_token(v, seen, depth + 1) for v in value) + ")"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: repr(kv[0]))
        return "{" + ",".join(f"{k!r}:{_value_token(v, seen, depth + 1)}" for k, v in items) + "}"
    if hasattr(value, "__dict__"):  # a namespace object: its attributes
        return f"{type(value).__qualname__}:" + _value_token(vars(value), seen, depth + 1)
    return f"{type(value).__qualname__}:{value!r}"
