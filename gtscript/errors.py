"""Error classes raised while a GTScript definition is parsed, checked or built.

All of them are :class:`SyntaxError` subclasses, so Python (and IPython) print them the way
they print a syntax error: file name, line number, the offending source line and a caret under
the column.  They are built exactly like ``SyntaxError``::

    GTScriptSyntaxError(message, (filename, lineno, offset, text))

with ``lineno`` and ``offset`` 1-based and ``text`` the source line.  The C core raises them
the same way.
"""

from __future__ import annotations

from typing import Sequence

__all__ = [
    "GTScriptSyntaxError",
    "GTScriptSemanticError",
    "GTScriptDefinitionError",
    "GT4PyCompatibilityWarning",
    "syntax_error",
]


class GT4PyCompatibilityWarning(UserWarning):
    """A GT4Py option or backend name that gtscript accepts but treats differently (said once
    per name and process)."""


class GTScriptSyntaxError(SyntaxError):
    """A construct outside the GTScript language, or a malformed use of one inside it.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> def text(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = inp * "two"
    >>> try:
    ...     gtscript.stencil("cpu", text)
    ... except gtscript.GTScriptSyntaxError as err:
    ...     print(err.msg, "| line", err.lineno - text.__code__.co_firstlineno)
    the literal 'two' is a str, not a number: only bool, int and float values can be used in expressions | line 2
    """

    def __str__(self) -> str:
        """The message, then where: file, line and column, the source line and a caret.

        Tracebacks format a ``SyntaxError`` from its attributes, not from ``str()``; this is
        for everything else that prints the exception (logs, ``print(exc)``, test output).
        """
        if self.filename is None or self.lineno is None:
            return str(self.msg)
        where = f'  File "{self.filename}", line {self.lineno}'
        if self.offset:
            where += f", column {self.offset}"
        lines = [str(self.msg), where]
        if self.text:
            text = self.text.rstrip("\r\n")
            stripped = text.lstrip()
            lines.append("    " + stripped)
            if self.offset:
                caret = max(0, self.offset - 1 - (len(text) - len(stripped)))
                lines.append("    " + " " * caret + "^")
        return "\n".join(lines)


class GTScriptSemanticError(GTScriptSyntaxError, ValueError):
    """Well-formed GTScript that breaks a rule of the language (parallel model, types, ...).

    Also a :class:`ValueError`: GT4Py raises ``ValueError`` for the parallel model's
    violations, so code written for it (``pytest.raises(ValueError)``) catches these too.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> def in_place(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = inp[1, 0, 0]
    ...         inp = out
    >>> try:
    ...     gtscript.stencil("cpu", in_place)
    ... except ValueError as err:
    ...     print(type(err).__name__, "|", err.msg.split(":")[0])
    GTScriptSemanticError | write after read with offset
    """


class GTScriptDefinitionError(GTScriptSyntaxError):
    """A problem with the definition itself: its signature, annotations, externals or source.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> def empty(inp: Field[np.float64]):
    ...     pass
    >>> try:
    ...     gtscript.stencil("cpu", empty)
    ... except gtscript.GTScriptDefinitionError as err:
    ...     print(err.msg)
    stencil 'empty' has no `with computation(...)` block
    """


def syntax_error(
    cls: type[GTScriptSyntaxError],
    message: str,
    filename: str,
    lineno: int,
    col0: int,
    source_lines: Sequence[str],
) -> GTScriptSyntaxError:
    """Build (do not raise) an error of class ``cls`` located at ``lineno`` / ``col0``.

    ``lineno`` is 1-based, ``col0`` 0-based (as in :mod:`ast`); ``source_lines`` are the lines
    of ``filename`` (index 0 is line 1), used to attach the offending line's text.
    """
    text = None
    if 1 <= lineno <= len(source_lines):
        text = source_lines[lineno - 1].rstrip("\r\n")
    return cls(message, (filename, lineno, col0 + 1, text))
