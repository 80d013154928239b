"""The GTScript frontend: Python function -> definition tree (plain tuples) for the C core.

``parse_definition(func, externals)`` reads the definition's source with :mod:`inspect`, walks
its :mod:`ast`, folds externals and compile-time conditions (``__INLINED``,
``compile_assert``), inlines ``@gtscript.function`` calls, and returns the definition tree
described in ``docs/architecture.md`` ("The definition tree (Python -> C)").  Everything the
language does not contain is rejected here, with the source line; the semantic checks (types,
extents, the parallel model, unknown names) belong to the C core.

The modules follow the stages:

* ``source``: source capture (inspect, notebook cells, positions);
* ``externals``, ``functions``, ``params``: externals and free names, ``@gtscript.function``
  records, parameter annotations;
* ``translator`` and its mixins ``names`` (name resolution, compile-time values),
  ``structure`` (computations, intervals, regions), ``statements``, ``expressions``,
  ``calls`` (builtins, casts, inlining): the AST walk that produces the tree;
* ``vectors``: whole-vector and matrix expressions on data dimensions, unrolled per element
  on the finished tree;
* ``fingerprint``: the decorator's cheap pre-key of a definition;
* ``syntax``: the operator tables and AST helpers they share.

Conventions of the tree this package produces:

* positions are ``line, col``: absolute line numbers in the stencil's file, 0-based columns
  (characters, not UTF-8 bytes).  Statements and expressions inlined from a gtscript function
  defined in another file carry the position of the call in the stencil.
* ``source_lines`` are the lines of the stencil's file without their line endings.
* ``firstlineno`` is the first line of the definition, decorators included (as in
  ``func.__code__.co_firstlineno``).
* the locals of an inlined function become temporaries named ``__fn_<function>_<n>_<local>``.
"""

from __future__ import annotations

from typing import Callable

from .._deep import run_deep
from .fingerprint import definition_fingerprint
from .functions import GTScriptFunction, function, is_gtscript_function, lazy_function
from .params import _parameters
from .source import _capture_source
from .syntax import GTSCRIPT_FUNCTION_ATTR
from .translator import _Translator

__all__ = [
    "GTSCRIPT_FUNCTION_ATTR",
    "GTScriptFunction",
    "definition_fingerprint",
    "function",
    "is_gtscript_function",
    "lazy_function",
    "parse_definition",
]


def parse_definition(
    func: Callable, externals: dict | None = None, dtypes: dict | None = None
) -> dict:
    """The definition tree of stencil definition ``func`` (see docs/architecture.md);
    ``dtypes`` gives the dtype of each placeholder name (``Field["T"]``)."""
    # The translation recurses over the AST and into every gtscript function it inlines: run
    # it where deep definitions (a 1,000-term sum, a chain of 800 functions) fit.
    return run_deep(_parse_definition, func, externals, dtypes)


def _parse_definition(func: Callable, externals: dict | None, dtypes: dict | None) -> dict:
    externals = dict(externals or {})
    dtypes = dict(dtypes or {})
    source = _capture_source(func)
    params = _parameters(source, func, dtypes)
    translator = _Translator(source, func, externals, params, dtypes)
    body = translator.stencil()
    return {
        "name": func.__name__,
        "filename": source.filename,
        "firstlineno": source.firstlineno,
        "source_lines": source.file_lines,
        "params": params,
        "body": body,
    }
