"""Build errors of the right kind, at the line: an ``.at(K=...)`` read as an assignment
target, a non-function definition, a wrongly typed option; and deep definitions (a 1,000-term
sum, 1,000 nested unary operators, a chain of 800 gtscript functions) that build and compute
the same thing on cpu and numpy as hand-written NumPy instead of raising RecursionError."""

import importlib.util
import inspect
import sys

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSyntaxError

SHAPE = (4, 3, 2)
HEADER = (
    "import numpy as np\nimport gtscript\n"
    "from gtscript import PARALLEL, Field, computation, interval\n\n"
)


def _module(tmp_path, name, body):
    """Import ``body`` as a module from a file (the frontend reads definitions' source)."""
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + body)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def _run_both(defn, expected_of):
    rng = np.random.default_rng(3)
    a = rng.random(SHAPE)
    for backend in ("cpu", "numpy"):
        stencil = gtscript.stencil(backend=backend, definition=defn)
        out = np.full(SHAPE, -7.0)
        stencil(a, out)
        np.testing.assert_allclose(out, expected_of(a), rtol=1e-12, err_msg=backend)


def test_at_read_as_an_assignment_target_is_a_located_syntax_error():
    def defn(a: Field[np.float64, (2,)], out: Field[np.float64, (2,)]):
        with computation(PARALLEL), interval(...):
            out.at(K=0)[0] = a[0, 0, 0][0]

    with pytest.raises(GTScriptSyntaxError, match=r"at\(K=...\).*cannot be assigned") as info:
        gtscript.stencil(backend="numpy", definition=defn, rebuild=True)
    lines, first = inspect.getsourcelines(defn)
    assert info.value.lineno == first + 2


def test_a_1000_term_sum_builds(tmp_path):
    terms = " + ".join(f"a[0, 0, 0] * {i}.0" for i in range(1000))
    module = _module(
        tmp_path,
        "fh_long_sum",
        "def defn(a: Field[np.float64], out: Field[np.float64]):\n"
        "    with computation(PARALLEL), interval(...):\n"
        f"        out = {terms}\n",
    )
    _run_both(module.defn, lambda a: a * float(sum(range(1000))))


@pytest.mark.parametrize("depth", [1000, 1001])
def test_1000_nested_unary_operators_build(tmp_path, depth):
    module = _module(
        tmp_path,
        f"fh_unary_{depth}",
        "def defn(a: Field[np.float64], out: Field[np.float64]):\n"
        "    with computation(PARALLEL), interval(...):\n"
        f"        out = {'-' * depth}a\n",
    )
    _run_both(module.defn, lambda a: a if depth % 2 == 0 else -a)


def test_a_chain_of_800_gtscript_functions_builds(tmp_path):
    lines = ["@gtscript.function", "def f0(x):", "    return x + 1.0", ""]
    for i in range(1, 800):
        lines += ["@gtscript.function", f"def f{i}(x):", f"    return f{i - 1}(x) * 1.0", ""]
    lines += [
        "def defn(a: Field[np.float64], out: Field[np.float64]):",
        "    with computation(PARALLEL), interval(...):",
        "        out = f799(a)",
    ]
    module = _module(tmp_path, "fh_chain", "\n".join(lines) + "\n")
    _run_both(module.defn, lambda a: a + 1.0)


def test_deep_builds_put_the_recursion_limit_back():
    limit = sys.getrecursionlimit()

    def defn(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = a

    gtscript.stencil(backend="numpy", definition=defn, rebuild=True)
    assert sys.getrecursionlimit() == limit


class _CallableObject:
    def __call__(self, a, out):
        return None


@pytest.mark.parametrize("definition", [42, len, _CallableObject(), "def f(): pass"])
def test_a_definition_that_is_not_a_function_is_a_type_error_naming_it(definition):
    with pytest.raises(TypeError, match="definition must be a Python function"):
        gtscript.stencil(backend="cpu", definition=definition)
    with pytest.raises(TypeError, match="definition must be a Python function"):
        gtscript.lazy_stencil(backend="cpu", definition=definition)


@pytest.mark.parametrize(
    "option, value, kind",
    [
        ("inline_temporaries", "yes", TypeError),
        ("literal_int_precision", "64", TypeError),
        ("literal_float_precision", 1.5, TypeError),
        ("literal_int_precision", 2**80, ValueError),
    ],
)
def test_a_wrongly_typed_option_names_the_option(option, value, kind):
    def defn(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = a

    with pytest.raises(kind, match=option):
        gtscript.stencil(backend="cpu", definition=defn, rebuild=True, **{option: value})


def test_an_option_given_as_a_numpy_integer_still_works():
    def defn(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = a * 2

    stencil = gtscript.stencil(
        backend="cpu", definition=defn, rebuild=True, literal_int_precision=np.int64(64)
    )
    a = np.arange(24.0).reshape(SHAPE)
    out = np.zeros(SHAPE)
    stencil(a, out)
    np.testing.assert_array_equal(out, 2 * a)
