/*
 * Temporaries kept in registers: by a column sweep, or by one loop nest.
 *
 * A column group's sweep (schedule.c) runs one column at a time through its levels. A
 * column-local temporary that the sweep reads only at the point itself, and whose value at
 * each level is written before anything reads it there, never needs a value of another
 * level or of another column: at each level it is what the statements just wrote. Such a
 * temporary needs no memory at all; the cpu backend keeps it in a register of the sweep
 * (one per lane of a bundle), so a column-physics scheme's hundreds of short-lived
 * temporaries cost no stores and no loads, and their buffers do not push the fields out of
 * the L1 cache. Everything else keeps its buffer, with the same bits either way: a read
 * always sees the value the buffer would have held.
 *
 * The rule, per temporary t:
 *   - t is column-local and every access lies in one FORWARD or BACKWARD computation of a
 *     column group (a PARALLEL one runs statement by statement, each over all its levels);
 *   - every read is at offset (0, 0, 0), with no variable K offset or data index, or at the
 *     sweep's previous level (0, 0, -1) in FORWARD, (0, 0, 1) in BACKWARD; every write at
 *     the point itself;
 *   - in each interval of that computation, in program order, every read at the point itself
 *     comes after an assignment of t outside any while loop (a while loop's condition or body
 *     may run or not: their writes define nothing) that is unguarded, or whose guard G the
 *     read's guard implies: the read's guard is G or a conjunction with G in it (a statement
 *     of the same `if` branch, or of an `if` nested in it), compared as expressions (the
 *     inlining pass gives each statement its own copy of a condition), and nothing G reads is
 *     written from the assignment up to the read, so G has the same value at both: where the
 *     read's guard holds, t was just written at that point and level;
 *   - where t is read at the previous level, the interval writes it so at every level, and so
 *     does the interval run just before it, which ends where it starts: the previous level's
 *     value is then always the last one the sweep wrote, which the backend keeps in a second
 *     register from one level to the next (reg_carried).
 * A field condition's mask (lower.c) is the exception the rule is built for: lower_control
 * writes it once, under the guard G of its `if`, and reads it only in the guards of that
 * if's statements, `G and m` / `G and not m`, which hold only where G held when it was
 * written. So a mask written outside a while loop may be read after its write whatever G
 * is. (Where G does not hold, the register's value is never what decides: `G and ...` is
 * false. The backend starts every register at zero, so no read is ever of an undefined
 * value.)
 *
 * Where statements run level by level (outside column groups; a group's too in Fortran
 * order), they run in the loop-nest runs of nests.c: each run's statements one after the
 * other at each point of one nest. A temporary whose every access
 * lies in one run, read only at the point itself after a write there by the same rule as
 * above (unguarded, or under a guard the read's implies; no previous level: a nest reads no
 * other point), never needs another point's value: the nest keeps it in a register
 * (reg_run), set to zero at the start of each point. A physics scheme's point-wise PARALLEL
 * computation (saturation adjustment: hundreds of short-lived temporaries under nested field
 * conditionals) then stores only the fields it writes, and its guarded writes become selects
 * that LLVM vectorises along the unit-stride axis. A column group's temporary qualifies only
 * if column-local (the sweeps of the other layouts keep it by the first rule, or in a
 * bundle).
 */
#include <stdlib.h>

#include "analysis/analysis.h"

enum { COMP_NONE = -1, COMP_MANY = -2 };

typedef struct {
    Stencil *st;
    int *comp;     /* per temporary: the one computation accessing it, or COMP_* */
    bool *bad;     /* per temporary: some access rules it out */
    bool *set;     /* per temporary: written unconditionally so far in this interval */
    const Expr **under; /* per temporary: else the guard of its first write so far, or NULL */
    int *under_at;      /* ... and that write's statement (an index into list) */
    const StmtList *list; /* the interval's statements walked, */
    int at;               /* the one walked, */
    const Expr *guard;    /* and its guard, while its value is walked (NULL: none, or in a
                           * while loop) */
    bool *prev;    /* per temporary: read at the previous level in this interval */
    bool *carried; /* per temporary: read at the previous level somewhere */
    bool *before;  /* per temporary: written unconditionally in the interval run before */
    int here;      /* the computation walked */
    int kprev;     /* its previous level: -1 (FORWARD), 1 (BACKWARD), 0 (PARALLEL: none) */
} RegCtx;

/* 0: at the point itself; 1: at the sweep's previous level; -1: anywhere else */
static int where(const RegCtx *R, const Expr *e) {
    if (e->field.off[0] || e->field.off[1] || e->field.kexpr || e->field.kabs || e->field.ndi)
        return -1;
    if (e->field.off[2] == 0) return 0;
    return R->kprev != 0 && e->field.off[2] == R->kprev ? 1 : -1;
}

static void note_comp(RegCtx *R, const Symbol *s) {
    int *c = &R->comp[s->index];
    *c = *c == COMP_NONE || *c == R->here ? R->here : COMP_MANY;
}

/* Whether a and b are the same expression (false where unsure). */
static bool same_expr(const Expr *a, const Expr *b) {
    if (a == b) return true;
    if (a == NULL || b == NULL || a->kind != b->kind || a->type != b->type) return false;
    switch (a->kind) {
    case E_CONST: return a->cnst.i == b->cnst.i; /* the same bits (the union's widest) */
    case E_FIELD:
        return a->field.sym == b->field.sym && !a->field.kexpr && !b->field.kexpr &&
               !a->field.ndi && !b->field.ndi && a->field.off[0] == b->field.off[0] &&
               a->field.off[1] == b->field.off[1] && a->field.off[2] == b->field.off[2];
    case E_SCALAR: return a->scalar == b->scalar;
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        return a->op.op == b->op.op && same_expr(a->op.a, b->op.a) && same_expr(a->op.b, b->op.b);
    case E_TERNARY:
        return same_expr(a->ternary.cond, b->ternary.cond) &&
               same_expr(a->ternary.a, b->ternary.a) && same_expr(a->ternary.b, b->ternary.b);
    case E_CAST: return same_expr(a->cast, b->cast);
    case E_KINDEX: return true;
    default: return false; /* calls: not needed by guards */
    }
}

/* Whether guard h holds only where guard g does: h is g, or a conjunction with g in it. */
static bool implies(const Expr *h, const Expr *g) {
    while (h != NULL) {
        if (same_expr(h, g)) return true;
        if (h->kind != E_LOGIC || h->op.op != OP_AND) return false;
        if (implies(h->op.b, g)) return true;
        h = h->op.a;
    }
    return false;
}

static void visit_read(void *ctx, Expr *e) {
    RegCtx *R = ctx;
    const Symbol *s = e->field.sym;
    if (s->kind != SYM_TEMP) return;
    note_comp(R, s);
    int at = where(R, e);
    const Expr *g = R->under[s->index];
    bool defined = R->set[s->index] ||
                   (g != NULL && R->guard != NULL && implies(R->guard, g) &&
                    !value_clobbered(g, R->list, R->under_at[s->index], R->at - 1));
    if (at < 0 || (at == 0 && !defined)) R->bad[s->index] = true;
    if (at == 1) R->prev[s->index] = R->carried[s->index] = true;
}

static void visit_list(RegCtx *R, const StmtList *l, bool definite) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        R->guard = NULL;
        if (definite) {
            R->list = l;
            R->at = i;
        }
        expr_visit_fields(s->guard, visit_read, R);
        if (s->kind == S_ASSIGN) {
            /* the value is computed only where the statement's guard holds */
            R->guard = definite ? s->guard : NULL;
            expr_visit_fields(s->assign.value, visit_read, R);
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, visit_read, R);
            R->guard = NULL;
            const Symbol *t = s->assign.target;
            if (t->kind != SYM_TEMP) continue;
            note_comp(R, t);
            if (s->assign.koff != 0 || s->assign.kexpr || s->assign.ndi != 0)
                R->bad[t->index] = true;
            else if (definite && (s->guard == NULL || t->is_mask)) R->set[t->index] = true;
            else if (definite && R->under[t->index] == NULL) {
                R->under[t->index] = s->guard;
                R->under_at[t->index] = i;
            }
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, visit_read, R);
            visit_list(R, &s->while_.body, false);
        }
    }
}

/* Nest registers (the second rule above): a walk of every run (every top-level statement
 * lies in one, nests.c), each run a "computation" of the first rule's bookkeeping. */
static bool nest_registers(RegCtx *R) {
    Stencil *st = R->st;
    size_t n = (size_t)st->ntemps;
    for (size_t t = 0; t < n; t++) {
        R->comp[t] = COMP_NONE;
        R->bad[t] = false;
    }
    R->kprev = 0; /* a nest reads no other point */
    for (int r = 0; r < st->nruns; r++) {
        R->here = r;
        for (size_t t = 0; t < n; t++) {
            R->set[t] = false;
            R->under[t] = NULL;
        }
        visit_list(R, &st->runs[r], true);
    }
    for (int t = 0; t < st->ntemps; t++) {
        Symbol *s = st->temps[t];
        if (R->comp[t] < 0 || R->bad[t] || s->ndata != 0) continue;
        /* a column group's temporary: one of its own (column-local; the sweeps in C order
         * keep it by their own rule) */
        if (st->run_grouped[R->comp[t]] && !s->column_local) continue;
        s->reg_run = R->comp[t] + 1;
    }
    return true;
}

bool registers_assign(Stencil *st) {
    for (int t = 0; t < st->ntemps; t++) {
        st->temps[t]->in_register = st->temps[t]->reg_carried = false;
        st->temps[t]->reg_run = 0;
        st->temps[t]->reg_comp = -1;
    }
    if (st->ntemps == 0) return true;
    size_t n = (size_t)st->ntemps;
    RegCtx R = {.st = st,
                .comp = arena_alloc(&st->arena, sizeof(int) * n),
                .bad = arena_alloc(&st->arena, sizeof(bool) * n),
                .set = arena_alloc(&st->arena, sizeof(bool) * n),
                .under = arena_alloc(&st->arena, sizeof(Expr *) * n),
                .under_at = arena_alloc(&st->arena, sizeof(int) * n),
                .prev = arena_alloc(&st->arena, sizeof(bool) * n),
                .carried = arena_alloc(&st->arena, sizeof(bool) * n),
                .before = arena_alloc(&st->arena, sizeof(bool) * n)};
    if (!R.comp || !R.bad || !R.set || !R.under || !R.under_at || !R.prev || !R.carried ||
        !R.before)
        return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    for (size_t t = 0; t < n; t++) {
        R.comp[t] = COMP_NONE;
        R.bad[t] = R.carried[t] = false;
    }
    for (int c = 0; c < st->ncomps; c++) {
        const Computation *comp = &st->comps[c];
        R.here = c;
        R.kprev = comp->policy == POLICY_FORWARD ? -1 : comp->policy == POLICY_BACKWARD ? 1 : 0;
        for (size_t t = 0; t < n; t++) R.before[t] = false;
        for (int i = 0; i < comp->nintervals; i++) {
            const Interval *in = &comp->intervals[i];
            for (size_t t = 0; t < n; t++) {
                R.set[t] = R.prev[t] = false;
                R.under[t] = NULL;
            }
            visit_list(&R, &in->body, true);
            /* the interval run before ends where this one starts (intervals are in execution
             * order: a BACKWARD sweep's come from the top) */
            bool adjacent = false;
            if (i > 0) {
                const Interval *last = &comp->intervals[i - 1];
                AxisBound a = R.kprev < 0 ? last->end : last->start;
                AxisBound b = R.kprev < 0 ? in->start : in->end;
                adjacent = bound_cmp(a, b) == 0 && a.sym == b.sym;
            }
            for (size_t t = 0; t < n; t++) {
                if (R.prev[t] && !(R.set[t] && adjacent && R.before[t])) R.bad[t] = true;
                R.before[t] = R.set[t];
            }
        }
    }
    for (int t = 0; t < st->ntemps; t++) {
        Symbol *s = st->temps[t];
        const Computation *c = R.comp[t] >= 0 ? &st->comps[R.comp[t]] : NULL;
        s->in_register = c && c->columnwise && c->policy != POLICY_PARALLEL && !R.bad[t] &&
                         s->column_local && s->ndata == 0 && st->column_lanes > 0;
        s->reg_carried = s->in_register && R.carried[t];
        s->reg_comp = s->in_register ? R.comp[t] : -1;
        s->reg_run = 0;
    }
    return nest_registers(&R);
}
