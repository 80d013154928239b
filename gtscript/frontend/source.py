"""Source capture: read a Python function's source with :mod:`inspect` (also from a notebook
cell), dedent and parse it, and map AST positions back to the file's lines and columns."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import (
    GTScriptDefinitionError,
    GTScriptSyntaxError,
    syntax_error,
)


@dataclass
class _Source:
    """The captured source of one Python function and the map from its AST back to the file."""

    name: str
    filename: str
    firstlineno: int  # file line of the first captured line (the first decorator, if any)
    node: ast.FunctionDef  # parsed from the dedented text: line 1 is `firstlineno`
    text_lines: list[str]  # the dedented captured lines
    shifts: list[int]  # characters the dedent removed from each captured line
    file_lines: list[str]  # every line of `filename`, without line ends

    def position(self, node: Any) -> tuple[int, int]:
        """Absolute (line, 0-based character column) of ``node``."""
        index = node.lineno - 1
        text = self.text_lines[index] if index < len(self.text_lines) else ""
        # ast columns count UTF-8 bytes; the tree and SyntaxError count characters.
        col = len(text.encode("utf-8")[: node.col_offset].decode("utf-8", errors="ignore"))
        shift = self.shifts[index] if index < len(self.shifts) else 0
        return self.firstlineno + index, col + shift

    def error(
        self, cls: type[GTScriptSyntaxError], message: str, node: ast.AST
    ) -> GTScriptSyntaxError:
        """An error of class ``cls`` located at ``node``."""
        line, col = self.position(node)
        return syntax_error(cls, message, self.filename, line, col, self.file_lines)

    @property
    def text(self) -> str:
        return "\n".join(self.text_lines)


def _dedent(lines: list[str]) -> tuple[list[str], list[int]]:
    """Remove the first line's indentation from every line; return the lines and the number
    of characters removed from each (lines indented less, e.g. continuation lines or string
    contents, lose all their leading whitespace)."""
    first = lines[0].rstrip("\r\n")
    indent = first[: len(first) - len(first.lstrip())]
    text_lines, shifts = [], []
    for raw in lines:
        line = raw.rstrip("\r\n")
        cut = len(indent) if line.startswith(indent) else len(line) - len(line.lstrip())
        text_lines.append(line[cut:])
        shifts.append(cut)
    return text_lines, shifts


def _file_lines(func: Callable, filename: str, firstlineno: int, lines: list[str]) -> list[str]:
    """The lines of the definition's file (a notebook cell is found through linecache too).
    When they are unavailable or no longer match, the captured lines are placed at their
    line numbers instead."""
    captured = [line.rstrip("\r\n") for line in lines]
    file_lines = [line.rstrip("\r\n") for line in linecache.getlines(filename, func.__globals__)]
    if file_lines[firstlineno - 1 : firstlineno - 1 + len(captured)] == captured:
        return file_lines
    return [""] * (firstlineno - 1) + captured


def _exec_source_lines(func: Callable) -> tuple[list[str], int] | None:
    """The lines of ``func``'s ``def`` (decorators included) and the line of the first, from
    the text a function made with exec() carries in ``__exec_source__`` (GT4Py's convention,
    which GT4Py 1.1 reads where inspect finds no source); None without one. The ``def`` is
    the one of the function's name at the line its code starts on (the text as exec compiled
    it), else the only one of that name in the text."""
    text = getattr(func, "__exec_source__", None)
    if not isinstance(text, str):
        return None
    all_lines = text.splitlines(keepends=True)
    try:
        tree = ast.parse(textwrap.dedent(text))  # an indented text too, as GT4Py reads it
    except SyntaxError:
        return None  # reported as a source that cannot be read
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == func.__name__]

    def start(n: ast.FunctionDef) -> int:
        return min([n.lineno, *(d.lineno for d in n.decorator_list)])

    at_line = [n for n in defs if start(n) == func.__code__.co_firstlineno]
    chosen = at_line or (defs if len(defs) == 1 else [])
    if not chosen:
        return None
    node = chosen[0]
    first = start(node)
    return all_lines[first - 1 : node.end_lineno], first


def _capture_source(func: Callable) -> _Source:
    """Read and parse the source of ``func`` (a plain Python function)."""
    if not inspect.isfunction(func):
        raise TypeError(f"a GTScript definition must be a Python function, got {func!r}")
    try:
        lines, firstlineno = inspect.getsourcelines(func)
        filename = inspect.getsourcefile(func) or inspect.getfile(func)
    except (OSError, TypeError) as exc:
        found = _exec_source_lines(func)
        if found is None:
            raise GTScriptDefinitionError(
                f"cannot read the source of {func.__qualname__!r} ({exc}): GTScript definitions "
                f"must be written in a file or a notebook cell; a function created with exec() "
                f"needs its source text in its __exec_source__ attribute (GT4Py's convention: "
                f"f.__exec_source__ = the text given to exec), and one typed into the plain "
                f"interactive interpreter has no source to read"
            ) from None
        lines, firstlineno = found
        filename = func.__code__.co_filename
    text_lines, shifts = _dedent(lines)
    try:
        module = ast.parse("\n".join(text_lines), filename=filename)
    except SyntaxError as exc:
        raise GTScriptDefinitionError(
            f"cannot parse the source of {func.__qualname__!r}: {exc.msg}",
            (filename, firstlineno + (exc.lineno or 1) - 1, exc.offset, exc.text),
        ) from None
    node = module.body[0] if module.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != func.__name__:
        raise GTScriptDefinitionError(
            f"{func.__qualname__!r} must be defined with a `def` statement "
            f"(lambdas and async functions cannot be GTScript definitions)"
        )
    return _Source(
        name=func.__name__,
        filename=filename,
        firstlineno=firstlineno,
        node=node,
        text_lines=text_lines,
        shifts=shifts,
        file_lines=_file_lines(func, filename, firstlineno, lines),
    )
