"""Halo exchange and distributed diffusion timings (docs/distributed.md). Run under MPI:

    .venv/bin/mpiexec -n 4 .venv/bin/python benchmarks/halo_exchange.py
    .venv/bin/mpiexec -n 2 .venv/bin/python benchmarks/halo_exchange.py --sizes 128x128x80

Per-rank subdomain sizes (the global grid grows with the ranks: weak scaling), periodic in I
and J so every rank has eight neighbours. For each halo width 1-3 it times
``Decomposition.exchange`` with MPI derived datatypes (``method="datatype"``, no copy) and
with packing (``method="pack"``: NumPy copies into contiguous buffers), against plain
``Sendrecv`` calls moving the same eight messages between the same ranks from buffers that
are already contiguous (what the transport costs by itself). Then one step of horizontal
diffusion (a 2-point halo) through ``Decomposition.run`` with and without overlap.
Every time is the median over ``--repeat`` runs of the slowest rank (a barrier before
each). With two ranks or more, a ping-pong between ranks 0 and 1 gives the latency and
bandwidth the cost model of docs/distributed.md uses. The Markdown table goes to stdout on
rank 0.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "mpi"))
import common  # noqa: E402

from gtscript import distributed as dist  # noqa: E402

MPI = dist.MPI
COMM = MPI.COMM_WORLD


#: enough for a plan's tuning (docs/performance.md, measured call plans): at most 90 calls
#: for a step whose kernel runs under 2 ms
WARMUP_CALLS = 91


def timed(fn, repeat):
    """Median over ``repeat`` runs of the slowest rank's time (seconds)."""
    # warm up: datatypes, kernels for the layout, and the cpu plans' tuning calls (WARMUP_CALLS
    # per domain a step calls its stencil on; docs/performance.md, measured call plans)
    for _ in range(WARMUP_CALLS):
        fn()
    times = []
    for _ in range(repeat):
        COMM.Barrier()
        t0 = time.perf_counter()
        fn()
        times.append(COMM.allreduce(time.perf_counter() - t0, op=MPI.MAX))
    return float(np.median(times))


def sendrecv_same_bytes(dec, width):
    """Contiguous buffers of the eight band sizes, each swapped with the neighbours by a
    Sendrecv (the send toward d, the receive from -d)."""
    ni, nj, nk = dec.shape
    sizes = {}
    for d in dist.DIRECTIONS:
        bi = width if d[0] else ni
        bj = width if d[1] else nj
        sizes[d] = bi * bj * nk
    send = {d: np.ones(n) for d, n in sizes.items()}
    recv = {d: np.empty(n) for d, n in sizes.items()}

    def run():
        for code, d in enumerate(dist.DIRECTIONS):
            opposite = (-d[0], -d[1])
            dec.comm.Sendrecv(send[d], dest=dec.neighbours[d], sendtag=code,
                              recvbuf=recv[opposite], source=dec.neighbours[opposite],
                              recvtag=code)

    return run, sum(sizes.values()) * 8


def pingpong(nbytes, repeat):
    """One-way time of an ``nbytes`` message between ranks 0 and 1 (half a round trip)."""
    buf = np.zeros(max(nbytes, 1), dtype=np.uint8)

    def run():
        if COMM.rank == 0:
            COMM.Send(buf, dest=1, tag=3)
            COMM.Recv(buf, source=1, tag=4)
        elif COMM.rank == 1:
            COMM.Recv(buf, source=0, tag=3)
            COMM.Send(buf, dest=0, tag=4)

    return timed(lambda: [run() for _ in range(10)], repeat) / 20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["128x128x80", "512x512x80"])
    parser.add_argument("--widths", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    hdiff = common.build(common.hdiff_def, builder=dist.stencil)
    dims = MPI.Compute_dims(COMM.size, 2)
    rows = []
    for text in args.sizes:
        ni, nj, nk = (int(n) for n in text.split("x"))
        shape = (ni * dims[0], nj * dims[1], nk)
        dec = dist.Decomposition(shape, 3, periodic=(True, True))
        field = dec.zeros()
        field[...] = np.random.default_rng(COMM.rank).uniform(size=field.shape)
        for width in args.widths:
            w = [((width, width), (width, width))]
            t_dt = timed(lambda: dec.exchange(field, widths=w, method="datatype"), args.repeat)
            t_pk = timed(lambda: dec.exchange(field, widths=w, method="pack"), args.repeat)
            run, nbytes = sendrecv_same_bytes(dec, width)
            t_sr = timed(run, args.repeat)
            rows.append((text, f"exchange w={width}", nbytes, t_dt, t_pk, t_sr))
        a, b = dec.zeros(), dec.zeros()
        a[...] = field
        for overlap in (False, True):
            t = timed(lambda: dec.run(hdiff, a, b, alpha=0.01, overlap=overlap), args.repeat)
            rows.append((text, f"diffusion step overlap={overlap}", None, t, None, None))
        dec.free()
    latency = bandwidth = None
    if COMM.size >= 2:
        latency = pingpong(8, args.repeat)
        bandwidth = (1 << 22) / pingpong(1 << 22, args.repeat)
    if COMM.rank == 0:
        print(f"\n{COMM.size} rank(s), dims {tuple(dims)}, {os.cpu_count()} cores, "
              f"{MPI.Get_library_version().splitlines()[0]}\n")
        print("| per-rank size | what | bytes sent per rank | datatype (ms) | pack (ms) "
              "| plain Sendrecv (ms) | datatype / Sendrecv |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for size, what, nbytes, t1, t2, t3 in rows:
            cells = [size, what, "" if nbytes is None else f"{nbytes:,}", f"{1e3 * t1:.3f}",
                     "" if t2 is None else f"{1e3 * t2:.3f}",
                     "" if t3 is None else f"{1e3 * t3:.3f}",
                     "" if t3 is None else f"{t1 / t3:.2f}"]
            print("| " + " | ".join(cells) + " |")
        if latency is not None:
            print(f"\nping-pong between ranks 0 and 1: latency {1e6 * latency:.2f} us (8 B), "
                  f"bandwidth {bandwidth / 1e9:.2f} GB/s (4 MiB messages)")


if __name__ == "__main__":
    main()
