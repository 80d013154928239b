"""The ``stencil`` decorator and the stencil object.

A stencil object *is* a compiled C module (``gtscript._core.Module``): calling it goes
straight into C (argument binding, validation and the kernel), with no Python on the way.
This file only captures the definition (through :mod:`gtscript.frontend`), hands it to
the C core, and adds the notebook-facing presentation.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import importlib
import inspect
import numbers
import os
import sys
import threading
import types
import time
import warnings

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, SupportsIndex, Union, overload

import numpy as np

from . import _core, _index, buildlog, config, frontend, lang, numpy_backend
from .errors import (
    GT4PyCompatibilityWarning,
    GTScriptDefinitionError,
    GTScriptSyntaxError,
)
from .info import AccessKind, DomainInfo, FieldInfo, ParameterInfo
from .storage import GT4PY_BACKENDS

BACKENDS = ("cpu", "numpy", "cuda")

#: What a call's ``domain`` may be, for type checkers: three whole numbers (a tuple, a list or
#: an array); a tuple of another length is reported (docs/api.md#type-checking).
Domain = Union[tuple[SupportsIndex, SupportsIndex, SupportsIndex], list[SupportsIndex], np.ndarray]
#: What a call's ``origin`` may be: as ``Domain``, or a dict of them by field name.
Origin = Union[Domain, Mapping[str, Union[tuple[SupportsIndex, ...], list[SupportsIndex],
                                          np.ndarray]]]

#: Options that change the generated code (part of the cache key).
_CODE_OPTIONS = {"literal_float_precision", "literal_int_precision", "llvm_passes", "gpu_arch",
                 "block_size", "inline_temporaries", "vector_math"}
#: GT4Py options accepted for compatibility; they do not change what gtscript generates.
_IGNORED_GT4PY_OPTIONS = {"format_source", "oir_pipeline", "enable_validation",
                          "cache_settings", "raise_if_not_cached", "debug_mode", "impl_opts",
                          "add_profile_info", "clean", "opt_level", "extra_opt_flags",
                          "device_sync", "ignore_np_errstate", "module"}
#: Options handled here, outside the cache key's code options.
_OTHER_OPTIONS = {"rebuild", "name", "externals", "dtypes", "build_info", "verbose"}

#: The decorator's table (pre-key -> stencil), least recently used first; bounded like the
#: core's memory level by GTSCRIPT_CACHE_MEMORY_ENTRIES (docs/caching.md).
_memory_cache: dict = {}
_memory_lock = threading.Lock()


def _memory_limit() -> int:
    """GTSCRIPT_CACHE_MEMORY_ENTRIES, read at every use (256 when unset or not a count)."""
    value = os.environ.get("GTSCRIPT_CACHE_MEMORY_ENTRIES", "")
    return int(value) if value.isdigit() else 256


class _CallSignature:
    """``stencil.__signature__`` (what ``inspect.signature`` shows), made at first use: it
    costs as much as a disk hit's lookup, and most stencils are never inspected."""

    def __get__(self, obj, cls=None):
        if obj is None:
            return None  # the class: inspect then looks at __call__
        signature = obj.__dict__.get("_signature_cache")
        if signature is None:
            definition = obj.__dict__.get("definition")
            if definition is None:
                raise AttributeError("__signature__")
            signature = obj.__dict__["_signature_cache"] = _call_signature(definition,
                                                                           obj.backend)
        return signature


#: The definition's parameters, carried by the Stencil type for gtscript.mypy_plugin, which
#: types a call with them (docs/api.md#type-checking).
_P = ParamSpec("_P")


class Stencil(_core.Module, Generic[_P]):
    """A compiled stencil, as :func:`stencil` returns it.

    Call it on arrays: ``st(*fields_and_scalars, origin=None, domain=None,
    validate_args=True, exec_info=None)``. The call binds and checks every argument in C
    before any point is computed, then runs the kernel with the GIL released (see
    docs/calling.md). Inspect it with :meth:`ir`, :meth:`source`, :attr:`field_info` and
    :attr:`halo`, or with GT4Py's :attr:`parameter_info`, :attr:`domain_info`,
    :attr:`constants`, :attr:`backend` and :attr:`definition_func`.

    Parameters
    ----------
    *fields_and_scalars
        The definition's arguments, by position or by name: arrays (anything with the buffer
        protocol or ``__array_interface__``; ``__cuda_array_interface__`` on cuda) of the
        field's dtype and number of dimensions, whatever their strides, and Python or NumPy
        numbers for the scalars. A scalar with a default may be left out.
    origin : tuple or dict, optional
        The index in every array of the compute domain's first point; a dict gives each field
        its own (``"_all_"`` for the others). Default: the lower side of :attr:`halo`.
    domain : tuple of int, optional
        The number of points computed along I, J and K. Default: the largest box that fits
        every array from its origin, the upper side of the halo left over; arrays that
        disagree in size are an error rather than a silently smaller box.
    validate_args : bool, default True
        ``False`` keeps only the cheapest checks (arguments bound, numbers of dimensions,
        a non-empty domain the arrays agree on, enough K levels) and skips dtypes, bounds,
        writability and aliasing: only for a call validated before with the same kind of
        arrays, since a wrong argument then reads or writes outside them.
    exec_info : dict, optional
        Filled with the call's timings (``call_start_time``, ``run_start_time``,
        ``run_end_time``, ``call_end_time``, ``run_time``; ``time.perf_counter`` seconds), the
        ``domain`` and per-field ``origin`` used, the ``backend``, where the module came from
        (``module_source``, ``build_time``) and, on cpu, the execution ``plan``.

    Raises
    ------
    TypeError
        An argument of the wrong kind, dtype or number of dimensions, named in the message.
    ValueError
        An origin or domain that does not fit an array (before anything is written).

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.stencil(backend="cpu")
    ... def smooth(inp: Field[np.float64], out: Field[np.float64], weight: float):
    ...     with computation(PARALLEL), interval(...):
    ...         out = (1 - weight) * inp + 0.25 * weight * (
    ...             inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0])
    >>> inp = np.arange(5 * 5 * 2, dtype=np.float64).reshape(5, 5, 2)
    >>> out = np.zeros_like(inp)
    >>> info = {}
    >>> smooth(inp, out, 0.5, exec_info=info)      # the interior: origin (1, 1, 0)
    >>> info["domain"], info["origin"]["out"]
    ((3, 3, 2), (1, 1, 0))
    >>> bool(np.allclose(out[1:-1, 1:-1], inp[1:-1, 1:-1]))   # linear data: unchanged
    True
    >>> smooth(inp, out, weight=0.5, origin=(2, 2, 0), domain=(1, 1, 1))
    >>> smooth(inp, np.zeros((5, 5, 2), dtype=np.float32), 0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: argument 'out' has dtype float32 ... pass out.astype(np.float64), ...
    """

    __signature__ = _CallSignature()

    if TYPE_CHECKING:  # the call as type checkers see it (the C core binds it: docs/calling.md)
        # origin and domain are checked (a 2-tuple is reported); the others take Any so that
        # a call spreading a dict of options, st(a, b, **options), is not reported for them
        def __call__(self, *fields_and_scalars: Any, origin: Origin | None = None,
                     domain: Domain | None = None, validate_args: Any = True,
                     exec_info: Any = None, global_origin: Any = None,
                     global_domain: Any = None, **by_name: Any) -> None: ...

    def ir(self) -> str:
        """The analysed IR, as text: what the backends compile, each statement with its
        definition line and the extent over which it is computed.

        Examples
        --------
        >>> import numpy as np
        >>> import gtscript
        >>> from gtscript import PARALLEL, Field, computation, interval
        >>> @gtscript.stencil(backend="cpu")
        ... def shift(inp: Field[np.float64], out: Field[np.float64]):
        ...     with computation(PARALLEL), interval(...):
        ...         out = inp[1, 0, 0]
        >>> print(shift.ir().strip())  # doctest: +ELLIPSIS
        stencil shift(inp: Field float64, out: Field float64)
            computation(PARALLEL)
                interval(0, None)
                    out = inp[1, 0, 0]    # line ..., extent i<0,0> j<0,0>
        """
        return super().ir()

    def source(self) -> str:
        """The generated code: the optimised LLVM IR of the kernel on cpu, the CUDA C on
        cuda; the numpy backend generates none (``ValueError``).

        Examples
        --------
        >>> import numpy as np
        >>> import gtscript
        >>> from gtscript import PARALLEL, Field, computation, interval
        >>> @gtscript.stencil(backend="cpu")
        ... def shift(inp: Field[np.float64], out: Field[np.float64]):
        ...     with computation(PARALLEL), interval(...):
        ...         out = inp[1, 0, 0]
        >>> "define" in shift.source() and "load double" in shift.source()
        True
        """
        return super().source()

    @property
    def field_info(self) -> dict[str, FieldInfo]:
        """Per field argument, in parameter order: a :class:`~gtscript.info.FieldInfo`
        (access extent, intent, dtype, axes, data dimensions; GT4Py's ``access``,
        ``boundary`` and ``domain_mask`` too).

        Examples
        --------
        >>> import numpy as np
        >>> import gtscript
        >>> from gtscript import PARALLEL, Field, computation, interval
        >>> @gtscript.stencil(backend="cpu")
        ... def grad(inp: Field[np.float64], out: Field[np.float64]):
        ...     with computation(PARALLEL), interval(...):
        ...         out = inp[1, 0, 0] - inp[-1, 0, 0]
        >>> grad.field_info["inp"]["extent"], grad.field_info["inp"]["intent"]
        (((-1, 1), (0, 0), (0, 0)), 'in')
        >>> grad.field_info["inp"].boundary
        Boundary(((1, 1), (0, 0), (0, 0)))
        >>> grad.halo
        ((1, 1), (0, 0), (0, 0))
        """
        raw = _core.Module.field_info.__get__(self)
        facts = self._gt4py_field_facts
        return {name: FieldInfo(info, gt4py_facts=facts[name]) for name, info in raw.items()}

    @property
    def parameter_info(self) -> dict[str, ParameterInfo]:
        """Per scalar argument, in parameter order: whether the stencil reads it, its dtype."""
        read = self._scalars_read
        return {p[1]: ParameterInfo(AccessKind.READ if p[1] in read else AccessKind.NONE,
                                    np.dtype(p[2]))
                for p in self._params if p[0] == "scalar"}

    @property
    def domain_info(self) -> DomainInfo:
        """GT4Py's ``DomainInfo``: I and J are parallel, K sequential, and the fewest K
        levels a domain may have (the intervals' needs)."""
        return DomainInfo(parallel_axes=("I", "J"), sequential_axis="K",
                          min_sequential_axis_size=self.min_k_levels, ndim=3)

    @property
    def constants(self) -> dict:
        """The numeric externals the stencil was built with (GT4Py's ``constants``)."""
        return {name: value for name, value in self.externals.items()
                if isinstance(value, numbers.Number)}

    @property
    def backend(self) -> str:
        """The backend's name: ``"cpu"``, ``"numpy"`` or ``"cuda"``."""
        return self.build_info["backend"]

    @property
    def definition_func(self):
        """The Python function the stencil was built from."""
        return self.definition

    # ---- pickling and copying: a stencil is rebuilt from the cache on the other side

    def __reduce__(self):
        """By reference (module and qualified name) when the definition's module gives this
        very stencil back; otherwise by the definition tree, which the receiving process
        builds again (the disk cache usually has its code), so stencils defined in
        ``__main__``, a notebook or a function pickle too."""
        reference = _reference_to(self.definition, self)
        if reference is not None:
            return _stencil_by_reference, reference
        definition = self.definition
        if _reference_to(definition, definition) is None:
            definition = None  # not importable as itself: the other side has no definition_func
        return _stencil_from_tree, (self._definition_tree, self.backend, dict(self.options),
                                    {"definition": definition, "constants": self.constants,
                                     "dtypes": dict(self.__dict__.get("dtypes", {})),
                                     "parameter_kinds": self._parameter_kinds})

    def __copy__(self):
        return self  # immutable once built (GT4Py's stencil objects are singletons too)

    def __deepcopy__(self, memo):
        return self

    @property
    def _params(self) -> list:
        params = self.__dict__.get("_params_cache")
        if params is None:
            params = self.__dict__["_params_cache"] = self.ir_tree()["params"]
        return params

    @property
    def _scalars_read(self) -> frozenset:
        """The scalar parameters the analysed IR still reads (the build may fold some away),
        in statements or as a run-time interval bound (``interval(0, nlev)``)."""
        read = self.__dict__.get("_scalars_read_cache")
        if read is None:
            names: set = set()
            computations = self.ir_tree()["computations"]
            _collect_scalars(computations, names)
            for _policy, intervals in computations:
                for interval in intervals:
                    # a bound is (level, offset), or (level, offset, parameter) at run time
                    names.update(b[2] for b in interval[:2]
                                 if len(b) == 3 and isinstance(b[2], str))
            read = self.__dict__["_scalars_read_cache"] = frozenset(names)
        return read

    @property
    def _parameter_kinds(self) -> dict:
        """Per parameter name, its ``inspect.Parameter`` kind, from the definition (or, for a
        stencil unpickled without one, as the pickle carried them; else empty)."""
        definition = self.__dict__.get("definition")
        if definition is None:
            return self.__dict__.get("_parameter_kinds_carried", {})
        try:
            return {name: p.kind for name, p in inspect.signature(definition).parameters.items()}
        except (TypeError, ValueError):
            return {}

    @property
    def signature(self) -> str:
        """The definition's parameters as the stencil takes them: ``name(a: Field[float64],
        *, alpha: float64)`` (``/`` and ``*`` where the definition has them)."""
        kinds = self._parameter_kinds
        parts = []
        previous = None
        for p in self._params:
            kind = kinds.get(p[1])
            if (previous is inspect.Parameter.POSITIONAL_ONLY
                    and kind is not inspect.Parameter.POSITIONAL_ONLY):
                parts.append("/")
            if (kind is inspect.Parameter.KEYWORD_ONLY
                    and previous is not inspect.Parameter.KEYWORD_ONLY):
                parts.append("*")
            previous = kind
            if p[0] == "field":
                dims = f", {p[4]}" if p[4] else ""
                axes = "" if p[3] == "IJK" else f"{p[3]}, "
                parts.append(f"{p[1]}: Field[{axes}{p[2]}{dims}]")
            else:
                default = self._defaults.get(p[1], inspect.Parameter.empty)
                parts.append(f"{p[1]}: {p[2]}" + ("" if default is inspect.Parameter.empty
                                                  else f" = {default!r}"))
        if previous is inspect.Parameter.POSITIONAL_ONLY:
            parts.append("/")
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
        fields, scalars, domain, exec_info, anchors = self.bind(*args, **kwargs)
        run_start = time.perf_counter()
        numpy_backend.execute(self._tree, fields, scalars, domain, anchors)
        run_end = time.perf_counter()
        if exec_info is not None:
            self._record_call(exec_info, fields, domain, call_start, run_start, run_end)

    @property
    def _tree(self):
        tree = self.__dict__.get("_tree_cache")
        if tree is None:
            tree = self.__dict__["_tree_cache"] = self.ir_tree()
        return tree


def _reference_to(definition, target):
    """``(module, qualname)`` of ``definition`` when importing that module and following the
    name gives ``target``, else None (``__main__`` never: another process's ``__main__`` is
    another program, or the same one without what its ``if __name__ == "__main__":`` made)."""
    module_name = getattr(definition, "__module__", None)
    qualname = getattr(definition, "__qualname__", "")
    if not module_name or module_name == "__main__" or "<locals>" in qualname:
        return None
    obj = sys.modules.get(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return (module_name, qualname) if obj is target else None


def _stencil_by_reference(module_name: str, qualname: str):
    """Unpickling: import the stencil's module and take the stencil from it."""
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, Stencil):
        raise TypeError(f"{module_name}.{qualname} is no longer a stencil: cannot unpickle it")
    return obj


_from_tree_cache: dict = {}


def _stencil_from_tree(tree: dict, backend: str, code_options: dict, state: dict):
    """Unpickling: build the definition tree again (once per process and tree)."""
    key = hashlib.sha256(repr((tree, backend, sorted(code_options.items()))).encode(
        "utf-8", "surrogatepass")).hexdigest()
    with _memory_lock:
        module = _from_tree_cache.get(key)
    if module is not None:
        return module
    module = _module_from_tree(tree, backend, code_options, say_warnings=False)
    definition = state.get("definition")
    module.definition = definition
    module.externals = dict(state.get("constants", {}))
    module.dtypes = dict(state.get("dtypes", {}))
    module._parameter_kinds_carried = dict(state.get("parameter_kinds", {}))
    module.__doc__ = getattr(definition, "__doc__", None)
    module.__wrapped__ = definition
    with _memory_lock:
        module = _from_tree_cache.setdefault(key, module)
    return module


def _collect_scalars(node, names: set) -> None:
    """Add the scalar parameters that analysed-IR ``node`` reads to ``names``."""
    if isinstance(node, tuple) and len(node) == 3 and node[0] == "scalar":
        names.add(node[2])
    elif isinstance(node, (tuple, list)):
        for item in node:
            _collect_scalars(item, names)
    elif isinstance(node, dict):
        for item in node.values():
            _collect_scalars(item, names)


def _check_options(options: dict) -> tuple[dict, dict | None, dict]:
    """Split the keyword options into the code options (cache key), the ``build_info`` dict
    to fill (or None) and the ``dtypes`` placeholders; warn once about GT4Py's options that
    change nothing here."""
    code_options, build_info, dtypes = {}, None, {}
    for key, value in options.items():
        if key in _CODE_OPTIONS:
            code_options[key] = value
        elif key == "build_info":
            if value is not None and not isinstance(value, dict):
                raise TypeError(f"build_info must be a dict for the build to fill, got "
                                f"{type(value).__name__}")
            build_info = value
        elif key == "dtypes":
            dtypes = _check_dtypes(value)
        elif key == "verbose":  # the build's log record at INFO (gtscript/buildlog.py)
            if not isinstance(value, bool):
                raise TypeError(f"verbose must be True or False, got {value!r}")
        elif key in _IGNORED_GT4PY_OPTIONS:
            _warn_once(("option", key), f"gtscript ignores GT4Py's stencil option {key!r}: it "
                       f"changes nothing in what gtscript builds")
        else:
            raise TypeError(f"unknown stencil option {key!r} (known: "
                            f"{', '.join(sorted(_CODE_OPTIONS | _OTHER_OPTIONS))})")
    return code_options, build_info, dtypes


def _field_type(value):
    """A ``dtypes=`` value that is a Field type as gtscript's FieldDescriptor (GT4Py's
    ``Field[...]`` too: a framework that imports GT4Py passes its own); others unchanged."""
    kind = type(value)
    if kind.__name__ == "_FieldDescriptor" and kind.__module__.split(".")[0] == "gt4py":
        return lang.FieldDescriptor(lang.resolve_dtype(value.dtype),
                                    "".join(axis.name for axis in value.axes),
                                    tuple(int(d) for d in value.data_dims))
    return value


def _check_dtypes(dtypes) -> dict:
    """``dtypes={"T": np.float32, "Tij": Field[IJ, np.float64], ...}``: placeholder name ->
    dtype name, or a Field type (its dtype resolved) that an argument annotated ``"Tij"`` or
    a temporary declared ``t: Tij`` takes, as in GT4Py. A key that is not a string
    (``{float: np.float32}``) is accepted and changes nothing: GT4Py 1.1 types the literals of
    that Python type with it in its IR, which changes no result of its numpy and debug
    backends (``literal_float_precision=`` sets the literals' precision)."""
    if dtypes is None:
        return {}
    if not isinstance(dtypes, dict):
        raise TypeError(f"dtypes must be a dict from placeholder names to dtypes, got "
                        f"{type(dtypes).__name__}")
    resolved: dict[str, str | lang.FieldDescriptor] = {}
    for name, dtype in dtypes.items():
        if not isinstance(name, str):
            continue
        try:
            dtype = _field_type(dtype)
            if isinstance(dtype, lang.FieldDescriptor):
                inner = dtype.dtype
                if isinstance(inner, str) and inner not in lang.DTYPES and inner in dtypes \
                        and not isinstance(dtypes[inner], lang.FieldDescriptor):
                    inner = dtypes[inner]  # Field[IJ, "T"] with "T" a dtype placeholder
                resolved[name] = dataclasses.replace(dtype, dtype=lang.resolve_dtype(inner))
            else:
                resolved[name] = lang.resolve_dtype(dtype)
        except GTScriptDefinitionError as exc:
            raise TypeError(f"dtypes[{name!r}]: {exc.msg}") from None
    return resolved



_warned: set = set()
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _warn_once(key, message: str) -> None:
    """Warn once per process and ``key``, at the first frame outside gtscript (the user's
    decorator line)."""
    with _memory_lock:
        if key in _warned:
            return
        _warned.add(key)
    frame: types.FrameType | None = sys._getframe(0)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, GT4PyCompatibilityWarning, stacklevel=level)


def _resolve_backend(backend) -> str:
    if backend in BACKENDS:
        return backend
    if backend in GT4PY_BACKENDS:
        nearest = GT4PY_BACKENDS[backend]
        _warn_once(("backend", backend), f"GT4Py's backend {backend!r} builds with gtscript's "
                   f"{nearest!r} backend")
        return nearest
    raise ValueError(f"unknown backend {backend!r} (available: {', '.join(BACKENDS)}; "
                     f"GT4Py's {', '.join(GT4PY_BACKENDS)} map to the nearest of them)")


#: Keyword arguments every call takes besides the stencil's own (cuda adds ``stream``).
_CALL_OPTIONS = (("domain", None), ("origin", None), ("validate_args", True), ("exec_info", None),
                 ("global_origin", None), ("global_domain", None))


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


def _fill_build_info(build_info, module, parse_time: float, start: float, source: str) -> None:
    """GT4Py's ``build_info=`` dict: the times of this build's stages, in seconds."""
    if build_info is None:
        return
    core = module.build_info
    fresh = source != "pre-key"
    build_info.update(
        # The phases (docs/performance.md): they add up to parse_time + codegen_time.
        # frontend: definition -> definition tree -> IR; analysis; the cpu backend's LLVM
        # IR, optimisation and object code; load: cache key, cache lookup and loading.
        frontend_time=parse_time + (core["lower_time"] if fresh else 0.0),
        analysis_time=core["analysis_time"] if fresh else 0.0,
        llvm_ir_time=core["llvm_ir_time"] if fresh else 0.0,
        optimise_time=core["optimise_time"] if fresh else 0.0,
        object_time=core["object_time"] if fresh else 0.0,
        load_time=core["load_time"] if fresh else 0.0,
        # a fresh cpu build: its LLVM functions, and how many of them were optimised with the
        # cheaper pipeline because the build went over its optimisation budget
        llvm_functions=core["llvm_functions"] if fresh else 0,
        llvm_cheap_functions=core["llvm_cheap_functions"] if fresh else 0,
        # a fresh cpu build: when its LLVM part (run without the GIL) began and ended, on
        # time.perf_counter's clock; (0.0, 0.0) for any other
        llvm_interval=core["llvm_interval"] if fresh and core["module_source"] == "build"
        else (0.0, 0.0),
        parse_time=parse_time,  # the frontend: definition -> definition tree
        # the C core: analysis, code generation and compilation (or the disk cache's load)
        codegen_time=core["build_time"] if source != "pre-key" else 0.0,
        build_time=time.perf_counter() - start,  # everything, this call
        # "pre-key": the decorator found the very stencil object (docs/caching.md)
        module_source=source if source == "pre-key" else core["module_source"],
        # "hit": the definition tree came from the disk index, the frontend did not run
        index=getattr(module, "_index_result", "miss") if fresh else "pre-key",
        backend=core["backend"],
        cache_key=core["cache_key"],
    )


def _check_definition(definition) -> None:
    """The definition is read from its source and code object: only a Python function
    (``def``) has them, not any callable (a class, a builtin, a partial)."""
    if not isinstance(definition, types.FunctionType):
        raise TypeError(f"definition must be a Python function (def ...), got "
                        f"{type(definition).__name__} {definition!r:.80}")


def _build(definition, backend, externals, rebuild, name, options):
    start = time.perf_counter()
    config.check_environment()
    verbose = bool(options.get("verbose", False))
    backend = _resolve_backend(backend)
    _check_definition(definition)
    externals = dict(externals or {})
    code_options, build_info, dtypes = _check_options(options)
    if build_info is None and (verbose or buildlog.wants(verbose)):
        build_info = {}  # the log reads the build's facts from it
    # The pre-key: None when something the frontend reads has no content key (a property,
    # an object of unknown kind): then neither the memory nor the disk index is asked.
    fingerprint = frontend.definition_fingerprint(definition, externals)
    key = None if fingerprint is None else (
        fingerprint, backend, name, tuple(sorted((k, repr(v)) for k, v in code_options.items())),
        tuple(sorted(dtypes.items())))
    if not rebuild and key is not None:
        with _memory_lock:
            cached = _memory_cache.pop(key, None)
            if cached is not None:
                _memory_cache[key] = cached  # most recently used: to the end of the order
        if cached is not None:
            _reissue(cached.build_warnings)
            _fill_build_info(build_info, cached, 0.0, start, "pre-key")
            _log_build(cached, build_info, verbose)
            return cached
    # The disk index (gtscript/_index.py): the definition's place enters too, so that the
    # tree's source positions (warnings, errors at call time) are this definition's.
    code = definition.__code__
    index_key = None if key is None else _index.pre_key(key, code.co_filename,
                                                         code.co_firstlineno)
    module = None if rebuild or index_key is None else _from_index(index_key, backend,
                                                                   code_options)
    index = "hit" if module is not None else "miss"
    if module is None:
        tree = frontend.parse_definition(definition, externals, dtypes)
        if name:
            tree["name"] = name
        parse_time = time.perf_counter() - start
        module = _module_from_tree(tree, backend, code_options, rebuild)
        if module.cache_key and index_key is not None:
            _index.store(index_key, module.cache_key, tree)
    else:
        parse_time = 0.0
    module.definition = definition
    module.externals = externals
    module.dtypes = dtypes
    module.__doc__ = definition.__doc__
    module.__wrapped__ = definition
    module._index_result = index
    with _memory_lock:
        if key is not None:
            _memory_cache.pop(key, None)
            _memory_cache[key] = module
        limit = _memory_limit()
        while len(_memory_cache) > limit:  # the least recently used go (their code with them)
            del _memory_cache[next(iter(_memory_cache))]
    _fill_build_info(build_info, module, parse_time, start, "build")
    _log_build(module, build_info, verbose)
    return module


def _log_build(module, build_info, verbose: bool) -> None:
    if build_info is not None and (verbose or buildlog.wants(verbose)):
        buildlog.build(getattr(module, "__name__", "stencil"), build_info,
                       str(_core.cache_path()), verbose)


def _from_index(index_key: str, backend: str, code_options: dict):
    """The stencil from the definition tree the disk index holds for ``index_key``, or None
    (no entry, or the core computes another key from it than the one stored: the normal
    path decides then)."""
    found = _index.load(index_key)
    if found is None:
        return None
    cache_key, tree = found
    try:
        module = _module_from_tree(tree, backend, code_options, say_warnings=False)
    except (SyntaxError, TypeError, ValueError, RuntimeError):
        return None  # a tree this core rejects: lower the definition again (its errors then)
    if module.cache_key != cache_key:
        return None
    _reissue(module.build_warnings)
    return module


def _module_from_tree(tree: dict, backend: str, code_options: dict, rebuild: bool = False,
                      say_warnings: bool = True):
    """The C core's module of a definition tree (its build warnings kept, and said unless
    ``say_warnings`` is false: an unpickled stencil's were said where it was built)."""
    cls = NumpyStencil if backend == "numpy" else Stencil
    # rebuild reaches the C core too: it skips the memory and disk levels keyed by the IR.
    module: Stencil[...] = cls(tree, backend, {**code_options, "rebuild": True} if rebuild else code_options)
    # The analysis' warnings (e.g. a temporary never read) are part of the definition: a
    # re-decoration served from the cache says them again. The C core hands them over rather
    # than issuing them (no warnings.catch_warnings around a build that releases the GIL).
    module.build_warnings = list(module._analysis_warnings)
    if say_warnings:
        _reissue(module.build_warnings)
    module.options = code_options
    module._definition_tree = tree
    return module


@overload
def stencil(backend: Callable[_P, Any], definition: None = None, *,
            externals: Mapping[str, Any] | None = None, rebuild: bool = False,
            name: str | None = None, **options: Any) -> Stencil[_P]: ...
@overload
def stencil(backend: str | None, definition: Callable[_P, Any], *,
            externals: Mapping[str, Any] | None = None, rebuild: bool = False,
            name: str | None = None, **options: Any) -> Stencil[_P]: ...
@overload
def stencil(backend: str | None = None, definition: None = None, *,
            externals: Mapping[str, Any] | None = None, rebuild: bool = False,
            name: str | None = None,
            **options: Any) -> Callable[[Callable[_P, Any]], Stencil[_P]]: ...
def stencil(backend: Any = None, definition: Callable[..., Any] | None = None, *,
            externals: Mapping[str, Any] | None = None, rebuild: bool = False,
            name: str | None = None, **options: Any) -> Any:
    """Compile a GTScript definition into a :class:`~gtscript.stencil.Stencil`.

    Both GT4Py forms work: ``@gtscript.stencil(backend="cpu", externals={...})`` on a
    definition, and ``gtscript.stencil("cpu", definition, externals={...})``. The build is
    cached (see docs/caching.md): the same definition compiles once per machine.

    Parameters
    ----------
    backend : str, default "cpu"
        ``"cpu"`` (LLVM ORC JIT), ``"numpy"`` (the reference backend) or ``"cuda"``; GT4Py's
        names map to the nearest (:data:`GT4PY_BACKENDS`).
    definition : function, optional
        The definition; without it, a decorator is returned.
    externals : dict, optional
        Compile-time constants and functions, read in the definition with
        ``from __externals__ import NAME``.
    rebuild : bool, default False
        Build even when the cache has the stencil.
    name : str, optional
        The stencil's name (default: the definition's).
    **options
        ``dtypes`` (placeholder name -> dtype), ``literal_float_precision`` and
        ``literal_int_precision`` (32 or 64), ``build_info`` (a dict the build fills with
        its timings), ``verbose`` (True: the build's log record at INFO on the ``gtscript``
        logger, printed on stderr when logging is not configured), the backends' code options
        (``llvm_passes``, ``gpu_arch``, ``block_size``, ``inline_temporaries``,
        ``vector_math``: True makes the cpu backend's vectorised exp, log, pow, trigonometric
        and hyperbolic functions call glibc's libmvec, within 4 ulps of libm, docs/backends.md);
        GT4Py's other options are accepted and
        ignored, with a warning once per name (docs/backends.md, "Build options").

    Returns
    -------
    Stencil or callable
        The compiled stencil, or a decorator that makes one.

    Raises
    ------
    GTScriptSyntaxError, GTScriptSemanticError, GTScriptDefinitionError
        A definition that is not GTScript, with its file, line and a caret.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.stencil(backend="cpu", externals={"SCALE": 2.0})
    ... def scale(inp: Field[np.float64], out: Field[np.float64]):
    ...     from __externals__ import SCALE
    ...     with computation(PARALLEL), interval(...):
    ...         out = SCALE * inp
    >>> inp = np.ones((4, 4, 3))
    >>> out = np.zeros_like(inp)
    >>> scale(inp, out)
    >>> float(out.sum())
    96.0
    >>> reference = gtscript.stencil("numpy", scale.definition_func, externals={"SCALE": 2.0})
    >>> reference.backend
    'numpy'
    """
    # A definition's error is the user's, located in their source: the traceback shows their
    # call and the definition's line, not the frontend's frames (this frame remains: pytest
    # and IPython hide it by __tracebackhide__).
    __tracebackhide__ = True
    if callable(backend) and definition is None:  # @gtscript.stencil without arguments
        backend, definition = "cpu", backend
    if backend is None:
        backend = "cpu"
    if definition is not None:
        try:
            return _build(definition, backend, externals, rebuild, name, options)
        except GTScriptSyntaxError as exc:
            raise exc.with_traceback(None) from None  # the same error, its frames cut

    def decorator(func):
        __tracebackhide__ = True
        try:
            return _build(func, backend, externals, rebuild, name, options)
        except GTScriptSyntaxError as exc:
            raise exc.with_traceback(None) from None

    return decorator


# `gtscript.stencil` is this function (it hides the module of the same name), so the tuples
# the docs cite as gtscript.stencil.BACKENDS and gtscript.stencil.GT4PY_BACKENDS hang on it too
setattr(stencil, "BACKENDS", BACKENDS)
setattr(stencil, "GT4PY_BACKENDS", GT4PY_BACKENDS)


class LazyStencil:
    """A stencil built when it is first called or inspected, as :func:`lazy_stencil` returns.

    ``implementation`` is the built stencil; any other attribute is the built stencil's.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> def negate(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = -inp
    >>> lazy = gtscript.lazy_stencil("cpu", negate)
    >>> lazy.field_info["out"]["intent"]          # inspecting builds it
    'out'
    >>> type(lazy.implementation).__name__
    'Stencil'
    """

    def __init__(self, definition, backend, externals, rebuild, name, options):
        _check_definition(definition)
        self.definition = definition
        self.backend = backend
        self._build_args = (definition, backend, externals, rebuild, name, options)
        self._implementation = None
        self._lock = threading.Lock()
        self.__name__ = name or getattr(definition, "__name__", "stencil")
        self.__doc__ = definition.__doc__
        self.__wrapped__ = definition

    @property
    def implementation(self):
        """The stencil, built (or taken from the cache) on first use."""
        with self._lock:
            if self._implementation is None:
                self._implementation = _build(*self._build_args)
            return self._implementation

    def check_syntax(self):
        """Parse the definition now (without building), raising its syntax errors."""
        definition, _backend, externals, _rebuild, _name, options = self._build_args
        dtypes = _check_options(options)[2]
        frontend.parse_definition(definition, dict(externals or {}), dtypes)

    def __call__(self, *args, **kwargs):
        return self.implementation(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_implementation", "_build_args", "_lock"):
            raise AttributeError(name)
        return getattr(self.implementation, name)

    def __repr__(self) -> str:
        state = "built" if self._implementation is not None else "not built yet"
        return f"<gtscript lazy stencil {self.__name__} backend={self.backend!r} ({state})>"


def lazy_stencil(backend=None, definition=None, *, externals=None, rebuild=False, name=None,
                 eager=False, check_syntax=True, **options):
    """Like :func:`stencil`, but the stencil is built on its first call or attribute access.

    Parameters
    ----------
    backend, definition, externals, rebuild, name, **options
        As for :func:`stencil`.
    eager : bool, default False
        Build now after all.
    check_syntax : bool, default True
        Parse the definition now, so that language errors still show at the definition.

    Returns
    -------
    LazyStencil or callable

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.lazy_stencil(backend="cpu")
    ... def double(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = 2.0 * inp
    >>> double
    <gtscript lazy stencil double backend='cpu' (not built yet)>
    >>> out = np.zeros((2, 2, 2))
    >>> double(np.ones((2, 2, 2)), out)
    >>> float(out[0, 0, 0]), double
    (2.0, <gtscript lazy stencil double backend='cpu' (built)>)
    """
    if callable(backend) and definition is None:
        backend, definition = "cpu", backend
    if backend is None:
        backend = "cpu"
    backend = _resolve_backend(backend)
    _check_options(options)

    def decorator(func):
        lazy = LazyStencil(func, backend, externals, rebuild, name, options)
        if eager:
            lazy.implementation  # noqa: B018  (builds now)
        elif check_syntax:
            lazy.check_syntax()
        return lazy

    return decorator if definition is None else decorator(definition)


def build_all(definitions, *, max_workers=None) -> list:
    """Build many stencils at once, for a model that defines hundreds at start-up.

    ``definitions`` is an iterable whose items are a definition function or a pair
    ``(definition, options)``, ``options`` a dict of :func:`stencil`'s keyword arguments
    (``backend``, ``externals``, ``rebuild``, ``name``, ``build_info`` and the build options).
    Returns the stencils in the same order. The builds run on a pool of ``max_workers``
    threads (default: the cores this process may use); each build's LLVM part runs without
    the GIL, so cpu builds compile in parallel. Every build runs to its end; then the first
    failure, in the order of ``definitions``, is raised.

    Parameters
    ----------
    definitions : iterable of function or (function, dict)
        The definitions, each alone or with :func:`stencil`'s keyword arguments.
    max_workers : int, optional
        Threads of the pool (default: the cores this process may use).

    Returns
    -------
    list of Stencil
        In the order of ``definitions``.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> def double(a: Field[np.float64], b: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         b = 2.0 * a
    >>> def shift(a: Field[np.float64], b: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         b = a[1, 0, 0]
    >>> double_cpu, shift_numpy = gtscript.build_all([double, (shift, {"backend": "numpy"})])
    >>> a = np.arange(27.0).reshape(3, 3, 3)
    >>> b = np.zeros_like(a)
    >>> double_cpu(a, b)
    >>> bool((b == 2.0 * a).all())
    True
    >>> shift_numpy.backend
    'numpy'
    """
    items = []
    for item in definitions:
        definition, options = (item, {}) if callable(item) else item
        if not isinstance(options, dict):
            raise TypeError(f"build_all: the options of {definition!r} must be a dict, got "
                            f"{type(options).__name__}")
        items.append((definition, dict(options)))
    if max_workers is None:
        try:
            max_workers = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            max_workers = os.cpu_count() or 1
    if not isinstance(max_workers, int) or max_workers < 1:
        raise ValueError(f"build_all: max_workers must be a positive int, got {max_workers!r}")

    def build(item):
        definition, options = item
        return stencil(options.pop("backend", None), definition, **options)

    if max_workers == 1 or len(items) <= 1:
        return [build(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor, wait

    with ThreadPoolExecutor(max_workers=min(max_workers, len(items)),
                            thread_name_prefix="gtscript-build") as pool:
        futures = [pool.submit(build, item) for item in items]
        wait(futures)
    return [f.result() for f in futures]  # the first failure in order raises here


__all__ = ["stencil", "lazy_stencil", "build_all", "Stencil", "LazyStencil", "BACKENDS",
           "GT4PY_BACKENDS"]
