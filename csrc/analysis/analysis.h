/*
 * The analysis passes, run in this order by analyse_stencil():
 *   checks_structure  field shapes vs offsets, K-write policy, interval order and overlap
 *   checks_control    rules on the structured IR: while loops (3), field conditionals (4)
 *   checks_temporaries temporaries read but never written (or on K levels no interval
 *                     writes, templevels.c); warnings for likely mistakes
 *   types_infer       dtypes with NumPy 2 promotion; explicit casts everywhere
 *   lower_control     if / while / regions -> guarded statements, field conditions into masks
 *   checks_dataflow   the parallel model's data-flow rules (write after read with offset, ...)
 *   split_self_assignments  `t = t[-1, 0, 0]`: value into a new temporary, then assigned
 *   extents_compute   the seeds' backward extent pass, field access extents, K constraints
 *   alias_summary     the statements as written, for the call's aliasing check (aliasing.h)
 *   schedule_columns  computations that may sweep column by column; column-local temporaries
 *   tile_extents      where a tile computes each statement, regions' reads across tile edges
 *   nests_assign      which consecutive statements share one loop nest (outside column groups)
 *   registers_assign  temporaries a column sweep or a loop nest keeps in registers (no buffer)
 * Each pass reads the IR, fills in facts or rewrites it, and returns false with st->diag set.
 * The rule checks keep going after a violation, so the error names the first one in source
 * order and counts them all.
 */
#ifndef GT_ANALYSIS_H
#define GT_ANALYSIS_H

#include "ir/ir.h"

bool checks_structure(Stencil *st);
bool checks_control(Stencil *st);
bool checks_temporaries(Stencil *st);
bool types_infer(Stencil *st);
bool lower_control(Stencil *st);
bool checks_dataflow(Stencil *st);
bool split_self_assignments(Stencil *st);
bool extents_compute(Stencil *st);
bool extents_recompute_keeping_contract(Stencil *st);
bool schedule_columns(Stencil *st);
bool registers_assign(Stencil *st);
/* Whether computation b continues a's statement list: both PARALLEL over one interval. */
bool comps_continue(const Computation *a, const Computation *b);
bool nests_assign(Stencil *st);
/* Whether anything `value` reads is written by statements [from, to] of body (inline.c;
 * registers.c: a guard's value from its write to its read). */
bool value_clobbered(const Expr *value, const StmtList *body, int from, int to);
bool inline_temporaries(Stencil *st);
bool tile_extents(Stencil *st);

bool analyse_stencil(Stencil *st);


/* The K size below which some interval would be empty or intervals would swap order (the
 * call refuses a smaller domain); needs the intervals in execution order. */
int stencil_min_k_levels(const Stencil *st);

/* Temporaries read on K levels no interval writes (temps.c's level-aware part). */
bool checks_temporary_levels(Stencil *st);

/* Compares two interval bounds assuming the domain is large enough: <0, =0, >0. */
int bound_cmp(AxisBound a, AxisBound b);

#endif
