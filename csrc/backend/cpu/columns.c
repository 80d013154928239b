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
#include <stdio.h>
#include <string.h>

#include "backend/cpu/blocks.h"
#include "backend/cpu/cg.h"
#include "backend/cpu/jit.h"

/* ---- which values a sweep carries ---------------------------------------------------- */

typedef struct CarryScan {
    const CG *g;
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
    if (!is_prev_level_read(e, C->kprev) || cg_in_register(C->g, e->field.sym)) return;
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
        .g = g,
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
        cg_registers_next_level(g, c);
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
static void emit_bundles(CG *g, const Computation *first, int n) {
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

/* ---- column blocks (C order; blocks.c) ------------------------------------------------ */

/* Transposes the w x w tile rows[0..w) in registers: log2(w) stages, each swapping the
 * off-diagonal blocks of size h of every 2h x 2h block (two-source shuffles). */
static void transpose(CG *g, LLVMValueRef *rows, int w) {
    LLVMValueRef mask[2][64];
    for (int h = w / 2; h >= 1; h /= 2) {
        for (int c = 0; c < w; c++) {
            mask[0][c] = LLVMConstInt(g->i32, (unsigned long long)((c & h) == 0 ? c : w + c - h), 0);
            mask[1][c] = LLVMConstInt(g->i32, (unsigned long long)((c & h) == 0 ? c + h : w + c), 0);
        }
        LLVMValueRef m0 = LLVMConstVector(mask[0], (unsigned)w), m1 = LLVMConstVector(mask[1], (unsigned)w);
        for (int a = 0; a < w; a++) {
            if (a & h) continue;
            LLVMValueRef x = rows[a], y = rows[a + h];
            rows[a] = LLVMBuildShuffleVector(g->b, x, y, m0, "");
            rows[a + h] = LLVMBuildShuffleVector(g->b, x, y, m1, "");
        }
    }
}

/* Element (c, k) in place: place + c * sj + k (K the unit stride); in the scratch: buf + c +
 * k * blk_cols. Copies columns [c0, c1), levels [k0, k1), element by element. */
static void copy_elements(CG *g, LLVMTypeRef t, LLVMValueRef place, LLVMValueRef sj, LLVMValueRef buf,
                          LLVMValueRef c0, LLVMValueRef c1, LLVMValueRef k0, LLVMValueRef k1, bool in) {
    LLVMBuilderRef b = g->b;
    Loop lc, lk;
    LLVMValueRef c = cg_loop_begin(g, &lc, c0, c1, "bcopy_c");
    LLVMValueRef k = cg_loop_begin(g, &lk, k0, k1, "bcopy_k");
    LLVMValueRef pi = LLVMBuildNSWAdd(b, LLVMBuildNSWMul(b, c, sj, ""), k, "");
    LLVMValueRef si = LLVMBuildNSWAdd(b, c, LLVMBuildNSWMul(b, k, g->blk_cols, ""), "");
    LLVMValueRef p = LLVMBuildInBoundsGEP2(b, t, place, &pi, 1, ""), q = LLVMBuildInBoundsGEP2(b, t, buf, &si, 1, "");
    LLVMBuildStore(b, LLVMBuildLoad2(b, t, in ? p : q, ""), in ? q : p);
    cg_loop_end(g, &lk);
    cg_loop_end(g, &lc);
}

/*
 * The copy of a block's view between its place and its scratch, one internal function per
 * element size and direction, shared by every view of the kernel (emitted once: the copies
 * of a group's views, each with w x w transposes, would otherwise multiply the code LLVM
 * optimises):
 *     gt_block_copy(ptr place, i64 sj, ptr buf, i64 ncol, i64 nk)
 * A column's levels are contiguous in place, a level's columns in the scratch: whole w x w
 * tiles (w elements to a vector) are loaded as vectors along one axis, transposed in
 * registers and stored along the other; the edges are copied element by element. The
 * elements are copied as integers of their size: bits, whatever the dtype.
 */
static LLVMValueRef copy_function(CG *g, int size, bool in) {
    char name[40];
    snprintf(name, sizeof name, "gt_block_%s%d", in ? "in" : "out", size);
    LLVMTypeRef params[5] = {g->ptr, g->i64, g->ptr, g->i64, g->i64};
    LLVMTypeRef ft = LLVMFunctionType(g->vd, params, 5, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
    if (fn) return fn;
    fn = LLVMAddFunction(g->mod, name, ft);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
    LLVMAddAttributeAtIndex(fn, 1, LLVMCreateEnumAttribute(g->ctx, noalias, 0));
    LLVMAddAttributeAtIndex(fn, 3, LLVMCreateEnumAttribute(g->ctx, noalias, 0));
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->ctx, nounwind, 0));
    LLVMValueRef saved_fn = g->fn;
    LLVMBuilderRef saved_b = g->b;
    g->fn = fn;
    g->b = LLVMCreateBuilderInContext(g->ctx);
    LLVMBuilderRef b = g->b;
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(g->ctx, fn, "entry"));
    LLVMValueRef place = LLVMGetParam(fn, 0), sj = LLVMGetParam(fn, 1), buf = LLVMGetParam(fn, 2);
    LLVMValueRef ncol = LLVMGetParam(fn, 3), nk = LLVMGetParam(fn, 4), zero = cg_c64(g, 0);
    LLVMTypeRef t = LLVMIntTypeInContext(g->ctx, (unsigned)(8 * size));
    int w = size < 4 ? 0 : (jit_has_wide_vectors() ? 64 : 32) / size;
    if (w == 0) {
        copy_elements(g, t, place, sj, buf, zero, ncol, zero, nk, in);
    } else {
        LLVMValueRef wv = cg_c64(g, w);
        LLVMValueRef cfull = LLVMBuildNSWMul(b, LLVMBuildSDiv(b, ncol, wv, ""), wv, "cfull");
        LLVMValueRef kfull = LLVMBuildNSWMul(b, LLVMBuildSDiv(b, nk, wv, ""), wv, "kfull");
        LLVMTypeRef vt = LLVMVectorType(t, (unsigned)w);
        Loop lc, lk;
        LLVMValueRef c0 = cg_loop_begin(g, &lc, zero, cfull, "btile_c");
        LLVMValueRef k0 = cg_loop_begin(g, &lk, zero, kfull, "btile_k");
        LLVMValueRef at[2][64], v[64];
        for (int r = 0; r < w; r++) { /* r: column c0 + r in place, level k0 + r in the scratch */
            LLVMValueRef pi = LLVMBuildNSWAdd(b, LLVMBuildNSWMul(b, LLVMBuildNSWAdd(b, c0, cg_c64(g, r), ""), sj, ""), k0, "");
            LLVMValueRef si = LLVMBuildNSWAdd(b, c0, LLVMBuildNSWMul(b, LLVMBuildNSWAdd(b, k0, cg_c64(g, r), ""), g->blk_cols, ""), "");
            at[0][r] = LLVMBuildInBoundsGEP2(b, t, place, &pi, 1, "");
            at[1][r] = LLVMBuildInBoundsGEP2(b, t, buf, &si, 1, "");
        }
        for (int r = 0; r < w; r++) {
            v[r] = LLVMBuildLoad2(b, vt, at[in ? 0 : 1][r], "");
            LLVMSetAlignment(v[r], (unsigned)size); /* arrays' columns need not be aligned */
        }
        transpose(g, v, w);
        for (int r = 0; r < w; r++) LLVMSetAlignment(LLVMBuildStore(b, v[r], at[in ? 1 : 0][r]), (unsigned)size);
        cg_loop_end_step(g, &lk, w);
        cg_loop_end_step(g, &lc, w);
        copy_elements(g, t, place, sj, buf, zero, cfull, kfull, nk, in); /* the last levels */
        copy_elements(g, t, place, sj, buf, cfull, ncol, zero, nk, in);  /* the last columns */
    }
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    g->b = saved_b;
    g->fn = saved_fn;
    return fn;
}

/* Copies a view of the block's ncol columns from (i0, j0) on (shifted by the view's offset),
 * levels [0, nk), into its scratch `buf` (column fastest) or back. */
static void block_copy(CG *g, const BlockSym *view, LLVMValueRef buf, LLVMValueRef i0, LLVMValueRef j0,
                       LLVMValueRef ncol, bool in) {
    LLVMBuilderRef b = g->b;
    const Symbol *s = view->sym;
    g->i = LLVMBuildNSWAdd(b, i0, cg_c64(g, view->di), "");
    g->j = LLVMBuildNSWAdd(b, j0, cg_c64(g, view->dj), "");
    g->k = cg_c64(g, 0);
    LLVMValueRef step = LLVMBuildSelect(b, g->blk_along_i, cg_slot_stride(g, s, 0), cg_slot_stride(g, s, 1), "");
    LLVMValueRef args[5] = {cg_point_address(g, s), step, buf, ncol, g->nk};
    LLVMValueRef fn = copy_function(g, dtype_size(s->dtype), in);
    LLVMBuildCall2(b, LLVMGlobalGetValueType(fn), fn, args, 5, "");
}

/* for each column c of the block: the point (i0 + c, j0, k) along I, (i0, j0 + c, k) along J */
static LLVMValueRef block_cols_begin(CG *g, Loop *lc, LLVMValueRef i0, LLVMValueRef j0, LLVMValueRef ncol) {
    LLVMBuilderRef b = g->b;
    g->col = cg_loop_begin(g, lc, cg_c64(g, 0), ncol, "bcol");
    g->i = LLVMBuildNSWAdd(b, i0, LLVMBuildNSWMul(b, g->col, g->blk_di, ""), "");
    g->j = LLVMBuildNSWAdd(b, j0, LLVMBuildNSWMul(b, g->col, g->blk_dj, ""), "");
    return g->col;
}

/* The next block's fields (from its first column at (ni, nj)), prefetched into L2 while this
 * block sweeps: the copies in are memory-bound and the sweeps compute-bound, and without
 * this they take turns. At level k, the bytes [k, k + 1) * cols * size of each field's run
 * of cols consecutive columns (contiguous in C order), so the first sweep covers the run. */
typedef struct Prefetch {
    const BlockSym *syms;
    int nsyms;
    LLVMValueRef ni, nj;
    bool done; /* emitted in the first sweep */
} Prefetch;

static void prefetch_level(CG *g, const Prefetch *P, LLVMValueRef k) {
    LLVMBuilderRef b = g->b;
    unsigned id = LLVMLookupIntrinsicID("llvm.prefetch", 13);
    LLVMTypeRef types[1] = {g->ptr};
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, types, 1);
    LLVMTypeRef ft = LLVMIntrinsicGetType(g->ctx, id, types, 1);
    LLVMValueRef i = g->i, j = g->j, kk = g->k;
    int nviews = g->nviews;
    g->nviews = 0; /* addresses in place */
    for (int x = 0; x < P->nsyms; x++) {
        const BlockSym *v = &P->syms[x];
        if (!v->copy_in && !v->copy_out) continue;
        int size = dtype_size(v->sym->dtype), bytes = cpu_block_cols(g->nblk) * size;
        g->i = LLVMBuildNSWAdd(b, P->ni, cg_c64(g, v->di), "");
        g->j = LLVMBuildNSWAdd(b, P->nj, cg_c64(g, v->dj), "");
        g->k = cg_c64(g, 0);
        LLVMValueRef base = cg_point_address(g, v->sym);
        LLVMValueRef at = LLVMBuildNSWMul(b, k, cg_c64(g, bytes), "");
        for (int line = 0; line < bytes; line += 64) {
            LLVMValueRef off = LLVMBuildNSWAdd(b, at, cg_c64(g, line), "");
            /* a GEP without inbounds: the next block may lie outside the array (no fault) */
            LLVMValueRef args[4] = {LLVMBuildGEP2(b, g->i8, base, &off, 1, ""),
                                    LLVMConstInt(g->i32, v->copy_out ? 1 : 0, 0),
                                    LLVMConstInt(g->i32, 2, 0), LLVMConstInt(g->i32, 1, 0)};
            LLVMBuildCall2(b, ft, fn, args, 4, "");
        }
    }
    g->nviews = nviews;
    g->i = i;
    g->j = j;
    g->k = kk;
}

static void emit_block_computations(CG *g, const Computation *first, int n, LLVMValueRef i0,
                                    LLVMValueRef j0, LLVMValueRef ncol, Prefetch *P) {
    for (int ci = 0; ci < n; ci++) {
        const Computation *c = &first[ci];
        for (int iv = 0; iv < c->nintervals; iv++) {
            const Interval *in = &c->intervals[iv];
            LLVMValueRef ks = cg_bound_value(g, in->start, g->nk), ke = cg_bound_value(g, in->end, g->nk);
            Loop lk, lc;
            if (c->policy == POLICY_PARALLEL) { /* statement by statement, each over its levels */
                for (int s = 0; s < in->body.n; s++) {
                    LLVMValueRef k = cg_loop_begin(g, &lk, ks, ke, "bpar");
                    block_cols_begin(g, &lc, i0, j0, ncol);
                    g->k = k;
                    cg_emit_point(g, in->body.items[s]);
                    cg_loop_end(g, &lc);
                    cg_loop_end(g, &lk);
                }
                continue;
            }
            /* a sweep: level by level, at each level the interval's statements on every
             * column (the columns innermost: one vector loop) */
            LLVMValueRef k = cg_sweep_level(g, c, cg_loop_begin(g, &lk, ks, ke, "bsweep"), ks, ke);
            if (!P->done) prefetch_level(g, P, k);
            block_cols_begin(g, &lc, i0, j0, ncol);
            g->k = k;
            cg_registers_start_column(g, c);
            cg_emit_point_list(g, &in->body);
            cg_loop_end(g, &lc);
            cg_loop_end(g, &lk);
        }
        if (c->policy != POLICY_PARALLEL) P->done = true;
    }
}

/* The group over the tile in blocks of g->blk_cols columns (the last one of a row narrower):
 * per block, the fields it reads copied into their scratch, the computations level by
 * level, the fields it wrote copied back. The blocks run along J or along I
 * (cpu_blocks_along_i, decided here for each tile), a row of the other axis at a time. */
static void emit_blocks(CG *g, const Computation *first, int n, const BlockSym *syms, int nsyms) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef cols = g->blk_cols;
    LLVMValueRef wi = LLVMBuildNSWSub(b, g->ti1, g->ti0, ""), wj = LLVMBuildNSWSub(b, g->tj1, g->tj0, "");
    LLVMValueRef along_i = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, wj, cg_c64(g, GT_BLOCK_COLS_MIN), ""),
                                        LLVMBuildICmp(b, LLVMIntSGT, wi, wj, ""), "along_i");
    g->blk_along_i = along_i;
    g->blk_di = LLVMBuildZExt(b, along_i, g->i64, "bdi");
    g->blk_dj = LLVMBuildSub(b, cg_c64(g, 1), g->blk_di, "bdj");
    LLVMValueRef r0 = LLVMBuildSelect(b, along_i, g->tj0, g->ti0, ""), r1 = LLVMBuildSelect(b, along_i, g->tj1, g->ti1, "");
    LLVMValueRef c0 = LLVMBuildSelect(b, along_i, g->ti0, g->tj0, ""), c1 = LLVMBuildSelect(b, along_i, g->ti1, g->tj1, "");
    Loop lr, lb;
    LLVMValueRef r = cg_loop_begin(g, &lr, r0, r1, "brow");
    LLVMValueRef span = LLVMBuildNSWSub(b, c1, c0, "");
    LLVMValueRef nblocks =
        LLVMBuildSDiv(b, LLVMBuildNSWAdd(b, span, LLVMBuildNSWSub(b, cols, cg_c64(g, 1), ""), ""), cols, "");
    LLVMValueRef bi = cg_loop_begin(g, &lb, cg_c64(g, 0), nblocks, "bb");
    LLVMValueRef cb = LLVMBuildNSWAdd(b, c0, LLVMBuildNSWMul(b, bi, cols, ""), "");
    LLVMValueRef left = LLVMBuildNSWSub(b, c1, cb, "");
    LLVMValueRef ncol = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, cols, ""), left, cols, "ncol");
    LLVMValueRef i0 = LLVMBuildSelect(b, along_i, cb, r, "bi0"), j0 = LLVMBuildSelect(b, along_i, r, cb, "bj0");
    for (int x = 0; x < nsyms; x++)
        if (syms[x].copy_in) block_copy(g, &syms[x], g->blkbuf[x], i0, j0, ncol, true);
    /* the next block: further along the row, or the next row's first (the tile's last row:
     * its own first block again, in bounds and harmless) */
    LLVMValueRef cn = LLVMBuildNSWAdd(b, cb, cols, "");
    LLVMValueRef same = LLVMBuildICmp(b, LLVMIntSLT, cn, c1, "");
    LLVMValueRef rn = LLVMBuildNSWAdd(b, r, cg_c64(g, 1), "");
    rn = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, rn, r1, ""), rn, r, "");
    LLVMValueRef nr = LLVMBuildSelect(b, same, r, rn, ""), nc = LLVMBuildSelect(b, same, cn, c0, "");
    Prefetch P = {.syms = syms, .nsyms = nsyms,
                  .ni = LLVMBuildSelect(b, along_i, nc, nr, ""), .nj = LLVMBuildSelect(b, along_i, nr, nc, "")};
    g->views = syms;
    g->nviews = nsyms;
    g->lane = 0; /* one column at a time: the registers of lane 0 */
    emit_block_computations(g, first, n, i0, j0, ncol, &P);
    g->nviews = 0;
    for (int x = 0; x < nsyms; x++)
        if (syms[x].copy_out) block_copy(g, &syms[x], g->blkbuf[x], i0, j0, ncol, false);
    cg_loop_end(g, &lb);
    cg_loop_end(g, &lr);
}

/* A column group: in blocks where the group can run so and the plan chose blocks
 * (g->blk_on > 0, decided per call), else in bundles. Both give the same bits. */
void cg_emit_column_group(CG *g, const Computation *first, int n) {
    BlockSym syms[GT_MAX_BLOCK_SYMS];
    int nsyms = g->nblk ? cpu_block_group(g->st, first, n, syms) : 0;
    if (nsyms <= 0) {
        emit_bundles(g, first, n);
        return;
    }
    LLVMBuilderRef b = g->b;
    LLVMBasicBlockRef blocks = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "blocks");
    LLVMBasicBlockRef bundles = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "bundles");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "group_done");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, g->blk_on, cg_c64(g, 0), ""), blocks, bundles);
    LLVMPositionBuilderAtEnd(b, blocks);
    emit_blocks(g, first, n, syms, nsyms);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, bundles);
    emit_bundles(g, first, n);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
}
