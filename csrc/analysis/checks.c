/*
 * Parallel-model rules that need no data flow: where a field may be indexed and written,
 * and how the intervals of a computation are laid out. Also orders each computation's
 * intervals in execution order (BACKWARD runs the highest interval first).
 */
#include <stdlib.h>

#include "analysis/analysis.h"

static const char *axes_desc(int axes) {
    switch (axes) {
    case AX_IJK: return "an IJK field";
    case AX_I | AX_J: return "an IJ field";
    case AX_K: return "a K field";
    case AX_I: return "an I field";
    case AX_J: return "a J field";
    case AX_I | AX_K: return "an IK field";
    case AX_J | AX_K: return "a JK field";
    case 0: return "a GlobalTable";
    default: return "a field";
    }
}

typedef struct {
    Stencil *st;
} AccessCtx;

static void check_access(void *ctx, Expr *e) {
    Stencil *st = ((AccessCtx *)ctx)->st;
    Symbol *s = e->field.sym;
    const int *o = e->field.off;
    if (!(s->axes & AX_I) && o[0] != 0)
        diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                   "'%s' is %s: it has no I axis and cannot be read with an I offset (%d)", s->name,
                   axes_desc(s->axes), o[0]);
    if (!(s->axes & AX_J) && o[1] != 0)
        diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                   "'%s' is %s: it has no J axis and cannot be read with a J offset (%d)", s->name,
                   axes_desc(s->axes), o[1]);
    if (e->field.kabs && s->kind == SYM_TEMP)
        diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                   "'%s' is a temporary: .at(K=...) reads field parameters only (pass it in as a "
                   "field, or read it with a K offset)",
                   s->name);
    else if (!(s->axes & AX_K) && e->field.kabs)
        diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                   "'%s' is %s: it has no K axis and cannot be read at an absolute K index "
                   "(.at(K=...))",
                   s->name, axes_desc(s->axes));
    else if (!(s->axes & AX_K) && (o[2] != 0 || e->field.kexpr))
        diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                   "'%s' is %s: it has no K axis and cannot be read with a K offset", s->name,
                   axes_desc(s->axes));
    if (e->field.ndi != s->ndata && !(e->field.ndi == 0 && s->ndata == 0))
        diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                   "'%s' has %d data dimension%s but is indexed with %d data index%s", s->name,
                   s->ndata, s->ndata == 1 ? "" : "s", e->field.ndi, e->field.ndi == 1 ? "" : "es");
    for (int d = 0; d < e->field.ndi && d < s->ndata; d++)
        if (e->field.data_index[d] < 0 || e->field.data_index[d] >= s->data_dims[d])
            diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                       "data index %d of '%s' is out of range: dimension %d has size %d",
                       e->field.data_index[d], s->name, d, s->data_dims[d]);
}

static void check_stmts(Stencil *st, const Computation *c, StmtList *l) {
    AccessCtx ctx = {st};
    for (int i = 0; i < l->n; i++) {
        Stmt *s = l->items[i];
        switch (s->kind) {
        case S_ASSIGN: {
            Symbol *t = s->assign.target;
            expr_visit_fields(s->assign.value, check_access, &ctx);
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, check_access, &ctx);
            if (s->assign.kexpr && c->policy == POLICY_PARALLEL)
                diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                           "write to '%s' at a variable K offset in a PARALLEL computation: the K "
                           "order is unspecified there, so the result would depend on it; use "
                           "FORWARD or BACKWARD",
                           t->name);
            if (s->assign.kexpr && !(t->axes & AX_K))
                diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                           "'%s' is %s and cannot be written with a K offset", t->name,
                           axes_desc(t->axes));
            if (s->assign.koff != 0 && c->policy == POLICY_PARALLEL)
                diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                           "off-centre write '%s[0, 0, %d]' in a PARALLEL computation: the K order "
                           "is unspecified there, so the result would depend on it; use FORWARD or "
                           "BACKWARD",
                           t->name, s->assign.koff);
            if (s->assign.koff != 0 && !(t->axes & AX_K))
                diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                           "'%s' is %s and cannot be written with a K offset", t->name,
                           axes_desc(t->axes));
            if (t->ndata != s->assign.ndi)
                diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                           "'%s' has %d data dimension%s: write one element, e.g. %s[0, 0, 0][0]",
                           t->name, t->ndata, t->ndata == 1 ? "" : "s", t->name);
            /* A write's data index is a build-time constant: out of range it would store
             * past the field's last component (into the next point's, or past the array). */
            for (int d = 0; d < s->assign.ndi && d < t->ndata; d++)
                if (s->assign.data_index[d] < 0 || s->assign.data_index[d] >= t->data_dims[d])
                    diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                               "data index %d of '%s' is out of range: dimension %d has size %d",
                               s->assign.data_index[d], t->name, d, t->data_dims[d]);
            break;
        }
        case S_IF:
            expr_visit_fields(s->if_.cond, check_access, &ctx);
            check_stmts(st, c, &s->if_.then);
            check_stmts(st, c, &s->if_.els);
            break;
        case S_WHILE:
            st->has_while = true;
            expr_visit_fields(s->while_.cond, check_access, &ctx);
            check_stmts(st, c, &s->while_.body);
            break;
        case S_REGION: check_stmts(st, c, &s->region.body); break;
        }
    }
}

static int cmp_start(const void *a, const void *b) {
    return bound_cmp(((const Interval *)a)->start, ((const Interval *)b)->start);
}

static bool has_runtime_bound(const Computation *c) {
    for (int i = 0; i < c->nintervals; i++)
        if (c->intervals[i].start.sym || c->intervals[i].end.sym) return true;
    return false;
}

/* Whether a <= b (or a < b when strict) is known at compile time: both bounds are static,
 * or both are offsets from the same run-time bound. */
static bool known_below(AxisBound a, AxisBound b, bool strict) {
    if (a.sym != b.sym) return false;
    int c = bound_cmp(a, b);
    return strict ? c < 0 : c <= 0;
}

/* A computation with a run-time bound (`interval(0, n)`) cannot be sorted at compile time:
 * its intervals run in the order written, which must be the order of the levels (upwards
 * in PARALLEL and FORWARD, downwards in BACKWARD). The call checks that they lie in the
 * domain in that order without overlapping (call/ibounds.c); what is already known now is
 * checked here. */
static void check_runtime_intervals(Stencil *st, Computation *c) {
    st->has_runtime_bounds = true;
    for (int i = 0; i < c->nintervals; i++) {
        Interval *in = &c->intervals[i];
        if (in->start.sym == in->end.sym && !known_below(in->start, in->end, true))
            diag_error(st, DIAG_SEMANTIC, in->line, in->col,
                       "empty interval: its start is not below its end");
    }
    bool down = c->policy == POLICY_BACKWARD;
    for (int i = 0; i + 1 < c->nintervals; i++) {
        Interval *a = &c->intervals[i], *b = &c->intervals[i + 1];
        AxisBound lo = down ? b->end : a->end, hi = down ? a->start : b->start;
        bool comparable = lo.sym == hi.sym;
        if (comparable && !known_below(lo, hi, false))
            diag_error(st, DIAG_SEMANTIC, b->line, b->col,
                       "in a computation with run-time interval bounds the intervals run in the "
                       "order written, which must be the order of the levels (%s): this interval "
                       "is not %s the one on line %d",
                       down ? "downwards in BACKWARD" : "upwards in PARALLEL and FORWARD",
                       down ? "below" : "above", a->line);
    }
}

static void order_intervals(Stencil *st, Computation *c) {
    if (has_runtime_bound(c)) {
        check_runtime_intervals(st, c);
        return;
    }
    for (int i = 0; i < c->nintervals; i++) {
        Interval *in = &c->intervals[i];
        if (bound_cmp(in->start, in->end) >= 0)
            diag_error(st, DIAG_SEMANTIC, in->line, in->col,
                       "empty interval: its start is not below its end");
    }
    qsort(c->intervals, (size_t)c->nintervals, sizeof(Interval), cmp_start);
    for (int i = 0; i + 1 < c->nintervals; i++) {
        Interval *a = &c->intervals[i], *b = &c->intervals[i + 1];
        if (bound_cmp(a->end, b->start) > 0) {
            Interval *later = a->line > b->line ? a : b, *earlier = later == a ? b : a;
            diag_error(st, DIAG_SEMANTIC, later->line, later->col,
                       "overlapping intervals in one computation: this interval overlaps the one "
                       "on line %d",
                       earlier->line);
        }
    }
    if (c->policy == POLICY_BACKWARD) {
        for (int i = 0, j = c->nintervals - 1; i < j; i++, j--) {
            Interval t = c->intervals[i];
            c->intervals[i] = c->intervals[j];
            c->intervals[j] = t;
        }
    }
}

bool checks_structure(Stencil *st) {
    for (int c = 0; c < st->ncomps; c++) {
        Computation *comp = &st->comps[c];
        for (int i = 0; i < comp->nintervals; i++) check_stmts(st, comp, &comp->intervals[i].body);
        order_intervals(st, comp);
    }
    return st->diag.kind == DIAG_NONE;
}
