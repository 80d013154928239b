/*
 * Arguments a build does not use (GT4Py's access NONE: never read or written, for example
 * after __INLINED(False) removed their only read). GT4Py checks nothing about them, so a
 * model may pass any value (a 3-D array where a 2-D field is declared); the call drops the
 * value before any check and never touches it, and says so at DEBUG on the "gtscript"
 * logger where the value would not have passed the checks of a used argument.
 */
#ifndef GT_CALL_UNUSED_H
#define GT_CALL_UNUSED_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>

#include "ir/ir.h"

/* Whether the stencil reads or writes parameter s (one that __INLINED folded away is not). */
static inline bool param_used(const Symbol *s) { return s->read || s->written; }

/* Notes value `o` of unused parameter `s` of stencil `st` (a DEBUG record where o differs from
 * s's declaration). False only with an exception from the logging module itself. */
bool unused_arg_note(const Stencil *st, const Symbol *s, PyObject *o);

#endif
