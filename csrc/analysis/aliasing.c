/*
 * The aliasing summary (aliasing.h): the statements of the IR as written, flattened in
 * program order with the facts the call's order-independence check reads.
 */
#include "analysis/aliasing.h"

#include <string.h>

typedef struct {
    Stencil *st;
    AliasSummary *sum;
    int capops, capreads;
    const Interval *in;
    bool timed; /* reads of the statement being visited are `timed` (aliasing.h) */
} Collect;

static bool push_read(Collect *c, AliasRead r) {
    AliasSummary *s = c->sum;
    if (s->nreads == c->capreads) {
        int cap = c->capreads ? 2 * c->capreads : 32;
        AliasRead *p = arena_grow(&c->st->arena, s->reads, (size_t)s->nreads, (size_t)cap, sizeof *p);
        if (p == NULL) return false;
        s->reads = p;
        c->capreads = cap;
    }
    s->reads[s->nreads++] = r;
    return true;
}

static bool push_op(Collect *c, AliasOp op) {
    AliasSummary *s = c->sum;
    if (s->nops == c->capops) {
        int cap = c->capops ? 2 * c->capops : 16;
        AliasOp *p = arena_grow(&c->st->arena, s->ops, (size_t)s->nops, (size_t)cap, sizeof *p);
        if (p == NULL) return false;
        s->ops = p;
        c->capops = cap;
    }
    s->ops[s->nops++] = op;
    return true;
}

typedef struct {
    Collect *c;
    bool failed;
} Visit;

/* Every read of an argument field; temporaries hold no argument's memory. */
static void note_read(void *ctx, Expr *e) {
    Visit *v = ctx;
    const Symbol *s = e->field.sym;
    if (v->failed || s->kind != SYM_FIELD) return;
    bool anyk = e->field.kexpr != NULL || e->field.kabs;
    AliasRead r = {s->slot, {e->field.off[0], e->field.off[1], anyk ? 0 : e->field.off[2]}, anyk,
                   false};
    r.timed = v->c->timed && !anyk && !r.off[0] && !r.off[1] && !r.off[2];
    if (!push_read(v->c, r)) v->failed = true;
}

static bool visit_reads(Collect *c, Expr *e, bool timed) {
    Visit v = {c, false};
    c->timed = timed;
    expr_visit_fields(e, note_read, &v);
    return !v.failed;
}

/* The slot of a plain copy: a field read at the point itself with nothing else applied. A
 * temporary without a K axis holds one value for every level: never a copy of a point. */
static int copy_of(const Expr *e) {
    if (e == NULL || e->kind != E_FIELD || e->field.kexpr || e->field.kabs || e->field.ndi ||
        e->field.sym->axes != AX_IJK)
        return -1;
    const int *o = e->field.off;
    return o[0] || o[1] || o[2] ? -1 : e->field.sym->slot;
}

/* A copy of the statement's boxes: later passes own the IR's. False when out of memory. */
static bool op_for(Collect *c, const Stmt *s, const Stmt *boxed, bool may, AliasOp *out) {
    AliasOp op;
    memset(&op, 0, sizeof op);
    op.kstart = c->in->start;
    op.kend = c->in->end;
    memcpy(op.ext, s->horizontal_extent, sizeof op.ext);
    if (boxed->nboxes > 0) {
        Box *boxes = arena_alloc(&c->st->arena, sizeof *boxes * (size_t)boxed->nboxes);
        if (boxes == NULL) return false;
        memcpy(boxes, boxed->boxes, sizeof *boxes * (size_t)boxed->nboxes);
        op.boxes = boxes;
        op.nboxes = boxed->nboxes;
    }
    op.may = may || s->guard != NULL;
    op.target = -1;
    op.copy_of = -1;
    op.first_read = c->sum->nreads;
    *out = op;
    return true;
}

/* One statement; `outer` is the statement whose boxes and extent apply (a while loop's body
 * runs inside the loop's), in_while: inside a loop, where a point may run it many times. */
static bool collect_stmt(Collect *c, const Stmt *s, const Stmt *outer, bool in_while) {
    AliasOp op;
    if (!op_for(c, s, outer, in_while, &op)) return false;
    /* a guard's reads are evaluated into masks or at other moments than the assignment */
    if (!visit_reads(c, s->guard, false)) return false;
    if (s->kind == S_WHILE) {
        if (!visit_reads(c, s->while_.cond, false)) return false;
        op.nreads = c->sum->nreads - op.first_read;
        if (!push_op(c, op)) return false;
        for (int i = 0; i < s->while_.body.n; i++)
            if (!collect_stmt(c, s->while_.body.items[i], outer, true)) return false;
        return true;
    }
    if (s->kind != S_ASSIGN) return true; /* lowered away before the extents */
    const Symbol *t = s->assign.target;
    /* an argument field written beyond the domain (read later at an offset) may be computed
     * again in the halo of a neighbouring tile or thread block, later than program order */
    const int *h = s->horizontal_extent;
    bool once = t->kind == SYM_FIELD && !in_while && !h[0] && !h[1] && !h[2] && !h[3];
    if (!visit_reads(c, s->assign.value, once) ||
        !visit_reads(c, s->assign.kexpr, false))
        return false;
    op.nreads = c->sum->nreads - op.first_read;
    op.target = t->slot;
    op.shifted_write = s->assign.koff != 0 || s->assign.kexpr != NULL || s->assign.ndi != 0;
    op.copy_of = op.shifted_write ? -1 : copy_of(s->assign.value);
    return push_op(c, op);
}

/* Whether a call could pass one array for a written argument field and another one. */
static bool may_alias(const Stencil *st) {
    bool written = false;
    int used = 0;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !(s->read || s->written)) continue;
        used++;
        written |= s->written;
    }
    return written && used > 1;
}

bool alias_summary(Stencil *st) {
    st->alias = NULL;
    if (!may_alias(st)) return true;
    AliasSummary *sum = arena_alloc(&st->arena, sizeof *sum);
    if (sum == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    sum->nslots = stencil_nslots(st);
    Collect c = {st, sum, 0, 0, NULL, false};
    for (int ci = 0; ci < st->ncomps; ci++) {
        const Computation *comp = &st->comps[ci];
        for (int i = 0; i < comp->nintervals; i++) {
            c.in = &comp->intervals[i];
            const StmtList *l = &c.in->body;
            for (int k = 0; k < l->n; k++)
                if (!collect_stmt(&c, l->items[k], l->items[k], false))
                    return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
        }
    }
    st->alias = sum;
    return true;
}
