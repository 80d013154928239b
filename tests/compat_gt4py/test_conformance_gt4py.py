"""Differential test against GT4Py itself: every definition of the corpus (tests/gt4py_corpus/),
written once in GT4Py's spelling, is built by GT4Py (the oracle: its numpy backend, or its
debug backend where the numpy one lacks a feature or miscounts) and by gtscript with only the
module's import lines changed, on the cpu and numpy backends and on the cuda backend's exact
source run in host emulation; every array of identical random arguments must agree afterwards.

What GT4Py refuses, gtscript refuses ("reject"); what the parallel model refuses on purpose
says so ("deliberate"); what gtscript accepts beyond GT4Py 1.1 is checked against hand-written
NumPy ("beyond"). See tests/gt4py_corpus/case.py.
"""

from __future__ import annotations

import copy
import difflib
import functools
import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("gt4py.cartesian.config",
                                   reason="the differential test needs GT4Py (pyproject's test extra)")

import gt4py

from cuda_emulation.runner import emulate, require_compiler
from gt4py_corpus import runner
from gt4py_corpus.case import EXPECTS

runner.private_gt4py_cache()  # GT4Py's generated code goes to a temporary directory

BACKENDS = ("cpu", "numpy", "cuda")
ENTRIES = runner.entries()
IDS = [f"{stem}.{case.name}" for stem, case in ENTRIES]
#: "beyond" entries are what GT4Py 1.1 refuses; GT4Py 1.2 builds some of them (NumPy integers
#: as data-dimension sizes), and there its result is a second reference.
GT4PY_VERSION = tuple(int(part) for part in gt4py.__version__.split(".")[:2])


@functools.cache
def _gt4py_stencil(index: int):
    """GT4Py's stencil for entry ``index`` (or the exception its build raised), built once per
    module run."""
    stem, case = ENTRIES[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GT4Py's experimental-feature warnings
        return runner.gt4py_build(stem, case)


@functools.cache
def _oracle(index: int):
    """GT4Py's verdict on entry ``index``: ("ok", arguments, results), ("rejected", exception)
    or ("call refused", exception)."""
    stem, case = ENTRIES[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GT4Py's numpy warnings
        stencil = _gt4py_stencil(index)
        if isinstance(stencil, Exception):
            return ("rejected", stencil)
        args = runner.arguments(stem, case)
        try:
            results = runner.run(stencil, case, args)
        except Exception as e:  # noqa: BLE001 - GT4Py's refusal of the call, whatever its type
            return ("call refused", e)
        return ("ok", args, results)


def _gtscript(stem, case, backend):
    stencil = runner.gtscript_build(stem, case, backend)
    return emulate(stencil) if backend == "cuda" else stencil


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(ENTRIES)), ids=IDS)
def test_gtscript_agrees_with_gt4py(index, backend):
    stem, case = ENTRIES[index]
    if backend == "cuda":
        require_compiler()
    verdict = _oracle(index)
    what = f"{stem}.{case.name} on gtscript's {backend} backend"

    if case.expect in ("match", "stricter") or (case.expect == "deliberate" and case.alias):
        assert verdict[0] == "ok", f"the corpus expects GT4Py to build and run {case.name}: {_describe(verdict[1])}"
    if case.expect == "call_reject":
        assert verdict[0] == "call refused", f"the corpus expects GT4Py to refuse the call of {case.name}"
    if case.expect == "reject" or (case.expect == "beyond" and GT4PY_VERSION < (1, 2)):
        assert verdict[0] == "rejected", f"the corpus expects GT4Py 1.1 to refuse {case.name}, but it builds"

    if case.expect == "match":
        _, args, expected = verdict
        got = runner.run(_gtscript(stem, case, backend), case, args)
        runner.assert_same(got, expected, f"{what} vs GT4Py")

    elif case.expect == "beyond":
        args = runner.arguments(stem, case)
        got = runner.run(_gtscript(stem, case, backend), case, args)
        runner.assert_same(got, case.reference(args), f"{what} vs NumPy")
        if verdict[0] == "ok":  # a later GT4Py builds what 1.1 refused: it must agree too
            runner.assert_same(got, verdict[2], f"{what} vs GT4Py {gt4py.__version__}")

    elif case.expect in ("call_reject", "stricter"):
        stencil = _gtscript(stem, case, backend)
        runner.assert_call_refused(stencil, case, runner.arguments(stem, case), what)

    elif case.expect == "reject":
        with pytest.raises(Exception):  # noqa: B017 - any error, as GT4Py's is any error
            stencil = _gtscript(stem, case, backend)
            runner.run(stencil, case, runner.arguments(stem, case))

    else:  # deliberate: refused by the parallel model, at build or (aliasing) at call
        if case.alias:
            stencil = _gtscript(stem, case, backend)
            args = verdict[1]
            with pytest.raises(ValueError) as info:
                runner.run(stencil, case, args)
        else:
            with pytest.raises(Exception) as info:  # checked below
                _gtscript(stem, case, backend)
            if verdict[0] == "rejected" and isinstance(verdict[1], ValueError):
                assert isinstance(info.value, ValueError), (
                    f"GT4Py raises a ValueError for {case.name} (code written for it catches that); "
                    f"gtscript raised {_describe(info.value)}")
        message = str(info.value)
        for word in case.words:
            assert word in message, f"{what}: {word!r} not in the error: {message}"


def test_the_corpus_is_large_and_varied():
    kinds = {kind: sum(c.expect == kind for _, c in ENTRIES) for kind in EXPECTS}
    assert len(ENTRIES) >= 150 and kinds["match"] >= 150, kinds
    assert all(kinds.values()), kinds
    names = [f"{stem}.{c.name}" for stem, c in ENTRIES]
    assert len(set(names)) == len(names), "two entries have one name"


@pytest.mark.parametrize("stem", runner.MODULES)
def test_only_import_lines_change(stem):
    """gtscript's copy of a corpus module differs from GT4Py's in module-level import lines only."""
    original = (runner.HERE / f"{stem}.py").read_text()
    rewritten = runner.gtscript_spelling(original)
    changed = [line for line in difflib.ndiff(original.splitlines(), rewritten.splitlines())
               if line.startswith(("- ", "+ "))]
    assert changed, "the module imports nothing from GT4Py"
    for line in changed:
        assert line[2:].startswith(("from gt4py.cartesian", "import gt4py.cartesian", "from gtscript", "import gtscript")), line


def test_the_rewrite_keeps_imports_inside_definitions():
    source = ("from gt4py.cartesian import gtscript\n"
              "import gt4py.cartesian.gtscript as gs\n"
              "from gt4py.cartesian.gtscript import PARALLEL, Field\n"
              "def f(a: Field[float]):\n"
              "    from gt4py.cartesian.__externals__ import X\n")
    assert runner.gtscript_spelling(source).splitlines() == [
        "import gtscript", "import gtscript as gs", "from gtscript import PARALLEL, Field",
        "def f(a: Field[float]):", "    from gt4py.cartesian.__externals__ import X"]
    with pytest.raises(AssertionError):
        runner.gtscript_spelling("import gt4py.storage\n")


def test_arguments_are_identical_for_every_run():
    stem, case = ENTRIES[0]
    first, second = runner.arguments(stem, case), runner.arguments(stem, case)
    assert first.keys() == second.keys()
    for name, value in first.items():
        np.testing.assert_array_equal(value, second[name])


# ------------------------------------------------------- what a GT4Py user reads off a stencil

MATCHED = [i for i, (_, c) in enumerate(ENTRIES) if c.expect == "match" and not c.alias]


def _access_name(access) -> str:
    return str(getattr(access, "name", access)).upper()


@pytest.mark.parametrize("index", MATCHED, ids=[IDS[i] for i in MATCHED])
def test_stencil_attributes_and_exec_info_match_gt4py(index):
    """``field_info`` (access, boundary, axes, data dimensions, dtype), ``parameter_info`` and
    the ``exec_info`` a call fills are GT4Py's, for the cpu backend."""
    stem, case = ENTRIES[index]
    if _oracle(index)[0] != "ok":
        pytest.fail(f"GT4Py does not run {case.name}: {_describe(_oracle(index)[1])}")
    theirs, ours = _gt4py_stencil(index), _gtscript(stem, case, "cpu")
    assert set(ours.field_info) == set(theirs.field_info)
    for name, info in theirs.field_info.items():
        mine = ours.field_info[name]
        if info is None:  # a field the stencil does not use
            assert mine is None or _access_name(mine.access) == "NONE", name
            continue
        assert tuple(mine.axes) == tuple(info.axes), name
        assert tuple(mine.data_dims) == tuple(info.data_dims), name
        assert np.dtype(mine.dtype) == info.dtype, name
        assert tuple(map(tuple, mine.boundary)) == tuple(map(tuple, info.boundary)), name
        assert _access_name(mine.access) == info.access.name, name
    assert set(ours.parameter_info) == set(theirs.parameter_info)
    for name, info in theirs.parameter_info.items():
        if info is not None:
            assert np.dtype(ours.parameter_info[name].dtype) == info.dtype, name

    args = runner.arguments(stem, case)
    mine, yours = {}, {}
    ours(**copy.deepcopy(args), **runner.call_kwargs(case), exec_info=mine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs(**copy.deepcopy(args), **runner.call_kwargs(case), exec_info=yours)
    for key in ("call_run_start_time", "call_run_end_time", "domain", "origin"):
        assert key in mine, f"exec_info lacks {key!r}"
    assert mine["call_run_start_time"] <= mine["call_run_end_time"]
    assert tuple(mine["domain"]) == tuple(yours["domain"])
    origin = mine["origin"]
    expected = yours["origin"]
    if isinstance(origin, dict):
        for name, value in origin.items():
            assert tuple(value)[:3] == tuple(expected[name])[:3], name
    else:
        assert tuple(origin) == tuple(expected["_all_"])


PICKLED = MATCHED[::8]


@pytest.mark.parametrize("index", PICKLED, ids=[IDS[i] for i in PICKLED])
def test_stencils_pickle_and_deep_copy(index):
    """A stencil survives pickling and deep-copying (as multiprocessing and dask need) and
    computes GT4Py's results afterwards."""
    stem, case = ENTRIES[index]
    verdict = _oracle(index)
    assert verdict[0] == "ok"
    stencil = _gtscript(stem, case, "cpu")
    for clone in (pickle.loads(pickle.dumps(stencil)), copy.deepcopy(stencil)):
        runner.assert_same(runner.run(clone, case, verdict[1]), verdict[2], f"{case.name} after a copy")


@pytest.mark.parametrize("name, nearest", [("gt:cpu_ifirst", "cpu"), ("gt:cpu_kfirst", "cpu"), ("dace:cpu", "cpu"),
                                           ("debug", "numpy"), ("gt:gpu", "cuda"), ("dace:gpu", "cuda")])
def test_gt4py_backend_names(name, nearest):
    """GT4Py's backend names build on the nearest gtscript backend, in ``stencil`` and in
    ``gtscript.storage``; the CPU ones compute GT4Py's results."""
    import gtscript
    import gtscript.storage

    index = next(i for i, (_, c) in enumerate(ENTRIES) if c.name == "copy_f64")
    stem, case = ENTRIES[index]
    _, defn = runner.definition(stem, case, "gtscript")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the one-time note about the name
        stencil = gtscript.stencil(name, defn)
    if nearest == "cuda":
        assert "__global__" in stencil.source()
        return
    verdict = _oracle(index)
    runner.assert_same(runner.run(stencil, case, verdict[1]), verdict[2], f"copy_f64 built as {name!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        field = gtscript.storage.zeros((4, 3, 2), np.float64, backend=name, aligned_index=(0, 0, 0))
    assert isinstance(field, np.ndarray) and field.shape == (4, 3, 2) and not field.any()
