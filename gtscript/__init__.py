"""gtscript: a GTScript stencil compiler (C core, LLVM ORC JIT for CPUs, NVRTC for GPUs).

The names exported here are those of GT4Py's ``gt4py.cartesian.gtscript``, so that existing
definitions run unchanged apart from their import lines.
"""

__version__ = "0.1.0"

from . import cache, lang, storage
from .errors import GTScriptDefinitionError, GTScriptSemanticError, GTScriptSyntaxError
from .frontend import function
from .lang import (
    BACKWARD,
    FORWARD,
    IJ,
    IJK,
    PARALLEL,
    Field,
    GlobalTable,
    I,
    J,
    K,
    __INLINED,
    abs,
    arccos,
    arcsin,
    arctan,
    arctan2,
    ceil,
    compile_assert,
    computation,
    cos,
    cosh,
    exp,
    floor,
    horizontal,
    interval,
    isfinite,
    isinf,
    isnan,
    log,
    log10,
    max,
    min,
    pow,
    region,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
)

try:  # the stencil decorator lives next to the C core's Python wrapper
    from .stencil import stencil
except ModuleNotFoundError as _exc:  # only while gtscript/stencil.py is not written yet
    if _exc.name != f"{__name__}.stencil":
        raise
    del _exc

__all__ = [
    "__version__",
    "stencil",
    "function",
    "Field",
    "GlobalTable",
    "I",
    "J",
    "K",
    "IJ",
    "IJK",
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
    "GTScriptSyntaxError",
    "GTScriptSemanticError",
    "GTScriptDefinitionError",
]
if "stencil" not in globals():  # gtscript/stencil.py not written yet
    __all__.remove("stencil")
