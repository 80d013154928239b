"""Externals and free names: ``from __externals__ import X`` collected from a body, and the
values of a function's closure and global names."""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import (
    GTScriptSyntaxError,
)
from .source import _Source
from .syntax import _EXTERNALS_MODULE, _GTSCRIPT_MODULE, GTSCRIPT_FUNCTION_ATTR


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


def _pseudo_module(node: ast.ImportFrom, name: str) -> bool:
    """Whether ``node`` imports from the pseudo-module ``name`` (``__externals__`` or
    ``__gtscript__``), spelled alone or through a package or an alias of the gtscript module:
    ``gt4py.cartesian.__externals__``, ``gtscript.__externals__``, ``gs.__externals__``.
    The definition is never executed, so only the last component of the path matters."""
    return node.level == 0 and node.module is not None and node.module.split(".")[-1] == name


def _external_imports(source: _Source, node: ast.ImportFrom) -> list[_ExternalImport]:
    """The externals imported by ``node``; ``from __gtscript__ import ...`` imports none."""
    if _pseudo_module(node, _GTSCRIPT_MODULE):
        return []
    if not _pseudo_module(node, _EXTERNALS_MODULE):
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


_MISSING = object()


def _free_value(func: Callable, name: str) -> Any:
    """The value of ``name`` as a free variable of ``func`` (closure, then globals), or
    ``_MISSING``.  A gtscript function answers with what the name meant when it was decorated
    (as in GT4Py); a name it could not resolve then is looked up now."""
    captured = getattr(getattr(func, GTSCRIPT_FUNCTION_ATTR, None), "captured", None)
    if captured is not None and name in captured:
        return captured[name]
    return _current_free_value(func, name)


def _current_free_value(func: Callable, name: str) -> Any:
    """The value ``name`` has now as a free variable of ``func``, or ``_MISSING``."""
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
