"""Assignments, temporaries, conditionals, loops and expressions."""

import math

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import FORWARD, IJ, PARALLEL, Field, K, computation, interval

from gt4py_corpus.case import Case

CASES = []

GRAVITY = 9.80665


def augmented_assignment(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        out += 1.0
        out *= a
        out -= 0.5
        out /= 2.0


CASES.append(Case(augmented_assignment))


def augmented_int(a: Field[np.int64], out: Field[np.int64]):
    with computation(PARALLEL), interval(...):
        out = a
        out += 3
        out *= 2
        out -= a


CASES.append(Case(augmented_int))


def untyped_temporaries(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t1 = a * 2.0
        t2 = t1 + a
        out = t1 * t2


CASES.append(Case(untyped_temporaries))


def typed_temporary(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t: np.float64 = 0.0
        t = a + 1.0
        out = t


CASES.append(Case(typed_temporary))


def typed_float32_temporary(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        narrow: np.float32 = a
        out = narrow


CASES.append(Case(typed_float32_temporary))


def typed_int_temporary(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        count: np.int32 = 3
        out = a * count


CASES.append(Case(typed_int_temporary))


def temporary_read_at_offset(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        flux = a[1, 0, 0] - a
        out = flux - flux[-1, 0, 0]


CASES.append(Case(temporary_read_at_offset))


def temporary_across_computations(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        tmp = a * a
    with computation(PARALLEL), interval(...):
        out = tmp[0, 1, 0] + tmp[0, -1, 0]


CASES.append(Case(temporary_across_computations))


def top_level_typed_temporary(a: Field[np.float64], out: Field[np.float64]):
    tmp: Field[np.float64]
    with computation(PARALLEL), interval(...):
        tmp = a + 2.0
        out = tmp


def _plus_two(args):
    out = args["out"].copy()
    out[2:-2, 2:-2, :] = args["a"][2:-2, 2:-2, :] + 2.0
    return {"a": args["a"], "out": out}


CASES.append(Case(top_level_typed_temporary, expect="beyond", reference=_plus_two,
                  needs="typed temporaries declared at the top level"))


def ij_temporary(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD), interval(0, 1):
        low: Field[IJ, np.float64] = a
    with computation(PARALLEL), interval(...):
        out = a - low


CASES.append(Case(ij_temporary, needs="IJ-typed temporaries"))


def if_on_field(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if a > 0.0:
            out = a
        else:
            out = -2.0 * a


CASES.append(Case(if_on_field))


def if_elif_else(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if a < -0.5:
            out = -1.0
        elif a < 0.0:
            out = 0.0
        elif a < 0.5:
            out = a
        else:
            out = 1.0


CASES.append(Case(if_elif_else))


def if_without_else(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        if a < 0.0:
            out = 0.0


CASES.append(Case(if_without_else))


def nested_if(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if a > 0.0:
            if b > 0.0:
                out = 1.0
            else:
                out = 2.0
        else:
            out = 3.0


CASES.append(Case(nested_if))


def if_boolean_operators(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if (a > 0.0 and b < 0.0) or not a > -0.5:
            out = a * b
        else:
            out = a + b


CASES.append(Case(if_boolean_operators))


def if_on_bool_field(mask: Field[np.bool_], a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if mask:
            out = a


CASES.append(Case(if_on_bool_field))


def if_on_scalar(a: Field[np.float64], out: Field[np.float64], mode: int):
    with computation(PARALLEL), interval(...):
        if mode == 1:
            out = a
        elif mode == 2:
            out = 2.0 * a
        else:
            out = 0.0


CASES.append(Case(if_on_scalar, scalars={"mode": 2}))


def if_with_temporaries(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if a > 0.0:
            tmp = a * 2.0
        else:
            tmp = a / 2.0
        out = tmp + 1.0


CASES.append(Case(if_with_temporaries))


def if_in_forward(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            if out[0, 0, -1] > 0.0:
                out = out[0, 0, -1] - a
            else:
                out = out[0, 0, -1] + a


CASES.append(Case(if_in_forward))


def if_reads_offsets(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if a[1, 0, 0] > a[-1, 0, 0]:
            out = a[1, 0, 0]
        else:
            out = a[0, 1, 0]


CASES.append(Case(if_reads_offsets))


def while_on_field(a: Field[np.float64], out: Field[np.float64], steps: Field[np.int64]):
    with computation(PARALLEL), interval(...):
        out = a * 8.0
        steps = 0
        while abs(out) > 0.5:
            out = out / 2.0
            steps += 1


# GT4Py 1.1.12's numpy backend counts one step less here (the out values agree); its debug
# backend and hand-written NumPy agree with each other, so the debug backend is the oracle.
CASES.append(Case(while_on_field, oracle="debug"))


def while_with_if(a: Field[np.int64], out: Field[np.int64]):
    with computation(PARALLEL), interval(...):
        n = a + 10
        out = 0
        while n > 1:
            if n % 2 == 0:
                n = n - 3
            else:
                n = n - 1
            out += 1


# GT4Py 1.1.12's numpy backend miscounts here too; its debug backend is the oracle.
CASES.append(Case(while_with_if, oracle="debug", arrays={"a": lambda rng, s, dt: rng.integers(0, 20, s).astype(dt)}))


def while_on_scalar(a: Field[np.float64], out: Field[np.float64], n: int):
    with computation(PARALLEL), interval(...):
        out = a
        i = 0
        while i < n:
            out = out * 0.5 + 1.0
            i += 1


CASES.append(Case(while_on_scalar, scalars={"n": 4}))


def ternary(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a if a > 0.0 else -a


CASES.append(Case(ternary))


def nested_ternary(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = 1.0 if a > 0.5 else (0.0 if a > -0.5 else -1.0)


CASES.append(Case(nested_ternary))


def ternary_on_scalar(a: Field[np.float64], out: Field[np.float64], flag: bool):
    with computation(PARALLEL), interval(...):
        out = a if flag else 2.0 * a


CASES.append(Case(ternary_on_scalar, scalars={"flag": False}))


def comparisons_to_bool(a: Field[np.float64], b: Field[np.float64], lt: Field[np.bool_], ge: Field[np.bool_],
                        eq: Field[np.bool_], ne: Field[np.bool_]):
    with computation(PARALLEL), interval(...):
        lt = a < b
        ge = a >= b
        eq = a == a
        ne = a != b


CASES.append(Case(comparisons_to_bool))


def bool_logic(p: Field[np.bool_], q: Field[np.bool_], out: Field[np.bool_]):
    with computation(PARALLEL), interval(...):
        out = (p and not q) or (q and not p)


CASES.append(Case(bool_logic))


def arithmetic(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = (a + b) * (a - b) / (1.0 + b * b) - -a + (+b)


CASES.append(Case(arithmetic))


def power_operator(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a ** 2 + abs(a) ** 0.5 + a ** 3


CASES.append(Case(power_operator))


def integer_mod(a: Field[np.int64], b: Field[np.int64], r: Field[np.int64]):
    with computation(PARALLEL), interval(...):
        r = a % b


CASES.append(Case(integer_mod, arrays={"b": lambda rng, s, dt: (rng.integers(1, 4, s) * rng.choice([-1, 1], s)).astype(dt)}))


def float_mod(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a % 0.3


CASES.append(Case(float_mod))


def int_true_division(a: Field[np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a / 4


CASES.append(Case(int_true_division))


def int_float_promotion(n: Field[np.int32], x: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = n * x + n / 2


CASES.append(Case(int_float_promotion))


def casts(a: Field[np.float64], whole: Field[np.int64], frac: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        whole = int(a * 10.0)
        frac = float(whole) / 3.0


CASES.append(Case(casts))


def module_globals(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = GRAVITY * a + math.pi


CASES.append(Case(module_globals))


def bool_to_float(mask: Field[np.bool_], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = 1.0 if mask else 0.0


CASES.append(Case(bool_to_float))


def literal_precision(a: Field[np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        out = a + 1.0e-3 * a


CASES.append(Case(literal_precision))


def self_assignment_centred(a: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        a = a * 2.0 + 1.0


CASES.append(Case(self_assignment_centred))


def many_outputs(a: Field[np.float64], o1: Field[np.float64], o2: Field[np.float64], o3: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        o1 = a + 1.0
        o2 = o1 * 2.0
        o3 = o2 - o1


CASES.append(Case(many_outputs))


def halo_reads(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[2, 0, 0] + a[-2, 0, 0] + a[0, 2, 0] + a[0, -2, 0] + a[1, 1, 0] + a[-1, -1, 0]


CASES.append(Case(halo_reads))


def laplacian_of_laplacian(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        lap = a[1, 0, 0] + a[-1, 0, 0] + a[0, 1, 0] + a[0, -1, 0] - 4.0 * a
        out = lap[1, 0, 0] + lap[-1, 0, 0] + lap[0, 1, 0] + lap[0, -1, 0] - 4.0 * lap


CASES.append(Case(laplacian_of_laplacian))


def float32_pipeline(a: Field[np.float32], b: Field[np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        t = a * b
        out = t / (1.0 + abs(b)) - a


CASES.append(Case(float32_pipeline))


def int32_pipeline(a: Field[np.int32], b: Field[np.int32], out: Field[np.int32]):
    with computation(PARALLEL), interval(...):
        out = a * b - (a + b) % 3


CASES.append(Case(int32_pipeline))


def k_as_value(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if K == 2:
            out = a
        else:
            out = 0.0


CASES.append(Case(k_as_value, needs="K as a value"))


def axis_shorthand(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[gtscript.I - 1] + a[gtscript.J + 1]


CASES.append(Case(axis_shorthand, needs="axis-shorthand indexing"))


def python_for_loop(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        for n in range(3):
            out = a


CASES.append(Case(python_for_loop, expect="reject"))


def undefined_name(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a + not_defined_anywhere


CASES.append(Case(undefined_name, expect="reject"))


def statement_outside_computation(a: Field[np.float64], out: Field[np.float64]):
    out = a
    with computation(PARALLEL), interval(...):
        out = a


CASES.append(Case(statement_outside_computation, expect="reject"))


def return_in_stencil(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
    return out


CASES.append(Case(return_in_stencil, expect="reject"))


def non_integer_offset(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[0.5, 0, 0]


CASES.append(Case(non_integer_offset, expect="reject"))


def assign_to_scalar(a: Field[np.float64], s: float):
    with computation(PARALLEL), interval(...):
        s = a


CASES.append(Case(assign_to_scalar, expect="reject"))


def missing_interval(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL):
        out = a


CASES.append(Case(missing_interval, expect="reject"))


def lambda_in_stencil(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = (lambda x: x)(a)


CASES.append(Case(lambda_in_stencil, expect="reject"))
