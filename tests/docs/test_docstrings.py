"""Every public function and class of the API has a numpy-style docstring with an example.

The examples themselves are run as doctests (``--doctest-modules`` over gtscript/, see
pyproject's pytest options) and rendered in the API reference (docs/api.md); tests/docs/test_docs.py
checks that the doctests are collected.
"""

import doctest
import inspect

import pytest

import gtscript
from gtscript import cache, cli, distributed, info, storage
from gtscript import stencil as _unused  # noqa: F401  (the function; the module is below)
import importlib

stencil_module = importlib.import_module("gtscript.stencil")


def public_objects():
    """(qualified name, object) of every public function and class."""
    found = {}
    for module, names in ((gtscript, gtscript.__all__), (storage, storage.__all__),
                          (cache, cache.__all__), (info, info.__all__),
                          (distributed, [n for n in distributed.__all__ if n != "MPI"])):
        for name in names:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or (inspect.isclass(obj) and obj.__module__.startswith("gtscript")):
                found[f"{module.__name__}.{name}"] = obj
    found["gtscript.cli.main"] = cli.main
    found["gtscript.stencil.Stencil"] = stencil_module.Stencil
    found["gtscript.stencil.LazyStencil"] = stencil_module.LazyStencil
    for member in ("ir", "source", "field_info"):
        found[f"gtscript.stencil.Stencil.{member}"] = getattr(stencil_module.Stencil, member)
    return sorted(found.items())


PUBLIC = public_objects()


def test_the_public_api_is_found():
    names = {name for name, _ in PUBLIC}
    assert {"gtscript.stencil", "gtscript.function", "gtscript.storage.zeros",
            "gtscript.cache.info", "gtscript.distributed.Decomposition", "gtscript.sqrt",
            "gtscript.stencil.Stencil.ir"} <= names
    assert len(PUBLIC) > 60


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_docstring_has_a_runnable_example(name, obj):
    doc = inspect.getdoc(obj.fget if isinstance(obj, property) else obj)
    assert doc, f"{name} has no docstring"
    assert "\nExamples\n--------\n" in doc, f"{name}: no numpy-style Examples section"
    examples = doctest.DocTestParser().get_examples(doc)
    assert examples, f"{name}: the Examples section has no >>> example"
