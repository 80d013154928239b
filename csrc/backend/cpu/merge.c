/*
 * Loop-nest merging: consecutive statements of an interval that may share one loop nest.
 *
 * The parallel model runs each statement over its whole (extended) domain before the next
 * (PARALLEL), and within a level each statement over the plane before the next (FORWARD,
 * BACKWARD); the cpu backend emits one loop nest per statement. A run of statements with the
 * same extent and region boxes computes the same values in one nest, statement after
 * statement at each point, when nothing one of them writes is accessed by the run at another
 * point: then every value a statement reads at point p was written (or not yet overwritten)
 * at p exactly as the statement-by-statement order has it. A physics scheme is hundreds of
 * such point-wise statements; one nest each is hundreds of loops for LLVM to analyse and
 * for the memory system to stream through.
 */
#include "backend/cpu/merge.h"

#include <stdbool.h>

/* Statements per merged nest at most: beyond this a loop body only grows LLVM's per-loop
 * work (scheduling, register allocation) without saving passes over memory. */
enum { MERGE_MAX_RUN = 32, MERGE_MAX_WRITES = 64 };

typedef struct Writes {
    const Symbol *sym[MERGE_MAX_WRITES];
    int n;
    bool full; /* more symbols than fit: stop the run */
} Writes;

static bool written(const Writes *w, const Symbol *s) {
    for (int i = 0; i < w->n; i++)
        if (w->sym[i] == s) return true;
    return false;
}

static void add_write(Writes *w, const Symbol *s) {
    if (written(w, s)) return;
    if (w->n == MERGE_MAX_WRITES) w->full = true;
    else w->sym[w->n++] = s;
}

/* Whether expression e accesses a symbol of w anywhere but at the current point. */
static bool reads_shifted(const Expr *e, const Writes *w) {
    if (e == NULL) return false;
    switch (e->kind) {
    case E_FIELD:
        if (written(w, e->field.sym) &&
            (e->field.off[0] || e->field.off[1] || e->field.off[2] || e->field.kexpr))
            return true;
        return reads_shifted(e->field.kexpr, w);
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC: return reads_shifted(e->op.a, w) || reads_shifted(e->op.b, w);
    case E_TERNARY:
        return reads_shifted(e->ternary.cond, w) || reads_shifted(e->ternary.a, w) ||
               reads_shifted(e->ternary.b, w);
    case E_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (reads_shifted(e->call.args[i], w)) return true;
        return false;
    case E_CAST: return reads_shifted(e->cast, w);
    default: return false;
    }
}

static void collect_writes(const Stmt *s, Writes *w) {
    if (s->kind == S_ASSIGN) add_write(w, s->assign.target);
    else if (s->kind == S_WHILE)
        for (int i = 0; i < s->while_.body.n; i++) collect_writes(s->while_.body.items[i], w);
}

/* Whether s accesses a symbol of w at another point; also refuses writes at K offsets. */
static bool accesses_shifted(const Stmt *s, const Writes *w) {
    if (reads_shifted(s->guard, w)) return true;
    if (s->kind == S_ASSIGN) {
        if (s->assign.koff || s->assign.kexpr) return true; /* writes another level */
        return reads_shifted(s->assign.value, w);
    }
    if (s->kind == S_WHILE) {
        if (reads_shifted(s->while_.cond, w)) return true;
        for (int i = 0; i < s->while_.body.n; i++)
            if (accesses_shifted(s->while_.body.items[i], w)) return true;
        return false;
    }
    return true; /* structured forms do not reach code generation */
}

static bool same_bound(AxisBound a, AxisBound b) {
    return a.level == b.level && a.offset == b.offset && a.sym == b.sym;
}

static bool same_domain(const Stmt *a, const Stmt *b) {
    for (int i = 0; i < 4; i++)
        if (a->horizontal_extent[i] != b->horizontal_extent[i] || a->tile_extent[i] != b->tile_extent[i])
            return false;
    /* one box at most: the boxes of a statement may overlap, and a merged nest per box would
     * run the run's first statements again after its last ones where they do */
    if (a->nboxes != b->nboxes || a->nboxes > 1) return false;
    for (int k = 0; k < a->nboxes; k++)
        for (int i = 0; i < 4; i++) {
            if (a->boxes[k].has[i] != b->boxes[k].has[i]) return false;
            if (a->boxes[k].has[i] && !same_bound(a->boxes[k].b[i], b->boxes[k].b[i])) return false;
        }
    return true;
}

int cpu_merge_run(const StmtList *l, int start) {
    const Stmt *first = l->items[start];
    Writes w = {.n = 0};
    /* The run's writes so far and every access of them: each statement is checked against
     * the writes of the run including its own (a statement reading what it writes at
     * another point would see the new values of points before it). */
    int n = 0;
    while (start + n < l->n && n < MERGE_MAX_RUN) {
        const Stmt *s = l->items[start + n];
        if (n > 0 && !same_domain(first, s)) break;
        Writes next = w;
        collect_writes(s, &next);
        if (next.full) break;
        if (accesses_shifted(s, &next)) break;
        /* and the statements before it must not access its writes at other points */
        bool clash = false;
        for (int k = 0; k < n && !clash; k++) clash = accesses_shifted(l->items[start + k], &next);
        if (clash) break;
        w = next;
        n++;
    }
    return n > 0 ? n : 1;
}
