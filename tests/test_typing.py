"""Type hints: mypy checks the package with pyproject.toml's [tool.mypy] configuration, and a
user's code against gtscript's public API (py.typed: type checkers read the package's hints;
gtscript/_core.pyi describes the C core)."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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

    # a definition's Field[...] annotations belong to GTScript, not to Python's type system
    # (as in GT4Py): type checkers are told to leave them alone
    def copy(a: Field[np.float64], b: Field[np.float64]) -> None:  # type: ignore[type-arg]
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
    assert 'bad.py:19: error: Incompatible types in assignment (expression has type "Stencil"' in done.stdout
