"""gtscript: a GTScript stencil compiler (C core, LLVM ORC JIT for CPUs, NVRTC for GPUs).

The names exported here are those of GT4Py's ``gt4py.cartesian.gtscript``, so that existing
definitions run unchanged apart from their import lines.
"""

import importlib as _importlib
import typing as _typing

from ._version import __version__

# The C core first, so that a checkout that was never built says so (the modules below import
# it, and would fail with a confusing "partially initialized module" error).
try:
    _importlib.import_module(f"{__name__}._core")
except ModuleNotFoundError as _exc:
    if _exc.name != f"{__name__}._core":
        raise
    raise ImportError(
        "gtscript's C core is not built: run `make build` (a source checkout) or "
        "`pip install .`; it is gtscript/_core*.so, missing from " + __path__[0]
    ) from None

import types  # noqa: F401 - GT4Py's gtscript module has the name (NDSL imports it from there)

from . import _core, buildlog, cache, config, lang, storage, threads

config.check_environment()  # a value gtscript would not read as meant warns (docs/configuration.md)
from .errors import GTScriptDefinitionError, GTScriptSemanticError, GTScriptSyntaxError
from .frontend import function, lazy_function
from .threads import get_num_threads, set_num_threads
from .lang import (
    BACKWARD,
    FORWARD,
    PARALLEL,
    AxisIndex,
    AxisInterval,
    Sequence,
    __externals__,
    __gtscript__,
    __INLINED,
    abs,
    acos,
    acosh,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    asin,
    asinh,
    atan,
    atanh,
    cbrt,
    ceil,
    compile_assert,
    computation,
    cos,
    cosh,
    enum,
    erf,
    erfc,
    exp,
    externals,
    float32,
    float64,
    floor,
    gamma,
    horizontal,
    int32,
    int64,
    interval,
    isfinite,
    isinf,
    isnan,
    log,
    log10,
    max,
    min,
    mod,
    pow,
    region,
    round,
    round_away_from_zero,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
)

if _typing.TYPE_CHECKING:  # what type checkers see: annotation names (gtscript/_typing.pyi)
    from ._typing import IJ, IJK, IK, JK, Field, GlobalTable, I, J, K
else:
    from .lang import IJ, IJK, IK, JK, Field, GlobalTable, I, J, K

try:  # the stencil decorator lives next to the C core's Python wrapper
    from .stencil import build_all, lazy_stencil, stencil
except ModuleNotFoundError as _exc:  # only while gtscript/stencil.py is not written yet
    if _exc.name != f"{__name__}.stencil":
        raise
    del _exc

__all__ = [
    "__version__",
    "stencil",
    "lazy_stencil",
    "build_all",
    "set_num_threads",
    "get_num_threads",
    "function",
    "lazy_function",
    "Field",
    "GlobalTable",
    "I",
    "J",
    "K",
    "IJ",
    "IK",
    "JK",
    "IJK",
    "AxisIndex",
    "AxisInterval",
    "Sequence",
    "externals",
    "__externals__",
    "__gtscript__",
    "float32",
    "float64",
    "int32",
    "int64",
    "enum",
    "PARALLEL",
    "FORWARD",
    "BACKWARD",
    "computation",
    "interval",
    "horizontal",
    "region",
    "compile_assert",
    "__INLINED",
    *lang.MATH_BUILTINS,
    *lang.OPERATOR_BUILTINS,
    *lang.BUILTIN_SPELLINGS,
    "GTScriptSyntaxError",
    "GTScriptSemanticError",
    "GTScriptDefinitionError",
]
if "stencil" not in globals():  # gtscript/stencil.py not written yet
    __all__.remove("stencil")
    __all__.remove("lazy_stencil")
    __all__.remove("build_all")
