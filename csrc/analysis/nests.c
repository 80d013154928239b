/*
 * Loop nests: which consecutive statements of an interval share one loop nest.
 *
 * The parallel model runs each statement over its whole (extended) domain before the next
 * (PARALLEL), and within a level each statement over the plane before the next (FORWARD,
 * BACKWARD); a backend may emit one loop nest per statement. A run of statements with the
 * same extent and region boxes computes the same values in one nest, statement after
 * statement at each point, when nothing one of them writes is accessed by the run at another
 * point: then every value a statement reads at point p was written (or not yet overwritten)
 * at p exactly as the statement-by-statement order has it. A physics scheme is hundreds of
 * such point-wise statements; one nest each is hundreds of loops for LLVM to analyse and
 * for the memory system to stream through.
 *
 * nest_run gives the rule; nests_assign fixes the runs of every computation (a column
 * group's are used where the group runs level by level: Fortran order), so that later
 * passes and the backend rely on them:
 * a temporary whose every access lies in one run, read at the point after the run wrote it
 * there, lives in a register of the nest (registers.c). Consecutive PARALLEL
 * computations over one and the same interval form one list (comps_continue): the model runs
 * them exactly as one computation's statements.
 */
#include "analysis/analysis.h"

#include <stdlib.h>

/* A run's size at most: NEST_RUN_MAX statements, of which at most NEST_RUN_MAX_STORES write
 * memory (a field, or a temporary that is no register candidate). Point-wise statements whose
 * temporaries live in registers gain from one long loop body (each value stays in a register,
 * and LLVM vectorises the whole chain); a loop storing to more arrays than that runs slower
 * than two (more streams than the prefetchers and the L1 cache keep up with: 500 statements
 * each storing a temporary, 64x64x80, 622 ms in runs of 32, 1,956 ms as one run). */
enum { NEST_RUN_MAX = 1024, NEST_RUN_MAX_STORES = 32 };

/* The symbols a run writes and those it accesses at another point than the current one,
 * by slot (fields and temporaries; scalars are never written). */
typedef struct Marks {
    bool *written; /* written by the run (or the statement being added) */
    bool *shifted; /* accessed by the run at another point, or written at another level */
    bool clash;    /* the statement being added breaks the rule */
} Marks;

static void mark_shifted(void *ctx, Expr *e) {
    Marks *m = ctx;
    if (!(e->field.off[0] || e->field.off[1] || e->field.off[2] || e->field.kexpr)) return;
    m->shifted[e->field.sym->slot] = true;
    if (m->written[e->field.sym->slot]) m->clash = true;
}

/* Every symbol s accesses at another point, into m->shifted (m->clash where the run writes
 * it); false for a statement no run may hold (a write at another level; structured forms
 * never reach this pass). */
static bool note_shifted(const Stmt *s, Marks *m) {
    expr_visit_fields(s->guard, mark_shifted, m);
    if (s->kind == S_ASSIGN) {
        if (s->assign.koff || s->assign.kexpr) return false;
        expr_visit_fields(s->assign.value, mark_shifted, m);
        return true;
    }
    if (s->kind == S_WHILE) {
        expr_visit_fields(s->while_.cond, mark_shifted, m);
        for (int i = 0; i < s->while_.body.n; i++)
            if (!note_shifted(s->while_.body.items[i], m)) return false;
        return true;
    }
    return false;
}

static void note_writes(const Stmt *s, bool *written) {
    if (s->kind == S_ASSIGN) written[s->assign.target->slot] = true;
    else if (s->kind == S_WHILE)
        for (int i = 0; i < s->while_.body.n; i++) note_writes(s->while_.body.items[i], written);
}

/* Whether s writes a symbol of `set`. */
static bool writes_any(const Stmt *s, const bool *set) {
    if (s->kind == S_ASSIGN) return set[s->assign.target->slot];
    if (s->kind == S_WHILE)
        for (int i = 0; i < s->while_.body.n; i++)
            if (writes_any(s->while_.body.items[i], set)) return true;
    return false;
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

/* Whether s writes memory: a field, or a temporary not known to be a register candidate. */
static bool stores(const Stmt *s, const bool *candidate) {
    if (s->kind == S_ASSIGN) {
        const Symbol *t = s->assign.target;
        return !(t->kind == SYM_TEMP && candidate[t->index]);
    }
    if (s->kind == S_WHILE)
        for (int i = 0; i < s->while_.body.n; i++)
            if (stores(s->while_.body.items[i], candidate)) return true;
    return false;
}

/*
 * How many statements of `l` from `start` on (at least 1) share one loop nest. A statement
 * joins the run when it has the run's domain, writes nothing the run (itself
 * included) accesses at another point, and accesses nothing the run (itself included) writes
 * at another point: a statement reading what it writes at another point would see the new
 * values of points before it. One pass: the marks only grow, so each statement is looked at
 * once, whatever the run's length.
 */
static int nest_run(const Stencil *st, const StmtList *l, int start, const bool *candidate) {
    size_t nslots = (size_t)stencil_nslots(st);
    bool *marks = calloc(2 * nslots + 2, sizeof(bool));
    if (marks == NULL) return 1; /* out of memory: one statement per nest is always right */
    Marks m = {marks, marks + nslots + 1, false};
    const Stmt *first = l->items[start];
    int n = 0, nstores = 0;
    while (start + n < l->n && n < NEST_RUN_MAX) {
        const Stmt *s = l->items[start + n];
        if (n > 0 && !same_domain(first, s)) break;
        bool store = stores(s, candidate);
        if (store && nstores == NEST_RUN_MAX_STORES) break;
        if (writes_any(s, m.shifted)) break; /* the run accessed it at another point */
        note_writes(s, m.written);           /* first: s may access its own write shifted */
        if (!note_shifted(s, &m) || m.clash) break;
        nstores += store;
        n++;
    }
    free(marks);
    return n > 0 ? n : 1;
}

bool comps_continue(const Computation *a, const Computation *b) {
    return a->policy == POLICY_PARALLEL && b->policy == POLICY_PARALLEL && a->nintervals == 1 &&
           b->nintervals == 1 && same_bound(a->intervals[0].start, b->intervals[0].start) &&
           same_bound(a->intervals[0].end, b->intervals[0].end);
}

/* The runs of one statement list (an interval, or a chain of PARALLEL computations). */
static bool assign_runs(Stencil *st, Stmt **items, int n, bool grouped, const bool *candidate,
                        int *cap) {
    StmtList l = {items, n, n};
    for (int i = 0; i < n;) {
        int len = nest_run(st, &l, i, candidate);
        if (st->nruns == *cap) {
            int more = *cap ? 2 * *cap : 16;
            StmtList *r = arena_alloc(&st->arena, sizeof *r * (size_t)more);
            bool *g = arena_alloc(&st->arena, sizeof *g * (size_t)more);
            if (r == NULL || g == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
            for (int k = 0; k < st->nruns; k++) {
                r[k] = st->runs[k];
                g[k] = st->run_grouped[k];
            }
            st->runs = r;
            st->run_grouped = g;
            *cap = more;
        }
        st->runs[st->nruns] = (StmtList){items + i, len, len};
        st->run_grouped[st->nruns] = grouped;
        st->nruns++;
        for (int k = 0; k < len; k++) items[i + k]->run = st->nruns; /* 1-based */
        i += len;
    }
    return true;
}

/* Register candidates: temporaries accessed only at the point itself (no offset, variable K
 * or data index). Whether one becomes a register depends on the runs (registers.c); the runs
 * count the others' writes as stores. */
static void rule_out(void *ctx, Expr *e) {
    bool *candidate = ctx;
    const Symbol *s = e->field.sym;
    if (s->kind == SYM_TEMP && (e->field.off[0] || e->field.off[1] || e->field.off[2] ||
                                e->field.kexpr || e->field.ndi))
        candidate[s->index] = false;
}

static void candidates_in(bool *candidate, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        expr_visit_fields(s->guard, rule_out, candidate);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, rule_out, candidate);
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, rule_out, candidate);
            const Symbol *t = s->assign.target;
            if (t->kind == SYM_TEMP && (s->assign.koff || s->assign.kexpr || s->assign.ndi))
                candidate[t->index] = false;
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, rule_out, candidate);
            candidates_in(candidate, &s->while_.body);
        }
    }
}

static bool *register_candidates(Stencil *st) {
    bool *candidate = arena_alloc(&st->arena, sizeof(bool) * ((size_t)st->ntemps + 1));
    if (candidate == NULL) return NULL;
    for (int t = 0; t < st->ntemps; t++) candidate[t] = st->temps[t]->ndata == 0;
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++)
            candidates_in(candidate, &st->comps[c].intervals[i].body);
    return candidate;
}

bool nests_assign(Stencil *st) {
    int cap = 0;
    st->runs = NULL;
    st->run_grouped = NULL;
    st->nruns = 0;
    bool *candidate = register_candidates(st);
    if (candidate == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    for (int c = 0; c < st->ncomps;) {
        Computation *comp = &st->comps[c];
        /* a column group's computations run level by level only in Fortran order, each on its
         * own (the sweeps of C order have their own schedule: columns.c) */
        int n = 1;
        while (!comp->columnwise && c + n < st->ncomps && !st->comps[c + n].columnwise &&
               comps_continue(&st->comps[c + n - 1], &st->comps[c + n]))
            n++;
        if (n == 1) {
            for (int i = 0; i < comp->nintervals; i++) {
                StmtList *b = &comp->intervals[i].body;
                if (b->n > 0 && !assign_runs(st, b->items, b->n, comp->columnwise, candidate, &cap))
                    return false;
            }
        } else { /* one list: the chain's statements in order */
            int total = 0;
            for (int k = 0; k < n; k++) total += st->comps[c + k].intervals[0].body.n;
            Stmt **items = arena_alloc(&st->arena, sizeof *items * ((size_t)total + 1));
            if (items == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
            int at = 0;
            for (int k = 0; k < n; k++) {
                const StmtList *b = &st->comps[c + k].intervals[0].body;
                for (int i = 0; i < b->n; i++) items[at++] = b->items[i];
            }
            if (total > 0 && !assign_runs(st, items, total, false, candidate, &cap)) return false;
        }
        c += n;
    }
    return true;
}
