/*
 * Call-time validation of variable K offsets (f[0, 0, kidx]): the K level such a read
 * reaches depends on scalar arguments and on the values of integer fields, so the static
 * access extents cannot cover it. Before a kernel runs, every variable-offset read of the
 * stencil is evaluated at every point where it executes and checked against its array.
 */
#ifndef GT_CALL_KBOUNDS_H
#define GT_CALL_KBOUNDS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* values[p]: the argument of parameter p (arrays already checked for dtype and rank);
 * origin[p]: its origin; domain: the compute domain and the region anchors (Bound.domain,
 * call.h); kvals: the integer scalars by slot
 * (ibounds_check, for run-time interval bounds). Returns false with a ValueError
 * naming the field (and what the offset is computed from) when a read leaves the array. */
bool kbounds_check(const Stencil *st, PyObject *const *values, const int64_t (*origin)[3],
                   const int64_t *domain, const int64_t *kvals);

/* Which parameters' values kbounds_check reads (reads[p], for every parameter p): the fields
 * variable K offsets, run-time data indices and interval bounds are computed from. Returns
 * whether there is any. */
bool kbounds_reads_fields(const Stencil *st, bool *reads);

/* The ValueError of an interval bound the kernel checked (a level computed from values the
 * stencil writes, GT_NOTE_LEVEL_BOUND) that was outside [0, nk] on line `line`: names the
 * temporary or field it is computed from and, from info (NULL: unknown), the column (i, j)
 * and the level. Returns false. */
bool kbounds_checked_bound_error(const Stencil *st, int64_t line, int64_t nk, const int64_t *info);

#endif
