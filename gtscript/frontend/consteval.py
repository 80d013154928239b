"""The compile-time evaluator: interval bounds, offsets, data indices, region bounds,
annotations, ``__INLINED(...)`` and ``compile_assert(...)`` are computed by walking their AST,
never with ``eval``, so that decorating a definition cannot run code its text spells
(``interval(__import__("os").system(...), None)``).

What it accepts is documented in docs/language.md ("Compile-time expressions"): constants,
names (externals, global constants, the axes), attributes that are not dunders, arithmetic,
bitwise operators, comparisons, ``and`` / ``or`` / ``not``, ``x if c else y``, tuples,
subscripts of axes (``K[0]``), of ``Field`` and of tuples, lists, dicts and arrays, and calls of
the builtins ``abs``, ``min``, ``max``, ``int``, ``float``, ``bool``, ``round`` and ``len``.
Operators apply to numbers, strings, tuples and enum members only (and to the axis objects the
language defines), so a user object's or an array's operator methods never run."""

from __future__ import annotations

import ast
import enum
import operator
from typing import Any, Callable

import numpy as np

from .. import lang
from .gt4py_objects import from_gt4py

#: The builtins a compile-time expression may call (by identity, whatever name reaches them).
_BUILTINS: dict[str, Callable] = {
    "abs": abs, "min": min, "max": max, "int": int, "float": float, "bool": bool,
    "round": round, "len": len,
}  # fmt: skip
_CALLABLE = frozenset(id(fn) for fn in _BUILTINS.values())

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}  # fmt: skip
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
_COMPARE = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_,
    ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip

#: The largest integer result (in bits) of ``**`` and ``<<``: beyond it a constant could take
#: the build minutes and gigabytes (``2 ** 10 ** 10``); no bound, offset or index is near it.
_MAX_BITS = 4096


class ConstEvalError(Exception):
    """A compile-time expression the evaluator refuses or cannot compute; ``node`` is where."""

    def __init__(self, message: str, node: ast.AST):
        super().__init__(message)
        self.message = message
        self.node = node


def _is_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex, np.number, np.bool_))


def _is_plain(value: Any) -> bool:
    """Values whose operators are Python's or NumPy's scalar ones (no user code runs)."""
    if value is None or _is_number(value) or isinstance(value, (str, bytes, enum.Enum)):
        return True
    if isinstance(value, tuple):
        return all(_is_plain(item) for item in value)
    return False


def _is_axis_value(value: Any) -> bool:
    from .expressions import _ShiftedAxis  # the axis shorthand's `I - 1` (a cycle otherwise)

    return isinstance(value, (lang.Axis, lang.AxisIndex, _ShiftedAxis))


def _describe(value: Any) -> str:
    return f"a value of type {type(value).__name__}"


def truth(value: Any, node: ast.AST) -> bool:
    """``bool(value)`` for a compile-time condition; an array or an object is refused."""
    if not _is_plain(value):
        raise ConstEvalError(
            f"a compile-time condition must be a number, a bool, a string or None, not "
            f"{_describe(value)}",
            node,
        )
    return bool(value)


class ConstEvaluator:
    """Evaluates one compile-time expression; ``lookup(name, node)`` gives a name's value
    (or raises ConstEvalError)."""

    def __init__(self, lookup: Callable[[str, ast.Name], Any], inlined: str):
        self.lookup = lookup
        self.inlined = inlined  # the name of __INLINED: the identity inside

    def eval(self, node: ast.AST) -> Any:
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise ConstEvalError(
                f"`{type(node).__name__}` expressions are not allowed in a compile-time "
                f"expression",
                node,
            )
        return method(node)

    # ---------------------------------------------------------------- leaves

    def eval_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def eval_Name(self, node: ast.Name) -> Any:
        if node.id.startswith("__") and node.id.endswith("__"):
            raise ConstEvalError(f"`{node.id}` cannot be used at compile time", node)
        return from_gt4py(self.lookup(node.id, node))

    def eval_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr.startswith("__"):
            raise ConstEvalError(
                f"the attribute `{node.attr}` cannot be used in a compile-time expression", node
            )
        base = self.eval(node.value)
        try:
            return from_gt4py(getattr(base, node.attr))
        except AttributeError:
            raise ConstEvalError(
                f"`{ast.unparse(node.value)}` has no attribute {node.attr!r}", node
            ) from None

    def eval_Tuple(self, node: ast.Tuple) -> tuple:
        if any(isinstance(elt, ast.Starred) for elt in node.elts):
            raise ConstEvalError("`*` unpacking is not allowed at compile time", node)
        return tuple(self.eval(elt) for elt in node.elts)

    # ---------------------------------------------------------------- operators

    def eval_BinOp(self, node: ast.BinOp) -> Any:
        left = self.eval(node.left)
        right = self.eval(node.right)
        op = _BINARY.get(type(node.op))
        if op is None:
            raise ConstEvalError("this operator is not allowed at compile time", node)
        self._check_operands(node, left, right)
        if isinstance(node.op, (ast.Pow, ast.LShift)) and _too_big(node.op, left, right):
            raise ConstEvalError(
                f"`{ast.unparse(node)}` is too large a constant (more than {_MAX_BITS} bits)",
                node,
            )
        return self._apply(node, op, left, right)

    def eval_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.eval(node.operand)
        if isinstance(node.op, ast.Not):
            return not truth(operand, node.operand)
        self._check_operands(node, operand)
        return self._apply(node, _UNARY[type(node.op)], operand)

    def eval_BoolOp(self, node: ast.BoolOp) -> Any:
        value = None
        for sub in node.values:  # short-circuits as Python does
            value = self.eval(sub)
            if truth(value, sub) == isinstance(node.op, ast.Or):
                return value
        return value

    def eval_Compare(self, node: ast.Compare) -> bool:
        left = self.eval(node.left)
        for op, sub in zip(node.ops, node.comparators):
            right = self.eval(sub)
            if not (_is_plain(left) and _is_plain(right)) and not isinstance(
                op, (ast.Is, ast.IsNot)
            ):
                if isinstance(op, (ast.In, ast.NotIn)) and _is_plain(left):
                    if not isinstance(right, (list, dict, frozenset, set)) or not all(
                        _is_plain(item) for item in right
                    ):
                        raise self._operand_error(node, left, right)
                else:
                    raise self._operand_error(node, left, right)
            if not self._apply(node, _COMPARE[type(op)], left, right):
                return False
            left = right
        return True

    def eval_IfExp(self, node: ast.IfExp) -> Any:
        test = self.eval(node.test)
        return self.eval(node.body if truth(test, node.test) else node.orelse)

    # ---------------------------------------------------------------- subscripts and calls

    def eval_Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        index = self.eval(node.slice)
        if not (
            isinstance(base, (lang.Axis, tuple, list, dict, str, np.ndarray))
            or (isinstance(base, type) and _is_language_type(base))
            or _is_language_object(base)
        ):
            raise ConstEvalError(
                f"`{ast.unparse(node.value)}` ({_describe(base)}) cannot be subscripted at "
                f"compile time",
                node,
            )
        language_type = (isinstance(base, type) and _is_language_type(base)) or (
            _is_language_object(base)
        )
        if not (_is_plain(index) or isinstance(index, (type, np.dtype)) or language_type):
            raise ConstEvalError(
                f"`{ast.unparse(node.slice)}` is not a valid compile-time index", node
            )
        return from_gt4py(self._apply(node, operator.getitem, base, index))

    def eval_Slice(self, node: ast.Slice) -> slice:
        parts = [
            None if part is None else self.eval(part)
            for part in (node.lower, node.upper, node.step)
        ]
        if not all(part is None or isinstance(part, (int, np.integer)) for part in parts):
            raise ConstEvalError("slice bounds must be integers", node)
        return slice(*parts)

    def eval_Call(self, node: ast.Call) -> Any:
        func_node = node.func
        callee = func_node.id if isinstance(func_node, ast.Name) else getattr(func_node, "attr", None)
        if callee == self.inlined:  # __INLINED(...) or gtscript.__INLINED(...)
            if len(node.args) != 1 or node.keywords:
                raise ConstEvalError("__INLINED takes one expression", node)
            return self.eval(node.args[0])  # inside, it is the identity
        func = self.eval(node.func)
        if id(func) not in _CALLABLE:
            names = ", ".join(sorted(_BUILTINS))
            raise ConstEvalError(
                f"`{ast.unparse(node.func)}` cannot be called at compile time: only the "
                f"builtins {names} can",
                node,
            )
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            raise ConstEvalError(
                f"`{ast.unparse(node.func)}` takes positional arguments only at compile time",
                node,
            )
        args = [self.eval(arg) for arg in node.args]
        for arg in args:
            if not _is_plain(arg):
                raise self._operand_error(node, *args)
        return self._apply(node, func, *args)

    # ---------------------------------------------------------------- helpers

    def _check_operands(self, node: ast.AST, *values: Any) -> None:
        if all(_is_number(v) or isinstance(v, enum.Enum) for v in values):
            return
        if any(_is_axis_value(v) for v in values) and all(
            _is_axis_value(v) or _is_number(v) for v in values
        ):
            return  # K[0] + 1, I - 1: the language's own objects
        raise self._operand_error(node, *values)

    @staticmethod
    def _operand_error(node: ast.AST, *values: Any) -> ConstEvalError:
        kinds = ", ".join(sorted({type(v).__name__ for v in values}))
        return ConstEvalError(
            f"`{ast.unparse(node)}`: compile-time operators apply to numbers (and axis "
            f"indices such as K[0] + 1), not to values of type {kinds}",
            node,
        )

    @staticmethod
    def _apply(node: ast.AST, fn: Callable, *args: Any) -> Any:
        try:
            return fn(*args)
        except ConstEvalError:
            raise
        except Exception as exc:  # noqa: BLE001 - ZeroDivisionError, OverflowError, IndexError...
            raise ConstEvalError(
                f"cannot evaluate `{ast.unparse(node)}` at compile time "
                f"({type(exc).__name__}: {exc})",
                node,
            ) from None


def _is_language_type(cls: type) -> bool:
    """The subscriptable annotations of the language: ``Field`` (gtscript's or GT4Py's) and
    ``GlobalTable`` (gtscript's; GT4Py's is an object, see _is_language_object). Under
    ``from __future__ import annotations`` they arrive as strings evaluated here."""
    return cls is lang.Field or cls is lang.GlobalTable or (
        cls.__name__ == "Field" and (cls.__module__ or "").split(".")[0] == "gt4py"
    )


def _is_language_object(value: Any) -> bool:
    """An object of the language's own (gtscript.Sequence[...] and the like, GT4Py's)."""
    module = type(value).__module__ or ""
    return module == lang.__name__ or module.split(".")[0] == "gt4py"


def _too_big(op: ast.operator, left: Any, right: Any) -> bool:
    """Whether integer ``left ** right`` or ``left << right`` would exceed _MAX_BITS."""
    if not (isinstance(left, (int, np.integer)) and isinstance(right, (int, np.integer))):
        return False
    left, right = int(left), int(right)
    if right <= 0:
        return False
    if isinstance(op, ast.LShift):
        return left != 0 and left.bit_length() + right > _MAX_BITS
    return abs(left) > 1 and (abs(left).bit_length() - 1) * right > _MAX_BITS
