"""Run under `mpiexec -n 4 python -m mpi4py` by tests/distributed/test_distributed.py: ranks that do not
agree on what a collective operation moves. Every case either exchanges correctly ("OK <case>
rank <r>") or raises the same DecompositionError on every rank ("ERROR <case> rank <r>:
<text>"), and the decomposition still works afterwards (no message left behind). The
cases named on the command line that end the job ("raises", "dies", "leaves") run alone."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

from gtscript import PARALLEL, Field, computation, interval  # noqa: E402
from gtscript import distributed as dist  # noqa: E402

COMM = dist.MPI.COMM_WORLD
RANK, SIZE = COMM.rank, COMM.size
SHAPE, H = (11, 9, 3), 2


def say(line):
    """One write per line, so the lines of several ranks never run together."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def global_array(shape, dtype=np.float64):
    return (np.arange(np.prod(shape)) % 997).astype(dtype).reshape(shape)


def expected_halos(dec, g, loc, sentinel, widths):
    """The local array after an exchange of ``widths``: the global array (wrapped where
    periodic) in the interior and the exchanged halo bands, the sentinel elsewhere."""
    h = dec.halo
    si, sj, _ = dec.global_slices
    (wil, wih), (wjl, wjh) = widths
    expect = np.full(loc.shape, sentinel, dtype=loc.dtype)
    ii = np.arange(si.start - wil, si.stop + wih)
    jj = np.arange(sj.start - wjl, sj.stop + wjh)
    sub = g[ii % g.shape[0]][:, jj % g.shape[1]]
    expect[h - wil:h + dec.shape[0] + wih, h - wjl:h + dec.shape[1] + wjh] = sub
    return expect


def check_exchange(dec, g, order, method, widths, case=""):
    loc = dec.scatter(g if RANK == 0 else None, order=order)
    strides = loc.strides[:3]
    assert list(strides) == sorted(strides, reverse=order == "C"), (order, strides)
    loc[...] = -7
    dec.interior(loc)[...] = g[dec.global_slices]
    dec.exchange(loc, widths=[widths], method=method)
    expect = expected_halos(dec, g, loc, -7, widths)
    bad = np.argwhere(loc != expect)
    assert not len(bad), (case, RANK, order, method, widths, bad[:4].tolist())


def case_mixed_layouts():
    """Rank 0 Fortran order, the others C order (then the reverse, and every rank its own
    method): every halo holds its neighbour's values, not their transpose."""
    dec = dist.Decomposition(SHAPE, H, periodic=(True, True))
    g = global_array(SHAPE)
    g4 = global_array(SHAPE + (3,), np.float32)
    for f_ranks in ({0}, set(range(1, SIZE)), {1, 2}):
        order = "F" if RANK in f_ranks else "C"
        for method in (None, "datatype", "pack", ("pack", "datatype")[RANK % 2]):
            for widths in (((2, 2), (2, 2)), ((1, 2), (0, 1))):
                check_exchange(dec, g, order, method, widths, case="mixed")
                check_exchange(dec, g4, order, method, widths, case="mixed-data-dims")
    # mixed: every rank packs (in I, J, K order), whatever method it asked for: no datatype
    assert not dec._types, dec._types.keys()
    # the same layout everywhere: the datatypes follow memory order (whole runs as blocks),
    # and the halos are right
    for order, memory in (("C", (0, 1, 2)), ("F", (2, 1, 0))):
        dec.free()
        dec = dist.Decomposition(SHAPE, H, periodic=(True, True))
        check_exchange(dec, g, order, None, ((2, 2), (2, 2)), case="same")
        assert {key[3] for key in dec._types} == {memory}, (order, dec._types.keys())
    dec.free()
    say(f"OK mixed-layouts rank {RANK}")


def expect_error(case, make, fragment):
    try:
        make()
    except dist.DecompositionError as exc:
        assert fragment in str(exc), (case, str(exc))
        say(f"ERROR {case} rank {RANK}: {exc}")
        return
    raise AssertionError(f"{case}: no error on rank {RANK}")


def lap_twin(inp: Field[np.float64], out: Field[np.float64]):
    """lap_def's reads with other coefficients: the same halo widths, another stencil."""
    with computation(PARALLEL), interval(...):
        out = inp + 0.2 * (inp[-1, 0, 0] + inp[1, 0, 0] + inp[0, -1, 0] + inp[0, 1, 0]
                           - 4.0 * inp + 0.5 * (inp[1, 1, 0] - inp[-1, -1, 0]))


def case_disagreements():
    dec = dist.Decomposition(SHAPE, H, periodic=(True, True))
    a, b = dec.zeros(), dec.zeros()
    last = SIZE - 1
    expect_error("dtype", lambda: dec.exchange(dec.zeros(np.float32) if RANK == last else a),
                 "disagree")
    expect_error("k-size", lambda: dec.exchange(
        np.zeros(dec.local_shape[:2] + (4,)) if RANK == 1 else a), "disagree")
    expect_error("data-dims", lambda: dec.exchange(
        dec.zeros((np.float64, (2,))) if RANK == 2 else a), "disagree")
    expect_error("widths", lambda: dec.exchange(
        a, widths=[((1, 1), (1, 1)) if RANK == 2 else ((2, 2), (2, 2))]), "disagree")
    expect_error("field-count", lambda: dec.exchange(*((a, b) if RANK == 1 else (a,))),
                 "disagree")
    expect_error("start-exchange", lambda: dec.start_exchange(
        *((a, b) if RANK == 0 else (a,))).wait(), "disagree")
    # what one rank finds wrong with its own arguments: the same error on every rank too
    expect_error("widths-malformed", lambda: dec.exchange(
        a, widths=[(1, 2, 3) if RANK == 1 else ((1, 1), (1, 1))]), "rank 1: widths")
    read_only = a.copy()
    read_only.flags.writeable = False
    expect_error("read-only", lambda: dec.exchange(read_only if RANK == 2 else a),
                 "rank 2: field 0")
    expect_error("negative-strides", lambda: dec.exchange(
        a[::-1] if RANK == last else a, method="datatype"), f"rank {last}: field 0")
    expect_error("method", lambda: dec.exchange(a, method="packed" if RANK == 0 else None),
                 "rank 0: method")
    g = global_array(SHAPE)
    expect_error("scatter-root", lambda: dec.scatter(g, root=1 if RANK == last else 0),
                 "disagree")
    expect_error("gather-root", lambda: dec.gather(a, root=2 if RANK == 0 else 0),
                 "disagree")
    expect_error("gather-dtype", lambda: dec.gather(
        dec.zeros(np.int32) if RANK == 1 else a), "disagree")
    expect_error("scatter-vs-exchange", lambda: (
        dec.scatter(g) if RANK == 2 else dec.exchange(a)), "disagree")
    expect_error("root-out-of-range", lambda: dec.gather(a, root=SIZE), "root")
    lap = common.build(common.lap_def, builder=dist.stencil)
    twin = dist.stencil("cpu", lap_twin)
    assert dec.halo_widths(lap) == dec.halo_widths(twin)
    expect_error("stencil-key", lambda: dec.run(twin if RANK == 1 else lap, a, b), "disagree")
    expect_error("run-argument-dtype", lambda: dec.run(
        lap, a, dec.zeros(np.float32) if RANK == 1 else b), "disagree")
    expect_error("build-root", lambda: dist.stencil(
        "cpu", lap_twin, root=1 if RANK == 2 else 0), "disagree")
    # nobody was left inside a message: the decomposition still exchanges right
    g2 = global_array(SHAPE)
    check_exchange(dec, g2, "C", None, ((2, 2), (2, 2)), case="after")
    back = dec.gather(dec.scatter(g2 if RANK == 0 else None))
    assert np.array_equal(back, g2) if RANK == 0 else back is None
    # a root given as a NumPy integer on one rank is the same root
    back = dec.gather(dec.scatter(g2 if RANK == 0 else None, root=np.int64(0) if RANK == 1
                                  else 0), root=np.int32(0) if RANK == 2 else 0)
    assert np.array_equal(back, g2) if RANK == 0 else back is None
    dec.free()
    say(f"OK disagreements rank {RANK}")


#: the decomposition's timeout in the cases that end the job (seconds; unset: none)
TIMEOUT = float(os.environ["HOSTILE_TIMEOUT"]) if os.environ.get("HOSTILE_TIMEOUT") else None


def case_raises():
    """One rank raises before the exchange the others are waiting in."""
    dec = dist.Decomposition(SHAPE, H, periodic=(True, True), timeout=TIMEOUT)
    a = dec.zeros()
    if RANK == 1:
        raise RuntimeError("rank 1 gave up before the exchange")
    dec.exchange(a)
    say(f"UNREACHABLE {RANK}")


def case_dies():
    """One rank's process ends (no exception, no MPI_Finalize) before the exchange."""
    dec = dist.Decomposition(SHAPE, H, periodic=(True, True), timeout=TIMEOUT)
    a = dec.zeros()
    if RANK == 1:
        os._exit(3)
    dec.exchange(a)
    say(f"UNREACHABLE {RANK}")


def case_leaves():
    """One rank returns quietly (status 0) before the exchange; the others give up after
    the decomposition's timeout with the same error."""
    dec = dist.Decomposition(SHAPE, H, periodic=(True, True), timeout=TIMEOUT)
    a = dec.zeros()
    if RANK == 1:
        sys.exit(0)
    dec.exchange(a)
    say(f"UNREACHABLE {RANK}")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    for name in sys.argv[1:] or ("mixed_layouts", "disagreements"):
        CASES[name]()
    COMM.Barrier()
