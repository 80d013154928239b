/*
 * The call path: binds Python arguments to the stencil's parameters, validates them
 * against the analysis results (dtypes, shapes, extents) before any data is touched, and
 * runs the kernel with the GIL released.
 */
#ifndef GT_CALL_H
#define GT_CALL_H

#include "module.h"

/* stencil(*args, origin=None, domain=None, validate_args=True, exec_info=None) */
PyObject *call_stencil(ModuleObject *m, PyObject *args, PyObject *kwargs);

/* For the numpy backend: the same binding and validation, returning
 * ({name: (array, origin)}, {name: value}, domain). */
PyObject *call_bind(ModuleObject *m, PyObject *args, PyObject *kwargs);

#endif
