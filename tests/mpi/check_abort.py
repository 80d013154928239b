"""Run under `mpiexec -n N python -m mpi4py` by tests/distributed/test_distributed.py: rank 1 passes a
wrong argument to run() while the others pass the right one. run() agrees with every rank
on its arguments before any message, so every rank raises the same DecompositionError, and
mpi4py's runner turns the uncaught exception into MPI_Abort: every rank ends instead of
waiting forever."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

from gtscript import distributed as dist  # noqa: E402

COMM = dist.MPI.COMM_WORLD


def say(line):
    """One write per line, so the lines of several ranks never run together."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


lap = common.build(common.lap_def, builder=dist.stencil)
dec = dist.Decomposition((16, 16, 2), 1, periodic=(True, True))
a, b = dec.zeros(), dec.zeros()
for step in range(3):
    if COMM.rank == 1 and step == 1:
        dec.run(lap, a, b.astype(np.float32))  # the stencil rejects the dtype on this rank
    dec.run(lap, a, b)
    a, b = b, a
say(f"UNREACHABLE {COMM.rank}")
