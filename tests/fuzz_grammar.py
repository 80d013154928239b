"""Hypothesis strategies for the fuzz suite (tests/fuzz/test_fuzz_*.py): random well-formed GTScript
definitions generated as source text from a grammar of the language, and the helpers that
load them from a real file (so the frontend captures their source as it would a user's).

The grammar covers fields of several dtypes (float64, float32, int32, bool), a field with a
data dimension read at random components and one written component by component, `IJ` and
`K` fields, scalar parameters of four kinds, horizontal offsets within +-2 and K offsets
within +-1, temporaries, `if`/`elif`/`else` on fields and on scalars, `while` loops with a
bounded trip count, horizontal regions, vertical sweeps (`FORWARD`/`BACKWARD` reading the
level the sweep has just written), several computations and interval layouts, and calls of
`@gtscript.function` helpers (offset reads of their arguments, nested calls, several
return values), absolute levels (`a0.at(K=...)`), the current level `K` as a value,
augmented assignments and off-centre vertical writes. With a small probability an expression reads an output field at an offset:
the parallel model refuses some of those definitions, and every backend must then refuse
them with the same error class.

How many examples run: `GTSCRIPT_FUZZ_EXAMPLES` (default: the bounded count each test names,
about a minute for the whole fuzz suite). `GTSCRIPT_FUZZ_EXAMPLES=5000` is the long hunt of
docs/testing.md.
"""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st


def examples(bounded: int) -> int:
    """The number of examples of one fuzz test: `bounded` in `make test`, the value of
    GTSCRIPT_FUZZ_EXAMPLES for a long run."""
    return int(os.environ.get("GTSCRIPT_FUZZ_EXAMPLES", bounded))


def fuzz_settings(bounded: int):
    """Settings of a fuzz test. derandomize: `make test` runs the same examples every time
    (a failure seen once is seen again); the long run explores (GTSCRIPT_FUZZ_EXAMPLES set
    turns derandomize off, GTSCRIPT_FUZZ_SEED picks a seed with pytest's --hypothesis-seed)."""
    long_run = "GTSCRIPT_FUZZ_EXAMPLES" in os.environ
    return settings(max_examples=examples(bounded), deadline=None, derandomize=not long_run,
                    database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# ----------------------------------------------------------------------------- the parameters

#: input fields: name -> (annotation, kind); "int" fields hold small values (-3..3), so no
#: integer expression of the grammar overflows
FIELD_INPUTS = {
    "a0": ("Field[np.float64]", "f64"),
    "a1": ("Field[np.float32]", "f32"),
    "m0": ("Field[np.int32]", "int"),
    "b0": ("Field[np.bool_]", "bool"),
}
VEC_IN = ("v0", "Field[(np.float64, (3,))]", 3)
VEC_OUT = ("w0", "Field[(np.float64, (2,))]", 2)
PLANE = ("h0", "Field[IJ, np.float64]")
COLUMN = ("z0", "Field[K, np.float64]")
OUTPUTS = {"o0": ("Field[np.float64]", "f64"), "o1": ("Field[np.float32]", "f32"),
           "o2": ("Field[np.int32]", "int")}
SCALARS = {"s": "float", "r": "np.float32", "n": "int", "flag": "bool"}
TEMPS = ("t0", "t1", "t2", "t3")
INTERVAL_LAYOUTS = (
    (("...",),),
    (("0", "1"), ("1", "None")),
    (("0", "2"), ("2", "None")),
    (("0", "1"), ("1", "-1"), ("-1", "None")),
    (("1", "-1"),),
    (("0", "-2"), ("-2", "None")),
)

#: helpers every generated module defines (inlined where called)
FUNCTIONS = '''
@gtscript.function
def f_lap(x):
    return x[1, 0, 0] + x[-1, 0, 0] + x[0, 1, 0] + x[0, -1, 0] - 4.0 * x[0, 0, 0]


@gtscript.function
def f_mix(x, y, w):
    return w * x + (1.0 - w) * y


@gtscript.function
def f_pair(x):
    return x[0, 0, 1] - x[0, 0, 0], max(x[1, 0, 0], x[0, 0, -1])


@gtscript.function
def f_nested(x, w):
    d, m = f_pair(x)
    return f_mix(d, m, w) + 0.5 * f_lap(x)
'''


@dataclass
class Scope:
    """What the statements generated so far in one interval have defined, and what the
    result's comparison must allow for."""

    temps: list[str] = field(default_factory=list)
    transcendental: bool = False
    float32: bool = False
    read_outputs: bool = False  # an output read at an offset: the model may refuse it
    policy: str = "PARALLEL"
    sweep_ok: bool = False  # the interval starts past the level a sweep reads


def hoff(draw) -> tuple[int, int]:
    return draw(st.integers(-2, 2)), draw(st.integers(-2, 2))


def offset(draw, k=True) -> str:
    di, dj = hoff(draw)
    dk = draw(st.integers(-1, 1)) if k else 0
    return f"[{di}, {dj}, {dk}]"


def int_expr(draw, sc: Scope, depth: int) -> str:
    """An int32-valued expression of small magnitude (|value| <= a few hundred)."""
    kinds = ["m0", "m0", "const", "n", "K"]
    if depth > 0:
        kinds += ["binop", "binop", "floordiv", "mod", "neg", "ternary", "cast"]
    kind = draw(st.sampled_from(kinds))
    sub = lambda: int_expr(draw, sc, depth - 1)  # noqa: E731
    if kind == "m0":
        return "m0" + offset(draw)
    if kind == "const":
        return str(draw(st.sampled_from([0, 1, 2, -3, 5])))
    if kind in ("n", "K"):
        return kind
    if kind == "binop":
        return f"({sub()} {draw(st.sampled_from(['+', '-', '*']))} {sub()})"
    if kind == "floordiv":  # Python's floor semantics for negative operands
        return f"({sub()} // (abs({sub()}) + 1))"
    if kind == "mod":
        return f"({sub()} % (abs({sub()}) + {draw(st.sampled_from([1, 2]))}))"
    if kind == "neg":
        return f"(-{sub()})"
    if kind == "ternary":  # temporaries at the point: it may sit in a branch that updates them
        return f"({sub()} if {cond(draw, sc, depth - 1, temps_at_zero=True)} else {sub()})"
    # a float truncated to int, kept in a range an int32 holds
    # (temporaries at the point: the expression may sit in a branch that updates them)
    return f"int(min(max({float_expr(draw, sc, depth - 1, True)}, -50.0), 50.0))"


def cond(draw, sc: Scope, depth: int, temps_at_zero: bool = False) -> str:
    """A boolean expression (a mask on fields, or a scalar condition)."""
    kinds = ["cmp", "cmp", "b0", "flag", "int_cmp"]
    if depth > 0:
        kinds += ["and", "not"]
    kind = draw(st.sampled_from(kinds))
    if kind == "cmp":
        op = draw(st.sampled_from(["<", ">", "<=", ">=", "!="]))
        return (f"({float_expr(draw, sc, max(depth, 0), temps_at_zero)} {op} "
                f"{float_expr(draw, sc, 0, temps_at_zero)})")
    if kind == "b0":
        return "b0" + offset(draw)
    if kind == "flag":
        return "flag"
    if kind == "int_cmp":
        return f"({int_expr(draw, sc, max(depth, 0))} {draw(st.sampled_from(['==', '<', '>=']))} 0)"
    if kind == "and":
        return f"({cond(draw, sc, depth - 1, temps_at_zero)} " \
               f"{draw(st.sampled_from(['and', 'or']))} {cond(draw, sc, depth - 1, temps_at_zero)})"
    return f"(not {cond(draw, sc, depth - 1, temps_at_zero)})"


def float_expr(draw, sc: Scope, depth: int, temps_at_zero: bool = False) -> str:
    kinds = ["a0", "a0", "a1", "const", "scalar", "vec", "plane", "column"]
    kinds += ["temp"] * 2 if sc.temps else []
    if depth > 0:
        kinds += ["binop", "binop", "binop", "neg", "ternary", "minmax", "div", "transc",
                  "int", "func", "output", "at", "level", "square"]
    kind = draw(st.sampled_from(kinds))
    sub = lambda: float_expr(draw, sc, depth - 1, temps_at_zero)  # noqa: E731
    if kind == "a0":
        return "a0" + offset(draw)
    if kind == "a1":
        sc.float32 = True
        return "a1" + offset(draw)
    if kind == "vec":
        return f"v0{offset(draw)}[{draw(st.integers(0, VEC_IN[2] - 1))}]"
    if kind == "plane":
        di, dj = hoff(draw)
        return f"h0[{di}, {dj}]"
    if kind == "column":
        return f"z0[{draw(st.integers(-1, 1))}]"
    if kind == "temp":  # temporaries are read at their own K level
        name = draw(st.sampled_from(sc.temps))
        return name if temps_at_zero else name + offset(draw, k=False)
    if kind == "const":
        return repr(draw(st.sampled_from([0.5, 1.0, 2.0, -1.25, 3.0, 0.1])))
    if kind == "scalar":
        name = draw(st.sampled_from(["s", "s", "r"]))
        sc.float32 |= name == "r"
        return name
    if kind == "binop":
        return f"({sub()} {draw(st.sampled_from(['+', '-', '*']))} {sub()})"
    if kind == "neg":
        return f"(-{sub()})"
    if kind == "ternary":
        return f"({sub()} if {cond(draw, sc, depth - 1, temps_at_zero)} else {sub()})"
    if kind == "minmax":
        return f"{draw(st.sampled_from(['min', 'max']))}({sub()}, {sub()})"
    if kind == "div":
        return f"({sub()} / (1.5 + abs({sub()})))"
    if kind == "int":  # NumPy 2 promotion: int32 with a float literal or field is float64
        form = draw(st.sampled_from(["({} * 0.5)", "float({})", "({} + a1[0, 0, 0])"]))
        sc.float32 |= "a1" in form
        return form.format(int_expr(draw, sc, depth - 1))
    if kind == "func":
        fn = draw(st.sampled_from(["lap", "mix", "nested"]))
        arg = draw(st.sampled_from(["a0", "a0", "a1"]))  # a field (read at offsets inside)
        sc.float32 |= arg == "a1"
        if fn == "lap":
            return f"f_lap({arg})"
        if fn == "mix":
            return f"f_mix({sub()}, {sub()}, {draw(st.sampled_from(['s', '0.25']))})"
        return f"f_nested({arg}, {draw(st.sampled_from(['s', '0.75']))})"
    if kind == "at":  # an absolute level of the compute domain (it has at least 4)
        return f"a0.at(K={draw(st.sampled_from(['0', '1', '3', 'abs(n) % 3']))})"
    if kind == "level":  # the current level as a value (int64)
        return "(float(K) * 0.5)"
    if kind == "square":
        return f"({sub()} ** 2)"
    if kind == "output":  # rarely: an output read at an offset (may break the model)
        if draw(st.integers(0, 7)) == 0:
            sc.read_outputs = True
            return f"o0{offset(draw)}"
        return "a0[0, 0, 0]"
    sc.transcendental = True
    fn = draw(st.sampled_from(["sqrt(abs({}))", "sin({})", "exp(0.1 * {})", "tanh({})",
                               "log(1.0 + abs({}))"]))
    return fn.format(sub())


def region_box(draw) -> str:
    parts = []
    for axis in "IJ":
        point = lambda: draw(st.sampled_from([f"{axis}[0]", f"{axis}[1]", f"{axis}[-1]",  # noqa
                                              f"{axis}[0] - 1", f"{axis}[-1] + 1", f"{axis}[2]"]))
        form = draw(st.sampled_from(["point", "slice", "all", "from"]))
        parts.append(point() if form == "point" else f"{point()}:{point()}" if form == "slice"
                     else ":" if form == "all" else f"{point()}:")
    return f"region[{parts[0]}, {parts[1]}]"


def assignment(draw, sc: Scope, indent: str, masked: bool) -> str:
    """An assignment to an output (float, int or a data-dimension component)."""
    target = draw(st.sampled_from(["o0", "o0", "o1", "o2", "w0"]))
    if target == "o2":
        return f"{indent}o2 = {int_expr(draw, sc, 2)}"
    value = float_expr(draw, sc, 2, temps_at_zero=masked)
    if target == "w0":
        if not masked and draw(st.integers(0, 3)) == 0:
            return f"{indent}w0 = {value}"  # the whole vector: one assignment per component
        return f"{indent}w0[0, 0, 0][{draw(st.integers(0, VEC_OUT[2] - 1))}] = {value}"
    if target == "o1":
        sc.float32 = True
    op = draw(st.sampled_from(["=", "=", "=", "+=", "-=", "*="]))  # augmented: a read at the point
    return f"{indent}{target} {op} {value}"


def statements(draw, sc: Scope, indent: str, depth: int) -> list[str]:
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        top = ["temp", "temp", "out", "out", "if", "region", "while", "sweep", "unpack"]
        kind = draw(st.sampled_from(top if depth == 0 else ["out", "set", "out"]))
        if kind == "temp" or (kind == "unpack" and depth > 0):
            name = draw(st.sampled_from(TEMPS))
            # a temporary may not be assigned from its own values read with an offset
            others = Scope([t for t in sc.temps if t != name])
            value = float_expr(draw, others, 2)
            sc.transcendental |= others.transcendental
            sc.float32 |= others.float32
            sc.read_outputs |= others.read_outputs
            lines.append(f"{indent}{name} = {value}")
            if name not in sc.temps:
                sc.temps.append(name)
        elif kind == "unpack":  # two temporaries from a function of several results
            first, second = draw(st.permutations(TEMPS))[:2]
            if first in sc.temps or second in sc.temps:  # no rebinding of a temp read offset
                lines.append(assignment(draw, sc, indent, masked=False))
                continue
            arg = draw(st.sampled_from(["a0", "a1"]))
            sc.float32 |= arg == "a1"
            lines.append(f"{indent}{first}, {second} = f_pair({arg})")
            sc.temps += [first, second]
        elif kind == "out" or (kind == "set" and not sc.temps):
            lines.append(assignment(draw, sc, indent, masked=depth > 0))
        elif kind == "set":  # a temporary defined everywhere, updated under a mask
            value = float_expr(draw, sc, 2, temps_at_zero=True)
            lines.append(f"{indent}{draw(st.sampled_from(sc.temps))} = {value}")
        elif kind == "sweep":  # a vertical recurrence on the level the sweep wrote before
            if sc.policy == "PARALLEL" or not sc.sweep_ok:
                lines.append(assignment(draw, sc, indent, masked=False))
                continue
            dk = -1 if sc.policy == "FORWARD" else 1
            value = float_expr(draw, sc, 1)
            if draw(st.integers(0, 2)):
                lines.append(f"{indent}o0 = 0.5 * o0[0, 0, {dk}] + {value}")
            else:  # an off-centre write of the level the sweep has passed
                sc.float32 = True
                lines.append(f"{indent}o1[0, 0, {dk}] = {value}")
        elif kind == "while":  # a counter bounds the iterations; points stop at different times
            bound = float_expr(draw, sc, 1, temps_at_zero=True)
            lines.append(f"{indent}tw = 0.0")
            lines.append(f"{indent}while tw < min(abs({bound}), 3.0):")
            lines.append(f"{indent}    tw = tw + 1.0")
            lines += statements(draw, sc, indent + "    ", depth + 1)
        elif kind == "region":  # boundary conditions: only updates of defined values inside
            boxes = ", ".join(region_box(draw) for _ in range(draw(st.integers(1, 2))))
            lines.append(f"{indent}with horizontal({boxes}):")
            lines += statements(draw, sc, indent + "    ", depth + 1)
        else:
            # a conditional on a field whose branches update a temporary: the condition reads
            # temporaries at the point only (reading a neighbour's is refused, documented)
            lines.append(f"{indent}if {cond(draw, sc, 1, temps_at_zero=True)}:")
            lines += statements(draw, sc, indent + "    ", depth + 1)
            for _ in range(draw(st.integers(0, 1))):
                lines.append(f"{indent}elif {cond(draw, sc, 0, temps_at_zero=True)}:")
                lines += statements(draw, sc, indent + "    ", depth + 1)
            if draw(st.booleans()):
                lines.append(f"{indent}else:")
                lines += statements(draw, sc, indent + "    ", depth + 1)
    return lines


@dataclass
class Program:
    source: str
    exactness: str  # "bitwise", "f64" (a transcendental: 1e-12 relative) or "f32"
    read_outputs: bool


HEADER = """\
import numpy as np

import gtscript
from gtscript import (BACKWARD, FORWARD, IJ, PARALLEL, Field, I, J, K, computation, exp,
                      horizontal, interval, log, region, sin, sqrt, tanh)
"""


def signature() -> str:
    params = [f"{n}: {a}" for n, (a, _) in FIELD_INPUTS.items()]
    params += [f"{VEC_IN[0]}: {VEC_IN[1]}", f"{PLANE[0]}: {PLANE[1]}", f"{COLUMN[0]}: {COLUMN[1]}"]
    params += [f"{n}: {a}" for n, (a, _) in OUTPUTS.items()]
    params += [f"{VEC_OUT[0]}: {VEC_OUT[1]}"]
    params += [f"{n}: {t}" for n, t in SCALARS.items()]
    return ",\n            ".join(params)


@st.composite
def programs(draw) -> Program:
    lines = [HEADER, FUNCTIONS, "", f"def stencil({signature()}):"]
    transcendental = float32 = read_outputs = False
    for _ in range(draw(st.integers(1, 3))):
        policy = draw(st.sampled_from(["PARALLEL", "FORWARD", "BACKWARD"]))
        lines.append(f"    with computation({policy}):")
        layout = draw(st.sampled_from(INTERVAL_LAYOUTS))
        if policy == "BACKWARD":
            layout = tuple(reversed(layout))  # (any order is valid: the policy orders them)
        for bounds in layout:
            lines.append(f"        with interval({', '.join(bounds)}):")
            # a sweep reads the level before: only where that level is inside the domain
            first = bounds[0] if policy == "FORWARD" else bounds[-1]
            sweep_ok = bounds != ("...",) and (
                (policy == "FORWARD" and first not in ("0",))
                or (policy == "BACKWARD" and first not in ("None",)))
            sc = Scope(policy=policy, sweep_ok=sweep_ok)
            lines += statements(draw, sc, " " * 12, 0)
            transcendental |= sc.transcendental
            float32 |= sc.float32
            read_outputs |= sc.read_outputs
    exactness = "bitwise" if not transcendental else "f32" if float32 else "f64"
    return Program("\n".join(lines) + "\n", exactness, read_outputs)


# ----------------------------------------------------------------------------- loading

_DIR = Path(tempfile.mkdtemp(prefix="gtscript_fuzz_"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
_COUNTER = itertools.count()


def load(source: str, name: str = "stencil"):
    """The definition `name` of `source`, written to a file of its own and imported (so
    `inspect.getsource` reads it as it reads a user's module)."""
    path = _DIR / f"fuzz_{os.getpid()}_{next(_COUNTER)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def inputs(shape, rng) -> dict:
    """Arrays for every parameter of `programs()`'s signature (outputs filled with random
    values too: cells no statement writes must stay as they were, on every backend)."""
    ni, nj, nk = shape
    a = {
        "a0": rng.uniform(-2, 2, shape),
        "a1": rng.uniform(-2, 2, shape).astype(np.float32),
        "m0": rng.integers(-3, 4, shape).astype(np.int32),
        "b0": rng.random(shape) < 0.5,
        "v0": rng.uniform(-2, 2, (*shape, VEC_IN[2])),
        "h0": rng.uniform(-2, 2, (ni, nj)),
        "z0": rng.uniform(-2, 2, nk),
        "o0": rng.uniform(-2, 2, shape),
        "o1": rng.uniform(-2, 2, shape).astype(np.float32),
        "o2": rng.integers(-9, 10, shape).astype(np.int32),
        "w0": rng.uniform(-2, 2, (*shape, VEC_OUT[2])),
    }
    return a


OUTPUT_NAMES = ("o0", "o1", "o2", "w0")
