"""The ``stencil`` decorator and the stencil object.

A stencil object *is* a compiled C module (``gtscript._core.Module``): calling it goes
straight into C (argument binding, validation and the kernel), with no Python on the way.
This file only captures the definition (through :mod:`gtscript.frontend`), hands it to
the C core, and adds the notebook-facing presentation.
"""

from __future__ import annotations

import html
import inspect
import threading
import time
import warnings

from . import _core, frontend, numpy_backend

BACKENDS = ("cpu", "numpy", "cuda")

#: Options that change the generated code (part of the cache key).
_CODE_OPTIONS = {"literal_float_precision", "llvm_passes", "gpu_arch", "block_size",
                 "inline_temporaries"}
#: GT4Py options accepted for compatibility; they do not change what gtscript generates.
_IGNORED_GT4PY_OPTIONS = {"format_source", "verbose", "oir_pipeline", "enable_validation",
                          "cache_settings", "dtypes", "raise_if_not_cached", "debug_mode"}

_memory_cache: dict = {}
_memory_lock = threading.Lock()


class Stencil(_core.Module):
    """A compiled stencil. Call it on arrays; inspect it with ``ir()``, ``source()``,
    ``field_info`` and ``halo``."""

    @property
    def signature(self) -> str:
        parts = []
        for p in self.ir_tree()["params"]:
            if p[0] == "field":
                dims = f", {p[4]}" if p[4] else ""
                axes = "" if p[3] == "IJK" else f"{p[3]}, "
                parts.append(f"{p[1]}: Field[{axes}{p[2]}{dims}]")
            else:
                default = self._defaults.get(p[1], inspect.Parameter.empty)
                parts.append(f"{p[1]}: {p[2]}" + ("" if default is inspect.Parameter.empty
                                                  else f" = {default!r}"))
        return f"{self.__name__}({', '.join(parts)})"

    @property
    def _key_text(self) -> str:
        """The cache key, shortened as git shortens hashes ("" when the build has none)."""
        return self.build_info.get("cache_key", "")[:12]

    def __repr__(self) -> str:
        info = self.build_info
        key = f" key={self._key_text}" if self._key_text else ""
        extents = ", ".join(f"{name}: {fi['extent']}" for name, fi in self.field_info.items())
        return (f"<gtscript stencil {self.signature} backend={info['backend']!r}{key} "
                f"halo={self.halo} extents={{{extents}}} "
                f"built in {1e3 * info['build_time']:.1f} ms ({info['module_source']})>")

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><code>{html.escape(name)}</code></td><td>{fi['intent']}</td>"
            f"<td>{fi['dtype']}</td><td>{fi['axes']}</td><td>{fi['extent']}</td></tr>"
            for name, fi in self.field_info.items())
        info = self.build_info
        key = (f", key <code title=\"{html.escape(info['cache_key'])}\">"
               f"{html.escape(self._key_text)}</code>" if self._key_text else "")
        return (f"<div><b>gtscript stencil</b> <code>{html.escape(self.signature)}</code><br>"
                f"backend <code>{info['backend']}</code>{key}, halo <code>{self.halo}</code>, "
                f"built in {1e3 * info['build_time']:.1f} ms ({info['module_source']})"
                f"<table><tr><th>field</th><th>intent</th><th>dtype</th><th>axes</th>"
                f"<th>extent (i, j, k)</th></tr>{rows}</table></div>")


class NumpyStencil(Stencil):
    """The reference backend: the C core analyses and validates, NumPy executes."""

    def __call__(self, *args, **kwargs):
        call_start = time.perf_counter()
        fields, scalars, domain, exec_info = self.bind(*args, **kwargs)
        run_start = time.perf_counter()
        numpy_backend.execute(self._tree, fields, scalars, domain)
        run_end = time.perf_counter()
        if exec_info is not None:
            self._record_call(exec_info, fields, domain, call_start, run_start, run_end)

    @property
    def _tree(self):
        tree = self.__dict__.get("_tree_cache")
        if tree is None:
            tree = self.__dict__["_tree_cache"] = self.ir_tree()
        return tree


def _check_options(options: dict) -> dict:
    code_options = {}
    for key, value in options.items():
        if key in _CODE_OPTIONS:
            code_options[key] = value
        elif key not in _IGNORED_GT4PY_OPTIONS:
            raise TypeError(f"unknown stencil option {key!r} (known: "
                            f"{', '.join(sorted(_CODE_OPTIONS | {'rebuild', 'name'}))})")
    return code_options


#: Keyword arguments every call takes besides the stencil's own (cuda adds ``stream``).
_CALL_OPTIONS = (("domain", None), ("origin", None), ("validate_args", True), ("exec_info", None))


def _call_signature(definition, backend) -> inspect.Signature:
    """What ``inspect.signature`` shows for a stencil: the definition's parameters, with their
    defaults, then the call's keyword-only options."""
    params = list(inspect.signature(definition).parameters.values())
    options = _CALL_OPTIONS + ((("stream", None),) if backend == "cuda" else ())
    return inspect.Signature(params + [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
        for name, default in options])


def _reissue(build_warnings):
    for message, category, filename, lineno in build_warnings:
        warnings.warn_explicit(message, category, filename, lineno)


def _build(definition, backend, externals, rebuild, name, options):
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (available: {', '.join(BACKENDS)})")
    if not callable(definition):
        raise TypeError("a stencil definition must be a Python function")
    externals = dict(externals or {})
    code_options = _check_options(options)
    key = (frontend.definition_fingerprint(definition, externals), backend, name,
           tuple(sorted((k, repr(v)) for k, v in code_options.items())))
    if not rebuild:
        with _memory_lock:
            cached = _memory_cache.get(key)
        if cached is not None:
            _reissue(cached.build_warnings)
            return cached
    tree = frontend.parse_definition(definition, externals)
    if name:
        tree["name"] = name
    cls = NumpyStencil if backend == "numpy" else Stencil
    # rebuild reaches the C core too: it skips the memory and disk levels keyed by the IR.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = cls(tree, backend, {**code_options, "rebuild": True} if rebuild else code_options)
    # The analysis' warnings (e.g. a temporary never read) are part of the definition: a
    # re-decoration served from the cache says them again.
    module.build_warnings = [(w.message, w.category, w.filename, w.lineno) for w in caught]
    _reissue(module.build_warnings)
    module.definition = definition
    module.externals = externals
    module.options = code_options
    module.__doc__ = definition.__doc__
    module.__wrapped__ = definition
    module.__signature__ = _call_signature(definition, backend)
    with _memory_lock:
        _memory_cache[key] = module
    return module


def stencil(backend=None, definition=None, *, externals=None, rebuild=False, name=None,
            **options):
    """Compile a GTScript definition.

    Both GT4Py forms work::

        @gtscript.stencil(backend="cpu", externals={...})
        def f(...): ...

        f = gtscript.stencil("cpu", definition, externals={...})
    """
    if callable(backend) and definition is None:  # @gtscript.stencil without arguments
        backend, definition = "cpu", backend
    if backend is None:
        backend = "cpu"
    if definition is not None:
        return _build(definition, backend, externals, rebuild, name, options)

    def decorator(func):
        return _build(func, backend, externals, rebuild, name, options)

    return decorator


__all__ = ["stencil", "Stencil", "BACKENDS"]
