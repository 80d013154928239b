"""A mypy plugin for GTScript definitions: ``plugins = ["gtscript.mypy_plugin"]`` in the
``[tool.mypy]`` table of pyproject.toml (or ``plugins = gtscript.mypy_plugin`` in mypy.ini).

Without it, mypy accepts every annotation of a definition but the data-dimension form,
``Field[(np.float64, (2,))]`` and ``GlobalTable[(np.float64, (3,))]``, whose inner tuple is not
a type (gtscript/_typing.pyi says why the others pass), and checks a stencil's call for its
``origin`` and ``domain`` only. With it:

- every ``Field[...]`` and ``GlobalTable[...]`` annotation stands for ``Any`` whatever its
  arguments, as GTScript reads them;
- a call of a stencil is checked against its definition's parameters (their names, which are
  required, and the scalars' types: ``alpha="x"`` for a ``float`` is reported), followed by
  the call's own options (``origin``, ``domain``, ...). A scalar annotated ``float``, ``int``
  or a NumPy type takes any Python or NumPy number, as the call does at run time.

(docs/api.md#type-checking)
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import ARG_NAMED_OPT
from mypy.plugin import AnalyzeTypeContext, MethodSigContext, Plugin
from mypy.types import (AnyType, CallableType, Instance, Parameters, Type, TypeOfAny, UnionType,
                        get_proper_type)

#: The names a definition's annotations resolve to (the type checkers' view and the run time's).
ANNOTATIONS = frozenset({"gtscript._typing.Field", "gtscript._typing.GlobalTable",
                         "gtscript.lang.Field", "gtscript.lang.GlobalTable"})


def _any(ctx: AnalyzeTypeContext) -> Type:
    return AnyType(TypeOfAny.special_form)


#: The stencil object's call (gtscript/stencil.py: Stencil is generic in its definition's
#: parameters).
CALL = "gtscript.stencil.Stencil.__call__"
#: Scalar annotations a call may pass any number for (the call converts it, or says why not).
NUMBERS = frozenset({"builtins.float", "builtins.int"})


def _number(ctx: MethodSigContext) -> Type:
    """float | numpy.number: what a scalar parameter of a numeric type takes."""
    builtin = ctx.api.named_generic_type("builtins.float", [])
    try:
        numpy = ctx.api.named_generic_type("numpy.number", [AnyType(TypeOfAny.special_form)])
    except (KeyError, AssertionError):  # numpy not among the checked modules
        return builtin
    return UnionType([builtin, numpy])


def _scalar(ctx: MethodSigContext, declared: Type) -> Type:
    proper = get_proper_type(declared)
    if isinstance(proper, Instance) and (proper.type.fullname in NUMBERS
                                         or proper.type.fullname.startswith("numpy.")):
        return _number(ctx)
    return declared


def _call_signature(ctx: MethodSigContext) -> CallableType:
    """The definition's parameters, then the call's options (the default signature's
    keyword-only ones)."""
    signature = ctx.default_signature
    owner = get_proper_type(ctx.type)
    if not isinstance(owner, Instance) or not owner.args:
        return signature
    params = get_proper_type(owner.args[0])
    if not isinstance(params, (Parameters, CallableType)) or params.is_ellipsis_args:
        return signature  # Stencil without its definition's parameters: the loose call
    options = [i for i, kind in enumerate(signature.arg_kinds) if kind == ARG_NAMED_OPT]
    return signature.copy_modified(
        arg_types=[_scalar(ctx, t) for t in params.arg_types]
        + [signature.arg_types[i] for i in options],
        arg_kinds=list(params.arg_kinds) + [signature.arg_kinds[i] for i in options],
        arg_names=list(params.arg_names) + [signature.arg_names[i] for i in options])


class GTScriptPlugin(Plugin):
    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        return _any if fullname in ANNOTATIONS else None

    def get_method_signature_hook(self, fullname: str
                                  ) -> Callable[[MethodSigContext], CallableType] | None:
        return _call_signature if fullname == CALL else None


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class for any mypy version that has this interface."""
    return GTScriptPlugin
