"""GT4Py's quickstart, language-reference examples and tutorial notebooks (horizontal
diffusion, Burgers, isentropic diagnostics), retold in tests/gt4py_corpus/tutorials/ as
programs in GT4Py's spelling, run with only their import lines changed: on gtscript's numpy and
cpu backends they give GT4Py's results (its numpy backend) and hand-written NumPy's. Burgers'
in-place variant, which passes the arrays being updated as the inputs read at offsets, runs on
GT4Py and is refused by gtscript with a clear error."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gt4py.cartesian.config",
                                   reason="these tests compare with GT4Py (pyproject's test extra)")

from gt4py_corpus import runner

runner.private_gt4py_cache()  # GT4Py's generated code goes to a temporary directory

PROGRAMS = Path(runner.HERE, "tutorials")
NAMES = ("quickstart", "language_reference", "horizontal_diffusion", "burgers", "isentropic_diagnostics")
_gt4py_results: dict = {}


def program(name, flavour):
    module = runner.load_path(PROGRAMS / f"{name}.py", flavour)
    if isinstance(module, Exception):
        raise module
    assert not module.__corpus_errors__, module.__corpus_errors__
    return module


def gt4py_results(name):
    if name not in _gt4py_results:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _gt4py_results[name] = program(name, "gt4py").run("numpy")
    return _gt4py_results[name]


def compare(got, want, what):
    assert got.keys() == want.keys(), what
    for key, expected in want.items():
        actual = np.asarray(got[key])
        assert actual.dtype == np.asarray(expected).dtype, f"{what}: {key}"
        if actual.dtype.kind == "f":
            np.testing.assert_allclose(actual, expected, rtol=1e-11, atol=1e-11, err_msg=f"{what}: {key}")
        else:
            np.testing.assert_array_equal(actual, expected, err_msg=f"{what}: {key}")


@pytest.mark.parametrize("name", NAMES)
def test_gt4py_itself_matches_numpy(name):
    """The programs are right: GT4Py's own results are hand-written NumPy's."""
    got, want = gt4py_results(name)
    compare(got, want, f"{name} on GT4Py")


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("name", NAMES)
def test_gtscript_runs_the_program_unchanged(name, backend):
    got, want = program(name, "gtscript").run(backend)
    compare(got, want, f"{name} on gtscript's {backend} backend vs NumPy")
    compare(got, gt4py_results(name)[0], f"{name} on gtscript's {backend} backend vs GT4Py")


def test_only_the_import_lines_change():
    for name in NAMES:
        original = (PROGRAMS / f"{name}.py").read_text().splitlines()
        rewritten = runner.gtscript_spelling("\n".join(original)).splitlines()
        differ = [(o, r) for o, r in zip(original, rewritten) if o != r]
        assert differ and all(o.startswith(("from gt4py", "import gt4py")) for o, _ in differ), name


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_burgers_in_place_call_gets_a_clear_error(backend):
    burgers = program("burgers", "gtscript")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gt4py_u = program("burgers", "gt4py").run("numpy", in_place=True)[0]["u"]
    assert np.isfinite(gt4py_u).all()  # GT4Py runs the in-place loop without a word
    with pytest.raises(ValueError, match="share memory") as info:
        burgers.run(backend, in_place=True)
    message = str(info.value)
    assert "'u_new'" in message and "'u_now'" in message and "separate arrays" in message
