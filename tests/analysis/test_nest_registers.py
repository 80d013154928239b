"""Temporaries a loop nest keeps in registers (csrc/analysis/nests.c, registers.c).

Outside column groups, consecutive statements with the same extent that read nothing the run
writes at another point share one loop nest (a run). A temporary whose every access lies in
one run, read only at the point itself after the run wrote it there, has no buffer: the nest
keeps it in a register, in every layout. The plan reports it as ``"register"``; anything
else keeps its tile buffer. Nothing may change a result: every case is compared bit for bit
with the numpy backend and with hand-written NumPy, in C and Fortran order, with small tiles
and several threads.
"""

import os
import sys

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, PARALLEL, Field, computation, exp, interval

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
import build_scaling  # noqa: E402
import column_physics  # noqa: E402

F64 = np.float64


def pointwise(a: Field[F64], b: Field[F64], out: Field[F64], side: Field[F64]):
    with computation(PARALLEL), interval(...):
        # read at another point below: a buffer, computed one point further in I than the
        # statements after it, so it is a run of its own
        ahead = a * b
        x = a * 2.0 + b  # written, then read at the point: a register
        branch = 0.0  # a register: defined before the conditional writes
        if a > 0.5:  # the condition's mask: a register
            branch = x * 3.0
            if b > 0.25:  # a nested mask
                branch = branch + 1.0
        else:
            branch = -x
        if b > 0.5:  # defined only on both branches: a buffer (not proven defined)
            either = b
        else:
            either = -b
        if a > 0.3:
            inner = a * 3.0 + b  # written under the condition, read only under it: a register
            branch = branch + inner
        n = 0.0
        while n < a * 4.0:  # a register read in a while loop's condition and body
            n = n + 1.0
        out = x + branch + either + n
    with computation(PARALLEL), interval(...):
        # the same interval: the two computations are one list and here one run, so `x`,
        # written above, is a register here too, and `late` is one (a shifted read of a
        # field the stencil does not write ends no run)
        late = out * 0.5 + x
        side = late * late + late + b[1, 0, 0]
    with computation(PARALLEL), interval(1, None):
        # another interval: its own runs; `x2` is a register of them
        x2 = side * 2.0 + ahead[1, 0, 0]
        side = x2 - a + x2 * x2


def pointwise_numpy(a, b, out, side):
    """The same, written independently of gtscript (whole arrays)."""
    x = a * 2.0 + b
    branch = np.where(a > 0.5, np.where(b > 0.25, x * 3.0 + 1.0, x * 3.0), -x)
    either = np.where(b > 0.5, b, -b)
    branch = np.where(a > 0.3, branch + (a * 3.0 + b), branch)
    n = np.maximum(np.ceil(a * 4.0), 0.0)  # the while loop counts up to the first n >= 4a
    out = out.copy()
    side = side.copy()
    out[...] = x + branch + either + n
    ahead = a * b
    ni = a.shape[0] - 1  # the domain: b and ahead are read one point further in I
    late = out[:ni] * 0.5 + x[:ni]
    side[:ni] = late * late + late + b[1:ni + 1]
    x2 = side[:ni, :, 1:] * 2.0 + ahead[1:ni + 1, :, 1:]
    side[:ni, :, 1:] = x2 - a[:ni, :, 1:] + x2 * x2
    return out, side


REGISTERS = {"x", "branch", "inner", "n", "late", "x2"}
BUFFERS = {"either", "ahead"}


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def _arrays(rng, shape, order):
    a, b = rng.random(shape), rng.random(shape)
    out, side = np.full(shape, -7.0), np.full(shape, -9.0)
    return tuple(np.asarray(x, order=order) for x in (a, b, out, side))


def _run(backend, defn, arrays, **call):
    arrays = [x.copy(order="K") for x in arrays]
    info = {}
    gtscript.stencil(backend, defn)(*arrays, exec_info=info, **call)
    return arrays, info.get("plan")


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("tile", [None, "2x3"])
def test_nest_registers_are_reported_in_every_layout_and_change_no_bit(monkeypatch, rng, order,
                                                                       tile):
    if tile:
        monkeypatch.setenv("GTSCRIPT_TILE_SIZE", tile)
    arrays = _arrays(rng, (8, 7, 9), order)
    domain = (7, 7, 9)
    got, plan = _run("cpu", pointwise, arrays, domain=domain)
    ref, _ = _run("numpy", pointwise, arrays, domain=domain)
    assert plan["layout"] == order
    temps = plan["temporaries"]
    for name in REGISTERS:
        assert temps[name]["buffer"] == "register", name
    for name in BUFFERS:
        assert temps[name]["buffer"] == "tile", name
    assert any(name.startswith("__mask") and t["buffer"] == "register" for name, t in temps.items())
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)
    hand_out, hand_side = pointwise_numpy(*arrays)
    np.testing.assert_array_equal(got[2][:7], hand_out[:7])
    np.testing.assert_array_equal(got[2][7:], arrays[2][7:])  # outside the domain: untouched
    np.testing.assert_allclose(got[3], hand_side, rtol=1e-15)


def test_several_threads_keep_their_own_nest_registers(monkeypatch, rng):
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", "3x2")
    arrays = _arrays(rng, (12, 10, 6), "C")
    got, plan = _run("cpu", pointwise, arrays, domain=(11, 10, 6))
    ref, _ = _run("numpy", pointwise, arrays, domain=(11, 10, 6))
    assert plan["workers"] >= 1
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)


def across_groups(a: Field[F64], out: Field[F64], col: Field[F64]):
    with computation(PARALLEL), interval(...):
        # read by the FORWARD sweep's column group (at another column: the PARALLEL
        # computation cannot join the group): a buffer
        shared = a * 3.0
        local = a * 2.0 + 1.0  # a register of this computation's run
        out = local * 2.0 + local * local
    with computation(FORWARD):
        with interval(0, 1):
            col = out + shared[1, 0, 0]
        with interval(1, None):
            level = out * 0.25 + 1.0  # a register of the sweep
            col = level + level * level + shared[1, 0, 0] + 0.5 * col[0, 0, -1]


def test_a_temporary_also_read_by_a_column_group_keeps_its_buffer(rng):
    a = rng.random((5, 6, 7))
    arrays = (a, np.zeros(a.shape), np.zeros(a.shape))
    got, plan = _run("cpu", across_groups, arrays, domain=(4, 6, 7))
    ref, _ = _run("numpy", across_groups, arrays, domain=(4, 6, 7))
    temps = plan["temporaries"]
    assert temps["local"]["buffer"] == "register"
    assert temps["level"]["buffer"] == "register"
    assert temps["shared"]["buffer"] == "tile"
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)
    local = a * 2.0 + 1.0
    out = local * 2.0 + local * local
    np.testing.assert_array_equal(got[1][:4], out[:4])
    level = out[:4] * 0.25 + 1.0
    hand = level + level * level + a[1:] * 3.0
    hand[:, :, 0] = out[:4, :, 0] + a[1:, :, 0] * 3.0
    for k in range(1, a.shape[2]):
        hand[:, :, k] += 0.5 * hand[:, :, k - 1]
    np.testing.assert_allclose(got[2][:4], hand, rtol=1e-14)


def _chain_source(n, shifted_reads):
    """n point-wise statements, each writing its own temporary; with shifted_reads, a second
    computation reads every one of them at I + 1 (buffers: the runs count their stores)."""
    lines = ["def chain(a: Field[np.float64], out: Field[np.float64], c: np.float64):",
             "    with computation(PARALLEL), interval(...):", "        t0 = a * c"]
    for k in range(1, n):
        guard = f" if t{k - 1} > 0.5 else t{k - 1} * 0.75" if k % 3 == 0 else ""
        lines.append(f"        t{k} = 0.5 * t{k - 1} + 0.25 * (a - t{k - 1} * c){guard}")
    reads = [f"t{k}[1, 0, 0]" if shifted_reads else f"t{k}" for k in range(n)]
    if shifted_reads:
        lines.append("    with computation(PARALLEL), interval(...):")
    lines.append("        out = " + " + ".join(reads))
    return "\n".join(lines) + "\n"


def _chain_numpy(a, c, n, shifted_reads):
    t = a * c
    total = t.copy()
    for k in range(1, n):
        nxt = 0.5 * t + 0.25 * (a - t * c)
        t = np.where(t > 0.5, nxt, t * 0.75) if k % 3 == 0 else nxt
        total = total + t
    return total[1:] if shifted_reads else total


@pytest.mark.parametrize("shifted_reads", [False, True])
def test_long_runs_of_point_wise_statements(tmp_path, rng, shifted_reads):
    """120 statements: one run whose temporaries are all registers; or, with every temporary
    read at another point, runs of at most NEST_RUN_MAX_STORES stores (analysis.h), all
    buffers. The same bits as the numpy backend either way."""
    n = 120
    path = tmp_path / f"chain_{shifted_reads}.py"
    path.write_text("import numpy as np\nfrom gtscript import *\n" + _chain_source(n, shifted_reads))
    sys.path.insert(0, str(tmp_path))
    try:
        module = __import__(path.stem)
    finally:
        sys.path.remove(str(tmp_path))
    a = rng.random((6, 5, 4))
    out = np.full(a.shape, -1.0)
    domain = (5, 5, 4) if shifted_reads else a.shape
    got, plan = _run("cpu", module.chain, (a, out), c=0.9, domain=domain)
    ref, _ = _run("numpy", module.chain, (a, out), c=0.9, domain=domain)
    kinds = {t["buffer"] for t in plan["temporaries"].values()}
    assert kinds == ({"tile"} if shifted_reads else {"register"})
    np.testing.assert_array_equal(got[1], ref[1])
    hand = _chain_numpy(a, 0.9, n, shifted_reads)
    np.testing.assert_allclose(got[1][: hand.shape[0]], hand, rtol=1e-13)


def physics_point(t: Field[F64], q: Field[F64], out: Field[F64], dt: F64):
    with computation(PARALLEL), interval(...):
        es = 6.1 * exp(17.3 * (t - 273.0) / (t - 35.0))
        dq = q - 0.622 * es / 1000.0
        c = 0.0
        if dq > 0.0:
            c = dq * dt / (dt + 10.0)
            if t < 258.0:
                c = c * 0.5
        out = q - c


@pytest.mark.parametrize("order", ["C", "F"])
def test_saturation_adjustment_keeps_every_temporary_in_registers(rng, order):
    """The benchmark's satadj stencil (benchmarks/build_scaling.py): every temporary a
    register in both layouts, and the result of the benchmark's hand-written NumPy twin."""
    case = column_physics.Satadj(nblocks=3, nlev=12)
    arrays = {k: np.asarray(v, order=order) for k, v in case.inputs(10).items()}
    names = ("t", "p", "qv", "ql", "qi")
    defn = build_scaling_stencil(3)
    got, plan = _run("cpu", defn, [arrays[k] for k in names], dt=case.scalars["dt"])
    ref, _ = _run("numpy", defn, [arrays[k] for k in names], dt=case.scalars["dt"])
    assert {t["buffer"] for t in plan["temporaries"].values()} == {"register"}
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)
    hand = {k: v.copy() for k, v in arrays.items()}
    case.numpy(hand)
    for k, x in zip(names, got):
        np.testing.assert_allclose(x, hand[k], rtol=1e-13, atol=1e-300)
    # and a shape with a transcendental function under a guard
    shape = (9, 4, 5)
    pt = 230.0 + 70.0 * rng.random(shape)
    q = 0.02 * rng.random(shape)
    got, plan = _run("cpu", physics_point, (np.asarray(pt, order=order), q, np.zeros(shape)),
                     dt=2.0)
    ref, _ = _run("numpy", physics_point, (pt, q, np.zeros(shape)), dt=2.0)
    assert all(v["buffer"] == "register" for v in plan["temporaries"].values())
    np.testing.assert_array_equal(got[2], ref[2])


_SATADJ = {}


def build_scaling_stencil(nblocks):
    """The satadj definition of benchmarks/build_scaling.py, from a module file (GTScript reads
    a function's source)."""
    if nblocks not in _SATADJ:
        import importlib.util
        import tempfile
        folder = tempfile.mkdtemp(prefix="gtscript-satadj-")
        path = os.path.join(folder, f"satadj_{nblocks}.py")
        with open(path, "w") as f:
            f.write("from gtscript import *\nimport gtscript\n"
                    + build_scaling.physics_source(nblocks, "satadj"))
        spec = importlib.util.spec_from_file_location(f"satadj_{nblocks}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _SATADJ[nblocks] = module.satadj
    return _SATADJ[nblocks]


def read_then_written(a: Field[F64], b: Field[F64], out: Field[F64]):
    with computation(PARALLEL), interval(...):
        out = a[0, 0, -1] + b
    with computation(PARALLEL), interval(...):
        # one list with the computation above; a nest holding both statements would have
        # overwritten a at K - 1 before the first one reads it there: two runs
        a = b * 2.0


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_run_ends_before_a_write_of_what_it_read_at_another_point(rng, order):
    a = np.asarray(rng.random((6, 5, 5)), order=order)
    b, out = rng.random(a.shape), np.zeros(a.shape)
    origin, domain = (0, 0, 1), (6, 5, 4)
    got, _ = _run("cpu", read_then_written, (a, b, out), origin=origin, domain=domain)
    ref, _ = _run("numpy", read_then_written, (a, b, out), origin=origin, domain=domain)
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(got[2][:, :, 1:], a[:, :, :-1] + b[:, :, 1:])
    np.testing.assert_array_equal(got[0][:, :, 1:], b[:, :, 1:] * 2.0)
    np.testing.assert_array_equal(got[0][:, :, 0], a[:, :, 0])


@pytest.mark.parametrize("policy", ["FORWARD", "BACKWARD"])
def test_a_sweep_in_fortran_order_keeps_its_point_wise_temporaries_in_registers(tmp_path, policy):
    """The satadj stencil as one FORWARD or BACKWARD computation: in C order a column sweep
    (the sweeps' registers), in Fortran order level by level in loop nests over I, every
    temporary a register of them; the numpy backend's bits in both."""
    source = build_scaling.physics_source(2, "satsweep").replace(
        "computation(PARALLEL)", f"computation({policy})")
    path = tmp_path / f"satsweep_{policy.lower()}.py"
    path.write_text("from gtscript import *\nimport gtscript\n" + source)
    sys.path.insert(0, str(tmp_path))
    try:
        module = __import__(path.stem)
    finally:
        sys.path.remove(str(tmp_path))
    case = column_physics.Satadj(nblocks=2, nlev=10)
    names = ("t", "p", "qv", "ql", "qi")
    ref = None
    for order in ("C", "F"):
        arrays = [np.asarray(case.inputs(6)[k], order=order) for k in names]
        got, plan = _run("cpu", module.satsweep, arrays, dt=case.scalars["dt"])
        assert plan["layout"] == order
        assert {t["buffer"] for t in plan["temporaries"].values()} == {"register"}
        if ref is None:
            ref, _ = _run("numpy", module.satsweep, arrays, dt=case.scalars["dt"])
        for x, y in zip(got, ref):
            np.testing.assert_array_equal(x, y)
