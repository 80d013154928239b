"""The disk index of the decorator's pre-key (gtscript/_index.py, docs/caching.md): a fresh
process that decorates an unchanged definition takes its definition tree from the index and
skips the frontend; anything the tree depends on that changed (an external, a global in
another module, a gtscript function in another module, an option, the definition's file,
gtscript itself) misses; corrupt or foreign index files are ignored; concurrent writers leave
a whole file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import gtscript
from gtscript import _index

stencil_module = sys.modules["gtscript.stencil"]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONSTS = "SCALE = {scale}\n"
FUNCS = textwrap.dedent("""
    import gtscript

    @gtscript.function
    def twice(x):
        return {factor} * x
""")
DEFS = textwrap.dedent("""
    import numpy as np

    import consts
    import funcs
    from gtscript import PARALLEL, Field, computation, interval

    OFFSET = {offset}


    def scaled(inp: Field[np.float64], out: Field[np.float64]):
        from __externals__ import SHIFT
        with computation(PARALLEL), interval(...):
            out = funcs.twice(inp[1, 0, 0]) * consts.SCALE + OFFSET + SHIFT
""")
# One fresh process: decorate `scaled`, run it, report what the decorator did. With
# "no-frontend" the frontend raises if it is asked, so a run that succeeds took the index.
CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import gtscript
    from gtscript import frontend

    backend, shift, no_frontend, options = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1", json.loads(sys.argv[4])
    if no_frontend:
        def refuse(*args, **kwargs):
            raise AssertionError("the frontend ran")
        frontend.parse_definition = refuse
    import defs
    info = {}
    st = gtscript.stencil(backend, defs.scaled, externals={"SHIFT": shift}, build_info=info,
                          **options)
    inp = np.arange(6 * 5 * 3, dtype=np.float64).reshape(6, 5, 3)
    out = np.full_like(inp, -7.0)
    st(inp, out, origin=(0, 0, 0), domain=(5, 5, 3))
    print(json.dumps({"index": info["index"], "module_source": info["module_source"],
                      "parse_time": info["parse_time"], "key": st.cache_key,
                      "out": out.tolist(), "field_info": str(st.field_info)}))
""")


def _write(path, text):
    """Write ``text`` and move the modification time on, so that an edit within the clock's
    resolution is still an edit."""
    old = os.stat(path).st_mtime_ns if os.path.exists(path) else 0
    with open(path, "w") as f:
        f.write(text)
    stamp = max(os.stat(path).st_mtime_ns, old + 1_000_000)
    os.utime(path, ns=(stamp, stamp))


@pytest.fixture
def project(tmp_path):
    """A project of three modules in ``tmp_path/src`` with its own cache directory."""
    src = tmp_path / "src"
    src.mkdir()
    _write(src / "consts.py", CONSTS.format(scale=3.0))
    _write(src / "funcs.py", FUNCS.format(factor=2.0))
    _write(src / "defs.py", DEFS.format(offset=0.5))
    _write(src / "child.py", CHILD)
    return tmp_path


def _run(project, backend="cpu", shift=0.0, no_frontend=False, options=None):
    env = dict(os.environ, GTSCRIPT_CACHE_DIR=str(project / "cache"),
               PYTHONPATH=os.pathsep.join([str(project / "src"), ROOT]),
               PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, str(project / "src" / "child.py"), backend, str(shift),
                        "1" if no_frontend else "0", json.dumps(options or {})],
                       env=env, capture_output=True, text=True, timeout=300, check=False)
    if r.returncode != 0:
        raise AssertionError(r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def _expected(factor=2.0, scale=3.0, offset=0.5, shift=0.0):
    """Hand-written NumPy: the sentinel -7 stays outside the 5x5x3 domain."""
    inp = np.arange(6 * 5 * 3, dtype=np.float64).reshape(6, 5, 3)
    out = np.full_like(inp, -7.0)
    out[:5] = factor * inp[1:6] * scale + offset + shift
    return out


def _check(result, **values):
    np.testing.assert_array_equal(np.array(result["out"]), _expected(**values))


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_fresh_process_hit_skips_the_frontend(project, backend):
    first = _run(project, backend)
    assert first["index"] == "miss"
    _check(first)
    second = _run(project, backend, no_frontend=True)  # the frontend would raise
    assert second["index"] == "hit"
    assert second["parse_time"] == 0.0
    assert second["module_source"] == ("disk" if backend == "cpu" else "build")
    assert second["key"] == first["key"]
    assert second["field_info"] == first["field_info"]
    _check(second)


def test_changed_global_in_another_module_misses(project):
    _check(_run(project))
    _write(project / "src" / "consts.py", CONSTS.format(scale=5.0))
    result = _run(project)
    assert result["index"] == "miss"
    _check(result, scale=5.0)
    assert _run(project, no_frontend=True)["index"] == "hit"


def test_edited_function_in_another_module_misses(project):
    _check(_run(project))
    _write(project / "src" / "funcs.py", FUNCS.format(factor=4.0))
    result = _run(project)
    assert result["index"] == "miss"
    _check(result, factor=4.0)


def test_edited_definition_file_misses(project):
    _check(_run(project))
    _write(project / "src" / "defs.py", DEFS.format(offset=1.5))  # same size: 0.5 -> 1.5
    result = _run(project)
    assert result["index"] == "miss"
    _check(result, offset=1.5)


def test_changed_external_and_option_miss(project):
    _check(_run(project))
    result = _run(project, shift=2.0)
    assert result["index"] == "miss"
    _check(result, shift=2.0)
    result = _run(project, options={"literal_float_precision": 64})
    assert result["index"] == "miss"
    _check(result)
    assert _run(project, shift=2.0, no_frontend=True)["index"] == "hit"


def test_corrupt_and_foreign_index_files_are_ignored(project):
    cache = project / "cache"

    def index_files():
        return {p.name for p in cache.iterdir() if p.name.startswith("index-")}

    _check(_run(project))
    (a,) = (cache / name for name in index_files())  # shift 0's
    _check(_run(project, shift=1.0), shift=1.0)
    (b,) = (cache / name for name in index_files() - {a.name})  # shift 1's
    a_data, b_data = a.read_bytes(), b.read_bytes()
    damaged = [a_data[: len(a_data) // 2], b"", b"garbage" * 100,
               a_data[:-10] + bytes(10), b_data]  # truncated, empty, garbage, flipped, foreign
    for data in damaged:
        a.write_bytes(data)
        b.write_bytes(b_data)
        damaged_run = _run(project)
        assert damaged_run["index"] == "miss"  # ignored, then replaced by a whole file
        _check(damaged_run)
        intact_run = _run(project, shift=1.0, no_frontend=True)
        assert intact_run["index"] == "hit"
        _check(intact_run, shift=1.0)
        assert _run(project, no_frontend=True)["index"] == "hit"


def test_index_file_that_is_not_a_regular_file_is_ignored(project):
    _check(_run(project))
    cache = project / "cache"
    (name,) = [p.name for p in cache.iterdir() if p.name.startswith("index-")]
    os.unlink(cache / name)
    os.mkfifo(cache / name)  # a reader that blocked on it would hang the build
    result = _run(project)
    assert result["index"] == "miss"
    _check(result)
    assert (cache / name).is_file()  # the store renamed a whole file over it
    os.unlink(cache / name)
    os.symlink(cache / "elsewhere", cache / name)
    result = _run(project)
    assert result["index"] == "miss"
    _check(result)


def test_concurrent_writers(project):
    env = dict(os.environ, GTSCRIPT_CACHE_DIR=str(project / "cache"),
               PYTHONPATH=os.pathsep.join([str(project / "src"), ROOT]),
               PYTHONDONTWRITEBYTECODE="1")
    procs = [subprocess.Popen([sys.executable, str(project / "src" / "child.py"), "cpu", "0.0",
                               "0", "{}"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        _check(json.loads(out.strip().splitlines()[-1]))
    assert not [p for p in (project / "cache").iterdir() if p.name.startswith(".idx-tmp-")]
    assert _run(project, no_frontend=True)["index"] == "hit"


def test_concurrent_stores_leave_a_whole_file(tmp_path, monkeypatch):
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(tmp_path / "cache"))
    key = "ab" * 32
    trees = [{"name": f"s{i}", "body": list(range(i * 1000))} for i in range(8)]

    def write(i):
        for _ in range(20):
            _index.store(key, f"{i:02d}" * 32, trees[i])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cache_key, tree = _index.load(key)
    i = int(cache_key[:2])
    assert cache_key == f"{i:02d}" * 32 and tree == trees[i]
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".idx-tmp-")]


def _double_source(path, factor):
    _write(path, textwrap.dedent(f"""
        import numpy as np
        from gtscript import PARALLEL, Field, computation, interval

        def double(inp: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                tmp = inp + 1.0
                out = {factor} * inp
    """))


def _load_module(path, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_in_process_hit_reissues_warnings_and_rebuild_skips_index(tmp_path, fields):
    path = tmp_path / "double_defs.py"
    _double_source(path, 2.0)
    module = _load_module(path, "double_defs")
    with pytest.warns(UserWarning, match="tmp"):
        first = gtscript.stencil("cpu", module.double, build_info=(info := {}))
    assert info["index"] == "miss"
    stencil_module._memory_cache.clear()  # as a fresh process: the decorator's table is empty
    with pytest.warns(UserWarning, match="tmp"):  # the analysis' warning, said again on a hit
        again = gtscript.stencil("cpu", module.double, build_info=(info := {}))
    assert info["index"] == "hit" and again.cache_key == first.cache_key
    inp, out = fields.random((5, 5, 3)), fields.sentinel((5, 5, 3))
    before = out.copy()
    again(inp, out, origin=(1, 1, 0), domain=(3, 3, 2))
    region = (slice(1, 4), slice(1, 4), slice(0, 2))
    fields.assert_written_only_in(out, before, (1, 1, 0), (3, 3, 2), 2.0 * inp[region])
    stencil_module._memory_cache.clear()
    with pytest.warns(UserWarning, match="tmp"):
        gtscript.stencil("cpu", module.double, rebuild=True, build_info=(info := {}))
    assert info["index"] == "miss" and info["module_source"] == "build"


def test_new_gtscript_version_misses(tmp_path, monkeypatch):
    path = tmp_path / "double_defs2.py"
    _double_source(path, 3.0)
    module = _load_module(path, "double_defs2")
    with pytest.warns(UserWarning):
        gtscript.stencil("numpy", module.double)
    stencil_module._memory_cache.clear()
    monkeypatch.setattr(_index, "_environment", _index.environment_token() + "\nother version")
    with pytest.warns(UserWarning):
        gtscript.stencil("numpy", module.double, build_info=(info := {}))
    assert info["index"] == "miss"


def test_clear_removes_index_files(tmp_path, monkeypatch):
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(tmp_path / "cache"))
    _index.store("cd" * 32, "ef" * 32, {"name": "x"})
    assert _index.load("cd" * 32) == ("ef" * 32, {"name": "x"})
    gtscript.cache.clear()
    assert _index.load("cd" * 32) is None
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith("index-")]
