/*
 * What a field argument may be: a NumPy array, or any object NumPy views as one (the buffer
 * protocol, __array_interface__, __array__: memoryviews, xarray's DataArray, ...), seen in
 * the stencil's axis order when it names its axes (__gt_dims__) and with its own default
 * origin (__gt_origin__), as GT4Py reads them. A masked array is refused: the kernel would
 * ignore its mask.
 */
#ifndef GT_CALL_ARRAYS_H
#define GT_CALL_ARRAYS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* The array field `s` is computed on (a new reference): `o` itself when it is a plain
 * ndarray, else a view of o's memory (an input may also be a copy, an output never is: the
 * result must land in the caller's memory). *has_origin is set, with origin (I, J, K), when
 * the object carries __gt_origin__. NULL with a TypeError or ValueError naming the argument. */
PyObject *field_array(const Symbol *s, PyObject *o, bool *has_origin, int64_t origin[3]);

#endif
