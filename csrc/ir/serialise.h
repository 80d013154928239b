/*
 * Canonical serialisation of the analysed IR: the part of a cache key that describes the
 * stencil itself (as the code-cache key of the PyOP2 seed describes a parallel loop).
 *
 * Two stencils serialise equally exactly when the backends would generate the same code
 * for them: the text holds every fact of the analysed IR that code generation or the call
 * path's temporary allocation reads (types, offsets, extents, slots, guards, boxes, policies,
 * intervals, stencil-level analysis flags), and nothing else. Externals are already folded
 * and gtscript functions inlined by the frontend; source positions are left out, and
 * temporaries (including the analysis' mask temporaries) are renamed in first-use order, so
 * reformatting, comments and renaming a temporary do not change the text.
 *
 * A pass that adds a fact the backends read must add it here too, or two stencils that
 * differ only in that fact would share compiled code.
 */
#ifndef GT_SERIALISE_H
#define GT_SERIALISE_H

#include <stdbool.h>

#include "ir/ir.h"
#include "util/strbuf.h"

/* Appends the canonical text of `st` to `out`; false when out of memory. */
bool ir_serialise(const Stencil *st, StrBuf *out);

#endif
