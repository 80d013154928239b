"""Build speed (issue 14): per-phase build times, and large generated stencils that the cpu
backend compiles as several functions (parts) and that still match the numpy backend and
hand-written NumPy."""

import os
import sys

import numpy as np
import pytest

import gtscript

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benchmarks"))
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
