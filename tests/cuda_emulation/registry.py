"""Every stencil definition of the test suite, for the cuda backend's tests.

Collected from the spine, language and parallel-model test modules: module-level stencil
definitions (functions whose parameters are annotated with gtscript fields) and definition
factories (``*_defn(dt)`` functions returning a definition for a dtype), including the error
tests' examples, which every backend must reject alike.
Nothing is built when the list is made; ``status`` builds a definition with the reference
backend (``REFERENCE``: cpu, or numpy in a core built without LLVM) once to tell whether its
results are defined. Each entry also knows how to make generic inputs for a call: random fields shaped like the
module's ``SHAPE``, with the dtype, axes and data dimensions the stencil declares.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
import types
import warnings
from dataclasses import dataclass, field

import numpy as np

import gtscript

#: The backend the cuda backend is compared with: cpu, or numpy where the core was built
#: without LLVM (GTSCRIPT_LLVM=OFF: no cpu backend).
REFERENCE = "cpu" if gtscript._core.target()["llvm"] != "none" else "numpy"

#: The modules searched, each with its folder under tests/ (on sys.path below: the test suite's
#: conftest.py puts them there too, and pytest imports test modules by their bare names).
FOLDERS = {"shared_stencils": "", "test_backend_agreement": "backends",
           "test_language_absolute_k": "language", "test_language_compile_time": "language",
           "test_language_control": "language", "test_language_fields": "language",
           "test_language_field_kinds": "language", "test_language_runtime": "language",
           "test_language_operators": "language", "test_language_regions": "language",
           "test_language_vertical": "language", "test_region_extents": "analysis",
           "test_language_datadims": "language", "test_parallel_model": "analysis",
           "test_gt4py_compat": "compat_gt4py"}
MODULES = tuple(FOLDERS)

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _folder in sorted(set(FOLDERS.values())):
    _path = os.path.join(_TESTS, _folder) if _folder else _TESTS
    if _path not in sys.path:
        sys.path.insert(0, _path)


def _externals(module, name):
    """Externals the suite passes for definitions that need them (a module may list them in
    an ``EXTERNALS`` dict, by definition or factory name)."""
    if name in getattr(module, "EXTERNALS", {}):
        return dict(module.EXTERNALS[name])
    if name == "externals_defn":
        return {"FACTOR": 2.0, "SHIFT": True}
    if name == "inlined_away":
        return {"DEEP": False}
    if name == "externals_in_function_defn":
        return {"FACTOR": 0.25}
    if name.startswith("compile_time_defn"):
        return {"USE_NORM": True, "phys": module.PHYS, "clip": module.limiter}
    return {}


@dataclass
class Case:
    name: str
    definition: object
    externals: dict = field(default_factory=dict)
    shape: tuple = (8, 7, 6)
    expected_rejection: bool = False  # an error test expects the analysis to refuse it

    def build(self, backend, **options):
        return gtscript.stencil(backend, self.definition, externals=self.externals, **options)

    def inputs(self, stencil, rng):
        """Keyword arguments for a call: every field random, every scalar a fixed value."""
        info = stencil.field_info
        args = {}
        for p in stencil.ir_tree()["params"]:
            if p[0] == "scalar":
                args[p[1]] = {"float64": 0.75, "float32": np.float32(0.75), "int32": 2, "int64": 2, "int8": 2, "int16": 2,
                              "bool": True}[p[2]]
                continue
            fi = info[p[1]]
            shape = tuple(n for n, ax in zip(self.shape, "IJK") if ax in fi["axes"]) + tuple(fi["data_dims"])
            dt = np.dtype(fi["dtype"])
            if dt.kind == "f":
                value = rng.uniform(-1.0, 1.0, shape).astype(dt)
            elif dt.kind == "b":
                value = rng.random(shape) < 0.5
            else:
                value = rng.integers(-5, 6, shape).astype(dt)
            args[p[1]] = value
        return args


def _is_definition(f) -> bool:
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return False
    return bool(params) and all(p.annotation is not inspect.Parameter.empty for p in params)


def _factory_args(f):
    params = list(inspect.signature(f).parameters)
    if not params:
        return [()]
    if params == ["dt"]:
        return [(np.float64,), (np.float32,)]
    if params == ["it"]:
        return [(np.int32,), (np.int64,)]
    return []


def _candidates():
    for modname in MODULES:
        try:
            module = importlib.import_module(modname)
        except ImportError:
            continue
        shape = tuple(getattr(module, "SHAPE", (8, 7, 6)))
        for name, f in sorted(vars(module).items()):
            if not isinstance(f, types.FunctionType) or f.__module__ != module.__name__ or name.startswith("test_"):
                continue
            if getattr(f, "__gtscript_function__", False) or hasattr(f, "__gtscript__"):
                continue
            if name.endswith("_defn") and not _is_definition(f):
                for args in _factory_args(f):
                    tag = "-".join(np.dtype(a).name for a in args)
                    yield Case(f"{modname}.{name}" + (f"[{tag}]" if tag else ""), f(*args),
                               _externals(module, name), shape)
            elif _is_definition(f):
                yield Case(f"{modname}.{name}", f, _externals(module, name), shape)


_cases = None


def _rejected_in_tests() -> set:
    """Definitions the suite's error tests expect to be rejected (``rejects(name, ...)``)."""
    names = set()
    for modname in MODULES:
        try:
            source = inspect.getsource(importlib.import_module(modname))
        except (ImportError, OSError):
            continue
        names.update(f"{modname}.{n}" for n in re.findall(r"\brejects\(\s*(\w+)", source))
    return names


_candidates_list = None


def cases() -> list[Case]:
    """Every definition found (cheap: nothing is built here; see Case.status)."""
    global _candidates_list
    if _candidates_list is None:
        rejected = _rejected_in_tests()
        _candidates_list = list(_candidates())
        for case in _candidates_list:
            case.expected_rejection = case.name in rejected
    return _candidates_list


_status: dict = {}


def status(case: Case):
    """("ok", None): a stencil with defined results; ("rejected", exception): the reference
    backend refuses it (an error test's example, or not a stencil); ("undefined", None): it reads a
    temporary before writing it, so backends need not agree on those values."""
    if case.name not in _status:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                case.build(REFERENCE, rebuild=True)
            except Exception as e:  # noqa: BLE001 - whatever the reference backend raises
                _status[case.name] = ("rejected", e)
                return _status[case.name]
        undefined = case.expected_rejection or any("undefined" in str(w.message) for w in caught)
        _status[case.name] = ("undefined" if undefined else "ok", None)
    return _status[case.name]
