"""C order against Fortran order for reads at horizontal offsets: gtscript and hand-written C.

    python benchmarks/layout_offsets.py [--size 256 256 80] [--repeat 21] [--json FILE]

NumPy's arrays are C-ordered (K contiguous); many models hand gtscript Fortran-ordered ones (I
contiguous). A read at an I offset then lies one plane (nj * nk elements) away in C order and
next door in Fortran order. For a copy, reads at I offsets, at J offsets and the five-point
Laplacian (float64, a halo of one in I and J, one thread) this times gtscript's cpu stencil on
both layouts (with plain stores, GTSCRIPT_STREAMING_STORES=0, as the C writes) and, in the same interleaved rounds, the hand-written C of
benchmarks/layout_offsets.c on both: plain loops, the J and K loops joined into one run per I
(what gtscript does in C order), a software prefetch of the next plane (or row), and runs of
the joined rows with I innermost (the previous planes of a run stay in L1). The best C of each
layout says what the machine allows: where C order's best hand-written kernel is as far from
Fortran order's as gtscript's is, the difference is the layout's, not the compiler's.
Prints a Markdown table (ms, medians of interleaved calls, and the C/F ratios).
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import c_baselines  # noqa: E402
import suite  # noqa: E402

import gtscript  # noqa: E402
from gtscript import PARALLEL, Field, computation, interval  # noqa: E402

SOURCE = os.path.join(HERE, "layout_offsets.c")
PATTERNS = ("copy", "I offsets", "J offsets", "laplacian")
#: (label, variant, prefetch distance in elements, chunk in elements) per layout
C_VARIANTS = (("plain", 0, 0, 0), ("joined", 1, 0, 0), ("joined+prefetch", 2, 512, 0),
              ("I-inner runs", 3, 0, 4096))
F_VARIANTS = (("plain", 0, 0, 0), ("prefetch", 2, 64, 0))


def copy(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp


def i_offsets(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp[-1, 0, 0] + inp + inp[1, 0, 0]


def j_offsets(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp[0, -1, 0] + inp + inp[0, 1, 0]


def laplacian(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = -4.0 * inp + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]


DEFINITIONS = (copy, i_offsets, j_offsets, laplacian)


def compile_c(directory):
    path = os.path.join(directory, "layout_offsets.so")
    cmd = [c_baselines.CC, "-O3", "-march=native", "-fno-tree-loop-distribute-patterns",
           "-shared", "-fPIC", SOURCE, "-o", path]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise c_baselines.CompileError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    lib = ctypes.CDLL(path)
    p, n, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    lib.c_order.argtypes = [p, p, n, n, n, i, i, n, n]
    lib.f_order.argtypes = [p, p, n, n, n, i, i, n]
    lib.c_order.restype = lib.f_order.restype = ctypes.c_int
    return lib


def numpy_result(pattern, a):
    c = a[1:-1, 1:-1]
    if pattern == 0:
        return c.copy()
    if pattern == 1:
        return a[:-2, 1:-1] + c + a[2:, 1:-1]
    if pattern == 2:
        return a[1:-1, :-2] + c + a[1:-1, 2:]
    return -4.0 * c + a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2]


def functions(lib, shape):
    """{(pattern, column): (callable(), its input, its output)}, and the input's values."""
    ni, nj, nk = shape
    rng = np.random.default_rng(0)
    base = rng.uniform(0.5, 1.5, shape)
    arrays = {"C": (base.copy(order="C"), np.zeros(shape)),
              "F": (np.asfortranarray(base), np.asfortranarray(np.zeros(shape)))}
    checks = {}
    for p, definition in enumerate(DEFINITIONS):
        stencil = gtscript.stencil("cpu", definition)
        for layout, (inp, out) in arrays.items():
            def call(stencil=stencil, inp=inp, out=out):
                stencil(inp, out, origin=(1, 1, 0), domain=(ni - 2, nj - 2, nk))
            checks[p, f"gtscript {layout}"] = (call, inp, out)
        inp, out = arrays["C"]
        for label, variant, ahead, chunk in C_VARIANTS:
            def call(inp=inp, out=out, v=variant, ahead=ahead, chunk=chunk, p=p):
                if lib.c_order(inp.ctypes.data, out.ctypes.data, ni, nj, nk, p, v, ahead, chunk):
                    raise ValueError("c_order: bad variant")
            checks[p, f"C order: {label}"] = (call, inp, out)
        inp, out = arrays["F"]
        for label, variant, ahead, _ in F_VARIANTS:
            def call(inp=inp, out=out, v=variant, ahead=ahead, p=p):
                if lib.f_order(inp.ctypes.data, out.ctypes.data, ni, nj, nk, p, v, ahead):
                    raise ValueError("f_order: bad variant")
            checks[p, f"F order: {label}"] = (call, inp, out)
    return checks, base


def check(checks, base):
    for (p, column), (call, inp, out) in checks.items():
        out[...] = 0.0
        call()
        np.testing.assert_allclose(out[1:-1, 1:-1], numpy_result(p, base), rtol=1e-14,
                                   err_msg=f"{PATTERNS[p]}: {column} is wrong")


def table(results):
    rows = ["| pattern | gtscript C ms | gtscript F ms | gtscript C / F | best C, C order | "
            "best C, F order | C's C / F |", "|---|---:|---:|---:|---|---|---:|"]
    for p, name in enumerate(PATTERNS):
        r = {column: t["ms"] for (q, column), t in results.items() if q == p}
        best_c = min((v, k) for k, v in r.items() if k.startswith("C order"))
        best_f = min((v, k) for k, v in r.items() if k.startswith("F order"))
        rows.append(f"| {name} | {r['gtscript C']:.3f} | {r['gtscript F']:.3f} | "
                    f"{r['gtscript C'] / r['gtscript F']:.2f} | {best_c[0]:.3f} "
                    f"({best_c[1][len('C order: '):]}) | {best_f[0]:.3f} "
                    f"({best_f[1][len('F order: '):]}) | {best_c[0] / best_f[0]:.2f} |")
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("--size", type=int, nargs=3, default=(256, 256, 80))
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    if min(args.size[:2]) < 3 or args.size[2] < 1 or args.repeat < 1:
        parser.error("--size needs at least 3 x 3 x 1 and --repeat at least 1")
    gtscript.set_num_threads(1)
    # every implementation stores plainly: the layouts are compared, not the kinds of store
    os.environ["GTSCRIPT_STREAMING_STORES"] = "0"
    with tempfile.TemporaryDirectory(prefix="gtscript-layout-") as directory:
        lib = compile_c(directory)
        checks, base = functions(lib, tuple(args.size))
        fns = {key: call for key, (call, _, _) in checks.items()}
        check(checks, base)
        for (_, column), call in fns.items():  # gtscript's plans measured and settled
            if column.startswith("gtscript"):
                for _ in range(30):
                    call()
        results = {}
        for p in range(len(PATTERNS)):
            timed = suite.time_calls({c: f for (q, c), f in fns.items() if q == p},
                                     args.repeat, 10.0)
            results.update({(p, c): t for c, t in timed.items()})
    machine = suite.machine_info()
    print(f"# {machine['cpu_model']}, one thread, float64 {'x'.join(map(str, args.size))} with a "
          f"halo of one in I and J; {machine['compiler']}; median of {args.repeat} "
          "interleaved calls")
    print(table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "size": args.size,
                       "results": [{"pattern": PATTERNS[p], "column": c, **t}
                                   for (p, c), t in results.items()]}, f, indent=1)


if __name__ == "__main__":
    main()
