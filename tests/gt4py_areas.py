"""Probes for parts of the GT4Py-backend work that live in other changes (the GT4Py objects in
gtscript's frontend, aliased calls that cannot race, unused arguments left unchecked): each
says, by behaviour, whether the gtscript in use has that part. The GT4Py API tests mark what
needs a missing part ``xfail(strict=True)`` with the part's name; once the part is in, the
probe is true, the marks do not apply and the tests must pass."""

from __future__ import annotations

import functools
import warnings

import numpy as np

OBJECTS = "gt4py-objects: gtscript's frontend reading GT4Py's own objects (Field annotations, axis indices, functions, enums)"
ALIAS = "corner-alias: aliased calls that cannot depend on the order (corner fills in place)"
UNUSED = "gt4py-refused: arguments a build does not use are not checked"


@functools.cache
def has_gt4py_objects() -> bool:
    """gtscript's frontend builds a definition annotated with GT4Py's ``Field``."""
    import gt4py.cartesian.gtscript as gt4py_gtscript

    import gtscript

    import _probe_defs  # noqa: F401 - a source file for the definition
    try:
        gtscript.stencil("numpy", _probe_defs.gt4py_copy)
    except Exception:  # noqa: BLE001 - any refusal means the part is missing
        return False
    del gt4py_gtscript
    return True


@functools.cache
def has_corner_alias() -> bool:
    """gtscript runs a corner fill with one array as input and output."""
    import gtscript

    import _probe_defs

    stencil = gtscript.stencil("numpy", _probe_defs.corner_fill, externals=_probe_defs.corner_externals())
    q = np.arange(6 * 6 * 2, dtype=np.float64).reshape(6, 6, 2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stencil(q, q, origin=(0, 0, 0), domain=(6, 6, 2))
    except ValueError:
        return False
    return True


@functools.cache
def has_unused_arguments() -> bool:
    """gtscript takes a 3-D array for a 2-D field the build never reads."""
    import gtscript

    import _probe_defs

    stencil = gtscript.stencil("numpy", _probe_defs.unused_ij, externals={"USE": False})
    a = np.ones((3, 3, 2))
    try:
        stencil(a, np.ones((3, 3, 2)), a.copy())
    except ValueError:
        return False
    return True


INTERVAL_SCALAR = ("gt4py-refused: a scalar read only in a run-time interval bound is taken for an unused "
                   "argument and not passed (the interval runs on no level: a silently wrong result)")


@functools.cache
def interval_scalar_lost() -> bool:
    """A scalar parameter read only in ``interval(0, n)`` is dropped from the call."""
    import gtscript

    import _probe_defs

    a, out = np.ones((2, 2, 4)), np.zeros((2, 2, 4))
    try:  # the numpy backend raises a KeyError; the cpu backend reads a bound never passed
        gtscript.stencil("numpy", _probe_defs.runtime_bound)(a, out, 2)
    except Exception:  # noqa: BLE001
        return True
    return not out[:, :, :2].all()


FUNCTION_GLOBALS = ("gt4py-objects: a GT4Py @gtscript.function keeps the globals it had when decorated "
                    "(GT4Py captures them; gtscript read the module's current value)")


@functools.cache
def gt4py_function_keeps_globals() -> bool:
    """A GT4Py ``@gtscript.function`` reads the globals it had when decorated."""
    import gtscript

    import _probe_defs

    a, out = np.ones((2, 2, 2)), np.zeros((2, 2, 2))
    try:
        gtscript.stencil("numpy", _probe_defs.gt4py_function_call)(a, out)
    except Exception:  # noqa: BLE001 - GT4Py's functions not read at all
        return False
    return bool((out == 1.0).all())
