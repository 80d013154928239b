"""The notebook-facing side of a stencil object: its text and HTML presentation, re-use of
the compiled module when a cell is re-run, and build errors that point into a cell.

A notebook cell is simulated the way IPython runs one: the cell's source is registered in
``linecache`` under a file name that does not exist on disk, then compiled and executed
with that name (tests/docs/test_notebooks.py does the same in a real kernel).
"""

import html
import linecache
import re
import textwrap

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval


def diffuse_defn(inp: Field[np.float64], out: Field[np.float64], alpha: float):
    with computation(PARALLEL), interval(...):
        out = inp + alpha * (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0] - 4.0 * inp)


def ij_defn(a: Field[np.float32], w: Field[gtscript.IJ, np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        out = a[0, 0, 1] * w


def run_cell(source, filename):
    """Execute ``source`` as IPython executes a notebook cell named ``filename``."""
    source = textwrap.dedent(source)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


# ============================================================================ presentation

@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_repr_shows_signature_backend_key_halo_and_extents(backend):
    st = gtscript.stencil(backend, diffuse_defn)
    text = repr(st)
    assert text.startswith("<gtscript stencil diffuse_defn(inp: Field[float64], "
                           "out: Field[float64], alpha: float64)")
    assert f"backend={backend!r}" in text
    key = st.build_info["cache_key"]
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    assert f"key={key[:12]}" in text
    assert "halo=((1, 1), (1, 1), (0, 0))" in text
    assert "inp: ((-1, 1), (-1, 1), (0, 0))" in text and "out: ((0, 0), (0, 0), (0, 0))" in text
    assert f"({st.build_info['module_source']})>" in text


def test_repr_of_ij_field_and_k_extent():
    st = gtscript.stencil("cpu", ij_defn)
    text = repr(st)
    assert "w: Field[IJ, float32]" in text
    assert "halo=((0, 0), (0, 0), (0, 1))" in text
    assert "a: ((0, 0), (0, 0), (0, 1))" in text


def keyword_only_defn(a: Field[np.float64], b: Field[np.float64], *, alpha: float,
                      beta: float = 2.0):
    with computation(PARALLEL), interval(...):
        b = alpha * a + beta


def positional_only_defn(a: Field[np.float64], /, b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_repr_keeps_the_star_of_keyword_only_and_the_slash_of_positional_only(backend):
    st = gtscript.stencil(backend, keyword_only_defn)
    assert st.signature == ("keyword_only_defn(a: Field[float64], b: Field[float64], *, "
                            "alpha: float64, beta: float64 = 2.0)")
    assert repr(st).startswith(f"<gtscript stencil {st.signature} ")
    assert str(st) == repr(st)
    st = gtscript.stencil(backend, positional_only_defn)
    assert st.signature == "positional_only_defn(a: Field[float64], /, b: Field[float64])"


def test_html_repr_has_a_row_per_field():
    st = gtscript.stencil("cpu", diffuse_defn)
    page = st._repr_html_()
    assert page.startswith("<div>") and page.endswith("</div>")
    assert html.escape(st.signature) in page
    key = st.build_info["cache_key"]
    assert f'key <code title="{key}">{key[:12]}</code>' in page
    rows = re.findall(r"<tr><td><code>(\w+)</code></td><td>(\w+)</td><td>(\w+)</td>"
                      r"<td>(\w+)</td><td>([^<]+)</td></tr>", page)
    assert rows == [("inp", "in", "float64", "IJK", "((-1, 1), (-1, 1), (0, 0))"),
                    ("out", "out", "float64", "IJK", "((0, 0), (0, 0), (0, 0))")]


def test_inspection_methods():
    st = gtscript.stencil("cpu", diffuse_defn)
    ir = st.ir()
    assert ir.startswith("stencil diffuse_defn(") and "computation(PARALLEL)" in ir
    assert "inp[-1, 0, 0]" in ir
    llvm = st.source()
    assert "define" in llvm and "target triple" in llvm
    assert st.field_info["inp"]["intent"] == "in" and st.field_info["out"]["intent"] == "out"


def literals_defn(a: Field[np.float64], b: Field[np.float64], c: Field[np.float32],
                  n: Field[np.int64]):
    with computation(PARALLEL), interval(...):
        b = 2.0 * a + 0.1 - 1e300 + (a > 1.5) * 3
        c = -4.0 * c
        n = n + 2


def test_ir_prints_float_literals_as_floats_that_read_back_exactly():
    import ast

    ir = gtscript.stencil("cpu", literals_defn).ir()
    assert "(2.0 * a[0, 0, 0])" in ir and "(-4.0:float32 * c[0, 0, 0])" in ir  # not 2, -4
    assert "+ 0.10000000000000001)" in ir and "- 1.0000000000000001e+300)" in ir
    assert "(a[0, 0, 0] > 1.5)" in ir
    assert "(n[0, 0, 0] + 2)" in ir and "* 3))" in ir  # integers stay integers
    for text, value in (("2.0", 2.0), ("0.10000000000000001", 0.1), ("1.0000000000000001e+300",
                                                                     1e300)):
        assert ast.literal_eval(text) == value and isinstance(ast.literal_eval(text), float)


# ===================================================================== re-running a cell

CELL = '''
import numpy as np
import gtscript
from gtscript import PARALLEL, Field, computation, interval

@gtscript.stencil(backend="cpu")
def scale(a: Field[np.float64], b: Field[np.float64], s: float):
    with computation(PARALLEL), interval(...):
        b = s * a
'''


def test_rerunning_an_unchanged_cell_reuses_the_compiled_stencil():
    first = run_cell(CELL, "<cell-rerun-1>")["scale"]
    again = run_cell(CELL, "<cell-rerun-1>")["scale"]
    elsewhere = run_cell(CELL, "<cell-rerun-2>")["scale"]   # same source in another cell
    assert again is first and elsewhere is first
    a, b = np.arange(8.0).reshape(2, 2, 2), np.zeros((2, 2, 2))
    info = {}
    again(a, b, s=3.0, exec_info=info)
    np.testing.assert_array_equal(b, 3.0 * a)
    assert info["module_source"] in ("build", "memory", "disk")


def test_changed_cell_builds_a_new_stencil():
    first = run_cell(CELL, "<cell-change-1>")["scale"]
    changed = run_cell(CELL.replace("b = s * a", "b = s * a + 1.0"), "<cell-change-1>")["scale"]
    assert changed is not first
    a, b = np.ones((2, 2, 2)), np.zeros((2, 2, 2))
    changed(a, b, s=2.0)
    np.testing.assert_array_equal(b, 3.0)


def test_rebuild_gives_a_fresh_object():
    first = gtscript.stencil("cpu", diffuse_defn)
    assert gtscript.stencil("cpu", diffuse_defn) is first
    assert gtscript.stencil("cpu", diffuse_defn, rebuild=True) is not first


# ==================================================================== errors in a cell

BAD_CELL = '''
import numpy as np
import gtscript
from gtscript import PARALLEL, Field, computation, interval

def smooth(a: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        a = 0.5 * (a[1, 0, 0] + a[-1, 0, 0])

try:
    gtscript.stencil("cpu", smooth)
except gtscript.GTScriptSyntaxError as exc:
    error = exc
'''


def test_build_error_points_at_the_cells_line():
    error = run_cell(BAD_CELL, "<cell-bad>")["error"]
    assert isinstance(error, gtscript.GTScriptSemanticError)
    assert error.filename == "<cell-bad>"
    line = textwrap.dedent(BAD_CELL).splitlines().index(
        "        a = 0.5 * (a[1, 0, 0] + a[-1, 0, 0])") + 1
    assert error.lineno == line
    assert error.text.strip() == "a = 0.5 * (a[1, 0, 0] + a[-1, 0, 0])"
