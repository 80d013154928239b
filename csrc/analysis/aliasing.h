/*
 * What the call needs to decide whether an output and an input passed the same memory can be
 * computed in any order (call/alias_check.h): the statements in program order, each with the
 * points it runs on (interval, extent, region boxes), what it writes and whether the value is
 * a plain copy of another field at the point itself, and where it reads argument fields.
 *
 * It is taken from the IR as written, after the extent analysis and before any backend's
 * rewriting (inline.c recomputes temporaries where they are read, schedule.c and tiles.c
 * reorganise loops), so that every backend accepts and refuses the same calls.
 */
#ifndef GT_ANALYSIS_ALIASING_H
#define GT_ANALYSIS_ALIASING_H

#include "ir/ir.h"

/* A read of an argument field by one statement. */
typedef struct AliasRead {
    int slot;    /* the field's slot */
    int off[3];  /* its offset (zero where anyk) */
    bool anyk;   /* a variable or absolute K index: any level */
    /* at the point itself, by a statement that writes an argument field on the domain (no
     * extent), outside its guard and any while loop: such a statement runs once per point,
     * after the statements before it at that point, so the read sees memory as the
     * statements before it left it */
    bool timed;
} AliasRead;

/* One assignment (or while condition), in program order. */
typedef struct AliasOp {
    AxisBound kstart, kend; /* the interval's levels */
    int ext[4];             /* horizontal extent: ilo, ihi, jlo, jhi */
    int nboxes;             /* region boxes (0: everywhere) */
    const Box *boxes;
    int target; /* slot written (argument field or temporary); -1: a while condition */
    /* guarded, or inside a while loop: may or may not write a given point */
    bool may;
    /* written at a K offset (constant or variable) or at a data index: another point's value */
    bool shifted_write;
    /* the value is exactly field slot copy_of at the point itself (no offset, no cast, no K
     * or data index), or -1 */
    int copy_of;
    int first_read, nreads; /* its reads of argument fields, in AliasSummary.reads */
} AliasOp;

typedef struct AliasSummary {
    int nops, nreads;
    AliasOp *ops;
    AliasRead *reads;
    int nslots; /* field slots (argument fields, then temporaries) when it was taken */
} AliasSummary;

/* Fills st->alias (arena memory) when some argument field is written and another is read:
 * only then can a call alias an input with an output. False with st->diag set (out of
 * memory). */
bool alias_summary(Stencil *st);

#endif
