/*
 * Which column groups run as column blocks (see blocks.h and columns.c).
 *
 * In C order a column's levels are contiguous and a level's values across columns are
 * nk elements apart, so the bundled sweep of columns.c is scalar: a few interleaved
 * chains per core. A block copies the fields the group reads into a scratch buffer in
 * which one level of the block's columns is contiguous, then sweeps level by level with
 * the columns innermost (a vector loop, as the Fortran-order kernel does), and copies the
 * fields it wrote back. The copies are exact, so the results are bit for bit those of the
 * bundles.
 *
 * The scratch holds the domain's levels [0, nk) only, so a symbol lives there when every
 * access the group makes to it is at a constant K offset that, over its interval's constant
 * bounds, stays in [0, nk) whatever nk is, and writes are at the point itself. A symbol the
 * group only reads may be read at horizontal offsets: one buffer per offset, each copied from
 * the shifted columns (the group reads those points anyway: its statements run on the
 * domain). A symbol the group writes is read at its own column only (the schedule's
 * condition for a column group); it is copied in unless every level of every column is
 * written unconditionally before anything could read the old value (find_covered),
 * and copied back. Anything else
 * stays in place, addressed as in the bundles. A column-local temporary that does not
 * qualify keeps the group on its bundles, whose temporary buffers are per lane.
 */
#include "backend/cpu/blocks.h"

#include <stdlib.h>
#include <string.h>

int cpu_block_cols(int nbuf) {
    int cols = GT_BLOCK_COLS_MAX;
    while (cols > GT_BLOCK_COLS_MIN && (long)cols * nbuf > GT_BLOCK_COL_BUFFERS) cols /= 2;
    return cols;
}

typedef struct Seen {
    const Symbol *sym;
    bool bad;     /* accessed in a way the scratch cannot hold */
    bool read, written;
    bool covered; /* written, and no value from before the group is read (find_covered) */
    int nviews;   /* distinct horizontal offsets read (and (0, 0) when written) */
    int view[GT_MAX_BLOCK_VIEWS][2];
} Seen;

/* The fields and temporaries a group accesses, in the order first seen; at[slot] is a
 * symbol's entry (-1: none yet). */
typedef struct Scan {
    const Interval *in;
    Seen *seen;
    int *at;
    int n, nslots;
    bool overflow;
} Scan;

static Seen *find(Scan *S, const Symbol *s) {
    if (s->slot < 0 || s->slot >= S->nslots) {
        S->overflow = true;
        return NULL;
    }
    if (S->at[s->slot] < 0) {
        S->at[s->slot] = S->n;
        S->seen[S->n++] = (Seen){.sym = s};
    }
    return &S->seen[S->at[s->slot]];
}

static void add_view(Seen *v, int di, int dj) {
    for (int i = 0; i < v->nviews; i++)
        if (v->view[i][0] == di && v->view[i][1] == dj) return;
    if (v->nviews == GT_MAX_BLOCK_VIEWS) {
        v->bad = true;
        return;
    }
    v->view[v->nviews][0] = di;
    v->view[v->nviews][1] = dj;
    v->nviews++;
}

/* IJK fields and temporaries without data dimensions have a place the copies address. */
static bool holdable(const Symbol *s) {
    return (s->kind == SYM_FIELD || s->kind == SYM_TEMP) && s->axes == AX_IJK && s->ndata == 0;
}

/* A K offset read over the interval stays in [0, nk) for every nk. */
static bool inside(const Interval *in, int off) {
    if (off == 0) return true;
    if (in->start.sym || in->end.sym) return false;
    if (off < 0) return in->start.level == 0 && in->start.offset + off >= 0;
    return in->end.level == 1 && in->end.offset + off <= 0;
}

static void visit_read(void *ctx, Expr *e) {
    Scan *S = ctx;
    const Symbol *s = e->field.sym;
    if (s->kind != SYM_FIELD && s->kind != SYM_TEMP) return;
    Seen *v = find(S, s);
    if (v == NULL) return;
    v->read = true;
    if (!holdable(s) || e->field.kexpr || e->field.kabs || e->field.ndi || !inside(S->in, e->field.off[2]))
        v->bad = true;
    else
        add_view(v, e->field.off[0], e->field.off[1]);
}

static void scan_list(Scan *S, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        if (s->guard) expr_visit_fields(s->guard, visit_read, S);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, visit_read, S);
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, visit_read, S);
            Seen *v = find(S, s->assign.target);
            if (v == NULL) continue;
            v->written = true;
            if (!holdable(s->assign.target) || s->assign.koff || s->assign.kexpr || s->assign.ndi)
                v->bad = true;
            else
                add_view(v, 0, 0);
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, visit_read, S);
            scan_list(S, &s->while_.body);
        }
    }
}

static int cmp_bound(const AxisBound *a, const AxisBound *b) {
    return a->level != b->level ? a->level - b->level : a->offset - b->offset;
}

/* Whether the intervals of c in `mask` (bit iv: interval iv) chain from level 0 to nk. */
static bool chain_covers(const Computation *c, uint64_t mask) {
    const Interval *ins[64];
    int n = 0;
    for (int iv = 0; iv < c->nintervals && iv < 64; iv++)
        if (mask >> iv & 1) ins[n++] = &c->intervals[iv];
    /* sort by start (a handful: insertion sort) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && cmp_bound(&ins[j]->start, &ins[j - 1]->start) < 0; j--) {
            const Interval *t = ins[j];
            ins[j] = ins[j - 1];
            ins[j - 1] = t;
        }
    AxisBound at = {.level = 0, .offset = 0};
    for (int i = 0; i < n; i++) {
        if (cmp_bound(&ins[i]->start, &at) != 0) return false;
        at = ins[i]->end;
    }
    return n > 0 && at.level == 1 && at.offset == 0;
}

/* What one computation does to each slot: `writes`, the intervals (bit iv) with a top-level
 * unguarded write at the point itself; `read`, read anywhere; `early`, read at a level its
 * sweep has not written yet (not below in FORWARD, not above in BACKWARD, `sign` -1 and 1) or
 * at a run-time K offset. Slot-indexed, filled in one pass over the computation. */
typedef struct CompUse {
    uint64_t *writes;
    bool *read, *early;
    int sign, nslots;
} CompUse;

static void use_read(void *ctx, Expr *e) {
    CompUse *U = ctx;
    int slot = e->field.sym->slot;
    if (slot < 0 || slot >= U->nslots) return;
    U->read[slot] = true;
    if (e->field.off[2] * U->sign <= 0 || e->field.kexpr) U->early[slot] = true;
}

static void use_list(CompUse *U, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        if (s->guard) expr_visit_fields(s->guard, use_read, U);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, use_read, U);
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, use_read, U);
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, use_read, U);
            use_list(U, &s->while_.body);
        }
    }
}

static void comp_use(const Computation *c, CompUse *U) {
    memset(U->writes, 0, sizeof *U->writes * (size_t)U->nslots);
    memset(U->read, 0, (size_t)U->nslots);
    memset(U->early, 0, (size_t)U->nslots);
    U->sign = c->policy == POLICY_FORWARD ? -1 : c->policy == POLICY_BACKWARD ? 1 : 0;
    for (int iv = 0; iv < c->nintervals; iv++) {
        const Interval *in = &c->intervals[iv];
        if (iv < 64 && !in->start.sym && !in->end.sym)
            for (int i = 0; i < in->body.n; i++) {
                const Stmt *st = in->body.items[i];
                int slot = st->kind == S_ASSIGN ? st->assign.target->slot : -1;
                if (slot >= 0 && slot < U->nslots && !st->guard && !st->assign.koff &&
                    !st->assign.kexpr && !st->assign.ndi)
                    U->writes[slot] |= (uint64_t)1 << iv;
            }
        use_list(U, &in->body);
    }
}

/* Marks `covered` each written symbol no value of which from before the group is ever read:
 * a computation of the group writes it at every level of every column unconditionally,
 * nothing before that computation reads it, and that computation (a sweep) reads it only at
 * levels its sweep has written already (below in FORWARD, above in BACKWARD). Then the
 * scratch needs no copy in (a tridiagonal solve's solution). One pass per computation for
 * all symbols (a column-physics group has ~100 of them over thousands of statements).
 * Without memory nothing is covered: every written symbol is copied in, which is right. */
static void find_covered(const Computation *first, int n, Scan *S) {
    enum { OPEN, NO, YES };
    CompUse U = {.nslots = S->nslots};
    U.writes = malloc(sizeof *U.writes * (size_t)(S->nslots + 1));
    U.read = malloc((size_t)S->nslots + 1);
    U.early = malloc((size_t)S->nslots + 1);
    char *state = malloc((size_t)S->n + 1);
    if (U.writes && U.read && U.early && state) {
        for (int i = 0; i < S->n; i++) state[i] = S->seen[i].written ? OPEN : NO;
        for (int c = 0; c < n; c++) {
            comp_use(&first[c], &U);
            for (int i = 0; i < S->n; i++) {
                int slot = S->seen[i].sym->slot;
                if (state[i] != OPEN) continue;
                if (chain_covers(&first[c], U.writes[slot]))
                    state[i] = !U.read[slot] || (U.sign != 0 && !U.early[slot]) ? YES : NO;
                else if (U.read[slot])
                    state[i] = NO;
            }
        }
        for (int i = 0; i < S->n; i++) S->seen[i].covered = state[i] == YES;
    }
    free(U.writes);
    free(U.read);
    free(U.early);
    free(state);
}

int cpu_block_group(const Stencil *st, const Computation *first, int n, BlockSym *out) {
    int nslots = stencil_nslots(st);
    Seen *seen = malloc(sizeof *seen * (size_t)(nslots + 1));
    int *at = malloc(sizeof *at * (size_t)(nslots + 1));
    if (seen == NULL || at == NULL) { /* the group keeps its bundles */
        free(seen);
        free(at);
        return -1;
    }
    for (int s = 0; s < nslots; s++) at[s] = -1;
    Scan S = {.seen = seen, .at = at, .nslots = nslots};
    for (int c = 0; c < n; c++)
        for (int iv = 0; iv < first[c].nintervals; iv++) {
            S.in = &first[c].intervals[iv];
            scan_list(&S, &S.in->body);
        }
    if (!S.overflow) find_covered(first, n, &S);
    int kept = 0;
    for (int i = 0; i < S.n && !S.overflow && kept >= 0; i++) {
        const Seen *v = &seen[i];
        const Symbol *s = v->sym;
        /* in registers (registers.c); a carried one's levels go to the scratch */
        if (s->kind == SYM_TEMP && s->in_register && !s->reg_carried) continue;
        if (s->kind == SYM_TEMP && s->column_local) {
            if (v->bad || v->nviews != 1 || kept == GT_MAX_BLOCK_SYMS) kept = -1;
            else out[kept++] = (BlockSym){.sym = s};
            continue;
        }
        /* in place: not holdable, or written and read at another column */
        if (v->bad || (v->written && v->nviews != 1)) continue;
        bool covered = v->covered;
        for (int x = 0; x < v->nviews && kept >= 0; x++) {
            if (kept == GT_MAX_BLOCK_SYMS) {
                kept = -1;
                break;
            }
            out[kept++] = (BlockSym){.sym = s, .di = v->view[x][0], .dj = v->view[x][1],
                                     .copy_in = !covered, .copy_out = v->written};
        }
    }
    if (S.overflow) kept = -1;
    free(seen);
    free(at);
    return kept;
}

/* Calls of a math function libm computes (`**` on floats included). */
static void note_libm_call(void *ctx, Expr *e) {
    bool *found = ctx;
    if ((e->kind == E_CALL && builtin_is_libm_call(e->call.fn)) ||
        (e->kind == E_BINARY && e->op.op == OP_POW && dtype_is_float(e->type)))
        *found = true;
}

static void libm_calls_in(const StmtList *l, bool *found) {
    for (int i = 0; i < l->n && !*found; i++) {
        Stmt *s = l->items[i];
        if (s->guard) expr_visit(s->guard, note_libm_call, found);
        if (s->kind == S_ASSIGN) {
            expr_visit(s->assign.value, note_libm_call, found);
        } else if (s->kind == S_WHILE) {
            expr_visit(s->while_.cond, note_libm_call, found);
            libm_calls_in(&s->while_.body, found);
        }
    }
}

void cpu_blocks_assign(Stencil *st) {
    st->block_buffers = 0;
    st->block_libm_calls = false;
    for (int t = 0; t < st->ntemps; t++) st->temps[t]->block_held = false;
    if (st->column_lanes <= 0) return;
    BlockSym syms[GT_MAX_BLOCK_SYMS];
    for (int c = 0; c < st->ncomps;) {
        if (!st->comps[c].columnwise) {
            c++;
            continue;
        }
        int n = 1;
        while (c + n < st->ncomps && st->comps[c + n - 1].column_fuse_next) n++;
        int k = cpu_block_group(st, &st->comps[c], n, syms);
        if (k > st->block_buffers) st->block_buffers = k;
        for (int g = c; k > 0 && g < c + n; g++)
            for (int iv = 0; iv < st->comps[g].nintervals; iv++)
                libm_calls_in(&st->comps[g].intervals[iv].body, &st->block_libm_calls);
        for (int x = 0; x < k; x++)
            for (int t = 0; t < st->ntemps; t++)
                if (st->temps[t] == syms[x].sym) st->temps[t]->block_held = true;
        c += n;
    }
}

int cpu_block_buffers(const Stencil *st) { return st->block_buffers; }

bool cpu_block_holds(const Stencil *st, const Symbol *t) {
    (void)st;
    return t->block_held;
}
