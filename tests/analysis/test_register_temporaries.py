"""Temporaries a column sweep keeps in registers (csrc/analysis/registers.c).

A column-local temporary of a FORWARD or BACKWARD column sweep that is read only at the point
itself, each level's value written before anything reads it there, has no buffer at all in
C order: the cpu kernel keeps it in a register of the sweep (one per lane of a bundle). The
plan reports it as ``"register"``; everything else keeps its buffer. Nothing may change a
result: every case is compared bit for bit with the numpy backend and with hand-written NumPy,
in bundles, in column blocks, in Fortran order (level by level, where a temporary is a
register by the loop nests' rule instead: test_nest_registers.py) and on several threads.
"""

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, Field, computation, exp, interval, log

F64 = np.float64


def kinds(a: Field[F64], b: Field[F64], out: Field[F64], back: Field[F64]):
    with computation(FORWARD):
        with interval(0, 1):
            carried = a
            cond_carried = a
            out = a
            shared = a * 0.25
        with interval(1, None):
            level = a * 2.0 + b  # written, then read at its own level: a register
            # read at K - 1, written at every level here and in the interval below: a register
            # carried from level to level (in column blocks, the scratch)
            carried = carried[0, 0, -1] * 0.5 + level
            if a > 0.5:  # read at K - 1 but written under conditions only: a buffer
                cond_carried = cond_carried[0, 0, -1] + 1.0
            else:
                cond_carried = b
            branch = 0.0  # a register: defined before the conditional writes
            if a > 0.5:  # the condition's mask: a register
                branch = level * 3.0
                if b > 0.25:  # a nested mask
                    branch = branch + 1.0
            else:
                branch = -level
            if b > 0.5:  # defined only on both branches: a buffer (not proven defined)
                either = b
            else:
                either = -b
            n = 0.0
            while n < a * 4.0:  # a register read in a while loop's condition and body
                n = n + 1.0
            out = level + carried + branch + either + n + cond_carried
            shared = out * 0.25  # also read by the BACKWARD computation: a buffer
    with computation(BACKWARD):
        with interval(-1, None):
            back = shared
        with interval(0, -1):
            back = shared + 0.5 * back[0, 0, 1]


def kinds_numpy(a, b, out, back):
    """The same, written independently of gtscript: one column at a time."""
    ni, nj, nk = a.shape
    out, back = out.copy(), back.copy()
    for i in range(ni):
        for j in range(nj):
            carried = cond_carried = a[i, j, 0]
            out[i, j, 0] = a[i, j, 0]
            shared = np.empty(nk)
            shared[0] = a[i, j, 0] * 0.25
            for k in range(1, nk):
                x, y = a[i, j, k], b[i, j, k]
                level = x * 2.0 + y
                carried = carried * 0.5 + level
                cond_carried = cond_carried + 1.0 if x > 0.5 else y
                if x > 0.5:
                    branch = level * 3.0
                    if y > 0.25:
                        branch = branch + 1.0
                else:
                    branch = -level
                either = y if y > 0.5 else -y
                n = 0.0
                while n < x * 4.0:
                    n = n + 1.0
                out[i, j, k] = level + carried + branch + either + n + cond_carried
                shared[k] = out[i, j, k] * 0.25
            # shared at level 0 is never written: the BACKWARD sweep reads it only above
            back[i, j, nk - 1] = shared[nk - 1]
            for k in range(nk - 2, -1, -1):
                back[i, j, k] = shared[k] + 0.5 * back[i, j, k + 1]
    return out, back


REGISTERS = {"level", "branch", "n"}
BUFFERS = {"cond_carried", "either", "shared"}


def _arrays(rng, shape, order="C"):
    a, b = rng.random(shape), rng.random(shape)
    out, back = np.zeros(shape), np.zeros(shape)
    return tuple(np.asarray(x, order=order) for x in (a, b, out, back))


def _run(backend, defn, arrays, **call):
    arrays = [x.copy(order="K") for x in arrays]
    info = {}
    gtscript.stencil(backend, defn)(*arrays, exec_info=info, **call)
    return arrays, info.get("plan")


@pytest.fixture
def rng():
    return np.random.default_rng(7)


# J 11 and 13: bundles of 4 lanes and a remainder, a partial block (a plan is made per
# domain: two domains, so that each call makes its own)
@pytest.mark.parametrize("blocks, shape", [("0", (5, 11, 9)), ("1", (4, 13, 10))])
def test_register_temporaries_are_reported_and_change_no_bit(monkeypatch, rng, blocks, shape):
    monkeypatch.setenv("GTSCRIPT_COLUMN_BLOCKS", blocks)
    arrays = _arrays(rng, shape)
    got, plan = _run("cpu", kinds, arrays)
    ref, _ = _run("numpy", kinds, arrays)
    temps = plan["temporaries"]
    for name in REGISTERS:
        assert temps[name]["buffer"] == "register", name
    assert (plan["column_blocks"] > 0) == (blocks == "1")
    assert temps["carried"]["buffer"] == ("block" if blocks == "1" else "register")
    for name in BUFFERS:
        assert temps[name]["buffer"] in ("bundle", "block"), name
    assert any(name.startswith("__mask") and t["buffer"] == "register" for name, t in temps.items())
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)
    hand_out, hand_back = kinds_numpy(*arrays)
    np.testing.assert_array_equal(got[2], hand_out)
    np.testing.assert_array_equal(got[3], hand_back)


def test_fortran_order_keeps_nest_registers_and_the_same_bits(rng):
    """In Fortran order the sweeps run level by level, in loop nests over I: a temporary is a
    register there by the nests' rule (test_nest_registers.py), which reads no other level:
    `level`, read by a statement after the carried value's (which reads `carried` at K - 1
    and so starts a run of its own), keeps a tile buffer."""
    arrays = _arrays(rng, (7, 6, 8), order="F")
    got, plan = _run("cpu", kinds, arrays)
    ref, _ = _run("numpy", kinds, arrays)
    assert plan["layout"] == "F"
    temps = plan["temporaries"]
    for name in ("branch", "n"):
        assert temps[name]["buffer"] == "register", name
    assert any(name.startswith("__mask") and t["buffer"] == "register" for name, t in temps.items())
    for name in ("level", "carried", "cond_carried", "either", "shared"):
        assert temps[name]["buffer"] == "tile", name
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)
    hand_out, hand_back = kinds_numpy(*arrays)
    np.testing.assert_array_equal(got[2], hand_out)
    np.testing.assert_array_equal(got[3], hand_back)


def test_threads_and_tiles_keep_their_own_registers(monkeypatch, rng):
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", "2x3")
    arrays = _arrays(rng, (9, 10, 6))
    got, plan = _run("cpu", kinds, arrays)
    ref, _ = _run("numpy", kinds, arrays)
    assert plan["tile"] == (2, 3)
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)


def physics(t: Field[F64], q: Field[F64], p: Field[F64], out: Field[F64], dt: F64):
    # a column-physics shape: nested field conditionals, transcendental functions, a value
    # carried from the level below; one sweep over the column
    with computation(FORWARD):
        with interval(0, 1):
            flux = 0.0
            out = q
        with interval(1, None):
            flux = 0.5 * out[0, 0, -1] + 0.25 * flux[0, 0, -1]
            es = 6.1 * exp(17.3 * (t - 273.0) / (t - 35.0))
            qs = 0.622 * es / (p - es if p - es > 1.0 else 1.0)
            dq = q - qs
            c = 0.0
            if dq > 0.0:
                c = dq * dt / (dt + 10.0)
                if t < 258.0:
                    c = c * 0.5
            else:
                if q > 1e-3:
                    c = -min(q, -dq) * (p / 1e5) ** 0.286
            out = q - c + 1e-4 * log(1.0 + flux)


@pytest.mark.parametrize("blocks, shape", [("0", (64, 1, 30)), ("0", (6, 9, 20)),
                                           ("1", (3, 17, 12))])
def test_column_physics_matches_the_numpy_backend_bit_for_bit(monkeypatch, rng, blocks, shape):
    monkeypatch.setenv("GTSCRIPT_COLUMN_BLOCKS", blocks)
    t = 230.0 + 70.0 * rng.random(shape)
    q = 0.02 * rng.random(shape)
    p = 5e4 + 5e4 * rng.random(shape)
    arrays = (t, q, p, np.zeros(shape))
    got, plan = _run("cpu", physics, arrays, dt=2.0)
    ref, _ = _run("numpy", physics, arrays, dt=2.0)
    temps = plan["temporaries"]
    # flux, carried from level to level: in column blocks, in their scratch
    assert temps["flux"]["buffer"] == ("block" if blocks == "1" else "register")
    assert all(v["buffer"] == "register" for k, v in temps.items() if k != "flux")
    np.testing.assert_array_equal(got[3], ref[3])
    assert np.isfinite(got[3]).all()


def branches(a: Field[F64], b: Field[F64], c: Field[F64], out: Field[F64]):
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            # the level below read (0.0 times a finite value: out is a, bit for bit) keeps the
            # computation a sweep (without a value crossing levels it runs as PARALLEL:
            # schedule.c, test_nest_registers.py)
            out = a + 0.0 * out[0, 0, -1]
            if a > 0.3:
                inner = a * 3.0 + b  # written in the branch, read only there: a register
                if inner > 1.5:  # the nested if's mask reads it under the branch's guard
                    out = inner - 1.0
                else:
                    out = inner * b
                late = inner * 0.5  # a register too, read in the same branch
                out = out + late
                w = b + 1.0  # read in a while loop's condition: a buffer (not proven defined)
                m = 0.0
                while m < w:
                    m = m + 1.0
                out = out + m
            if b > 0.5:
                seen = b * 2.0
            if b > 0.5:  # the same condition, nothing it reads written since: a register
                out = out + seen
            if c > 1.0:
                shifted = c * 0.5
            c = c - 1.0
            if c > 1.0:  # the same words, but c changed since (a subset here): a buffer
                out = out + shifted


def branches_numpy(a, b, c):
    inner = a * 3.0 + b
    out = np.where(inner > 1.5, inner - 1.0, inner * b) + inner * 0.5
    out = out + np.ceil(b + 1.0)  # the while loop: m counts up to the first m >= w
    out = np.where(a > 0.3, out, a)
    out = np.where(b > 0.5, out + b * 2.0, out)
    out, c_new = np.where(c - 1.0 > 1.0, out + c * 0.5, out), c - 1.0
    out[..., 0], c_new[..., 0] = a[..., 0], c[..., 0]  # level 0: only `out = a`
    return out, c_new


# (the frontend warns that seen and shifted are written only under a condition: they are read
# only where it held)
@pytest.mark.filterwarnings("ignore:temporary '(seen|shifted)' may be read before")
@pytest.mark.parametrize("blocks, shape", [("0", (5, 11, 9)), ("1", (4, 13, 10))])
def test_a_temporary_written_in_a_branch_and_read_there_is_a_register(monkeypatch, rng, blocks,
                                                                     shape):
    monkeypatch.setenv("GTSCRIPT_COLUMN_BLOCKS", blocks)
    a, b, c = rng.random(shape), rng.random(shape), 3.0 * rng.random(shape)
    arrays = (a, b, c, np.zeros(shape))
    got, plan = _run("cpu", branches, arrays)
    ref, _ = _run("numpy", branches, arrays)
    temps = plan["temporaries"]
    for name in ("inner", "late", "seen"):
        assert temps[name]["buffer"] == "register", name
    for name in ("w", "shifted"):
        assert temps[name]["buffer"] in ("bundle", "block"), name
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)
    hand_out, hand_c = branches_numpy(a, b, c)
    np.testing.assert_allclose(got[3], hand_out, rtol=1e-15)
    np.testing.assert_array_equal(got[2], hand_c)
