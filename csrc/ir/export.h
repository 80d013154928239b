/* The analysed IR as plain Python tuples (docs/architecture.md), for the numpy backend. */
#ifndef GT_EXPORT_H
#define GT_EXPORT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ir/ir.h"

PyObject *ir_export(const Stencil *st);
PyObject *export_bound(AxisBound b);

#endif
