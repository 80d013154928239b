/*
 * Lowers structured control flow to guarded statements, as the parallel-model seed reads:
 * a field condition is evaluated into a mask temporary first ("mask[i, j] = field != 0"),
 * then each statement of each branch runs where the mask (or its negation) holds. A scalar
 * condition needs no mask: it is the same at every point. Regions restrict statements to
 * boxes of the horizontal plane. `while` stays a statement whose body is lowered in turn.
 */
#include <stdio.h>

#include "analysis/analysis.h"

typedef struct {
    Stencil *st;
    int nmasks;
    const Computation *comp; /* being lowered */
    const Interval *interval;
    bool in_while;
} Lower;

/* One K level at most: interval(0, 1), interval(-1, None), ... */
static bool single_level(const Interval *in) {
    return in->start.sym == in->end.sym && in->start.level == in->end.level &&
           in->end.offset - in->start.offset <= 1;
}

/* Fields without a K axis are shared by every level (IJ) or every column (K): a write is
 * only deterministic when one level writes each element, i.e. an IJ field written in a
 * FORWARD/BACKWARD computation (the last level visited wins, as in a loop) or on a single
 * level. Fields without an I or a J axis (K, I, J, IK, JK) are read-only: the points of the
 * missing horizontal axis, which run in no defined order, would write the same elements
 * (GT4Py rejects these writes too). */
static bool check_lower_dim_write(Lower *L, const Stmt *s) {
    const Symbol *t = s->assign.target;
    if (t->axes == AX_IJK) return true; /* fields and temporaries (IJ temporaries) alike */
    if (t->axes == 0)
        return diag_error(L->st, DIAG_SEMANTIC, s->line, s->col,
                          "'%s' is a GlobalTable: tables are read-only lookup tables", t->name);
    if (!(t->axes & AX_I) || !(t->axes & AX_J))
        return diag_error(L->st, DIAG_SEMANTIC, s->line, s->col,
                          "'%s' is %s field: it can only be read (the points along its missing "
                          "horizontal axis would all write the same elements)",
                          t->name, t->axes == AX_K ? "a K" : t->axes == AX_I ? "an I" :
                          t->axes == AX_J ? "a J" : t->axes == (AX_I | AX_K) ? "an IK" : "a JK");
    if (L->comp->policy == POLICY_PARALLEL && !single_level(L->interval))
        return diag_error(L->st, DIAG_SEMANTIC, s->line, s->col,
                          "'%s' is an IJ field written in a PARALLEL computation over several K "
                          "levels: the value left would depend on the K order; write it in a "
                          "FORWARD or BACKWARD computation, or on a single level",
                          t->name);
    return true;
}

static bool reads_fields(Expr *e);

static void mark(void *ctx, Expr *e) {
    (void)e;
    *(bool *)ctx = true;
}

static bool reads_fields(Expr *e) {
    bool any = false;
    expr_visit_fields(e, mark, &any);
    return any;
}

static Expr *logic(Stencil *st, Op op, Expr *a, Expr *b) {
    if (a == NULL) return b;
    Expr *e = expr_new(st, E_LOGIC, b->line, b->col);
    if (e == NULL) return NULL;
    e->type = DT_BOOL;
    e->op.op = op;
    e->op.a = a;
    e->op.b = b;
    return e;
}

static Expr *negate(Stencil *st, Expr *a) {
    Expr *e = expr_new(st, E_UNARY, a->line, a->col);
    if (e == NULL) return NULL;
    e->type = DT_BOOL;
    e->op.op = OP_NOT;
    e->op.a = a;
    return e;
}

static Expr *mask_read(Stencil *st, Symbol *mask, int line, int col) {
    Expr *e = expr_new(st, E_FIELD, line, col);
    if (e == NULL) return NULL;
    e->type = DT_BOOL;
    e->field.sym = mask;
    return e;
}

static bool lower_list(Lower *L, StmtList *in, StmtList *out, Expr *guard, int nboxes, Box *boxes);

static bool lower_if(Lower *L, Stmt *s, StmtList *out, Expr *guard, int nboxes, Box *boxes) {
    Stencil *st = L->st;
    Expr *cond = s->if_.cond;
    if (reads_fields(cond)) {
        char name[64];
        snprintf(name, sizeof name, "__mask%d_line%d", L->nmasks++, s->line);
        Symbol *mask = stencil_add_temp(st, name, s->line, s->col);
        if (mask == NULL) return false;
        mask->dtype = DT_BOOL;
        mask->typed = true;
        mask->is_mask = true;
        mask->slot = st->nfields + mask->index;
        Stmt *m = stmt_new(st, S_ASSIGN, s->line, s->col);
        if (m == NULL) return false;
        m->assign.target = mask;
        m->assign.value = cond;
        m->guard = guard;
        m->nboxes = nboxes;
        m->boxes = boxes;
        if (!stmts_push(st, out, m)) return false;
        cond = mask_read(st, mask, s->line, s->col);
        if (cond == NULL) return false;
    }
    Expr *g_then = logic(st, OP_AND, guard, cond);
    Expr *ncond = negate(st, cond);
    Expr *g_else = ncond ? logic(st, OP_AND, guard, ncond) : NULL;
    if (g_then == NULL || g_else == NULL) return false;
    return lower_list(L, &s->if_.then, out, g_then, nboxes, boxes) &&
           lower_list(L, &s->if_.els, out, g_else, nboxes, boxes);
}

static bool lower_list(Lower *L, StmtList *in, StmtList *out, Expr *guard, int nboxes, Box *boxes) {
    Stencil *st = L->st;
    for (int i = 0; i < in->n; i++) {
        Stmt *s = in->items[i];
        switch (s->kind) {
        case S_ASSIGN:
            if (!check_lower_dim_write(L, s)) return false;
            s->guard = guard;
            s->nboxes = nboxes;
            s->boxes = boxes;
            if (!stmts_push(st, out, s)) return false;
            break;
        case S_IF:
            if (!lower_if(L, s, out, guard, nboxes, boxes)) return false;
            break;
        case S_REGION:
            if (L->in_while)
                return diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                                  "a horizontal region inside a while loop is not supported: put "
                                  "the while loop inside the region instead");
            if (nboxes > 0)
                return diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                                  "nested horizontal regions are not supported: combine them into "
                                  "one region");
            if (!lower_list(L, &s->region.body, out, guard, s->nboxes, s->boxes)) return false;
            break;
        case S_WHILE: {
            /* The body runs point by point while the condition holds there; its statements
             * are lowered with no outer guard (the loop itself is guarded). */
            StmtList body = {0};
            bool outer = L->in_while;
            L->in_while = true;
            bool ok = lower_list(L, &s->while_.body, &body, NULL, 0, NULL);
            L->in_while = outer;
            if (!ok) return false;
            s->while_.body = body;
            s->guard = guard;
            s->nboxes = nboxes;
            s->boxes = boxes;
            if (!stmts_push(st, out, s)) return false;
            break;
        }
        }
    }
    return true;
}

bool lower_control(Stencil *st) {
    Lower L = {st, 0, NULL, NULL, false};
    for (int c = 0; c < st->ncomps; c++) {
        L.comp = &st->comps[c];
        for (int i = 0; i < st->comps[c].nintervals; i++) {
            Interval *in = &st->comps[c].intervals[i];
            L.interval = in;
            StmtList flat = {0};
            if (!lower_list(&L, &in->body, &flat, NULL, 0, NULL)) return false;
            in->body = flat;
        }
    }
    return st->diag.kind == DIAG_NONE;
}
