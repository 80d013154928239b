"""Type hints: mypy checks the package with pyproject.toml's [tool.mypy] configuration, and a
user's code against gtscript's public API (py.typed: type checkers read the package's hints;
gtscript/_core.pyi describes the C core)."""

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _mypy(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir=/dev/null", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=600)


def test_package_passes_mypy():
    done = _mypy()  # files and options from pyproject.toml
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
    assert (ROOT / "gtscript" / "py.typed").exists() and (ROOT / "gtscript" / "_core.pyi").exists()


USER = textwrap.dedent('''
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval
    from gtscript.stencil import Stencil

    # a definition's Field[...] annotations are valid types (gtscript/_typing.pyi), standing
    # for Any: the body's GTScript checks
    def copy(a: Field[np.float64], b: Field[np.float64]) -> None:
        with computation(PARALLEL), interval(...):
            b = a

    decorate = gtscript.stencil(backend="cpu")
    built: Stencil = decorate(copy)
    direct: Stencil = gtscript.stencil("numpy", copy)
    version: str = gtscript.__version__
    halo = built.halo
    {wrong}
''')


def test_user_code_is_checked_against_the_public_api(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(USER.format(wrong=""))
    done = _mypy("--follow-imports=silent", str(good), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # the hints say something: a wrong use is an error
    bad = tmp_path / "bad.py"
    bad.write_text(USER.format(wrong="count: int = gtscript.__version__\n"
                                     "not_a_stencil: int = gtscript.stencil('cpu', copy)"))
    done = _mypy("--follow-imports=silent", str(bad), cwd=tmp_path)
    assert done.returncode == 1
    assert 'bad.py:18: error: Incompatible types in assignment (expression has type "str"' in done.stdout
    assert 'bad.py:19: error: Incompatible types in assignment (expression has type "Stencil[' in done.stdout


# --------------------------------------------------------------------------------------------
# The documented examples under mypy (docs/api.md#type-checking): every ```python block of the
# README and docs/*.md (the blocks of one page in one module, in order, as they run) and the
# examples, in one mypy run with gtscript's plugin, plus a file of calls that must be reported.
# --------------------------------------------------------------------------------------------

FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.M | re.S)
EXAMPLES = ("quickstart.py", "distributed_diffusion.py")

#: What mypy reports in the documented examples and why it is right to: each is (module, error
#: code, text of the reported line, why). An entry that no longer matches fails the test (the
#: list cannot go stale), and so does any error not in it.
IDIOM = "a GTScript idiom Python's type system cannot follow (docs/api.md#type-checking)"
DELIBERATE = "the page shows the error this code makes"
SCAFFOLD = "the page's own NumPy/Python checks, not gtscript's API"
UNUSED = ("a parameter the definition never uses may be left out or given anything (as in "
          "GT4Py); the plugin, which sees the signature only, reports it")
KNOWN = [
    ("quickstart", "index", "out = inp - coeff * (flx - flx[-1, 0, 0]", IDIOM + ": a temporary "
     "given a number (flx = 0.0 if ... else flx), then read with an offset"),
    ("doc_language", "name-defined", "sqrt(vec[0, 0, 0][0] ** 2", IDIOM + ": math builtins "
     "used without an import"),
    ("doc_language", "name-defined", "out = (abs(x) + min(x, y)", IDIOM + ": (the same)"),
    ("doc_language", "name-defined", "+ log10(abs(y) + 1.0)", IDIOM + ": (the same)"),
    ("doc_language", "name-defined", "+ sin(x) + cos(y)", IDIOM + ": (the same)"),
    ("doc_language", "name-defined", "+ arctan2(x, y)", IDIOM + ": (the same)"),
    ("doc_language", "name-defined", "if isnan(out) or isinf(out)", IDIOM + ": (the same)"),
    ("doc_language", "assignment", "count: np.int32 = 2", IDIOM + ": a typed temporary"),
    ("doc_language", "import-not-found", "from __externals__ import", IDIOM + ": externals"),
    ("doc_language", "attr-defined", "from gt4py.cartesian.__externals__ import", IDIOM),
    ("doc_parallel_model", "import-not-found", "from __externals__ import", IDIOM),
    ("doc_gt4py_backend", "import-not-found", "from __externals__ import", IDIOM),
    ("doc_calling", "import-not-found", "from __externals__ import", IDIOM),
    ("doc_calling", "name-defined", "if __INLINED(WITH_SOURCE):", IDIOM + ": __INLINED"),
    ("doc_calling", "assignment", "weight: np.float64 = 0.5", IDIOM + ": a NumPy-typed scalar "
     "with a Python number as its default"),
    ("doc_backends", "name-defined", 'def scale(a: Field["T"]', IDIOM + ": dtype placeholders"),
    ("doc_gt4py_backend", "assignment", "from gt4py.cartesian.gtscript import PARALLEL",
     "GT4Py's own hints (its PARALLEL is an int)"),
    ("doc_troubleshooting", "name-defined", "out = a + alhpa", DELIBERATE),
    ("doc_troubleshooting", "call-overload", 'gtscript.stencil("cpu", namespace["copy"])',
     DELIBERATE + " (a definition made by exec)"),
    ("doc_troubleshooting", "attr-defined", '__exec_source__ = ("def copy', DELIBERATE),
    ("doc_troubleshooting", "call-arg", "lambda: lap(field),", DELIBERATE + " (missing out)"),
    ("doc_troubleshooting", "call-arg", "lambda: lap(field, out, beta=1.0),", DELIBERATE),
    ("doc_parallel_model", "assignment", "expected = {", SCAFFOLD + " (a name reused)"),
    ("doc_parallel_model", "attr-defined", "for definition, words in expected.items():", SCAFFOLD),
    ("doc_parallel_model", "assignment", "for definition, words in ((misspelt", SCAFFOLD),
    ("doc_language", "assignment", "for k in range(NK - 1):", SCAFFOLD),
    ("doc_language", "assignment", "up = rng.integers(0, 2, (NI, NJ))", SCAFFOLD),
    ("doc_language", "assignment", "levels = np.arange(NK)[None, None, :]", SCAFFOLD),
    ("doc_language", "assignment", "levels = np.arange(NK - 1, dtype=float)", SCAFFOLD),
    ("doc_language", "union-attr", 'assert err.text.strip() == "for n in range(3):"', SCAFFOLD),
    ("doc_caching", "var-annotated", "inp, out, exec_info = np.ones(", SCAFFOLD),
    ("doc_backends", "assignment", "info = {}", SCAFFOLD + " (a name reused)"),
    ("doc_distributed", "union-attr", "g = glob.copy()", SCAFFOLD + ": scatter's input is "
     "None on the other ranks"),
    ("doc_distributed", "arg-type", "p = np.pad(glob,", SCAFFOLD),
    ("doc_distributed", "operator", "e = glob + 0.1 *", SCAFFOLD),
    ("distributed_diffusion", "call-overload", "g = np.pad(initial,", SCAFFOLD),
    ("doc_calling", "arg-type", "memoryview(target.values)", SCAFFOLD),
    ("doc_calling", "arg-type", "tendency(inp, None, out, None)", UNUSED),
    ("doc_calling", "call-arg", "tendency(inp=inp, out=out)", UNUSED),
    ("doc_calling", "arg-type", 'tendency(inp, np.zeros((4, 4), dtype=np.int32), out, "unused")',
     UNUSED),
    ("doc_calling", "attr-defined", 'kij.__gt_dims__ = ("K", "I", "J")', SCAFFOLD),
]

#: Calls mypy reports: origin and domain through Stencil.__call__'s hints, the definition's own
#: parameters (a scalar's type, a missing or unknown argument) through gtscript's plugin.
WRONG_CALLS = textwrap.dedent('''
    import numpy as np
    import gtscript
    from gtscript import IJ, PARALLEL, Field, computation, interval

    @gtscript.stencil(backend="cpu")
    def axpy(x: Field[np.float64], y: Field[np.float64], s: Field[IJ, np.float64],
             v: Field[(np.float64, (2,))], *, alpha: float):
        with computation(PARALLEL), interval(...):
            y = alpha * x[1, 0, 0] + y + s + v[0, 0, 0][1]

    a = np.zeros((4, 4, 4))
    axpy(a, a, a[:, :, 0], np.zeros((4, 4, 4, 2)), alpha=0.5, origin=(1, 0, 0), domain=[3, 4, 4])
    axpy(a, a, a, a, alpha=0.5, origin=(1, 0))  # WRONG: origin
    axpy(a, a, a, a, alpha=0.5, domain=(1, 2, 3, 4))  # WRONG: domain
    axpy(a, a, a, a, alpha=0.5, origin={"x": [1, 0, 0]}, domain=np.array([3, 4, 4]))
    axpy(a, a, a, a, alpha=np.float32(0.5), exec_info={})
    axpy(x=a, y=a, s=a, v=a, alpha=1)
    axpy(a, a, a, a, alpha="x")  # WRONG: alpha
    axpy(a, a, a, alpha=0.5)  # WRONG: missing
    axpy(a, a, a, a, alpha=0.5, beta=1.0)  # WRONG: unknown
''')

MYPY_INI = """[mypy]
plugins = gtscript.mypy_plugin
[mypy-threadpoolctl.*]
ignore_missing_imports = True
[mypy-mpi4py.*]
ignore_missing_imports = True
"""


def _documented_examples(folder):
    """Writes the examples as modules into folder; their names."""
    names = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = FENCE.findall(page.read_text())
        if blocks:
            name = "doc_" + page.stem.replace("-", "_")
            (folder / f"{name}.py").write_text("\n\n".join(blocks))
            names.append(name)
    for example in EXAMPLES:
        shutil.copy(ROOT / "examples" / example, folder / example)
        names.append(example[:-3])
    return names


def test_documented_examples_pass_mypy(tmp_path):
    names = _documented_examples(tmp_path)
    assert {"doc_README", "doc_getting_started", "doc_language", "quickstart"} <= set(names)
    (tmp_path / "wrong_calls.py").write_text(WRONG_CALLS)
    (tmp_path / "mypy.ini").write_text(MYPY_INI)
    files = [f"{n}.py" for n in names] + ["wrong_calls.py"]
    done = subprocess.run([sys.executable, "-m", "mypy", f"--cache-dir={tmp_path / 'cache'}",
                           "--config-file=mypy.ini", "--no-pretty", "--show-error-codes", *files],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    errors = re.findall(r"^(\w+)\.py:(\d+): error: (.*?)  \[([a-z-]+)\]$", done.stdout, re.M)
    assert done.returncode in (0, 1) and "error:" in done.stdout, done.stdout + done.stderr
    unexpected, seen = [], set()
    wrong = []
    for module, line, message, code in errors:
        text = (tmp_path / f"{module}.py").read_text().splitlines()[int(line) - 1]
        if module == "wrong_calls":
            wrong.append((text.split("#")[-1].strip(), code, message))
            continue
        hits = [i for i, (m, c, t, _) in enumerate(KNOWN) if m == module and c == code and t in text]
        if hits:
            seen.update(hits)
        else:
            unexpected.append(f"{module}.py:{line}: {message} [{code}]\n    {text.strip()}")
    assert not unexpected, "mypy reports in the documented examples:\n" + "\n".join(unexpected)
    stale = [KNOWN[i][:3] for i in range(len(KNOWN)) if i not in seen]
    assert not stale, f"known reports no longer made (remove them from KNOWN): {stale}"
    # the wrong calls, and only they, are reported: origin and domain by Stencil.__call__'s
    # hints, the definition's parameters by the plugin; the good calls (tuples, lists, arrays,
    # dicts of them; NumPy and Python numbers for a float; the data-dimension field) are not
    assert [(w, c) for w, c, _ in wrong] == [("WRONG: origin", "arg-type"),
                                            ("WRONG: domain", "arg-type"),
                                            ("WRONG: alpha", "arg-type"),
                                            ("WRONG: missing", "call-arg"),
                                            ("WRONG: unknown", "call-arg")], wrong
    assert 'Argument "origin" to "__call__" of "Stencil"' in wrong[0][2]
    assert 'Argument "domain" to "__call__" of "Stencil"' in wrong[1][2]
    assert 'Argument "alpha" to "__call__" of "Stencil" has incompatible type "str"' in wrong[2][2]
    assert 'Missing positional argument "v"' in wrong[3][2]
    assert 'Unexpected keyword argument "beta"' in wrong[4][2]
