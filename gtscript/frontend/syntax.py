"""What the language is made of, as the frontend sees it: operator tables, the hints given for
Python constructs outside GTScript, and small helpers on AST nodes and constant values."""

from __future__ import annotations

import ast
import enum
import types
from typing import Any

import numpy as np

from .. import lang
from ..errors import (
    GTScriptDefinitionError,
)

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
    "int16": "int16", "int8": "int8",
}  # fmt: skip

# Other spellings of the math builtins in NumPy and math (np.absolute, math.asin, ...).
_BUILTIN_ALIASES = {
    "absolute": "abs", "fabs": "abs", "minimum": "min", "fmin": "min", "maximum": "max",
    "fmax": "max", "power": "pow", "atan2": "arctan2", "rint": "round",
    **lang.BUILTIN_SPELLINGS,
}  # fmt: skip

# Modules whose attributes name math builtins and casts (np.sqrt, math.exp, gtscript.sqrt).
_BUILTIN_MODULES = ("numpy", "math", "gtscript", "gt4py")

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
    ast.Assert: "`assert` is not part of GTScript: use compile_assert(...) for compile-time checks",
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


def _number(value: Any) -> bool | int | float | None:
    """``value`` as a Python bool / int / float when it is a (NumPy) number, else None."""
    if isinstance(value, enum.Enum) and hasattr(type(value), lang.ENUM_ATTR):
        value = value.value  # a member of a @gtscript.enum class: its int
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
