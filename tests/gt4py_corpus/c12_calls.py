"""Calls: default origin and domain, IJ-only stencils, and calls both GT4Py and gtscript refuse
(an empty or too large domain, an array too small for the stencil's halo, wrong dtypes or
dimensions)."""

import numpy as np

from gt4py.cartesian.gtscript import IJ, PARALLEL, FORWARD, Field, computation, interval

from gt4py_corpus.case import DEFAULT, Case

CASES = []


def default_call(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a * 2.0


CASES.append(Case(default_call, origin=DEFAULT))


def default_call_with_halo(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[1, 0, 0] - a[-1, 0, 0] + a[0, 2, 0]


CASES.append(Case(default_call_with_halo, origin=(1, 0, 0), domain=(8, 7, 7)))


def ij_only_default(a: Field[IJ, np.float64], out: Field[IJ, np.float64]):
    with computation(FORWARD), interval(0, 1):
        out = a + 1.0


CASES.append(Case(ij_only_default, origin=DEFAULT, needs="IJ-only stencils without domain="))


def empty_domain(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a


CASES.append(Case(empty_domain, expect="stricter", domain=(0, 5, 7), needs="an empty domain is an error"))


def halo_larger_than_array(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[2, 0, 0]


CASES.append(Case(halo_larger_than_array, expect="stricter", shape=(2, 10, 5), origin=DEFAULT,
                  needs="a default domain emptied by the halo is an error"))


def shapes_disagree(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a


CASES.append(Case(shapes_disagree, expect="stricter", origin=DEFAULT,
                  arrays={"out": lambda rng, s, dt: np.zeros((s[0] - 2,) + s[1:], dt)},
                  needs="arrays that disagree make the default domain an error"))


def domain_too_large(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[1, 0, 0]


CASES.append(Case(domain_too_large, expect="call_reject", origin=(0, 0, 0), domain=(10, 9, 7)))


def array_too_small_for_halo(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[2, 0, 0]


CASES.append(Case(array_too_small_for_halo, expect="call_reject", shape=(4, 10, 5), origin=(2, 0, 0),
                  domain=(1, 10, 5)))


def wrong_dtype_argument(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a


CASES.append(Case(wrong_dtype_argument, expect="call_reject",
                  arrays={"a": lambda rng, s, dt: rng.uniform(size=s).astype(np.float32)}))


def wrong_ndim_argument(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a


CASES.append(Case(wrong_ndim_argument, expect="call_reject",
                  arrays={"a": lambda rng, s, dt: rng.uniform(size=s[:2])}))


def too_few_levels(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL):
        with interval(0, 2):
            out = a
        with interval(-2, None):
            out = -a


CASES.append(Case(too_few_levels, expect="call_reject", shape=(10, 9, 3)))


def negative_origin(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[-1, 0, 0]


CASES.append(Case(negative_origin, expect="call_reject", origin=(0, 0, 0), domain=(6, 5, 7)))


def build_options(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a - 1.0


CASES.append(Case(build_options, options={"format_source": False, "verbose": True, "cache_settings": {}},
                  needs="GT4Py's build options (format_source, verbose, cache_settings) accepted and ignored"))


def build_info_option(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a + 1.0


CASES.append(Case(build_info_option, options={"build_info": {}}, needs="build_info= filled by the build"))
