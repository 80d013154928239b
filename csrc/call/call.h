/*
 * The call path: binds Python arguments to the stencil's parameters, validates them
 * against the analysis results (dtypes, shapes, extents) before any data is touched, and
 * runs the kernel with the GIL released.
 */
#ifndef GT_CALL_H
#define GT_CALL_H

#include "module.h"

/* Call arguments bound to the stencil's parameters (call.c's bind_all). */
typedef struct Bound {
    PyObject *value[256]; /* per parameter, borrowed */
    int64_t origin[256][3];
    int64_t domain[3];
    bool validate;
    PyObject *exec_info; /* borrowed, or NULL */
} Bound;

/* Binds and validates a call's arguments (every check of the cpu call path); false with a
 * Python exception set. Fields must be NumPy arrays. */
bool bind_all(ModuleObject *m, PyObject *args, PyObject *kwargs, Bound *b);

/* A scalar argument's value in its dtype, into an 8-byte slot; false with an exception. */
bool scalar_value(const Symbol *s, PyObject *o, char *slot);

/* The cuda backend's call (call_cuda.c): the same binding, then device execution. */
PyObject *call_cuda(ModuleObject *m, PyObject *args, PyObject *kwargs);

/* stencil(*args, origin=None, domain=None, validate_args=True, exec_info=None) */
PyObject *call_stencil(ModuleObject *m, PyObject *args, PyObject *kwargs);

/* For the numpy backend: the same binding and validation, returning
 * ({name: (array, origin)}, {name: value}, domain). */
PyObject *call_bind(ModuleObject *m, PyObject *args, PyObject *kwargs);

#endif
