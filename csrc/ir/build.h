/* Builds the structured IR from the frontend's definition tree (docs/architecture.md). */
#ifndef GT_BUILD_H
#define GT_BUILD_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ir/ir.h"

/* Returns false with st->diag set (or a Python exception pending when the tree itself is
 * malformed, which is a bug of the frontend, reported as RuntimeError). */
bool ir_build(Stencil *st, PyObject *definition);

#endif
