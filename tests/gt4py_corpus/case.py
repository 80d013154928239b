"""One corpus entry: a definition written in GT4Py spelling and everything its call needs.

The corpus modules are plain GT4Py code: their module-level import lines name
``gt4py.cartesian``. The conformance test imports each module twice, once as written (for
GT4Py) and once with only those import lines rewritten to name ``gtscript``; an entry names
its definition by the function's name, so it finds the definition in either copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: The default grid: two halo points on each horizontal side, the whole column in K.
SHAPE = (10, 9, 7)
ORIGIN = (2, 2, 0)

#: ``origin=DEFAULT`` calls without ``origin`` and ``domain``: both come from the arrays.
DEFAULT = ()

#: What an entry expects:
#:   "match"       GT4Py builds it; gtscript builds it on every backend and gives GT4Py's results
#:   "reject"      GT4Py refuses to build it, and so does gtscript (any exception from both)
#:   "deliberate"  gtscript refuses it on purpose (the parallel model), when it is built or, for
#:                 an entry with ``alias``, when it is called; the error's message contains every
#:                 string of ``words``, and where GT4Py raises a ValueError so does gtscript
#:                 (code written for GT4Py catches it)
#:   "beyond"      GT4Py 1.1 refuses it, gtscript accepts it (as later GT4Py versions do, or as
#:                 a documented extension): gtscript's results are compared with
#:                 ``reference(args)``, hand-written NumPy
#:   "call_reject" both build it, and both refuse the entry's call (any exception); gtscript
#:                 leaves every array as it was
#:   "stricter"    both build it; GT4Py runs the call without a word though it computes less than
#:                 asked, gtscript refuses it with a ValueError and leaves every array as it was
EXPECTS = ("match", "reject", "deliberate", "beyond", "call_reject", "stricter")


@dataclass
class Case:
    definition: Callable
    expect: str = "match"
    shape: tuple = SHAPE
    origin: Any = ORIGIN
    domain: Any = None  # default: the shape less the origin's halo on both horizontal sides
    scalars: dict = field(default_factory=dict)  # scalar arguments (all others use a default)
    externals: Any = field(default_factory=dict)  # a dict, or a function of the corpus module's copy
    options: dict = field(default_factory=dict)  # further build options (dtypes=...)
    arrays: dict = field(default_factory=dict)  # name -> function(rng, shape, dtype) -> array
    positive: bool = False  # float inputs in [0.5, 2) instead of [-1, 1)
    alias: dict = field(default_factory=dict)  # parameter -> parameter whose array it is given
    omit: tuple = ()  # scalar parameters left out of the call (their defaults apply)
    words: tuple = ()  # for "deliberate": what gtscript's error message says
    reference: Any = None  # for "beyond": function(arguments) -> the expected arrays
    oracle: str = "numpy"  # GT4Py's backend for the expected results ("debug" where numpy lacks the feature)
    needs: str = ""  # the construct this entry exercises beyond the basics (for reports)

    def __post_init__(self):
        assert self.expect in EXPECTS, self.expect
        assert self.expect != "deliberate" or self.words, "a deliberate difference names its words"
        assert (self.expect == "beyond") == (self.reference is not None), "only 'beyond' has a reference"
        self.name = self.definition.__name__
        if self.domain is None and isinstance(self.origin, tuple) and self.origin != DEFAULT:
            self.domain = (self.shape[0] - 2 * self.origin[0], self.shape[1] - 2 * self.origin[1],
                           self.shape[2] - self.origin[2])

    def externals_for(self, module) -> dict:
        """The externals for one copy of the corpus module (GT4Py's or gtscript's): a function
        makes them from that copy, so gtscript functions and axis indices come from the
        frontend that builds the stencil."""
        return self.externals(module) if callable(self.externals) else dict(self.externals)


def k_shift(low: int = 0, high: int | None = None):
    """An integer field of K offsets such that k + offset stays inside [low, nk - high)."""
    def make(rng, shape, dtype):
        nk = shape[2]
        top = nk - (high or 0)
        k = __import__("numpy").arange(nk)
        return (rng.integers(low, top, shape) - k).astype(dtype)
    return make


def k_index(low: int = 0, high: int = 0):
    """An integer field of absolute K indices in [low, nk - high)."""
    def make(rng, shape, dtype):
        return rng.integers(low, SHAPE[2] - high, shape).astype(dtype)
    return make


def with_specials(rng, shape, dtype):
    """Floats with some NaNs and infinities among them."""
    a = rng.uniform(-2.0, 2.0, shape).astype(dtype)
    flat = a.reshape(-1)
    idx = rng.choice(flat.size, size=flat.size // 5, replace=False)
    flat[idx[0::3]] = float("nan")
    flat[idx[1::3]] = float("inf")
    flat[idx[2::3]] = -float("inf")
    return a
