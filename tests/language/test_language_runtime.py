"""Run-time values in the vertical structure: interval bounds given by scalar parameters,
data-dimension indices computed at run time, K offsets computed by the stencil itself, and
the K levels a call needs when compile-time choices empty an interval. Every construct runs
on the cpu and numpy backends against hand-written NumPy, and through the cuda emulation."""

import inspect

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import compiler, emulate
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, __INLINED, computation, interval
from language_helpers import assert_matches, build, check_construct

SHAPE = (5, 4, 6)
NI, NJ, NK = SHAPE


def on_cuda_emulation(defn, arrays, expected, scalars=None, **options):
    """Runs ``defn`` on the cuda backend's host emulation; compares with ``expected``."""
    if compiler() is None:
        return
    copies = {name: value.copy() for name, value in arrays.items()}
    emulate(gtscript.stencil("cuda", defn, **options))(**copies, **(scalars or {}))
    for name, value in expected.items():
        assert_matches(copies[name], value, f"{name} (cuda emulation)")


# --------------------------------------------------------- intervals emptied at compile time


def inlined_away(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import DEEP

    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, 8):
            if __INLINED(DEEP):
                out = out[0, 0, -1] + a
        with interval(-1, None):
            out = 2.0 * a
    with computation(BACKWARD), interval(0, -9):
        if __INLINED(DEEP):
            out = 0.0


def test_an_interval_emptied_by_inlined_needs_no_levels(backend):
    deep = build(inlined_away, backend, externals={"DEEP": True})
    shallow = build(inlined_away, backend, externals={"DEEP": False})
    assert deep.min_k_levels == 10 and shallow.min_k_levels == 2
    rng = np.random.default_rng(1)
    for nk in (2, 3):
        a = rng.uniform(-1.0, 1.0, (NI, NJ, nk))
        out = np.full((NI, NJ, nk), 7.0)
        e = out.copy()
        e[:, :, 0], e[:, :, -1] = a[:, :, 0], 2.0 * a[:, :, -1]
        shallow(a, out)
        assert_matches(out, e)
        with pytest.raises(ValueError, match="K levels"):
            deep(a, np.zeros_like(a))
        on_cuda_emulation(inlined_away, {"a": a, "out": np.full((NI, NJ, nk), 7.0)}, {"out": e},
                          externals={"DEEP": False})


# ----------------------------------------------------------------- run-time interval bounds


def runtime_bounds(a: Field[np.float64], out: Field[np.float64], acc: Field[np.float64],
                   n: int, kstart: np.int32):
    with computation(PARALLEL):
        with interval(0, n):
            out = a
        with interval(n, None):
            out = -a
    with computation(FORWARD):
        with interval(0, kstart + 1):
            acc = a
        with interval(kstart + 1, -1):
            acc = acc[0, 0, -1] + a
    with computation(BACKWARD):  # written top down: the order BACKWARD runs them
        with interval(n, None):
            out = out + 1.0
        with interval(1, n - 1):
            out = out[0, 0, 1] * 0.5 + out


def runtime_bounds_reference(a, out, acc, n, kstart, origin, domain):
    """Plain loops over the levels of the domain (origin/domain given, as the call)."""
    out, acc = out.copy(), acc.copy()
    (i0, j0, k0), (ni, nj, nk) = origin, domain
    col = (slice(i0, i0 + ni), slice(j0, j0 + nj))
    for k in range(nk):
        out[col + (k0 + k,)] = a[col + (k0 + k,)] if k < n else -a[col + (k0 + k,)]
    for k in range(0, kstart + 1):
        acc[col + (k0 + k,)] = a[col + (k0 + k,)]
    for k in range(kstart + 1, nk - 1):
        acc[col + (k0 + k,)] = acc[col + (k0 + k - 1,)] + a[col + (k0 + k,)]
    for k in range(nk - 1, n - 1, -1):
        out[col + (k0 + k,)] = out[col + (k0 + k,)] + 1.0
    for k in range(n - 2, 0, -1):
        out[col + (k0 + k,)] = out[col + (k0 + k + 1,)] * 0.5 + out[col + (k0 + k,)]
    return out, acc


@pytest.mark.parametrize("n, kstart", [(2, 1), (2, 0), (6, 4), (3, 3), (5, -1), (NK, NK - 2)])
def test_scalar_parameters_as_interval_bounds(n, kstart):
    rng = np.random.default_rng(2)
    shape = (NI + 2, NJ + 1, NK + 2)
    origin, domain = (1, 0, 1), (NI, NJ, NK)
    a = rng.uniform(-1.0, 1.0, shape)
    out, acc = np.full(shape, 1234.5), np.full(shape, 1234.5)  # sentinel margins
    e_out, e_acc = runtime_bounds_reference(a, out, acc, n, kstart, origin, domain)
    arrays = {"a": a, "out": out, "acc": acc}
    scalars = {"n": n, "kstart": kstart}
    check_construct(runtime_bounds, arrays, {"out": e_out, "acc": e_acc}, ["out", "acc"],
                    scalars=scalars, origin=origin, domain=domain)
    on_cuda_emulation_at(runtime_bounds, arrays, {"out": e_out, "acc": e_acc}, scalars,
                         origin, domain)


def on_cuda_emulation_at(defn, arrays, expected, scalars, origin, domain):
    if compiler() is None:
        return
    copies = {name: value.copy() for name, value in arrays.items()}
    emulate(gtscript.stencil("cuda", defn))(**copies, **scalars, origin=origin, domain=domain)
    for name, value in expected.items():
        assert_matches(copies[name], value, f"{name} (cuda emulation)")


def line_of(defn, text):
    """The line number of the first line of ``defn``'s source containing ``text``."""
    lines, first = inspect.getsourcelines(defn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("n, kstart, words", [
    (NK + 1, 0, ("(0, n)", "reaches outside the domain", "'n' = 7", f"{NK} K levels")),
    (-1, 0, ("(0, n)", "has its start above its end", "'n' = -1")),
    (1, 0, ("(1, n - 1)", "has its start above its end", "'n' - 1 = 1 - 1")),
    (2, NK, ("(0, kstart + 1)", "reaches outside the domain", f"'kstart' + 1 = {NK} + 1")),
    (2, NK - 1, ("(kstart + 1, -1)", "start above its end", f"'kstart' + 1 = {NK - 1} + 1")),
    (2, -3, ("(0, kstart + 1)", "start above its end", "'kstart' + 1 = -3 + 1")),
    (2, -1, ("'acc'", "needs levels -1..")),  # acc[0, 0, -1] read on level 0
])
def test_run_time_bounds_are_checked_before_anything_runs(backend, n, kstart, words):
    if words[0].startswith("("):  # the interval the message names, by its line
        words = (f"the interval on line {line_of(runtime_bounds, words[0])} ",) + words[1:]
    stencil = build(runtime_bounds, backend)
    a, out, acc = np.ones(SHAPE), np.full(SHAPE, 3.0), np.full(SHAPE, 4.0)
    with pytest.raises(ValueError) as info:
        stencil(a, out, acc, n=n, kstart=kstart)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert (out == 3.0).all() and (acc == 4.0).all()


def two_sections(a: Field[np.float64], out: Field[np.float64], n1: int, n2: int):
    with computation(FORWARD):
        with interval(0, n1):
            out = a
        with interval(n2, None):
            out = out[0, 0, -1] + a
    with computation(BACKWARD):
        with interval(n2, None):
            out = out + 1.0
        with interval(0, n1):
            out = out * 2.0


def two_sections_reference(a, out, n1, n2):
    out = out.copy()
    nk = a.shape[2]
    for k in range(0, n1):
        out[:, :, k] = a[:, :, k]
    for k in range(n2, nk):
        out[:, :, k] = out[:, :, k - 1] + a[:, :, k]
    for k in range(nk - 1, n2 - 1, -1):
        out[:, :, k] += 1.0
    for k in range(n1 - 1, -1, -1):
        out[:, :, k] *= 2.0
    return out


@pytest.mark.parametrize("n1, n2", [(2, 2), (1, 4), (NK, NK), (2, NK), (3, 5)])
def test_run_time_sections_may_leave_gaps(n1, n2):
    rng = np.random.default_rng(3)
    a, out = rng.uniform(-1.0, 1.0, SHAPE), np.full(SHAPE, 5.0)
    expected = two_sections_reference(a, out, n1, n2)
    arrays, scalars = {"a": a, "out": out}, {"n1": n1, "n2": n2}
    check_construct(two_sections, arrays, {"out": expected}, ["out"], scalars=scalars)
    on_cuda_emulation(two_sections, arrays, {"out": expected}, scalars)


def test_run_time_sections_must_not_overlap(backend):
    stencil = build(two_sections, backend)
    a, out = np.ones(SHAPE), np.full(SHAPE, 5.0)
    first, second = line_of(two_sections, "(0, n1)"), line_of(two_sections, "(n2, None)")
    with pytest.raises(ValueError) as info:
        stencil(a, out, n1=3, n2=2)
    message = str(info.value)
    for word in (f"line {second} runs on levels [2, {NK})", f"line {first} on [0, 3)",
                 "must not overlap", "upwards in PARALLEL and FORWARD"):
        assert word in message, (word, message)
    assert (out == 5.0).all()
    with pytest.raises(ValueError, match="'out'.*needs levels -1"):  # out[0, 0, -1] at level 0
        stencil(a, out, n1=0, n2=0)
    assert (out == 5.0).all()


def test_run_time_bounds_that_are_known_wrong_fail_the_build():
    from gtscript.errors import GTScriptSemanticError, GTScriptSyntaxError

    def written_out_of_order(a: Field[np.float64], out: Field[np.float64], n: int):
        with computation(FORWARD):
            with interval(n, None):
                out = a
            with interval(0, n):  # here
                out = a

    def backward_written_upwards(a: Field[np.float64], out: Field[np.float64], n: int):
        with computation(BACKWARD):
            with interval(0, n):
                out = a
            with interval(n, None):  # here
                out = a

    def empty(a: Field[np.float64], out: Field[np.float64], n: int):
        with computation(PARALLEL), interval(n + 1, n + 1):  # here
            out = a

    def float_bound(a: Field[np.float64], out: Field[np.float64], n: float):
        with computation(PARALLEL), interval(0, n):  # here
            out = a

    # an IJ field bounds an interval per column (tests/language/test_interval_field_bounds.py); a 3-D
    # field has no single level per column
    def field_bound(a: Field[np.float64], out: Field[np.float64], n: Field[np.int64]):
        with computation(PARALLEL), interval(n, None):  # here
            out = a

    for defn, cls, words in (
        (written_out_of_order, GTScriptSemanticError, ("order written", "upwards", "above")),
        (backward_written_upwards, GTScriptSemanticError, ("downwards in BACKWARD", "below")),
        (empty, GTScriptSemanticError, ("empty interval",)),
        (float_bound, GTScriptSyntaxError, ("'n' is a float64 scalar", "integer")),
        (field_bound, GTScriptSyntaxError, ("'n' is a field of axes IJK", "integer IJ field")),
    ):
        for backend in ("cpu", "numpy"):
            with pytest.raises(cls) as info:
                build(defn, backend)
            assert info.value.lineno == line_of(defn, "# here"), info.value
            for word in words:
                assert word in info.value.msg, (word, info.value.msg)


# ---------------------------------------------------------------- run-time data indices


def runtime_components(v: Field[(np.float64, (3,))], m: Field[(np.float64, (2, 3))],
                       out: Field[np.float64], w: Field[(np.float64, (3,))], n: int):
    with computation(PARALLEL), interval(...):
        out = v[0, 0, 0][n] + 10.0 * m[1, 0, 0][n - 1, 2 - n]
        w[0, 0, 0][n] = out
        w[0, 0, 0][2 - n] = w[0, 0, 0][2 - n] + 100.0


def runtime_components_reference(v, m, out, w, n):
    out, w = out.copy(), w.copy()
    out[:-1] = v[:-1, :, :, n] + 10.0 * m[1:, :, :, n - 1, 2 - n]
    w[:-1, :, :, n] = out[:-1]
    w[:-1, :, :, 2 - n] += 100.0
    return out, w


@pytest.mark.parametrize("n", [1, 2])
def test_run_time_data_indices_read_and_write(n):
    rng = np.random.default_rng(4)
    v, m = rng.uniform(-1.0, 1.0, SHAPE + (3,)), rng.uniform(-1.0, 1.0, SHAPE + (2, 3))
    out, w = np.full(SHAPE, 1234.5), np.full(SHAPE + (3,), 1234.5)
    e_out, e_w = runtime_components_reference(v, m, out, w, n)
    arrays, scalars = {"v": v, "m": m, "out": out, "w": w}, {"n": n}
    expected = {"out": e_out, "w": e_w}
    check_construct(runtime_components, arrays, expected, ["out", "w"], scalars=scalars)
    on_cuda_emulation(runtime_components, arrays, expected, scalars)


@pytest.mark.parametrize("n, bad, size", [(3, 3, 3), (0, -1, 2), (-1, -1, 3)])
def test_run_time_data_indices_out_of_range_raise(backend, n, bad, size):
    stencil = build(runtime_components, backend)
    v, m = np.ones(SHAPE + (3,)), np.ones(SHAPE + (2, 3))
    out, w = np.full(SHAPE, 3.0), np.full(SHAPE + (3,), 4.0)
    with pytest.raises(IndexError) as info:
        stencil(v, m, out, w, n=n)
    message = str(info.value)
    line = line_of(runtime_components, "out = v[0, 0, 0][n]")
    for word in (f"line {line}", f"is {bad} at point", f"{size} components", "from 'n'"):
        assert word in message, (word, message)
    assert (out == 3.0).all() and (w == 4.0).all()


def test_data_indices_read_from_a_field(backend):
    from gtscript import IJ

    def pick(v: Field[(np.float64, (4,))], sel: Field[IJ, np.int8], out: Field[np.float64],
             w: Field[(np.float64, (4,))]):
        with computation(FORWARD), interval(...):
            out = v[0, 0, 0][sel + 1] * 2.0  # here
            w[0, 0, 0][sel] = out + w[0, 0, 0][sel]

    rng = np.random.default_rng(5)
    v = rng.uniform(-1.0, 1.0, SHAPE + (4,))
    sel = rng.integers(0, 3, SHAPE[:2]).astype(np.int8)
    out, w = np.full(SHAPE, 9.0), rng.uniform(-1.0, 1.0, SHAPE + (4,))
    e_out = np.take_along_axis(v, (sel + 1)[:, :, None, None].astype(np.int64), axis=3)[..., 0]
    e_out = e_out * 2.0
    e_w = w.copy()
    index = np.broadcast_to(sel[:, :, None, None].astype(np.int64), SHAPE + (1,))
    np.put_along_axis(e_w, index, np.take_along_axis(w, index, axis=3) + e_out[..., None], axis=3)
    arrays = {"v": v, "sel": sel, "out": out, "w": w}
    check_construct(pick, arrays, {"out": e_out, "w": e_w}, ["out", "w"])
    on_cuda_emulation(pick, arrays, {"out": e_out, "w": e_w})
    stencil = build(pick, backend)
    bad = sel.copy()
    bad[2, 3] = 3  # sel + 1 == 4 reads past the last component
    before = w.copy()
    with pytest.raises(IndexError, match=r"is 4 at point \(2, 3, 0\).*4 components.*'sel'"):
        stencil(v, bad, out.copy(), w)
    assert np.array_equal(w, before)


def test_run_time_data_indices_must_be_known_before_the_call():
    from gtscript.errors import GTScriptSemanticError, GTScriptSyntaxError

    def from_a_written_field(v: Field[(np.float64, (3,))], k: Field[np.int64],
                             out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            k = 1
            out = v[0, 0, 0][k]  # here

    def float_index(v: Field[(np.float64, (3,))], out: Field[np.float64], x: float):
        with computation(PARALLEL), interval(...):
            out = v[0, 0, 0][x]  # here

    def too_many_indices(v: Field[(np.float64, (3,))], out: Field[np.float64], n: int):
        with computation(PARALLEL), interval(...):
            out = v[0, 0, 0][n, 0]  # here

    for defn, cls, words in (
        (from_a_written_field, GTScriptSemanticError, ("run-time data index", "'k'")),
        (float_index, GTScriptSemanticError, ("data index must be an integer", "float64")),
        (too_many_indices, GTScriptSyntaxError, ("1 data dimension", "2 data index")),
    ):
        for backend in ("cpu", "numpy"):
            with pytest.raises(cls) as info:
                build(defn, backend)
            assert info.value.lineno == line_of(defn, "# here"), info.value
            for word in words:
                assert word in info.value.msg, (word, info.value.msg)


# ----------------------------------------- K levels computed from values the stencil writes


def remap(pe1: Field[np.float64], pe2: Field[np.float64], q1: Field[np.float64],
          q2: Field[np.float64], top: int):
    with computation(FORWARD), interval(...):
        kk = 0
        while pe1.at(K=kk + 1) < pe2 and kk < top:  # kk: a temporary the loop writes
            kk = kk + 1
        w = (pe2 - pe1.at(K=kk)) / (pe1.at(K=kk + 1) - pe1.at(K=kk))
        q2 = q1.at(K=kk) + w * (q1.at(K=kk + 1) - q1.at(K=kk))


def make_remap():
    return remap


def remap_reference(pe1, pe2, q1, q2, top):
    q2 = q2.copy()
    ni, nj, nk = pe1.shape
    for i in range(ni):
        for j in range(nj):
            for k in range(nk):
                kk = 0
                while pe1[i, j, kk + 1] < pe2[i, j, k] and kk < top:
                    kk += 1
                w = (pe2[i, j, k] - pe1[i, j, kk]) / (pe1[i, j, kk + 1] - pe1[i, j, kk])
                q2[i, j, k] = q1[i, j, kk] + w * (q1[i, j, kk + 1] - q1[i, j, kk])
    return q2


def remap_inputs(rng, shape):
    pe1 = np.cumsum(rng.uniform(0.5, 1.5, shape), axis=2)
    pe2 = np.sort(rng.uniform(pe1[:, :, :1], pe1[:, :, -1:], shape), axis=2)
    return pe1, pe2, rng.uniform(-1.0, 1.0, shape)


def test_levels_computed_from_a_temporary_remap_a_column():
    rng = np.random.default_rng(6)
    pe1, pe2, q1 = remap_inputs(rng, SHAPE)
    q2 = np.full(SHAPE, 1234.5)
    expected = remap_reference(pe1, pe2, q1, q2, NK - 2)
    check_construct(make_remap(), {"pe1": pe1, "pe2": pe2, "q1": q1, "q2": q2},
                    {"q2": expected}, ["q2"], scalars={"top": NK - 2})


def test_a_level_outside_the_domain_undoes_the_call(backend):
    rng = np.random.default_rng(7)
    shape = (40, 33, 7)  # several tiles and threads on the cpu backend
    pe1, pe2, q1 = remap_inputs(rng, shape)
    stencil = build(make_remap(), backend)
    q2 = np.full(shape, 1234.5)
    stencil(pe1, pe2, q1, q2, top=shape[2] - 2)
    assert_matches(q2, remap_reference(pe1, pe2, q1, np.full(shape, 1234.5), shape[2] - 2))
    # top = nk - 1 lets kk reach the last level, and pe1.at(K=kk + 1) then reads level nk
    pe2[17, 5, -1] = pe1[17, 5, -1] + 1.0
    before = q2.copy()
    line = line_of(make_remap(), "while pe1.at(K=kk + 1)")
    with pytest.raises(ValueError) as info:
        stencil(pe1, pe2, q1, q2, top=shape[2] - 1)
    message = str(info.value)
    for word in ("argument 'pe1'", f"line {line}", "computed from values the stencil writes",
                 f"outside the array's {shape[2]} levels", "every array it wrote was restored"):
        assert word in message, (word, message)
    assert np.array_equal(q2, before)


def test_checked_levels_on_the_cuda_emulation():
    if compiler() is None:
        return
    rng = np.random.default_rng(8)
    pe1, pe2, q1 = remap_inputs(rng, SHAPE)
    q2 = np.full(SHAPE, 1234.5)
    stencil = emulate(gtscript.stencil("cuda", make_remap()))
    stencil(pe1, pe2, q1, q2, top=NK - 2)
    assert_matches(q2, remap_reference(pe1, pe2, q1, np.full(SHAPE, 1234.5), NK - 2))
    assert "gt_klevel(" in stencil.source()
    pe2[3, 2, -1] = pe1[3, 2, -1] + 1.0
    before = q2.copy()
    with pytest.raises(ValueError, match="'pe1': .*line .* outside the array's 6 levels.*restored"):
        stencil(pe1, pe2, q1, q2, top=NK - 1)
    assert np.array_equal(q2, before)


# -------------------------------------------------------------- writes at variable K offsets


def scatter_levels(a: Field[np.float64], dest: Field[np.int64], out: Field[np.float64],
                   acc: Field[np.float64], shift: int):
    with computation(FORWARD), interval(...):
        out[0, 0, dest] = a  # level k + dest
    with computation(BACKWARD), interval(shift, None):
        acc[0, 0, -shift] = a * 2.0 + acc


def scatter_levels_reference(a, dest, out, acc, shift):
    out, acc = out.copy(), acc.copy()
    ni, nj, nk = a.shape
    for k in range(nk):
        for i in range(ni):
            for j in range(nj):
                out[i, j, k + dest[i, j, k]] = a[i, j, k]
    for k in range(nk - 1, shift - 1, -1):
        acc[:, :, k - shift] = a[:, :, k] * 2.0 + acc[:, :, k]
    return out, acc


@pytest.mark.parametrize("shift", [1, 2])
def test_writes_at_variable_k_offsets(shift):
    rng = np.random.default_rng(9)
    a, acc = rng.uniform(-1.0, 1.0, SHAPE), rng.uniform(-1.0, 1.0, SHAPE)
    # each column's levels permuted: level k goes to level perm[k]
    perm = np.argsort(rng.random(SHAPE), axis=2)
    dest = perm - np.arange(NK)[None, None, :]
    out = np.full(SHAPE, 1234.5)
    e_out, e_acc = scatter_levels_reference(a, dest, out, acc, shift)
    arrays, scalars = {"a": a, "dest": dest, "out": out, "acc": acc}, {"shift": shift}
    expected = {"out": e_out, "acc": e_acc}
    check_construct(scatter_levels, arrays, expected, ["out", "acc"], scalars=scalars)
    on_cuda_emulation(scatter_levels, arrays, expected, scalars)


def test_writes_at_variable_k_offsets_are_checked_before_running(backend):
    stencil = build(scatter_levels, backend)
    a, out, acc = np.ones(SHAPE), np.full(SHAPE, 3.0), np.full(SHAPE, 4.0)
    dest = np.zeros(SHAPE, np.int64)
    dest[3, 1, NK - 2] = 2  # level NK
    line = line_of(scatter_levels, "out[0, 0, dest] = a")
    with pytest.raises(ValueError) as info:
        stencil(a, dest, out, acc, shift=1)
    message = str(info.value)
    for word in ("'out'", f"line {line} writes K index {NK}", f"(3, 1, {NK - 2})", "'dest'"):
        assert word in message, (word, message)
    assert (out == 3.0).all() and (acc == 4.0).all()


def test_writes_at_variable_k_offsets_that_cannot_be_checked_fail_the_build():
    from gtscript.errors import GTScriptSemanticError

    def in_parallel(a: Field[np.float64], d: Field[np.int64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out[0, 0, d] = a  # here

    # (a write's offset computed from a temporary is checked by the kernel:
    # tests/language/test_checked_k_writes.py)
    def to_a_temporary(a: Field[np.float64], d: Field[np.int64], out: Field[np.float64]):
        with computation(FORWARD), interval(...):
            t = a
            t[0, 0, d] = a  # here
            out = t

    def float_offset(a: Field[np.float64], out: Field[np.float64], x: float):
        with computation(FORWARD), interval(...):
            out[0, 0, x] = a  # here

    for defn, words in (
        (in_parallel, ("variable K offset in a PARALLEL computation", "FORWARD")),
        (to_a_temporary, ("'t' is a temporary", "field parameters")),
        (float_offset, ("must be an integer", "float64")),
    ):
        for backend in ("cpu", "numpy"):
            with pytest.raises(GTScriptSemanticError) as info:
                build(defn, backend)
            assert info.value.lineno == line_of(defn, "# here"), (defn, info.value)
            for word in words:
                assert word in info.value.msg, (word, info.value.msg)
