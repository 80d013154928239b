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
    const Computation *comp;  /* shifted reads of what this computation writes are fatal */
    const Computation *other; /* ... and of what this one writes (NULL: none) */
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
    if ((e->field.off[0] || e->field.off[1]) &&
        (written_in(C->comp, e->field.sym) || (C->other && written_in(C->other, e->field.sym))))
        C->ok = false;
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

static bool columnwise_against(const Computation *comp, const Computation *other) {
    ColumnCtx C = {comp, other, comp->policy != POLICY_PARALLEL};
    for (int i = 0; i < comp->nintervals && C.ok; i++) check_list(&C, &comp->intervals[i].body);
    return C.ok;
}

/* Consecutive columnwise computations may also share the column loop (a tridiagonal
 * solver's FORWARD and BACKWARD sweeps, one column at a time, stay in L1) when neither reads
 * with a horizontal offset what the other writes. */
void schedule_columns(Stencil *st) {
    for (int c = 0; c < st->ncomps; c++) st->comps[c].columnwise = columnwise_against(&st->comps[c], NULL);
    for (int c = 0; c + 1 < st->ncomps; c++) {
        Computation *a = &st->comps[c], *b = &st->comps[c + 1];
        a->column_fuse_next = a->columnwise && b->columnwise && columnwise_against(a, b) &&
                              columnwise_against(b, a);
    }
}
