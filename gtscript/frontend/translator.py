"""The translator: one stencil definition (and the functions it calls) -> definition tree.
Its methods are grouped by what they translate, one mixin per module."""

from __future__ import annotations

import itertools
from typing import Callable

from .calls import _Calls
from .expressions import _Expressions
from .names import _Names
from .source import _Source
from .statements import _Statements
from .structure import _Structure


class _Translator(_Names, _Structure, _Statements, _Expressions, _Calls):
    """Translates one stencil definition (and the functions it calls) into the tree."""

    def __init__(
        self,
        source: _Source,
        func: Callable,
        externals: dict,
        params: list[tuple],
        dtypes: dict | None = None,
    ):
        self.source = source
        self.dtypes = dtypes or {}  # dtype placeholder name -> dtype
        self.func = func
        self.externals = externals
        self.params = {param[1]: param for param in params}
        self.field_axes = {p[1]: p[3] for p in params if p[0] == "field"}
        self.counter = itertools.count(1)
        self.inlining: list[Callable] = []  # the gtscript functions being inlined (recursion)
        # the parameters each gtscript function may write through (calls.written_through)
        self.through_cache: dict[Callable, frozenset[str]] = {}
        self.through_pending: set[Callable] = set()
        # per statement being translated: [gtscript calls not yet inlined, names they write]
        self.statement_writes: list[list] = []
