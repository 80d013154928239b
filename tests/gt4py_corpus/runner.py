"""Loads the corpus in its two spellings and runs an entry on GT4Py or on gtscript.

GT4Py's copy of a corpus module is the file as written. gtscript's copy is the same text with
only the module-level import lines naming ``gt4py.cartesian`` rewritten to name ``gtscript``
(imports inside definitions, such as ``from gt4py.cartesian.__externals__ import X``, stay as
GT4Py users write them), written to a temporary file and imported from there, so that both
frontends read a real source file.
"""

from __future__ import annotations

import ast
import atexit
import copy
import re
import shutil
import sys
import tempfile
import types
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODULES = sorted(p.stem for p in HERE.glob("c[0-9][0-9]_*.py"))

_IMPORT_REWRITES = [
    # from gt4py.cartesian import gtscript [as x]
    (re.compile(r"^from gt4py\.cartesian import gtscript\b"), "import gtscript"),
    # import gt4py.cartesian.gtscript as x
    (re.compile(r"^import gt4py\.cartesian\.gtscript as\b"), "import gtscript as"),
    # from gt4py.cartesian.gtscript import names
    (re.compile(r"^from gt4py\.cartesian\.gtscript import\b"), "from gtscript import"),
    # import gt4py.storage as x / from gt4py import storage [as x]
    (re.compile(r"^import gt4py\.storage as\b"), "import gtscript.storage as"),
    (re.compile(r"^from gt4py import storage\b"), "from gtscript import storage"),
]


def gtscript_spelling(source: str) -> str:
    """The module's text with its top-level GT4Py import lines naming gtscript instead."""
    out = []
    for line in source.splitlines(keepends=True):
        for pattern, replacement in _IMPORT_REWRITES:
            line = pattern.sub(replacement, line)
        out.append(line)
    text = "".join(out)
    leftover = [ln for ln in text.splitlines() if re.match(r"^(from|import) gt4py\b", ln)]
    assert not leftover, f"import lines the rewrite does not know: {leftover}"
    return text


_tmpdir = None
_loaded: dict = {}


def _import_file(modname: str, path: Path):
    """Imports ``path`` one top-level statement at a time, so that a definition whose
    annotations one frontend cannot evaluate (a dtype it does not know), or an import of a
    name it lacks, costs only what needs it: the exception is kept in
    ``module.__corpus_errors__`` under the names the statement binds (a definition's build
    then fails on the missing name, or raises the kept error if it is the definition). Each
    statement keeps its line numbers, so ``inspect.getsource`` finds every definition."""
    source = path.read_text()
    tree = ast.parse(source, str(path))
    module = types.ModuleType(modname)
    module.__file__ = str(path)
    module.__corpus_errors__ = {}
    sys.modules[modname] = module
    for stmt in tree.body:
        code = compile(ast.Module(body=[stmt], type_ignores=[]), str(path), "exec", dont_inherit=True)
        try:
            exec(code, module.__dict__)  # noqa: S102 - importing the module, statement by statement
        except Exception as e:  # noqa: BLE001 - kept for the entries that need this statement
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                names = [alias.asname or alias.name.split(".")[0] for alias in stmt.names]
            elif isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                names = [stmt.name]
            else:
                names = [t.id for t in ast.walk(stmt) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)]
            for name in names:
                module.__corpus_errors__[name] = e
    return module


def load_path(path: Path, flavour: str):
    """The module at ``path`` as GT4Py ("gt4py") or gtscript ("gtscript") imports it; an
    exception raised by the import is returned instead of the module."""
    key = (str(path), flavour)
    if key not in _loaded:
        global _tmpdir
        stem = path.stem
        try:
            if flavour == "gt4py":
                _loaded[key] = _import_file(f"gt4py_corpus_{stem}", path)
            else:
                if _tmpdir is None:
                    _tmpdir = Path(tempfile.mkdtemp(prefix="gtscript-corpus-"))
                    atexit.register(shutil.rmtree, _tmpdir, ignore_errors=True)
                target = _tmpdir / f"{stem}.py"
                target.write_text(gtscript_spelling(path.read_text()))
                _loaded[key] = _import_file(f"gtscript_corpus_{stem}", target)
        except Exception as e:  # noqa: BLE001 - reported for every entry of the module
            _loaded[key] = e
    return _loaded[key]


def load(stem: str, flavour: str):
    """The corpus module ``stem`` in one flavour (see ``load_path``)."""
    return load_path(HERE / f"{stem}.py", flavour)


def entries():
    """(module stem, Case) for every corpus entry, from GT4Py's copy of the modules."""
    out = []
    for stem in MODULES:
        module = load(stem, "gt4py")
        if isinstance(module, Exception):
            raise module
        assert not module.__corpus_errors__, f"{stem} does not import on GT4Py: {module.__corpus_errors__}"
        out.extend((stem, case) for case in module.CASES)
    return out


def definition(stem: str, case, flavour: str):
    module = load(stem, flavour)
    if isinstance(module, Exception):
        raise module
    if case.name in module.__corpus_errors__:
        raise module.__corpus_errors__[case.name]
    return module, getattr(module, case.name)


# ------------------------------------------------------------------------------- arguments

def _descriptor_dtype(desc, case):
    dtype = desc.dtype
    if isinstance(dtype, str):
        dtype = case.options["dtypes"][dtype]
    return np.dtype(dtype)


def arguments(stem: str, case) -> dict:
    """Random arguments for a call, made from the GT4Py copy's annotations (seeded by the
    entry's name, so every run and every backend sees the same values)."""
    _, defn = definition(stem, case, "gt4py")
    rng = np.random.default_rng(zlib.crc32(f"{stem}.{case.name}".encode()))
    args = {}
    for name, ann in defn.__annotations__.items():
        if name == "return":
            continue
        if name in case.omit:
            continue
        if isinstance(ann, str) and ann in case.options.get("dtypes", {}):
            ann = case.options["dtypes"][ann]  # a whole annotation: "T" with dtypes={"T": ...}
        if hasattr(ann, "axes") and hasattr(ann, "data_dims"):  # a field or a global table
            dtype = _descriptor_dtype(ann, case)
            axes = "".join(ax.name for ax in (ann.axes or ()))
            shape = tuple(n for n, ax in zip(case.shape, "IJK") if ax in axes) + tuple(int(d) for d in ann.data_dims)
            if name in case.arrays:
                value = case.arrays[name](rng, shape, dtype)
            elif dtype.kind == "f":
                low, high = (0.5, 2.0) if case.positive else (-1.0, 1.0)
                value = rng.uniform(low, high, shape).astype(dtype)
            elif dtype.kind == "b":
                value = rng.random(shape) < 0.5
            else:
                value = rng.integers(-5, 6, shape).astype(dtype)
            args[name] = np.asarray(value)
        elif name in case.scalars:
            args[name] = case.scalars[name]
        elif ann in (float, int, bool):
            args[name] = {float: 0.75, int: 2, bool: True}[ann]
        else:  # a NumPy scalar type
            args[name] = np.dtype(ann).type(1)
    for name, other in case.alias.items():
        args[name] = args[other]
    return args


def call_kwargs(case) -> dict:
    kw = {}
    if case.origin not in (None, ()):
        kw["origin"] = case.origin
    if case.domain is not None:
        kw["domain"] = case.domain
    return kw


def run(stencil, case, args) -> dict:
    """Calls ``stencil`` on copies of ``args`` (arguments that share an array keep sharing
    their copy); returns the arrays afterwards."""
    mine = copy.deepcopy(args)
    stencil(**mine, **call_kwargs(case))
    return {k: v for k, v in mine.items() if isinstance(v, np.ndarray)}


# ----------------------------------------------------------------------------------- GT4Py

_gt4py_cache = None


def private_gt4py_cache() -> str:
    """Points GT4Py's cache (where it writes the code it generates; by default under the
    current directory, read from GT_CACHE_ROOT when GT4Py is first imported) at a temporary
    directory removed at exit, whoever imported GT4Py first: nothing is written into the tree."""
    global _gt4py_cache
    if _gt4py_cache is None:
        from gt4py.cartesian import config

        _gt4py_cache = tempfile.mkdtemp(prefix="gt4py-cache-")
        atexit.register(shutil.rmtree, _gt4py_cache, ignore_errors=True)
        config.cache_settings["root_path"] = _gt4py_cache
    return _gt4py_cache


def gt4py_build(stem: str, case):
    """GT4Py's numpy-backend stencil for the entry, or the exception its build raised."""
    import gt4py.cartesian.gtscript as gt4py_gtscript

    private_gt4py_cache()

    module, defn = definition(stem, case, "gt4py")
    try:
        return gt4py_gtscript.stencil(case.oracle, defn, externals=case.externals_for(module),
                                      rebuild=False, **case.options)
    except Exception as e:  # noqa: BLE001 - GT4Py's rejection, whatever its type
        return e


def gtscript_build(stem: str, case, backend: str):
    import gtscript

    module, defn = definition(stem, case, "gtscript")
    options = dict(case.options)
    return gtscript.stencil(backend, defn, externals=case.externals_for(module), **options)


def tolerance(dtype) -> dict:
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return {"rtol": 2e-5, "atol": 1e-6}
    if dtype.kind == "f":
        return {"rtol": 1e-11, "atol": 1e-12}
    return {}


def assert_same(actual: dict, expected: dict, what: str):
    assert actual.keys() == expected.keys()
    for name, want in expected.items():
        got = actual[name]
        assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: argument {name!r}"
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, equal_nan=True, err_msg=f"{what}: argument {name!r}",
                                       **tolerance(want.dtype))
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{what}: argument {name!r}")


def assert_call_refused(stencil, case, args, what: str) -> None:
    """The call of a "call_reject" or "stricter" entry raises (a ValueError for "stricter":
    the checks gtscript adds) and writes nothing into copies of ``args``."""
    import pytest

    mine = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    with pytest.raises(ValueError if case.expect == "stricter" else Exception):
        stencil(**mine, **call_kwargs(case))
    assert_same({k: v for k, v in mine.items() if isinstance(v, np.ndarray)},
                {k: v for k, v in args.items() if isinstance(v, np.ndarray)},
                f"{what}: a refused call wrote")
