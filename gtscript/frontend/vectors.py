"""Whole-vector and matrix expressions on data dimensions, unrolled element by element.

As in GT4Py, a field with one or two data dimensions read without a data index stands for
its whole vector or matrix at that point; such expressions may only be assigned to a field
with data dimensions, written without a data index (``out = 2.0 * a + b``). The assignment
becomes one assignment per element. Element-wise operators, comparisons, calls and
conditional expressions broadcast a scalar over a vector; ``m @ v`` is the matrix-vector
product (GT4Py 1.1.12's only product; matrix-matrix and vector products follow NumPy's
``matmul`` here), ``m.T`` the transpose of a matrix. This runs on the finished tree, after
``@gtscript.function`` calls were inlined, so the C core never sees a vector.

Intermediate nodes, removed here: ``("binop", line, col, "@", a, b)`` and
``("transpose", line, col, a)``.
"""

from __future__ import annotations

import itertools
from typing import Callable

from ..errors import GTScriptSemanticError, GTScriptSyntaxError, syntax_error
from .source import _Source

#: A vector value: a scalar expression tuple, or a (nested) list of them.
Value = object

#: Most components a whole-vector or matrix expression, or an assignment to a whole field
#: with data dimensions, may have: each component becomes a statement of its own, and the
#: cpu backend's build takes about 2 ms a component (measured on a quiet 2-core machine:
#: 1,000 components in 2.0 s, 2,000 in 4.1 s; ten times that on a loaded one; 10**6 took
#: over 100 s at 5.6 GB, 10**9 ran out of memory). Larger data dimensions are read and
#: written element by element (``f[0, 0, 0][n]``), which builds as fast at any size.
MAX_WHOLE_COMPONENTS = 1024


def _components(dims: tuple) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


class _Unroller:
    def __init__(self, source: _Source, data_dims: Callable[[str], tuple]):
        self.source = source
        self.data_dims = data_dims

    def error(self, line: int, col: int, message: str,
              cls: type[GTScriptSyntaxError] = GTScriptSemanticError) -> GTScriptSyntaxError:
        return syntax_error(cls, message, self.source.filename, line, col, self.source.file_lines)

    # ---------------------------------------------------------------- values
    def whole(self, e: tuple, name: str, offsets: tuple) -> Value:
        dims = self.data_dims(name)
        if len(dims) > 2:
            raise self.error(e[1], e[2], f"{name!r} has {len(dims)} data dimensions: whole-"
                             "field expressions take vectors and matrices only; index it")
        self.check_size(e[1], e[2], f"the whole of {name!r}", dims)
        pos = e[1:3]

        def build(prefix: tuple) -> Value:
            if len(prefix) == len(dims):
                return ("index", *pos, name, offsets, prefix)
            return [build(prefix + (n,)) for n in range(dims[len(prefix)])]
        return build(())

    def check_size(self, line: int, col: int, what: str, dims: tuple) -> None:
        n = _components(dims)
        if n > MAX_WHOLE_COMPONENTS:
            raise self.error(line, col, f"{what} has {n} components ({' x '.join(map(str, dims))})"
                             f": a whole-vector or matrix expression or assignment takes at "
                             f"most {MAX_WHOLE_COMPONENTS} (each becomes a statement); read "
                             "and write its elements by index (f[0, 0, 0][n])")

    def value(self, e: Value) -> Value:
        """``e`` with every vector operand expanded: a scalar tuple or a nested list."""
        if not isinstance(e, tuple):
            return e
        tag = e[0]
        if tag == "name" and self.data_dims(e[3]):
            return self.whole(e, e[3], (0, 0, 0))
        if tag == "index" and not e[5] and self.data_dims(e[3]):
            return self.whole(e, e[3], e[4])
        if tag == "transpose":
            a = self.value(e[3])
            if not (isinstance(a, list) and a and isinstance(a[0], list)):
                what = f"{e[3][3]!r}" if e[3][0] in ("name", "index") else "its operand"
                # an attribute of something without one: Python outside the language
                raise self.error(e[1], e[2], f"attribute `.T` is the transpose of a matrix (a "
                                 f"field with two data dimensions): {what} is not a matrix",
                                 GTScriptSyntaxError)
            return [list(row) for row in zip(*a)]
        if tag == "binop" and e[3] == "@":
            return self.matmul(e, self.value(e[4]), self.value(e[5]))
        if tag in ("binop", "cmp"):
            return self.elementwise(e, lambda a, b: (*e[:4], a, b), [e[4], e[5]])
        if tag == "unop":
            return self.elementwise(e, lambda a: (*e[:4], a), [e[4]])
        if tag == "ternary":
            return self.elementwise(e, lambda c, a, b: (*e[:3], c, a, b), list(e[3:6]))
        if tag == "call":
            return self.elementwise(e, lambda *args: (*e[:4], list(args)), list(e[4]))
        if tag == "boolop":
            return self.elementwise(e, lambda *args: (*e[:4], list(args)), list(e[4]))
        return e  # constants, scalars, element reads, absolute-K reads: scalars

    def scalar(self, e: Value, what: str) -> tuple:
        """``e`` as a scalar expression: a vector here is an error naming ``what``."""
        if e is None or not isinstance(e, tuple):
            return e
        v = self.value(e)
        if isinstance(v, list):
            raise self.error(e[1], e[2], f"{what} is a whole vector or matrix: index it "
                             "(f[0, 0, 0][n]), or assign it to a field with data dimensions")
        return v

    @staticmethod
    def shape(v: Value) -> tuple:
        s = []
        while isinstance(v, list):
            s.append(len(v))
            v = v[0]
        return tuple(s)

    def elementwise(self, e: tuple, make: Callable, operands: list) -> Value:
        values = [self.value(o) for o in operands]
        shapes = {self.shape(v) for v in values} - {()}
        if not shapes:
            return make(*values)
        if len(shapes) > 1:
            raise self.error(e[1], e[2], "operands of shapes "
                             + " and ".join(str(list(s)) for s in sorted(shapes))
                             + " do not match: element-wise operations need equal shapes")
        (shape,) = shapes

        def at(v: Value, index: tuple) -> Value:
            for n in index:
                if not isinstance(v, list):
                    return v  # a scalar, broadcast
                v = v[n]
            return v

        def build(prefix: tuple) -> Value:
            if len(prefix) == len(shape):
                return make(*(at(v, prefix) for v in values))
            return [build(prefix + (n,)) for n in range(shape[len(prefix)])]
        return build(())

    def matmul(self, e: tuple, a: Value, b: Value) -> Value:
        sa, sb = self.shape(a), self.shape(b)
        pos = e[1:3]
        if not sa or not sb or len(sa) > 2 or len(sb) > 2 or sa[-1] != sb[0]:
            raise self.error(*pos, f"`@` multiplies a matrix or vector by a matrix or vector "
                             f"of matching size: got shapes {list(sa)} and {list(sb)}")

        def dot(row: list, col: list) -> tuple:
            acc = ("binop", *pos, "*", row[0], col[0])
            for x, y in zip(row[1:], col[1:]):
                acc = ("binop", *pos, "+", acc, ("binop", *pos, "*", x, y))
            return acc
        rows = a if len(sa) == 2 else [a]
        cols = [list(c) for c in zip(*b)] if len(sb) == 2 else [b]
        result = [[dot(r, c) for c in cols] for r in rows]
        if len(sb) == 1:
            result = [r[0] for r in result]
        return result[0] if len(sa) == 1 else result

    # ---------------------------------------------------------------- statements
    def stmts(self, stmts: list) -> list:
        out: list = []
        for s in stmts:
            tag = s[0]
            if tag == "assign":
                out.extend(self.assign(s))
            elif tag == "decl":
                out.append((*s[:5], self.scalar(s[5], f"the value of {s[3]!r}"), *s[6:]))
            elif tag == "if":
                out.append((*s[:3], self.scalar(s[3], "the condition"), self.stmts(s[4]),
                            self.stmts(s[5])))
            elif tag == "while":
                out.append((*s[:3], self.scalar(s[3], "the condition"), self.stmts(s[4])))
            elif tag == "region":
                out.append((*s[:4], self.stmts(s[4])))
            else:
                out.append(s)
        return out

    def assign(self, s: tuple) -> list:
        _, line, col, target, value = s
        name = target[3]
        dims = self.data_dims(name)
        if not dims or (target[0] == "index" and target[5]):
            return [("assign", line, col, self.scalar(target, "the target"),
                     self.scalar(value, "the value assigned"))]
        offsets = target[4] if target[0] == "index" else (0, 0, 0)
        self.check_size(line, col, f"the assignment to the whole of {name!r}", dims)
        v = self.value(value)
        shape = self.shape(v)
        if shape and shape != tuple(dims):
            raise self.error(line, col, f"{name!r} has data dimensions {list(dims)} but the "
                             f"value assigned has shape {list(shape)}")
        out = []
        written = set()
        for index in itertools.product(*(range(n) for n in dims)):
            element = v
            for n in index:
                element = element[n] if isinstance(element, list) else element
            stale = written & _elements_read(element, name)
            if stale:
                # element by element, this would read what the same assignment just wrote
                raise self.error(line, col, f"the value assigned to {name!r} reads its element "
                                 f"{list(min(stale))}, which this assignment writes first: "
                                 "NumPy would read the old value, an unrolled assignment the "
                                 "new one; write the result to another field")
            written.add(index)
            out.append(("assign", line, col, ("index", *target[1:3], name, offsets, index),
                        element))
        return out


def _elements_read(e: object, name: str) -> set:
    """The data indices at which expression ``e`` reads field ``name``."""
    found: set = set()

    def walk(x: object) -> None:
        if isinstance(x, tuple):
            if len(x) == 6 and x[0] == "index" and x[3] == name:
                found.add(x[5])
            for y in x:
                walk(y)
        elif isinstance(x, list):
            for y in x:
                walk(y)
    walk(e)
    return found


def unroll_vectors(body: list, source: _Source, data_dims: Callable[[str], tuple]) -> list:
    """The computations ``body`` with vector and matrix assignments unrolled."""
    u = _Unroller(source, data_dims)
    return [
        (*comp[:4], [(*iv[:5], u.stmts(iv[5])) for iv in comp[4]])
        for comp in body
    ]
