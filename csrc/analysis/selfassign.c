/*
 * A statement means "evaluate the right-hand side on the whole (extended) plane, then
 * assign" (seed: each statement behaves like a NumPy statement). A statement that reads its
 * own target at another horizontal position, `t = t[-1, 0, 0] + 1.0`, would see values it
 * has already overwritten when a backend updates the field in place point by point. Such a
 * statement is split in two, as NumPy's temporary copy does: the value goes to a new
 * temporary first, which is then assigned to the target.
 *
 * Runs after the data-flow checks: an argument field read with a horizontal offset and
 * written is a rule 1 error ("shifted self-assignment"), and reading the target at another K
 * level in PARALLEL is an error too (dataflow.c), before anything gets here.
 */
#include <stdio.h>

#include "analysis/analysis.h"

typedef struct {
    const Symbol *target;
    bool found;
} SelfRead;

static void find_self_read(void *ctx, Expr *e) {
    SelfRead *r = ctx;
    if (e->field.sym != r->target) return;
    if (e->field.off[0] != 0 || e->field.off[1] != 0) r->found = true;
}

/* `s` becomes `tmp = value; target = tmp`; the first statement is pushed to `out`. */
static bool split(Stencil *st, Stmt *s, StmtList *out, int *count) {
    Symbol *t = s->assign.target;
    char name[64];
    snprintf(name, sizeof name, "__rhs%d_line%d", (*count)++, s->line);
    Symbol *tmp = stencil_add_temp(st, name, s->line, s->col);
    Stmt *first = stmt_new(st, S_ASSIGN, s->line, s->col);
    Expr *read = expr_new(st, E_FIELD, s->line, s->col);
    if (tmp == NULL || first == NULL || read == NULL) return false;
    tmp->dtype = t->dtype;
    tmp->typed = true;
    first->guard = s->guard;
    first->nboxes = s->nboxes;
    first->boxes = s->boxes;
    first->assign.target = tmp;
    first->assign.value = s->assign.value; /* already cast to the target's dtype */
    read->type = t->dtype;
    read->field.sym = tmp;
    s->assign.value = read;
    return stmts_push(st, out, first);
}

static bool split_list(Stencil *st, StmtList *l, int *count) {
    StmtList out = {0};
    for (int i = 0; i < l->n; i++) {
        Stmt *s = l->items[i];
        if (s->kind == S_WHILE && !split_list(st, &s->while_.body, count)) return false;
        if (s->kind == S_ASSIGN) {
            SelfRead r = {s->assign.target, false};
            expr_visit_fields(s->assign.value, find_self_read, &r);
            if (r.found && !split(st, s, &out, count)) return false;
        }
        if (!stmts_push(st, &out, s)) return false;
    }
    *l = out;
    return true;
}

bool split_self_assignments(Stencil *st) {
    int count = 0;
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++)
            if (!split_list(st, &st->comps[c].intervals[i].body, &count)) return false;
    return st->diag.kind == DIAG_NONE;
}
