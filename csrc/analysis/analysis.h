/*
 * The analysis passes, run in this order by analyse_stencil():
 *   checks_structure  field shapes vs offsets, K-write policy, interval order and overlap
 *   types_infer       dtypes with NumPy 2 promotion; explicit casts everywhere
 *   lower_control     if / while / regions -> guarded statements, field conditions into masks
 *   checks_dataflow   the parallel model's data-flow rules (write after read with offset, ...)
 *   extents_compute   the seeds' backward extent pass, field access extents, K constraints
 * Each pass reads the IR, fills in facts or rewrites it, and returns false with st->diag set.
 */
#ifndef GT_ANALYSIS_H
#define GT_ANALYSIS_H

#include "ir/ir.h"

bool checks_structure(Stencil *st);
bool types_infer(Stencil *st);
bool lower_control(Stencil *st);
bool checks_dataflow(Stencil *st);
bool extents_compute(Stencil *st);

bool analyse_stencil(Stencil *st);

/* Visits every field access (reads of fields/temporaries, including guards, while
 * conditions and variable K offsets) of an expression. */
typedef void (*FieldVisitor)(void *ctx, Expr *access);
void expr_visit_fields(Expr *e, FieldVisitor fn, void *ctx);

/* Compares two interval bounds assuming the domain is large enough: <0, =0, >0. */
int bound_cmp(AxisBound a, AxisBound b);

#endif
