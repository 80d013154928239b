"""Tests of gtscript.frontend.parse_definition: the definition tree of docs/architecture.md.

These tests need neither the C core nor a compiler: they only read definitions.
"""

from __future__ import annotations

import importlib.util
import inspect
import linecache
import math
import textwrap
import types

import numpy as np
import pytest

import gtscript
from gtscript import (
    BACKWARD,
    FORWARD,
    IJ,
    PARALLEL,
    Field,
    I,
    J,
    K,
    __INLINED,
    compile_assert,
    computation,
    horizontal,
    interval,
    region,
    sqrt,
)
from gtscript.errors import (
    GTScriptDefinitionError,
    GTScriptSemanticError,
    GTScriptSyntaxError,
    syntax_error,
)
from gtscript.frontend import definition_fingerprint, is_gtscript_function, parse_definition

F64 = Field[np.float64]

_TAGS = {
    "computation", "interval", "assign", "decl", "if", "while", "region",
    "const", "name", "index", "binop", "unop", "cmp", "boolop", "ternary", "call",
}  # fmt: skip


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def strip(node):
    """The tree without its (line, col) positions, for structural comparisons."""
    if isinstance(node, list):
        return [strip(item) for item in node]
    if isinstance(node, tuple):
        if len(node) >= 3 and node[0] in _TAGS and isinstance(node[1], int):
            return (node[0], *(strip(item) for item in node[3:]))
        return tuple(strip(item) for item in node)
    return node


def stmts(func, externals=None, computation_index=0, interval_index=0):
    """The position-free statements of one interval of ``func``."""
    tree = parse_definition(func, externals or {})
    return strip(tree["body"][computation_index][4][interval_index][5])


def line_of(func, marker):
    """Absolute line number of the first line of ``func``'s source containing ``marker``."""
    lines, first = inspect.getsourcelines(func)
    for i, line in enumerate(lines):
        if marker in line:
            return first + i
    raise AssertionError(f"{marker!r} not in the source of {func.__name__}")


@pytest.fixture
def define(tmp_path):
    """Write ``source`` to a fresh module file and import it (errors then have predictable
    line numbers: line 1 is the first line of ``source``)."""
    counter = iter(range(10**6))

    def load(source, future=False):
        name = f"gtdef_{next(counter)}"
        path = tmp_path / f"{name}.py"
        header = "import numpy as np\nimport gtscript\nfrom gtscript import *\n"
        if future:  # `from __future__ import annotations` must come first
            header = "from __future__ import annotations\n" + header
        path.write_text(header + textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    load.offset = 3  # lines of the header
    return load


def marker_line(module, marker):
    """Line number of the line of ``module``'s file containing ``marker``."""
    with open(module.__file__) as f:
        for number, line in enumerate(f, start=1):
            if marker in line:
                return number
    raise AssertionError(marker)


# gtscript functions used below -----------------------------------------------------------


@gtscript.function
def lap(f):
    return -4.0 * f[0, 0, 0] + f[1, 0, 0] + f[-1, 0, 0] + f[0, 1, 0] + f[0, -1, 0]


@gtscript.function
def shift_i(f):
    return f[1, 0, 0]


@gtscript.function
def twice_shift(f):
    return shift_i(f) + shift_i(f[0, 1, 0])


@gtscript.function
def with_local(f, scale=2.0):
    tmp = f[0, 0, 0] * scale
    return tmp + 1.0


@gtscript.function
def min_max(a, b):
    """Both extremes."""
    lo = a if a < b else b
    hi = a if a > b else b
    return lo, hi


@gtscript.function
def swap(x, y):
    return y, x


@gtscript.function
def rebinds(x):
    x = x * 2.0
    return x


@gtscript.function
def uses_external(f):
    from __externals__ import SCALE

    return f * SCALE


@gtscript.function
def recursive(f):
    return recursive(f)


def not_gtscript(x):
    return x


# ------------------------------------------------------------------------------------------
# the whole tree
# ------------------------------------------------------------------------------------------


def test_copy_stencil_exact_tree():
    def copy(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp

    tree = parse_definition(copy, {})
    first = copy.__code__.co_firstlineno
    assert tree == {
        "name": "copy",
        "filename": __file__,
        "firstlineno": first,
        "source_lines": tree["source_lines"],
        "params": [
            ("field", "inp", "float64", "IJK", ()),
            ("field", "out", "float64", "IJK", ()),
        ],
        "body": [
            (
                "computation", first + 1, 13, "PARALLEL",
                [
                    (
                        "interval", first + 1, 36, (0, 0), (1, 0),
                        [
                            (
                                "assign", first + 2, 12,
                                ("name", first + 2, 12, "out"),
                                ("name", first + 2, 18, "inp"),
                            )
                        ],
                    )
                ],
            )
        ],
    }  # fmt: skip
    # absolute lines and file columns: positions index into source_lines
    assert tree["source_lines"][first + 1][12:21] == "out = inp"
    assert tree["source_lines"][first][13:25] == "computation("
    assert tree["source_lines"] == [line.rstrip("\n") for line in linecache.getlines(__file__)]


def test_parameters_and_dtypes():
    def params(
        a: Field[np.float32],
        b: Field[IJ, np.int32],
        c: Field[K, float],
        d: Field[(np.float64, (3,))],
        e: Field[IJ, (np.float64, (2,))],
        f: Field["float64"],
        s1: float,
        s2: np.int32,
        *,
        s3: bool,
        s4: int,
        s5: np.float32,
    ):
        with computation(PARALLEL), interval(...):
            a = s1

    assert parse_definition(params, {})["params"] == [
        ("field", "a", "float32", "IJK", ()),
        ("field", "b", "int32", "IJ", ()),
        ("field", "c", "float64", "K", ()),
        ("field", "d", "float64", "IJK", (3,)),
        ("field", "e", "float64", "IJ", (2,)),
        ("field", "f", "float64", "IJK", ()),
        ("scalar", "s1", "float64"),
        ("scalar", "s2", "int32"),
        ("scalar", "s3", "bool"),
        ("scalar", "s4", "int64"),
        ("scalar", "s5", "float32"),
    ]


def test_string_annotations(define):
    module = define(
        """
        def stencil(a: Field[np.float32], b: Field[IJ, float], alpha: np.int64):
            with computation(PARALLEL), interval(...):
                a = b
        """,
        future=True,
    )
    assert module.stencil.__annotations__["a"] == "Field[np.float32]"
    assert parse_definition(module.stencil, {})["params"] == [
        ("field", "a", "float32", "IJK", ()),
        ("field", "b", "float64", "IJ", ()),
        ("scalar", "alpha", "int64"),
    ]


def test_missing_annotation_names_the_parameter(define):
    module = define(
        """
        def stencil(a: Field[float],
                    beta):  # <- here
            with computation(PARALLEL), interval(...):
                a = beta
        """
    )
    with pytest.raises(GTScriptDefinitionError, match="'beta'") as info:
        parse_definition(module.stencil, {})
    assert info.value.lineno == marker_line(module, "# <- here")


def test_bad_annotation_is_a_definition_error(define):
    module = define(
        """
        def stencil(a: Field[float], b: str):
            with computation(PARALLEL), interval(...):
                a = 1.0
        """
    )
    with pytest.raises(GTScriptDefinitionError, match="'b'.*unsupported dtype"):
        parse_definition(module.stencil, {})


def test_field_descriptors():
    assert Field[float] == Field[np.float64] == Field["float64"]
    assert Field[IJ, np.float32].axes == "IJ"
    assert Field[(np.float64, (3,))].data_dims == (3,)
    assert Field[int].dtype == "int64" and Field[np.int32].dtype == "int32"
    assert Field[bool].dtype == Field[np.bool_].dtype == "bool"
    # a string naming no dtype is a placeholder the build's dtypes= resolves (GT4Py's Field["T"])
    assert Field["double"].dtype == "double" and Field[("T", (2,))].data_dims == (2,)
    for bad in (np.float16, complex, np.uint8, (np.float64, (0,)), ("T", (0,))):
        with pytest.raises(GTScriptDefinitionError):
            Field[bad]
    assert Field[(I, K), float].axes == "IK" and Field[I, float].axes == "I"
    with pytest.raises(GTScriptDefinitionError):
        Field[(K, I), float]  # axes in I, J, K order only


# ------------------------------------------------------------------------------------------
# structure: computations and intervals
# ------------------------------------------------------------------------------------------


def test_interval_encodings_and_nested_form():
    def intervals(a: F64):
        with computation(FORWARD):
            with interval(0, 1):
                a = 1.0
            with interval(1, -1):
                a = 2.0
            with interval(-1, None):
                a = 3.0
        with computation(BACKWARD), interval(...):
            a = 4.0
        with computation(gtscript.PARALLEL), interval(2, 5):
            a = 5.0

    body = parse_definition(intervals, {})["body"]
    assert [c[3] for c in body] == ["FORWARD", "BACKWARD", "PARALLEL"]
    assert [(i[3], i[4]) for i in body[0][4]] == [
        ((0, 0), (0, 1)),
        ((0, 1), (1, -1)),
        ((1, -1), (1, 0)),
    ]
    assert (body[1][4][0][3], body[1][4][0][4]) == ((0, 0), (1, 0))
    assert (body[2][4][0][3], body[2][4][0][4]) == ((0, 2), (0, 5))
    assert body[0][4][1][1] == line_of(intervals, "interval(1, -1)")


def test_interval_bounds_from_externals():
    def stencil(a: F64):
        from __externals__ import NTOP

        with computation(PARALLEL), interval(NTOP, None):
            a = 1.0

    interval_ = parse_definition(stencil, {"NTOP": -2})["body"][0][4][0]
    assert interval_[3:5] == ((1, -2), (1, 0))


def test_empty_interval_is_an_error():
    def stencil(a: F64):
        with computation(PARALLEL), interval(2, 1):
            a = 1.0

    with pytest.raises(GTScriptSemanticError, match="empty interval") as info:
        parse_definition(stencil, {})
    assert info.value.lineno == line_of(stencil, "interval(2, 1)")


def test_a_forgotten_interval_shows_the_form_to_write():
    def no_interval(a: F64):
        with computation(FORWARD):
            a = 1.0

    with pytest.raises(GTScriptSyntaxError, match="may only contain") as info:
        parse_definition(no_interval, {})
    assert ("give each statement its interval: `with computation(FORWARD), interval(...):`, "
            "or `with interval(...):` blocks inside the computation") in str(info.value)
    assert info.value.lineno == line_of(no_interval, "a = 1.0")

    def only_a_docstring(a: F64):
        with computation(PARALLEL):
            """nothing yet"""

    with pytest.raises(GTScriptSyntaxError, match="computation without an interval") as info:
        parse_definition(only_a_docstring, {})
    assert "`with computation(PARALLEL), interval(...):`" in str(info.value)


# ------------------------------------------------------------------------------------------
# expressions
# ------------------------------------------------------------------------------------------


def test_offsets_data_dims_and_lower_dimensional_fields():
    def stencil(
        a: F64,
        ij: Field[IJ, np.float64],
        kf: Field[K, np.float64],
        v: Field[(np.float64, (3,))],
        m: Field[(np.float64, (2, 3))],
        kidx: int,
    ):
        with computation(FORWARD), interval(...):
            a = a[1, 0, -1] + a[0, -2, 0]
            a = ij[1, -1] + kf[-1]
            a = v[0, 0, 0][2] + m[1, 0, 0][1, 2]
            a = a[0, 0, kidx] + a[1, 0, kidx + 1]
            v[0, 0, 0][1] = a

    assert stmts(stencil) == [
        ("assign", ("name", "a"),
         ("binop", "+", ("index", "a", (1, 0, -1), ()), ("index", "a", (0, -2, 0), ()))),
        ("assign", ("name", "a"),
         ("binop", "+", ("index", "ij", (1, -1, 0), ()), ("index", "kf", (0, 0, -1), ()))),
        ("assign", ("name", "a"),
         ("binop", "+", ("index", "v", (0, 0, 0), (2,)), ("index", "m", (1, 0, 0), (1, 2)))),
        ("assign", ("name", "a"),
         ("binop", "+",
          ("index", "a", (0, 0, ("name", "kidx")), ()),
          ("index", "a", (1, 0, ("binop", "+", ("name", "kidx"), ("const", 1))), ()))),
        ("assign", ("index", "v", (0, 0, 0), (1,)), ("name", "a")),
    ]  # fmt: skip


def test_operators_builtins_and_casts():
    def stencil(a: F64, b: F64, s: float):
        with computation(PARALLEL), interval(...):
            a = -b + (+b) - -2.0 * b ** 2 // 3 % 4 / s
            a = 1.0 if 0.0 < b <= 2.0 and not b == 1.0 or b != 3 else -1
            a = sqrt(b) + np.sqrt(b) + math.exp(b) + gtscript.sqrt(b) + np.absolute(b)
            a = min(a, b, s) + max(a, b) + np.float32(b) + float(b) + int(b) + np.int32(b)

    body = stmts(stencil)
    assert body[0] == (
        "assign", ("name", "a"),
        ("binop", "-",
         ("binop", "+", ("unop", "-", ("name", "b")), ("unop", "+", ("name", "b"))),
         ("binop", "/",
          ("binop", "%",
           ("binop", "//",
            ("binop", "*", ("const", -2.0), ("binop", "**", ("name", "b"), ("const", 2))),
            ("const", 3)),
           ("const", 4)),
          ("name", "s"))),
    )  # fmt: skip
    assert body[1] == (
        "assign", ("name", "a"),
        ("ternary",
         ("boolop", "or", [
             ("boolop", "and", [
                 ("boolop", "and", [("cmp", "<", ("const", 0.0), ("name", "b")),
                                    ("cmp", "<=", ("name", "b"), ("const", 2.0))]),
                 ("unop", "not", ("cmp", "==", ("name", "b"), ("const", 1.0))),
             ]),
             ("cmp", "!=", ("name", "b"), ("const", 3)),
         ]),
         ("const", 1.0), ("const", -1)),
    )  # fmt: skip
    call = lambda name, *args: ("call", name, list(args))  # noqa: E731
    b = ("name", "b")
    assert body[2][2] == (
        "binop", "+",
        ("binop", "+",
         ("binop", "+", ("binop", "+", call("sqrt", b), call("sqrt", b)), call("exp", b)),
         call("sqrt", b)),
        call("abs", b),
    )  # fmt: skip
    assert body[3][2] == (
        "binop", "+",
        ("binop", "+",
         ("binop", "+",
          ("binop", "+",
           ("binop", "+", call("min", call("min", ("name", "a"), b), ("name", "s")),
            call("max", ("name", "a"), b)),
           call("float32", b)),
          call("float64", b)),
         call("int64", b)),
        call("int32", b),
    )  # fmt: skip


def test_builtin_arity_is_checked():
    def stencil(a: F64):
        with computation(PARALLEL), interval(...):
            a = sqrt(a, a)

    with pytest.raises(GTScriptSyntaxError, match="sqrt.*1 argument"):
        parse_definition(stencil, {})


def test_unknown_names_are_left_to_the_core():
    def stencil(a: F64):
        with computation(PARALLEL), interval(...):
            a = undefined_name + 1.0  # noqa: F821

    assert stmts(stencil) == [
        ("assign", ("name", "a"), ("binop", "+", ("name", "undefined_name"), ("const", 1.0)))
    ]


# ------------------------------------------------------------------------------------------
# externals and compile-time evaluation
# ------------------------------------------------------------------------------------------


def test_externals_are_folded():
    phys = types.SimpleNamespace(G=9.81, consts=types.SimpleNamespace(R=287))

    def stencil(a: F64):
        from __externals__ import FLAG, N, phys as P
        from __gtscript__ import PARALLEL as _

        with computation(PARALLEL), interval(...):
            a = a * N + P.G + P.consts.R
            a = FLAG

    assert stmts(stencil, {"FLAG": True, "N": np.int32(3), "phys": phys}) == [
        ("assign", ("name", "a"),
         ("binop", "+",
          ("binop", "+", ("binop", "*", ("name", "a"), ("const", 3)), ("const", 9.81)),
          ("const", 287))),
        ("assign", ("name", "a"), ("const", True)),
    ]  # fmt: skip


def test_module_level_numbers_are_folded(define):
    module = define(
        """
        GRAV = 9.81

        def stencil(a: Field[float]):
            with computation(PARALLEL), interval(...):
                a = GRAV * np.pi
        """
    )
    assert stmts(module.stencil) == [
        ("assign", ("name", "a"), ("binop", "*", ("const", 9.81), ("const", math.pi)))
    ]


def test_missing_external_is_a_definition_error():
    def stencil(a: F64):
        from __externals__ import MISSING_ONE  # <- here

        with computation(PARALLEL), interval(...):
            a = MISSING_ONE

    with pytest.raises(GTScriptDefinitionError, match="MISSING_ONE") as info:
        parse_definition(stencil, {"OTHER": 1})
    assert info.value.lineno == line_of(stencil, "# <- here")


def test_assigning_an_external_is_an_error():
    def stencil(a: F64):
        from __externals__ import X

        with computation(PARALLEL), interval(...):
            X = a  # <- here

    with pytest.raises(GTScriptSyntaxError, match="assign to external") as info:
        parse_definition(stencil, {"X": 1.0})
    assert info.value.lineno == line_of(stencil, "# <- here")


def test_non_number_external_in_expression_is_an_error():
    def stencil(a: F64):
        from __externals__ import MODE

        with computation(PARALLEL), interval(...):
            a = MODE

    with pytest.raises(GTScriptSyntaxError, match="str, not a number"):
        parse_definition(stencil, {"MODE": "fast"})


def test_inlined_if_keeps_only_the_taken_branch():
    def stencil(a: F64, b: F64):
        from __externals__ import MODE, LIMIT

        with computation(PARALLEL), interval(...):
            if __INLINED(MODE == "fast"):
                a = 1.0
            elif __INLINED(LIMIT > 2):
                a = 2.0
                b = 2.0
            else:
                a = 3.0
            b = a

    assert stmts(stencil, {"MODE": "fast", "LIMIT": 0}) == [
        ("assign", ("name", "a"), ("const", 1.0)),
        ("assign", ("name", "b"), ("name", "a")),
    ]
    assert stmts(stencil, {"MODE": "slow", "LIMIT": 3}) == [
        ("assign", ("name", "a"), ("const", 2.0)),
        ("assign", ("name", "b"), ("const", 2.0)),
        ("assign", ("name", "b"), ("name", "a")),
    ]
    assert stmts(stencil, {"MODE": "slow", "LIMIT": 0})[0] == (
        "assign", ("name", "a"), ("const", 3.0)
    )  # fmt: skip


def test_constant_plain_if_is_folded():
    def stencil(a: F64):
        from __externals__ import DO_IT

        with computation(PARALLEL), interval(...):
            if DO_IT and 1 < 2:
                a = 1.0
            else:
                a = 2.0

    assert stmts(stencil, {"DO_IT": False}) == [("assign", ("name", "a"), ("const", 2.0))]


def test_negated_inlined_closure_constants_and_function_compile_assert():
    factor = 3.0

    @gtscript.function
    def scaled(f):
        """A docstring."""
        from __externals__ import N

        compile_assert(N > 1)  # <- assert
        return f * factor * N

    def stencil(a: F64):
        from __externals__ import FLAG

        with computation(FORWARD), interval(start=0, end=1):
            if not __INLINED(FLAG):
                a = scaled(a)

    tree = parse_definition(stencil, {"FLAG": False, "N": 2})
    assert tree["body"][0][4][0][3:5] == ((0, 0), (0, 1))
    assert strip(tree["body"][0][4][0][5]) == [
        ("assign", ("name", "a"),
         ("binop", "*", ("binop", "*", ("name", "a"), ("const", 3.0)), ("const", 2))),
    ]  # fmt: skip
    assert stmts(stencil, {"FLAG": True, "N": 2}) == []
    with pytest.raises(GTScriptSemanticError, match="compile_assert failed") as info:
        parse_definition(stencil, {"FLAG": False, "N": 1})
    assert info.value.lineno == line_of(scaled, "# <- assert")


def test_inlined_on_a_field_is_an_error():
    def stencil(a: F64):
        with computation(PARALLEL), interval(...):
            if __INLINED(a > 0.0):  # <- here
                a = 1.0

    with pytest.raises(GTScriptSyntaxError, match="compile time.*'a'") as info:
        parse_definition(stencil, {})
    assert info.value.lineno == line_of(stencil, "# <- here")


def test_compile_assert():
    def stencil(a: F64):
        from __externals__ import N

        compile_assert(N > 0)
        with computation(PARALLEL), interval(...):
            compile_assert(N < 10)  # <- here
            a = 1.0

    assert stmts(stencil, {"N": 3}) == [("assign", ("name", "a"), ("const", 1.0))]
    with pytest.raises(GTScriptSemanticError, match="compile_assert failed") as info:
        parse_definition(stencil, {"N": 20})
    assert info.value.lineno == line_of(stencil, "# <- here")
    assert isinstance(info.value, SyntaxError)


# ------------------------------------------------------------------------------------------
# statements
# ------------------------------------------------------------------------------------------


def test_augmented_assignment():
    def stencil(a: F64, b: F64):
        with computation(FORWARD), interval(...):
            a += b
            a[0, 0, -1] *= 2.0

    assert stmts(stencil) == [
        ("assign", ("name", "a"), ("binop", "+", ("name", "a"), ("name", "b"))),
        ("assign", ("index", "a", (0, 0, -1), ()),
         ("binop", "*", ("index", "a", (0, 0, -1), ()), ("const", 2.0))),
    ]  # fmt: skip


def test_declarations():
    def stencil(a: F64):
        with computation(PARALLEL), interval(...):
            t1: float = 0.0
            t2: np.float32 = a
            t3: int
            t4: Field[np.float64] = 1.0
            a = t1 + t2

    assert stmts(stencil)[:4] == [
        ("decl", "t1", "float64", ("const", 0.0), "IJK"),
        ("decl", "t2", "float32", ("name", "a"), "IJK"),
        ("decl", "t3", "int64", None, "IJK"),
        ("decl", "t4", "float64", ("const", 1.0), "IJK"),
    ]
    line = line_of(stencil, "t2: np.float32")
    assert parse_definition(stencil, {})["body"][0][4][0][5][1][1:3] == (line, 12)


def test_if_elif_else_and_while():
    def stencil(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            if a > 0.0:
                b = 1.0
            elif a < -1.0:
                b = 2.0
            else:
                b = 3.0
            while a < 10.0:
                a = a + 1.0

    assert stmts(stencil) == [
        ("if", ("cmp", ">", ("name", "a"), ("const", 0.0)),
         [("assign", ("name", "b"), ("const", 1.0))],
         [("if", ("cmp", "<", ("name", "a"), ("const", -1.0)),
           [("assign", ("name", "b"), ("const", 2.0))],
           [("assign", ("name", "b"), ("const", 3.0))])]),
        ("while", ("cmp", "<", ("name", "a"), ("const", 10.0)),
         [("assign", ("name", "a"), ("binop", "+", ("name", "a"), ("const", 1.0)))]),
    ]  # fmt: skip


def test_region_boxes():
    def stencil(a: F64):
        from __externals__ import i_start

        with computation(PARALLEL), interval(...):
            with horizontal(region[I[0], :]):
                a = 1.0
            with horizontal(region[I[0]:I[2], J[-1]], region[:, J[0] : J[-1] + 1]):
                a = 2.0
            with horizontal(region[i_start, J[0] - 1 :]):
                pass

    body = stmts(stencil, {"i_start": I[-1] + 1})
    assert body[0] == (
        "region", [((0, 0), (0, 1), None, None)], [("assign", ("name", "a"), ("const", 1.0))]
    )  # fmt: skip
    assert body[1][1] == [((0, 0), (0, 2), (1, -1), (1, 0)), (None, None, (0, 0), (1, 0))]
    assert body[2] == ("region", [((1, 0), (1, 1), (0, -1), None)], [])
    line = line_of(stencil, "region[I[0], :]")
    assert parse_definition(stencil, {"i_start": I[0]})["body"][0][4][0][5][0][1:3] == (line, 12)


def test_region_bound_must_be_on_its_axis():
    def stencil(a: F64):
        with computation(PARALLEL), interval(...):
            with horizontal(region[J[0], :]):
                a = 1.0

    with pytest.raises(GTScriptSyntaxError, match="axis I"):
        parse_definition(stencil, {})


# ------------------------------------------------------------------------------------------
# gtscript functions
# ------------------------------------------------------------------------------------------


def test_function_is_marked():
    assert is_gtscript_function(lap) and not is_gtscript_function(not_gtscript)


def test_function_inlining_and_offset_composition():
    def stencil(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            a = lap(b)
            a = shift_i(b[0, 1, 0])
            a = twice_shift(b)

    body = stmts(stencil)
    idx = lambda off: ("index", "b", off, ())  # noqa: E731
    assert body[0][2] == (
        "binop", "+",
        ("binop", "+",
         ("binop", "+",
          ("binop", "+", ("binop", "*", ("const", -4.0), idx((0, 0, 0))), idx((1, 0, 0))),
          idx((-1, 0, 0))),
         idx((0, 1, 0))),
        idx((0, -1, 0)),
    )  # fmt: skip
    assert body[1] == ("assign", ("name", "a"), idx((1, 1, 0)))
    assert body[2] == ("assign", ("name", "a"), ("binop", "+", idx((1, 0, 0)), idx((1, 1, 0))))
    # the inlined expression keeps the function's own lines (same file)
    tree = parse_definition(stencil, {})
    assert tree["body"][0][4][0][5][0][4][1] == line_of(lap, "return")


def test_function_locals_become_temporaries_and_defaults_apply():
    def stencil(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            a = with_local(b) + with_local(f=b, scale=3.0)

    body = stmts(stencil)
    names = [s[1][1] for s in body[:2]]
    assert names[0] != names[1] and all(n.startswith("__fn_with_local_") for n in names)
    assert all(n.endswith("_tmp") for n in names)
    b = ("index", "b", (0, 0, 0), ())
    assert body == [
        ("assign", ("name", names[0]), ("binop", "*", b, ("const", 2.0))),
        ("assign", ("name", names[1]), ("binop", "*", b, ("const", 3.0))),
        ("assign", ("name", "a"),
         ("binop", "+", ("binop", "+", ("name", names[0]), ("const", 1.0)),
          ("binop", "+", ("name", names[1]), ("const", 1.0)))),
    ]  # fmt: skip


def test_function_returning_a_tuple():
    def stencil(a: F64, b: F64, lo: F64, hi: F64):
        with computation(PARALLEL), interval(...):
            lo, hi = min_max(a, b + 1.0)
            a, b = swap(a, b)  # the values read the targets: staged through temporaries

    body = stmts(stencil)
    lo_t, hi_t = body[0][1][1], body[1][1][1]
    assert lo_t.startswith("__fn_min_max_") and lo_t.endswith("_lo")
    assert body[1] == (
        "assign", ("name", hi_t),
        ("ternary", ("cmp", ">", ("name", "a"), ("binop", "+", ("name", "b"), ("const", 1.0))),
         ("name", "a"), ("binop", "+", ("name", "b"), ("const", 1.0))),
    )  # fmt: skip
    assert body[2] == ("assign", ("name", "lo"), ("name", lo_t))
    assert body[3] == ("assign", ("name", "hi"), ("name", hi_t))
    t0, t1 = body[4][1][1], body[5][1][1]
    assert t0.startswith("__tuple_") and t1.startswith("__tuple_")
    assert body[4:] == [
        ("assign", ("name", t0), ("name", "b")),
        ("assign", ("name", t1), ("name", "a")),
        ("assign", ("name", "a"), ("name", t0)),
        ("assign", ("name", "b"), ("name", t1)),
    ]


def test_tuple_function_in_expression_is_an_error():
    def stencil(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            a = min_max(a, b)

    with pytest.raises(GTScriptSyntaxError, match="returns 2 values"):
        parse_definition(stencil, {})


def test_function_rebinding_its_parameter_copies_it():
    def stencil(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            a = rebinds(b)

    body = stmts(stencil)
    copy = body[0][1][1]
    assert copy.startswith("__fn_rebinds_") and copy.endswith("_x")
    assert body == [
        ("assign", ("name", copy), ("name", "b")),
        ("assign", ("name", copy), ("binop", "*", ("name", copy), ("const", 2.0))),
        ("assign", ("name", "a"), ("name", copy)),
    ]


def test_function_with_externals_and_expression_arguments():
    def stencil(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            a = uses_external(a + b)

    assert stmts(stencil, {"SCALE": 0.5}) == [
        ("assign", ("name", "a"),
         ("binop", "*", ("binop", "+", ("name", "a"), ("name", "b")), ("const", 0.5))),
    ]  # fmt: skip


def test_offset_on_expression_argument_is_an_error():
    def stencil(a: F64, b: F64):
        with computation(PARALLEL), interval(...):
            a = shift_i(a + b)

    with pytest.raises(GTScriptSyntaxError, match="expression, not a field") as info:
        parse_definition(stencil, {})
    assert info.value.lineno == line_of(shift_i, "return")


def test_recursive_function_is_an_error():
    def stencil(a: F64):
        with computation(PARALLEL), interval(...):
            a = recursive(a)

    with pytest.raises(GTScriptSyntaxError, match="recursive"):
        parse_definition(stencil, {})


def test_function_called_in_while_condition_is_reevaluated():
    def stencil(a: F64):
        with computation(PARALLEL), interval(...):
            while with_local(a) < 10.0:
                a = a + 1.0

    body = stmts(stencil)
    pre = body[0]
    assert pre[0] == "assign" and body[1][0] == "while"
    assert body[1][2][-1] == pre  # re-evaluated at the end of every iteration


def test_function_from_another_file_takes_the_call_position(define):
    module = define(
        """
        @gtscript.function
        def helper(f):
            tmp = f[1, 0, 0]
            return tmp
        """
    )

    def stencil(a: F64):
        with computation(PARALLEL), interval(...):
            a = module.helper(a)  # <- here

    tree = parse_definition(stencil, {})
    line = line_of(stencil, "# <- here")
    statements = tree["body"][0][4][0][5]
    assert [s[1] for s in statements] == [line, line]
    assert strip(statements[0][4]) == ("index", "a", (1, 0, 0), ())


def test_gtscript_function_must_return():
    with pytest.raises(GTScriptDefinitionError, match="must end with `return"):

        @gtscript.function
        def no_return(f):
            tmp = f  # noqa: F841


# ------------------------------------------------------------------------------------------
# constructs outside the language
# ------------------------------------------------------------------------------------------

FORBIDDEN = {
    "for": "for i in range(3):  # <- here\n    a = 1.0",
    "try": "try:  # <- here\n    a = 1.0\nexcept Exception:\n    pass",
    "lambda": "a = (lambda x: x)(a)  # <- here",
    "def": "def inner(x):  # <- here\n    return x",
    "class": "class C:  # <- here\n    pass",
    "import": "import os  # <- here",
    "attribute on field": "a = a.T  # <- here",
    "non-gtscript call": "a = not_gtscript(a)  # <- here",
    "return": "return a  # <- here",
    "global": "global zz  # <- here",
    "list": "a = [a, a]  # <- here",
    "dict": "a = {1: a}  # <- here",
    "slice": "a = a[1:2, 0, 0]  # <- here",
    "with other": "with open('x'):  # <- here\n    a = 1.0",
    "is": "a = 1.0 if a is None else 2.0  # <- here",
    "string": "a = 'text'  # <- here",
    "bitwise": "a = a & a  # <- here",
    "chained assign": "a = b = 1.0  # <- here",
    "walrus": "a = (b := 1.0)  # <- here",
    "scalar index": "a = s[0, 0, 0]  # <- here",
    "nested computation": "with computation(PARALLEL), interval(...):  # <- here\n    a = 1.0",
    "expression statement": "a + 1.0  # <- here",
    "tuple literal": "a, b = 1.0, 2.0  # <- here",
    "wrong index count": "a = a[1, 0]  # <- here",
}


@pytest.mark.parametrize("construct", sorted(FORBIDDEN))
def test_forbidden_constructs(define, construct):
    template = """
        def not_gtscript(x):
            return x

        def stencil(a: Field[float], b: Field[float], s: float):
            with computation(PARALLEL), interval(...):
        """
    module = define(textwrap.dedent(template) + textwrap.indent(FORBIDDEN[construct], " " * 8))
    with pytest.raises(GTScriptSyntaxError) as info:
        parse_definition(module.stencil, {})
    error = info.value
    assert error.lineno == marker_line(module, "# <- here"), error
    assert error.filename == module.__file__
    assert "# <- here" in error.text
    assert type(error) in (GTScriptSyntaxError, GTScriptSemanticError)


def test_forbidden_statement_at_stencil_top_level(define):
    module = define(
        """
        def stencil(a: Field[float]):
            a = 1.0  # <- here
        """
    )
    with pytest.raises(GTScriptSyntaxError, match="top level") as info:
        parse_definition(module.stencil, {})
    assert info.value.lineno == marker_line(module, "# <- here")


def test_stencil_without_computation(define):
    module = define(
        """
        def stencil(a: Field[float]):
            \"\"\"Nothing.\"\"\"
        """
    )
    with pytest.raises(GTScriptDefinitionError, match="no `with computation"):
        parse_definition(module.stencil, {})


# ------------------------------------------------------------------------------------------
# errors and source capture
# ------------------------------------------------------------------------------------------


def test_error_classes():
    assert issubclass(GTScriptSyntaxError, SyntaxError)
    assert issubclass(GTScriptSemanticError, GTScriptSyntaxError)
    assert issubclass(GTScriptDefinitionError, GTScriptSyntaxError)
    assert gtscript.GTScriptSyntaxError is GTScriptSyntaxError
    error = syntax_error(GTScriptSemanticError, "boom", "f.py", 2, 4, ["a", "    bad\n"])
    assert isinstance(error, SyntaxError)
    assert (error.msg, error.filename, error.lineno, error.offset, error.text) == (
        "boom", "f.py", 2, 5, "    bad"
    )  # fmt: skip
    assert syntax_error(GTScriptSyntaxError, "x", "f.py", 9, 0, []).text is None


def test_error_points_at_the_column(define):
    module = define(
        """
        def stencil(a: Field[float]):
            with computation(PARALLEL), interval(...):
                a = 1.0 + a.T
        """
    )
    with pytest.raises(GTScriptSyntaxError) as info:
        parse_definition(module.stencil, {})
    assert info.value.text == "        a = 1.0 + a.T"
    assert info.value.offset == info.value.text.index("a.T") + 1


def test_columns_with_non_ascii_source(define):
    module = define(
        """
        def stencil(a: Field[float]):
            with computation(PARALLEL), interval(...):
                a = aé + a.T
        """
    )
    with pytest.raises(GTScriptSyntaxError) as info:
        parse_definition(module.stencil, {})
    assert info.value.offset == info.value.text.index("a.T") + 1  # characters, not bytes


def test_source_unavailable_is_a_definition_error():
    namespace = {"Field": Field, "computation": computation, "interval": interval}
    exec(  # noqa: S102
        "def made(a: Field[float]):\n"
        "    with computation(PARALLEL), interval(...):\n"
        "        a = 1.0\n",
        namespace,
    )
    with pytest.raises(GTScriptDefinitionError, match="cannot read the source"):
        parse_definition(namespace["made"], {})


def test_notebook_cell_source_through_linecache():
    """IPython registers each cell in linecache under a pseudo file name."""
    filename = "<ipython-input-7-0123456789ab>"
    cell = (
        "import numpy as np\n"
        "from gtscript import Field, computation, interval, PARALLEL\n"
        "\n"
        "def cell_stencil(a: Field[np.float64], b: Field[np.float64]):\n"
        "    with computation(PARALLEL), interval(...):\n"
        "        a = b[1, 0, 0]\n"
    )
    linecache.cache[filename] = (len(cell), None, cell.splitlines(True), filename)
    try:
        namespace = {"__name__": "__main__"}
        exec(compile(cell, filename, "exec"), namespace)  # noqa: S102
        tree = parse_definition(namespace["cell_stencil"], {})
    finally:
        del linecache.cache[filename]
    assert tree["filename"] == filename
    assert tree["firstlineno"] == 4
    assert tree["body"][0][4][0][5][0][1] == 6
    assert tree["source_lines"][5] == "        a = b[1, 0, 0]"


def test_indented_definition_keeps_file_columns():
    class Holder:
        @staticmethod
        def method(a: F64):
            with computation(PARALLEL), interval(...):
                a = 1.0

    tree = parse_definition(Holder.method, {})
    assign = tree["body"][0][4][0][5][0]
    assert tree["source_lines"][assign[1] - 1][assign[2] :] == "a = 1.0"


# ------------------------------------------------------------------------------------------
# fingerprint
# ------------------------------------------------------------------------------------------


def test_fingerprint(define):
    source = """
        @gtscript.function
        def helper(f):
            return f[1, 0, 0] * {scale}

        def stencil(a: Field[float], b: Field[float]):
            with computation(PARALLEL), interval(...):
                a = helper(b)
        """
    first = define(source.format(scale=1.0))
    second = define(source.format(scale=2.0))
    key = definition_fingerprint(first.stencil, {"X": 1})
    assert key == definition_fingerprint(first.stencil, {"X": 1})
    assert len(key) == 64
    assert key != definition_fingerprint(first.stencil, {"X": 2})
    # same stencil source, different gtscript function it calls
    assert key != definition_fingerprint(second.stencil, {"X": 1})


def test_package_exports():
    for name in [
        "function", "Field", "I", "J", "K", "IJ", "IJK", "PARALLEL", "FORWARD", "BACKWARD",
        "computation", "interval", "horizontal", "region", "compile_assert", "__INLINED",
        "abs", "min", "max", "sqrt", "exp", "log", "log10", "pow", "floor", "ceil", "trunc",
        "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
        "isfinite", "isinf", "isnan", "GTScriptSyntaxError", "GTScriptSemanticError",
        "GTScriptDefinitionError",
    ]:  # fmt: skip
        assert hasattr(gtscript, name), name
    assert gtscript.__version__ == "0.1.0"
    with pytest.raises(RuntimeError, match="inside a function decorated"):
        gtscript.sqrt(1.0)
    with pytest.raises(RuntimeError):
        region[I[0], :]
    with pytest.raises(RuntimeError):
        horizontal()
    assert sqrt is gtscript.sqrt
