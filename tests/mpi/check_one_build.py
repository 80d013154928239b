"""Run under mpiexec by tests/distributed/test_distributed.py: every rank gets its own, empty disk cache
(no shared file system); distributed.stencil compiles on rank 0 only, the others load the
broadcast object. Prints "SOURCE <rank> <module_source> <cache key>"."""

import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gtscript import distributed as dist  # noqa: E402

COMM = dist.MPI.COMM_WORLD


def say(line):
    """One write per line, so the lines of several ranks never run together."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()

os.environ["GTSCRIPT_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"gtscript-rank{COMM.rank}-")

import common  # noqa: E402

import gtscript  # noqa: E402

hdiff = common.build(common.hdiff_def, builder=dist.stencil)
info = gtscript.cache.info()
say(f"SOURCE {COMM.rank} {hdiff.build_info['module_source']} {hdiff.cache_key} "
      f"misses={info['misses']} disk_hits={info['disk_hits']}")
# the loaded object computes what the compiled one does
inp = np.random.default_rng(0).uniform(size=(10, 9, 3))
out = np.zeros_like(inp)
hdiff(inp, out, alpha=0.1)
sums = COMM.allgather(out.tobytes())
assert all(s == sums[0] for s in sums)


# a build error on the root is raised on every rank
def broken(inp: gtscript.Field[np.float64], out: gtscript.Field[np.float64]):
    with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
        out = undefined_name  # noqa: F821


try:
    dist.stencil("cpu", broken)
except Exception as exc:  # noqa: BLE001
    say(f"BUILD-ERROR {COMM.rank} {type(exc).__name__}")
COMM.Barrier()
