"""The names visible while one function body is translated."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import (
    GTScriptSyntaxError,
)
from .source import _Source


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
    # function params that are their argument by name: a write to one writes the argument
    aliases: frozenset[str] = frozenset()
    origin: tuple[int, int] | None = None  # the position of everything (callee in another file)
    function: str | None = None  # the gtscript function's name; None for the stencil

    def position(self, node: ast.AST) -> tuple[int, int]:
        return self.origin if self.origin is not None else self.source.position(node)

    def error(
        self, cls: type[GTScriptSyntaxError], message: str, node: ast.AST
    ) -> GTScriptSyntaxError:
        return self.source.error(cls, message, node)
