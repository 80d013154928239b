/*
 * Call-time validation of run-time interval bounds (`interval(0, n)` with n an integer scalar
 * parameter): their values are only known at the call, so the checks that static bounds get
 * when the stencil is built (inside the domain, in order, not overlapping) happen here,
 * before any kernel runs.
 */
#ifndef GT_CALL_IBOUNDS_H
#define GT_CALL_IBOUNDS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* values[p]: the argument of parameter p; domain: the compute domain. For a stencil with
 * run-time bounds, fills kvals[slot] with the value of each integer scalar argument (by
 * scalar slot; 0 for other scalars; untouched without run-time bounds) and checks
 * every interval of a computation with a run-time bound (when the domain is not empty):
 * 0 <= start <= end <= nk, and the
 * intervals in the order they run without overlapping. Returns false with an exception (a
 * ValueError naming the parameters, or the scalar's own TypeError / ValueError; a bound
 * that overflows int64 is a ValueError too). */
bool ibounds_check(const Stencil *st, PyObject *const *values, const int64_t *domain,
                   int64_t *kvals);

#endif
