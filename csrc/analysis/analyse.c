/* The analysis pipeline: one call, passes in a fixed order (see analysis.h). */
#include "analysis/analysis.h"

bool analyse_stencil(Stencil *st) {
    return checks_structure(st) && types_infer(st) && lower_control(st) && checks_dataflow(st) &&
           extents_compute(st);
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
