"""Errors as code written for GT4Py meets them: the parallel model's violations are
``ValueError`` (as in GT4Py), calls that gtscript refuses on purpose say so and how to
rewrite them, and a build error's traceback starts at the user's definition."""

import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import emulate, require_compiler
from gtscript import FORWARD, PARALLEL, Field, computation, interval

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The parallel model's build-time violations: GT4Py rejects each of them with a ValueError too.
VIOLATIONS = """
import numpy as np
{imports}


def shifted_self_assignment(a: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        a = a[1, 0, 0]


def write_after_read_with_offset(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[1, 0, 0]
    with computation(PARALLEL), interval(...):
        a = 2.0 * b


def parallel_k_self_read(a: Field[np.float64]):
    with computation(PARALLEL), interval(1, None):
        a = a[0, 0, -1] + 1.0
"""

_IMPORTS = {
    "gtscript": "from gtscript import Field, PARALLEL, computation, interval",
    "gt4py": "from gt4py.cartesian.gtscript import Field, PARALLEL, computation, interval",
}
NAMES = ("shifted_self_assignment", "write_after_read_with_offset", "parallel_k_self_read")


def _definitions(tmp_path, library):
    name = f"violations_{library}"
    path = tmp_path / f"{name}.py"
    path.write_text(VIOLATIONS.format(imports=_IMPORTS[library]))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("backend", ["cpu", "numpy", "cuda"])
@pytest.mark.parametrize("name", NAMES)
def test_parallel_model_errors_are_value_errors(tmp_path, backend, name):
    definition = getattr(_definitions(tmp_path, "gtscript"), name)
    with pytest.raises(ValueError) as caught:  # what GT4Py code writes
        gtscript.stencil(backend, definition)
    assert isinstance(caught.value, gtscript.GTScriptSemanticError)
    assert isinstance(caught.value, SyntaxError)  # still located at the definition's line
    assert caught.value.filename == str(tmp_path / "violations_gtscript.py")
    assert caught.value.lineno is not None and caught.value.text.strip()


@pytest.mark.parametrize("name", NAMES)
def test_gt4py_rejects_the_same_definitions_with_value_error(tmp_path, monkeypatch, name):
    """So rejecting them is no difference from GT4Py (docs/parallel-model.md says so)."""
    pytest.importorskip("gt4py.cartesian")
    from gt4py.cartesian import config as gt4py_config
    from gt4py.cartesian import gtscript as gt4py_gtscript

    # GT4Py read GT_CACHE_ROOT when it was imported: point its setting at a private directory
    monkeypatch.setitem(gt4py_config.cache_settings, "root_path", str(tmp_path / "cache"))
    definition = getattr(_definitions(tmp_path, "gt4py"), name)
    with pytest.raises(ValueError):
        gt4py_gtscript.stencil("numpy", definition)


def shift_east(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp[1, 0, 0]


def k_shift(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(1, None):
        out = inp[0, 0, -1]


@pytest.mark.parametrize("backend", ["cpu", "numpy", "cuda"])
@pytest.mark.parametrize("definition, origin, domain", [(shift_east, (0, 0, 0), (5, 4, 3)),
                                                       (k_shift, (0, 0, 0), (6, 4, 3))])
def test_aliased_call_says_the_refusal_is_deliberate(backend, definition, origin, domain, rng):
    st = gtscript.stencil(backend, definition)
    if backend == "cuda":
        require_compiler()
        emulate(st)
    x = rng.standard_normal((6, 4, 3))
    before = x.copy()
    with pytest.raises(ValueError) as caught:
        st(x, x, origin=origin, domain=domain)
    message = str(caught.value)
    assert "'out' and 'inp' share memory" in message
    assert "on purpose, unlike GT4Py" in message and "inp.copy()" in message
    assert "Differences from GT4Py" in message
    np.testing.assert_array_equal(x, before)  # nothing ran
    # the rewrite the message proposes: a copy of the input gives NumPy's meaning
    st(x.copy(), x, origin=origin, domain=domain)
    if definition is shift_east:
        np.testing.assert_array_equal(x[:5], before[1:6])
    else:
        np.testing.assert_array_equal(x[:, :, 1:], before[:, :, :2])
        np.testing.assert_array_equal(x[:, :, 0], before[:, :, 0])


# ---- tracebacks --------------------------------------------------------------------------------

BAD_SCRIPT = """\
import numpy as np
import gtscript
from gtscript import Field, PARALLEL, computation, interval


@gtscript.stencil(backend="{backend}")
def bad(a: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        a = a[1, 0, 0]
"""

BAD_FUNCTION_SCRIPT = """\
import gtscript


@gtscript.function
def helper(x):
    if x > 0:
        return x
    return -x
"""


@pytest.mark.parametrize("script, line", [(BAD_SCRIPT.format(backend="cpu"), "a = a[1, 0, 0]"),
                                          (BAD_SCRIPT.format(backend="numpy"), "a = a[1, 0, 0]"),
                                          (BAD_FUNCTION_SCRIPT, "return x")])
def test_build_error_traceback_starts_at_the_definition(tmp_path, script, line):
    path = tmp_path / "user_code.py"
    path.write_text(script)
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 1
    err = done.stderr
    frames = [ln for ln in err.splitlines() if ln.startswith('  File "')]
    assert frames[0].startswith(f'  File "{path}"')  # the user's module first
    assert frames[-1].startswith(f'  File "{path}"')  # and last: the line at fault
    internal = [f for f in frames if "gtscript" + os.sep in f and str(path) not in f]
    assert len(internal) == 1, err  # the decorator's own raise, none of the frontend's frames
    assert "raise exc.with_traceback(None)" in err
    assert err.count(line) == 1, err  # the offending line, once


def test_build_error_in_ipython_shows_the_line_once():
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_cell("import numpy as np\nimport gtscript\n"
                   "from gtscript import Field, PARALLEL, computation, interval")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        result = shell.run_cell(textwrap.dedent("""
            @gtscript.stencil(backend="cpu")
            def bad_in_cell(a: Field[np.float64]):
                with computation(PARALLEL), interval(...):
                    a = a[1, 0, 0]
            """))
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())  # without the colours
    assert isinstance(result.error_in_exec, gtscript.GTScriptSemanticError)
    assert text.count("a = a[1, 0, 0]") == 1, text  # the offending line, once
    assert "^" in text and "shifted self-assignment" in text
    assert os.sep + "frontend" + os.sep not in text, text
    assert "Cell In[" in text  # located in the cell


def test_errors_print_their_location_outside_tracebacks():
    """print(exc) and logs, which do not format SyntaxError attributes, still get the line."""
    def bad(a: Field[np.float64]):
        with computation(FORWARD), interval(...):
            a = a[1, 0, 0]

    with pytest.raises(gtscript.GTScriptSemanticError) as caught:
        gtscript.stencil("cpu", bad)
    assert caught.value.msg.count("a = a[1, 0, 0]") == 0  # not repeated in the message itself
    assert str(caught.value).count("a = a[1, 0, 0]") == 1
    assert caught.value.__traceback__ is not None
