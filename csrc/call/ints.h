/*
 * Integer tuples of a call's keywords (origin, domain, global_origin, global_domain): one
 * reader, so that every keyword refuses a wrong length, a non-integer and an integer beyond
 * 64 bits with the same kinds of error.
 */
#ifndef GT_CALL_INTS_H
#define GT_CALL_INTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

/* A sequence of n_min to n_max integers (n_max <= 8) into out; *n (when not NULL) gets the
 * count. `what` names the keyword and `name` (NULL for none) the argument it belongs to, as
 * "<what> of <name>"; `shape` completes "... must be <shape>" for a wrong length. Errors:
 * ValueError for a wrong length or an integer beyond 64 bits, TypeError for a non-integer. */
bool call_ints(PyObject *o, int n_min, int n_max, const char *what, const char *name,
               const char *shape, int64_t *out, int *n);

#endif
