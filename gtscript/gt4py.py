"""gtscript as a GT4Py backend: ``import gtscript.gt4py``, then ``backend="gtscript:cpu"``.

Importing this module registers three backends in GT4Py's backend registry
(``gt4py.cartesian.backend.register``, as GT4Py registers its own ``numpy`` backend), and
with them three storage layouts in ``gt4py.storage``:

- ``gtscript:cpu``: gtscript's cpu backend (LLVM ORC JIT),
- ``gtscript:numpy``: gtscript's reference backend (the C core analyses, NumPy executes),
- ``gtscript:cuda``: gtscript's cuda backend (NVRTC).

A framework built on GT4Py (NDSL's ``StencilFactory``, a model's own small wrapper) then
builds every stencil with gtscript by changing its backend string::

    import gtscript.gt4py  # noqa: F401  (registers the backends)
    from gt4py.cartesian import gtscript as gt4py_gtscript

    stencil = gt4py_gtscript.stencil(backend="gtscript:cpu", definition=my_definition)

The build never runs GT4Py's frontend and needs no C++ compiler: the backend hands the
definition function, its externals, dtypes and options to :func:`gtscript.stencil` (with its
own cache) and wraps the stencil in a subclass of GT4Py's ``StencilObject`` with GT4Py's
whole interface (``field_info`` with GT4Py's own ``FieldInfo``, ``run(_origin_=,
_domain_=)``, ``exec_info`` ...). Calls go straight into gtscript's C call path: the class's
``__call__`` *is* the gtscript stencil, ``run`` one Python frame around it.

Neither GT4Py 1.1.x nor 1.2.x offers a plugin or entry-point mechanism for cartesian
backends: ``gt4py.cartesian.backend.from_name`` only looks in ``REGISTRY``, which GT4Py fills
when its own modules are imported, and no entry-point group is read. So the registration
happens when this module is imported, and a framework (or the model's top module) must
import ``gtscript.gt4py`` once before naming a ``gtscript:`` backend.

GT4Py is an optional dependency (``pip install 'gtscript[gt4py]'``); without it, importing
this module raises :class:`ImportError` saying so.
"""

from __future__ import annotations

import hashlib
import inspect
import threading
import time
import warnings
from typing import Any, ClassVar

try:
    import gt4py.cartesian.backend as _gt_backend
    from gt4py.cartesian import definitions as _gt_definitions
    from gt4py.cartesian.stencil_object import StencilObject as _StencilObject
    from gt4py.storage.cartesian.layout import LayoutInfo, layout_maker_factory
except ImportError as _exc:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        "gtscript.gt4py registers gtscript as a GT4Py backend and needs GT4Py "
        "(gt4py >= 1.1.12): pip install 'gtscript[gt4py]'") from _exc

from .stencil import _IGNORED_GT4PY_OPTIONS, _memory_limit
from .stencil import stencil as _gtscript_stencil

__all__ = ["BACKEND_NAMES", "GTScriptBackend", "CpuBackend", "NumpyBackend", "CudaBackend",
           "storage_info"]

#: The names this module registers, and the gtscript backend each builds with.
BACKEND_NAMES = {"gtscript:cpu": "cpu", "gtscript:numpy": "numpy", "gtscript:cuda": "cuda"}

#: GT4Py multiplies a layout's ``alignment`` by the dtype's size; 8 elements put the element at
#: ``aligned_index`` on a 64-byte boundary (a cache line, an AVX-512 vector) for 8-byte dtypes,
#: as ``gtscript.storage`` does (32 bytes for 4-byte dtypes), and pad the unit-stride axis to
#: a multiple of 8 points (gtscript.storage pads float64 lines exactly so).
_ALIGNMENT_ITEMS = 8

#: Per gtscript backend: the grid axes' layout (GT4Py's layout map: the largest number is the
#: unit-stride axis). cpu and numpy: C order, K unit stride; cuda: I unit stride.
_GRID_LAYOUT = {"cpu": (0, 1, 2), "numpy": (0, 1, 2), "cuda": (2, 1, 0)}

#: Options GT4Py's other backends take (``gt4py.cartesian.gtscript.stencil(**kwargs)``); they
#: change nothing in what gtscript builds and are dropped without a warning, so that a model's
#: keyword arguments for ``gt:gpu`` or ``dace:cpu`` work unchanged.
_OTHER_BACKENDS_OPTIONS = frozenset(_IGNORED_GT4PY_OPTIONS) | {
    "skip_passes", "device_sync", "verbose_cpp", "compiler_flags"}


def _layout_checker(grid_layout: tuple[int, int, int]):
    """GT4Py's ``is_optimal_layout``: the grid axes the array has are in gtscript's order of
    strides. Data dimensions may lie anywhere (GT4Py's allocator puts them outermost,
    ``gtscript.storage`` innermost: gtscript runs on both)."""

    def is_optimal_layout(field: Any, dimensions: tuple[str, ...]) -> bool:
        strides = getattr(field, "strides", None)
        dims = tuple(str(d) for d in dimensions)
        if strides is None or len(strides) != len(dims):
            return False
        grid = sorted((grid_layout["IJK".index(d)], abs(s))
                      for d, s in zip(dims, strides) if d in ("I", "J", "K"))
        return all(slow[1] >= fast[1] for slow, fast in zip(grid, grid[1:]))

    return is_optimal_layout


def storage_info(backend: str) -> LayoutInfo:
    """GT4Py's ``LayoutInfo`` for gtscript backend ``backend`` ("cpu", "numpy" or "cuda").

    Examples
    --------
    >>> import gtscript.gt4py as g
    >>> info = g.storage_info("cpu")
    >>> info["device"], info["alignment"], info["layout_map"](("I", "J", "K"))
    ('cpu', 8, (0, 1, 2))
    >>> g.storage_info("cuda")["layout_map"](("I", "J", "K"))
    (2, 1, 0)
    """
    grid = _GRID_LAYOUT[backend]
    return LayoutInfo(alignment=_ALIGNMENT_ITEMS,
                      device="gpu" if backend == "cuda" else "cpu",
                      layout_map=layout_maker_factory(grid),
                      is_optimal_layout=_layout_checker(grid))


# ------------------------------------------------------------------------- stencil classes

#: (gtscript stencil id, definition id, backend name, options text) -> StencilObject class,
#: least recently used first, bounded like gtscript's memory cache. A class holds its
#: stencil and definition, so the ids stay theirs while the entry lives.
_classes: dict = {}
_classes_lock = threading.Lock()


def _gt4py_field_info(info, facts) -> Any:
    """GT4Py's ``FieldInfo`` from gtscript's ``info`` and the C core's GT4Py ``facts`` (read
    first, K boundary, I and J offsets reached). GT4Py's horizontal boundary is the negated
    lowest and the highest offset a field is accessed at, negative on a side it is not read
    beyond the centre (``a[0, 1, 0]`` alone: ``(-1, 1)`` in J); gtscript's own
    ``field_info[...].boundary`` counts the halo, never negative in I and J."""
    (ilo, ihi), (jlo, jhi) = facts[2]
    return _gt_definitions.FieldInfo(
        access=_gt_definitions.AccessKind(int(info.access)),
        boundary=_gt_definitions.Boundary(((-ilo, ihi), (-jlo, jhi),
                                           tuple(int(v) for v in info.boundary[2]))),
        axes=info.axes, data_dims=info.data_dims, dtype=info.dtype)


def _gt4py_parameter_info(info) -> Any:
    kind = _gt_definitions.AccessKind
    return _gt_definitions.ParameterInfo(access=kind.READ if info.access else kind.NONE,
                                         dtype=info.dtype)


def _gt4py_min_k_size(computations) -> int:
    """GT4Py's ``min_sequential_axis_size`` (``compute_min_k_size``): from the intervals'
    compile-time bounds as GT4Py counts them (an interval over the whole column asks for no
    level; gtscript's own ``min_k_levels`` asks for one, the domain having at least one)."""
    min_start = min_end = biggest = 0
    for _order, intervals in computations:
        for start, end, body in intervals:
            if not body or not all(isinstance(b, tuple) and len(b) == 2 and
                                   all(isinstance(v, int) for v in b) for b in (start, end)):
                continue  # a bound known only at run time: GT4Py skips it too
            (start_level, start_offset), (end_level, end_offset) = start, end
            if start_level == 0 and end_level == 1:
                if start_offset != 0 or end_offset != 0:
                    biggest = max(biggest, start_offset - end_offset + 1)
            elif start_level == 0 and end_level == 0:
                min_start = max(min_start, end_offset)
                biggest = max(biggest, end_offset)
            else:
                min_end = max(min_end, -start_offset)
                biggest = max(biggest, -start_offset)
    return max(min_start + min_end, biggest)


def _gt4py_domain_info(gts) -> Any:
    info = gts.domain_info
    return _gt_definitions.DomainInfo(
        parallel_axes=tuple(info.parallel_axes), sequential_axis=info.sequential_axis,
        min_sequential_axis_size=_gt4py_min_k_size(gts.ir_tree()["computations"]),
        ndim=info.ndim)


def _source_of(definition) -> dict[str, str]:
    """GT4Py's ``source``: the stencil definition's source text by name (GT4Py 1.1 and 1.2
    fill it from the GTScript functions' sources and in practice report ``{}``); empty when
    the definition has no source file. The generated code is
    ``stencil.gtscript_stencil.source()``."""
    try:
        return {definition.__name__: inspect.getsource(definition)}
    except (OSError, TypeError):
        return {}


class _LazySource:
    """``source``, read at first use (most stencils are never printed)."""

    def __get__(self, obj, cls=None):
        cls = cls if obj is None else type(obj)
        if "_gt_source_" not in cls.__dict__:
            cls._gt_source_ = _source_of(cls.definition_func)
        return cls._gt_source_


def _run_method(gts):
    """GT4Py's ``run``: the origins and domain given as they are (GT4Py's per-field origin
    dict, ``"_all_"`` for the others), the arguments by name; ``exec_info`` gets the keys
    GT4Py's ``run`` fills (``domain``, ``origin``, ``run_start_time``, ``run_end_time``)
    and nothing else. gtscript validates the call (cheap, in C): a wrong array raises
    rather than being read or written outside."""

    def run(self, _domain_=None, _origin_=None, exec_info=None, **kwargs):
        if exec_info is None:
            return gts(**kwargs, origin=_origin_, domain=_domain_)
        info: dict = {}
        gts(**kwargs, origin=_origin_, domain=_domain_, exec_info=info)
        exec_info["domain"] = _domain_ if _domain_ is not None else info["domain"]
        exec_info["origin"] = _origin_ if _origin_ is not None else info["origin"]
        exec_info["run_start_time"] = info["run_start_time"]
        exec_info["run_end_time"] = info["run_end_time"]

    return run


def _property(attribute: str):
    return property(lambda self: getattr(type(self), attribute))


def _make_class(gts, definition, backend_name: str, options: dict, gt_id: str) -> type:
    name = options["name"] or getattr(definition, "__name__", "stencil")
    facts = gts._gt4py_field_facts
    attrs = {
        "__module__": options["module"] or getattr(definition, "__module__", __name__),
        "__qualname__": f"{name}____{backend_name.replace(':', '_')}_{gt_id}",
        "__doc__": getattr(definition, "__doc__", None) or "",
        "_gt_backend_": backend_name,
        "_gt_id_": gt_id,
        "_gt_domain_info_": _gt4py_domain_info(gts),
        "_gt_field_info_": {k: _gt4py_field_info(v, facts[k])
                            for k, v in gts.field_info.items()},
        "_gt_parameter_info_": {k: _gt4py_parameter_info(v)
                                for k, v in gts.parameter_info.items()},
        "_gt_constants_": dict(gts.constants),
        "_gt_options_": options,
        "definition_func": staticmethod(definition),
        #: the gtscript stencil this class runs (``gtscript.stencil``'s object)
        "gtscript_stencil": gts,
        # The class's __call__ is the gtscript stencil itself: not a function, so Python calls
        # it without ``self``, straight into its C call path (GT4Py's signature: the
        # arguments, then origin=, domain=, validate_args=, exec_info=).
        "__call__": gts,
        "run": _run_method(gts),
        "backend": _property("_gt_backend_"),
        "source": _LazySource(),
        "domain_info": _property("_gt_domain_info_"),
        "field_info": _property("_gt_field_info_"),
        "parameter_info": _property("_gt_parameter_info_"),
        "constants": _property("_gt_constants_"),
        "options": _property("_gt_options_"),
    }
    cls = type(attrs["__qualname__"], (_StencilObject,), attrs)
    missing = getattr(cls, "__abstractmethods__", ())
    if missing:  # a GT4Py version with more abstract members than known here
        raise TypeError(f"gtscript.gt4py cannot fill GT4Py's StencilObject: "
                        f"{sorted(missing)} missing")
    return cls


def _gt_id(gts, backend_name: str, options_text: str) -> str:
    """GT4Py's ``_gt_id_`` (10 hex digits): the gtscript build's cache key with the GT4Py
    options the class reports."""
    key = gts.build_info.get("cache_key") or repr(gts._definition_tree)
    return hashlib.sha256(f"{key}|{backend_name}|{options_text}".encode()).hexdigest()[:10]


# ------------------------------------------------------------------------------- backends


class GTScriptBackend(_gt_backend.Backend):
    """A GT4Py backend that builds with gtscript (one subclass per gtscript backend).

    ``load()`` and ``generate()`` take the definition function as the user wrote it
    (``builder._definition``: GT4Py's frontend never runs), ``builder.externals``,
    ``builder.dtypes`` and ``builder.options`` (``name``, ``rebuild``,
    ``raise_if_not_cached``, the literal precisions, ``build_info`` and the backend options),
    build with :func:`gtscript.stencil` and return a ``StencilObject`` subclass.
    """

    #: the gtscript backend this GT4Py backend builds with
    GTSCRIPT_BACKEND: ClassVar[str]

    options: ClassVar[dict[str, Any]] = {
        "llvm_passes": {"versioning": True, "type": str,
                        "description": "LLVM pass pipeline for the kernel (cpu)"},
        "inline_temporaries": {"versioning": True, "type": bool,
                               "description": "inline temporaries read at zero offset"},
        "vector_math": {"versioning": True, "type": bool,
                        "description": "vectorised exp/log/pow call libmvec (cpu; 4 ulps)"},
        "verbose": {"versioning": False, "type": bool,
                    "description": "log the build at INFO on the 'gtscript' logger"},
    }
    languages: ClassVar[dict[str, Any]] = {"computation": "c", "bindings": ["python"]}

    def load(self) -> type | None:
        """The stencil class from gtscript's caches (its memory and disk levels; a stencil in
        neither is built here, unless ``raise_if_not_cached``: then None, and GT4Py raises)."""
        return self._stencil_class(rebuild=False)

    def generate(self) -> type:
        """Build (again, with ``rebuild=True``) and return the stencil class."""
        cls = self._stencil_class(rebuild=bool(self.builder.options.rebuild), may_skip=False)
        assert cls is not None
        return cls

    # ---- the build

    def _gtscript_options(self) -> dict[str, Any]:
        options = self.builder.options
        kwargs: dict[str, Any] = {}
        for key, value in options.backend_opts.items():
            if key in self.options:
                kwargs[key] = value
            elif key not in _OTHER_BACKENDS_OPTIONS:
                warnings.warn(f"Unknown options '{ {key} }' for backend '{self.name}'",
                              RuntimeWarning, stacklevel=4)
        # GT4Py's default precisions are gtscript's: pass only a change (the cache key of a
        # build through GT4Py is then the same as gtscript.stencil's)
        for key in ("literal_int_precision", "literal_float_precision"):
            value = getattr(options, key)
            if value != 64:
                kwargs[key] = value
        if options.build_info is not None:
            kwargs["build_info"] = options.build_info
        dtypes = self.builder.dtypes
        if dtypes:
            kwargs["dtypes"] = dtypes
        return kwargs

    def _stencil_class(self, rebuild: bool, may_skip: bool = True) -> type | None:
        builder = self.builder
        options = builder.options
        definition = builder._definition  # the raw function: GT4Py's frontend never runs
        kwargs = self._gtscript_options()
        check_cached = may_skip and options.raise_if_not_cached and not rebuild
        if check_cached and "build_info" not in kwargs:
            kwargs["build_info"] = {}
        # the definition's own name is no name= (gtscript.stencil called directly on the same
        # definition then finds this very stencil in its memory cache)
        name = options.name if options.name != getattr(definition, "__name__", None) else None
        gts = _gtscript_stencil(self.GTSCRIPT_BACKEND, definition,
                                externals=builder.externals, rebuild=rebuild, name=name,
                                **kwargs)
        if check_cached and kwargs["build_info"].get("module_source") == "build":
            return None  # it was not in gtscript's caches (built now): GT4Py raises
        reported = options.as_dict()
        reported.pop("build_info", None)
        options_text = repr(sorted(reported.items()))
        key = (id(gts), id(definition), self.name, options_text)
        with _classes_lock:
            cls = _classes.pop(key, None)
            if cls is not None:
                _classes[key] = cls  # most recently used
                return cls
        start = time.perf_counter()
        cls = _make_class(gts, definition, self.name, reported,
                          _gt_id(gts, self.name, options_text))
        if options.build_info is not None:
            options.build_info["module_time"] = time.perf_counter() - start
        with _classes_lock:
            cls = _classes.setdefault(key, cls)
            limit = _memory_limit()
            while len(_classes) > limit:
                del _classes[next(iter(_classes))]
        return cls


class CpuBackend(GTScriptBackend):
    """``gtscript:cpu``: gtscript's cpu backend (LLVM ORC JIT)."""

    name = "gtscript:cpu"
    GTSCRIPT_BACKEND = "cpu"
    storage_info = storage_info("cpu")
    languages = {"computation": "llvm-ir", "bindings": ["python"]}


class NumpyBackend(GTScriptBackend):
    """``gtscript:numpy``: gtscript's reference backend (NumPy executes)."""

    name = "gtscript:numpy"
    GTSCRIPT_BACKEND = "numpy"
    storage_info = storage_info("numpy")
    languages = {"computation": "python", "bindings": ["python"]}


class CudaBackend(GTScriptBackend):
    """``gtscript:cuda``: gtscript's cuda backend (NVRTC)."""

    name = "gtscript:cuda"
    GTSCRIPT_BACKEND = "cuda"
    storage_info = storage_info("cuda")
    languages = {"computation": "cuda", "bindings": ["python"]}
    options = {
        **GTScriptBackend.options,
        "gpu_arch": {"versioning": True, "type": str, "description": "NVRTC target, sm_XX"},
        "block_size": {"versioning": True, "type": tuple, "description": "thread block (i, j)"},
    }


def _register(backend_cls: type[GTScriptBackend]) -> None:
    """``gt4py.cartesian.backend.register`` (the backend and its storage layout); importing
    this module again (``importlib.reload``) replaces the classes registered before."""
    registered = _gt_backend.REGISTRY.get(backend_cls.name)
    if registered is not None and registered.__module__ == __name__:
        del _gt_backend.REGISTRY[backend_cls.name]
    _gt_backend.register(backend_cls)


for _cls in (CpuBackend, NumpyBackend, CudaBackend):
    _register(_cls)
