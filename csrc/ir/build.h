/* Builds the structured IR from the frontend's definition tree (docs/architecture.md). */
#ifndef GT_BUILD_H
#define GT_BUILD_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ir/ir.h"

/* Returns false with st->diag set, or with a Python exception pending when the tree itself
 * is malformed (TypeError or ValueError, from ir_validate: trees also come from pickle.loads
 * and the disk index) or memory ran out. */
bool ir_build(Stencil *st, PyObject *definition);

#endif
