"""A cheap key of everything a definition tree depends on, computed before parsing so the
decorator can find an already built stencil without translating the definition again.

The key is a sound over-approximation of what the frontend reads: the source text of every
function it reaches (for a definition in a file, the SHA-256 of the file's bytes), and the
value, by content, of every name those texts spell (an identifier anywhere in the text:
statements, annotations, strings, comments) that the function's closure or globals define,
following attributes the texts spell through modules, classes and objects to any depth.
What cannot be fingerprinted by content - a property or another computed attribute, an
object of unknown kind, a structure nested deeper than ``_MAX_DEPTH`` - makes the key None:
the decorator then runs the frontend (a miss), never reuses a stencil (docs/caching.md)."""

from __future__ import annotations

import abc
import collections
import enum
import hashlib
import inspect
import io
import linecache
import marshal
import os
import re
import stat
import sys
import tokenize
import types
import weakref
from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np

from .. import lang
from .._deep import run_deep
from .externals import _MISSING, _closure_namespace
from .functions import GTScriptFunction, _Pending, is_gtscript_function
from .gt4py_objects import from_gt4py, is_gt4py_function, lazy_hooks, lazy_target
from .syntax import GTSCRIPT_FUNCTION_ATTR


class Unfingerprintable(Exception):
    """Something the frontend may read that has no content key: the lookup must miss."""


#: Deeper than this (attribute chains, nested containers) a value is not followed: a miss.
_MAX_DEPTH = 32

#: Packages whose modules and classes a definition does not change in place (their
#: attributes are the language, NumPy's dtypes and functions, the standard library's): they
#: enter by name. (Their instances do not: a ``types.SimpleNamespace`` enters by content.)
_FIXED_PACKAGES = frozenset(("numpy", "gtscript", "gt4py", *sys.stdlib_module_names))
#: Packages whose objects are the language's own (GT4Py's axes, field descriptors, iteration
#: policies; gtscript's are in gtscript.lang): immutable, they enter by their repr.
_LANGUAGE_PACKAGES = frozenset(("gt4py",))
_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_METACLASSES = (type, abc.ABCMeta)
#: Data descriptors whose value is stored content (slots, namedtuple fields).
_STORED = (types.MemberDescriptorType, type(vars(collections.namedtuple("_T", "a"))["a"]))


def definition_fingerprint(func: Callable, externals: dict | None = None) -> str | None:
    """A cheap, stable key of everything ``parse_definition(func, externals)`` depends on: the
    source text, the annotations, the externals, and the values of the names the definition
    spells (the gtscript functions it calls fingerprinted recursively).  Equal fingerprints
    give equal definition trees (up to line numbers).  None when something the frontend may
    read cannot be fingerprinted by content: the caller must run the frontend."""
    try:
        try:
            return _fingerprint(func, externals)
        except RecursionError:  # a chain of hundreds of gtscript functions: pure, so again
            return run_deep(_fingerprint, func, externals)
    except Unfingerprintable:
        return None


def _fingerprint(func: Callable, externals: dict | None) -> str:
    # Attributes are followed only where a reached text spells them, and reaching a gtscript
    # function adds the names its text spells: a pass whose names grew is run again (the
    # definition's own names are known before the first).
    source = _source(func)
    names = set(_own_names(func, source[1]))  # the definition's own names
    while True:
        count = len(names)
        parts = [_function_token(func, set(), names, source)]
        for name, value in sorted((externals or {}).items()):
            parts.append(f"{name}={_value_token(value, names, [])}")
        if len(names) == count:
            break
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


# ------------------------------------------------------------------------- source texts

_IDENTIFIER = re.compile(r"[^\W\d]\w*")


@lru_cache(maxsize=4096)
def _spelled(text: str) -> frozenset[str]:
    """Every identifier ``text`` spells, in code, strings (string annotations) and comments."""
    return frozenset(_IDENTIFIER.findall(text))


# inspect.getsource tokenises the whole file: remember its answer per code object, which is
# immutable (re-running a notebook cell makes a new one). Only for code with no file.
_source_by_code: "weakref.WeakKeyDictionary[types.CodeType, str]" = weakref.WeakKeyDictionary()
_code_digests: "weakref.WeakKeyDictionary[types.CodeType, str]" = weakref.WeakKeyDictionary()


def _source_text(func: Callable) -> tuple[str, str]:
    """``(token, text)``: what stands for the function's source in the key, and the text of
    its definition whose identifiers are followed."""
    code = func.__code__
    found = _file_source(code)
    if found is not None:
        return found
    text = _source_by_code.get(code)
    if text is None:
        try:
            text = inspect.getsource(func)
        except (OSError, TypeError):
            # made with exec(): the text it carries (GT4Py's __exec_source__), else nothing;
            # neither is remembered, since the attribute may be set after this first look
            exec_source = getattr(func, "__exec_source__", None)
            if isinstance(exec_source, str):
                return exec_source, exec_source
            text = f"<no source {func.__module__}.{func.__qualname__}>"
            return text, text
        _source_by_code[code] = text
    return text, text


#: ``(file name, SHA-256 of its bytes, first line) -> text of the definition`` and
#: ``file name -> (SHA-256, decoded text)``, for files seen before.
_blocks: dict[tuple[str, str, int], str] = {}
_texts: dict[str, tuple[str, str]] = {}
#: ``file name -> (linecache's lines, SHA-256 of the file's bytes they were found to match)``.
_checked_lines: dict[str, tuple[list, str]] = {}


def _file_source(code: types.CodeType) -> tuple[str, str] | None:
    """For a definition read from a file: the SHA-256 of the file's bytes now (the frontend
    reads the text from the file, and a rewrite can keep the size, the modification time and
    the bytecode cache: `cp -p`, a generator within one timestamp tick) and of the code
    object, and the definition's text cut from those bytes. None when there is no file (a
    notebook cell, ``exec``): the caller uses the text ``inspect`` finds."""
    filename = code.co_filename
    data = _read(filename)
    if data is None:
        return None
    digest = hashlib.sha256(data).hexdigest()
    known = _texts.get(filename)
    if known is None or known[0] != digest:
        known = (digest, _decode(data))
        if len(_texts) >= 1024:
            _texts.clear()
        _texts[filename] = known
    text = known[1]
    _drop_stale_lines(filename, digest, text)
    block_key = (filename, digest, code.co_firstlineno)
    block = _blocks.get(block_key)
    if block is None:
        if len(_blocks) >= 4096:
            _blocks.clear()
        block = _blocks[block_key] = _block(text, code)
    code_digest = _code_digests.get(code)
    if code_digest is None:
        code_digest = _code_digests[code] = hashlib.sha256(marshal.dumps(code)).hexdigest()
    return f"file {filename} sha256 {digest} code {code_digest}", block


def _read(filename: str) -> bytes | None:
    """The bytes of ``filename`` (os.read: half the cost of ``open().read()``), or None."""
    try:
        fd = os.open(filename, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError, TypeError):
        return None
    try:
        sb = os.fstat(fd)
        if not stat.S_ISREG(sb.st_mode):
            return None
        chunks = []
        while True:  # to the end, even if the file grew since fstat
            chunk = os.read(fd, max(sb.st_size + 1, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _decode(data: bytes) -> str:
    """The file's text as ``linecache`` reads it (PEP 263 encoding, universal newlines)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        text = data.decode("latin-1")  # not Python source: any text will do
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _drop_stale_lines(filename: str, digest: str, text: str) -> None:
    """The frontend reads the source through ``linecache``, which keeps a file's lines while
    its size and modification time stay: lines that are not the file's bytes now go, so the
    frontend reads what the key was computed from."""
    entry = linecache.cache.get(filename)
    if entry is None or len(entry) != 4:
        return
    lines = entry[2]
    checked = _checked_lines.get(filename)
    if checked is not None and checked[0] is lines and checked[1] == digest:
        return
    joined = "".join(lines)
    if joined == text or joined == text + "\n":  # linecache ends the last line
        if len(_checked_lines) >= 1024:
            _checked_lines.clear()
        _checked_lines[filename] = (lines, digest)
    else:
        linecache.cache.pop(filename, None)
        _checked_lines.pop(filename, None)


#: What the block scan must step over (strings, comments, continuations) or stop at (line
#: ends); brackets are counted between them.
_LEXEME = re.compile(r"""
      '''(?:[^\\]|\\.)*?''' | \"\"\"(?:[^\\]|\\.)*?\"\"\"
    | '(?:[^'\\\n]|\\.)*' | "(?:[^"\\\n]|\\.)*"
    | \#[^\n]* | \\\n | (?P<newline>\n)
""", re.S | re.X)


def _block(text: str, code: types.CodeType) -> str:
    """The lines of the ``def`` starting at ``code.co_firstlineno`` (decorators first), as
    ``inspect.getsource`` cuts them, or more: up to the first logical line after the ``def``
    line indented no deeper than it (strings, brackets and continuations are skipped over,
    so a string's lines at column 0 do not end it), and at least to the code's last line."""
    first = code.co_firstlineno - 1
    start = 0
    for _ in range(first):
        start = text.find("\n", start) + 1
        if start == 0:
            return text  # no such line: all of it
    first_line = text[start:text.find("\n", start) % (len(text) + 1)]
    last_code = max((line for _, _, line in code.co_lines() if line is not None), default=0)
    indent = _indent(first_line)
    depth, end = 0, len(text)
    in_header = first_line.lstrip().startswith("@")  # decorators before the def line
    position = start
    for match in _LEXEME.finditer(text, start):
        between = text[position:match.start()]  # outside strings and comments: brackets
        position = match.end()
        if between:
            depth = max(depth + between.count("(") + between.count("[") + between.count("{")
                        - between.count(")") - between.count("]") - between.count("}"), 0)
        if match.group("newline") and depth == 0:
            following = text[match.end():text.find("\n", match.end()) % (len(text) + 1)]
            stripped = following.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if in_header and not stripped.startswith("@") and not _indent(following) > indent:
                in_header = False  # the decorators are over: this is the def line
                continue
            if not in_header and _indent(following) <= indent:
                end = match.end()
                break
    block = text[start:end]
    if first + block.count("\n") + 1 < last_code:  # never less than the code spans
        block = "\n".join(text[start:].split("\n")[:last_code - first])
    return block


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


# ------------------------------------------------------------------------- functions


def _source(func: Callable) -> tuple[str, str]:
    """``(token, text)`` of a function the frontend reads: a gtscript function is inlined
    from the text read when it was decorated, any other is read now."""
    info = getattr(func, GTSCRIPT_FUNCTION_ATTR, None)
    if isinstance(info, GTScriptFunction):
        return info.source.text, info.source.text
    return _source_text(func)


def _function_token(func: Callable, seen: set[int], names: set[str],
                    source: tuple[str, str] | None = None) -> str:
    """Source, annotations, defaults and the values of the names the text spells."""
    if id(func) in seen:
        return f"<recursive {func.__qualname__}>"
    seen.add(id(func))
    token, text = source if source is not None else _source(func)
    code = func.__code__
    spelled = _own_names(func, text)
    names.update(spelled)
    parts = [func.__qualname__, token]
    for name, annotation in sorted(func.__annotations__.items()):
        parts.append(f"ann {name}={_value_token(annotation, names, [], seen)}")
    for default in func.__defaults__ or ():
        parts.append(f"default {_value_token(default, names, [], seen)}")
    for name, default in sorted((func.__kwdefaults__ or {}).items()):
        parts.append(f"kwdefault {name}={_value_token(default, names, [], seen)}")
    # the values the frontend finds for them (externals.py's _free_value): what a gtscript
    # function captured when decorated, else its closure, else its globals
    info = getattr(func, GTSCRIPT_FUNCTION_ATTR, None)
    captured = getattr(info, "captured", None) or {}
    closure = _closure_namespace(func) if func.__closure__ else {}
    globals_ = func.__globals__
    # a parameter's name is the parameter wherever the body uses it: the frontend never looks
    # it up (a notebook's global `inp` array is not part of a definition with a parameter `inp`)
    params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    for name in spelled:
        if name in params:
            continue
        value = captured.get(name, _MISSING)
        if value is _MISSING:
            value = closure.get(name, _MISSING) if name in code.co_freevars else \
                globals_.get(name, _MISSING)
        if value is _MISSING or (name == func.__name__ and (value is func or _is_stencil(value))):
            # a definition's own name holding itself or a stencil (the previous decoration of
            # a re-run notebook cell or reloaded module): neither can be used in a definition,
            # so the frontend never reads it
            continue
        parts.append(f"free {name}={_value_token(value, names, [], seen)}")
    return "\n".join(parts)


def _is_stencil(value: Any) -> bool:
    kind = type(value)
    return kind.__module__ == "gtscript.stencil" and kind.__name__ in ("Stencil", "NumpyStencil")


def _own_names(func: Callable, text: str) -> tuple[str, ...]:
    """The names the frontend may look up for ``func``: those its text spells (annotations,
    strings and comments included), its code reads, and its string annotations spell
    (``from __future__ import annotations``, or set by a decorator: the frontend evaluates
    them in the function's namespace)."""
    code = func.__code__
    strings = tuple(a for a in func.__annotations__.values() if isinstance(a, str))
    return _names_of(text, code.co_names, code.co_freevars, strings)


@lru_cache(maxsize=4096)
def _names_of(text: str, co_names: tuple, co_freevars: tuple,
              annotations: tuple) -> tuple[str, ...]:
    """The names a function's text and string annotations spell and its code reads, sorted."""
    names = _spelled(text) | set(co_names) | set(co_freevars)
    for annotation in annotations:
        names |= _spelled(annotation)
    return tuple(sorted(names))


# ------------------------------------------------------------------------- values


def _value_token(value: Any, names: set[str], path: list[int],
                 seen: set[int] | None = None) -> str:
    """A string that changes whenever ``value`` changes in a way the frontend could observe
    (it reads attributes the texts spell, items, numbers, dtypes); Unfingerprintable when no
    such string is known. ``path`` holds the ids of the containers above ``value``."""
    kind = type(value)
    if kind in _PLAIN or isinstance(value, (np.generic, np.dtype)):
        return f"{kind.__name__}:{value!r}"
    module = getattr(kind, "__module__", None) or ""
    if module == lang.__name__ or module.split(".")[0] in _LANGUAGE_PACKAGES:
        # the language's own objects (axes, Field[...], iteration policies): immutable
        return f"{module}.{kind.__qualname__}:{value!r}"
    if module == "gtscript.stencil" and kind.__name__ in ("Stencil", "NumpyStencil"):
        # a stencil object (a notebook cell run again finds its previous stencil under the
        # definition's name): what it is is its compiled code's key
        return f"stencil:{kind.__name__}:{value.cache_key}"
    if id(value) in path:  # a cycle: which container above it
        return f"<up {len(path) - path.index(id(value))}>"
    if len(path) >= _MAX_DEPTH:
        raise Unfingerprintable(f"a value nested deeper than {_MAX_DEPTH} levels")
    path = path + [id(value)]
    if kind is types.FunctionType or kind is types.MethodType:
        if kind is types.FunctionType:
            value = _as_read(value)
        if is_gtscript_function(value):
            return "gtfunction:" + _function_token(value, set() if seen is None else seen, names)
        if kind is types.MethodType:
            raise Unfingerprintable(f"a bound method {value.__qualname__}")
    if isinstance(value, types.ModuleType):
        return _module_token(value, names, path, seen)
    if isinstance(value, type):
        return _class_token(value, names, path, seen)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)):
        # a plain function: the frontend calls math builtins by name and refuses the others
        qualname = getattr(value, "__qualname__", value)
        return f"function:{getattr(value, '__module__', '')}.{qualname}"
    if isinstance(value, np.ndarray):
        # by content: an array changed in place must not find the stencil built from it
        data = np.ascontiguousarray(value)
        if data.dtype.hasobject:
            return "ndarray:" + _value_token(data.tolist(), names, path, seen)
        digest = hashlib.sha256(data.view(np.uint8).reshape(-1).data).hexdigest()
        return f"ndarray:{data.dtype.str}:{data.shape}:{digest}"
    if isinstance(value, enum.Enum):
        cls = type(value)
        return (f"enum:{cls.__module__}.{cls.__qualname__}.{value.name}="
                f"{_value_token(value.value, names, path, seen)}:"
                f"{_class_token(cls, names, path, seen)}")
    if kind in (tuple, list):
        return "(" + ",".join(_value_token(v, names, path, seen) for v in value) + ")"
    if kind in (set, frozenset):
        return "{" + ",".join(sorted(_value_token(v, names, path, seen) for v in value)) + "}"
    if kind is dict:
        items = sorted((_value_token(k, names, path, seen), _value_token(v, names, path, seen))
                       for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if kind in (range, slice):
        return repr(value)
    if is_gtscript_function(value):
        raise Unfingerprintable(f"a gtscript function that is a {kind.__qualname__}")
    return _object_token(value, names, path, seen)


def _as_read(func: Callable) -> Callable:
    """A function as the frontend will read it. A function GT4Py marked is recorded now as
    the frontend records it at its first use (gt4py_objects.py: the function a GT4Py 1.2
    ``lazy_function`` wraps, else itself), so that its key is its record's before the first
    build as after it; one gtscript cannot record has no key (the build reports why). A lazy
    function whose annotation hooks have not run has no key: they may change what is read."""
    target = lazy_target(func) if is_gt4py_function(func) else None
    hooks = lazy_hooks(func) if target is not None else ()
    if target is not None and getattr(target, GTSCRIPT_FUNCTION_ATTR, None) is not None:
        return target  # read already: its record is what the frontend reads
    pending = getattr(func, GTSCRIPT_FUNCTION_ATTR, None)
    if isinstance(pending, _Pending):
        hooks = (pending.before, pending.after)
    if any(hook is not None for hook in hooks):
        raise Unfingerprintable(f"lazy function {func.__qualname__} has annotation hooks")
    if is_gt4py_function(func):
        try:
            return from_gt4py(func)
        except (SyntaxError, OSError, TypeError) as exc:  # GTScriptSyntaxError, no source
            raise Unfingerprintable(f"GT4Py function {func.__qualname__}: {exc}") from None
    return func


def _package(cls: type) -> str:
    return (getattr(cls, "__module__", None) or "").split(".")[0]


def _module_token(module: types.ModuleType, names: set[str], path: list[int],
                  seen: set[int] | None) -> str:
    """A module: its name, and the values of the attributes the texts spell (nested modules
    and classes likewise, to any depth), so that a changed constant in another module
    changes the key (a fresh process would otherwise find the tree lowered with the old
    value in the disk index)."""
    if module.__name__.split(".")[0] in _FIXED_PACKAGES:
        return f"module:{module.__name__}"
    if type(module) is not types.ModuleType:  # a module class may compute attributes
        raise Unfingerprintable(f"module {module.__name__} is a {type(module).__qualname__}")
    namespace = module.__dict__
    spelled = sorted(names & namespace.keys())
    if "__getattr__" in namespace and len(spelled) < len(names):
        raise Unfingerprintable(f"module {module.__name__} computes attributes (__getattr__)")
    parts = [f"module:{module.__name__}"]
    for name in spelled:
        parts.append(f"{name}={_value_token(namespace[name], names, path, seen)}")
    return "[" + ";".join(parts) + "]"


def _class_token(cls: type, names: set[str], path: list[int], seen: set[int] | None) -> str:
    """A class: its name, and the class attributes the texts spell (``Consts.CP``)."""
    if _package(cls) in _FIXED_PACKAGES:
        return f"class:{cls.__module__}.{cls.__qualname__}"
    meta = type(cls)
    if not (meta in _METACLASSES or issubclass(meta, enum.EnumMeta)):
        raise Unfingerprintable(f"class {cls.__qualname__} has the metaclass {meta.__qualname__}")
    parts = ["class:" + ",".join(f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__)]
    members: Mapping[str, Any] = getattr(cls, "__members__", {}) if issubclass(
        meta, enum.EnumMeta) else {}
    if members:  # an enumeration: members by name and value, and the gtscript mark
        parts.append(repr(getattr(cls, lang.ENUM_ATTR, None)))
        parts.extend(f"{n}={_value_token(m.value, names, path, seen)}"
                     for n, m in members.items())
    for name, attr, owner in _class_attributes(cls, names):
        if name in members:
            continue
        if _package(owner) in _FIXED_PACKAGES:  # object's, Enum's: not the definition's
            parts.append(f"{name}=<{owner.__qualname__}>")
            continue
        if isinstance(attr, staticmethod):
            attr = attr.__func__
        elif hasattr(type(attr), "__get__") and not isinstance(attr, (types.FunctionType,
                                                                      enum.Enum)):
            raise Unfingerprintable(f"{cls.__qualname__}.{name} is computed "
                                    f"({type(attr).__name__})")
        parts.append(f"{name}={_value_token(attr, names, path, seen)}")
    return "[" + ";".join(parts) + "]"


def _class_attributes(cls: type, names: set[str]):
    """``(name, attribute, defining class)`` of every spelled name ``cls`` defines, as
    attribute lookup finds them (the class's own attributes win)."""
    found = {}
    for owner in cls.__mro__:
        for name in names & owner.__dict__.keys():
            if name not in found:
                found[name] = (owner.__dict__[name], owner)
    return [(name, attr, owner) for name, (attr, owner) in sorted(found.items())]


def _object_token(value: Any, names: set[str], path: list[int], seen: set[int] | None) -> str:
    """An object: its class, and the attributes the texts spell, found as ``getattr`` finds
    them: stored ones (the instance's ``__dict__``, ``__slots__``, namedtuple fields) by their
    values, the class's by theirs; computed ones (properties, ``__getattr__``) cannot be
    fingerprinted."""
    cls = type(value)
    if _package(cls) in ("numpy",) or not (
        type(cls) in _METACLASSES or _package(type(cls)) in _FIXED_PACKAGES
    ):
        raise Unfingerprintable(f"an object of type {cls.__qualname__}")
    for owner in cls.__mro__[:-1]:  # the builtin types' own lookup is the generic one
        if "__getattr__" in owner.__dict__ or ("__getattribute__" in owner.__dict__ and not (
                owner.__module__ == "builtins" or owner is types.SimpleNamespace)):
            raise Unfingerprintable(f"{cls.__qualname__} computes its attributes")
    parts = [f"object:{cls.__module__}.{cls.__qualname__}"]
    if isinstance(value, (tuple, list)):  # a namedtuple, a list subclass: its items too
        parts.append(_value_token(list(value), names, path, seen))
    elif isinstance(value, (dict, set, frozenset)):
        raise Unfingerprintable(f"a {cls.__qualname__} (a subclass of a container)")
    own = getattr(value, "__dict__", None)
    own = own if isinstance(own, dict) else {}
    classes = {name: (attr, owner) for name, attr, owner in _class_attributes(cls, names)}
    for name in sorted((names & own.keys()) | classes.keys()):
        attr, owner = classes.get(name, (_MISSING, None))
        data = hasattr(type(attr), "__set__") or hasattr(type(attr), "__delete__")
        if attr is not _MISSING and data:
            if not isinstance(attr, _STORED):
                raise Unfingerprintable(f"{cls.__qualname__}.{name} is computed "
                                        f"({type(attr).__name__})")
            item = getattr(value, name, _MISSING)
            parts.append(f"{name}=" + ("<unset>" if item is _MISSING
                                       else _value_token(item, names, path, seen)))
        elif name in own:
            parts.append(f"{name}={_value_token(own[name], names, path, seen)}")
        elif _package(owner) in _FIXED_PACKAGES:
            parts.append(f"{name}=<{owner.__qualname__}>")  # a builtin method, say
        elif isinstance(attr, staticmethod):
            parts.append(f"{name}={_value_token(attr.__func__, names, path, seen)}")
        elif hasattr(type(attr), "__get__") and not isinstance(attr, types.FunctionType):
            raise Unfingerprintable(f"{cls.__qualname__}.{name} is computed "
                                    f"({type(attr).__name__})")
        else:  # a class constant, or a method (a bound method: the frontend refuses it)
            parts.append(f"{name}=class {_value_token(attr, names, path, seen)}")
    return "[" + ";".join(parts) + "]"
