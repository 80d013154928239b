"""Property test: random stencils from a small grammar (arithmetic, offsets within +-2,
temporaries, conditionals on fields and scalars, horizontal regions, while loops, several
computations and intervals) run on the cpu and numpy backends with random shapes and origins must give
the same results - bitwise, or to 1e-12 relative when a transcendental function is
involved.

Each example is written to a file of its own, so `inspect` reads its source as it would a
user's; each costs one LLVM compile (tens of milliseconds), so the run is bounded.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gtscript

INPUTS = ("in0", "in1", "in2")
OUTPUTS = ("out0", "out1")
TEMPS = ("t0", "t1", "t2", "t3")
#: one float32 input and output: NumPy 2 promotion (weak literals) is exercised too
DTYPES = {"in0": "float64", "in1": "float64", "in2": "float32", "out0": "float64",
          "out1": "float32"}
INTERVAL_LAYOUTS = (
    (("...",),),
    (("0", "1"), ("1", "None")),
    (("0", "2"), ("2", "None")),
    (("0", "1"), ("1", "-1"), ("-1", "None")),
)
#: more examples for a longer hunt: GTSCRIPT_PROPERTY_EXAMPLES=500 pytest tests/fuzz/test_property.py
EXAMPLES = int(os.environ.get("GTSCRIPT_PROPERTY_EXAMPLES", "40"))
_DIR = Path(tempfile.mkdtemp(prefix="gtscript_property_"))
_COUNTER = itertools.count()


@dataclass
class Body:
    """What the statements generated so far in one interval have defined."""

    temps: list[str] = field(default_factory=list)
    transcendental: bool = False
    float32: bool = False  # a float32 value was read


def offset(draw, k=True):
    di = draw(st.integers(-2, 2))
    dj = draw(st.integers(-2, 2))
    dk = draw(st.integers(-1, 1)) if k else 0
    return f"[{di}, {dj}, {dk}]"


def expression(draw, body: Body, depth: int, temps_at_zero: bool = False) -> str:
    kinds = ["input", "const", "scalar"] + (["temp"] if body.temps else [])
    if depth > 0:
        kinds += ["binop", "binop", "binop", "neg", "ternary", "minmax", "div", "transc"]
    kind = draw(st.sampled_from(kinds))
    sub = lambda: expression(draw, body, depth - 1, temps_at_zero)  # noqa: E731
    if kind == "input":
        name = draw(st.sampled_from(INPUTS))
        body.float32 |= DTYPES[name] == "float32"
        return name + offset(draw)
    if kind == "temp":  # temporaries are read at their own level (defined in this interval)
        name = draw(st.sampled_from(body.temps))
        return name if temps_at_zero else name + offset(draw, k=False)
    if kind == "const":
        return repr(draw(st.sampled_from([0.5, 1.0, 2.0, -1.25, 3.0, 0.1])))
    if kind == "scalar":
        return "s"
    if kind == "binop":
        return f"({sub()} {draw(st.sampled_from(['+', '-', '*']))} {sub()})"
    if kind == "neg":
        return f"(-{sub()})"
    if kind == "ternary":
        return f"({sub()} if {sub()} > {sub()} else {sub()})"
    if kind == "minmax":
        return f"{draw(st.sampled_from(['min', 'max']))}({sub()}, {sub()})"
    if kind == "div":
        return f"({sub()} / (1.5 + abs({sub()})))"
    body.transcendental = True
    fn = draw(st.sampled_from(["sqrt(abs({}))", "sin({})", "exp(0.1 * {})", "tanh({})"]))
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


def statements(draw, body: Body, indent: str, depth: int) -> list[str]:
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        top = ["temp", "out", "out", "if", "region", "while"]
        kind = draw(st.sampled_from(top if depth == 0 else ["out", "set"]))
        if kind == "temp":
            name = draw(st.sampled_from(TEMPS))
            # a temporary may not be assigned from its own values read with an offset
            others = Body([t for t in body.temps if t != name])
            value = expression(draw, others, 2)
            body.transcendental |= others.transcendental
            body.float32 |= others.float32
            lines.append(f"{indent}{name} = {value}")
            if name not in body.temps:
                body.temps.append(name)
        elif kind == "out" or (kind == "set" and not body.temps):
            value = expression(draw, body, 2, temps_at_zero=depth > 0)
            lines.append(f"{indent}{draw(st.sampled_from(OUTPUTS))} = {value}")
        elif kind == "set":  # a temporary already defined everywhere, updated under a mask
            value = expression(draw, body, 2, temps_at_zero=True)
            lines.append(f"{indent}{draw(st.sampled_from(body.temps))} = {value}")
        elif kind == "while":  # a counter bounds the iterations; points stop at different times
            bound = expression(draw, body, 1, temps_at_zero=True)
            lines.append(f"{indent}tw = 0.0")
            lines.append(f"{indent}while tw < min(abs({bound}), 3.0):")
            lines.append(f"{indent}    tw = tw + 1.0")
            lines += statements(draw, body, indent + "    ", depth + 1)
        elif kind == "region":  # boundary conditions: only updates of defined values inside
            boxes = ", ".join(region_box(draw) for _ in range(draw(st.integers(1, 2))))
            lines.append(f"{indent}with horizontal({boxes}):")
            lines += statements(draw, body, indent + "    ", depth + 1)
        else:
            on_scalar = draw(st.booleans())
            cond = "s > 0.0" if on_scalar else f"{expression(draw, body, 1)} > 0.0"
            lines.append(f"{indent}if {cond}:")
            lines += statements(draw, body, indent + "    ", depth + 1)
            if draw(st.booleans()):
                lines.append(f"{indent}else:")
                lines += statements(draw, body, indent + "    ", depth + 1)
    return lines


@st.composite
def programs(draw):
    """(source text, how exactly the backends must agree: "bitwise", "f64" (a transcendental
    function: 1e-12 relative) or "f32" (a transcendental function of float32 values))."""
    params = ", ".join(f"{n}: Field[np.{DTYPES[n]}]" for n in INPUTS + OUTPUTS) + ", s: float"
    lines = [
        "import numpy as np",
        "from gtscript import (BACKWARD, FORWARD, PARALLEL, Field, I, J, computation, exp,",
        "                      horizontal, interval, region, sin, sqrt, tanh)",
        "",
        "",
        f"def stencil({params}):",
    ]
    transcendental = float32 = False
    for _ in range(draw(st.integers(1, 3))):
        policy = draw(st.sampled_from(["PARALLEL", "FORWARD", "BACKWARD"]))
        lines.append(f"    with computation({policy}):")
        for bounds in draw(st.sampled_from(INTERVAL_LAYOUTS)):
            lines.append(f"        with interval({', '.join(bounds)}):")
            body = Body()
            lines += statements(draw, body, " " * 12, 0)
            transcendental |= body.transcendental
            float32 |= body.float32
    exactness = "bitwise" if not transcendental else "f32" if float32 else "f64"
    return "\n".join(lines) + "\n", exactness


def load(source: str):
    path = _DIR / f"generated_{next(_COUNTER)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.stencil


@pytest.mark.filterwarnings("ignore:temporary .* is written but never read")
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program=programs(), data=st.data())
def test_random_stencils_agree_on_cpu_and_numpy(program, data):
    source, exactness = program
    defn = load(source)
    cpu = gtscript.stencil(backend="cpu", definition=defn)
    ref = gtscript.stencil(backend="numpy", definition=defn)
    (ilo, ihi), (jlo, jhi), (klo, khi) = cpu.halo
    # the halo, computed per horizontal region, holds from region_min_domain points on
    mi, mj = cpu.region_min_domain
    domain = (data.draw(st.integers(mi, max(mi, 6))), data.draw(st.integers(mj, max(mj, 6))),
              data.draw(st.integers(3, 6)))
    extra = [data.draw(st.integers(0, 2)) for _ in range(6)]
    origin = (ilo + extra[0], jlo + extra[1], klo + extra[2])
    shape = tuple(o + n + h + e for o, n, h, e in zip(origin, domain, (ihi, jhi, khi), extra[3:]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    arrays = {n: rng.uniform(-2, 2, shape).astype(DTYPES[n]) for n in INPUTS + OUTPUTS}
    order = data.draw(st.sampled_from(["C", "F"]))
    a = {n: np.array(v, order=order) for n, v in arrays.items()}
    b = {n: np.array(v, order="C") for n, v in arrays.items()}
    s = data.draw(st.sampled_from([-0.5, 0.75]))
    cpu(**a, s=s, origin=origin, domain=domain)
    ref(**b, s=s, origin=origin, domain=domain)
    for name in INPUTS:
        assert np.array_equal(a[name], arrays[name]), f"input {name} was modified"
    for name in OUTPUTS:
        x, y = a[name], b[name]
        if exactness != "bitwise":
            # libm and NumPy's SIMD loops may round transcendental functions differently in the
            # last bit; float32 ones (and float32 results) agree to float32 precision only
            close = exactness == "f64" and x.dtype == np.float64
            np.testing.assert_allclose(x, y, rtol=1e-12 if close else 1e-4,
                                       atol=1e-300 if close else 1e-5, equal_nan=True,
                                       err_msg=f"{name}\n{source}")
        else:
            same = (x == y) | (np.isnan(x) & np.isnan(y))
            assert same.all(), f"{name}: {np.count_nonzero(~same)} values differ\n{source}"
