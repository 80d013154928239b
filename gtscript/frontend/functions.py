"""``@gtscript.function``: what it records about a function so stencils can inline it."""

from __future__ import annotations

import ast
import inspect
import itertools
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from ..errors import (
    GTScriptDefinitionError,
    GTScriptSyntaxError,
)
from .externals import (
    _MISSING,
    _current_free_value,
    _ExternalImport,
    _is_docstring,
    _scan_body,
)
from .source import _capture_source, _Source
from .syntax import GTSCRIPT_FUNCTION_ATTR

_F = TypeVar("_F", bound=Callable[..., Any])  # function() returns what it is given


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
    # names the body plain-assigns (`x = ...`, `x: T = ...`, `a, x = ...`): a parameter among
    # them is a local copy of its argument; any other parameter is its argument by name (a
    # write such as `x += ...` reaches the caller's field or variable, as in GT4Py)
    plain_assigned: frozenset[str]
    # the values of its global and closure names when it was decorated: a later rebinding
    # of a global does not change what the function means (GT4Py captures them the same way)
    captured: dict[str, Any]

    @property
    def name(self) -> str:
        return self.func.__name__


def function(func: _F) -> _F:
    """Mark ``func`` as a gtscript function: stencils that call it inline it.

    The source is read and checked now; the function is returned unchanged, with its record in
    the ``__gtscript_function__`` attribute.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.function
    ... def lap(f):
    ...     return f[1, 0, 0] + f[-1, 0, 0] + f[0, 1, 0] + f[0, -1, 0] - 4.0 * f[0, 0, 0]
    >>> @gtscript.stencil(backend="cpu")
    ... def laplacian(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = lap(inp)
    >>> inp = np.fromfunction(lambda i, j, k: i * i + j * j, (5, 5, 1))
    >>> out = np.zeros_like(inp)
    >>> laplacian(inp, out)
    >>> float(out[2, 2, 0])          # the Laplacian of i^2 + j^2 is 4
    4.0
    """
    # An error is the user's, located in their source: cut the frontend's frames from its
    # traceback (pytest and IPython also hide this frame, by __tracebackhide__).
    __tracebackhide__ = True
    try:
        return _record(func)
    except GTScriptSyntaxError as exc:
        raise exc.with_traceback(None) from None


def _record(func: _F) -> _F:
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
        plain_assigned=_plain_assigned(body),
        captured=_capture_free_names(func),
    )
    setattr(func, GTSCRIPT_FUNCTION_ATTR, info)
    return func


def _plain_assigned(body: list[ast.stmt]) -> frozenset[str]:
    """The names ``body`` plain-assigns anywhere (in branches and loops too): the targets of
    ``x = ...``, ``a, x = ...`` and ``x: T = ...``, as GT4Py's inliner collects them."""
    names: set[str] = set()
    for node in itertools.chain.from_iterable(ast.walk(stmt) for stmt in body):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            elts = target.elts if isinstance(target, ast.Tuple) else [target]
            names.update(elt.id for elt in elts if isinstance(elt, ast.Name))
    return frozenset(names)


def _capture_free_names(func: Callable) -> dict[str, Any]:
    """The current values of the global and closure names ``func``'s code refers to."""
    code = func.__code__
    captured = {}
    for name in (*code.co_names, *code.co_freevars):
        value = _current_free_value(func, name)
        if value is not _MISSING:
            captured[name] = value
    return captured


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


class _Pending:
    """The record of a ``lazy_function``: its source is read when a stencil first uses it,
    after its ``before_annotation`` hook and before its ``after_annotation`` hook."""

    __slots__ = ("before", "after")

    def __init__(self, before: Callable | None = None, after: Callable | None = None):
        self.before = before
        self.after = after


def lazy_function(
    func: Callable | None = None,
    *,
    before_annotation: Callable | None = None,
    after_annotation: Callable | None = None,
) -> Callable:
    """GT4Py's ``lazy_function``: mark ``func`` as a gtscript function whose source is read
    and checked when a stencil first inlines it, not now.

    Both spellings work: ``@lazy_function`` and GT4Py 1.2's ``@lazy_function()`` /
    ``@lazy_function(before_annotation=hook, after_annotation=hook)``, whose hooks are
    called with the function just before and just after it is read (once, at the first
    build that uses it). The decorated name stays the function itself (GT4Py binds it to a
    closure returning the function).

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.lazy_function
    ... def twice(x):
    ...     return 2.0 * x
    >>> @gtscript.stencil(backend="numpy")
    ... def double(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = twice(inp)
    >>> out = np.zeros((2, 2, 2))
    >>> double(np.full((2, 2, 2), 1.5), out)
    >>> float(out.max())
    3.0
    """
    if func is None:  # @lazy_function(...): the decorator
        return lambda f: lazy_function(
            f, before_annotation=before_annotation, after_annotation=after_annotation
        )
    setattr(func, GTSCRIPT_FUNCTION_ATTR, _Pending(before_annotation, after_annotation))
    return func


def function_info(func: Callable) -> GTScriptFunction:
    """The record of gtscript function ``func`` (made now for a lazy function)."""
    info = getattr(func, GTSCRIPT_FUNCTION_ATTR)
    if isinstance(info, _Pending):
        if info.before is not None:
            info.before(func)
        function(func)
        if info.after is not None:
            info.after(func)
        info = getattr(func, GTSCRIPT_FUNCTION_ATTR)
    return info


def is_gtscript_function(obj: Any) -> bool:
    """Whether ``obj`` was decorated with ``@gtscript.function`` (or ``lazy_function``)."""
    return isinstance(getattr(obj, GTSCRIPT_FUNCTION_ATTR, None), (GTScriptFunction, _Pending))
