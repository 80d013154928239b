"""Differential test of ``@gtscript.function`` call semantics against GT4Py 1.1.12.

GT4Py inlines a function by name: a parameter bound to a plain name that the body never
plain-assigns is that name, so a write that is not a plain assignment reaches the caller's
field or variable. This file generates every combination of

- parameter kind: a field, a temporary, the caller's parameter, an expression;
- write kind: none, plain (`p = ...`), plain then augmented, augmented (`p *= r`), augmented
  in an if/else, augmented in a while loop, augmented through an index (`p[0, 0, 0] += r`);
- nesting depth 1 (the stencil calls the writer) and 2 (the stencil calls a function that
  passes its parameter, a local or an expression of it, to the writer);

plus a few call shapes around them (two calls in one expression, an expression argument next
to a written one, the same field passed twice, keywords, a call as an argument, a call in a
returned expression, a FORWARD sweep). One module
holds them all, written once in GT4Py's spelling and imported a second time with gtscript's
imports (as tests/compat_gt4py/test_conformance_gt4py.py does); GT4Py's numpy backend is the oracle, and
gtscript's cpu and numpy backends must leave every array as GT4Py does.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gt4py.cartesian.config",
                    reason="the differential test needs GT4Py (pyproject's test extra)")

from gt4py_corpus import runner

runner.private_gt4py_cache()  # GT4Py's generated code goes to a temporary directory

SHAPE = (4, 3, 2)

# the body of the writer for each write kind (p: the parameter, r: a field)
WRITES = {
    "none": [],
    "plain": ["p = p * r"],
    "plain_then_augmented": ["p = p * r", "p += 1.0"],
    "augmented": ["p *= r"],
    "branch": ["if r > 1.0:", "    p *= r", "else:", "    p -= r"],
    "loop": ["n = 0.0", "while n < 2.0:", "    p += r", "    n += 1.0"],
    "indexed": ["p[0, 0, 0] += r"],
}
# depth 1: how the stencil passes its argument (a_: the input field, r: a field)
OUTER = {
    "field": ("", "{a}"),
    "temporary": ("{t} = {a} * 1.5", "{t}"),
    "expression": ("", "{a} + 0.5"),
}
# depth 2: how the middle function passes its parameter q on to the writer
INNER = {
    "parameter": ("", "q", "q + s"),
    "temporary": ("t = q * 2.0", "t", "q + s + t"),
    "expression": ("", "q * 2.0", "q + s"),
}
DEPTHS = (1, 2)


def _indent(lines, n):
    return [" " * n + line for line in lines]


def _module_source() -> str:
    out = [
        "import numpy as np",
        "from gt4py.cartesian import gtscript",
        "from gt4py.cartesian.gtscript import FORWARD, PARALLEL, Field, computation, interval",
        "",
        "F = Field[np.float64]",
        "",
    ]
    for write, body in WRITES.items():
        out += ["@gtscript.function", f"def w_{write}(p, r):", *_indent(body, 4),
                "    return p + 1.0", ""]
        for inner, (setup, arg, result) in INNER.items():
            out += ["@gtscript.function", f"def m_{write}_{inner}(q, r):"]
            out += _indent([setup] if setup else [], 4)
            out += [f"    s = w_{write}({arg}, r)", f"    return {result}", ""]
        for depth in DEPTHS:
            shapes = ([(outer, None) for outer in OUTER] if depth == 1
                      else [(outer, inner) for inner in INNER for outer in OUTER])
            names = [f"{outer}_{inner}" if inner else outer for outer, inner in shapes]
            params = ", ".join([f"a_{n}: F" for n in names] + ["r: F"] + [f"o_{n}: F" for n in names])
            out += [f"def st_{depth}_{write}({params}):",
                    "    with computation(PARALLEL), interval(...):"]
            for (outer, inner), name in zip(shapes, names):
                setup, arg = OUTER[outer]
                fmt = {"a": f"a_{name}", "t": f"t_{name}"}
                fn = f"w_{write}" if inner is None else f"m_{write}_{inner}"
                if setup:
                    out.append("        " + setup.format(**fmt))
                extra = f" + {fmt['t']}" if outer == "temporary" else ""  # see the temporary
                out.append(f"        o_{name} = {fn}({arg.format(**fmt)}, r){extra}")
            out.append("")
    out += [
        "@gtscript.function",
        "def bump_other(p, q):",
        "    q += 10.0",
        "    return p",
        "",
        "@gtscript.function",
        "def bump_both(p, q):",
        "    p += 1.0",
        "    q *= 2.0",
        "    return p",
        "",
        "@gtscript.function",
        "def returns_a_call(p, r):",
        "    return w_none(p, r) + p",
        "",
        "def st_shapes(a: F, b: F, c: F, d: F, e: F, g: F, h: F, r: F,",
        "              o1: F, o2: F, o3: F, o4: F, o5: F, o6: F, o7: F):",
        "    with computation(PARALLEL), interval(...):",
        "        o1 = w_augmented(a, r) + w_augmented(a, r)",
        "        o2 = bump_other(b + 1.0, b)",
        "        o3 = bump_both(c, c)",
        "        o4 = w_augmented(r=r, p=d)",
        "        o5 = w_augmented(w_augmented(e, r), r)",
        "        o6 = m_augmented_parameter(g, r) - w_loop(g, r) * w_branch(g, r)",
        "        o7 = returns_a_call(h, r) + w_augmented(h, r)",
        "",
        "def st_column(a: F, r: F, out: F):",
        "    with computation(FORWARD):",
        "        with interval(0, 1):",
        "            out = a",
        "        with interval(1, None):",
        "            out = w_augmented(a, r) + a[0, 0, -1] + m_loop_temporary(out[0, 0, -1], r)",
        "",
    ]
    return "\n".join(out) + "\n"


STENCILS = [f"st_{d}_{w}" for d in DEPTHS for w in WRITES] + ["st_shapes", "st_column"]


@functools.cache
def _modules():
    """The generated module as GT4Py and as gtscript import it."""
    folder = Path(tempfile.mkdtemp(prefix="gtscript-fn-semantics-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "fn_semantics_cases.py"
    path.write_text(_module_source())
    modules = {flavour: runner.load_path(path, flavour) for flavour in ("gt4py", "gtscript")}
    for flavour, module in modules.items():
        if isinstance(module, Exception):
            raise module
        assert not module.__corpus_errors__, (flavour, module.__corpus_errors__)
    return modules


def _arguments(name: str) -> dict:
    defn = getattr(_modules()["gt4py"], name)
    rng = np.random.default_rng(len(name))
    return {arg: rng.uniform(0.5, 2.0, SHAPE) for arg in defn.__annotations__ if arg != "return"}


def _call(stencil, args):
    mine = {k: v.copy() for k, v in args.items()}
    stencil(**mine)
    return mine


@functools.cache
def _oracle(name: str):
    """The arguments and GT4Py's arrays after the call, computed once per run."""
    import gt4py.cartesian.gtscript as gt4py_gtscript

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GT4Py's experimental-feature and numpy warnings
        stencil = gt4py_gtscript.stencil("numpy", getattr(_modules()["gt4py"], name), rebuild=False)
        args = _arguments(name)
        return args, _call(stencil, args)


def test_the_oracle_writes_through_what_gt4py_passes_by_name():
    """The generated shapes exercise both outcomes: GT4Py writes a field bound to an augmented
    parameter and leaves one bound to a plain-assigned parameter alone."""
    args, after = _oracle("st_1_augmented")
    np.testing.assert_allclose(after["a_field"], args["a_field"] * args["r"])
    np.testing.assert_array_equal(after["a_expression"], args["a_expression"])
    args, after = _oracle("st_2_plain_then_augmented")
    for name in ("a_field_parameter", "a_field_temporary", "a_field_expression"):
        np.testing.assert_array_equal(after[name], args[name])
    args, after = _oracle("st_2_loop")
    np.testing.assert_allclose(after["a_field_parameter"], args["a_field_parameter"] + 2 * args["r"])


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("name", STENCILS)
def test_gtscript_functions_agree_with_gt4py(name, backend):
    import gtscript

    args, expected = _oracle(name)
    stencil = gtscript.stencil(backend, getattr(_modules()["gtscript"], name))
    actual = _call(stencil, args)
    for arg, want in expected.items():
        np.testing.assert_allclose(actual[arg], want, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name} on {backend}: argument {arg!r}")
