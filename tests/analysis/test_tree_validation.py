"""Malformed definition trees and names that are not text: a clear TypeError or ValueError,
never a crash of the interpreter.

A stencil pickles as its definition tree and the disk index stores trees, so the core reads
trees that the frontend never made. The core checks the whole tree before building (csrc/ir/
validate.c). A crash is tested in a subprocess, so that a regression fails the test and not
the whole run.
"""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval
from gtscript import _core
from gtscript.errors import GTScriptSemanticError
from gtscript.frontend import parse_definition


def laplacian(a: Field[float], b: Field[float]):
    with computation(PARALLEL), interval(...):
        b = a[1, 0, 0] + 2.0 * a


def run_python(code: str, cwd=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter (a crash there is a return code, not a lost test run)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env=os.environ.copy())


def short_tree() -> dict:
    """The tree of `laplacian` with its `2.0 * a` one item short (no right operand)."""
    tree = copy.deepcopy(parse_definition(laplacian))
    interval_ = tree["body"][0][4][0]
    assign = interval_[5][0]
    binop = assign[4]
    assert binop[0] == "binop"
    short = ("assign", *assign[1:4], binop[:5])
    tree["body"][0][4][0] = (*interval_[:5], [short])
    return tree


def test_tree_one_item_short_is_a_type_error_in_process():
    with pytest.raises(TypeError, match=r"body\[0\]\[4\]\[0\]\[5\]\[0\]\[4\]: a 'binop' node has 5 items, not 6"):
        _core.Module(short_tree(), "numpy", {})


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_unpickled_stencil_with_a_short_tree_does_not_crash(backend):
    """pickle.loads of a stencil whose tree lost an item: the segfault of the issue."""
    r = run_python(f"""
        import pickle, sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import test_tree_validation as t
        import gtscript
        stencil = gtscript.stencil(backend={backend!r}, definition=t.laplacian)
        func, args = stencil.__reduce__()[:2]
        data = pickle.dumps((func, (t.short_tree(), *args[1:])))
        func, args = pickle.loads(data)
        try:
            func(*args)
        except TypeError as e:
            print("TypeError:", e)
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "TypeError: malformed definition tree at body[0][4][0][5][0][4]" in r.stdout


def test_surrogate_in_a_parameter_name_is_a_value_error():
    tree = copy.deepcopy(parse_definition(laplacian))
    tree["params"][0] = ("field", "a\udcff", *tree["params"][0][2:])
    with pytest.raises(ValueError, match=r"params\[0\]\[1\]: .*lone surrogate U\+DCFF"):
        _core.Module(tree, "cpu", {})


def test_surrogate_in_a_temporary_name_is_a_value_error():
    tree = copy.deepcopy(parse_definition(laplacian))
    stmt = tree["body"][0][4][0][5][0]
    tree["body"][0][4][0][5].insert(0, ("assign", *stmt[1:3], ("name", *stmt[1:3], "t\udc80"),
                                        ("const", *stmt[1:3], 1.0)))
    with pytest.raises(ValueError, match="lone surrogate U\\+DC80"):
        _core.Module(tree, "numpy", {})


def test_surrogate_in_the_stencil_name_is_a_clear_error(tmp_path):
    """A stencil named with a lone surrogate (`name=`, which may come from anywhere): a clear
    error at decoration, not a bare UnicodeEncodeError nor a crash."""
    (tmp_path / "defs.py").write_text(DEFS)
    r = run_python(f"""
        import sys
        import gtscript
        sys.path.insert(0, {str(tmp_path)!r})
        import defs
        try:
            gtscript.stencil(backend="numpy", definition=defs.good, name="good\\udcff")
        except UnicodeError as e:
            print("bare", type(e).__name__)
        except (TypeError, ValueError) as e:
            print("clear", type(e).__name__, e)
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("clear ValueError"), r.stdout
    assert "U+DCFF" in r.stdout


DEFS = textwrap.dedent("""
    from gtscript import Field, PARALLEL, computation, interval

    def good(a: Field[float], b: Field[float]):
        with computation(PARALLEL), interval(...):
            b = a[1, 0, 0] + 2.0 * a

    def bad(a: Field[float], b: Field[float]):
        with computation(PARALLEL), interval(...):
            b = undefined_name
""")


def test_definition_under_a_non_utf8_path_builds(tmp_path):
    """A definition in m\\xfcller/model.py (a directory name of Latin-1 bytes, which Python
    decodes with surrogates): it builds and runs on both backends, and its errors name the
    file (the segfault of the issue: the name's UTF-8 conversion failed)."""
    root = os.fsencode(tmp_path)
    pkg = os.path.join(root, b"m\xfcller")
    try:
        os.mkdir(pkg)
    except (OSError, UnicodeError) as e:  # a file system that refuses the bytes
        pytest.skip(f"this file system refuses a non-UTF-8 name: {e}")
    with open(os.path.join(pkg, b"model.py"), "w") as f:
        f.write(DEFS)
    r = run_python(f"""
        import os, sys
        import numpy as np
        import gtscript
        sys.path.insert(0, os.fsdecode({pkg!r}))
        import model
        for backend in ("cpu", "numpy"):
            s = gtscript.stencil(backend=backend, definition=model.good)
            a = np.arange(5 * 4 * 3, dtype=float).reshape(5, 4, 3)
            b = np.zeros_like(a)
            s(a, b, origin=(0, 0, 0), domain=(4, 4, 3))
            assert np.array_equal(b[:4], a[1:] + 2.0 * a[:4]), backend
            try:
                gtscript.stencil(backend=backend, definition=model.bad)
            except gtscript.errors.GTScriptSemanticError as e:
                print(backend, "error at", e.filename, e.lineno)
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) == 2, r.stdout
    for line in lines:
        assert "m\\udcfcller" in line and line.endswith("model.py 10"), line


@pytest.mark.parametrize("key,value,exc,match", [
    ("name", 3, TypeError, "the stencil's name must be a str, got int"),
    ("name", "a\x00b", ValueError, "holds a NUL character"),
    ("filename", None, TypeError, "the file name must be a str"),
    ("source_lines", ("x",), TypeError, "the source lines must be a list"),
    ("params", [("field", "a", "float64", "IJK")], TypeError, "a 'field' node has 4 items, not 5"),
    ("params", [("vector", "a", "float64")], ValueError, "'vector' is not a parameter"),
    ("body", [("computation", 1, 0, "PARALLEL", [("interval", 1, 0, (0, 0), (2, 0), [])])],
     ValueError, "level must be in \\[0, 1\\]"),
    ("body", [("computation", 1, 0, "PARALLEL", [("interval", 1, 0, (0, 0), (1, 0), [None])])],
     TypeError, "a statement list must be a tuple, got NoneType"),
    ("body", [("computation", -1, 0, "PARALLEL", [])], ValueError, "a line or column must be in"),
    ("body", [("computation", 2**70, 0, "PARALLEL", [])], ValueError, "a line or column must be in"),
])
def test_malformed_parts_name_what_is_wrong(key, value, exc, match):
    tree = copy.deepcopy(parse_definition(laplacian))
    tree[key] = value
    with pytest.raises(exc, match=match):
        _core.Module(tree, "numpy", {})


def test_missing_key_and_not_a_dict():
    tree = copy.deepcopy(parse_definition(laplacian))
    del tree["body"]
    with pytest.raises(TypeError, match="the definition has no 'body'"):
        _core.Module(tree, "numpy", {})
    with pytest.raises(TypeError, match="the definition must be a dict, got list"):
        _core.Module([], "numpy", {})


def on_a_big_stack(fn):
    """fn() on a thread with a 64 MiB stack: its result or exception. The builder and the
    analyses recurse once a level on the caller's stack; 50,000 levels fit in the 8 MiB main
    thread of a normal build (measured), but a sanitizer build's frames are several times
    larger, and these tests run under the sanitizers too."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back
            out["error"] = e

    old = threading.stack_size(64 << 20)
    try:
        t = threading.Thread(target=run)
        t.start()
        t.join()
    finally:
        threading.stack_size(old)
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_nesting_limit():
    """A tree nested deeper than the builder's recursion can go is refused; a 20,000-level one
    (what a 20,000-term sum gives) still builds. An absurd depth is refused before any
    recursion (a walk with a stack of its own)."""
    tree = copy.deepcopy(parse_definition(laplacian))
    assign = tree["body"][0][4][0][5][0]

    def with_depth(n):
        e = ("name", *assign[1:3], "a")
        for _ in range(n):
            e = ("unop", *assign[1:3], "-", e)
        t = copy.copy(tree)
        t["body"] = copy.deepcopy(tree["body"])
        t["body"][0][4][0][5][0] = (*assign[:4], e)
        return t

    module = on_a_big_stack(lambda: _core.Module(with_depth(20_000), "numpy", {}))
    assert module.field_info["a"]["intent"] == "in"
    with pytest.raises(ValueError, match="statements and expressions nest more than 25000 levels"):
        on_a_big_stack(lambda: _core.Module(with_depth(30_000), "numpy", {}))
    with pytest.raises(ValueError, match="tuples and lists nest more than 50016 levels deep"):
        _core.Module(with_depth(1_000_000), "numpy", {})


def test_a_cycle_through_a_list_is_refused():
    """An 'if' whose branch list holds the 'if' itself (a pickle can make one)."""
    tree = copy.deepcopy(parse_definition(laplacian))
    body = tree["body"][0][4][0][5]
    branch: list = []
    stmt = ("if", *body[0][1:3], ("const", *body[0][1:3], True), branch, [])
    branch.append(stmt)
    body.append(stmt)
    with pytest.raises(ValueError, match="nest more than 50016 levels deep"):
        _core.Module(tree, "numpy", {})


def test_huge_data_index_is_a_semantic_error():
    tree = copy.deepcopy(parse_definition(laplacian))
    assign = tree["body"][0][4][0][5][0]
    tree["body"][0][4][0][5][0] = (*assign[:4], ("index", *assign[1:3], "a", (0, 0, 0), (2**70,)))
    with pytest.raises(GTScriptSemanticError, match="data index or size beyond 64 bits"):
        _core.Module(tree, "numpy", {})


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_surrogate_in_a_call_keyword_is_a_type_error(backend):
    """A keyword argument named with a lone surrogate: the TypeError of any unknown keyword
    (was a bare UnicodeEncodeError), the arrays untouched."""
    st = gtscript.stencil(backend=backend, definition=laplacian)
    a = np.arange(60.0).reshape(5, 4, 3)
    b = np.full_like(a, -1.0)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'x\\udcff'"):
        st(a, b, origin=(0, 0, 0), domain=(4, 4, 3), **{"x\udcff": 1})
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'a\\udcff'"):
        st(b=b, origin=(0, 0, 0), domain=(4, 4, 3), **{"a\udcff": a})
    assert (b == -1.0).all()


@pytest.mark.parametrize("backend,option", [("cpu", "llvm_passes"), ("cuda", "gpu_arch")])
def test_surrogate_in_a_string_option_is_a_value_error(backend, option):
    tree = parse_definition(laplacian)
    with pytest.raises(ValueError, match=rf"{option} .*'sm\\udcff'"):
        _core.Module(tree, backend, {option: "sm\udcff"})


def test_a_damaged_tree_in_the_disk_index_falls_back_to_the_frontend(tmp_path, monkeypatch):
    """An index file (whole, its SHA-256 right) whose tree lost an item: the next process
    lowers the definition again instead of crashing (the segfault of the issue)."""
    from gtscript import _index

    cache = tmp_path / "cache"
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(cache))
    (tmp_path / "defs.py").write_text(DEFS)
    decorate = f"""
        import sys
        import numpy as np
        import gtscript
        sys.path.insert(0, {str(tmp_path)!r})
        import defs
        st = gtscript.stencil(backend="numpy", definition=defs.good, build_info=(info := {{}}))
        a = np.arange(60.0).reshape(5, 4, 3)
        b = np.zeros_like(a)
        st(a, b, origin=(0, 0, 0), domain=(4, 4, 3))
        assert np.array_equal(b[:4], a[1:] + 2.0 * a[:4])
        print(info["index"])
    """
    first = run_python(decorate)
    assert first.returncode == 0, first.stderr[-2000:]
    (path,) = [p for p in cache.iterdir() if p.name.startswith("index-")]
    pre_key = path.name[len("index-"):]
    cache_key, tree = _index._decode(pre_key, path.read_bytes())
    assert run_python(decorate).stdout.strip() == "hit"  # the index is used as it is
    interval_ = tree["body"][0][4][0]
    assign = interval_[5][0]
    tree["body"][0][4][0] = (*interval_[:5], [("assign", *assign[1:4], assign[4][:5])])
    path.unlink()
    _index.store(pre_key, cache_key, tree)
    assert _index._decode(pre_key, path.read_bytes())[1] == tree
    second = run_python(decorate)
    assert second.returncode == 0, second.stderr[-2000:]
    assert second.stdout.strip() == "miss"
