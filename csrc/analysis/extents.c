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
    HExt *need;        /* per slot */
    int (*req)[2];     /* per slot: the domain the need assumes (require_domain) */
    HExt cur;          /* extent of the statement being visited */
    const Stmt *boxed; /* the statement whose region boxes restrict the reads (NULL: none) */
} ExtCtx;

static void mee(HExt *a, const HExt *b) {
    for (int d = 0; d < 2; d++) {
        if (b->lo[d] < a->lo[d]) a->lo[d] = b->lo[d];
        if (b->hi[d] > a->hi[d]) a->hi[d] = b->hi[d];
    }
}

/* An extent that holds on a domain of at least n points along axis d. */
static void require_domain(int *req, int d, int n) {
    if (n > req[d]) req[d] = n;
}

/*
 * Per-region extents (as GT4Py computes them): a statement inside region boxes runs only on
 * box ∩ its extent, so an access at offset `off` reaches those points shifted, not the whole
 * extent shifted. A box bound is anchored at the domain's start (level 0) or end (level 1);
 * the reach is an extent relative to the domain only if the domain is large enough that the
 * start-anchored and end-anchored points do not cross. Every such assumption is recorded in
 * `req` (per axis), and the call does not rely on the extent on a smaller domain.
 * Returns false when the box and the extent do not overlap (nothing is accessed); otherwise
 * `out` gets the reach, widened to contain the domain itself (extents satisfy lo <= 0 <= hi).
 */
static bool box_reach(int *req, const int *h, const Box *box, const int *off, HExt *out) {
    HExt r;
    for (int d = 0; d < 2; d++) {
        int elo = h[2 * d], ehi = h[2 * d + 1], o = off[d];
        const AxisBound *bl = box->has[2 * d] ? &box->b[2 * d] : NULL;
        const AxisBound *bu = box->has[2 * d + 1] ? &box->b[2 * d + 1] : NULL;
        /* first point L = max(extent's start, box's start): with an end-anchored box start,
         * L >= n + loff (the extent's start may still be larger on a small domain) */
        bool lend = bl && bl->level == 1;
        int loff = elo;
        if (lend) loff = bl->offset;
        else if (bl && bl->offset > loff) loff = bl->offset;
        /* one past the last point U = min(extent's end, box's end): with a start-anchored
         * box end, U <= uoff */
        bool uend = !(bu && bu->level == 0);
        int uoff = uend ? ehi : bu->offset;
        if (uend && bu && bu->offset < uoff) uoff = bu->offset;
        if (lend == uend) {
            if (uoff <= loff) return false; /* empty on every domain */
        } else if (lend) {
            /* L >= n + loff and U <= min(n + ehi, uoff): empty if loff >= ehi, or once
             * n + loff >= uoff */
            if (loff < ehi) require_domain(req, d, uoff - loff);
            return false;
        }
        if (lend) {
            /* reads from L + o >= n + loff + o: inside the domain once that is >= 0 (always
             * when the extent's own start reads inside it) */
            if (elo + o < 0) require_domain(req, d, -(loff + o));
            r.lo[d] = 0;
        } else {
            r.lo[d] = loff + o < 0 ? loff + o : 0;
        }
        if (uend) {
            r.hi[d] = uoff + o > 0 ? uoff + o : 0;
        } else {
            /* reads up to U - 1 + o <= uoff - 1 + o: inside the domain once n >= uoff + o
             * (always when the extent's own end reads inside it) */
            if (ehi + o > 0) require_domain(req, d, uoff + o);
            r.hi[d] = 0;
        }
    }
    *out = r;
    return true;
}

/* Calls `fn` with each extent that an access at `off` by a statement of extent `h` reaches:
 * one per region box the statement is restricted to (boxes not overlapping the extent
 * reach nothing), or the extent shifted by the offset. Returns how many it reported. */
static int access_reach(int *req, const Stmt *boxed, const int *h, const int *off,
                        void (*fn)(void *, const HExt *), void *ctx) {
    if (boxed == NULL || boxed->nboxes == 0) {
        HExt r = {{h[0] + off[0], h[2] + off[1]}, {h[1] + off[0], h[3] + off[1]}};
        fn(ctx, &r);
        return 1;
    }
    int n = 0;
    for (int b = 0; b < boxed->nboxes; b++) {
        HExt r;
        if (box_reach(req, h, &boxed->boxes[b], off, &r)) {
            fn(ctx, &r);
            n++;
        }
    }
    return n;
}

static void mee_into(void *ctx, const HExt *r) { mee(ctx, r); }

static void need_read(void *ctx, Expr *e) {
    ExtCtx *X = ctx;
    const HExt *c = &X->cur;
    int h[4] = {c->lo[0], c->hi[0], c->lo[1], c->hi[1]};
    int slot = e->field.sym->slot;
    access_reach(X->req[slot], X->boxed, h, e->field.off, mee_into, &X->need[slot]);
}

/* Collect the targets' needs (backward order) into the statement's extent. */
static void targets_need(ExtCtx *X, Stmt *s, HExt *out) {
    if (s->kind == S_ASSIGN) {
        int slot = s->assign.target->slot;
        mee(out, &X->need[slot]);
        /* the statement's extent, hence what it computes, holds on the domains the need
         * holds on: a smaller domain would read values nothing computed */
        for (int d = 0; d < 2; d++) require_domain(X->st->region_min_domain, d, X->req[slot][d]);
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
    if (s->nboxes) X->boxed = s; /* a while's body runs inside the while's boxes */
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
                X->boxed = NULL;
                reads_need(X, s);
            }
        }
    }
}

/* ---- access extents and K constraints ----------------------------------------------- */

typedef struct {
    Stencil *st;
    const Stmt *stmt;
    const Stmt *boxed; /* the statement whose region boxes restrict the accesses, or NULL */
    Policy policy;
    int *klo, *khi; /* per slot, within the current interval; khi < klo: not accessed */
    const Interval *in; /* the interval being visited */
} AccCtx;

static void widen(Symbol *s, int ilo, int ihi, int jlo, int jhi, int k) {
    Extent *a = &s->access;
    if (!s->has_access) {
        memset(a, 0, sizeof *a);
        s->has_access = true;
        s->reach_lo[0] = ilo, s->reach_hi[0] = ihi, s->reach_lo[1] = jlo, s->reach_hi[1] = jhi;
    }
    if (ilo < s->reach_lo[0]) s->reach_lo[0] = ilo;
    if (ihi > s->reach_hi[0]) s->reach_hi[0] = ihi;
    if (jlo < s->reach_lo[1]) s->reach_lo[1] = jlo;
    if (jhi > s->reach_hi[1]) s->reach_hi[1] = jhi;
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

/* GT4Py's K boundary (see Symbol.kbound): an access at constant K offset k in an interval
 * anchored at the bottom reaches start + k, one anchored at the top end + k; a variable offset
 * or a run-time bound tells nothing before the call, as in GT4Py. */
static void gt4py_kbound(const Interval *in, Symbol *s, int k) {
    if (in->start.sym || in->end.sym) return;
    int side[2] = {-in->start.offset - k, in->end.offset + k};
    bool anchored[2] = {in->start.level == 0, in->end.level == 1};
    for (int i = 0; i < 2; i++) {
        if (!anchored[i]) continue;
        if (!s->kbound_set[i] || side[i] > s->kbound[i]) s->kbound[i] = side[i];
        s->kbound_set[i] = true;
    }
}

typedef struct {
    Symbol *sym;
    int k;
} Widen;

static void widen_into(void *ctx, const HExt *r) {
    Widen *w = ctx;
    widen(w->sym, r->lo[0], r->hi[0], r->lo[1], r->hi[1], w->k);
}

/* The access extent of an access at horizontal offset `off` by the current statement, per
 * region box (access_reach); an access in no box's reach still counts at K offset k. */
static void widen_access(AccCtx *A, Symbol *s, const int *off, int k) {
    Widen w = {s, k};
    const int *h = A->stmt->horizontal_extent;
    if (access_reach(A->st->region_exact_domain, A->boxed, h, off, widen_into, &w) == 0)
        widen(s, 0, 0, 0, 0, k);
    /* the extent ignoring regions: always safe, for domains below region_exact_domain */
    int *p = s->plain_hext;
    if (h[0] + off[0] < p[0]) p[0] = h[0] + off[0];
    if (h[1] + off[0] > p[1]) p[1] = h[1] + off[0];
    if (h[2] + off[1] < p[2]) p[2] = h[2] + off[1];
    if (h[3] + off[1] > p[3]) p[3] = h[3] + off[1];
}

static void access_read(void *ctx, Expr *e) {
    AccCtx *A = ctx;
    Symbol *s = e->field.sym;
    const int *h = A->stmt->horizontal_extent, *o = e->field.off;
    if (!s->written) s->read_before_write = true;
    s->read = true;
    if (e->field.kexpr) A->st->has_variable_k = true;
    else gt4py_kbound(A->in, s, o[2]);
    /* A variable K offset's range is only known at run time; the call checks it. */
    int k = e->field.kexpr ? 0 : o[2];
    widen_access(A, s, o, k);
    /* the aliasing check stays with the whole extent: conservative */
    widen_read(s, h[0] + o[0], h[1] + o[0], h[2] + o[1], h[3] + o[1]);
    if (A->policy == POLICY_PARALLEL && (o[2] != 0 || e->field.kexpr)) s->kread_parallel = true;
    kaccess(A, s->slot, k);
}

static void access_stmt(AccCtx *A, Stmt *s) {
    A->stmt = s;
    if (s->nboxes) A->boxed = s; /* a while's body runs inside the while's boxes */
    expr_visit_fields(s->guard, access_read, A);
    if (s->kind == S_ASSIGN) {
        expr_visit_fields(s->assign.value, access_read, A);
        Symbol *t = s->assign.target;
        const int *h = s->horizontal_extent;
        t->written = true;
        if (t->kind == SYM_FIELD && (h[0] || h[1] || h[2] || h[3])) A->st->extended_writes = true;
        if (t->first_write_line == 0) t->first_write_line = s->line;
        /* a variable K offset: its reads count; the call checks the levels written */
        if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, access_read, A);
        static const int zero[2] = {0, 0};
        int koff = s->assign.kexpr ? 0 : s->assign.koff;
        widen_access(A, t, zero, koff);
        kaccess(A, t->slot, koff);
        if (!s->assign.kexpr) gt4py_kbound(A->in, t, koff);
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
    AccCtx A = {st, NULL, NULL, POLICY_PARALLEL, klo, khi, NULL};
    bool ok = true;
    for (int c = 0; c < st->ncomps && ok; c++) {
        Computation *comp = &st->comps[c];
        A.policy = comp->policy;
        for (int i = 0; i < comp->nintervals && ok; i++) {
            Interval *in = &comp->intervals[i];
            A.in = in;
            for (int s = 0; s < n; s++) klo[s] = 1, khi[s] = 0;
            for (int k = 0; k < in->body.n; k++) {
                A.boxed = NULL;
                access_stmt(&A, in->body.items[k]);
            }
            for (int s = 0; s < n && ok; s++)
                if (khi[s] >= klo[s])
                    ok = push_kacc(st, (KAccess){s, in->start, in->end, klo[s], khi[s]});
        }
    }
    free(klo);
    free(khi);
    /* a level the kernel checks may be any level of the domain: the array must hold them */
    for (int p = 0; p < st->nparams && ok; p++) {
        Symbol *s = st->params[p];
        if (s->kind == SYM_FIELD && s->kread_checked)
            ok = push_kacc(st, (KAccess){s->slot, {0, 0, NULL}, {1, 0, NULL}, 0, 0});
    }
    return ok;
}

/* The K size below which some interval would be empty or intervals would swap order. */
static int levels_for(AxisBound lo, AxisBound hi, bool strict) {
    if (lo.level == 0 && hi.level == 1) return lo.offset - hi.offset + (strict ? 1 : 0);
    if (lo.level == 0 && hi.level == 0) return hi.offset; /* the bound itself must fit */
    if (lo.level == 1 && hi.level == 1) return -lo.offset;
    return 0;
}

/* An interval with no statements (its body emptied at compile time, by `__INLINED` or
 * externals) computes nothing on any domain, so it asks for no levels: only the intervals
 * that run, and the order between consecutive ones, count. */
int stencil_min_k_levels(const Stencil *st) {
    int m = 1;
    for (int c = 0; c < st->ncomps; c++) {
        const Computation *comp = &st->comps[c];
        const Interval *prev = NULL;
        for (int i = 0; i < comp->nintervals; i++) {
            const Interval *in = &comp->intervals[i];
            if (in->body.n == 0) continue;
            /* run-time bounds: the call checks the intervals against the domain */
            if (in->start.sym || in->end.sym) {
                prev = NULL;
                continue;
            }
            int v = levels_for(in->start, in->end, true);
            if (v > m) m = v;
            if (prev != NULL) {
                v = comp->policy == POLICY_BACKWARD ? levels_for(in->end, prev->start, false)
                                                    : levels_for(prev->end, in->start, false);
                if (v > m) m = v;
            }
            prev = in;
        }
    }
    return m;
}

bool extents_compute(Stencil *st) {
    int n = stencil_nslots(st);
    ExtCtx X = {st, calloc((size_t)(n + 1), sizeof(HExt)), calloc((size_t)(n + 1), sizeof(int[2])),
                {{0, 0}, {0, 0}}, NULL};
    if (X.need == NULL || X.req == NULL) {
        free(X.need);
        free(X.req);
        return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    }
    backward_pass(&X);
    free(X.need);
    free(X.req);
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
    s->read_before_write = s->kbound_set[0] = s->kbound_set[1] = false;
    s->first_write_line = 0;
    memset(&s->access, 0, sizeof s->access);
    memset(s->reach_lo, 0, sizeof s->reach_lo);
    memset(s->reach_hi, 0, sizeof s->reach_hi);
    memset(s->read_hext, 0, sizeof s->read_hext);
    memset(s->plain_hext, 0, sizeof s->plain_hext);
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
    /* the arguments' extents, and the domains on which they are exact, stay the contract's */
    int exact[2] = {st->region_exact_domain[0], st->region_exact_domain[1]};
    bool ok = extents_compute(st);
    if (ok) {
        memcpy(st->region_exact_domain, exact, sizeof exact);
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
