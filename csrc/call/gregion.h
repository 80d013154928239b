/*
 * Horizontal regions on a global grid (global_origin= / global_domain= of a call).
 *
 * A region bound is anchored at the grid's first point (I[0]) or one past its last
 * (I[-1] + 1). Without the keywords the grid is the compute domain itself. With them, the
 * compute domain is the part of a larger grid that starts at global_origin, and the bounds
 * are placed from Bound.domain[3..6] at run time, so one compiled kernel serves every part
 * (every rank of a decomposition): nothing here reaches the cache key.
 *
 * The extents of the analysis (extents.c) assume the regions sit at the domain's edges.
 * Placed elsewhere, a region may cover other points of a statement's extent, so the call
 * works out what this placement really reads (gregion_reach): argument fields are checked
 * against their arrays with that reach, and a statement whose region covers points its
 * analysis did not (where the temporaries it reads were not computed) is refused.
 */
#ifndef GT_CALL_GREGION_H
#define GT_CALL_GREGION_H

#include "call/call.h"

/* Parses and validates global_origin and global_domain (either may be NULL or None) for
 * the domain in b->domain[0..2], and sets b->domain[3..6] and b->global. False with a
 * ValueError or TypeError naming the argument. */
bool gregion_bind(const Stencil *st, PyObject *global_origin, PyObject *global_domain, Bound *b);

/* Fills b->greach for every field slot from the statements' extents and their region boxes
 * as placed by b->domain[3..6] (reads, and with `writes` the points written); false with a
 * ValueError when a statement's region covers points the analysis did not compute its
 * inputs for. */
bool gregion_reach(const Stencil *st, Bound *b, bool writes);

/* Module._region_reach(domain, global_origin, global_domain): per argument field, the
 * ((lowest, highest) I, (lowest, highest) J) offsets from the domain that a call with this
 * placement reads; raises what the call would raise for the placement. For
 * gtscript.distributed, which exchanges the halos each rank's part really reads. */
PyObject *gregion_reach_method(ModuleObject *m, PyObject *args);

#endif
