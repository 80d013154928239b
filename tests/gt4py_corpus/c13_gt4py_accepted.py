"""Constructs of GT4Py's own test suite that GT4Py 1.1 accepts: an indexed IJ field or an IJ
temporary as an interval bound, ``f[...]``, ``dtypes=`` naming Field types and keyed by Python types, and a
definition made with exec() that carries its source in ``__exec_source__``."""

import importlib.metadata

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    FORWARD, IJ, IJK, K, PARALLEL, Field, computation, interval,
)

from gt4py_corpus.case import Case, k_index

CASES = []

#: GT4Py 1.2 refuses f[...] (its message: spell it f): there the entries are "beyond", checked
#: against hand-written NumPy; GT4Py 1.1 builds them and is the reference.
_GT4PY = importlib.metadata.version("gt4py")
_ELLIPSIS_REFUSED = tuple(int(p) for p in _GT4PY.split(".")[:2]) >= (1, 2)
H = (slice(2, -2), slice(2, -2))  # the default compute domain's horizontal part


def _ellipsis_case(definition, reference, needs):
    if _ELLIPSIS_REFUSED:
        return Case(definition, expect="beyond", reference=reference, needs=needs)
    return Case(definition, needs=needs)


# ---- an indexed IJ field as an interval bound (GT4Py runs these on its debug backend only)


# (without K offsets: GT4Py's field_info reports no K boundary for them under such a bound,
# gtscript the levels they may reach; tests/compat_gt4py/test_gt4py_accepted.py runs them)
def bound_indexed_end(a: Field[np.float64], idx: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, idx[0, 0]):
        out = a * 2.0 + 1.0


CASES.append(Case(bound_indexed_end, arrays={"idx": k_index()}, oracle="debug",
                  needs="interval(0, idx[0, 0])"))


def bound_indexed_start(a: Field[np.float64], idx: Field[IJ, np.int32], out: Field[np.float64]):
    with computation(FORWARD), interval(idx[0, 0], None):
        out = a * 3.0


CASES.append(Case(bound_indexed_start, arrays={"idx": k_index()}, oracle="debug",
                  needs="interval(idx[0, 0], None) in FORWARD"))


def bound_indexed_three(a: Field[np.float64], idx: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, idx[0, 0, 0]):
        out = a
    with computation(PARALLEL), interval(idx[0, 0, 0], None):
        out = -a


CASES.append(Case(bound_indexed_three, arrays={"idx": k_index()}, oracle="debug",
                  needs="interval bounds idx[0, 0, 0] on an IJ field"))


def bound_indexed_off_centre(a: Field[np.float64], idx: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, idx[1, 0]):
        out = a


CASES.append(Case(bound_indexed_off_centre, expect="reject", oracle="debug"))


def bound_ij_temporary(a: Field[np.float64], idx: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(FORWARD), interval(0, 1):
        t: Field[IJ, np.int64] = idx
    with computation(PARALLEL), interval(0, t):
        out = a * 2.0 + 1.0


CASES.append(Case(bound_ij_temporary, arrays={"idx": k_index()}, oracle="debug",
                  needs="interval(0, t) with t an IJ temporary"))


# ---- f[...]: the field at the point itself


def ellipsis_read_write(a: Field[np.float64], b: Field[IJ, np.float64], c: Field[K, np.float64],
                        out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        tmp = a[...] + b[...]
        out[...] = tmp[...] * c[...]


def _read_write(x):
    out = x["out"].copy()
    out[H] = (x["a"][H] + x["b"][H][:, :, None]) * x["c"][None, None, :]
    return {**x, "out": out}


CASES.append(_ellipsis_case(ellipsis_read_write, _read_write,
                            "f[...] on IJK, IJ and K fields and temporaries"))


def ellipsis_data_dims(v: Field[(np.float64, (3,))], out: Field[np.float64]):
    with computation(FORWARD), interval(1, None):
        out[...] = v[...][2] - v[...][0] + out[0, 0, -1]


def _data_dims(x):
    out, v = x["out"].copy(), x["v"]
    for k in range(1, out.shape[2]):
        out[H + (k,)] = v[H + (k, 2)] - v[H + (k, 0)] + out[H + (k - 1,)]
    return {**x, "out": out}


CASES.append(_ellipsis_case(ellipsis_data_dims, _data_dims, "f[...][n] on a data-dimension field"))


def ellipsis_on_scalar(a: Field[np.float64], out: Field[np.float64], s: float):
    with computation(PARALLEL), interval(...):
        out = a + s[...]


CASES.append(Case(ellipsis_on_scalar, expect="reject"))


# ---- dtypes=: Field types by name, and keys that are Python types


def dtypes_field_types(a: "Tij", b: "T3", out: Field[np.float64]):
    with computation(FORWARD), interval(0, 1):
        t: Tij = a * 2.0
    with computation(PARALLEL), interval(...):
        out = t + b


CASES.append(Case(dtypes_field_types,
                  options={"dtypes": {"Tij": Field[IJ, np.float64], "T3": Field[IJK, np.float32]}},
                  needs="dtypes={'T': Field[IJ, np.float64]} for arguments and temporaries"))


def dtypes_python_type_keys(a: Field["T"], b: Field[np.int64], out: Field["T"]):
    with computation(PARALLEL), interval(...):
        out = a * 0.5 + b * 3 + 1.25


CASES.append(Case(dtypes_python_type_keys,
                  options={"dtypes": {"T": np.float64, float: np.float32, int: np.int32}},
                  needs="dtypes= with Python types as keys"))


# ---- a definition made with exec(), its text in __exec_source__ (GT4Py's convention)

_EXEC_SOURCE = '''
def made_with_exec(a: Field[np.float64], out: Field[np.float64], w: float):
    with computation(PARALLEL), interval(...):
        out = w * a + a[1, 0, 0]
'''
exec(_EXEC_SOURCE)  # noqa: S102 - the construct under test
made_with_exec.__exec_source__ = _EXEC_SOURCE  # noqa: F821 - defined by the exec above

CASES.append(Case(made_with_exec, needs="a definition made with exec() (__exec_source__)"))  # noqa: F821
