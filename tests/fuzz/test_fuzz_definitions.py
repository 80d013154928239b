"""Fuzzing the compiler: random well-formed definitions (tests/fuzz_grammar.py) built on the
cpu and numpy backends and run on random domains, origins and memory layouts.

Each example must either build on both backends and give the same outputs - bitwise, since
both evaluate the same operations in the same order in IEEE arithmetic without contraction
(measured: 0 differing bits over 3,000 definitions of a long run), or to 1e-12 relative
when a transcendental function is involved (libm and NumPy's SIMD loops may round those
differently in the last bit: at most 2.4e-16 measured over the same run; 1e-4 when such a
value is float32, where cancellation amplifies a last-bit difference: at most 3.0e-5
measured) - or be refused by every backend with the same error (the parallel model's
documented refusals). The cuda backend joins for a smaller sample. Independently of the
numpy backend, every output is unchanged outside the compute domain (extended by the
field's extent where it is read at an offset after it is written), every input unchanged,
and nothing is written into the memory around an output that is a view of a bigger buffer.

Every definition that ever failed is in tests/fuzz_corpus/ and is replayed on every run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gtscript
from cuda_emulation.runner import require_compiler
from fuzz_grammar import OUTPUT_NAMES, Program, fuzz_settings, inputs, load, programs

CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"
PAD = -7777.0  # the value of the memory around a view (no stencil computes it)


def padded_view(values: np.ndarray, rng) -> tuple[np.ndarray, tuple]:
    """A copy of `values` that is a view into a bigger buffer filled with PAD, with a random
    step along each grid axis; and the index of the view in the buffer."""
    steps = [int(rng.integers(1, 3)) for _ in range(3)] + [1] * (values.ndim - 3)
    big = np.full([n * s + 2 for n, s in zip(values.shape, steps)], PAD, dtype=values.dtype)
    index = tuple(slice(1, 1 + n * s, s) for n, s in zip(values.shape, steps))
    view = big[index]
    view[...] = values
    return view, index


def layout(values: np.ndarray, kind: str, rng) -> tuple[np.ndarray, tuple | None]:
    if kind == "C":
        return np.array(values, order="C"), None
    if kind == "F":
        return np.array(values, order="F"), None
    return padded_view(values, rng)


def assert_around_untouched(view: np.ndarray, index: tuple | None, what: str):
    """Every element of the buffer behind `view` that is not one of the view's own still
    holds PAD."""
    if index is None:
        return
    buf = view.base
    while isinstance(buf.base, np.ndarray):
        buf = buf.base
    around = np.ones(buf.shape, bool)
    around[index] = False
    written = around & (buf != np.array(PAD).astype(buf.dtype))
    assert not written.any(), (f"{what}: {np.count_nonzero(written)} elements around the view "
                               f"were written, first at {np.argwhere(written)[:3].tolist()}")


def build(backend: str, defn):
    """The stencil of `defn` on `backend` ("cuda": on the host emulation of
    tests/cuda_emulation, the exact CUDA C its build generates), or the error of its build."""
    try:
        stencil = gtscript.stencil(backend=backend, definition=defn)
    except Exception as error:  # noqa: BLE001 - compared between backends below
        return None, error
    if backend == "cuda":
        from cuda_emulation.runner import emulate

        stencil = emulate(stencil)
    return stencil, None


def assert_same_outputs(got: dict, want: dict, exactness: str, source: str):
    for name in OUTPUT_NAMES:
        x, y = np.asarray(got[name]), np.asarray(want[name])
        if exactness == "bitwise" or x.dtype.kind in "iub":
            same = (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y
            assert same.all(), (f"{name}: {np.count_nonzero(~same)} values differ, first at "
                                f"{np.argwhere(~same)[:3].tolist()}\n{source}")
        else:
            close = exactness == "f64" and x.dtype == np.float64
            both = np.isfinite(x) & np.isfinite(y)
            if both.any():  # measured, for the tolerance (printed after the bounded run)
                xd, yd = x[both].astype(np.float64), y[both].astype(np.float64)
                rel = np.abs(xd - yd) / np.maximum(np.abs(yd), 1e-300)
                key = "f64" if close else "f32"
                MAX_DIFF[key] = max(MAX_DIFF.get(key, 0.0), float(rel.max()))
            np.testing.assert_allclose(x, y, rtol=1e-12 if close else 1e-4,
                                       atol=1e-300 if close else 1e-5, equal_nan=True,
                                       err_msg=f"{name}\n{source}")


def check_program(program: Program, draw_int, choose, backends=("cpu",)):
    """Builds `program` on `backends` and on numpy and compares a call on random arguments.
    draw_int(lo, hi) and choose(seq) are where the randomness of the call comes from."""
    source = program.source
    defn = load(source)
    ref, ref_error = build("numpy", defn)
    built = {b: build(b, defn) for b in backends}
    errors = {b: e for b, (_, e) in built.items()}
    if ref_error is not None or any(e is not None for e in errors.values()):
        # the only refusals a well-formed definition may meet are the parallel model's, and
        # then on every backend alike
        assert ref_error is not None and all(e is not None for e in errors.values()), (
            f"one backend refused, another built:\n{errors}\nnumpy: {ref_error!r}\n{source}")
        for error in errors.values():
            assert type(error) is type(ref_error), (error, ref_error, source)
            assert str(error) == str(ref_error), (error, ref_error, source)
        assert isinstance(ref_error, gtscript.GTScriptSemanticError), (ref_error, source)
        assert program.read_outputs, f"a definition without offset output reads refused: " \
                                     f"{ref_error!r}\n{source}"
        REFUSALS.append(str(ref_error).split(":")[0][:150])
        return "refused"
    for backend, (stencil, _) in built.items():
        outcome = run_and_compare(program, stencil, ref, draw_int, choose)
    return outcome


def run_and_compare(program, cpu, ref, draw_int, choose):
    source = program.source
    assert cpu.halo == ref.halo and cpu.field_info == ref.field_info, source
    (ilo, ihi), (jlo, jhi), (klo, khi) = cpu.halo
    mi, mj = cpu.region_min_domain
    domain = (draw_int(mi, max(mi, 6)), draw_int(mj, max(mj, 6)), draw_int(4, 6))
    extra = [draw_int(0, 2) for _ in range(6)]
    origin = (ilo + extra[0], jlo + extra[1], klo + extra[2])
    shape = tuple(o + n + h + e for o, n, h, e in zip(origin, domain, (ihi, jhi, khi), extra[3:]))
    rng = np.random.default_rng(draw_int(0, 2**32 - 1))
    arrays = inputs(shape, rng)
    scalars = {"s": choose([-0.5, 0.75, 0.0]), "r": np.float32(choose([0.25, -1.5])),
               "n": choose([-2, 0, 3]), "flag": choose([True, False])}
    made = {n: layout(v, choose(["C", "F", "view"]), rng) for n, v in arrays.items()}
    a = {n: v for n, (v, _) in made.items()}
    b = {n: np.array(v, order="C") for n, v in arrays.items()}
    cpu(**a, **scalars, origin=origin, domain=domain)
    ref(**b, **scalars, origin=origin, domain=domain)
    for name, v in a.items():
        if name not in OUTPUT_NAMES:
            assert np.array_equal(v, arrays[name]), f"input {name} was modified\n{source}"
        else:  # independent of the numpy backend: nothing changes outside the domain, but
            # for a field read at an offset after it is written: it is computed on the
            # domain extended by its extent (docs/parallel-model.md)
            ext = cpu.field_info[name]["extent"]
            inside = np.zeros(v.shape, bool)
            inside[tuple(slice(o + lo, o + d + hi)
                         for o, d, (lo, hi) in zip(origin, domain, ext))] = True
            same = (v == arrays[name]) | (np.isnan(v) & np.isnan(arrays[name]))
            assert (same | inside).all(), f"{name} written outside the domain\n{source}"
        assert_around_untouched(v, made[name][1], f"{name}\n{source}")
    assert_same_outputs(a, b, program.exactness, source)
    return "ran"


STATS = {"ran": 0, "refused": 0}
MAX_DIFF: dict = {}  # the largest relative difference seen where exactness is not bitwise
REFUSALS: list = []


@pytest.mark.filterwarnings("ignore:temporary .* is written but never read")
@pytest.mark.filterwarnings("ignore::gtscript.errors.GT4PyCompatibilityWarning")
@fuzz_settings(bounded=80)
@given(program=programs(), data=st.data())
def test_random_definitions_agree_on_cpu_and_numpy(program, data):
    outcome = check_program(
        program, lambda lo, hi: data.draw(st.integers(lo, hi)),
        lambda seq: data.draw(st.sampled_from(seq)))
    STATS[outcome] += 1


@pytest.mark.filterwarnings("ignore:temporary .* is written but never read")
@pytest.mark.filterwarnings("ignore::gtscript.errors.GT4PyCompatibilityWarning")
@fuzz_settings(bounded=8)
@given(program=programs(), data=st.data())
def test_random_definitions_agree_on_the_cuda_emulation_and_numpy(program, data):
    """A smaller sample through the cuda generator (each example compiles its CUDA C with the
    host compiler, about a second)."""
    require_compiler()
    check_program(program, lambda lo, hi: data.draw(st.integers(lo, hi)),
                  lambda seq: data.draw(st.sampled_from(seq)), backends=("cuda",))


def corpus_cases():
    return sorted(CORPUS.glob("*.py"))


@pytest.mark.filterwarnings("ignore:temporary .* is written but never read")
@pytest.mark.filterwarnings("ignore::gtscript.errors.GT4PyCompatibilityWarning")
@pytest.mark.parametrize("path", corpus_cases(), ids=lambda p: p.stem)
def test_seed_corpus(path):
    """Every definition the fuzzer (or a person) found failing once, replayed on a few
    argument draws: each file is a module defining `stencil` with the grammar's signature;
    its first line says what went wrong and whether it must build ("# builds") or be refused
    by every backend alike ("# refused")."""
    source = path.read_text()
    refused_ok = "# refused" in source.splitlines()[0]
    rng = np.random.default_rng(7)
    for backends in (("cpu",), ("cpu",), ("cpu", "cuda")):
        outcome = check_program(
            Program(source, "f32" if "transcendental" in source.splitlines()[0] else "bitwise",
                    read_outputs=refused_ok),
            lambda lo, hi: int(rng.integers(lo, hi + 1)), lambda seq: seq[rng.integers(len(seq))],
            backends)
        assert outcome == ("refused" if refused_ok else "ran"), (path.name, outcome)
        if outcome == "refused":
            break


def test_the_bounded_run_mostly_builds():
    """The grammar is worth its time only if most definitions build (runs after the fuzz
    test in file order; alone, nothing to check)."""
    total = STATS["ran"] + STATS["refused"]
    print("fuzz definitions:", STATS, "largest relative differences:", MAX_DIFF, *REFUSALS,
          sep="\n")
    if total:
        assert STATS["ran"] >= 0.7 * total, STATS
