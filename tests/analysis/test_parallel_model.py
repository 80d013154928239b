"""The parallel model, enforced when a stencil is built (and, for aliases, when it is called).

Rules (DESIGN section 1, seed gtscript-parallel-model.txt): a definition whose meaning would
depend on the order in which points are executed is rejected with a GTScriptSemanticError
pointing at the source line. Each rule has a rejecting test built from the seed's own examples
and a legal near miss that must build, run, and match both the numpy backend and a
hand-written NumPy reference. The extent examples of the GridTools seed are asserted exactly.
"""

import inspect
import linecache
import warnings

import numpy as np
import pytest

import gtscript
from gtscript import (
    BACKWARD,
    FORWARD,
    IJ,
    PARALLEL,
    Field,
    GTScriptSemanticError,
    GTScriptSyntaxError,
    K,
    computation,
    interval,
)

F64 = Field[np.float64]


def build(definition, backend="cpu"):
    return gtscript.stencil(backend=backend, definition=definition, rebuild=True)


def line_of(definition, marker):
    """Absolute file line of the first line of `definition` containing `marker`."""
    lines, first = inspect.getsourcelines(definition)
    for i, text in enumerate(lines):
        if marker in text:
            return first + i
    raise AssertionError(f"marker {marker!r} not in {definition.__name__}")


def rejects(definition, marker, *words, cls=GTScriptSemanticError):
    """Building fails with `cls` on the line holding `marker`; the message has `words`."""
    with pytest.raises(cls) as info:
        build(definition)
    error = info.value
    assert type(error) is cls
    assert error.lineno == line_of(definition, marker), str(error)
    assert error.filename == __file__
    for word in words:
        assert word in error.msg, f"{word!r} not in {error.msg!r}"
    return error


def run_both(definition, arrays, **call):
    """Run on the cpu and numpy backends on copies of `arrays`; return both results."""
    results = []
    for backend in ("cpu", "numpy"):
        stencil = build(definition, backend)
        copies = {name: value.copy() for name, value in arrays.items()}
        stencil(**copies, **call)
        results.append(copies)
    return results


def assert_all_equal(results, reference):
    for name, expected in reference.items():
        for backend, result in zip(("cpu", "numpy"), results):
            np.testing.assert_allclose(result[name], expected, rtol=1e-13, atol=0,
                                       err_msg=f"{name} ({backend})")


@pytest.fixture
def rng():
    return np.random.default_rng(4)


# ================================================================= rule 1: write after read

def seed_write_after_read(a: F64, b: F64):
    with computation(FORWARD):
        with interval(...):
            b = a[1, 1, 0]  # read
            a = 0.0  # write


def seed_shifted_self_assignment(a: F64):
    with computation(FORWARD):
        with interval(...):
            a = a[1, 1, 0]  # here


def seed_shifted_self_assignment_with_temporary(a: F64):
    with computation(PARALLEL):
        with interval(...):
            tmp = a  # tmp
    with computation(PARALLEL):
        with interval(...):
            a = tmp[1, 1, 0]  # here


def test_rule1_write_after_read_with_offset():
    error = rejects(seed_write_after_read, "# write", "write after read with offset", "'a'",
                    f"line {line_of(seed_write_after_read, '# read')}")
    assert error.offset == error.text.index("a = 0.0") + 1


def test_rule1_shifted_self_assignment():
    rejects(seed_shifted_self_assignment, "# here", "shifted self-assignment", "'a'")


def test_rule1_shifted_self_assignment_through_a_temporary_of_an_earlier_computation():
    rejects(seed_shifted_self_assignment_with_temporary, "# here", "shifted self-assignment",
            "temporary 'tmp'", f"line {line_of(seed_shifted_self_assignment_with_temporary, '# tmp')}")


def read_after_write_with_offset(inp: F64, a: F64, b: F64):
    with computation(PARALLEL), interval(...):
        a = 2.0 * inp
        b = a[1, 0, 0] + a[-1, 0, 0] + a[0, -2, 0]


def test_rule1_near_miss_read_after_write_with_offset_runs(rng):
    shape = (9, 8, 3)
    inp = rng.standard_normal(shape)
    arrays = {"inp": inp, "a": np.zeros(shape), "b": np.zeros(shape)}
    results = run_both(read_after_write_with_offset, arrays, origin=(1, 2, 0), domain=(7, 6, 3))
    a = np.zeros(shape)
    a[0:9, 0:8] = 2.0 * inp[0:9, 0:8]  # written on the extended domain: I <-1, 1>, J <-2, 0>
    b = np.zeros(shape)
    b[1:8, 2:8] = a[2:9, 2:8] + a[0:7, 2:8] + a[1:8, 0:6]
    assert_all_equal(results, {"b": b})
    for result in results:  # `a` is exact where the stencil had to compute it
        np.testing.assert_allclose(result["a"][0:9, 0:8], a[0:9, 0:8])


def temporary_written_after_read(inp: F64, out1: F64, out2: F64):
    with computation(PARALLEL), interval(...):
        tmp = inp
        out1 = tmp[1, 0, 0]
        tmp = 2.0 * inp  # a temporary may be written after it was read with an offset
        out2 = tmp[-1, 0, 0]


def test_rule1_near_miss_temporary_written_after_read_runs(rng):
    shape = (10, 4, 3)
    inp = rng.standard_normal(shape)
    arrays = {"inp": inp, "out1": np.zeros(shape), "out2": np.zeros(shape)}
    results = run_both(temporary_written_after_read, arrays, origin=(1, 0, 0), domain=(8, 4, 3))
    out1, out2 = np.zeros(shape), np.zeros(shape)
    out1[1:9] = inp[2:10]
    out2[1:9] = 2.0 * inp[0:8]
    assert_all_equal(results, {"out1": out1, "out2": out2})


def temporary_shifted_self_assignment(inp: F64, out: F64):
    with computation(PARALLEL), interval(...):
        t = inp
        t = t[-1, 0, 0] + t[0, 1, 0]  # evaluated everywhere first, then assigned
        out = t


def test_shifted_self_assignment_of_a_temporary_is_evaluated_then_assigned(rng):
    shape = (9, 7, 2)
    inp = rng.standard_normal(shape)
    results = run_both(temporary_shifted_self_assignment, {"inp": inp, "out": np.zeros(shape)},
                       origin=(1, 0, 0), domain=(8, 6, 2))
    out = np.zeros(shape)
    out[1:9, 0:6] = inp[0:8, 0:6] + inp[1:9, 1:7]
    assert_all_equal(results, {"out": out})


def parallel_k_self_assignment(a: F64):
    with computation(PARALLEL), interval(1, None):
        a = a[0, 0, -1] + 1.0  # here


def forward_k_self_assignment(a: F64):
    with computation(FORWARD), interval(1, None):
        a = a[0, 0, -1] + a


def test_k_self_assignment_is_rejected_in_parallel_and_accumulates_in_forward(rng):
    rejects(parallel_k_self_assignment, "# here", "another K level", "PARALLEL", "FORWARD")
    a = rng.standard_normal((3, 2, 6))
    assert_all_equal(run_both(forward_k_self_assignment, {"a": a}), {"a": np.cumsum(a, axis=2)})


# ======================================================= extents (GridTools seed examples)

def very_simple_example(b: F64, c: F64, e: F64):
    with computation(PARALLEL), interval(...):
        a = b[-1, 0, 0] + b[1, 0, 0] + c[0, 0, 0] + c[1, 0, 0]  # f0(b<-1,1>, c<0,1>)
        d = b[-2, 0, 0] + b[0, 0, 0] + c[-1, 0, 0] + c[2, 0, 0]  # f1(b<-2,0>, c<-1,2>)
        e = a[-1, 0, 0] + a[2, 0, 0] + d[-2, 0, 0] + d[2, 0, 0] + c[-1, 0, 0] + c[1, 0, 0]


def very_simple_example_all_arguments(a: F64, b: F64, c: F64, d: F64, e: F64):
    with computation(PARALLEL), interval(...):
        a = b[-1, 0, 0] + b[1, 0, 0] + c[0, 0, 0] + c[1, 0, 0]
        d = b[-2, 0, 0] + b[0, 0, 0] + c[-1, 0, 0] + c[2, 0, 0]
        e = a[-1, 0, 0] + a[2, 0, 0] + d[-2, 0, 0] + d[2, 0, 0] + c[-1, 0, 0] + c[1, 0, 0]


def more_complex_example(b: F64, c: F64, e: F64):
    with computation(PARALLEL), interval(...):
        a = b[-1, 0, 0] + b[1, 0, 0] + c[0, 0, 0] + c[1, 0, 0]  # f0(b<-1,1>, c<0,1>)
        d = b[-2, 0, 0] + b[0, 0, 0] + a[-1, 0, 0] + a[2, 0, 0]  # f1(b<-2,0>, a<-1,2>)
        e = a[-1, 0, 0] + a[2, 0, 0] + d[-2, 0, 0] + d[2, 0, 0] + c[-1, 0, 0] + c[1, 0, 0]


def more_complex_example_all_arguments(a: F64, b: F64, c: F64, d: F64, e: F64):
    with computation(PARALLEL), interval(...):
        a = b[-1, 0, 0] + b[1, 0, 0] + c[0, 0, 0] + c[1, 0, 0]
        d = b[-2, 0, 0] + b[0, 0, 0] + a[-1, 0, 0] + a[2, 0, 0]
        e = a[-1, 0, 0] + a[2, 0, 0] + d[-2, 0, 0] + d[2, 0, 0] + c[-1, 0, 0] + c[1, 0, 0]


def catching_bad_dependencies(b: F64, c: F64, d: F64, e: F64):
    with computation(PARALLEL), interval(...):
        a = b[-1, 0, 0] + b[1, 0, 0] + c[0, 0, 0] + c[1, 0, 0]  # f0 reads c<0,1>
        c = b[-2, 0, 0] + b[0, 0, 0] + a[-1, 0, 0] + a[2, 0, 0]  # f1 writes c
        e = a[-1, 0, 0] + a[2, 0, 0] + d[-2, 0, 0] + d[2, 0, 0] + c[-1, 0, 0] + c[1, 0, 0]


def i_extents(stencil):
    """Per field, <lo, hi> along I; J and K must be <0, 0> (the seed's examples are 1-D)."""
    out = {}
    for name, info in stencil.field_info.items():
        (ilo, ihi), jext, kext = info["extent"]
        assert jext == (0, 0) and kext == (0, 0), name
        out[name] = (ilo, ihi)
    return out


def test_extents_very_simple_example():
    # the seed's final map: b -> <-4,3>, c -> <-3,4>, e -> <0,0>; a -> <-1,2>, d -> <-2,2>
    assert i_extents(build(very_simple_example)) == {"b": (-4, 3), "c": (-3, 4), "e": (0, 0)}
    stencil = build(very_simple_example_all_arguments)
    assert i_extents(stencil) == {"a": (-1, 2), "b": (-4, 3), "c": (-3, 4), "d": (-2, 2), "e": (0, 0)}
    intents = {name: info["intent"] for name, info in stencil.field_info.items()}
    assert intents == {"a": "inout", "b": "in", "c": "in", "d": "inout", "e": "out"}
    assert stencil.halo == ((4, 4), (0, 0), (0, 0))


def test_extents_more_complex_example():
    # the seed's final map: a -> <-3,4>, b -> <-4,5>, c -> <-3,5>, d -> <-2,2>, e -> <0,0>
    assert i_extents(build(more_complex_example)) == {"b": (-4, 5), "c": (-3, 5), "e": (0, 0)}
    stencil = build(more_complex_example_all_arguments)
    assert i_extents(stencil) == {"a": (-3, 4), "b": (-4, 5), "c": (-3, 5), "d": (-2, 2), "e": (0, 0)}
    assert stencil.halo == ((4, 5), (0, 0), (0, 0))


def test_extents_catching_bad_dependencies_is_rejected():
    rejects(catching_bad_dependencies, "# f1 writes c", "'c'", "horizontal offset",
            f"line {line_of(catching_bad_dependencies, '# f0 reads c')}", "temporary 'a'")


@pytest.mark.parametrize("definition", [very_simple_example, more_complex_example])
def test_extent_examples_run_and_match_a_numpy_reference(definition, rng):
    shape = (20, 2, 2)
    b, c = rng.standard_normal(shape), rng.standard_normal(shape)
    results = run_both(definition, {"b": b, "c": c, "e": np.zeros(shape)},
                       origin=(4, 0, 0), domain=(11, 2, 2))

    def sh(f, o):  # f shifted by o along I, on the whole array (edges wrap but are never used)
        return np.roll(f, -o, axis=0)

    a = sh(b, -1) + sh(b, 1) + c + sh(c, 1)
    if definition is very_simple_example:
        d = sh(b, -2) + b + sh(c, -1) + sh(c, 2)
    else:
        d = sh(b, -2) + b + sh(a, -1) + sh(a, 2)
    e = np.zeros(shape)
    full = sh(a, -1) + sh(a, 2) + sh(d, -2) + sh(d, 2) + sh(c, -1) + sh(c, 1)
    e[4:15] = full[4:15]
    assert_all_equal(results, {"e": e})


# ================================================== rule 2: off-centre K writes in PARALLEL

def seed_off_centre_parallel(a: F64, b: F64, e: F64):
    with computation(PARALLEL):
        with interval(1, -1):
            a[0, 0, -1] = e  # first
            b[0, 0, 1] = 2 * a  # second


def test_rule2_off_centre_write_in_parallel():
    error = rejects(seed_off_centre_parallel, "# first", "off-centre write", "PARALLEL", "FORWARD")
    assert "2 problems found" in error.msg


def horizontal_offset_write(a: F64, b: F64):
    with computation(FORWARD), interval(...):
        b[1, 0, -1] = 2.0 * a  # shifted


def test_a_horizontal_offset_write_says_to_shift_the_reads_instead():
    error = rejects(horizontal_offset_write, "# shifted", "'b'", "horizontal offset [1, 0, -1]",
                    "written at their own (i, j) position")
    assert error.msg.endswith("shift the reads instead: write `b[0, 0, -1] = f(x[-1, 0, 0])`, "
                              "not `b[1, 0, -1] = f(x)`"), error.msg


def seed_off_centre_forward(a: F64, b: F64, c: F64):
    with computation(FORWARD):
        with interval(1, -1):
            a[0, 0, -1] = c
            b[0, 0, 1] = 2 * a  # b will see un-modified values of a


def seed_off_centre_backward(a: F64, b: F64, d: F64):
    with computation(BACKWARD):
        with interval(1, -1):
            a[0, 0, -1] = d
            b[0, 0, 1] = 2 * a  # b will see newly updated values from d (apart from the end)


def test_rule2_near_miss_off_centre_writes_forward_and_backward(rng):
    shape = (4, 3, 7)
    nz = shape[2]
    a0, src = rng.standard_normal(shape), rng.standard_normal(shape)
    b0 = rng.standard_normal(shape)

    # the seed's semantics, level by level in the policy's order
    a, b = a0.copy(), b0.copy()
    for k in range(1, nz - 1):
        a[:, :, k - 1] = src[:, :, k]
        b[:, :, k + 1] = 2 * a[:, :, k]
    assert np.array_equal(b[:, :, 2:], 2 * a0[:, :, 1:-1])  # un-modified values of a
    results = run_both(seed_off_centre_forward, {"a": a0, "b": b0, "c": src})
    assert_all_equal(results, {"a": a, "b": b})

    a, b = a0.copy(), b0.copy()
    for k in reversed(range(1, nz - 1)):
        a[:, :, k - 1] = src[:, :, k]
        b[:, :, k + 1] = 2 * a[:, :, k]
    assert np.array_equal(b[:, :, 2:-1], 2 * src[:, :, 2:-1])  # updated from d ...
    assert np.array_equal(b[:, :, -1], 2 * a0[:, :, -2])  # ... apart from the first level
    results = run_both(seed_off_centre_backward, {"a": a0, "b": b0, "d": src})
    assert_all_equal(results, {"a": a, "b": b})


# ============================================================================ rule 3: while

def while_condition_reads_with_offset(a: F64, b: F64):
    with computation(FORWARD), interval(...):
        while a[1, 0, 0] < b:  # here
            a = a + 1.0


def while_body_reads_with_offset(a: F64, b: F64, c: F64):
    with computation(FORWARD), interval(...):
        t = a
        while t < b:
            c = t[1, 0, 0]  # here
            t = t + 1.0  # write


def test_rule3_while_condition_reads_a_written_field_with_offset():
    error = rejects(while_condition_reads_with_offset, "# here", "while loop", "'a'",
                    "horizontal offset", f"line {line_of(while_condition_reads_with_offset, 'a = a + 1.0')}")
    assert error.offset == error.text.index("a[1, 0, 0]") + 1


def test_rule3_while_body_reads_a_written_temporary_with_offset():
    rejects(while_body_reads_with_offset, "# here", "while loop", "'t'",
            f"line {line_of(while_body_reads_with_offset, '# write')}")


def seed_while(a: F64, b: F64, c: F64, inp: F64):
    with computation(FORWARD), interval(...):
        while a < b:
            c += inp[1, 0, 0]  # fields read with an offset are not written in the loop
            a += 1.0


def test_rule3_near_miss_while_writing_fields_read_at_zero_offset(rng):
    shape = (6, 5, 3)
    a = rng.integers(0, 4, shape).astype(np.float64)
    b = rng.integers(0, 6, shape).astype(np.float64)
    inp = rng.standard_normal(shape)
    c = np.zeros(shape)
    results = run_both(seed_while, {"a": a, "b": b, "c": c, "inp": inp},
                       origin=(0, 0, 0), domain=(5, 5, 3))
    ra, rc = a.copy(), c.copy()
    dom = (slice(0, 5), slice(0, 5), slice(0, 3))
    mask = ra[dom] < b[dom]
    while mask.any():
        rc[dom] = np.where(mask, rc[dom] + inp[1:6, 0:5, 0:3], rc[dom])
        ra[dom] = np.where(mask, ra[dom] + 1.0, ra[dom])
        mask = ra[dom] < b[dom]
    assert (rc != 0).any()
    assert_all_equal(results, {"a": ra, "c": rc})


# ================================================================ rule 4: field conditionals

def seed_conditional_1(a: F64, b: F64, c: F64, field: F64):
    with computation(PARALLEL):
        with interval(...):
            if field:
                b = a[1, 0, 0]  # read with offset in 'I' from updated field 'a'
                a = 1  # write
                c = a[0, 1, 0]  # read with offset in 'J' from updated field 'a'


def seed_conditional_2(a: F64, b: F64, field: F64):
    with computation(PARALLEL):
        with interval(...):
            if field:
                a = 1  # write
            else:
                b = a[1, 0, 0]  # read with offset in 'I' from updated field 'a'


def seed_conditional_3(a: F64, field: F64):
    with computation(PARALLEL):
        with interval(...):
            if field:
                a = a[0, 1, 0]  # self assignment with offset


def test_rule4_seed_conditional_1():
    error = rejects(seed_conditional_1, "offset in 'I'", "conditional on a field", "'a'",
                    "horizontal offset [1, 0, 0]", f"line {line_of(seed_conditional_1, '# write')}")
    assert "3 problems found" in error.msg  # two reads (rule 4) and the write (rule 1)


def test_rule4_seed_conditional_2():
    rejects(seed_conditional_2, "offset in 'I'", "conditional on a field", "'a'",
            f"line {line_of(seed_conditional_2, '# write')}")


def test_rule4_seed_conditional_3():
    rejects(seed_conditional_3, "# self", "'a'", "horizontal offset")


def conditional_near_miss(a: F64, b: F64, c: F64, field: F64, inp: F64):
    with computation(PARALLEL), interval(...):
        if field > 0.0:
            a = inp[1, 0, 0]  # reads with an offset a field the branches do not write
            b = a  # and a written field at zero offset
        else:
            c = a + inp[0, -1, 0]


def test_rule4_near_miss_conditionals_reading_unwritten_fields_with_offsets(rng):
    shape = (7, 6, 2)
    field, inp = rng.standard_normal(shape), rng.standard_normal(shape)
    a, b, c = (rng.standard_normal(shape) for _ in range(3))
    results = run_both(conditional_near_miss, {"a": a, "b": b, "c": c, "field": field, "inp": inp},
                       origin=(0, 1, 0), domain=(6, 5, 2))
    dom = (slice(0, 6), slice(1, 6), slice(0, 2))
    mask = field[dom] > 0.0
    ra, rb, rc = a.copy(), b.copy(), c.copy()
    ra[dom] = np.where(mask, inp[1:7, 1:6], ra[dom])
    rb[dom] = np.where(mask, ra[dom], rb[dom])
    rc[dom] = np.where(~mask, ra[dom] + inp[0:6, 0:5], rc[dom])
    assert_all_equal(results, {"a": ra, "b": rb, "c": rc})


# ========================================= rule 5: intervals, temporaries, axes, names, syntax

def overlapping_intervals(a: F64, b: F64):
    with computation(PARALLEL):
        with interval(0, 2):
            b = a
        with interval(1, None):  # here
            b = 2.0 * a


def test_rule5_overlapping_intervals():
    rejects(overlapping_intervals, "# here", "overlapping intervals",
            f"line {line_of(overlapping_intervals, 'interval(0, 2)')}")


def adjacent_intervals(a: F64, b: F64):
    with computation(BACKWARD):
        with interval(0, 2):
            b = a
        with interval(2, None):
            b = 2.0 * a


def test_rule5_near_miss_adjacent_intervals(rng):
    a = rng.standard_normal((3, 3, 5))
    results = run_both(adjacent_intervals, {"a": a, "b": np.zeros_like(a)})
    expected = a.copy()
    expected[:, :, 2:] *= 2.0
    assert_all_equal(results, {"b": expected})


def temporary_never_written(a: F64, b: F64):
    with computation(PARALLEL), interval(...):
        tmp: float
        b = a + tmp  # here


def test_rule5_temporary_read_but_never_written():
    rejects(temporary_never_written, "# here", "temporary 'tmp'", "never written")


def horizontal_offset_on_k_field(a: Field[K, np.float64], b: F64):
    with computation(PARALLEL), interval(...):
        b = a[1, 0, 0]  # here


def k_offset_on_ij_field(a: Field[IJ, np.float64], b: F64):
    with computation(PARALLEL), interval(...):
        b = a[0, 0, 1]  # here


def test_rule5_offsets_along_missing_axes():
    rejects(horizontal_offset_on_k_field, "# here", "'a'", "K field", "I offset")
    rejects(k_offset_on_ij_field, "# here", "'a'", "IJ field", "K offset")


def k_and_ij_fields_legal(a: Field[K, np.float64], s: Field[IJ, np.float64], b: F64):
    with computation(FORWARD), interval(1, None):
        b = a[0, 0, -1] + s[1, 0, 0]


def test_rule5_near_miss_k_and_ij_fields_with_their_own_offsets(rng):
    a, s = rng.standard_normal(5), rng.standard_normal((5, 4))
    b = np.zeros((4, 4, 5))
    results = run_both(k_and_ij_fields_legal, {"a": a, "s": s, "b": b},
                       origin={"_all_": (0, 0, 0)}, domain=(4, 4, 5))
    expected = b.copy()
    expected[:, :, 1:] = a[None, None, :-1] + s[1:5, :, None]
    assert_all_equal(results, {"b": expected})


def unknown_name(a: F64, b: F64):
    with computation(PARALLEL), interval(...):
        b = a + undefined_thing  # here  # noqa: F821


def test_rule5_unknown_name():
    rejects(unknown_name, "# here", "unknown name 'undefined_thing'")


def python_for(a: F64, b: F64):
    with computation(PARALLEL), interval(...):
        for i in range(3):  # here
            b = a


def python_try(a: F64, b: F64):
    with computation(PARALLEL), interval(...):
        try:  # here
            b = a
        except ValueError:
            b = 0.0


def python_lambda(a: F64, b: F64):
    with computation(PARALLEL), interval(...):
        b = (lambda x: x)(a)  # here


def python_attribute(a: F64, b: F64):
    with computation(PARALLEL), interval(...):
        b = a.T  # here


def python_call(a: F64, b: F64):
    with computation(PARALLEL), interval(...):
        b = np.linalg.norm(a)  # here


@pytest.mark.parametrize(
    "definition, words",
    [(python_for, ("`for`",)), (python_try, ("`try`",)), (python_lambda, ("`lambda`",)),
     (python_attribute, ("attribute", "'a'")), (python_call, ("'np.linalg.norm'", "unknown function"))],
)
def test_rule5_python_constructs_outside_the_language(definition, words):
    rejects(definition, "# here", *words, cls=GTScriptSyntaxError)


# ================================================================================ warnings

def well_defined_temporaries(inp: F64, out: F64):
    with computation(PARALLEL), interval(...):
        if inp > 0.0:
            tmp = inp
        else:
            tmp = -inp
        out = tmp
    with computation(FORWARD):
        with interval(0, 1):
            acc = inp
        with interval(1, None):
            acc = acc[0, 0, -1] + inp
            out = out + acc


def only_warning(definition):
    with pytest.warns(UserWarning) as record:
        build(definition)
    assert len(record) == 1, [str(w.message) for w in record]
    return record[0]


def test_warning_temporary_never_read_suggests_the_closest_argument():
    def misspelt_output(inp: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = inp
            otu = 2.0 * inp  # here

    w = only_warning(misspelt_output)
    assert "temporary 'otu' is written but never read" in str(w.message)
    assert "did you mean 'out'?" in str(w.message)
    assert (w.filename, w.lineno) == (__file__, line_of(misspelt_output, "# here"))


def test_warning_temporary_never_read_without_a_close_argument():
    def useless_temporary(inp: F64, out: F64):
        with computation(PARALLEL), interval(...):
            scratch = 2.0 * inp  # here
            out = inp

    w = only_warning(useless_temporary)
    assert "'scratch' is written but never read" in str(w.message)
    assert "did you mean" not in str(w.message)
    assert w.lineno == line_of(useless_temporary, "# here")


# The next two definitions read undefined values: they are local so that suites collecting
# every module-level definition to run it (the cuda emulation's) leave them out.

def test_warning_temporary_read_before_it_is_written():
    def read_before_written(inp: F64, out: F64):
        with computation(PARALLEL), interval(...):
            out = tmp + inp  # here
            tmp = inp

    w = only_warning(read_before_written)
    assert "'tmp' is read here before it is first written" in str(w.message)
    assert w.lineno == line_of(read_before_written, "# here")


def test_warning_temporary_written_only_under_a_condition():
    def written_only_under_a_condition(inp: F64, out: F64):
        with computation(PARALLEL), interval(...):
            if inp > 0.0:  # condition
                tmp = inp
            out = tmp  # here

    w = only_warning(written_only_under_a_condition)
    assert "'tmp' may be read before it is written" in str(w.message)
    assert f"line {line_of(written_only_under_a_condition, '# condition')}" in str(w.message)
    assert w.lineno == line_of(written_only_under_a_condition, "# here")


def test_no_warning_for_temporaries_written_on_every_path(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build(well_defined_temporaries)
        inp = rng.standard_normal((3, 3, 4))
        results = run_both(well_defined_temporaries, {"inp": inp, "out": np.zeros_like(inp)})
    acc = np.cumsum(inp, axis=2)
    expected = np.abs(inp)
    expected[:, :, 1:] += acc[:, :, 1:]
    assert_all_equal(results, {"out": expected})


# ========================================================================= call-time aliases

def laplacian(inp: F64, out: F64):
    with computation(PARALLEL), interval(...):
        out = -4.0 * inp + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]


def scale(inp: F64, out: F64):
    with computation(PARALLEL), interval(...):
        out = 2.0 * inp


def two_outputs(inp: F64, a: F64, b: F64):
    with computation(PARALLEL), interval(...):
        a = inp
        b = 2.0 * inp


def k_shift(inp: F64, out: F64):
    with computation(PARALLEL), interval(0, -1):
        out = inp[0, 0, 1]


def via_temporary(inp: F64, out: F64):
    with computation(PARALLEL), interval(...):
        t = inp  # read at zero offset, but computed on a wider extent
        out = t[1, 0, 0]


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize(
    "definition, make_args, words",
    [
        (laplacian, lambda x: (x, x), "'out' and 'inp'.*horizontal offset"),
        (via_temporary, lambda x: (x, x), "'out' and 'inp'.*horizontal offset"),
        (scale, lambda x: (x[1:], x[:-1]), "'out' and 'inp'.*different positions"),
        (two_outputs, lambda x: (x.copy(), x, x[:, :, :]), "'a' and 'b'.*both are written"),
        (k_shift, lambda x: (x, x), "'out' and 'inp'.*another K level"),
    ],
)
def test_aliasing_that_breaks_the_rules_is_a_value_error(backend, definition, make_args, words, rng):
    stencil = gtscript.stencil(backend=backend, definition=definition)
    x = rng.standard_normal((8, 8, 4))
    before = x.copy()
    args = make_args(x)
    shape = args[-1].shape
    with pytest.raises(ValueError, match=words):
        stencil(*args, origin=(1, 1, 0), domain=(shape[0] - 2, shape[1] - 2, shape[2]))
    assert np.array_equal(x, before)  # nothing ran


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_aliasing_point_wise_update_and_disjoint_views_work(backend, rng):
    stencil = gtscript.stencil(backend=backend, definition=scale)
    x = rng.standard_normal((6, 6, 4))
    expected = 2.0 * x
    stencil(x, x)  # the same array as input and output, read at zero offset: point-wise
    np.testing.assert_allclose(x, expected, rtol=1e-15)
    y = rng.standard_normal((12, 6, 4))
    left, right = y[:6], y[6:]  # views of one buffer that do not overlap
    expected = 2.0 * left
    lap = gtscript.stencil(backend=backend, definition=laplacian)
    lap_expected = (-4.0 * left[1:-1, 1:-1] + left[2:, 1:-1] + left[:-2, 1:-1] + left[1:-1, 2:]
                    + left[1:-1, :-2])
    lap(left, right)
    np.testing.assert_allclose(right[1:-1, 1:-1], lap_expected, rtol=1e-13)


# =========================================================================== error quality

def several_violations(a: F64, b: F64, c: F64):
    with computation(PARALLEL), interval(...):
        b = a[1, 0, 0]
        a = 0.0  # first
        c[0, 0, 1] = 1.0  # off-centre, found by an earlier pass


def test_first_violation_in_source_order_and_the_count():
    error = rejects(several_violations, "# first", "write after read with offset",
                    "2 problems found", "first in source order")
    text = str(error)
    assert f'File "{__file__}", line {error.lineno}, column {error.offset}' in text
    source = error.text.strip()
    assert source in text
    caret_line = text.splitlines()[text.splitlines().index("    " + source) + 1]
    assert caret_line == "    ^"  # the statement starts the line: the caret is under its column


def test_str_shows_the_caret_under_the_read():
    with pytest.raises(GTScriptSemanticError) as info:
        build(while_condition_reads_with_offset)
    lines = str(info.value).splitlines()
    source = "while a[1, 0, 0] < b:  # here"
    assert lines[2] == "    " + source
    assert lines[3] == "    " + " " * source.index("a[1") + "^"


def test_errors_point_into_a_notebook_cell():
    filename = "<ipython-input-3-5c4e1a2b9d7f>"
    cell = (
        "import numpy as np\n"
        "from gtscript import Field, computation, interval, PARALLEL\n"
        "\n"
        "def cell_stencil(a: Field[np.float64], b: Field[np.float64]):\n"
        "    with computation(PARALLEL), interval(...):\n"
        "        b = a[1, 0, 0]\n"
        "        a = b\n"
    )
    linecache.cache[filename] = (len(cell), None, cell.splitlines(True), filename)
    try:
        namespace = {"__name__": "__main__"}
        exec(compile(cell, filename, "exec"), namespace)  # noqa: S102
        with pytest.raises(GTScriptSemanticError) as info:
            build(namespace["cell_stencil"])
    finally:
        del linecache.cache[filename]
    error = info.value
    assert (error.filename, error.lineno, error.offset) == (filename, 7, 9)
    assert error.text == "        a = b"
    assert "line 6" in error.msg
    assert filename in str(error)


def update_then_reread(inp: F64, out: F64, twice: F64):
    # a column sweep: both statements of a level share one loop body
    with computation(FORWARD), interval(...):
        out = inp + 1.0
        twice = 2.0 * inp  # reads `inp` after `out` was written: the new value when they alias


@pytest.mark.parametrize("order", ["C", "F"])
def test_point_wise_aliasing_sees_the_update_in_later_statements(order, rng):
    # the kernel built for disjoint arrays treats every pointer as noalias (it may keep `inp`
    # in a register across the store to `out`); a call passing one array for both must get
    # the variant that reloads it
    stencil = gtscript.stencil(backend="cpu", definition=update_then_reread)
    x = np.asarray(rng.standard_normal((5, 6, 9)), order=order)
    twice = np.zeros_like(x)
    want_x, want_twice = x + 1.0, 2.0 * (x + 1.0)
    stencil(x, x, twice)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(twice, want_twice)
    ref = gtscript.stencil(backend="numpy", definition=update_then_reread)
    y = np.asarray(want_x - 1.0, order=order)
    ref_twice = np.zeros_like(y)
    ref(y, y, ref_twice)
    np.testing.assert_array_equal(ref_twice, twice)
    # disjoint arrays: the noalias kernel, same values
    a, out, tw = x.copy(), np.zeros_like(x), np.zeros_like(x)
    stencil(a, out, tw)
    np.testing.assert_array_equal(tw, 2.0 * a)


def test_the_disjoint_kernel_declares_every_pointer_noalias():
    ir = gtscript.stencil(backend="cpu", definition=update_then_reread).source()
    parts = [line for line in ir.splitlines() if line.startswith("define internal void @gt_part")]
    assert parts
    for part in parts:
        assert part.count("noalias") == part.count("ptr")
