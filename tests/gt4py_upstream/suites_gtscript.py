"""Suites for GT4Py's shipped test machinery (``gt4py.cartesian.testing.StencilTestSuite``),
run by run_upstream.py over ``GTSCRIPT_GT4PY_BACKENDS``: the class draws domains and inputs
with Hypothesis, builds the definition on every backend through GT4Py's API, checks the
stencil's field_info and compares each result with ``validation`` (NumPy)."""

import os

import hypothesis
import numpy as np
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, PARALLEL, computation, interval
from gt4py.cartesian.testing import StencilTestSuite, field, parameter

import gtscript.gt4py  # noqa: F401  (registers the gtscript backends)

# StencilTestSuite builds each implementation once (test_generation asserts it has none yet):
# one Hypothesis example per generated test, no deadline (builds take seconds). Only in the
# process run_upstream.py starts: make test's doctest collection imports this module too, and
# the profile is global.
if os.environ.get("GTSCRIPT_STENCIL_SUITES") == "1":
    hypothesis.settings.register_profile("stencil-suites", max_examples=1, deadline=None,
                                         suppress_health_check=list(hypothesis.HealthCheck))
    hypothesis.settings.load_profile("stencil-suites")

BACKENDS = os.environ.get("GTSCRIPT_GT4PY_BACKENDS", "gtscript:cpu,gtscript:numpy,numpy").split(",")


class TestLaplacian(StencilTestSuite):
    dtypes = (np.float64,)
    domain_range = [(1, 12), (1, 12), (1, 6)]
    backends = BACKENDS
    symbols = dict(
        inp=field(in_range=(-10, 10), boundary=[(1, 1), (1, 1), (0, 0)]),
        out=field(in_range=(-10, 10), boundary=[(0, 0), (0, 0), (0, 0)]),
    )

    def definition(inp, out):
        with computation(PARALLEL), interval(...):
            out = -4.0 * inp[0, 0, 0] + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]

    def validation(inp, out, *, domain, origin, **kwargs):
        out[...] = -4.0 * inp[1:-1, 1:-1, :] + inp[2:, 1:-1, :] + inp[:-2, 1:-1, :] + inp[1:-1, 2:, :] + inp[1:-1, :-2, :]


class TestScaledAxpy(StencilTestSuite):
    dtypes = {"x": np.float64, "y": np.float64, "a": np.float64}
    domain_range = [(1, 10), (1, 10), (1, 6)]
    backends = BACKENDS
    symbols = dict(
        x=field(in_range=(-10, 10), boundary=[(0, 0), (0, 0), (0, 0)]),
        y=field(in_range=(-10, 10), boundary=[(0, 0), (0, 0), (0, 0)]),
        a=parameter(in_range=(-5, 5)),
    )

    def definition(x, y, a):
        with computation(PARALLEL), interval(...):
            y = a * x + y

    def validation(x, y, a, *, domain, origin, **kwargs):
        y[...] = a * x + y


class TestColumnSweeps(StencilTestSuite):
    dtypes = (np.float64,)
    domain_range = [(1, 8), (1, 8), (2, 8)]
    backends = BACKENDS
    symbols = dict(
        inp=field(in_range=(-1, 1), boundary=[(0, 0), (0, 0), (0, 0)]),
        out=field(in_range=(-1, 1), boundary=[(0, 0), (0, 0), (0, 0)]),
    )

    def definition(inp, out):
        with computation(FORWARD):
            with interval(0, 1):
                out = inp
            with interval(1, None):
                out = inp + 0.5 * out[0, 0, -1]
        with computation(BACKWARD), interval(0, -1):
            out = out + 0.25 * out[0, 0, 1]

    def validation(inp, out, *, domain, origin, **kwargs):
        nk = inp.shape[2]
        out[:, :, 0] = inp[:, :, 0]
        for k in range(1, nk):
            out[:, :, k] = inp[:, :, k] + 0.5 * out[:, :, k - 1]
        for k in range(nk - 2, -1, -1):
            out[:, :, k] = out[:, :, k] + 0.25 * out[:, :, k + 1]
