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

/* The bytes [*lo, *hi) that array `a` (a PyArrayObject) spans: false when computing them
 * overflows (strides and shape that reach more than 2**63 bytes), *lo and *hi then unset.
 * An array with no elements spans nothing (*lo == *hi). Every product is overflow-checked:
 * shape and strides are the caller's (np.lib.stride_tricks.as_strided makes any). */
bool array_byte_span(PyObject *a, char **lo, char **hi);

/* Validation of field s's array (bind_all): its span computes without overflow and lies
 * inside the memory of the array it views, where that is known (the base that owns the
 * data, a buffer-protocol object, the array that as_strided's view came from). A view whose
 * strides reach past that memory (as_strided with enormous or wrong strides) would make the
 * kernel read or write outside it. False with a ValueError naming the argument. */
bool array_within_memory(const Symbol *s, PyObject *a);

/* Raises the TypeError for field s's array `a` (a PyArrayObject) whose dtype is not the
 * declared one (no implicit cast), with the fix: the cast to pass (np.asarray(x, dtype=...)
 * for a list or tuple NumPy converted, `from_sequence`), or the declaration that takes a's
 * dtype. False. */
bool dtype_refusal(const Symbol *s, PyObject *a, bool from_sequence);

#endif
