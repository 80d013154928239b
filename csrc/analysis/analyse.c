/* The analysis pipeline: one call, passes in a fixed order (see analysis.h). */
#include "analysis/analysis.h"
#include "analysis/aliasing.h"

static bool unusable(const Stencil *st) {
    return st->diag.kind == DIAG_NOMEM || st->diag.kind == DIAG_INTERNAL;
}

/* The rule checks run even after an earlier pass found a violation, so that the error can
 * report the first violation in source order and count them all. Type inference and lowering
 * only rewrite the IR: a type error leaves it usable for the data-flow rules, but lowering
 * that fails itself (a new diagnostic) leaves it half structured, so the checks stop there. */
bool analyse_stencil(Stencil *st) {
    checks_structure(st);
    checks_control(st);
    checks_temporaries(st);
    if (unusable(st)) return false;
    types_infer(st);
    if (unusable(st)) return false;
    int before = st->diag.count;
    if (!lower_control(st) && st->diag.count != before) return false;
    checks_dataflow(st);
    if (st->diag.kind != DIAG_NONE || !split_self_assignments(st) || !extents_compute(st))
        return false;
    /* before any backend rewrites the IR: every backend accepts the same aliased calls */
    if (!alias_summary(st)) return false;
    /* Compiled backends recompute short temporaries where they are read; the arguments'
     * access facts (the contract with callers) stay those of the stencil as written. */
    if (st->compute_on_the_fly &&
        (!inline_temporaries(st) || !extents_recompute_keeping_contract(st)))
        return false;
    if (st->schedule_columns && !schedule_columns(st)) return false;
    if (!tile_extents(st)) return false;
    return !st->schedule_columns || (nests_assign(st) && registers_assign(st));
}

int bound_cmp(AxisBound a, AxisBound b) {
    if (a.level != b.level) return a.level - b.level;
    return a.offset - b.offset;
}
