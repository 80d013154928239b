"""Whole-vector expressions on large data dimensions (docs/language.md): each component
becomes a statement, so a whole-vector read or assignment of more than 1,024 components is
refused at its line (a data dimension of 10**6 components made the cpu build run over 100 s
at 5.6 GB, 10**9 was killed for memory); the limit itself builds in seconds, and fields of
any size up to 2**31 - 1 components still build and run when indexed element by element."""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest

import gtscript
from gtscript.errors import GTScriptSemanticError
from gtscript.frontend.vectors import MAX_WHOLE_COMPONENTS

SHAPE = (4, 3, 2)


def definition(tmp_path, dims: tuple, body: str, name: str = "defn"):
    """A definition with vector fields a, b, out of data dimensions `dims`, in a file of its own."""
    path = tmp_path / f"{name}.py"
    path.write_text(f"""import numpy as np
from gtscript import Field, PARALLEL, computation, interval

def {name}(a: Field[(np.float64, {dims!r})], b: Field[(np.float64, {dims!r})],
           out: Field[(np.float64, {dims!r})]):
    with computation(PARALLEL), interval(...):
        {body}
""")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_the_limit_builds_in_seconds_and_computes(tmp_path, backend):
    n = MAX_WHOLE_COMPONENTS
    assert n == 1024
    defn = definition(tmp_path, (n,), "out = 2.0 * a + b")
    start = time.perf_counter()
    st = gtscript.stencil(backend=backend, definition=defn, rebuild=True)
    seconds = time.perf_counter() - start
    # about 2 s on a quiet 2-core machine, 25 s with a load of 13; the bound leaves room
    assert seconds < 60, seconds
    rng = np.random.default_rng(1)
    a, b = rng.uniform(size=(*SHAPE, n)), rng.uniform(size=(*SHAPE, n))
    out = np.zeros_like(a)
    st(a, b, out, origin=(0, 0, 0), domain=SHAPE)
    np.testing.assert_array_equal(out, 2.0 * a + b)


@pytest.mark.parametrize("dims,body,what", [
    ((1025,), "out = 2.0 * a + b", "the assignment to the whole of 'out' has 1025 components (1025)"),
    ((10**6,), "out = 0.0", "the assignment to the whole of 'out' has 1000000 components"),
    ((10**9,), "out = a", "has 1000000000 components"),
    ((32, 33), "out = 2.0 * a", "the assignment to the whole of 'out' has 1056 components (32 x 33)"),
])
def test_larger_whole_vector_expressions_are_refused_at_the_line(tmp_path, dims, body, what):
    defn = definition(tmp_path, dims, body)
    start = time.perf_counter()
    with pytest.raises(GTScriptSemanticError, match="at most 1024") as info:
        gtscript.stencil(backend="cpu", definition=defn)
    assert time.perf_counter() - start < 30
    assert what in str(info.value)
    assert info.value.lineno == 7 and info.value.filename.endswith("defn.py")


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("n", [10**6, 2**31 - 1])
def test_large_data_dimensions_indexed_element_by_element_build(tmp_path, backend, n):
    """The annotation's own limit stays 2**31 - 1: element reads and writes build as fast at any
    size (the call is run where the arrays fit: 10**6 components)."""
    defn = definition(tmp_path, (n,), f"out[0, 0, 0][1] = a[0, 0, 0][{n - 1}] + b[0, 0, 0][0]")
    start = time.perf_counter()
    st = gtscript.stencil(backend=backend, definition=defn, rebuild=True)
    assert time.perf_counter() - start < 30
    assert st.field_info["a"].data_dims == (n,)
    if n > 10**6:
        return
    shape = (2, 1, 1, n)
    rng = np.random.default_rng(2)
    a, b = rng.uniform(size=shape), rng.uniform(size=shape)
    out = np.zeros_like(a)
    st(a, b, out, origin=(0, 0, 0), domain=(2, 1, 1))
    expect = np.zeros_like(a)
    expect[..., 1] = a[..., n - 1] + b[..., 0]
    np.testing.assert_array_equal(out, expect)
