"""Column groups: FORWARD/BACKWARD sweeps run column by column, several columns at a time.

Where the analysis finds that columns never exchange values (schedule.c), the cpu backend
sweeps bundles of adjacent J columns together, carries values read at the previous level in
registers, keeps column-local temporaries in one bundle-sized buffer and runs PARALLEL
computations of the group column by column too. None of that may change a result: every
case here is compared bit for bit with the numpy backend (which runs level by level over
whole planes), on widths that leave partial bundles, on small tiles and on every layout;
the tridiagonal solver also against hand-written NumPy.
"""

import re

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, interval
from shared_stencils import run_cpu_and_numpy, tridiagonal_solver

F64, F32, I64 = np.float64, np.float32, np.int64


thomas, thomas32 = tridiagonal_solver(F64), tridiagonal_solver(F32)


def guarded_carry(a: Field[F64], out: Field[F64]):
    # `t` is written under a condition: not carried in a register, read back from memory
    with computation(FORWARD):
        with interval(0, 1):
            t = a
            s = a
        with interval(1, None):
            t = 0.5 * a
            if a > 0.5:
                t = t[0, 0, -1] + a
            s = s[0, 0, -1] * 0.5 + t[0, 0, -1]
    with computation(PARALLEL), interval(...):
        out = s + t


def rewritten_per_level(a: Field[F64], out: Field[F64]):
    # two writes of `t` per level: the next level sees the second one
    with computation(FORWARD):
        with interval(0, 1):
            t = a
            out = t
        with interval(1, None):
            u = t[0, 0, -1] * 2.0
            t = a + u
            t = t * 0.25 + t[0, 0, -1]
            out = t + u


def mixed_types(a: Field[F64], out: Field[F64], count: Field[I64]):
    # carried bool and int values
    with computation(FORWARD):
        with interval(0, 1):
            seen = a > 0.7
            n = 0
        with interval(1, None):
            seen = seen[0, 0, -1] or a > 0.7
            n = n[0, 0, -1] + (1 if a > 0.5 else 0)
    with computation(PARALLEL), interval(...):
        out = a if seen else -a
        count = n


def while_in_sweep(a: Field[F64], out: Field[F64]):
    with computation(FORWARD):
        with interval(0, 1):
            t = a
        with interval(1, None):
            t = a + t[0, 0, -1]
            while t > 1.0:
                t = t - t[0, 0, -1] * 0.5 - 0.25
    with computation(PARALLEL), interval(...):
        out = t


def backward_field(a: Field[F64], x: Field[F64]):
    # an argument carried down a BACKWARD sweep, with K offsets in the interval bounds
    with computation(BACKWARD):
        with interval(-2, None):
            x = a
        with interval(1, -2):
            x = a - 0.5 * x[0, 0, 1]
        with interval(0, 1):
            x = x[0, 0, 1] + x[0, 0, 2]


def shifted_after_group(a: Field[F64], out: Field[F64]):
    # `t` is written by a column group and read shifted afterwards: a tile buffer
    with computation(FORWARD):
        with interval(0, 1):
            t = a
        with interval(1, None):
            t = a + 0.5 * t[0, 0, -1]
    with computation(PARALLEL), interval(...):
        out = t[1, 0, 0] - t[0, -1, 0]


def split_groups(a: Field[F64], out: Field[F64]):
    # `t` is written by one column group and read (unshifted) by another one: the computation
    # between them computes `u` on a halo, so the two groups cannot share a column loop
    with computation(FORWARD):
        with interval(0, 1):
            t = a
        with interval(1, None):
            t = a + 0.5 * t[0, 0, -1]
    with computation(PARALLEL), interval(...):
        u = 2.0 * a
    with computation(FORWARD):
        with interval(0, 1):
            out = t + u[1, 0, 0]
        with interval(1, None):
            out = t - u[1, 0, 0] + 0.25 * out[0, 0, -1]


SHIFTED = (shifted_after_group, split_groups)


def _inputs(defn, rng, shape, order="C"):
    n = {thomas: 5, thomas32: 5, mixed_types: 3}.get(defn, 2)
    dtype = F32 if defn is thomas32 else F64
    arrays = [np.asarray(rng.random(shape), dtype=dtype, order=order) for _ in range(n)]
    if defn in (thomas, thomas32):
        arrays[1] += 4.0
    if defn is mixed_types:
        arrays[2] = np.zeros(shape, I64, order=order)
    return arrays


def _compare(defn, arrays, **call):
    got, want = run_cpu_and_numpy(defn, arrays, **call)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    return got


CASES = [thomas, thomas32, guarded_carry, rewritten_per_level, mixed_types, while_in_sweep,
         backward_field, shifted_after_group, split_groups]


@pytest.mark.parametrize("nj", [1, 3, 4, 5, 9, 13])
@pytest.mark.parametrize("defn", CASES, ids=lambda d: d.__name__)
def test_bundles_and_partial_bundles_match_the_reference(rng, defn, nj):
    shape = (6 if defn in SHIFTED else 3, nj + (2 if defn in SHIFTED else 0), 7)
    arrays = _inputs(defn, rng, shape)
    if defn in SHIFTED:
        _compare(defn, arrays, origin=(0, 1, 0), domain=(5, nj, 7))
    else:
        _compare(defn, arrays)


@pytest.mark.parametrize("tile", ["1x1", "2x3", "3x5", "4x9"])
@pytest.mark.parametrize("defn", [thomas, mixed_types, shifted_after_group, split_groups],
                         ids=lambda d: d.__name__)
def test_any_tile_size(monkeypatch, rng, defn, tile):
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", tile)
    arrays = _inputs(defn, rng, (9, 14, 5))
    _compare(defn, arrays, origin=(0, 1, 0), domain=(8, 12, 5))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("defn", [thomas, rewritten_per_level, mixed_types], ids=lambda d: d.__name__)
def test_every_layout(rng, defn, order):
    _compare(defn, _inputs(defn, rng, (7, 10, 6), order))
    # a K-strided view: neither K nor I is the unit stride
    base = _inputs(defn, rng, (7, 10, 12))
    _compare(defn, [a[:, :, ::2] for a in base])


def test_thomas_against_hand_written_numpy(rng):
    a, b, c, d, x = _inputs(thomas, rng, (5, 11, 40))
    gtscript.stencil("cpu", thomas)(a, b, c, d, x)
    n = a.shape[2]
    matrix = np.zeros(a.shape[:2] + (n, n))
    idx = np.arange(n)
    matrix[..., idx, idx] = b
    matrix[..., idx[1:], idx[:-1]] = a[..., 1:]
    matrix[..., idx[:-1], idx[1:]] = c[..., :-1]
    want = np.linalg.solve(matrix, d[..., None])[..., 0]
    np.testing.assert_allclose(x, want, rtol=1e-12, atol=1e-12)


def test_carried_argument_is_also_stored(rng):
    a = rng.random((4, 6, 9))
    x = np.zeros_like(a)
    gtscript.stencil("cpu", backward_field)(a, x)
    want = np.zeros_like(a)
    want[:, :, -2:] = a[:, :, -2:]
    for k in range(6, 0, -1):
        want[:, :, k] = a[:, :, k] - 0.5 * want[:, :, k + 1]
    want[:, :, 0] = want[:, :, 1] + want[:, :, 2]
    np.testing.assert_allclose(x, want, rtol=1e-15)


# ---------------------------------------------------------------------- the schedule


def _computations(defn):
    return [line.strip() for line in gtscript.stencil("cpu", defn).ir().splitlines()
            if line.strip().startswith("computation(")]


def _temporaries(defn):
    return {m.group(1): line for line in gtscript.stencil("cpu", defn).ir().splitlines()
            if (m := re.match(r"\s+temporary (\w+):", line))}


def test_schedule_is_visible_in_the_ir():
    comps = _computations(thomas)
    # float64: the four lanes of a bundle are spread over the tile's row (schedule.c)
    assert comps[0].startswith("computation(FORWARD)  # column by column (K contiguous), 4 spread")
    assert comps[0].endswith("shares the column loop with the next")
    assert comps[1] == ("computation(BACKWARD)  # column by column (K contiguous), 4 spread "
                        "columns at a time")
    # float32: adjacent columns
    assert _computations(thomas32)[1] == ("computation(BACKWARD)  # column by column "
                                          "(K contiguous), 4 columns at a time")
    temps = _temporaries(thomas)
    assert temps["cp"].endswith("column-local") and temps["dp"].endswith("column-local")


def test_parallel_joins_a_sweep_but_not_a_shifted_reader():
    comps = _computations(mixed_types)
    assert "shares the column loop" in comps[0] and "column by column" in comps[1]
    assert all(t.endswith("column-local") for t in _temporaries(mixed_types).values())
    # read shifted afterwards: `t` is computed on a halo, so its sweep runs level by level
    assert _computations(shifted_after_group) == ["computation(FORWARD)", "computation(PARALLEL)"]
    comps = _computations(split_groups)
    assert "column by column" in comps[0] and "shares" not in comps[0]
    assert comps[1] == "computation(PARALLEL)" and "column by column" in comps[2]
    temps = _temporaries(split_groups)
    assert not temps["t"].endswith("column-local") and not temps["u"].endswith("column-local")


def test_only_the_cpu_backend_schedules_columns():
    for backend in ("numpy", "cuda"):
        text = gtscript.stencil(backend, thomas).ir()
        assert "column" not in text, backend


def test_a_parallel_computation_alone_stays_level_by_level():
    def alone(a: Field[F64], out: Field[F64]):
        with computation(PARALLEL), interval(...):
            out = 2.0 * a

    assert _computations(alone) == ["computation(PARALLEL)"]


def test_carried_values_stay_in_registers():
    # the FORWARD sweep of the solver loads cp/dp of the previous level from no buffer: the
    # loop body's phis carry them, one per column of the bundle
    ir = gtscript.stencil("cpu", thomas).source()
    assert len(re.findall(r"= phi (?:double|<\d+ x double>)", ir)) >= 2


def test_fortran_order_runs_level_by_level_with_tile_buffers(rng):
    # with I contiguous the sweeps run level by level, vectorised along I: a column-local
    # temporary then needs a tile buffer, not a bundle's
    arrays = _inputs(thomas, rng, (9, 7, 6), order="F")
    info = {}
    gtscript.stencil("cpu", thomas)(*arrays, exec_info=info)
    plan = info["plan"]
    assert plan["layout"] == "F"
    assert {t: b["buffer"] for t, b in plan["temporaries"].items()} == {"cp": "tile", "dp": "tile"}
    c_order = _inputs(thomas, rng, (9, 7, 6))
    gtscript.stencil("cpu", thomas)(*c_order, exec_info=info)
    # C order: the column blocks' scratch (test_column_blocks.py), or with blocks off the
    # bundle buffers
    assert {t: b["buffer"] for t, b in info["plan"]["temporaries"].items()} == {"cp": "block",
                                                                                 "dp": "block"}



def long_sweep(a: Field[np.float64], out: Field[np.float64]):
    # two blocks of ten assignments and a nested field conditional per level (over 128
    # expression nodes): independent work enough at each level that one column at a time
    # keeps the core busy (schedule.c, GT_LANES_MAX_NODES)
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            x0 = a * 1.5 + out[0, 0, -1] * 0.25
            x1 = x0 * x0 - 0.5
            x2 = x1 + x0 * 0.125
            x3 = x2 * 0.5 if x2 > 0.25 else -x2
            x4 = x3 + a
            x5 = x4 * x1
            x6 = x5 - x0
            x7 = x6 * 0.75
            x8 = x7 + x3
            x9 = x8 * x8
            y = 0.0
            if x9 > 0.5:
                y = x9 - 0.5
                if x1 > 0.0:
                    y = y * 2.0
            else:
                y = x9 + x2
            z0 = y * 1.5 + x4 * 0.25
            z1 = z0 * z0 - 0.5
            z2 = z1 + z0 * 0.125
            z3 = z2 * 0.5 if z2 > 0.25 else -z2
            z4 = z3 + a
            z5 = z4 * z1
            z6 = z5 - z0
            z7 = z6 * 0.75
            z8 = z7 + z3
            z9 = z8 * z8
            w = 0.0
            if z9 > 0.5:
                w = z9 - 0.5
                if z1 > 0.0:
                    w = w * 2.0
            else:
                w = z9 + z2
            out = w * 0.5 + z4 * 0.25


def _long_sweep_numpy(a):
    hand = a.copy()
    for k in range(1, a.shape[2]):
        prev, ak = hand[..., k - 1], a[..., k]
        x0 = ak * 1.5 + prev * 0.25
        for _ in range(2):
            x1 = x0 * x0 - 0.5
            x2 = x1 + x0 * 0.125
            x3 = np.where(x2 > 0.25, x2 * 0.5, -x2)
            x4 = x3 + ak
            x5 = x4 * x1
            x6 = x5 - x0
            x7 = x6 * 0.75
            x8 = x7 + x3
            x9 = x8 * x8
            y = np.where(x9 > 0.5, np.where(x1 > 0.0, (x9 - 0.5) * 2.0, x9 - 0.5), x9 + x2)
            x0 = y * 1.5 + x4 * 0.25
        hand[..., k] = y * 0.5 + x4 * 0.25
    return hand


def test_a_long_sweep_runs_one_column_at_a_time_with_the_same_bits(rng):
    assert _computations(long_sweep)[0] == (
        "computation(FORWARD)  # column by column (K contiguous), one at a time")
    a = rng.random((5, 9, 12))
    out = {b: np.zeros_like(a) for b in ("cpu", "numpy")}
    for b in out:
        gtscript.stencil(b, long_sweep)(a, out[b])
    np.testing.assert_array_equal(out["cpu"], out["numpy"])
    np.testing.assert_allclose(out["cpu"], _long_sweep_numpy(a), rtol=1e-13, atol=1e-13)
