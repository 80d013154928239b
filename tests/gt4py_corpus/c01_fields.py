"""Fields of every axes kind and dtype, data dimensions, scalar parameters."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import IJ, IJK, PARALLEL, FORWARD, Field, I, J, K, computation, interval

from gt4py_corpus.case import Case

CASES = []


def copy_f64(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp


CASES.append(Case(copy_f64))


def copy_f32(inp: Field[np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        out = inp * 0.5


CASES.append(Case(copy_f32))


def copy_i32(inp: Field[np.int32], out: Field[np.int32]):
    with computation(PARALLEL), interval(...):
        out = inp + 3


CASES.append(Case(copy_i32))


def copy_i64(inp: Field[np.int64], out: Field[np.int64]):
    with computation(PARALLEL), interval(...):
        out = inp * 2 - 1


CASES.append(Case(copy_i64))


def copy_bool(inp: Field[np.bool_], out: Field[np.bool_]):
    with computation(PARALLEL), interval(...):
        out = not inp


CASES.append(Case(copy_bool))


def builtin_type_annotations(a: Field[float], n: Field[int], b: Field[bool], out: Field[float]):
    with computation(PARALLEL), interval(...):
        out = a + n if b else a - n


CASES.append(Case(builtin_type_annotations))


def copy_i8(inp: Field[np.int8], out: Field[np.int8]):
    with computation(PARALLEL), interval(...):
        out = inp + inp


CASES.append(Case(copy_i8, needs="int8 fields"))


def copy_i16(inp: Field[np.int16], out: Field[np.int16]):
    with computation(PARALLEL), interval(...):
        out = inp * 3


CASES.append(Case(copy_i16, needs="int16 fields"))


def explicit_ijk(inp: Field[IJK, np.float64], out: Field[IJK, np.float64]):
    with computation(PARALLEL), interval(...):
        out = 2.0 * inp


CASES.append(Case(explicit_ijk))


def ij_broadcast(inp: Field[np.float64], surf: Field[IJ, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp * surf + surf[1, 0]


CASES.append(Case(ij_broadcast))


def k_broadcast(inp: Field[np.float64], prof: Field[K, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp + prof


CASES.append(Case(k_broadcast))


def k_field_offset(prof: Field[K, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, -1):
        out = prof[1] - prof


CASES.append(Case(k_field_offset))


def ij_output_forward(inp: Field[np.float64], total: Field[IJ, np.float64]):
    with computation(FORWARD), interval(0, 1):
        total = inp
    with computation(FORWARD), interval(1, None):
        total = total + inp


CASES.append(Case(ij_output_forward))


def i_only_field(inp: Field[np.float64], row: Field[I, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp * row


CASES.append(Case(i_only_field, needs="Field[I, ...]"))


def j_only_field(inp: Field[np.float64], col: Field[J, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp - col


CASES.append(Case(j_only_field, needs="Field[J, ...]"))


def ik_field(inp: Field[np.float64], sect: Field[gtscript.IK, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp + sect


CASES.append(Case(ik_field, needs="Field[IK, ...] (gtscript.IK)"))


def vector_components(vec: Field[(np.float64, (3,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = vec[0, 0, 0][0] * vec[0, 0, 0][1] - vec[0, 0, 0][2]


CASES.append(Case(vector_components))


def vector_component_write(inp: Field[np.float64], vec: Field[(np.float64, (2,))]):
    with computation(PARALLEL), interval(...):
        vec[0, 0, 0][0] = inp
        vec[0, 0, 0][1] = -inp


CASES.append(Case(vector_component_write))


def matrix_component(mat: Field[(np.float64, (2, 3))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = mat[0, 0, 0][0, 1] + mat[0, 0, 0][1, 2]


CASES.append(Case(matrix_component))


def vector_with_offset(vec: Field[(np.float64, (3,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = vec[1, 0, 0][2] - vec[-1, 0, 0][0] + vec[0, -1, 0][1]


CASES.append(Case(vector_with_offset))


def ij_vector(coef: Field[IJ, (np.float64, (2,))], inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = coef[0, 0][0] * inp + coef[0, 0][1]


CASES.append(Case(ij_vector))


def k_vector(coef: Field[K, (np.float64, (2,))], inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = coef[0][0] * inp + coef[0][1]


CASES.append(Case(k_vector))


def int_data_dims(vec: Field[(np.int32, (4,))], out: Field[np.int32]):
    with computation(PARALLEL), interval(...):
        out = vec[0, 0, 0][0] + vec[0, 0, 0][3]


CASES.append(Case(int_data_dims))


def numpy_int_data_dims(vec: Field[(np.float64, (np.int64(2),))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = vec[0, 0, 0][1]


def _second_component(args):
    out = args["out"].copy()
    out[2:-2, 2:-2, :] = args["vec"][2:-2, 2:-2, :, 1]
    return {"vec": args["vec"], "out": out}


CASES.append(Case(numpy_int_data_dims, expect="beyond", reference=_second_component,
                  needs="data dimensions given as NumPy integers"))


def runtime_data_index(vec: Field[(np.float64, (3,))], out: Field[np.float64], idx: int):
    with computation(PARALLEL), interval(...):
        out = vec[0, 0, 0][idx]


CASES.append(Case(runtime_data_index, scalars={"idx": 2}, needs="run-time data-dimension indices"))


def vector_expression(vec: Field[(np.float64, (3,))], out: Field[(np.float64, (3,))]):
    with computation(PARALLEL), interval(...):
        out = 2.0 * vec + vec


CASES.append(Case(vector_expression, needs="whole-vector data-dimension expressions"))


def scalar_float(inp: Field[np.float64], out: Field[np.float64], alpha: float):
    with computation(PARALLEL), interval(...):
        out = alpha * inp


CASES.append(Case(scalar_float, scalars={"alpha": 1.5}))


def scalar_int(inp: Field[np.int64], out: Field[np.int64], n: int):
    with computation(PARALLEL), interval(...):
        out = inp * n + n


CASES.append(Case(scalar_int, scalars={"n": 3}))


def scalar_bool(inp: Field[np.float64], out: Field[np.float64], negate: bool):
    with computation(PARALLEL), interval(...):
        if negate:
            out = -inp
        else:
            out = inp


CASES.append(Case(scalar_bool, scalars={"negate": True}))


def scalar_np_types(inp: Field[np.float32], out: Field[np.float32], w: np.float32, n: np.int32):
    with computation(PARALLEL), interval(...):
        out = w * inp + n


CASES.append(Case(scalar_np_types, scalars={"w": np.float32(0.25), "n": np.int32(2)}))


def keyword_scalars(inp: Field[np.float64], out: Field[np.float64], *, a: float = 1.0, b: float = 0.0):
    with computation(PARALLEL), interval(...):
        out = a * inp + b


CASES.append(Case(keyword_scalars, scalars={"a": 3.0, "b": -1.0}))


def scalar_defaults_used(inp: Field[np.float64], out: Field[np.float64], *, weight: np.float64 = 2.0):
    with computation(PARALLEL), interval(...):
        out = weight * inp


CASES.append(Case(scalar_defaults_used, omit=("weight",), needs="defaults of scalar parameters"))


def dtype_placeholders(inp: Field["T"], out: Field["T"]):
    with computation(PARALLEL), interval(...):
        out = inp + inp


CASES.append(Case(dtype_placeholders, options={"dtypes": {"T": np.float32}}, needs="dtypes= placeholders"))


def module_attribute_spelling(inp: gtscript.Field[np.float64], out: gtscript.Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp + 1.0


CASES.append(Case(module_attribute_spelling))



def unused_parameter(inp: Field[np.float64], unused: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp


CASES.append(Case(unused_parameter))


def int32_times_int(a: Field[np.int32], out: Field[np.int64], n: int):
    with computation(PARALLEL), interval(...):
        out = a * n


CASES.append(Case(int32_times_int, scalars={"n": 7}))


def float32_with_literal(a: Field[np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        out = a * 0.1 + 1.0 / 3.0


CASES.append(Case(float32_with_literal))


def mixed_dtypes(a: Field[np.float32], b: Field[np.float64], n: Field[np.int32], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a + b * n


CASES.append(Case(mixed_dtypes))


def global_table(table: gtscript.GlobalTable[(np.float64, (5,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = table.A[2] + table.A[4]


CASES.append(Case(global_table, needs="GlobalTable fields and .A"))


def absolute_accessor(vec: Field[(np.float64, (3,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = vec.A[1] - vec.A[2]


CASES.append(Case(absolute_accessor, needs="field.A[...] accessor"))
