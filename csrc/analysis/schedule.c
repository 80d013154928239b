/*
 * Execution-order freedom the backends may use. A FORWARD or BACKWARD computation runs
 * level by level: at each K level, each statement over the whole plane. When no statement
 * of the computation reads, with a horizontal offset, anything the computation writes, and
 * every statement runs on the compute domain itself (zero extent, no region), the planes
 * never exchange values: each (i, j) column can run its whole K sweep on its own, which
 * walks memory contiguously in C-ordered arrays.
 */
#include "analysis/analysis.h"

typedef struct {
    const Computation *comp;
    bool ok;
} ColumnCtx;

static bool written_in(const Computation *c, const Symbol *sym);

static bool list_writes(const StmtList *l, const Symbol *sym) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        if (s->kind == S_ASSIGN && s->assign.target == sym) return true;
        if (s->kind == S_WHILE && list_writes(&s->while_.body, sym)) return true;
    }
    return false;
}

static bool written_in(const Computation *c, const Symbol *sym) {
    for (int i = 0; i < c->nintervals; i++)
        if (list_writes(&c->intervals[i].body, sym)) return true;
    return false;
}

static void check_read(void *ctx, Expr *e) {
    ColumnCtx *C = ctx;
    if ((e->field.off[0] || e->field.off[1]) && written_in(C->comp, e->field.sym)) C->ok = false;
}

static void check_list(ColumnCtx *C, const StmtList *l) {
    for (int i = 0; i < l->n && C->ok; i++) {
        const Stmt *s = l->items[i];
        const int *h = s->horizontal_extent;
        if (h[0] || h[1] || h[2] || h[3] || s->nboxes) {
            C->ok = false;
            return;
        }
        expr_visit_fields(s->guard, check_read, C);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, check_read, C);
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, check_read, C);
            check_list(C, &s->while_.body);
        }
    }
}

void schedule_columns(Stencil *st) {
    for (int c = 0; c < st->ncomps; c++) {
        Computation *comp = &st->comps[c];
        ColumnCtx C = {comp, comp->policy != POLICY_PARALLEL};
        for (int i = 0; i < comp->nintervals && C.ok; i++) check_list(&C, &comp->intervals[i].body);
        comp->columnwise = C.ok;
    }
}
