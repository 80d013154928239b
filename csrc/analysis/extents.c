/*
 * Extent analysis, as in the GridTools seed: visit the statements from the last to the
 * first; a statement must be computed wherever a later statement reads its output, so its
 * extent is the minimum enclosing extent (mee) of those needs, and each of its inputs is
 * then needed on the statement's extent shifted by the read offset. Argument fields not
 * read later are computed on the compute domain (extent <0,0>).
 *
 * Also derives, for the call: each field's access extent (reads and writes, I/J/K), the
 * K ranges in which each field is accessed, and the minimum K size the intervals need.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

typedef struct {
    int lo[2], hi[2];
} HExt;

typedef struct {
    Stencil *st;
    HExt *need; /* per slot */
    HExt cur;   /* extent of the statement being visited */
} ExtCtx;

static void mee(HExt *a, const HExt *b) {
    for (int d = 0; d < 2; d++) {
        if (b->lo[d] < a->lo[d]) a->lo[d] = b->lo[d];
        if (b->hi[d] > a->hi[d]) a->hi[d] = b->hi[d];
    }
}

static void need_read(void *ctx, Expr *e) {
    ExtCtx *X = ctx;
    HExt h = X->cur;
    for (int d = 0; d < 2; d++) {
        h.lo[d] += e->field.off[d];
        h.hi[d] += e->field.off[d];
    }
    mee(&X->need[e->field.sym->slot], &h);
}

/* Collect the targets' needs (backward order) into the statement's extent. */
static void targets_need(ExtCtx *X, Stmt *s, HExt *out) {
    if (s->kind == S_ASSIGN) {
        mee(out, &X->need[s->assign.target->slot]);
    } else if (s->kind == S_WHILE) {
        for (int i = 0; i < s->while_.body.n; i++) targets_need(X, s->while_.body.items[i], out);
    }
}

static void set_extent(Stmt *s, const HExt *h) {
    s->horizontal_extent[0] = h->lo[0];
    s->horizontal_extent[1] = h->hi[0];
    s->horizontal_extent[2] = h->lo[1];
    s->horizontal_extent[3] = h->hi[1];
    if (s->kind == S_WHILE)
        for (int i = 0; i < s->while_.body.n; i++) set_extent(s->while_.body.items[i], h);
}

static void reads_need(ExtCtx *X, Stmt *s) {
    expr_visit_fields(s->guard, need_read, X);
    if (s->kind == S_ASSIGN) {
        expr_visit_fields(s->assign.value, need_read, X);
    } else if (s->kind == S_WHILE) {
        expr_visit_fields(s->while_.cond, need_read, X);
        for (int i = s->while_.body.n - 1; i >= 0; i--) reads_need(X, s->while_.body.items[i]);
    }
}

static void backward_pass(ExtCtx *X) {
    Stencil *st = X->st;
    for (int c = st->ncomps - 1; c >= 0; c--) {
        Computation *comp = &st->comps[c];
        for (int i = comp->nintervals - 1; i >= 0; i--) {
            StmtList *l = &comp->intervals[i].body;
            for (int k = l->n - 1; k >= 0; k--) {
                Stmt *s = l->items[k];
                HExt h = {{0, 0}, {0, 0}};
                targets_need(X, s, &h);
                if (s->has_contract) {
                    const int *c = s->contract_extent;
                    HExt floor = {{c[0], c[2]}, {c[1], c[3]}};
                    mee(&h, &floor);
                }
                set_extent(s, &h);
                X->cur = h;
                reads_need(X, s);
            }
        }
    }
}

/* ---- access extents and K constraints ----------------------------------------------- */

typedef struct {
    Stencil *st;
    const Stmt *stmt;
    Policy policy;
    int *klo, *khi; /* per slot, within the current interval; khi < klo: not accessed */
} AccCtx;

static void widen(Symbol *s, int ilo, int ihi, int jlo, int jhi, int k) {
    Extent *a = &s->access;
    if (!s->has_access) {
        memset(a, 0, sizeof *a);
        s->has_access = true;
    }
    if (ilo < a->lo[0]) a->lo[0] = ilo;
    if (ihi > a->hi[0]) a->hi[0] = ihi;
    if (jlo < a->lo[1]) a->lo[1] = jlo;
    if (jhi > a->hi[1]) a->hi[1] = jhi;
    if (k < a->lo[2]) a->lo[2] = k;
    if (k > a->hi[2]) a->hi[2] = k;
}

/* The read extent alone: a field whose values are read around each point must not alias a
 * written field (checked by the call). Starts at <0,0>, like `access`. */
static void widen_read(Symbol *s, int ilo, int ihi, int jlo, int jhi) {
    int *r = s->read_hext;
    if (ilo < r[0]) r[0] = ilo;
    if (ihi > r[1]) r[1] = ihi;
    if (jlo < r[2]) r[2] = jlo;
    if (jhi > r[3]) r[3] = jhi;
}

static void kaccess(AccCtx *A, int slot, int k) {
    if (A->khi[slot] < A->klo[slot]) {
        A->klo[slot] = A->khi[slot] = k;
    } else {
        if (k < A->klo[slot]) A->klo[slot] = k;
        if (k > A->khi[slot]) A->khi[slot] = k;
    }
}

static void access_read(void *ctx, Expr *e) {
    AccCtx *A = ctx;
    Symbol *s = e->field.sym;
    const int *h = A->stmt->horizontal_extent, *o = e->field.off;
    s->read = true;
    if (e->field.kexpr) A->st->has_variable_k = true;
    /* A variable K offset's range is only known at run time; the call checks it. */
    int k = e->field.kexpr ? 0 : o[2];
    widen(s, h[0] + o[0], h[1] + o[0], h[2] + o[1], h[3] + o[1], k);
    widen_read(s, h[0] + o[0], h[1] + o[0], h[2] + o[1], h[3] + o[1]);
    if (A->policy == POLICY_PARALLEL && (o[2] != 0 || e->field.kexpr)) s->kread_parallel = true;
    kaccess(A, s->slot, k);
}

static void access_stmt(AccCtx *A, Stmt *s) {
    A->stmt = s;
    expr_visit_fields(s->guard, access_read, A);
    if (s->kind == S_ASSIGN) {
        expr_visit_fields(s->assign.value, access_read, A);
        Symbol *t = s->assign.target;
        const int *h = s->horizontal_extent;
        t->written = true;
        if (t->kind == SYM_FIELD && (h[0] || h[1] || h[2] || h[3])) A->st->extended_writes = true;
        if (t->first_write_line == 0) t->first_write_line = s->line;
        widen(t, h[0], h[1], h[2], h[3], s->assign.koff);
        kaccess(A, t->slot, s->assign.koff);
    } else if (s->kind == S_WHILE) {
        expr_visit_fields(s->while_.cond, access_read, A);
        for (int i = 0; i < s->while_.body.n; i++) access_stmt(A, s->while_.body.items[i]);
    }
}

static bool push_kacc(Stencil *st, KAccess k) {
    if (st->nkacc == st->capkacc) {
        int cap = st->capkacc ? 2 * st->capkacc : 16;
        KAccess *p = arena_grow(&st->arena, st->kacc, (size_t)st->nkacc, (size_t)cap, sizeof *p);
        if (p == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
        st->kacc = p;
        st->capkacc = cap;
    }
    st->kacc[st->nkacc++] = k;
    return true;
}

static bool access_pass(Stencil *st) {
    int n = stencil_nslots(st);
    int *klo = malloc(sizeof(int) * (size_t)(n + 1)), *khi = malloc(sizeof(int) * (size_t)(n + 1));
    if (!klo || !khi) {
        free(klo);
        free(khi);
        return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    }
    AccCtx A = {st, NULL, POLICY_PARALLEL, klo, khi};
    bool ok = true;
    for (int c = 0; c < st->ncomps && ok; c++) {
        Computation *comp = &st->comps[c];
        A.policy = comp->policy;
        for (int i = 0; i < comp->nintervals && ok; i++) {
            Interval *in = &comp->intervals[i];
            for (int s = 0; s < n; s++) klo[s] = 1, khi[s] = 0;
            for (int k = 0; k < in->body.n; k++) access_stmt(&A, in->body.items[k]);
            for (int s = 0; s < n && ok; s++)
                if (khi[s] >= klo[s])
                    ok = push_kacc(st, (KAccess){s, in->start, in->end, klo[s], khi[s]});
        }
    }
    free(klo);
    free(khi);
    return ok;
}

/* The K size below which some interval would be empty or intervals would swap order. */
static int levels_for(AxisBound lo, AxisBound hi, bool strict) {
    if (lo.level == 0 && hi.level == 1) return lo.offset - hi.offset + (strict ? 1 : 0);
    if (lo.level == 0 && hi.level == 0) return hi.offset; /* the bound itself must fit */
    if (lo.level == 1 && hi.level == 1) return -lo.offset;
    return 0;
}

int stencil_min_k_levels(const Stencil *st) {
    int m = 1;
    for (int c = 0; c < st->ncomps; c++) {
        const Computation *comp = &st->comps[c];
        for (int i = 0; i < comp->nintervals; i++) {
            const Interval *in = &comp->intervals[i];
            int v = levels_for(in->start, in->end, true);
            if (v > m) m = v;
        }
        for (int i = 0; i + 1 < comp->nintervals; i++) {
            const Interval *a = &comp->intervals[i], *b = &comp->intervals[i + 1];
            int v = comp->policy == POLICY_BACKWARD ? levels_for(b->end, a->start, false)
                                                    : levels_for(a->end, b->start, false);
            if (v > m) m = v;
        }
    }
    return m;
}

bool extents_compute(Stencil *st) {
    int n = stencil_nslots(st);
    ExtCtx X = {st, calloc((size_t)(n + 1), sizeof(HExt)), {{0, 0}, {0, 0}}};
    if (X.need == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    backward_pass(&X);
    free(X.need);
    st->min_k_levels = stencil_min_k_levels(st);
    return access_pass(st) && st->diag.kind == DIAG_NONE;
}

static bool writes_argument(const Stmt *s) {
    if (s->kind == S_ASSIGN) return s->assign.target->kind == SYM_FIELD;
    if (s->kind == S_WHILE)
        for (int i = 0; i < s->while_.body.n; i++)
            if (writes_argument(s->while_.body.items[i])) return true;
    return false;
}

static void reset_symbol_facts(Symbol *s) {
    s->read = s->written = s->has_access = s->kread_parallel = false;
    s->first_write_line = 0;
    memset(&s->access, 0, sizeof s->access);
    memset(s->read_hext, 0, sizeof s->read_hext);
}

/*
 * The argument fields' access facts are the stencil's contract with its callers (call-time
 * validation, the default origin, field_info, aliasing): they come from the IR as the user
 * wrote it, whatever a later transformation does to temporaries. After such a
 * transformation (inline.c), this recomputes statement extents and temporaries' facts and
 * keeps the arguments' facts and K constraints from the first computation.
 */
bool extents_recompute_keeping_contract(Stencil *st) {
    int nf = st->nfields;
    Symbol *saved = malloc(sizeof(Symbol) * (size_t)(st->nparams + 1));
    KAccess *kept = malloc(sizeof(KAccess) * (size_t)(st->nkacc + 1));
    if (saved == NULL || kept == NULL) {
        free(saved);
        free(kept);
        return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    }
    int nkept = 0;
    for (int i = 0; i < st->nkacc; i++)
        if (st->kacc[i].slot < nf) kept[nkept++] = st->kacc[i];
    for (int i = 0; i < st->nparams; i++) saved[i] = *st->params[i];
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++) {
            StmtList *l = &st->comps[c].intervals[i].body;
            for (int k = 0; k < l->n; k++) {
                Stmt *s = l->items[k];
                if (!writes_argument(s)) continue;
                memcpy(s->contract_extent, s->horizontal_extent, sizeof s->contract_extent);
                s->has_contract = true;
            }
        }
    for (int i = 0; i < st->nparams; i++) reset_symbol_facts(st->params[i]);
    for (int i = 0; i < st->ntemps; i++) reset_symbol_facts(st->temps[i]);
    st->nkacc = 0;
    st->extended_writes = false;
    bool ok = extents_compute(st);
    if (ok) {
        for (int i = 0; i < st->nparams; i++) *st->params[i] = saved[i];
        int n = 0;
        for (int i = 0; i < st->nkacc; i++)
            if (st->kacc[i].slot >= nf) st->kacc[n++] = st->kacc[i];
        st->nkacc = n;
        for (int i = 0; i < nkept && ok; i++) ok = push_kacc(st, kept[i]);
    }
    free(saved);
    free(kept);
    return ok;
}
