"""Functions marked with GT4Py's ``@gtscript.function`` (as PyFV3's ``ppm`` module holds
them), reached from the definitions directly, through this module and through an alias."""

from gt4py.cartesian import gtscript


@gtscript.function
def upwind(q, c):
    return q[-1, 0, 0] if c > 0.0 else q


@gtscript.function
def sign(a, b):
    s = a
    if b < 0.0:
        s = -a
    return s


@gtscript.function
def limited(q, c):
    from __externals__ import LIMIT

    # a nested call, an external imported inside the function
    return min(max(upwind(q, c), -LIMIT), LIMIT)


@gtscript.function
def edge_sum(q):
    return sign(q[1, 0, 0], q) + limited(q, q)
