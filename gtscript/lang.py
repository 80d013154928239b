"""The user-visible objects of the GTScript language, compatible with GT4Py's ``gtscript``.

Most of these objects are never executed: the frontend reads the definition's source and
recognises them by name.  They exist so that definitions import and type-check as ordinary
Python, and so that ``Field[...]`` annotations evaluate to a descriptor the frontend can read.
Called outside a stencil definition, the placeholders raise a :class:`RuntimeError` that says
where they belong.
"""

from __future__ import annotations

import builtins as _py
import enum as _enum
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
    "IK",
    "JK",
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
    "isfinite", "isinf", "isnan", "mod", "arcsinh", "arccosh", "arctanh", "gamma", "erf",
    "erfc", "cbrt", "round", "round_away_from_zero",
    # GT4Py's spellings and the rest of its gtscript namespace
    "asin", "acos", "atan", "asinh", "acosh", "atanh", "IK", "JK", "AxisInterval", "Sequence",
    "externals", "__externals__", "__gtscript__", "float32", "float64", "int32", "int64",
    "enum",
]  # fmt: skip


# --------------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------------

#: The dtypes of the language, by their canonical names.
DTYPES = ("float64", "float32", "int32", "int64", "int16", "int8", "bool")

# Python types and type names accepted as dtypes, with the dtype they stand for.
_PYTHON_DTYPES = {float: "float64", int: "int64", bool: "bool"}
_DTYPE_NAMES = {"float": "float64", "int": "int64", **{name: name for name in DTYPES}}


def resolve_dtype(spec: Any) -> str:
    """Map a dtype specification to its canonical name (one of :data:`DTYPES`).

    Accepted: ``float``, ``int``, ``bool``, the NumPy scalar types ``np.float64``,
    ``np.float32``, ``np.int32``, ``np.int64``, ``np.int16``, ``np.int8``, ``np.bool_``,
    equivalent ``np.dtype`` objects, and the names of those dtypes (``"float64"``, ...,
    ``"bool"``),
    ``"float"``, ``"int"``.  Anything else is a :class:`GTScriptDefinitionError`.
    """
    name = None
    if isinstance(spec, type) and issubclass(spec, _enum.IntEnum):
        return "int64"  # an enumeration's members are ints (see `enum`)
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
            f"np.int32, np.int16, np.int8 or bool"
        )
    return name


#: Most components a field's data dimensions may have at a point (their sizes' product).
MAX_DATA_COMPONENTS = 2**31 - 1


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
        # NumPy integers are sizes too (GT4Py accepts `(np.float64, (np.int64(3),))`)
        is_size = lambda n: isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))  # noqa: E731
        shape = (shape,) if is_size(shape) else shape
        if not (isinstance(shape, tuple) and shape and all(is_size(n) and n > 0 for n in shape)):
            raise GTScriptDefinitionError(
                f"invalid data dimensions {spec[1]!r}: expected a tuple of positive ints"
            )
        # the core counts components in 32-bit integers: a larger size would be truncated
        if int(np.prod([int(n) for n in shape], dtype=object)) > MAX_DATA_COMPONENTS:
            raise GTScriptDefinitionError(
                f"invalid data dimensions {spec[1]!r}: at most {MAX_DATA_COMPONENTS} components "
                f"(2**31 - 1) per point"
            )
        return resolve_dtype(base), tuple(int(n) for n in shape)
    return resolve_dtype(spec), ()


# --------------------------------------------------------------------------------------------
# Axes
# --------------------------------------------------------------------------------------------


class Axis:
    """A grid axis.  ``I[0]`` / ``I[-1]`` name the first / last point of the compute domain
    along it (used in ``region[...]``); ``I[0] - 1`` is one point before the first.

    Examples
    --------
    >>> from gtscript import I, J
    >>> I[0], I[-1], I[0] - 1, J[-1] + 1
    (I[0], I[-1], I[0] - 1, J[-1] + 1)
    """

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
    (one past the last point); ``offset`` counts points from there.

    Examples
    --------
    >>> from gtscript import I
    >>> I[-1] + 1, (I[-1] + 1).level, (I[-1] + 1).offset
    (I[-1] + 1, 1, 0)
    """

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
IK = (I, K)
JK = (J, K)
IJK = (I, J, K)


@dataclass(frozen=True)
class AxisInterval:
    """GT4Py's ``AxisInterval``: the points ``start`` to ``end`` (excluded) of an axis.

    Examples
    --------
    >>> from gtscript import AxisInterval
    >>> len(AxisInterval("K", 2, 5))
    3
    """

    axis: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not self.start < self.end:
            raise ValueError(f"AxisInterval needs start < end, got {self.start}, {self.end}")

    def __len__(self) -> int:
        return self.end - self.start


# Axis sets a field may have, by the names of their axes (in I, J, K order).
_FIELD_AXES = ("IJK", "IJ", "IK", "JK", "I", "J", "K")


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

    dtype: str  # one of DTYPES, or a placeholder name the build's ``dtypes=`` resolves
    axes: str = "IJK"  # "IJK" | "IJ" | "IK" | "JK" | "I" | "J" | "K" | "" (a GlobalTable)
    data_dims: tuple[int, ...] = ()

    def __repr__(self) -> str:
        element = self.dtype if not self.data_dims else f"({self.dtype}, {self.data_dims})"
        if not self.axes:
            return f"GlobalTable[{element}]"
        return f"Field[{self.axes}, {element}]"


class Field:
    """Field type annotations: ``Field[np.float64]`` (axes I, J, K), ``Field[IJ, float]``,
    ``Field[K, np.float32]``, ``Field[I, float]``, ``Field[IK, float]`` (any of the axes, in
    I, J, K order), ``Field[(np.float64, (3,))]`` (a 3-vector at every point).

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> from gtscript import IJ, K
    >>> Field[np.float64], Field[IJ, np.float32], Field[(np.float64, (3,))]
    (Field[IJK, float64], Field[IJ, float32], Field[IJK, (float64, (3,))])
    >>> @gtscript.stencil(backend="numpy")
    ... def column(surface: Field[IJ, np.float64], profile: Field[K, np.float64],
    ...            out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = surface * profile
    >>> out = np.zeros((2, 3, 4))
    >>> column(np.full((2, 3), 2.0), np.arange(4.0), out)
    >>> out[1, 2].tolist()
    [0.0, 2.0, 4.0, 6.0]
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Field:
        raise TypeError("Field is a type annotation: write Field[dtype] or Field[axes, dtype]")

    def __class_getitem__(cls, spec: Any) -> FieldDescriptor:
        axes: str | None = "IJK"
        if isinstance(spec, tuple) and len(spec) == 2 and _axes_name(spec[0]) is not None:
            axes, spec = _axes_name(spec[0]), spec[1]
        if axes not in _FIELD_AXES:
            raise GTScriptDefinitionError(
                f"unsupported field axes {axes}: use IJK (the default), IJ, IK, JK, I, J or K "
                f"(in that order)"
            )
        placeholder = _placeholder(spec)
        if placeholder is not None:  # Field["T"], Field[("T", (3,))]: resolved at the build
            dims = _dtype_and_data_dims(("float64", spec[1]))[1] if isinstance(spec, tuple) else ()
            return FieldDescriptor(placeholder, axes, dims)
        dtype, data_dims = _dtype_and_data_dims(spec)
        return FieldDescriptor(dtype, axes, data_dims)


def _placeholder(spec: Any) -> str | None:
    """The name of a dtype placeholder (``"T"``: a string that names no dtype), else None."""
    base = spec[0] if isinstance(spec, tuple) and len(spec) == 2 else spec
    if isinstance(base, str) and base not in _DTYPE_NAMES and base.isidentifier():
        return base
    return None
class GlobalTable:
    """A read-only lookup table without grid axes (GT4Py's ``GlobalTable``):
    ``GlobalTable[(np.float64, (n,))]`` is passed as an array of shape ``(n,)`` and read as
    ``table.A[i]`` (``table.A[i, j]`` for a 2-D table), the same value at every point.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, GlobalTable, computation, interval
    >>> GlobalTable[(np.float64, (4,))]     # a table of 4 values (docs/language.md)
    GlobalTable[(float64, (4,))]
    >>> @gtscript.stencil(backend="numpy")
    ... def calibrate(coef: GlobalTable[(np.float64, (3,))], x: Field[np.float64],
    ...               out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = coef.A[0] + coef.A[1] * x + coef.A[2] * x * x
    >>> out = np.zeros((1, 1, 3))
    >>> calibrate(np.array([1.0, -2.0, 0.5]), np.arange(3.0).reshape(1, 1, 3), out)
    >>> out[0, 0].tolist()
    [1.0, -0.5, -1.0]
    """

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


class IterationPolicy(_enum.Enum):
    """The order in which a computation visits the levels of its intervals: ``PARALLEL``
    (any order: no statement may read a level another writes in the same computation),
    ``FORWARD`` (bottom to top) or ``BACKWARD`` (top to bottom).

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> from gtscript import BACKWARD, FORWARD
    >>> @gtscript.stencil(backend="numpy")
    ... def cumsum(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(FORWARD):
    ...         with interval(0, 1):
    ...             out = inp
    ...         with interval(1, None):
    ...             out = out[0, 0, -1] + inp
    >>> out = np.zeros((1, 1, 4))
    >>> cumsum(np.ones((1, 1, 4)), out)
    >>> out[0, 0].tolist()
    [1.0, 2.0, 3.0, 4.0]
    """

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
    """``with computation(PARALLEL | FORWARD | BACKWARD):`` opens a computation (see
    :class:`IterationPolicy`); only in a definition.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.stencil(backend="numpy")
    ... def two_steps(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         tmp = 2.0 * inp
    ...     with computation(PARALLEL), interval(...):
    ...         out = tmp + 1.0
    >>> out = np.zeros((1, 1, 2))
    >>> two_steps(np.ones((1, 1, 2)), out)
    >>> out.ravel().tolist()
    [3.0, 3.0]
    >>> computation(PARALLEL)
    Traceback (most recent call last):
    ...
    RuntimeError: computation() is GTScript: it can only be used inside a function decorated with @gtscript.stencil or @gtscript.function, which is compiled, not run by Python
    """
    raise _outside("computation()")


def interval(*bounds: Any) -> Any:
    """``with interval(...)`` / ``interval(start, end)``: the K levels a block runs on
    (``start`` included, ``end`` excluded; negative counts from the top, ``None`` is the
    top); only in a definition.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.stencil(backend="numpy")
    ... def edges(out: Field[np.float64]):
    ...     with computation(PARALLEL):
    ...         with interval(0, 1):
    ...             out = -1.0
    ...         with interval(1, -1):
    ...             out = 0.0
    ...         with interval(-1, None):
    ...             out = 1.0
    >>> out = np.full((1, 1, 4), 9.0)
    >>> edges(out)
    >>> out.ravel().tolist()
    [-1.0, 0.0, 0.0, 1.0]
    """
    raise _outside("interval()")


def horizontal(*regions: Any) -> Any:
    """``with horizontal(region[I[0], :]):`` restricts statements to parts of the IJ plane
    (boxes relative to the compute domain, see :class:`Axis`); only in a definition.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> from gtscript import I, horizontal, region
    >>> @gtscript.stencil(backend="numpy")
    ... def west_edge(out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = 0.0
    ...         with horizontal(region[I[0], :]):
    ...             out = 1.0
    >>> out = np.full((3, 2, 1), 9.0)
    >>> west_edge(out)
    >>> out[:, :, 0].tolist()
    [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]
    """
    raise _outside("horizontal()")


class _Region:
    """``region[i_spec, j_spec]``: an IJ box, used as an argument of ``horizontal``."""

    def __getitem__(self, box: Any) -> Any:
        raise _outside("region[...]")

    def __repr__(self) -> str:
        return "region"


region = _Region()


def compile_assert(condition: Any) -> None:
    """Fail the build (at this line) when ``condition``, evaluated at compile time, is false.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> from gtscript import compile_assert
    >>> def scaled(inp: Field[np.float64], out: Field[np.float64]):
    ...     from __externals__ import FACTOR
    ...     with computation(PARALLEL), interval(...):
    ...         compile_assert(FACTOR > 0)
    ...         out = FACTOR * inp
    >>> ok = gtscript.stencil("numpy", scaled, externals={"FACTOR": 2.0})
    >>> try:
    ...     gtscript.stencil("numpy", scaled, externals={"FACTOR": -1.0})
    ... except gtscript.GTScriptSyntaxError as err:
    ...     print(type(err).__name__)
    GTScriptSemanticError
    """
    raise _outside("compile_assert()")


def __INLINED(condition: Any) -> Any:  # noqa: N802  (the GT4Py name)
    """``if __INLINED(cond):`` selects a branch at compile time.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> from gtscript import __INLINED
    >>> def limited(inp: Field[np.float64], out: Field[np.float64]):
    ...     from __externals__ import CLIP
    ...     with computation(PARALLEL), interval(...):
    ...         if __INLINED(CLIP):
    ...             out = min(inp, 1.0)
    ...         else:
    ...             out = inp
    >>> out = np.zeros((1, 1, 1))
    >>> gtscript.stencil("numpy", limited, externals={"CLIP": True})(np.full((1, 1, 1), 5.0), out)
    >>> float(out[0, 0, 0])
    1.0
    """
    raise _outside("__INLINED()")


# --------------------------------------------------------------------------------------------
# Math builtins (abs, min, max and pow shadow Python's only in this namespace)
# --------------------------------------------------------------------------------------------

#: Names of the math builtins and the number of arguments each takes.
MATH_BUILTINS = {
    "abs": 1, "min": 2, "max": 2, "sqrt": 1, "exp": 1, "log": 1, "log10": 1, "pow": 2,
    "floor": 1, "ceil": 1, "trunc": 1, "sin": 1, "cos": 1, "tan": 1, "arcsin": 1,
    "arccos": 1, "arctan": 1, "arctan2": 2, "sinh": 1, "cosh": 1, "tanh": 1,
    "isfinite": 1, "isinf": 1, "isnan": 1, "arcsinh": 1, "arccosh": 1, "arctanh": 1,
    "gamma": 1, "erf": 1, "erfc": 1, "cbrt": 1, "round": 1, "round_away_from_zero": 1,
}  # fmt: skip

#: GT4Py's names of builtins that gtscript spells as NumPy does, with the builtin they name.
BUILTIN_SPELLINGS = {
    "asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
    "acosh": "arccosh", "atanh": "arctanh",
}  # fmt: skip


#: GT4Py builtins that are operators of the language: ``mod(a, b)`` is ``a % b`` (np.mod).
OPERATOR_BUILTINS = {"mod": 2}


#: The NumPy (or math) value each builtin's example compares with, at ``x = 0.5``.
_EXAMPLE_REFERENCE = {
    "abs": "np.abs(x)", "min": "np.minimum(x, x)", "max": "np.maximum(x, x)",
    "pow": "np.power(x, x)", "mod": "np.mod(x, x)", "arctan2": "np.arctan2(x, x)",
    "gamma": "math.gamma(x)", "erf": "math.erf(x)", "erfc": "math.erfc(x)",
    "round": "np.round(x)", "round_away_from_zero": "np.copysign(np.floor(np.abs(x) + 0.5), x)",
}


def _builtin(name: str) -> Any:
    """A placeholder for the math builtin ``name``."""

    def placeholder(*args: Any) -> Any:
        raise _outside(f"gtscript.{name}()")

    placeholder.__name__ = placeholder.__qualname__ = name
    arity = {**MATH_BUILTINS, **OPERATOR_BUILTINS}[name]
    call = f"{name}(a, a)" if arity == 2 else f"{name}(a)"
    reference = _EXAMPLE_REFERENCE.get(name, f"np.{name}(x)")
    # The example is this builtin's own: a stencil that applies it, checked against NumPy.
    placeholder.__doc__ = f"""GTScript builtin ``{name}`` ({arity} argument(s)), applied
    pointwise in a definition as its NumPy namesake.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval, {name}
    >>> @gtscript.stencil(backend="numpy")
    ... def apply(a: Field[np.float64], b: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         b = {call}
    >>> x = {1.5 if name == "arccosh" else 0.5}
    >>> b = np.zeros((2, 2, 1))
    >>> apply(np.full((2, 2, 1), x), b)
    >>> bool(np.allclose(b, {reference}))
    True
    """
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
arcsinh = _builtin("arcsinh")
arccosh = _builtin("arccosh")
arctanh = _builtin("arctanh")
gamma = _builtin("gamma")
erf = _builtin("erf")
erfc = _builtin("erfc")
cbrt = _builtin("cbrt")
round = _builtin("round")  # noqa: A001  (the GT4Py name; np.round's halves-to-even)
round_away_from_zero = _builtin("round_away_from_zero")
# GT4Py's spellings: the same placeholders, so either name compiles to the same builtin
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh

# --------------------------------------------------------------------------------------------
# The rest of GT4Py's gtscript namespace
# --------------------------------------------------------------------------------------------

# Scalar types, as GT4Py exports them for annotations and casts (``float32(x)``).
float32 = np.float32
float64 = np.float64
int32 = np.int32
int64 = np.int64

# The modules a definition imports its externals and the language from; only the names
# matter (the frontend reads ``from __externals__ import X`` in the source).
__externals__ = "__externals__"
__gtscript__ = "__gtscript__"


def externals(*args: Any) -> tuple:
    """GT4Py's ``externals(...)``: the values it is given, as a tuple.

    Examples
    --------
    >>> import gtscript
    >>> gtscript.externals(1, 2.0)
    (1, 2.0)
    """
    return args


class _SequenceMaker:
    """GT4Py's ``Sequence[dtype]``: a descriptor that only exists for annotations."""

    def __getitem__(self, dtype: Any) -> tuple:
        return dtype, None

    def __repr__(self) -> str:
        return "Sequence"


Sequence = _SequenceMaker()


#: The attribute ``enum`` sets on the classes it registers.
ENUM_ATTR = "__gtscript_enum__"


def enum(cls: type | None = None, *, category: str | None = None) -> Any:
    """Register an integer enumeration for definitions (``@gtscript.enum`` or
    ``@gtscript.enum(category=...)``): ``Color.RED`` in a definition is its int value, and a
    scalar parameter annotated with the class is an int64 parameter.

    Examples
    --------
    >>> import enum
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.enum
    ... class Surface(enum.IntEnum):
    ...     LAND = 1
    ...     SEA = 2
    >>> @gtscript.stencil(backend="numpy")
    ... def mark(kind: Field[np.int64], sea: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         sea = 1.0 if kind == Surface.SEA else 0.0
    >>> sea = np.zeros((2, 1, 1))
    >>> mark(np.array([[[1]], [[2]]]), sea)
    >>> sea.ravel().tolist()
    [0.0, 1.0]
    """

    def register(klass: type) -> type:
        if not (isinstance(klass, type) and issubclass(klass, _enum.Enum)):
            raise TypeError(f"gtscript.enum registers Enum classes, got {klass!r}")
        for member in klass:
            value = member.value
            if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
                raise TypeError(
                    f"gtscript.enum: {klass.__name__}.{member.name} = {value!r} is not an int"
                )
        setattr(klass, ENUM_ATTR, category or klass.__name__)
        return klass

    return register if cls is None else register(cls)
