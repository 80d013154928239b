/*
 * Planning the CUDA kernels from the analysed IR (no re-analysis: statement extents,
 * guards, boxes and intervals in execution order are taken as they are).
 *
 * Execution model. A thread block owns a bi x bj tile of the compute domain; each thread
 * owns the points whose tile-relative (ii, jj) are congruent to its (ti, tj) modulo the
 * tile size, for every statement, so a value written and read at the same point stays in
 * one thread. Statements are computed on their extended domain: temporaries redundantly
 * (each block computes the halo it needs itself, block-private), argument fields only at
 * the points the block owns (tile points, plus the extension beyond the domain edge for
 * edge blocks), so a field point is written exactly once, as on the cpu.
 *
 * Kernels: one per computation, split where a statement would need another block's write
 * of an argument field (a field written earlier in the kernel read with a horizontal
 * offset or from the extended domain), and, for PARALLEL, where a statement reads with a
 * K offset something written earlier in the kernel. A split FORWARD/BACKWARD computation
 * is launched level by level. Inside a kernel the K loop is outermost (levels in policy
 * order) and statements are grouped into stages separated by __syncthreads() wherever a
 * statement reads a temporary with a horizontal offset that the current stage writes (or
 * writes one the stage read with an offset).
 */
#include "backend/cuda/cudagen_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

/* ---- accesses of a statement ------------------------------------------------------- */

typedef struct {
    Access *items;
    int n, cap;
    bool oom;
} AccList;

static void acc_push(AccList *l, Access a) {
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        Access *p = realloc(l->items, sizeof *p * (size_t)cap);
        if (p == NULL) {
            l->oom = true;
            return;
        }
        l->items = p;
        l->cap = cap;
    }
    l->items[l->n++] = a;
}

static void visit_read(void *ctx, Expr *e) {
    Access a = {.slot = e->field.sym->slot, .write = false, .kexpr = e->field.kexpr != NULL};
    memcpy(a.off, e->field.off, sizeof a.off);
    acc_push(ctx, a);
}

static void stmt_accesses(const Stmt *s, AccList *l) {
    expr_visit_fields(s->guard, visit_read, l);
    if (s->kind == S_ASSIGN) {
        expr_visit_fields(s->assign.value, visit_read, l);
        acc_push(l, (Access){.slot = s->assign.target->slot, .write = true, .off = {0, 0, s->assign.koff}});
    } else if (s->kind == S_WHILE) {
        expr_visit_fields(s->while_.cond, visit_read, l);
        for (int i = 0; i < s->while_.body.n; i++) stmt_accesses(s->while_.body.items[i], l);
    }
}

static bool extent_nonzero(const Stmt *s) {
    const int *h = s->horizontal_extent;
    return h[0] || h[1] || h[2] || h[3];
}

/* ---- kernels and stages --------------------------------------------------------------- */

/* `written`: slots written earlier in the kernel; `kread`: slots read at another K level
 * earlier in the kernel (PARALLEL: that read wants the value from before this write). */
static bool split_before(const Stencil *st, Policy pol, const PStmt *p, const bool *written, const bool *kread) {
    bool ext = extent_nonzero(p->s);
    for (int a = 0; a < p->nacc; a++) {
        const Access *x = &p->acc[a];
        if (x->write && pol == POLICY_PARALLEL && kread[x->slot]) return true;
        if (x->write || !written[x->slot]) continue;
        bool hoff = x->off[0] || x->off[1];
        if (x->slot < st->nfields && (hoff || ext)) return true;
        if (pol == POLICY_PARALLEL && (x->off[2] || x->kexpr)) return true;
    }
    return false;
}

static bool stage_break(const PStmt *p, const bool *swritten, const bool *soffread) {
    for (int a = 0; a < p->nacc; a++) {
        const Access *x = &p->acc[a];
        if (!x->write && (x->off[0] || x->off[1]) && swritten[x->slot]) return true;
        if (x->write && soffread[x->slot]) return true;
    }
    return false;
}

static void mark_stage(const PStmt *p, bool *swritten, bool *soffread) {
    for (int a = 0; a < p->nacc; a++) {
        const Access *x = &p->acc[a];
        if (x->write) swritten[x->slot] = true;
        else if (x->off[0] || x->off[1]) soffread[x->slot] = true;
    }
}

static bool collect(const Stencil *st, KPlan *P) {
    int n = 0;
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++) n += st->comps[c].intervals[i].body.n;
    P->stmts = calloc((size_t)n + 1, sizeof *P->stmts);
    if (P->stmts == NULL) return false;
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++) {
            const StmtList *b = &st->comps[c].intervals[i].body;
            for (int k = 0; k < b->n; k++) {
                AccList l = {0};
                stmt_accesses(b->items[k], &l);
                if (l.oom) {
                    free(l.items);
                    return false;
                }
                P->stmts[P->nstmts++] = (PStmt){.s = b->items[k], .comp = c, .interval = i,
                                                .acc = l.items, .nacc = l.n};
            }
        }
    return true;
}

static void assign_kernels(const Stencil *st, KPlan *P, bool *written, bool *kread) {
    int nslots = stencil_nslots(st);
    int kernel = -1, comp = -1;
    for (int i = 0; i < P->nstmts; i++) {
        PStmt *p = &P->stmts[i];
        Policy pol = st->comps[p->comp].policy;
        if (p->comp != comp || split_before(st, pol, p, written, kread)) {
            kernel++;
            comp = p->comp;
            memset(written, 0, sizeof(bool) * (size_t)nslots);
            memset(kread, 0, sizeof(bool) * (size_t)nslots);
        }
        for (int a = 0; a < p->nacc; a++) {
            const Access *x = &p->acc[a];
            if (x->write) written[x->slot] = true;
            else if (x->off[2] || x->kexpr) kread[x->slot] = true;
        }
        p->kernel = kernel;
    }
    P->nkernels = kernel + 1;
}

static void assign_stages(const Stencil *st, KPlan *P, bool *swritten, bool *soffread) {
    int nslots = stencil_nslots(st);
    int stage = -1;
    for (int i = 0; i < P->nstmts; i++) {
        PStmt *p = &P->stmts[i];
        bool fresh = i == 0 || p->kernel != P->stmts[i - 1].kernel || p->interval != P->stmts[i - 1].interval;
        if (fresh || stage_break(p, swritten, soffread)) {
            stage++;
            memset(swritten, 0, sizeof(bool) * (size_t)nslots);
            memset(soffread, 0, sizeof(bool) * (size_t)nslots);
        }
        mark_stage(p, swritten, soffread);
        p->stage = stage;
        for (int a = 0; a < p->nacc; a++) {
            const Access *x = &p->acc[a];
            if (!x->write && x->slot >= st->nfields && (x->off[0] || x->off[1]))
                P->needs_sync[p->kernel] = true;
        }
    }
}

/* ---- temporaries -------------------------------------------------------------------- */

static void classify_temps(const Stencil *st, KPlan *P, CudaProgram *out, int block_x, int block_y) {
    for (int t = 0; t < st->ntemps; t++) {
        int slot = st->nfields + t, kernel = -1, stage = -1;
        bool used = false, one_kernel = true, one_stage = true, zero = true, k0 = true;
        for (int i = 0; i < P->nstmts; i++) {
            const PStmt *p = &P->stmts[i];
            for (int a = 0; a < p->nacc; a++) {
                const Access *x = &p->acc[a];
                if (x->slot != slot) continue;
                if (!used) kernel = p->kernel, stage = p->stage;
                used = true;
                if (p->kernel != kernel) one_kernel = false;
                if (p->stage != stage) one_stage = false;
                if (x->off[2] || x->kexpr) k0 = zero = false;
                if (!x->write && (x->off[0] || x->off[1])) zero = false;
            }
        }
        /* an IJ temporary keeps its value from level to level at each point: a register
         * would be shared by the points a thread owns, a shared-memory plane is not */
        bool ij = !(st->temps[t]->axes & AX_K);
        /* a temporary with data dimensions lives in a slab, with the element strides */
        bool vec = st->temps[t]->ndata > 0;
        TempStorage ts = !used ? TS_UNUSED
                         : (one_kernel && one_stage && zero && !ij && !vec) ? TS_REG
                         : (one_kernel && k0 && !vec) ? TS_SMEM
                                              : TS_SLAB;
        out->storage[t] = ts;
        out->temp_kernel[t] = kernel;
    }
    /* Keep each kernel's shared memory within the limit: the largest tiles go to global. */
    for (int k = 0; k < P->nkernels; k++) {
        while (cuda_smem_bytes(st, out, k, block_x, block_y) > GT_CUDA_SMEM_LIMIT) {
            int worst = -1;
            for (int t = 0; t < st->ntemps; t++)
                if (out->storage[t] == TS_SMEM && out->temp_kernel[t] == k &&
                    (worst < 0 || dtype_size(st->temps[t]->dtype) >= dtype_size(st->temps[worst]->dtype)))
                    worst = t;
            if (worst < 0) break;
            out->storage[worst] = TS_SLAB;
        }
    }
}

/* The tile extents of the analysis (tiles.c): a block's tile or slab holds every point the
 * block writes or reads of the temporary, region statements' reads across the block's edges
 * included. */
void cuda_temp_halo(const Symbol *t, int lo[3], int hi[3]) {
    lo[0] = t->tile_hext[0], hi[0] = t->tile_hext[1], lo[1] = t->tile_hext[2], hi[1] = t->tile_hext[3];
    lo[2] = t->has_access && t->access.lo[2] < 0 ? t->access.lo[2] : 0;
    hi[2] = t->has_access && t->access.hi[2] > 0 ? t->access.hi[2] : 0;
}

size_t cuda_smem_bytes(const Stencil *st, const CudaProgram *p, int k, int bi, int bj) {
    size_t total = 0;
    for (int t = 0; t < st->ntemps; t++) {
        if (p->storage[t] != TS_SMEM || p->temp_kernel[t] != k) continue;
        int lo[3], hi[3];
        cuda_temp_halo(st->temps[t], lo, hi);
        size_t bytes = (size_t)(bi + hi[0] - lo[0]) * (size_t)(bj + hi[1] - lo[1]) *
                       (size_t)dtype_size(st->temps[t]->dtype);
        total += (bytes + 15) / 16 * 16;
    }
    return total;
}

void kplan_free(KPlan *P) {
    if (P->stmts)
        for (int i = 0; i < P->nstmts; i++) free(P->stmts[i].acc);
    free(P->stmts);
    free(P->needs_sync);
    memset(P, 0, sizeof *P);
}

bool kplan_build(const Stencil *st, KPlan *P, CudaProgram *out, int block_x, int block_y) {
    memset(P, 0, sizeof *P);
    int nslots = stencil_nslots(st);
    bool *a = calloc((size_t)nslots + 1, sizeof *a), *b = calloc((size_t)nslots + 1, sizeof *b);
    bool ok = a && b && collect(st, P);
    if (ok) {
        assign_kernels(st, P, a, b);
        P->needs_sync = calloc((size_t)P->nkernels + 1, sizeof *P->needs_sync);
        out->kernels = calloc((size_t)P->nkernels + 1, sizeof *out->kernels);
        out->storage = calloc((size_t)st->ntemps + 1, sizeof *out->storage);
        out->temp_kernel = calloc((size_t)st->ntemps + 1, sizeof *out->temp_kernel);
        ok = P->needs_sync && out->kernels && out->storage && out->temp_kernel;
    }
    if (ok) {
        assign_stages(st, P, a, b);
        out->nkernels = P->nkernels;
        classify_temps(st, P, out, block_x, block_y);
        for (int i = 0; i < P->nstmts; i++) {
            const PStmt *p = &P->stmts[i];
            CudaKernel *k = &out->kernels[p->kernel];
            k->comp = p->comp;
            k->kchunks = st->comps[p->comp].policy == POLICY_PARALLEL;
        }
        for (int k = 0; k < out->nkernels; k++) {
            CudaKernel *K = &out->kernels[k];
            int n = 0;
            for (int q = 0; q < out->nkernels; q++) n += out->kernels[q].comp == K->comp;
            K->per_level = st->comps[K->comp].policy != POLICY_PARALLEL && n > 1;
        }
    }
    free(a);
    free(b);
    if (!ok) kplan_free(P);
    return ok;
}
