"""Interval bounds computed from values the stencil writes: an IJ temporary
(``t: Field[IJ, np.int64] = top + 1`` in one computation, ``interval(0, t)`` in a later one, as
GT4Py's debug backend takes it) and an IJ field the stencil writes. The call cannot check
their levels before running, so the kernel checks 0 <= level <= nk where it evaluates the
bound; a level outside them undoes the call (every array restored) and raises naming the line.

Results are compared with GT4Py's debug backend (the only GT4Py backend that runs run-time
interval bounds: its numpy backend refuses them) and with hand-written NumPy loops, on the cpu
and numpy backends and the cuda backend's source in host emulation. GT4Py reads a field bound
plus an offset (``interval(0, t + 1)``) as the whole domain; those cases are compared with
hand-written NumPy only."""

import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import emulate, require_compiler
from gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSemanticError, GTScriptSyntaxError
from test_gt4py_accepted import assert_same

gt = pytest.importorskip("gt4py.cartesian.gtscript")
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*experimental feature:UserWarning"),
]

BACKENDS = ["cpu", "numpy", "cuda"]
NI, NJ, NK = 5, 4, 6


def definitions(F, IJ_):
    """The definitions, annotated with one frontend's Field and IJ (GT4Py's or gtscript's);
    the temporaries' annotations name the build's ``dtypes=`` (DTYPES), as both frontends read
    them."""

    def end_plus_one(a: F[np.float64], top: F[IJ_, np.int64], out: F[np.float64]):
        with computation(FORWARD), interval(0, 1):
            t: Ti64 = top + 1
        with computation(PARALLEL), interval(0, t):  # BOUND
            out = a

    def start_forward(a: F[np.float64], lo: F[IJ_, np.int64], out: F[np.float64]):
        with computation(FORWARD), interval(0, 1):
            t: Ti64 = lo
        with computation(FORWARD), interval(t, None):  # BOUND
            out = out[0, 0, -1] + a

    def end_backward(a: F[np.float64], top: F[IJ_, np.int32], out: F[np.float64]):
        with computation(FORWARD), interval(0, 1):
            t: Ti32 = top
        with computation(BACKWARD), interval(0, t):  # BOUND
            out = out[0, 0, 1] + a

    def both(a: F[np.float64], lo: F[IJ_, np.int64], n: F[IJ_, np.int64], out: F[np.float64]):
        with computation(FORWARD), interval(0, 1):  # GT4Py writes IJ fields in sweeps only
            s: Ti64 = lo
            e: Ti64 = lo + n
        with computation(PARALLEL), interval(s, e):  # BOUND
            out = a * 3.0

    def counted(a: F[np.float64], out: F[np.float64]):
        # the bound is computed from a 3-D field over every level of a previous computation
        with computation(FORWARD), interval(0, 1):
            n: Ti64 = 0
        with computation(FORWARD), interval(...):
            if a > 0.5:
                n = n + 1
        with computation(PARALLEL), interval(0, n):  # BOUND
            out = a * 2.0

    def written_field(a: F[np.float64], top: F[IJ_, np.int64], out: F[np.float64]):
        with computation(FORWARD), interval(0, 1):
            top = top + 1
        with computation(PARALLEL), interval(0, top):  # BOUND
            out = a

    def start_field(a: F[np.float64], lo: F[IJ_, np.int64], out: F[np.float64]):
        with computation(PARALLEL), interval(lo, None):
            out = a

    def float_field(a: F[np.float64], top: F[IJ_, np.float64], out: F[np.float64]):
        with computation(PARALLEL), interval(0, top):
            out = a

    def offsets(a: F[np.float64], base: F[IJ_, np.int64], out: F[np.float64]):
        with computation(FORWARD), interval(0, 1):
            lo: Ti64 = base
            hi: Ti64 = base + 3
        with computation(PARALLEL), interval(lo + 1, hi - 1):  # BOUND
            out = a

    def looping(a: F[np.float64], top: F[IJ_, np.int64], out: F[np.float64]):
        with computation(FORWARD), interval(0, 1):
            t: Ti64 = top
        with computation(PARALLEL), interval(0, t):  # BOUND
            out = a
            while out < 100.0:
                out = out * 2.0

    def rewritten(a: F[np.float64], top: F[IJ_, np.int64], out: F[np.float64]):
        with computation(FORWARD), interval(0, 1):
            t: Ti64 = top
        with computation(FORWARD), interval(0, t):
            out = a
            if a > 0.0:
                t = t - 1  # GT4Py: the column's levels were fixed when it started

    return {f.__name__: f for f in (end_plus_one, start_forward, end_backward, both, counted,
                                    written_field, start_field, float_field, offsets, looping,
                                    rewritten)}


OURS = definitions(Field, IJ)
THEIRS = definitions(gt.Field, gt.IJ)


def dtypes(F, IJ_):
    return {"Ti64": F[IJ_, np.int64], "Ti32": F[IJ_, np.int32]}


OUR_DTYPES, THEIR_DTYPES = dtypes(Field, IJ), dtypes(gt.Field, gt.IJ)


def bound_line(definition):
    """The line of the interval bounded by a temporary (marked ``# BOUND``)."""
    lines, first = inspect.getsourcelines(definition)
    return first + next(n for n, text in enumerate(lines) if "# BOUND" in text)


def build(backend, definition):
    if backend == "cuda":
        require_compiler()
    stencil = gtscript.stencil(backend, definition, dtypes=OUR_DTYPES)
    return emulate(stencil) if backend == "cuda" else stencil


def copies(args):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}


def gt4py_debug(name, args):
    mine = copies(args)
    gt.stencil(backend="debug", definition=THEIRS[name], dtypes=THEIR_DTYPES)(**mine)
    return mine


def ours(backend, name, args):
    mine = copies(args)
    build(backend, OURS[name])(**mine)
    return mine


def compare(backend, name, args, hand):
    """GT4Py's debug backend computes the hand-written ``out`` (to rounding), and gtscript's
    ``backend`` what GT4Py computes, in every argument; GT4Py's arrays returned."""
    want = gt4py_debug(name, args)
    np.testing.assert_allclose(want["out"], hand, rtol=1e-13, atol=0)
    assert_same(ours(backend, name, args), want)
    return want


def below(bound):
    """Per column, whether each level of the array is below ``bound[i, j]``."""
    return np.arange(NK)[None, None, :] < bound[:, :, None]


# ---- results


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ij_temporary_as_end_bound_of_a_parallel_interval(backend):
    rng = np.random.default_rng(0)
    top = rng.integers(-1, NK, (NI, NJ))
    top[0, 0], top[1, 1] = -1, NK - 1  # t == 0 (no level) and t == nk (every level)
    args = {"a": rng.random((NI, NJ, NK)), "top": top, "out": np.full((NI, NJ, NK), -7.0)}
    compare(backend, "end_plus_one", args, np.where(below(top + 1), args["a"], -7.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ij_temporary_as_start_bound_of_a_forward_sweep(backend):
    rng = np.random.default_rng(1)
    nk = NK - 1  # the domain starts at level 1: out[0, 0, -1] stays in the array
    lo = rng.integers(0, nk + 1, (NI, NJ))
    lo[0, 0], lo[1, 1] = 0, nk  # every level; none (a start bound equal to nk)
    args = {"a": rng.random((NI, NJ, NK)), "lo": lo, "out": rng.random((NI, NJ, NK)),
            "origin": (0, 0, 1), "domain": (NI, NJ, nk)}
    hand = args["out"].copy()
    for i in range(NI):
        for j in range(NJ):
            for k in range(1 + lo[i, j], NK):
                hand[i, j, k] = hand[i, j, k - 1] + args["a"][i, j, k]
    compare(backend, "start_forward", args, hand)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ij_temporary_as_end_bound_of_a_backward_sweep(backend):
    rng = np.random.default_rng(2)
    nk = NK - 1  # out[0, 0, 1] reads one level above the domain
    top = rng.integers(0, nk + 1, (NI, NJ)).astype(np.int32)
    top[0, 0], top[1, 1] = 0, nk
    args = {"a": rng.random((NI, NJ, NK)), "top": top, "out": rng.random((NI, NJ, NK)),
            "domain": (NI, NJ, nk)}
    hand = args["out"].copy()
    for i in range(NI):
        for j in range(NJ):
            for k in reversed(range(top[i, j])):
                hand[i, j, k] = hand[i, j, k + 1] + args["a"][i, j, k]
    compare(backend, "end_backward", args, hand)


@pytest.mark.parametrize("backend", BACKENDS)
def test_both_bounds_temporaries(backend):
    rng = np.random.default_rng(3)
    lo = rng.integers(0, NK + 1, (NI, NJ))
    n = rng.integers(0, NK + 1, (NI, NJ)) % (NK + 1 - lo)
    lo[0, 0], n[0, 0] = NK, 0  # start == end == nk
    lo[1, 1], n[1, 1] = 0, NK
    lo[2, 2], n[2, 2] = 3, 0  # start == end inside the domain
    args = {"a": rng.random((NI, NJ, NK)), "lo": lo, "n": n, "out": np.full((NI, NJ, NK), 5.0)}
    inside = ~below(lo) & below(lo + n)
    compare(backend, "both", args, np.where(inside, 3.0 * args["a"], 5.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bound_counted_from_a_field_in_a_previous_computation(backend):
    rng = np.random.default_rng(4)
    a = rng.random((NI, NJ, NK))
    a[0, 0, :], a[1, 1, :] = 0.0, 1.0  # 0 levels and nk levels
    args = {"a": a, "out": np.zeros((NI, NJ, NK))}
    compare(backend, "counted", args, np.where(below((a > 0.5).sum(axis=2)), 2.0 * a, 0.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ij_field_the_stencil_writes_as_a_bound(backend):
    rng = np.random.default_rng(5)
    top = rng.integers(-1, NK, (NI, NJ))
    top[0, 0], top[1, 1] = -1, NK - 1
    args = {"a": rng.random((NI, NJ, NK)), "top": top, "out": np.zeros((NI, NJ, NK))}
    want = compare(backend, "written_field", args, np.where(below(top + 1), args["a"], 0.0))
    np.testing.assert_array_equal(want["top"], top + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_offsets_of_temporary_bounds_count(backend):
    """``interval(lo + 1, hi - 1)``: the levels [base + 1, base + 2). GT4Py 1.1 reads a field
    plus an offset as the whole domain: hand-written NumPy decides."""
    base = np.arange(NI * NJ).reshape(NI, NJ) % (NK - 2)  # 0 .. nk - 3: hi - 1 <= nk
    args = {"a": np.random.default_rng(6).random((NI, NJ, NK)), "base": base,
            "out": np.zeros((NI, NJ, NK))}
    got = ours(backend, "offsets", args)
    want = np.zeros((NI, NJ, NK))
    for i in range(NI):
        for j in range(NJ):
            want[i, j, base[i, j] + 1] = args["a"][i, j, base[i, j] + 1]
    np.testing.assert_array_equal(got["out"], want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_start_bound_equal_to_nk_is_an_empty_column(backend):
    """GT4Py's debug backend computes no level where an IJ field start bound is nk."""
    rng = np.random.default_rng(7)
    lo = rng.integers(0, NK + 1, (NI, NJ))
    lo[0, 0], lo[1, 1] = NK, 0
    args = {"a": rng.random((NI, NJ, NK)), "lo": lo, "out": np.full((NI, NJ, NK), -1.0)}
    want = compare(backend, "start_field", args, np.where(below(lo), -1.0, args["a"]))
    assert (want["out"][0, 0] == -1.0).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_while_loop_in_the_guarded_body(backend):
    rng = np.random.default_rng(8)
    top = rng.integers(0, NK + 1, (NI, NJ))
    a = rng.random((NI, NJ, NK)) + 0.5
    args = {"a": a, "top": top, "out": np.zeros((NI, NJ, NK))}
    hand = np.zeros((NI, NJ, NK))
    for i in range(NI):
        for j in range(NJ):
            for k in range(top[i, j]):
                v = a[i, j, k]
                while v < 100.0:
                    v *= 2.0
                hand[i, j, k] = v
    compare(backend, "looping", args, hand)


# ---- levels outside the domain


def sliced_ij(values):
    """An IJ view with sentinel-filled margins around it."""
    big = np.full((NI + 2, NJ + 3), -4242, dtype=values.dtype)
    view = big[1:-1, 2:-1]
    view[...] = values
    return view


def assert_undone(fields, stencil, args, match):
    arrays = [v for v in args.values() if isinstance(v, np.ndarray)]
    snap = fields.snapshot(*arrays)
    with pytest.raises(ValueError, match=match):
        stencil(**args)
    fields.assert_unchanged(snap)


def message(definition, source, nk, column, level, what="temporary"):
    return (rf"the interval bound on line {bound_line(definition)}, computed from the {what} "
            rf"'{source}' the stencil writes, is level {level} in column \({column[0]}, "
            rf"{column[1]}\) of the domain, outside the domain's levels \[0, {nk}\]: .*the call "
            rf"was undone \(every array it wrote was restored\)")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad", [-1, NK + 1, np.iinfo(np.int64).max - 1])
def test_a_temporary_end_bound_outside_the_domain_undoes_the_call(fields, backend, bad):
    stencil = build(backend, OURS["end_plus_one"])
    top = fields.rng.integers(0, NK, (NI, NJ))
    top[3, 2] = bad - 1  # t = top + 1 == bad in one column
    args = {"a": fields.random((NI, NJ, NK), layout="sliced"), "top": sliced_ij(top),
            "out": fields.sentinel((NI, NJ, NK), layout="sliced")}
    assert_undone(fields, stencil, args, message(OURS["end_plus_one"], "t", NK, (3, 2), bad))
    # the same column inside the levels: the call runs
    args["top"][3, 2] = NK - 1
    stencil(**args)
    np.testing.assert_array_equal(args["out"][3, 2], args["a"][3, 2])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad", [-1, NK])
def test_a_temporary_start_bound_outside_the_domain_undoes_the_call(fields, backend, bad):
    nk = NK - 1
    stencil = build(backend, OURS["start_forward"])
    lo = np.zeros((NI, NJ), np.int64)
    lo[4, 0] = bad  # nk + 1 is one past the top; -1 below the bottom
    args = {"a": fields.random((NI, NJ, NK)), "lo": sliced_ij(lo),
            "out": fields.random((NI, NJ, NK), layout="sliced"), "origin": (0, 0, 1),
            "domain": (NI, NJ, nk)}
    if bad == NK:
        bad = nk + 1
        args["lo"][4, 0] = bad
    assert_undone(fields, stencil, args, message(OURS["start_forward"], "t", nk, (4, 0), bad))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_written_field_bound_outside_the_domain_restores_the_field(fields, backend):
    stencil = build(backend, OURS["written_field"])
    top = np.full((NI, NJ), 2, np.int64)
    top[1, 3] = NK  # top + 1 == nk + 1, written into top itself before the check fails
    args = {"a": fields.random((NI, NJ, NK)), "top": sliced_ij(top),
            "out": fields.sentinel((NI, NJ, NK), layout="sliced")}
    assert_undone(fields, stencil, args, message(OURS["written_field"], "top", NK, (1, 3), NK + 1,
                                                          "field"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bound_outside_the_domain_with_a_while_loop_in_the_body(fields, backend):
    stencil = build(backend, OURS["looping"])
    top = np.full((NI, NJ), NK, np.int64)
    top[2, 1] = -3
    args = {"a": fields.random((NI, NJ, NK), low=0.5), "top": sliced_ij(top),
            "out": fields.sentinel((NI, NJ, NK), layout="sliced")}
    assert_undone(fields, stencil, args, message(OURS["looping"], "t", NK, (2, 1), -3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_counted_bound_is_checked_on_a_smaller_domain(fields, backend):
    """n counts the levels of a 3-D field above 0.5 over the domain; on a domain of fewer
    levels than the array the count stays within them (nothing to refuse)."""
    stencil = build(backend, OURS["counted"])
    a = np.ones((NI, NJ, NK))
    out = fields.sentinel((NI, NJ, NK))
    stencil(a, out, domain=(NI, NJ, 3))
    np.testing.assert_array_equal(out[:, :, :3], 2.0)
    assert (out[:, :, 3:] == fields.SENTINEL).all()


@pytest.mark.parametrize("tile", [None, "1x1", "2x3"])
@pytest.mark.parametrize("name", ["end_plus_one", "start_forward", "end_backward"])
def test_the_error_names_the_column_on_any_tile_size(monkeypatch, fields, name, tile):
    """The cpu backend's sweeps run columns in groups and lanes: the column named is the one
    whose bound is outside the domain, whatever the tiles."""
    if tile:
        monkeypatch.setenv("GTSCRIPT_TILE_SIZE", tile)
    stencil = build("cpu", OURS[name])
    nk = NK - 1
    for column in [(4, 3), (1, 2), (0, 0)]:
        bound = np.zeros((NI, NJ), np.int32 if name == "end_backward" else np.int64)
        bound[column] = nk + 2
        level = nk + 3 if name == "end_plus_one" else nk + 2
        args = {"a": fields.random((NI, NJ, NK)), "out": fields.sentinel((NI, NJ, NK)),
                "top" if name != "start_forward" else "lo": bound,
                "origin": (0, 0, 1) if name == "start_forward" else (0, 0, 0),
                "domain": (NI, NJ, nk)}
        assert_undone(fields, stencil, args, message(OURS[name], "t", nk, column, level))


MULTI_THREADED = textwrap.dedent('''
    import numpy as np
    import gtscript
    from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval

    def end_plus_one(a: Field[np.float64], top: Field[IJ, np.int64], out: Field[np.float64]):
        with computation(FORWARD), interval(0, 1):
            t: Field[IJ, np.int64] = top + 1
        with computation(PARALLEL), interval(0, t):
            out = a

    stencil = gtscript.stencil("cpu", end_plus_one)
    ni, nj, nk = 40, 36, 5
    a = np.random.default_rng(0).random((ni, nj, nk))
    top = np.full((ni, nj), nk - 1, np.int64)
    out = np.zeros((ni, nj, nk))
    stencil(a, top, out)
    assert (out == a).all()
    for column in [(0, 0), (39, 35), (21, 17)]:  # the first, last and a middle tile
        top[...] = nk - 1
        top[column] = nk + 3
        out[...] = -1.0
        try:
            stencil(a, top, out)
        except ValueError as err:
            want = (f"the interval bound on line 9, computed from the temporary 't' the stencil "
                    f"writes, is level {nk + 4} in column {column} of the domain")
            assert want in str(err), err
            assert (out == -1.0).all(), column
        else:
            raise AssertionError(column)
    print("ok")
''')


def test_a_bound_outside_the_domain_in_a_multi_threaded_call(tmp_path):
    env = {**os.environ, "GTSCRIPT_NUM_THREADS": "2", "GTSCRIPT_TILE_SIZE": "4x4",
           "GTSCRIPT_CACHE_DIR": str(tmp_path / "cache")}
    script = tmp_path / "threads.py"  # a file: the frontend reads the definition's source
    script.write_text(MULTI_THREADED)
    r = subprocess.run([sys.executable, str(script)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr


# ---- refused


def test_gt4py_takes_a_float_ij_field_bound_gtscript_refuses_it_with_the_reason():
    """GT4Py's debug backend truncates a float bound toward zero (int()); NaN or inf has no
    level. gtscript refuses it and says how to convert it."""
    args = {"a": np.ones((NI, NJ, NK)), "top": np.full((NI, NJ), 2.7),
            "out": np.zeros((NI, NJ, NK))}
    got = gt4py_debug("float_field", args)
    assert (got["out"][:, :, :2] == 1.0).all() and (got["out"][:, :, 2:] == 0.0).all()
    with pytest.raises(GTScriptSyntaxError, match=r"must be an integer IJ field.*truncates.*"
                       r"t: Field\[IJ, np.int64\] = top"):
        gtscript.stencil("numpy", OURS["float_field"])


def test_a_bound_written_inside_its_interval_is_refused():
    """GT4Py's debug backend fixes a column's levels when the interval starts there; gtscript
    evaluates the bound at every level, so a bound the interval itself writes is refused."""
    args = {"a": np.ones((NI, NJ, NK)), "top": np.full((NI, NJ), 4),
            "out": np.zeros((NI, NJ, NK))}
    got = gt4py_debug("rewritten", args)
    np.testing.assert_array_equal(got["out"], np.where(below(args["top"]), 1.0, 0.0))
    for backend in ("cpu", "numpy"):
        with pytest.raises(GTScriptSemanticError, match="interval bound 't' is written inside "
                           "the interval it bounds"):
            build(backend, OURS["rewritten"])


def test_a_float_or_k_axis_temporary_bound_is_refused():
    def float_temporary(a: Field[np.float64], top: Field[IJ, np.float64],
                        out: Field[np.float64]):
        with computation(FORWARD), interval(0, 1):
            t: Field[IJ, np.float64] = top
        with computation(PARALLEL), interval(0, t):
            out = a

    def k_temporary(a: Field[np.float64], top: Field[IJ, np.int64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            t = top + 1
        with computation(PARALLEL), interval(0, t):
            out = a

    with pytest.raises(GTScriptSemanticError, match="an interval bound must be an integer, "
                       "not float64.*truncates"):
        gtscript.stencil("cpu", float_temporary)
    with pytest.raises(GTScriptSemanticError, match="interval bound 't' has a K axis"):
        gtscript.stencil("cpu", k_temporary)


# ---- through GT4Py's API


@pytest.mark.parametrize("gts_backend", ["gtscript:cpu", "gtscript:numpy"])
def test_through_gt4pys_api(fields, gts_backend):
    import gtscript.gt4py  # noqa: F401 - registers the backends

    stencil = gt.stencil(backend=gts_backend, definition=THEIRS["end_plus_one"],
                         dtypes=THEIR_DTYPES)
    rng = np.random.default_rng(9)
    top = rng.integers(-1, NK, (NI, NJ))
    args = {"a": rng.random((NI, NJ, NK)), "top": top, "out": np.zeros((NI, NJ, NK))}
    mine = copies(args)
    stencil(**mine)
    assert_same(mine, gt4py_debug("end_plus_one", args))
    top[2, 2] = NK  # t == nk + 1
    bad = {**args, "top": sliced_ij(top), "out": fields.sentinel((NI, NJ, NK), layout="sliced")}
    assert_undone(fields, stencil, bad, message(THEIRS["end_plus_one"], "t", NK, (2, 2), NK + 1))
