"""The decorator's pre-key and its disk index are a sound over-approximation of what the
frontend reads (gtscript/frontend/fingerprint.py, docs/caching.md): for each kind of input -
module globals, closures, annotations (plain and under ``from __future__ import annotations``,
names imported from another module), externals holding nested objects, attribute chains of
any depth, properties, ``@gtscript.function`` bodies and their globals, module chains and the
definition's file rewritten with the same size and modification time - a change in place
followed by the same decoration builds the stencil that computes the new answer, in this
process and in a fresh process sharing the disk cache. What cannot be fingerprinted by
content (a property) makes the lookup miss; an unchanged definition still hits."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gtscript

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FILES = {
    "pksound_consts.py": """
        import numpy as np

        DT_IMP = np.float64
    """,
    "pksound_chain/__init__.py": "",
    "pksound_chain/b/__init__.py": "",
    "pksound_chain/b/c/__init__.py": "",
    "pksound_chain/b/c/d/__init__.py": "",
    "pksound_chain/b/c/d/e.py": "X = 2.0\n",
    "pksound_funcs.py": """
        import types

        import numpy as np

        import gtscript

        PARAMS = types.SimpleNamespace(f=2.0)
        DT_F = np.float64


        @gtscript.function
        def scaled(x):
            return x * PARAMS.f


        @gtscript.function
        def rounded(x):
            t: DT_F = x * 1.1
            return t
    """,
    "pksound_defs.py": """
        import types

        import numpy as np

        import pksound_chain.b.c.d.e
        import pksound_funcs as funcs
        from gtscript import PARALLEL, Field, computation, interval

        F64 = np.float64
        OFFSET = 0.5
        DT = np.float64
        CONFIG = types.SimpleNamespace(
            dycore=types.SimpleNamespace(sgs=types.SimpleNamespace(nu=2.0)))
        SETTINGS = {"nu": 2.0}
        EXT = types.SimpleNamespace(a=types.SimpleNamespace(b=types.SimpleNamespace(
            c=types.SimpleNamespace(d=types.SimpleNamespace(e=types.SimpleNamespace(nu=2.0))))))


        class Phys:
            @property
            def nu(self):
                return SETTINGS["nu"]


        PHYS = Phys()


        def glob(inp: Field[F64], out: Field[F64]):
            with computation(PARALLEL), interval(...):
                out = inp + OFFSET


        def make_closure():
            scale = 2.0

            def closure(inp: Field[F64], out: Field[F64]):
                with computation(PARALLEL), interval(...):
                    out = inp * scale

            def set_scale(value):
                nonlocal scale
                scale = value

            return closure, set_scale


        closure, set_scale = make_closure()


        def annotated(inp: Field[F64], out: Field[F64]):
            with computation(PARALLEL), interval(...):
                tmp: DT = inp * 1.1
                out = tmp


        def external(inp: Field[F64], out: Field[F64]):
            from __externals__ import E
            with computation(PARALLEL), interval(...):
                out = inp * E.a.b.c.d.e.nu


        def nested(inp: Field[F64], out: Field[F64]):
            with computation(PARALLEL), interval(...):
                out = inp * CONFIG.dycore.sgs.nu


        def prop(inp: Field[F64], out: Field[F64]):
            with computation(PARALLEL), interval(...):
                out = inp * PHYS.nu


        def function_globals(inp: Field[F64], out: Field[F64]):
            with computation(PARALLEL), interval(...):
                out = funcs.scaled(inp)


        def function_annotation(inp: Field[F64], out: Field[F64]):
            with computation(PARALLEL), interval(...):
                out = funcs.rounded(inp)


        def module_chain(inp: Field[F64], out: Field[F64]):
            with computation(PARALLEL), interval(...):
                out = inp * pksound_chain.b.c.d.e.X


        def plain(inp: Field[F64], out: Field[F64]):
            with computation(PARALLEL), interval(...):
                out = inp * 3.0
    """,
    "pksound_fdefs.py": """
        from __future__ import annotations

        import numpy as np

        from gtscript import PARALLEL, Field, computation, interval

        PT = np.float64
        DT = np.float64


        def future_param(inp: Field[PT], out: Field[PT]):
            with computation(PARALLEL), interval(...):
                out = inp * 1.1


        def future_temp(inp: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                tmp: DT = inp * 1.1
                out = tmp
    """,
    "pksound_idefs.py": """
        import numpy as np

        from gtscript import PARALLEL, Field, computation, interval
        from pksound_consts import DT_IMP


        def imported(inp: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                tmp: DT_IMP = inp * 1.1
                out = tmp
    """,
    "pksound_file.py": """
        import numpy as np

        from gtscript import PARALLEL, Field, computation, interval


        def file_annotation(inp: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                tmp: np.float64 = inp * 1.1
                out = tmp


        def file_constant(inp: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                out = inp * 1.5
    """,
    # What both this process and a fresh one do: the cases, their answers, the changes.
    "pksound_cases.py": """
        import importlib

        import numpy as np


        def _rounded(inp, dtype):
            return (inp * 1.1).astype(dtype).astype(inp.dtype)


        def cases(changed):
            import pksound_defs as d
            import pksound_fdefs as f
            import pksound_file as fl
            import pksound_idefs as i

            k = 3.0 if changed else 2.0
            dt = np.float32 if changed else np.float64
            return {  # name: (definition, externals, input dtype, expected(inp))
                "glob": (d.glob, None, np.float64, lambda a: a + (1.5 if changed else 0.5)),
                "closure": (d.closure, None, np.float64, lambda a: a * k),
                "annotated": (d.annotated, None, np.float64, lambda a: _rounded(a, dt)),
                "external": (d.external, {"E": d.EXT}, np.float64, lambda a: a * k),
                "nested": (d.nested, None, np.float64, lambda a: a * k),
                "prop": (d.prop, None, np.float64, lambda a: a * k),
                "function_globals": (d.function_globals, None, np.float64, lambda a: a * k),
                "function_annotation": (d.function_annotation, None, np.float64,
                                        lambda a: _rounded(a, dt)),
                "module_chain": (d.module_chain, None, np.float64, lambda a: a * k),
                "future_param": (f.future_param, None, dt, lambda a: a * a.dtype.type(1.1)),
                "future_temp": (f.future_temp, None, np.float64, lambda a: _rounded(a, dt)),
                "imported": (i.imported, None, np.float64, lambda a: _rounded(a, dt)),
                "file_annotation": (fl.file_annotation, None, np.float64,
                                    lambda a: _rounded(a, dt)),
                "file_constant": (fl.file_constant, None, np.float64,
                                  lambda a: a * (2.5 if changed else 1.5)),
                "plain": (d.plain, None, np.float64, lambda a: a * 3.0),  # unchanged
            }


        def change():
            \"\"\"Every change in place (the file's rewrite is the caller's).\"\"\"
            import pksound_chain.b.c.d.e as e
            import pksound_consts as c
            import pksound_defs as d
            import pksound_fdefs as f
            import pksound_funcs as fn
            import pksound_idefs as i

            d.OFFSET = 1.5
            d.set_scale(3.0)
            d.DT = np.float32
            d.EXT.a.b.c.d.e.nu = 3.0
            d.CONFIG.dycore.sgs.nu = 3.0
            d.SETTINGS["nu"] = 3.0
            fn.PARAMS.f = 3.0
            fn.DT_F = np.float32
            e.X = 3.0
            f.PT = np.float32
            f.DT = np.float32
            c.DT_IMP = np.float32
            importlib.reload(i)  # its `from pksound_consts import DT_IMP` reads the new one


        def run(backend, changed):
            \"\"\"{case: (index result, the stencil's output, the expected output)}.\"\"\"
            import gtscript

            results = {}
            for name, (defn, externals, dtype, expected) in cases(changed).items():
                info = {}
                st = gtscript.stencil(backend, defn, externals=externals, build_info=info)
                inp = (np.arange(4 * 4 * 3).reshape(4, 4, 3) + 0.3).astype(dtype)
                out = np.zeros_like(inp)
                try:
                    st(inp, out)
                except TypeError as exc:  # a stale stencil of another dtype refuses the call
                    out = str(exc)
                results[name] = (info["index"], out, expected(inp), st)
            return results
    """,
    "pksound_child.py": """
        import json
        import sys

        import pksound_cases

        backend, changed = sys.argv[1], sys.argv[2] == "1"
        if changed:
            pksound_cases.change()
        results = pksound_cases.run(backend, changed)
        print(json.dumps({name: (index, out if isinstance(out, str) else out.tolist(),
                                 expected.tolist())
                          for name, (index, out, expected, _) in results.items()}))
    """,
}

# Same size as the first version: a rewrite that keeps the size and the modification time
# (`cp -p`, a generator within one timestamp tick) changes an annotation and a constant.
FILE_V2 = FILES["pksound_file.py"].replace("tmp: np.float64", "tmp: np.float32").replace(
    "inp * 1.5", "inp * 2.5")


@pytest.fixture
def project(tmp_path):
    src = tmp_path / "src"
    for name, text in FILES.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return tmp_path


def _rewrite_keeping_stat(path, text):
    """Rewrite ``path`` in place (same inode) with ``text`` of the same size, and put the
    modification time back."""
    before = os.stat(path)
    data = textwrap.dedent(text).lstrip("\n").encode()
    assert len(data) == before.st_size
    with open(path, "r+b") as f:
        f.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns)


def _stale(results):
    """The cases whose stencil does not compute the expected answer, and what it did."""
    stale = {}
    for name, (_, out, expected, *_) in results.items():
        if isinstance(out, str):
            stale[name] = out
            continue
        out, expected = np.asarray(out), np.asarray(expected)
        rtol = 1e-6 if out.dtype == np.float32 else 1e-13  # float32 rounding is ~3e-8 apart
        if not np.allclose(out, expected, rtol=rtol, atol=0):
            stale[name] = f"{out.ravel()[:3]} instead of {expected.ravel()[:3]}"
    return stale


def test_in_place_changes_rebuild_in_process(project):
    sys.path.insert(0, str(project / "src"))
    try:
        import pksound_cases

        before = pksound_cases.run("cpu", changed=False)
        assert not (stale := _stale(before)), stale
        pksound_cases.change()
        _rewrite_keeping_stat(project / "src" / "pksound_file.py", FILE_V2)
        after = pksound_cases.run("cpu", changed=True)
        assert not (stale := _stale(after)), stale
        assert after["plain"][3] is before["plain"][3]  # unchanged: the pre-key still hits
    finally:
        sys.path.remove(str(project / "src"))
        for name in [m for m in sys.modules if m.startswith("pksound_")]:
            del sys.modules[name]


def _child(project, backend, changed):
    env = dict(os.environ, GTSCRIPT_CACHE_DIR=str(project / "cache"),
               PYTHONPATH=os.pathsep.join([str(project / "src"), ROOT]))
    r = subprocess.run([sys.executable, str(project / "src" / "pksound_child.py"), backend,
                        "1" if changed else "0"],
                       env=env, capture_output=True, text=True, timeout=300, check=False)
    if r.returncode != 0:
        raise AssertionError(r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_in_place_changes_rebuild_in_a_fresh_process(project, backend):
    before = _child(project, backend, changed=False)
    assert not (stale := _stale(before)), stale
    assert {index for index, *_ in before.values()} == {"miss"}
    # the second process finds the first one's index files (bytecode caches too: the file
    # rewritten with the same size and time is read from its stale .pyc)
    _rewrite_keeping_stat(project / "src" / "pksound_file.py", FILE_V2)
    after = _child(project, backend, changed=True)
    assert not (stale := _stale(after)), stale
    assert after["plain"][0] == "hit"  # unchanged: the index still serves it
    assert after["prop"][0] == "miss"  # a property is not fingerprinted: always a miss


# ---------------------------------------------------------------- the key itself, no build

from gtscript import PARALLEL, Field, computation, interval  # noqa: E402
from gtscript.frontend import definition_fingerprint  # noqa: E402
from gtscript.frontend import fingerprint as fingerprint_module  # noqa: E402

TAIL_T = np.float64


def trailing(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp
        note = """
a string whose lines start at column 0 (a scan by indentation alone would stop here)
"""
    tail: TAIL_T  # a declaration with no value: no bytecode at all


def test_a_name_only_in_a_trailing_declaration_enters_the_key():
    global TAIL_T
    before = definition_fingerprint(trailing)
    TAIL_T = np.float32
    try:
        assert definition_fingerprint(trailing) != before
    finally:
        TAIL_T = np.float64
    assert definition_fingerprint(trailing) == before


class _Computed:
    @property
    def nu(self):
        return 2.0


class _Dynamic:
    def __getattr__(self, name):
        return 2.0


def _deep(levels, leaf=None):
    import types

    value = types.SimpleNamespace(nu=2.0) if leaf is None else leaf
    for _ in range(levels):
        value = types.SimpleNamespace(a=value)
    return value


def with_external(inp: Field[np.float64], out: Field[np.float64]):
    from __externals__ import E
    with computation(PARALLEL), interval(...):
        out = inp * E.a.a.a.a.a.a.nu


@pytest.mark.parametrize("value, why", [
    (_Computed(), "a property"),
    (_Dynamic(), "__getattr__"),
    (_deep(fingerprint_module._MAX_DEPTH + 1), "deeper than the bound"),
    (np.random.default_rng(0), "an object of unknown kind"),
])
def test_what_has_no_content_key_gives_no_key(value, why):
    assert definition_fingerprint(with_external, {"E": value}) is None, why


def test_cycles_and_deep_values_within_the_bound_have_a_content_key():
    value = _deep(fingerprint_module._MAX_DEPTH - 4)
    value.a.back = value  # a cycle, spelled (`a`) and not (`back`)
    key = definition_fingerprint(with_external, {"E": value})
    assert key is not None and key == definition_fingerprint(with_external, {"E": value})
    inner = value
    for _ in range(fingerprint_module._MAX_DEPTH - 4):
        inner = inner.a
    inner.nu = 3.0  # the innermost value changed in place
    assert definition_fingerprint(with_external, {"E": value}) != key


def test_a_value_without_a_content_key_builds_every_time():
    value = _deep(6, leaf=_Computed())  # E.a.a.a.a.a.a.nu: a property
    first = gtscript.stencil("numpy", with_external, externals={"E": value})
    info = {}
    second = gtscript.stencil("numpy", with_external, externals={"E": value}, build_info=info)
    assert second is not first and info["index"] == "miss"
    inp, out = np.arange(8.0).reshape(2, 2, 2), np.zeros((2, 2, 2))
    second(inp, out)
    np.testing.assert_array_equal(out, inp * 2.0)


def rerun(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp * 2.0  # rerun: its text spells its own name, which holds the stencil


def test_a_rerun_cell_finds_its_stencil_again():
    """``@gtscript.stencil def rerun`` run again (a notebook cell, a reload): the name the
    text spells now holds the previous stencil object (or the definition itself), which no
    definition can use: the second decoration finds the first's stencil."""
    global rerun
    definition = rerun
    try:
        first = gtscript.stencil("numpy", definition)  # the name holds the definition
        rerun = first  # the first run binds the name
        assert gtscript.stencil("numpy", definition) is first
    finally:
        rerun = definition


def shadowed(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp + 1.0


def test_a_global_named_like_a_parameter_is_not_read():
    """A notebook's global array named like a parameter (``inp``, ``out``) is not what the
    definition reads: changing it in place keeps the pre-key, and the hit computes with the
    arguments passed."""
    g = globals()
    g["inp"] = np.zeros((4, 4, 4))
    try:
        first = gtscript.stencil("numpy", shadowed)
        g["inp"][...] = 7.0
        assert definition_fingerprint(shadowed) is not None
        again = gtscript.stencil("numpy", shadowed)
        assert again is first
        a, b = np.full((4, 4, 4), 2.0), np.zeros((4, 4, 4))
        again(a, b)
        assert np.all(b == 3.0)
    finally:
        del g["inp"]
