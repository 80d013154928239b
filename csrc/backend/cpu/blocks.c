/*
 * Which column groups run as column blocks (see blocks.h and columns.c).
 *
 * In C order a column's levels are contiguous and a level's values across columns are
 * nk elements apart, so the bundled sweep of columns.c is scalar: a few interleaved
 * chains per core. A block copies the fields the group reads into a scratch buffer in
 * which one level of the block's columns is contiguous, then sweeps level by level with
 * the columns innermost (a vector loop, as the Fortran-order kernel does), and copies the
 * fields it wrote back. The copy is exact, so the results are bit for bit those of the
 * bundles.
 *
 * The scratch holds the domain's levels [0, nk) only, so a symbol lives there when every
 * access the group makes to it is at its own column and provably inside those levels: a
 * constant K offset that, over its interval's constant bounds, stays in [0, nk) whatever
 * nk is. Written fields must be written at their own level. A field only written is written
 * in place (a copy in would be wasted), and fields read at a horizontal offset or a
 * variable level stay in place too. A column-local temporary that does not qualify keeps
 * the group on its bundles, whose temporary buffers are per lane.
 */
#include "backend/cpu/blocks.h"

typedef struct Scan {
    const Interval *in;
    BlockSym *syms;
    bool bad[GT_MAX_BLOCK_SYMS]; /* accessed in a way the scratch cannot hold */
    bool read[GT_MAX_BLOCK_SYMS];
    int n;
    bool overflow;
} Scan;

static int find(Scan *S, const Symbol *s) {
    for (int i = 0; i < S->n; i++)
        if (S->syms[i].sym == s) return i;
    if (S->n == GT_MAX_BLOCK_SYMS) {
        S->overflow = true;
        return -1;
    }
    S->syms[S->n] = (BlockSym){.sym = s};
    S->bad[S->n] = S->read[S->n] = false;
    return S->n++;
}

static bool holdable(const Symbol *s) {
    if (s->kind == SYM_TEMP) return s->column_local;
    return s->kind == SYM_FIELD && s->axes == AX_IJK && s->ndata == 0;
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
    int i = find(S, s);
    if (i < 0) return;
    S->read[i] = true;
    if (!holdable(s) || e->field.off[0] || e->field.off[1] || e->field.kexpr || e->field.kabs ||
        e->field.ndi || !inside(S->in, e->field.off[2]))
        S->bad[i] = true;
}

static void scan_list(Scan *S, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        if (s->guard) expr_visit_fields(s->guard, visit_read, S);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, visit_read, S);
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, visit_read, S);
            int t = find(S, s->assign.target);
            if (t < 0) continue;
            S->syms[t].written = true;
            if (!holdable(s->assign.target) || s->assign.koff || s->assign.kexpr || s->assign.ndi)
                S->bad[t] = true;
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, visit_read, S);
            scan_list(S, &s->while_.body);
        }
    }
}

int cpu_block_group(const Stencil *st, const Computation *first, int n, BlockSym *out) {
    (void)st;
    Scan S = {.syms = out};
    for (int c = 0; c < n; c++)
        for (int iv = 0; iv < first[c].nintervals; iv++) {
            S.in = &first[c].intervals[iv];
            scan_list(&S, &S.in->body);
        }
    if (S.overflow) return -1;
    int kept = 0;
    for (int i = 0; i < S.n; i++) {
        const Symbol *s = S.syms[i].sym;
        if (s->kind == SYM_TEMP && s->column_local && S.bad[i]) return -1;
        /* fields: in scratch only when read (and every access qualifies) */
        if (S.bad[i] || !holdable(s) || (s->kind == SYM_FIELD && !S.read[i])) continue;
        out[kept++] = S.syms[i];
    }
    return kept;
}

/* Over the column groups: the most block symbols of one, and whether `t` is among them. */
static int scan_groups(const Stencil *st, const Symbol *t, bool *holds) {
    if (st->column_lanes <= 0) return 0;
    int most = 0;
    BlockSym syms[GT_MAX_BLOCK_SYMS];
    for (int c = 0; c < st->ncomps;) {
        if (!st->comps[c].columnwise) {
            c++;
            continue;
        }
        int n = 1;
        while (c + n < st->ncomps && st->comps[c + n - 1].column_fuse_next) n++;
        int k = cpu_block_group(st, &st->comps[c], n, syms);
        if (k > most) most = k;
        for (int x = 0; x < k; x++)
            if (syms[x].sym == t) *holds = true;
        c += n;
    }
    return most;
}

int cpu_block_buffers(const Stencil *st) {
    bool unused = false;
    return scan_groups(st, NULL, &unused);
}

bool cpu_block_holds(const Stencil *st, const Symbol *t) {
    bool holds = false;
    scan_groups(st, t, &holds);
    return holds;
}
