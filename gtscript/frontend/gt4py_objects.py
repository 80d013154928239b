"""GT4Py's own objects, as a definition written for GT4Py holds them, read as the language's.

A definition built under a GT4Py-based framework imports ``gt4py.cartesian.gtscript``, not
gtscript: its annotations are GT4Py's ``Field[...]`` descriptors (often aliases defined in
another module, ``FloatField = Field[np.float64]``), its externals GT4Py's axis indices
(``I[0] + 1`` as region bounds), the functions it calls are decorated with GT4Py's
``@gtscript.function`` (or 1.2's ``@gtscript.lazy_function()``). ``from_gt4py`` maps each of
these to gtscript's own object with the same meaning, where the frontend meets a value (a
name, an attribute, an annotation); everything else is returned unchanged. GT4Py is never
imported here: its objects exist only once a definition's module has imported it.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

from .. import lang
from .syntax import GTSCRIPT_FUNCTION_ATTR

#: The module that defines GT4Py's language objects (1.1 and 1.2 alike).
_GT4PY_GTSCRIPT = "gt4py.cartesian.gtscript"


def _gt4py() -> types.ModuleType | None:
    """GT4Py's gtscript module when some module has imported it, else None (then no GT4Py
    object can exist)."""
    return sys.modules.get(_GT4PY_GTSCRIPT)


def from_gt4py(value: Any) -> Any:
    """``value`` as the language's own object when it is one of GT4Py's (an axis, an axis
    index or interval, a ``Field`` / ``GlobalTable`` maker or descriptor, a tuple of axes, a
    function marked by GT4Py), else ``value`` itself."""
    gt = _gt4py()
    if gt is None:
        return value
    kind = type(value)
    if kind is types.FunctionType:
        return _function(value)
    if kind is tuple:
        if value and any(type(item).__module__ == _GT4PY_GTSCRIPT for item in value):
            return tuple(from_gt4py(item) for item in value)
        return value
    if kind.__module__ != _GT4PY_GTSCRIPT:
        return value
    if isinstance(value, gt.Axis):
        return _AXES.get(value.name, value)
    if isinstance(value, gt.AxisIndex):
        # GT4Py's I[n] + m: from the domain's start for n >= 0, else from its end
        # (GT4Py keeps a NumPy integer offset as it is given: `I[0] + np.int64(2)`)
        return lang.Axis(value.axis)[int(value.index)] + int(value.offset)
    if isinstance(value, gt.AxisInterval):
        return lang.AxisInterval(value.axis, value.start, value.end)
    if isinstance(value, gt.ShiftedAxis):
        from .expressions import _ShiftedAxis  # the axis shorthand's `I - 1` (a cycle otherwise)

        return _ShiftedAxis(value.name, value.shift)
    maker = getattr(gt, "_GlobalTableDescriptorMaker", None)
    if maker is not None and isinstance(value, maker):
        return lang.GlobalTable
    if isinstance(value, gt._FieldDescriptorMaker):
        return lang.Field
    if isinstance(value, gt._FieldDescriptor):
        return _field(value)
    return value


_AXES = {"I": lang.I, "J": lang.J, "K": lang.K}


def _field(descriptor: Any) -> lang.FieldDescriptor:
    """GT4Py's ``_FieldDescriptor`` (what ``Field[...]`` / ``GlobalTable[...]`` make) through
    gtscript's own ``Field`` / ``GlobalTable``, so that both check it alike."""
    dtype = descriptor.dtype
    element = (dtype, tuple(descriptor.data_dims)) if descriptor.data_dims else dtype
    axes = tuple(from_gt4py(axis) for axis in descriptor.axes)
    # (__class_getitem__ spelled out: type checkers do not know these classes subscriptable)
    if not axes:  # GlobalTable[(dtype, (n, ...))]: no grid axes
        return lang.GlobalTable.__class_getitem__(element)
    spec = axes[0] if len(axes) == 1 else axes
    return lang.Field.__class_getitem__((spec, element))


def _function(func: Callable) -> Callable:
    """A function GT4Py marked, recorded as a gtscript function (once: the record is kept on
    the function, as gtscript's ``@function`` keeps it); any other function unchanged."""
    if getattr(func, GTSCRIPT_FUNCTION_ATTR, None) is not None:
        return func
    target = lazy_target(func)
    if target is not None:
        return _record_lazy(target, func)
    if isinstance(getattr(func, "_gtscript_", None), dict):  # GT4Py's @gtscript.function
        from .functions import function

        function(func)
        # the values its names had when GT4Py decorated it, as GT4Py inlines them
        getattr(func, GTSCRIPT_FUNCTION_ATTR).captured.update(decoration_values(func))
    return func


def decoration_values(func: Callable) -> dict[str, Any]:
    """The values the global and closure names of a function GT4Py's ``@gtscript.function``
    marked had when it was decorated (GT4Py keeps them, ``_gtscript_["nonlocals"]``, and
    inlines those, not the names' values at the build). GT4Py merges into that dict the
    values of the functions it calls: a name one of those also holds, with the same value,
    may be theirs, not this function's, and is left out (its value now is used)."""
    record = getattr(func, "_gtscript_", None)
    nonlocals = record.get("nonlocals") if isinstance(record, dict) else None
    if not isinstance(nonlocals, dict):
        return {}
    code = func.__code__
    own = set(code.co_names) | set(code.co_freevars)
    nested = [v._gtscript_.get("nonlocals", {}) for v in nonlocals.values()
              if isinstance(getattr(v, "_gtscript_", None), dict)]
    values = {}
    for name, value in nonlocals.items():
        if name not in own:  # a dotted name (`ppm.fn`), or a called function's name
            continue
        if any(isinstance(n, dict) and name in n and n[name] is value for n in nested):
            continue
        values[name] = value
    return values


def is_gt4py_function(value: Any) -> bool:
    """Whether ``value`` is a function GT4Py's ``@gtscript.function`` marked, or the closure
    GT4Py 1.2's ``@gtscript.lazy_function()`` binds a function's name to."""
    return type(value) is types.FunctionType and (
        isinstance(getattr(value, "_gtscript_", None), dict) or lazy_target(value) is not None
    )


def lazy_target(func: Callable) -> Callable | None:
    """The function a GT4Py 1.2 ``@gtscript.lazy_function(...)`` decoration wrapped (the name
    is bound to a closure that annotates it when called), else None."""
    if func.__module__ != _GT4PY_GTSCRIPT or not func.__qualname__.startswith("lazy_function."):
        return None
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    try:
        target = cells["func"].cell_contents
    except (KeyError, ValueError):
        return None
    return target if type(target) is types.FunctionType else None


def lazy_hooks(func: Callable) -> tuple[Callable | None, Callable | None]:
    """The ``before_annotation`` and ``after_annotation`` hooks of a GT4Py 1.2 lazy
    function's closure (None where not given)."""
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    hooks = []
    for name in ("before_annotation", "after_annotation"):
        try:
            hooks.append(cells[name].cell_contents if name in cells else None)
        except ValueError:
            hooks.append(None)
    return hooks[0], hooks[1]


def _record_lazy(target: Callable, wrapper: Callable) -> Callable:
    """Record the function a GT4Py lazy decoration wrapped, when a stencil first uses it:
    its ``before_annotation`` hook runs first, its ``after_annotation`` hook after (once,
    as gtscript's own lazy functions are read once)."""
    if getattr(target, GTSCRIPT_FUNCTION_ATTR, None) is not None:
        return target
    from .functions import function

    before, after = lazy_hooks(wrapper)
    if before is not None:
        before(target)
    function(target)
    if after is not None:
        after(target)
    return target
