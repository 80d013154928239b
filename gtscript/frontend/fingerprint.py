"""A cheap key of everything a definition tree depends on, computed before parsing so the
decorator can find an already built stencil without translating the definition again."""

from __future__ import annotations

import hashlib
import inspect
import marshal
import os
import types
import weakref
from typing import Any, Callable

import numpy as np

from .. import lang
from .._deep import run_deep
from .externals import _MISSING, _free_value
from .functions import GTScriptFunction, is_gtscript_function
from .syntax import GTSCRIPT_FUNCTION_ATTR


def definition_fingerprint(func: Callable, externals: dict | None = None) -> str:
    """A cheap, stable key of everything ``parse_definition(func, externals)`` depends on: the
    source text, the annotations, the externals, and the global values the definition
    references (the gtscript functions it calls fingerprinted recursively).  Equal
    fingerprints give equal definition trees (up to line numbers)."""
    try:
        return _fingerprint(func, externals)
    except RecursionError:  # a chain of hundreds of gtscript functions: pure, so run it again
        return run_deep(_fingerprint, func, externals)


def _fingerprint(func: Callable, externals: dict | None) -> str:
    names: set[str] = set()  # the attribute names every function reached spells
    parts = [_function_token(func, set(), names)]
    tokens = {}
    for name, value in (externals or {}).items():  # first what may reach more functions
        if not isinstance(value, (types.ModuleType, type)):
            tokens[name] = _value_token(value, set(), 0, names)
    for name, value in (externals or {}).items():
        if isinstance(value, (types.ModuleType, type)):
            tokens[name] = _namespace_token(value, names, set(), 0)
    parts.extend(f"{name}={token}" for name, token in sorted(tokens.items()))
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


# inspect.getsource tokenises the whole file: remember its answer per code object, which is
# immutable (re-running a notebook cell or reloading a module makes a new one).
_source_by_code: "weakref.WeakKeyDictionary[types.CodeType, str]" = weakref.WeakKeyDictionary()


def _source_text(func: Callable) -> str:
    code = func.__code__
    text = _source_by_code.get(code)
    if text is None:
        text = _file_source_token(code)
    if text is None:
        try:
            text = inspect.getsource(func)
        except (OSError, TypeError):
            text = f"<no source {func.__module__}.{func.__qualname__}>"
        _source_by_code[code] = text
    return text


def _file_source_token(code: types.CodeType) -> str | None:
    """For a definition read from a file: the file's identity (inode, size, modification
    time) and the SHA-256 of the code object (bytecode, constants, names, line table), which
    stand for the source text the frontend reads at a fraction of the cost of
    ``inspect.getsource`` (it tokenises the file: ~3 ms in a fresh process). An edit of the
    file changes its modification time, so the token changes whenever the text may have.
    None when the source is not a file (a notebook cell, ``exec``): the text is used."""
    try:
        sb = os.stat(code.co_filename)
        digest = hashlib.sha256(marshal.dumps(code)).hexdigest()
    except (OSError, ValueError):
        return None
    return f"file {code.co_filename}:{sb.st_ino}:{sb.st_size}:{sb.st_mtime_ns} code {digest}"


def _function_token(func: Callable, seen: set[int], names: set[str] | None = None) -> str:
    """Source, annotations, defaults and referenced free values of ``func``."""
    if id(func) in seen:
        return f"<recursive {func.__qualname__}>"
    seen.add(id(func))
    info = getattr(func, GTSCRIPT_FUNCTION_ATTR, None)
    text = info.source.text if isinstance(info, GTScriptFunction) else _source_text(func)
    parts = [func.__qualname__, text]
    for name, annotation in sorted(func.__annotations__.items()):
        parts.append(f"ann {name}={_value_token(annotation, seen, 0)}")
    for default in func.__defaults__ or ():
        parts.append(f"default {_value_token(default, seen, 0)}")
    for name, default in sorted((func.__kwdefaults__ or {}).items()):
        parts.append(f"kwdefault {name}={_value_token(default, seen, 0)}")
    code = func.__code__
    if names is not None:
        names.update(code.co_names)
    for name in sorted(set(code.co_names) | set(code.co_freevars)):
        value = _free_value(func, name)
        if isinstance(value, (types.ModuleType, type)):
            parts.append(f"free {name}={_namespace_token(value, code.co_names, seen, 0)}")
        elif value is not _MISSING:
            parts.append(f"free {name}={_value_token(value, seen, 0, names)}")
    return "\n".join(parts)


#: Modules whose attributes a definition cannot change (numpy's dtypes, gtscript's language):
#: their classes enter by name.
_FIXED_MODULES = ("builtins", "numpy", "gtscript")


def _namespace_token(value: Any, names, seen: set[int], depth: int) -> str:
    """A module or class the definition reads attributes of (``const.GRAV``, ``Consts.CP``):
    its name and the values of its attributes that the code spells (``co_names`` holds
    attribute names too), nested modules and classes likewise, so that a changed constant in
    another module or class changes the fingerprint (a fresh process would otherwise find the
    definition tree lowered with the old value in the disk index)."""
    if isinstance(value, types.ModuleType):
        parts = [f"module:{value.__name__}"]
        namespace = value.__dict__
    else:
        if (getattr(value, "__module__", "") or "").split(".")[0] in _FIXED_MODULES:
            return _value_token(value, seen, depth)
        parts = [f"class:{value.__module__}.{value.__qualname__}"]
        namespace = {}
        for cls in reversed(value.__mro__[:-1]):  # the class's own attributes win
            namespace.update(cls.__dict__)
    if depth < 4:
        for name in sorted(set(names)):
            attr = namespace.get(name, _MISSING)
            if attr is _MISSING or name.startswith("__"):
                continue
            if isinstance(attr, (types.ModuleType, type)):
                parts.append(f"{name}={_namespace_token(attr, names, seen, depth + 1)}")
            else:
                parts.append(f"{name}={_value_token(attr, seen, 0)}")
    return "[" + ";".join(parts) + "]"


def _value_token(value: Any, seen: set[int], depth: int, names: set[str] | None = None) -> str:
    """A string that changes when ``value`` changes in a way a definition could observe."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, np.generic):
        return f"{type(value).__name__}:{value!r}"
    if is_gtscript_function(value):
        return "gtfunction:" + _function_token(value, seen, names)
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, np.ndarray):
        # by content: an array changed in place must not find the stencil built from it
        data = np.ascontiguousarray(value)
        if data.dtype.hasobject:
            return "ndarray:" + _value_token(data.tolist(), seen, depth + 1)
        digest = hashlib.sha256(data.view(np.uint8).reshape(-1).data).hexdigest()
        return f"ndarray:{data.dtype.str}:{data.shape}:{digest}"
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
    slots = _slot_values(value)
    if slots is not None:  # an object with __slots__: its repr may only show its id
        return f"{type(value).__qualname__}:" + _value_token(slots, seen, depth + 1)
    return f"{type(value).__qualname__}:{value!r}"


def _slot_values(value: Any) -> dict | None:
    """The ``__slots__`` attributes of ``value`` (None when its classes declare none)."""
    names: list[str] = []
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names.extend((slots,) if isinstance(slots, str) else slots)
    names = [name for name in names if name not in ("__weakref__", "__dict__")]
    if not names:
        return None
    return {name: getattr(value, name, None) for name in names}
