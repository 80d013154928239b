"""The user-visible objects of the GTScript language, compatible with GT4Py's ``gtscript``.

Most of these objects are never executed: the frontend reads the definition's source and
recognises them by name.  They exist so that definitions import and type-check as ordinary
Python, and so that ``Field[...]`` annotations evaluate to a descriptor the frontend can read.
Called outside a stencil definition, the placeholders raise a :class:`RuntimeError` that says
where they belong.
"""

from __future__ import annotations

import builtins as _py
import enum
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import GTScriptDefinitionError

__all__ = [
    "Field",
    "FieldDescriptor",
    "Axis",
    "AxisIndex",
    "I",
    "J",
    "K",
    "IJ",
    "IJK",
    "IterationPolicy",
    "PARALLEL",
    "FORWARD",
    "BACKWARD",
    "computation",
    "interval",
    "horizontal",
    "region",
    "compile_assert",
    "__INLINED",
    "DTYPES",
    "MATH_BUILTINS",
    "resolve_dtype",
    # the math builtins
    "abs", "min", "max", "sqrt", "exp", "log", "log10", "pow", "floor", "ceil", "trunc",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "isfinite", "isinf", "isnan", "mod",
]  # fmt: skip


# --------------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------------

#: The dtypes of the language, by their canonical names.
DTYPES = ("float64", "float32", "int32", "int64", "bool")

# Python types and type names accepted as dtypes, with the dtype they stand for.
_PYTHON_DTYPES = {float: "float64", int: "int64", bool: "bool"}
_DTYPE_NAMES = {"float": "float64", "int": "int64", **{name: name for name in DTYPES}}


def resolve_dtype(spec: Any) -> str:
    """Map a dtype specification to its canonical name (one of :data:`DTYPES`).

    Accepted: ``float``, ``int``, ``bool``, the NumPy scalar types ``np.float64``,
    ``np.float32``, ``np.int32``, ``np.int64``, ``np.bool_``, equivalent ``np.dtype`` objects,
    and the names ``"float64"``, ``"float32"``, ``"int32"``, ``"int64"``, ``"bool"``,
    ``"float"``, ``"int"``.  Anything else is a :class:`GTScriptDefinitionError`.
    """
    name = None
    if isinstance(spec, str):
        name = _DTYPE_NAMES.get(spec)
    elif isinstance(spec, type) and spec in _PYTHON_DTYPES:
        name = _PYTHON_DTYPES[spec]
    elif isinstance(spec, np.dtype) or (isinstance(spec, type) and issubclass(spec, np.generic)):
        dtype = np.dtype(spec)
        if dtype.shape == () and dtype.name in DTYPES:
            name = dtype.name
    if name is None:
        raise GTScriptDefinitionError(
            f"unsupported dtype {spec!r}: use float (float64), np.float32, int (int64), "
            f"np.int32 or bool"
        )
    return name


def _dtype_and_data_dims(spec: Any) -> tuple[str, tuple[int, ...]]:
    """Split ``dtype`` or ``(dtype, (n, ...))`` (or a sub-array ``np.dtype``) into both parts."""
    if isinstance(spec, np.dtype) and spec.subdtype is not None:
        base, shape = spec.subdtype
        return resolve_dtype(base), tuple(shape)
    if isinstance(spec, tuple):
        if len(spec) != 2:
            raise GTScriptDefinitionError(
                f"invalid field element type {spec!r}: expected (dtype, (n, ...))"
            )
        base, shape = spec
        shape = (shape,) if isinstance(shape, int) else shape
        if not (
            isinstance(shape, tuple)
            and shape
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)
        ):
            raise GTScriptDefinitionError(
                f"invalid data dimensions {spec[1]!r}: expected a tuple of positive ints"
            )
        return resolve_dtype(base), shape
    return resolve_dtype(spec), ()


# --------------------------------------------------------------------------------------------
# Axes
# --------------------------------------------------------------------------------------------


class Axis:
    """A grid axis.  ``I[0]`` / ``I[-1]`` name the first / last point of the compute domain
    along it (used in ``region[...]``); ``I[0] - 1`` is one point before the first."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __getitem__(self, index: int) -> AxisIndex:
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"{self.name}[...] takes an int, got {index!r}")
        # Non-negative indices count from the start of the domain, negative ones from its end.
        return AxisIndex(self.name, 0 if index >= 0 else 1, index)

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class AxisIndex:
    """A point on an axis relative to the compute domain: ``level`` 0 is its start, 1 its end
    (one past the last point); ``offset`` counts points from there."""

    axis: str
    level: int
    offset: int

    def __add__(self, other: int) -> AxisIndex:
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        return AxisIndex(self.axis, self.level, self.offset + other)

    __radd__ = __add__

    def __sub__(self, other: int) -> AxisIndex:
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        return AxisIndex(self.axis, self.level, self.offset - other)

    def __repr__(self) -> str:
        anchor = "0" if self.level == 0 else "-1"
        shift = self.offset - (0 if self.level == 0 else -1)
        if shift == 0:
            return f"{self.axis}[{anchor}]"
        return f"{self.axis}[{anchor}] {'+' if shift > 0 else '-'} {_py.abs(shift)}"


I = Axis("I")  # noqa: E741  (the GT4Py name)
J = Axis("J")
K = Axis("K")
IJ = (I, J)
IJK = (I, J, K)

# Axis sets a field may have, by the names of their axes.
_FIELD_AXES = ("IJK", "IJ", "K")


def _axes_name(spec: Any) -> str | None:
    """``"IJK"`` / ``"IJ"`` / ``"K"`` etc. for an axis or a tuple of axes, else None."""
    if isinstance(spec, Axis):
        return spec.name
    if isinstance(spec, tuple) and spec and all(isinstance(a, Axis) for a in spec):
        return "".join(a.name for a in spec)
    return None


# --------------------------------------------------------------------------------------------
# Fields
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldDescriptor:
    """What a ``Field[...]`` annotation evaluates to."""

    dtype: str  # one of DTYPES
    axes: str = "IJK"  # "IJK" | "IJ" | "K" | "" (a GlobalTable)
    data_dims: tuple[int, ...] = ()

    def __repr__(self) -> str:
        element = self.dtype if not self.data_dims else f"({self.dtype}, {self.data_dims})"
        if not self.axes:
            return f"GlobalTable[{element}]"
        return f"Field[{self.axes}, {element}]"


class Field:
    """Field type annotations: ``Field[np.float64]`` (axes I, J, K), ``Field[IJ, float]``,
    ``Field[K, np.float32]``, ``Field[(np.float64, (3,))]`` (a 3-vector at every point)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Field:
        raise TypeError("Field is a type annotation: write Field[dtype] or Field[axes, dtype]")

    def __class_getitem__(cls, spec: Any) -> FieldDescriptor:
        axes = "IJK"
        if isinstance(spec, tuple) and len(spec) == 2 and _axes_name(spec[0]) is not None:
            axes, spec = _axes_name(spec[0]), spec[1]
        if axes not in _FIELD_AXES:
            raise GTScriptDefinitionError(
                f"unsupported field axes {axes}: use IJK (the default), IJ or K"
            )
        dtype, data_dims = _dtype_and_data_dims(spec)
        return FieldDescriptor(dtype, axes, data_dims)


class GlobalTable:
    """A read-only lookup table without grid axes (GT4Py's ``GlobalTable``):
    ``GlobalTable[(np.float64, (n,))]`` is passed as an array of shape ``(n,)`` and read as
    ``table.A[i]`` (``table.A[i, j]`` for a 2-D table), the same value at every point."""

    def __new__(cls, *args: Any, **kwargs: Any) -> GlobalTable:
        raise TypeError("GlobalTable is a type annotation: write GlobalTable[(dtype, (n,))]")

    def __class_getitem__(cls, spec: Any) -> FieldDescriptor:
        dtype, data_dims = _dtype_and_data_dims(spec)
        if not data_dims:
            raise GTScriptDefinitionError(
                f"GlobalTable[{spec!r}]: a table needs its shape, GlobalTable[(dtype, (n, ...))]"
            )
        return FieldDescriptor(dtype, "", data_dims)


# --------------------------------------------------------------------------------------------
# Iteration policies and the compile-time constructs
# --------------------------------------------------------------------------------------------


class IterationPolicy(enum.Enum):
    """The order in which a computation visits the levels of its intervals."""

    PARALLEL = "PARALLEL"
    FORWARD = "FORWARD"
    BACKWARD = "BACKWARD"

    def __repr__(self) -> str:
        return self.value


PARALLEL = IterationPolicy.PARALLEL
FORWARD = IterationPolicy.FORWARD
BACKWARD = IterationPolicy.BACKWARD


def _outside(what: str) -> RuntimeError:
    return RuntimeError(
        f"{what} is GTScript: it can only be used inside a function decorated with "
        f"@gtscript.stencil or @gtscript.function, which is compiled, not run by Python"
    )


def computation(policy: IterationPolicy) -> Any:
    """``with computation(PARALLEL | FORWARD | BACKWARD):`` opens a computation."""
    raise _outside("computation()")


def interval(*bounds: Any) -> Any:
    """``with interval(...)`` / ``interval(start, end)``: the K levels a block runs on."""
    raise _outside("interval()")


def horizontal(*regions: Any) -> Any:
    """``with horizontal(region[I[0], :]):`` restricts statements to parts of the IJ plane."""
    raise _outside("horizontal()")


class _Region:
    """``region[i_spec, j_spec]``: an IJ box, used as an argument of ``horizontal``."""

    def __getitem__(self, box: Any) -> Any:
        raise _outside("region[...]")

    def __repr__(self) -> str:
        return "region"


region = _Region()


def compile_assert(condition: Any) -> None:
    """Fail the build (at this line) when ``condition``, evaluated at compile time, is false."""
    raise _outside("compile_assert()")


def __INLINED(condition: Any) -> Any:  # noqa: N802  (the GT4Py name)
    """``if __INLINED(cond):`` selects a branch at compile time."""
    raise _outside("__INLINED()")


# --------------------------------------------------------------------------------------------
# Math builtins (abs, min, max and pow shadow Python's only in this namespace)
# --------------------------------------------------------------------------------------------

#: Names of the math builtins and the number of arguments each takes.
MATH_BUILTINS = {
    "abs": 1, "min": 2, "max": 2, "sqrt": 1, "exp": 1, "log": 1, "log10": 1, "pow": 2,
    "floor": 1, "ceil": 1, "trunc": 1, "sin": 1, "cos": 1, "tan": 1, "arcsin": 1,
    "arccos": 1, "arctan": 1, "arctan2": 2, "sinh": 1, "cosh": 1, "tanh": 1,
    "isfinite": 1, "isinf": 1, "isnan": 1,
}  # fmt: skip


#: GT4Py builtins that are operators of the language: ``mod(a, b)`` is ``a % b`` (np.mod).
OPERATOR_BUILTINS = {"mod": 2}


def _builtin(name: str) -> Any:
    """A placeholder for the math builtin ``name``."""

    def placeholder(*args: Any) -> Any:
        raise _outside(f"gtscript.{name}()")

    placeholder.__name__ = placeholder.__qualname__ = name
    arity = {**MATH_BUILTINS, **OPERATOR_BUILTINS}[name]
    placeholder.__doc__ = f"GTScript builtin ``{name}`` ({arity} argument(s))."
    return placeholder


abs = _builtin("abs")
min = _builtin("min")
max = _builtin("max")
sqrt = _builtin("sqrt")
exp = _builtin("exp")
log = _builtin("log")
log10 = _builtin("log10")
pow = _builtin("pow")
floor = _builtin("floor")
ceil = _builtin("ceil")
trunc = _builtin("trunc")
sin = _builtin("sin")
cos = _builtin("cos")
tan = _builtin("tan")
arcsin = _builtin("arcsin")
arccos = _builtin("arccos")
arctan = _builtin("arctan")
arctan2 = _builtin("arctan2")
sinh = _builtin("sinh")
cosh = _builtin("cosh")
tanh = _builtin("tanh")
isfinite = _builtin("isfinite")
isinf = _builtin("isinf")
isnan = _builtin("isnan")
mod = _builtin("mod")
