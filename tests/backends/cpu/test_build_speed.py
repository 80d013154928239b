"""Build speed (issue 14): per-phase build times; large generated stencils that the cpu
backend compiles as several functions (parts) and that still match the numpy backend and
hand-written NumPy; and a physics scheme's function results computed once per point, not
re-expanded into every reader (results against the numpy backend and hand-written NumPy, and
counts that keep the duplication from coming back)."""

import os
import re
import shutil
import sys
import threading
import warnings

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, PARALLEL, computation, interval

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "benchmarks"))
import build_scaling  # noqa: E402

PHASES = ("frontend_time", "analysis_time", "llvm_ir_time", "optimise_time", "object_time",
          "load_time")


def _hdiff_like(inp: gtscript.Field[float], out: gtscript.Field[float], c: float):
    with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
        lap = 4.0 * inp - (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0])
        out = inp - c * (lap[1, 0, 0] - lap[0, 0, 0])


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_phase_times_exist_and_add_up(backend):
    info = {}
    gtscript.stencil(backend, _hdiff_like, rebuild=True, build_info=info)
    for phase in PHASES:
        assert isinstance(info[phase], float) and info[phase] >= 0.0, phase
    total = sum(info[p] for p in PHASES)
    # the phases split the frontend (parse_time) and the C core (codegen_time) exactly
    assert total == pytest.approx(info["parse_time"] + info["codegen_time"], rel=1e-9, abs=1e-9)
    assert total <= info["build_time"] + 1e-9
    assert info["frontend_time"] >= info["parse_time"] > 0.0
    if backend == "cpu":
        # a fresh cpu build spends time in each LLVM phase
        assert info["module_source"] == "build"
        assert info["optimise_time"] > 0.0 and info["object_time"] > 0.0
        assert info["llvm_ir_time"] > 0.0
    else:
        assert info["llvm_ir_time"] == info["optimise_time"] == info["object_time"] == 0.0


def test_phase_times_of_a_cache_hit():
    gtscript.stencil("cpu", _hdiff_like, rebuild=True)
    info = {}
    gtscript.stencil("cpu", _hdiff_like, build_info=info)  # the decorator's memory level
    assert info["module_source"] == "pre-key"
    assert all(info[p] == 0.0 for p in PHASES)


def _shift(x, di, dj):
    """x read at offset (di, dj): NaN where that leaves the array."""
    r = np.full_like(x, np.nan)
    ni, nj = x.shape[:2]
    r[max(0, -di):ni - max(0, di), max(0, -dj):nj - max(0, dj)] = \
        x[max(0, di):ni + min(0, di), max(0, dj):nj + min(0, dj)]
    return r


def _chain_numpy(a, c, n):
    """build_scaling.chained_source(n) by hand, over the whole array (NaN where undefined)."""
    t = a * c
    for k in range(1, n):
        di, dj = build_scaling.OFFSETS[k % len(build_scaling.OFFSETS)]
        t = 0.5 * _shift(t, di, dj) + 0.25 * (_shift(a, di, dj) - _shift(a, -dj, di))
    return t


@pytest.mark.parametrize("inline", [True, False])
def test_large_chained_stencil_matches_numpy(fields, inline):
    n = 120
    definition, _ = build_scaling.make_definition(build_scaling.chained_source(n, "chain_t"),
                                                  "chain_t")
    options = {} if inline else {"inline_temporaries": False}
    cpu = gtscript.stencil("cpu", definition, rebuild=True, **options)
    ref = gtscript.stencil("numpy", definition, rebuild=True)
    if not inline:
        # one loop nest per statement: the kernel is split into several parts
        assert cpu.source().count("define internal void @gt_part") >= n // 16
    shape, halo = (14, 13, 5), 3
    origin, domain = (halo, halo, 0), (shape[0] - 2 * halo, shape[1] - 2 * halo, shape[2])
    a = fields.random(shape)
    expected = _chain_numpy(a, 0.7, n)[halo:-halo, halo:-halo, :]
    assert not np.isnan(expected).any()
    outs = {}
    for name, st in (("cpu", cpu), ("numpy", ref)):
        out = fields.sentinel(shape)
        before = out.copy()
        st(a, out, 0.7, origin=origin, domain=domain)
        np.testing.assert_allclose(out[halo:-halo, halo:-halo], expected, rtol=1e-12, atol=1e-12)
        inner = np.zeros(shape, bool)
        inner[halo:-halo, halo:-halo] = True
        np.testing.assert_array_equal(out[~inner], before[~inner])  # nothing else written
        outs[name] = out
    np.testing.assert_allclose(outs["cpu"], outs["numpy"], rtol=1e-12, atol=1e-12)


def _many_parts(a: gtscript.Field[float], b: gtscript.Field[float], out: gtscript.Field[float]):
    """Many loop nests, then a sweep and a column group: parts end between nests, never
    inside a K sweep."""
    with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
        t0 = a[1, 0, 0] + a[-1, 0, 0]
        t1 = t0[0, 1, 0] - t0[0, -1, 0] + b
        t2 = t1[1, 0, 0] * 0.5 + t0
        t3 = t2[0, -1, 0] + t1[-1, 0, 0]
        t4 = t3[1, 0, 0] - t2
        t5 = t4[0, 1, 0] + t3
        t6 = t5[-1, 0, 0] * t4
        t7 = t6[0, -1, 0] + t5
        t8 = t7[1, 0, 0] - t6
        t9 = t8[0, 1, 0] + t7
    with gtscript.computation(gtscript.FORWARD):
        with gtscript.interval(0, 1):
            s = t9
        with gtscript.interval(1, None):
            s = s[0, 0, -1] * 0.5 + t9
    with gtscript.computation(gtscript.BACKWARD):
        with gtscript.interval(-1, None):
            out = s + t8
        with gtscript.interval(0, -1):
            out = out[0, 0, 1] * 0.25 + s - t1


def _many_parts_numpy(a, b):
    t0 = _shift(a, 1, 0) + _shift(a, -1, 0)
    t1 = _shift(t0, 0, 1) - _shift(t0, 0, -1) + b
    t2 = _shift(t1, 1, 0) * 0.5 + t0
    t3 = _shift(t2, 0, -1) + _shift(t1, -1, 0)
    t4 = _shift(t3, 1, 0) - t2
    t5 = _shift(t4, 0, 1) + t3
    t6 = _shift(t5, -1, 0) * t4
    t7 = _shift(t6, 0, -1) + t5
    t8 = _shift(t7, 1, 0) - t6
    t9 = _shift(t8, 0, 1) + t7
    s = np.empty_like(t9)
    s[:, :, 0] = t9[:, :, 0]
    for k in range(1, s.shape[2]):
        s[:, :, k] = s[:, :, k - 1] * 0.5 + t9[:, :, k]
    out = np.empty_like(s)
    out[:, :, -1] = s[:, :, -1] + t8[:, :, -1]
    for k in range(s.shape[2] - 2, -1, -1):
        out[:, :, k] = out[:, :, k + 1] * 0.25 + s[:, :, k] - t1[:, :, k]
    return out


@pytest.mark.parametrize("nests", ["1", "3", "16"])
def test_parts_around_sweeps_match_numpy(fields, monkeypatch, nests, layout):
    monkeypatch.setenv("GTSCRIPT_PART_NESTS", nests)  # parts of at most this many loop nests
    cpu = gtscript.stencil("cpu", _many_parts, rebuild=True, inline_temporaries=False)
    ref = gtscript.stencil("numpy", _many_parts, rebuild=True)
    parts = cpu.source().count("define internal void @gt_part")
    assert parts >= (10 if nests == "1" else 4 if nests == "3" else 1)
    shape, halo = (16, 15, 6), 4
    origin, domain = (halo, halo, 0), (shape[0] - 2 * halo, shape[1] - 2 * halo, shape[2])
    a, b = fields.random(shape, layout=layout), fields.random(shape, layout=layout)
    expected = _many_parts_numpy(np.asarray(a), np.asarray(b))[halo:-halo, halo:-halo]
    assert not np.isnan(expected).any()
    for st in (cpu, ref):
        out = fields.sentinel(shape, layout=layout)
        before = out.copy()
        st(a, b, out, origin=origin, domain=domain)
        np.testing.assert_allclose(out[halo:-halo, halo:-halo], expected, rtol=1e-11)
        inner = np.zeros(shape, bool)
        inner[halo:-halo, halo:-halo] = True
        np.testing.assert_array_equal(out[~inner], before[~inner])


@pytest.mark.parametrize("budget", ["0", "1000"])
def test_optimisation_budget_falls_back_to_the_cheaper_pipeline(fields, monkeypatch, budget):
    monkeypatch.setenv("GTSCRIPT_PART_NESTS", "1")  # several batches of functions
    monkeypatch.setenv("GTSCRIPT_LLVM_BUDGET", budget)
    info = {}
    cpu = gtscript.stencil("cpu", _many_parts, rebuild=True, inline_temporaries=False,
                           build_info=info)
    parts = cpu.source().count("define internal void @gt_part")
    copies = cpu.source().count("define internal void @gt_block_")  # column blocks' copies
    assert info["llvm_functions"] == parts + copies + 1 and parts > 8  # and gt_kernel
    if budget == "0":
        # over budget from the start: every function gets the cheaper pipeline, which has
        # no vectoriser
        assert info["llvm_cheap_functions"] == info["llvm_functions"]
        assert "<8 x double>" not in cpu.source() and "<4 x double>" not in cpu.source()
    else:
        assert info["llvm_cheap_functions"] == 0
        assert "x double>" in cpu.source()
    assert "optnone" not in cpu.source()  # the marks of the batches are gone
    ref = gtscript.stencil("numpy", _many_parts, rebuild=True)
    shape, halo = (16, 15, 6), 4
    origin, domain = (halo, halo, 0), (shape[0] - 2 * halo, shape[1] - 2 * halo, shape[2])
    a, b = fields.random(shape), fields.random(shape)
    expected = _many_parts_numpy(a, b)[halo:-halo, halo:-halo]
    outs = []
    for st in (cpu, ref):
        out = fields.sentinel(shape)
        before = out.copy()
        st(a, b, out, origin=origin, domain=domain)
        np.testing.assert_allclose(out[halo:-halo, halo:-halo], expected, rtol=1e-11)
        inner = np.zeros(shape, bool)
        inner[halo:-halo, halo:-halo] = True
        np.testing.assert_array_equal(out[~inner], before[~inner])
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_default_build_is_within_budget():
    info = {}
    gtscript.stencil("cpu", _hdiff_like, rebuild=True, build_info=info)
    assert info["llvm_functions"] >= 2 and info["llvm_cheap_functions"] == 0


# ---- loop-nest merging (csrc/backend/cpu/merge.c) ------------------------------------------

def _merge_cases(a: gtscript.Field[float], b: gtscript.Field[float], out: gtscript.Field[float],
                 out2: gtscript.Field[float]):
    with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
        t = a * 2.0            # point-wise: t, u, out2 share a nest
        u = t + b
        if u > 0.5:
            out2 = u * t
        else:
            out2 = -u
        b = a[1, 0, 0] + t     # reads a (not written) at an offset: still point-wise for b
        c = u - 1.0
        v = c[0, 1, 0] + b     # reads c (written in the run) at an offset: a new nest
        out = v[-1, 0, 0] + v  # reads v at an offset: a new nest
    with gtscript.computation(gtscript.FORWARD), gtscript.interval(1, None):
        w = out2 + 1.0
        out2 = w[0, 0, 0] * 0.5 + out2[0, 0, -1]  # the level below: a nest of its own


def _merge_cases_numpy(a, b, out2):
    a, b, out2 = a.copy(), b.copy(), out2.copy()
    t = a * 2.0
    u = t + b
    out2 = np.where(u > 0.5, u * t, -u)
    b = _shift(a, 1, 0) + t
    c = u - 1.0
    v = _shift(c, 0, 1) + b
    out = _shift(v, -1, 0) + v
    for k in range(1, out2.shape[2]):
        out2[:, :, k] = (out2[:, :, k] + 1.0) * 0.5 + out2[:, :, k - 1]
    return a, b, out, out2


@pytest.mark.parametrize("inline", [True, False])
def test_merged_loop_nests_match_numpy(fields, layout, inline):
    options = {} if inline else {"inline_temporaries": False}
    cpu = gtscript.stencil("cpu", _merge_cases, rebuild=True, **options)
    ref = gtscript.stencil("numpy", _merge_cases, rebuild=True)
    shape, halo = (12, 11, 5), 2
    origin, domain = (halo, halo, 0), (shape[0] - 2 * halo, shape[1] - 2 * halo, shape[2])
    a0, b0 = fields.random(shape, layout=layout), fields.random(shape, layout=layout)
    o20 = fields.random(shape, layout=layout)
    ea, eb, eout, eout2 = _merge_cases_numpy(np.asarray(a0), np.asarray(b0), np.asarray(o20))
    inner = np.zeros(shape, bool)
    inner[halo:-halo, halo:-halo] = True
    results = []
    for st in (cpu, ref):
        a, b = fields.as_layout(a0, layout), fields.as_layout(b0, layout)
        out, out2 = fields.sentinel(shape, layout=layout), fields.as_layout(o20, layout)
        st(a, b, out, out2, origin=origin, domain=domain)
        # the compute domain of the argument fields; a and b are written only there too
        for got, want in ((a, ea), (b, eb), (out, eout), (out2, eout2)):
            np.testing.assert_allclose(got[inner], want[inner], rtol=1e-12)
        np.testing.assert_array_equal(out[~inner], fields.sentinel(shape)[~inner])
        np.testing.assert_array_equal(a[~inner], np.asarray(a0)[~inner])
        np.testing.assert_array_equal(out2[~inner], np.asarray(o20)[~inner])
        results.append((a, b, out, out2))
    for x, y in zip(*results):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def _pointwise(a: gtscript.Field[float], out: gtscript.Field[float]):
    with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
        t0 = a + 1.0
        t1 = t0 * t0
        t2 = t1 - a
        t3 = t2 * 0.5 + t0
        out = t3 + t1


def test_point_wise_statements_share_one_loop_nest():
    cpu = gtscript.stencil("cpu", _pointwise, rebuild=True, inline_temporaries=False)
    # five statements, one loop nest: one vectorised loop (plus its epilogue) in the kernel
    assert cpu.source().count("vector.body:") == 1
    a = np.random.default_rng(1).uniform(-1, 1, (6, 5, 4))
    out = np.zeros_like(a)
    cpu(a, out)
    t0 = a + 1.0
    t1 = t0 * t0
    np.testing.assert_allclose(out, (t1 - a) * 0.5 + t0 + t1, rtol=1e-14)


# ============================================================ function results computed once per point (was test_buildspeed.py)

#: divisions each block of build_scaling.physics_source has in its source, with its
#: @gtscript.function calls counted once each: two qsat (1 each), dq (2), c, fr and t (1 each)
PHYSICS_DIVISIONS_PER_BLOCK = 7


# ------------------------------------------------------------ the physics stencil by hand

def _sat_table(t):
    tc = t - 273.16
    x = tc * 0.01
    es = 6.1078 + x * (44.39 + x * (14.29 + x * (2.65 + x * 0.303)))
    return np.where(tc > -40.0, es, 0.19 + 0.0021 * (tc + 40.0))


def _sat_table_ice(t):
    tc = t - 273.16
    x = tc * 0.01
    es = 6.1064 + x * (50.3 + x * (18.8 + x * (4.2 + x * 0.4)))
    return np.where(tc < 0.0, es, _sat_table(t))


def _qsat(t, p, ice):
    es = _sat_table_ice(t) if ice > 0.5 else _sat_table(t)
    den = p - es
    return 0.622 * es / np.where(den > 1.0, den, 1.0)


def _physics_numpy(t, p, qv, ql, qi, dt, nblocks):
    """build_scaling.physics_source(nblocks), written again with NumPy's where."""
    for b in range(1, nblocks + 1):
        f = float(f"{1.0 + 0.01 * b:.3f}")
        qs = _qsat(t, p, 0.0)
        qsi = _qsat(t, p, 1.0)
        dq = (qv - qs) / (1.0 + 2.5e6 * 2.5e6 * qs / (1004.0 * 461.5 * t * t))
        wet = dq > 0.0
        c = np.where(wet, dq * f * dt / (dt + 10.0),
                     np.where(ql > 0.0, -np.where(ql < -dq, ql, -dq), 0.0))
        fr = np.where(wet & (t < 258.16), c,
                      np.where(wet & (t < 273.16), c * (273.16 - t) / 15.0, 0.0))
        sub = np.where((qv > qsi) & (t < 273.16), 0.1 * (qv - qsi), 0.0)
        qv, ql, qi, t = (qv - c - sub, ql + c - fr, qi + fr + sub,
                         t + (2.5e6 * (c - fr) + 2.834e6 * (fr + sub)) / 1004.0)
    return t, qv, ql, qi


def _physics_inputs(fields, shape):
    """Temperatures on both sides of freezing and of -15 C, pressures well above the vapour
    pressure, humidities around saturation: every branch of every block is taken somewhere."""
    return [fields.random(shape, low=240.0, high=285.0),
            fields.random(shape, low=300.0, high=1000.0),
            fields.random(shape, low=0.0, high=0.02),
            fields.random(shape, low=0.0, high=2e-3),
            fields.random(shape, low=0.0, high=1e-3)]


@pytest.fixture(scope="module")
def physics4():
    definition, _ = build_scaling.make_definition(build_scaling.physics_source(4, "satadj4"),
                                                  "satadj4")
    return definition


@pytest.mark.parametrize("inline", [True, False])
def test_physics_matches_numpy_backend_and_hand_written(fields, physics4, inline):
    shape, halo = (9, 8, 5), 2
    origin, domain = (halo, halo, 1), (shape[0] - 2 * halo, shape[1] - 2 * halo, shape[2] - 2)
    inputs = _physics_inputs(fields, shape)
    inner = tuple(slice(o, o + d) for o, d in zip(origin, domain))
    expected = _physics_numpy(*[x[inner] for x in inputs], 0.5, 4)
    # every branch is exercised: condensation and evaporation, freezing, sublimation
    qs = _qsat(inputs[0][inner], inputs[1][inner], 0.0)
    assert (inputs[2][inner] > qs).any() and (inputs[2][inner] < qs).any()
    assert (inputs[0][inner] < 258.16).any() and (inputs[0][inner] > 273.16).any()
    results = {}
    for backend in ("cpu", "numpy"):
        options = {"inline_temporaries": inline} if backend == "cpu" else {}
        st = gtscript.stencil(backend, physics4, rebuild=True, **options)
        arrays = [x.copy() for x in inputs]
        st(*arrays, 0.5, origin=origin, domain=domain)
        for name, got, before, want in zip(["t", "qv", "ql", "qi"], [arrays[0]] + arrays[2:],
                                           [inputs[0]] + inputs[2:], expected):
            fields.assert_written_only_in(got, before, origin, domain, want, what=f"{backend} {name}")
        np.testing.assert_array_equal(arrays[1], inputs[1])  # p is only read
        results[backend] = arrays
    for got, want in zip(results["cpu"], results["numpy"]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _divisions_in_ir(stencil):
    """Divisions in the analysed IR after the compiled backends' inlining (stencil.ir())."""
    return stencil.ir().count(" / ")


@pytest.mark.parametrize("nblocks", [1, 4])
def test_function_results_are_computed_once_per_point(physics4, nblocks):
    """Each qsat(...) result and each block's dq are read by a dozen guards and updates:
    they stay one value per point, so the IR has the source's divisions, no more."""
    definition = physics4
    if nblocks != 4:
        definition, _ = build_scaling.make_definition(
            build_scaling.physics_source(nblocks, f"satadj{nblocks}"), f"satadj{nblocks}")
    cpu = gtscript.stencil("cpu", definition, rebuild=True)
    assert _divisions_in_ir(cpu) == PHYSICS_DIVISIONS_PER_BLOCK * nblocks
    # the optimised LLVM IR: each division at most in a vector loop and its scalar remainder
    # (twice, interleaved); the expansion into every reader gave 6.7 per source division
    fdiv = len(re.findall(r"\bfdiv\b", cpu.source()))
    assert fdiv <= 4 * PHYSICS_DIVISIONS_PER_BLOCK * nblocks


def _hdiff(inp: gtscript.Field[float], out: gtscript.Field[float], c: float):
    with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
        lap = 4.0 * inp - (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0])
        flx = lap[1, 0, 0] - lap
        out = inp - c * (flx - flx[-1, 0, 0])


def _point_reused(a: gtscript.Field[float], out: gtscript.Field[float]):
    with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
        once = a * 2.0 + 1.0
        twice = a / (a * a + 1.0)
        small = a + 1.0
        out = once + twice * twice + small * small


def test_which_point_reads_are_inlined():
    # read at offsets too: recomputed everywhere, no buffer left (the on-the-fly policy)
    ir = gtscript.stencil("cpu", _hdiff, rebuild=True).ir()
    assert "lap =" not in ir and "flx =" not in ir
    ir = gtscript.stencil("cpu", _point_reused, rebuild=True).ir()
    assert "once =" not in ir  # read once: inlining duplicates nothing
    assert "small =" not in ir  # one operation on leaves: cheaper than a buffer
    assert "twice =" in ir and ir.count(" / ") == 1  # read twice: computed once
    a = np.random.default_rng(3).uniform(-2, 2, (5, 4, 3))
    for backend in ("cpu", "numpy"):
        out = np.zeros_like(a)
        gtscript.stencil(backend, _point_reused)(a, out)
        twice = a / (a * a + 1.0)
        np.testing.assert_allclose(out, a * 2.0 + 1.0 + twice * twice + (a + 1.0) ** 2,
                                   rtol=1e-14)


# ------------------------------------------------------------ many computation blocks

def _blocks_definition(n, name):
    """n one-statement `with computation(PARALLEL), interval(...)` blocks, as a generator of a
    model's code may write them."""
    definition, _ = build_scaling.make_definition(build_scaling.blocks_source(n, name), name)
    return definition


def test_two_thousand_computation_blocks_build_as_few_loop_nests(fields):
    n = 2000
    definition = _blocks_definition(n, "blocks2000")
    info = {}
    cpu = gtscript.stencil("cpu", definition, rebuild=True, build_info=info)
    # consecutive PARALLEL computations over one interval share loop nests (at most 32
    # statements each): 2000 nests would be 2000 loops for LLVM's analyses
    assert info["llvm_functions"] <= n // 32 + 2
    assert cpu.source().count("vector.body:") <= n // 32 + 1
    assert info["llvm_cheap_functions"] == 0
    shape, origin, domain = (6, 5, 4), (1, 1, 0), (4, 3, 4)
    a = fields.random(shape)
    expect = fields.random(shape)
    inner = expect[1:5, 1:4, :].copy()
    for i in range(n):
        inner = inner + a[1:5, 1:4, :] * float(i + 1)
    for backend, st in (("cpu", cpu), ("numpy", gtscript.stencil("numpy", definition))):
        b = expect.copy()
        st(a, b, origin=origin, domain=domain)
        fields.assert_written_only_in(b, expect, origin, domain, inner, what=backend)


def _mixed_blocks(a: gtscript.Field[float], b: gtscript.Field[float], c: gtscript.Field[float]):
    with computation(PARALLEL), interval(...):
        t = a * 2.0
    with computation(PARALLEL), interval(...):
        b = t[1, 0, 0] + t  # reads the previous block's temporary at a neighbour
    with computation(PARALLEL), interval(...):
        c = b * 0.5
    with computation(PARALLEL), interval(1, None):  # another interval: its own nest
        c = c + b[0, 0, -1]
    with computation(FORWARD), interval(1, None):  # a sweep: never joined
        b = b[0, 0, -1] + c
    with computation(PARALLEL), interval(...):
        c = c + b
    with computation(PARALLEL), interval(...):
        c = c * a[0, 1, 0] if a > 0.0 else c


def _mixed_numpy(a, b, c):
    """_mixed_blocks by hand on the domain [:6, :4] (a is read one point further in I and J)."""
    d = np.s_[:6, :4]
    t = a * 2.0
    b, c = b[d].copy(), c[d].copy()
    b = t[1:7, :4] + t[d]
    c = b * 0.5
    c[:, :, 1:] = c[:, :, 1:] + b[:, :, :-1]
    for k in range(1, b.shape[2]):
        b[:, :, k] = b[:, :, k - 1] + c[:, :, k]
    c = c + b
    c = np.where(a[d] > 0.0, c * a[:6, 1:5], c)
    return b, c


@pytest.mark.parametrize("layout", ["C", "F", "kij"])
def test_joined_computations_match_numpy(fields, layout):
    shape = (7, 6, 5)
    origin, domain = (0, 0, 0), (6, 4, 5)
    a = fields.random(shape, layout=layout)
    b0 = fields.random(shape, layout=layout)
    c0 = fields.random(shape, layout=layout)
    want_b, want_c = _mixed_numpy(np.asarray(a), np.asarray(b0), np.asarray(c0))
    for backend in ("cpu", "numpy"):
        st = gtscript.stencil(backend, _mixed_blocks, rebuild=True)
        b, c = b0.copy(), c0.copy()
        st(a, b, c, origin=origin, domain=domain)
        fields.assert_written_only_in(b, b0, origin, domain, want_b, what=f"{backend} b")
        fields.assert_written_only_in(c, c0, origin, domain, want_c, what=f"{backend} c")


# ------------------------------------------------------------ many stencils at once

def _physics(nblocks, name):
    definition, _ = build_scaling.make_definition(build_scaling.physics_source(nblocks, name), name)
    return definition


def test_builds_on_two_threads_overlap_in_llvm():
    """The LLVM part of a build runs without the GIL and with a target machine of its own:
    two threads building distinct stencils are in LLVM at the same time (their
    build_info intervals overlap; with the GIL held the second could not start its LLVM part
    before the first ended). Not a timing: the order of events."""
    definitions = [_physics(4, f"overlap{i}") for i in range(2)]
    infos = [{}, {}]
    barrier = threading.Barrier(2)
    errors = []

    def work(i):
        try:
            barrier.wait()
            gtscript.stencil("cpu", definitions[i], rebuild=True, build_info=infos[i])
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    (s0, e0), (s1, e1) = (info["llvm_interval"] for info in infos)
    assert 0.0 < s0 < e0 and 0.0 < s1 < e1
    assert max(s0, s1) < min(e0, e1), "the two LLVM builds ran one after the other"


def test_build_info_llvm_interval_only_for_fresh_cpu_builds():
    info = {}
    gtscript.stencil("numpy", _hdiff, rebuild=True, build_info=info)
    assert info["llvm_interval"] == (0.0, 0.0)
    info = {}
    gtscript.stencil("cpu", _hdiff, rebuild=True, build_info=info)
    start, end = info["llvm_interval"]
    assert 0.0 < start < end and end - start <= info["build_time"]


def test_build_all_matches_one_by_one(fields):
    n = 6
    definitions = [_physics(1 + i % 2, f"many{i}") for i in range(n)]
    infos = [{} for _ in range(n)]
    items = [(d, {"backend": "cpu", "rebuild": True, "build_info": info})
             for d, info in zip(definitions, infos)]
    items.append((_point_reused, {"backend": "numpy"}))
    items.append(_hdiff)  # a bare definition: the default backend
    filters = list(warnings.filters)
    stencils = gtscript.build_all(items, max_workers=3)
    assert warnings.filters == filters  # the builds left the process' warning state alone
    assert len(stencils) == n + 2
    assert all(info["module_source"] == "build" for info in infos)
    assert stencils[n].backend == "numpy" and stencils[n + 1].backend == "cpu"
    shape = (5, 4, 3)
    inputs = _physics_inputs(fields, shape)
    for i, st in enumerate(stencils[:n]):
        assert st.__name__ == f"many{i}"
        arrays = [x.copy() for x in inputs]
        st(*arrays, 0.5)
        expected = _physics_numpy(*inputs, 0.5, 1 + i % 2)
        for got, want in zip([arrays[0]] + arrays[2:], expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _never_read(a: gtscript.Field[float], out: gtscript.Field[float]):
    with computation(PARALLEL), interval(...):
        unused = a * 2.0
        out = a


def test_build_all_says_each_stencils_warnings_and_raises_the_first_error():
    def broken(a: gtscript.Field[float]):
        with computation(PARALLEL), interval(...):
            a = undefined_name  # noqa: F821

    with pytest.warns(UserWarning, match="unused"):
        stencils = gtscript.build_all([(_never_read, {"rebuild": True}),
                                       (_never_read, {"backend": "numpy", "rebuild": True})])
    assert len(stencils) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # _never_read's, said above
        with pytest.raises(gtscript.GTScriptSyntaxError, match="undefined_name"):
            gtscript.build_all([_hdiff, broken, _never_read])
    with pytest.raises(TypeError, match="must be a dict"):
        gtscript.build_all([(_hdiff, "cpu")])
    with pytest.raises(ValueError, match="max_workers"):
        gtscript.build_all([_hdiff], max_workers=0)


def test_lazy_stencil_builds_once_at_first_call_from_many_threads():
    definition = _physics(1, "lazy_satadj")
    lazy = gtscript.lazy_stencil("cpu", definition, rebuild=True)
    assert lazy._implementation is None  # nothing built at decoration
    inputs = [np.full((4, 3, 2), v) for v in (260.0, 800.0, 0.01, 1e-3, 5e-4)]
    results, errors = [None] * 4, []

    def call(i):
        try:
            arrays = [x.copy() for x in inputs]
            lazy(*arrays, 0.5)
            results[i] = arrays
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    built = lazy.implementation
    assert built is lazy._implementation  # one stencil object, built once
    expected = _physics_numpy(*inputs, 0.5, 1)
    for arrays in results:
        for got, want in zip([arrays[0]] + arrays[2:], expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------ index files go with their entries

def _index_files(cache):
    return {p.name: p for p in cache.iterdir() if p.name.startswith("index-")}


def _key_line(path):
    """The cache key and the E/N flag of an index file (gtscript/_index.py's format)."""
    lines = path.read_bytes().split(b"\n", 2)
    key, flag = lines[1].split(b" ")
    return key.decode(), flag.decode()


def _scaled(a: gtscript.Field[float], out: gtscript.Field[float], s: float):
    with computation(PARALLEL), interval(...):
        out = a * s


def test_eviction_leaves_no_orphan_index_files(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(cache))
    gtscript.cache.clear()  # the decorator's memory table: every stencil below is a build
    a = gtscript.stencil("cpu", _hdiff, rebuild=True)
    gtscript.stencil("cpu", _point_reused, rebuild=True)
    gtscript.stencil("numpy", _point_reused, rebuild=True)
    files = _index_files(cache)
    assert len(files) == 3
    kinds = {name: _key_line(path) for name, path in files.items()}
    assert sorted(flag for _, flag in kinds.values()) == ["E", "E", "N"]
    (a_index,) = [n for n, (key, _) in kinds.items() if key == a.cache_key]
    # an entry deleted behind the cache's back, files of other formats, a writer that died
    shutil.rmtree(cache / a.cache_key)
    (cache / ("index-" + "0" * 64)).write_bytes(b"gtscript-index-1\n" + b"x" * 200)
    (cache / ("index-" + "1" * 64)).write_bytes(b"")
    stale = cache / ".idx-tmp-0123456789abcdef"
    stale.write_bytes(b"partial")
    os.utime(stale, (1.0, 1.0))
    gtscript.stencil("cpu", _scaled, rebuild=True)  # a store: the eviction runs
    left = _index_files(cache)
    assert a_index not in left
    assert ("index-" + "0" * 64) not in left and ("index-" + "1" * 64) not in left
    assert not stale.exists()
    assert len(left) == 3  # _point_reused's two and _scaled's
    for path in left.values():
        key, flag = _key_line(path)
        assert flag == "N" or (cache / key).is_dir()
    # a cache too small for any entry: every index that named one goes with it
    monkeypatch.setenv("GTSCRIPT_CACHE_MAX_BYTES", "1")
    gtscript.stencil("cpu", _hdiff, rebuild=True)
    left = _index_files(cache)
    assert not [p for p in cache.iterdir() if len(p.name) == 64]  # no entry left
    # numpy's, and hdiff's written after its entry was evicted (it names none)
    assert sorted(_key_line(p)[1] for p in left.values()) == ["N", "N"]
    gtscript.cache.clear()


def test_a_layout_variant_built_by_several_threads_at_once():
    """The first call in a new memory layout builds that variant of the kernel, without the
    GIL: threads calling at once all get a working kernel, and the stencil keeps one."""
    definition = _physics(2, "variant_race")
    st = gtscript.stencil("cpu", definition, rebuild=True)
    shape = (6, 5, 4)
    rng = np.random.default_rng(7)
    base = [rng.uniform(240.0, 285.0, shape), rng.uniform(300.0, 1000.0, shape),
            rng.uniform(0.0, 0.02, shape), rng.uniform(0.0, 2e-3, shape),
            rng.uniform(0.0, 1e-3, shape)]
    expected = _physics_numpy(*base, 0.5, 2)
    results, errors = [None] * 4, []
    barrier = threading.Barrier(4)

    def call(i):
        try:
            arrays = [np.asfortranarray(x) for x in base]  # a layout not built yet
            barrier.wait()
            st(*arrays, 0.5)
            results[i] = arrays
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for arrays in results:
        for got, want in zip([arrays[0]] + arrays[2:], expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
