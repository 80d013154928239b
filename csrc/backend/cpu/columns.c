/*
 * Column groups: computations the analysis lets run column by column (schedule.c).
 *
 * A column's K sweep is a chain of dependent operations (a tridiagonal solver divides by a
 * value computed from the previous level), so one column at a time leaves the core waiting
 * on latencies. The kernel therefore sweeps a bundle of `lanes` J columns together:
 * at each level, every statement on each lane in turn. Columns of a group never exchange
 * values, so this is the column order interleaved, with independent chains the core
 * overlaps. Values a statement reads at the previous level of the sweep (`c[0, 0, -1]` in
 * FORWARD) are carried from one level to the next in registers instead of being stored and
 * loaded again; they are still stored, for readers after the sweep.
 */
#include <string.h>

#include "backend/cpu/cg.h"

/* ---- which values a sweep carries ---------------------------------------------------- */

typedef struct CarryScan {
    const StmtList *body;
    int kprev;
    Carry *carry;
    int n, cap;
} CarryScan;

static bool is_prev_level_read(const Expr *e, int kprev) {
    return e->field.off[0] == 0 && e->field.off[1] == 0 && e->field.off[2] == kprev &&
           e->field.kexpr == NULL && e->field.ndi == 0 && e->field.sym->ndata == 0;
}

/* Every write of `sym` in the list (while bodies included) is an unguarded top-level
 * assignment at its own level, and there is one: then each lane's value at each level is
 * known in a register when the level ends. */
static bool writes_every_level(const StmtList *l, const Symbol *sym, bool top, int *count) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        if (s->kind == S_WHILE) {
            if (!writes_every_level(&s->while_.body, sym, false, count)) return false;
        } else if (s->kind == S_ASSIGN && s->assign.target == sym) {
            if (!top || s->guard || s->assign.koff != 0 || s->assign.kexpr || s->assign.ndi != 0)
                return false;
            (*count)++;
        }
    }
    return true;
}

static void scan_read(void *ctx, Expr *e) {
    CarryScan *C = ctx;
    if (!is_prev_level_read(e, C->kprev)) return;
    for (int i = 0; i < C->n; i++)
        if (C->carry[i].sym == e->field.sym) return;
    int writes = 0;
    if (C->n == C->cap || !writes_every_level(C->body, e->field.sym, true, &writes) || writes == 0)
        return;
    C->carry[C->n++] = (Carry){.sym = e->field.sym, .read = e};
}

static void scan_list(CarryScan *C, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        expr_visit_fields(s->guard, scan_read, C);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, scan_read, C);
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, scan_read, C);
            scan_list(C, &s->while_.body);
        }
    }
}

/* Reading a field the call cannot change behind the kernel's back is safe to carry: a written
 * argument may share memory only with arguments read at the same points (call.c), so nothing
 * else writes what a carried value mirrors. */
LLVMValueRef cg_carried_read(CG *g, const Expr *e) {
    if (!is_prev_level_read(e, g->kprev)) return NULL;
    for (int i = 0; i < g->ncarry; i++)
        if (g->carry[i].sym == e->field.sym) return g->carry[i].prev[g->lane];
    return NULL;
}

void cg_carry_write(CG *g, const Symbol *target, LLVMValueRef v) {
    for (int i = 0; i < g->ncarry; i++)
        if (g->carry[i].sym == target) g->carry[i].last[g->lane] = v;
}

/* ---- sweeps -------------------------------------------------------------------------- */

enum { MAX_CARRIED = 32 };

/* The current point moves to lane w of the bundle at row i starting at column jb. */
static void at_lane(CG *g, LLVMValueRef i, LLVMValueRef jb, int w) {
    g->i = i;
    g->j = LLVMBuildNSWAdd(g->b, jb, LLVMBuildNSWMul(g->b, g->jstep, cg_c64(g, w), ""), "");
    g->lane = w;
}

/* The K sweep of one interval over the bundle of `lanes` columns starting at g->jb (one
 * column: lanes == 1). */
static void emit_sweep(CG *g, const Computation *c, const Interval *in, int lanes) {
    LLVMBuilderRef b = g->b;
    bool backward = c->policy == POLICY_BACKWARD;
    Carry carry[MAX_CARRIED];
    CarryScan scan = {
        .body = &in->body, .kprev = backward ? 1 : -1, .carry = carry, .cap = MAX_CARRIED};
    scan_list(&scan, &in->body);

    LLVMValueRef ks = cg_bound_value(g, in->start, g->nk), ke = cg_bound_value(g, in->end, g->nk);
    LLVMValueRef jb = g->jb, i = g->i;
    Loop lk;
    cg_loop_guard(g, &lk, ks, ke, "ksweep");
    /* preheader: each carried value at the level before the first, loaded as the first
     * iteration would have loaded it */
    LLVMValueRef kfirst = cg_sweep_level(g, c, ks, ks, ke);
    for (int w = 0; w < lanes; w++) {
        at_lane(g, i, jb, w);
        g->k = kfirst;
        for (int v = 0; v < scan.n; v++)
            carry[v].last[w] = cg_emit_expr(g, carry[v].read);
    }
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMValueRef iv = cg_loop_enter(g, &lk);
    for (int v = 0; v < scan.n; v++)
        for (int w = 0; w < lanes; w++) {
            carry[v].prev[w] = LLVMBuildPhi(b, cg_type(g, carry[v].sym->dtype), carry[v].sym->name);
            LLVMAddIncoming(carry[v].prev[w], &carry[v].last[w], &pre, 1);
        }
    LLVMValueRef k = cg_sweep_level(g, c, iv, ks, ke);
    g->carry = carry;
    g->ncarry = scan.n;
    g->kprev = scan.kprev;
    for (int w = 0; w < lanes; w++) {
        at_lane(g, i, jb, w);
        g->k = k;
        cg_emit_point_list(g, &in->body);
    }
    g->ncarry = 0;
    g->carry = NULL;
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    for (int v = 0; v < scan.n; v++)
        for (int w = 0; w < lanes; w++)
            LLVMAddIncoming(carry[v].prev[w], &carry[v].last[w], &latch, 1);
    cg_loop_end(g, &lk);
    g->i = i;
}

/* A PARALLEL computation of a group on each column of the bundle: statement by statement,
 * each over its interval's K range (contiguous, so the K loop vectorises). */
static void emit_parallel_columns(CG *g, const Computation *c, int lanes) {
    LLVMValueRef jb = g->jb, i = g->i;
    for (int w = 0; w < lanes; w++)
        for (int iv = 0; iv < c->nintervals; iv++) {
            const Interval *in = &c->intervals[iv];
            for (int s = 0; s < in->body.n; s++) {
                Loop lk;
                LLVMValueRef ks = cg_bound_value(g, in->start, g->nk);
                LLVMValueRef ke = cg_bound_value(g, in->end, g->nk);
                at_lane(g, i, jb, w);
                g->k = cg_loop_begin(g, &lk, ks, ke, "kcol");
                cg_emit_point(g, in->body.items[s]);
                cg_loop_end(g, &lk);
            }
        }
    g->i = i;
}

/* Every computation of the group, interval by interval, on the columns of g->jb. */
static void emit_group_sweeps(CG *g, const Computation *first, int n, int lanes) {
    for (int c = 0; c < n; c++) {
        if (first[c].policy == POLICY_PARALLEL) {
            emit_parallel_columns(g, &first[c], lanes);
            continue;
        }
        for (int iv = 0; iv < first[c].nintervals; iv++)
            emit_sweep(g, &first[c], &first[c].intervals[iv], lanes);
    }
}

/* Computations [first, first + n) column by column: one loop over the tile's columns, each
 * column sweeping every computation of the group in turn. Along J the columns go in bundles
 * of st->column_lanes: adjacent ones, or (st->column_spread) one from each of as many equal
 * runs of the row, each lane walking its run; the rest of the row one at a time. */
void cg_emit_column_group(CG *g, const Computation *first, int n) {
    LLVMBuilderRef b = g->b;
    int lanes = g->st->column_lanes;
    lanes = lanes < 1 ? 1 : lanes > GT_MAX_LANES ? GT_MAX_LANES : lanes;
    Loop li, lj, lb;
    LLVMValueRef i = cg_loop_begin(g, &li, g->ti0, g->ti1, "ci");
    LLVMValueRef span = LLVMBuildNSWSub(b, g->tj1, g->tj0, "");
    LLVMValueRef per_lane = LLVMBuildSDiv(b, span, cg_c64(g, lanes), "");
    LLVMValueRef whole = LLVMBuildNSWMul(b, per_lane, cg_c64(g, lanes), "");
    LLVMValueRef bend = lanes > 1 ? LLVMBuildNSWAdd(b, g->tj0, whole, "bend") : g->tj0;
    bool spread = g->st->column_spread;
    if (lanes > 1) {
        g->i = i;
        if (spread) {
            g->jstep = per_lane;
            g->jb = cg_loop_begin(g, &lb, g->tj0, LLVMBuildNSWAdd(b, g->tj0, per_lane, ""), "cb");
        } else {
            g->jstep = cg_c64(g, 1);
            g->jb = cg_loop_begin(g, &lb, g->tj0, bend, "cb");
        }
        emit_group_sweeps(g, first, n, lanes);
        cg_loop_end_step(g, &lb, spread ? 1 : lanes);
    }
    g->jstep = cg_c64(g, 1);
    g->i = i;
    g->jb = cg_loop_begin(g, &lj, bend, g->tj1, "cj"); /* one column: lane 0 of a bundle */
    emit_group_sweeps(g, first, n, 1);
    cg_loop_end(g, &lj);
    cg_loop_end(g, &li);
}
