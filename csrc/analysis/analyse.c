/* The analysis pipeline: one call, passes in a fixed order (see analysis.h). */
#include "analysis/analysis.h"

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
    /* Compiled backends recompute short temporaries where they are read; the arguments'
     * access facts (the contract with callers) stay those of the stencil as written. */
    if (st->compute_on_the_fly &&
        (!inline_temporaries(st) || !extents_recompute_keeping_contract(st)))
        return false;
    schedule_columns(st);
    return true;
}

void expr_visit_fields(Expr *e, FieldVisitor fn, void *ctx) {
    if (e == NULL) return;
    switch (e->kind) {
    case E_CONST:
    case E_SCALAR: return;
    case E_FIELD:
        fn(ctx, e);
        expr_visit_fields(e->field.kexpr, fn, ctx);
        return;
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        expr_visit_fields(e->op.a, fn, ctx);
        expr_visit_fields(e->op.b, fn, ctx);
        return;
    case E_TERNARY:
        expr_visit_fields(e->ternary.cond, fn, ctx);
        expr_visit_fields(e->ternary.a, fn, ctx);
        expr_visit_fields(e->ternary.b, fn, ctx);
        return;
    case E_CALL:
        for (int i = 0; i < e->call.nargs; i++) expr_visit_fields(e->call.args[i], fn, ctx);
        return;
    case E_CAST: expr_visit_fields(e->cast, fn, ctx); return;
    }
}

int bound_cmp(AxisBound a, AxisBound b) {
    if (a.level != b.level) return a.level - b.level;
    return a.offset - b.offset;
}
