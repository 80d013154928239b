"""More of GT4Py's frontend: axis-shorthand indexing forms, vector and matrix data dimensions,
literal precision options, K offsets computed from what the stencil writes, IJ-field interval
bounds, and GT4Py's own rejections of misuse."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, I, J, K, computation, interval

from gt4py_corpus.case import Case, k_index

CASES = []


def shorthand_k(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, -1):
        out = a[K + 1] - a


CASES.append(Case(shorthand_k, needs="axis-shorthand indexing"))


def shorthand_two_axes(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[I - 1, J] + a[I, J + 1]


CASES.append(Case(shorthand_two_axes, needs="axis-shorthand indexing"))


def shorthand_centre(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[I] * 2.0


CASES.append(Case(shorthand_centre, needs="axis-shorthand indexing"))


def shorthand_j(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[J - 1] + a[J + 2]


CASES.append(Case(shorthand_j, needs="axis-shorthand indexing"))


def matrix_vector_product(mat: Field[(np.float64, (2, 2))], vec: Field[(np.float64, (2,))],
                          out: Field[(np.float64, (2,))]):
    with computation(PARALLEL), interval(...):
        out = mat @ vec


CASES.append(Case(matrix_vector_product, needs="matrix expressions on data dimensions (@)"))


def vector_scaled_copy(vec: Field[(np.float64, (3,))], out: Field[(np.float64, (3,))]):
    with computation(PARALLEL), interval(...):
        out = 2.0 * vec


CASES.append(Case(vector_scaled_copy, needs="whole-vector data-dimension expressions"))


def int_literal_precision(a: Field[np.int32], out: Field[np.int32]):
    with computation(PARALLEL), interval(...):
        out = a * 3 + 1


CASES.append(Case(int_literal_precision, options={"literal_int_precision": 32}, needs="literal_int_precision"))


def float_literal_precision(a: Field[np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        out = a * 0.1 + 0.3


CASES.append(Case(float_literal_precision, options={"literal_float_precision": 32},
                  needs="literal_float_precision"))


def remap_like_lookup(a: Field[np.float64], lev: Field[np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        idx = lev - 1
        out = a[0, 0, idx]


CASES.append(Case(remap_like_lookup, arrays={"lev": lambda rng, s, dt: (rng.integers(0, s[2], s) - np.arange(s[2]) + 1).astype(dt)},
                  needs="variable K offsets computed from temporaries"))


def search_then_read(a: Field[np.float64], found: Field[np.int64], out: Field[np.float64]):
    with computation(BACKWARD):
        with interval(-1, None):
            found = 0
        with interval(0, -1):
            found = found[0, 0, 1] + 1 if a[0, 0, 1] > a else 0
    with computation(PARALLEL), interval(...):
        out = a[0, 0, found]


CASES.append(Case(search_then_read, needs="variable K offsets computed from fields the stencil writes"))


def ij_interval_bound(a: Field[np.float64], top: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, top):
        out = a


CASES.append(Case(ij_interval_bound, arrays={"top": k_index(1)}, oracle="debug",
                  needs="run-time interval bounds (an IJ field)"))


def ij_write_in_parallel(a: Field[np.float64], s: Field[IJ, np.float64]):
    with computation(PARALLEL), interval(...):
        s = a


CASES.append(Case(ij_write_in_parallel, expect="reject"))


def data_index_out_of_range(vec: Field[(np.float64, (2,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = vec[0, 0, 0][2]


CASES.append(Case(data_index_out_of_range, expect="reject"))


def wrong_offset_count(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[1, 0]


CASES.append(Case(wrong_offset_count, expect="reject"))


def unknown_policy(a: Field[np.float64], out: Field[np.float64]):
    with computation(SIDEWAYS), interval(...):
        out = a


CASES.append(Case(unknown_policy, expect="reject"))


def interval_outside_computation(a: Field[np.float64], out: Field[np.float64]):
    with interval(...):
        out = a


CASES.append(Case(interval_outside_computation, expect="reject"))


def forward_partial_levels(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(1, 3):
            out = a + out[0, 0, -1]
        with interval(3, -1):
            out = out[0, 0, -1] * 0.5


CASES.append(Case(forward_partial_levels))


def written_then_read_across_computations(a: Field[np.float64], out: Field[np.float64], col: Field[np.float64]):
    with computation(FORWARD), interval(...):
        col = a[1, 0, 0] + a[-1, 0, 0]
    with computation(PARALLEL), interval(...):
        out = col[0, 1, 0] - col[0, -1, 0]


def _column_then_difference(x):
    # gtscript computes 'col' on the J halo its later reads need (GT4Py 1.1 refuses the read)
    a, col, out = x["a"], x["col"].copy(), x["out"].copy()
    col[2:-2, 1:-1] = a[3:-1, 1:-1] + a[1:-3, 1:-1]
    out[2:-2, 2:-2] = col[2:-2, 3:-1] - col[2:-2, 1:-3]
    return {**x, "col": col, "out": out}


CASES.append(Case(written_then_read_across_computations, expect="beyond", reference=_column_then_difference))


def bool_scalar_and_field(a: Field[np.float64], m: Field[np.bool_], out: Field[np.float64], on: bool):
    with computation(PARALLEL), interval(...):
        out = a if on and m else -a


CASES.append(Case(bool_scalar_and_field, scalars={"on": True}))


def int_scalar_division(a: Field[np.float64], out: Field[np.float64], n: int):
    with computation(PARALLEL), interval(...):
        out = a / n + n / 4


CASES.append(Case(int_scalar_division, scalars={"n": 3}))


def float32_scalar_promotion(a: Field[np.float32], out: Field[np.float64], w: float):
    with computation(PARALLEL), interval(...):
        out = a * w


CASES.append(Case(float32_scalar_promotion, scalars={"w": 0.3}))
