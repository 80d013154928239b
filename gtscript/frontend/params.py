"""The stencil's parameters: annotations (``Field[...]``, scalar dtypes) -> tree entries."""

from __future__ import annotations

import ast
from typing import Any, Callable

from .. import _core, lang
from ..errors import (
    GTScriptDefinitionError,
)
from .consteval import _BUILTINS as _CONST_BUILTINS
from .consteval import ConstEvalError, ConstEvaluator
from .externals import _closure_namespace
from .gt4py_objects import from_gt4py
from .source import _Source
from .syntax import _INLINED


def _evaluate_annotation(func: Callable, annotation: Any, dtypes: dict) -> Any:
    """A string annotation (``from __future__ import annotations``) evaluated in the function's
    namespace; a dtype placeholder (``"T"`` with ``dtypes={"T": ...}``) as its name; other
    annotations as they are."""
    if not isinstance(annotation, str):
        return annotation
    if annotation in lang.DTYPES or annotation in dtypes:
        return annotation
    # evaluated like every other build-time expression (consteval: never with eval), so a
    # string annotation cannot run code either
    try:
        tree = ast.parse(annotation.strip(), mode="eval")
    except SyntaxError as exc:
        raise GTScriptDefinitionError(f"the annotation {annotation!r} is not an expression") from exc
    closure = _closure_namespace(func)

    def lookup(name: str, node: ast.Name) -> Any:
        if name in closure:
            return closure[name]
        if name in func.__globals__:
            return func.__globals__[name]
        if name in _CONST_BUILTINS:
            return _CONST_BUILTINS[name]
        raise ConstEvalError(f"unknown name {name!r}", node)

    try:
        return ConstEvaluator(lookup, _INLINED).eval(tree.body)
    except ConstEvalError as exc:
        raise GTScriptDefinitionError(f"the annotation {annotation!r}: {exc.message}") from None


def resolve_placeholder(dtype: Any, dtypes: dict) -> str:
    """The dtype name of ``dtype``, through the build's ``dtypes=`` when it is a placeholder
    name (``Field["T"]``, a scalar annotated ``"T"``)."""
    if isinstance(dtype, str) and dtype in dtypes:
        if isinstance(dtypes[dtype], lang.FieldDescriptor):
            raise GTScriptDefinitionError(
                f"{dtype!r} names a Field type in dtypes= ({dtypes[dtype]!r}), not a dtype: "
                f"use it as a whole annotation (a: {dtype!r}, or t: {dtype} for a temporary)"
            )
        return lang.resolve_dtype(dtypes[dtype])
    if isinstance(dtype, str) and dtype not in lang.DTYPES and dtype not in ("float", "int"):
        raise GTScriptDefinitionError(
            f"dtype {dtype!r} is a placeholder: give its dtype when building, "
            f"dtypes={{{dtype!r}: np.float64}}"
        )
    return lang.resolve_dtype(dtype)


def _parameters(source: _Source, func: Callable, dtypes: dict | None = None) -> list[tuple]:
    """The ``("field", ...)`` / ``("scalar", ...)`` entries of the stencil's parameters;
    ``dtypes`` resolves dtype placeholders."""
    args = source.node.args
    for star in (args.vararg, args.kwarg):
        if star is not None:
            raise source.error(
                GTScriptDefinitionError,
                "*args and **kwargs are not allowed in a stencil definition",
                star,
            )
    nodes = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if len(nodes) > _core.MAX_PARAMETERS:
        raise source.error(
            GTScriptDefinitionError,
            f"the stencil has {len(nodes)} parameters; at most {_core.MAX_PARAMETERS} are allowed "
            f"(group fields into data dimensions, Field[(np.float64, (n,))], to pass more)",
            nodes[_core.MAX_PARAMETERS],
        )
    params = []
    for node in nodes:
        params.append(_parameter(source, func, node, dtypes or {}))
    return params


def _positional_names(func: Callable) -> tuple:
    code = func.__code__
    return code.co_varnames[:code.co_argcount]


def _parameter(source: _Source, func: Callable, node: ast.arg, dtypes: dict) -> tuple:
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
        # GT4Py's Field[...] (a definition written for GT4Py) is read as gtscript's
        annotation = from_gt4py(_evaluate_annotation(func, func.__annotations__[name], dtypes))
        if isinstance(annotation, str) and isinstance(dtypes.get(annotation), lang.FieldDescriptor):
            annotation = dtypes[annotation]  # dtypes={"T": Field[IJ, np.float64]}, a: "T"
        if isinstance(annotation, lang.FieldDescriptor):
            dtype = resolve_placeholder(annotation.dtype, dtypes)
            return ("field", name, dtype, annotation.axes, annotation.data_dims)
        if annotation is lang.Field:
            raise GTScriptDefinitionError("Field needs a dtype: write Field[np.float64]")
        entry = ("scalar", name, resolve_placeholder(annotation, dtypes))
        # A default (``*, weight: float = 2.0``) is used by calls that omit the argument.
        defaults = {**dict(zip(_positional_names(func)[::-1], (func.__defaults__ or ())[::-1])),
                    **(func.__kwdefaults__ or {})}
        return entry + (defaults[name],) if name in defaults else entry
    except Exception as exc:  # a bad annotation: report it at the parameter
        message = exc.msg if isinstance(exc, SyntaxError) else f"{type(exc).__name__}: {exc}"
        raise source.error(
            GTScriptDefinitionError, f"parameter {name!r}: {message}", node
        ) from None
