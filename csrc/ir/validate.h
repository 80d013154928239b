/* Checks a whole definition tree against its grammar (docs/architecture.md) before the IR is
 * built from it. */
#ifndef GT_VALIDATE_H
#define GT_VALIDATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>

/* How deep statements and expressions may nest: the builder and the analyses recurse once per
 * level on the caller's stack (about 110 bytes a level, measured: 50,000 levels fit in the
 * 8 MiB main-thread stack, 100,000 do not). The frontend produces 20,007 levels for a
 * 20,000-term sum; a deeper tree (only a hand-made or pickled one) is refused. */
enum { GT_MAX_NESTING = 25000 };

/* True when `definition` has the shape the builder reads: every node a tuple of the arity of
 * its tag, every item of its type, every string encodable as UTF-8 (identifiers: without NUL
 * either), every position and bound level in range, nesting at most GT_MAX_NESTING deep.
 * Otherwise false with TypeError (a wrong type or arity) or ValueError (a wrong value)
 * pending, naming the path of the offending item (e.g. body[0][4][1][5][2]).
 * The file name and source lines are only displayed, so they may hold surrogates. */
bool ir_validate(PyObject *definition);

#endif
