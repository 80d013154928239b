"""A mypy plugin for GTScript definitions: ``plugins = ["gtscript.mypy_plugin"]`` in the
``[tool.mypy]`` table of pyproject.toml (or ``plugins = gtscript.mypy_plugin`` in mypy.ini).

Without it, mypy accepts every annotation of a definition but the data-dimension form,
``Field[(np.float64, (2,))]`` and ``GlobalTable[(np.float64, (3,))]``, whose inner tuple is not
a type (gtscript/_typing.pyi says why the others pass). With it, every ``Field[...]`` and
``GlobalTable[...]`` annotation stands for ``Any`` whatever its arguments, as GTScript reads
them (docs/api.md#type-checking).
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.plugin import AnalyzeTypeContext, Plugin
from mypy.types import AnyType, Type, TypeOfAny

#: The names a definition's annotations resolve to (the type checkers' view and the run time's).
ANNOTATIONS = frozenset({"gtscript._typing.Field", "gtscript._typing.GlobalTable",
                         "gtscript.lang.Field", "gtscript.lang.GlobalTable"})


def _any(ctx: AnalyzeTypeContext) -> Type:
    return AnyType(TypeOfAny.special_form)


class GTScriptPlugin(Plugin):
    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        return _any if fullname in ANNOTATIONS else None


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class for any mypy version that has this interface."""
    return GTScriptPlugin
