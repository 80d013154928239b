/*
 * Execution-order freedom the backends may use. A FORWARD or BACKWARD computation runs
 * level by level: at each K level, each statement over the whole plane. When no statement
 * of the computation reads, with a horizontal offset, anything the computation writes, and
 * every statement runs on the compute domain itself (zero extent, no region), the planes
 * never exchange values: each (i, j) column can run its whole K sweep on its own, which
 * walks memory contiguously in C-ordered arrays.
 */
#include "analysis/analysis.h"

typedef struct {
    const Computation *comp;  /* shifted reads of what this computation writes are fatal */
    const Computation *other; /* ... and of what this one writes (NULL: none) */
    bool ok;
} ColumnCtx;

static bool written_in(const Computation *c, const Symbol *sym);

static bool list_writes(const StmtList *l, const Symbol *sym) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        if (s->kind == S_ASSIGN && s->assign.target == sym) return true;
        if (s->kind == S_WHILE && list_writes(&s->while_.body, sym)) return true;
    }
    return false;
}

static bool written_in(const Computation *c, const Symbol *sym) {
    for (int i = 0; i < c->nintervals; i++)
        if (list_writes(&c->intervals[i].body, sym)) return true;
    return false;
}

static void check_read(void *ctx, Expr *e) {
    ColumnCtx *C = ctx;
    if ((e->field.off[0] || e->field.off[1]) &&
        (written_in(C->comp, e->field.sym) || (C->other && written_in(C->other, e->field.sym))))
        C->ok = false;
}

static void check_list(ColumnCtx *C, const StmtList *l) {
    for (int i = 0; i < l->n && C->ok; i++) {
        const Stmt *s = l->items[i];
        const int *h = s->horizontal_extent;
        if (h[0] || h[1] || h[2] || h[3] || s->nboxes) {
            C->ok = false;
            return;
        }
        expr_visit_fields(s->guard, check_read, C);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, check_read, C);
            /* a write's variable K offset reads too (temporaries: a checked level) */
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, check_read, C);
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, check_read, C);
            check_list(C, &s->while_.body);
        }
    }
}

static bool columnwise_against(const Computation *comp, const Computation *other) {
    ColumnCtx C = {comp, other, true};
    for (int i = 0; i < comp->nintervals && C.ok; i++)
        check_list(&C, &comp->intervals[i].body);
    return C.ok;
}

/* ---- column-local temporaries ------------------------------------------------------ */

enum { GROUP_NONE = -1, GROUP_MANY = -2 };

typedef struct {
    int *group; /* per temporary: the one column group accessing it, or GROUP_* */
    int here;   /* the group of the computation walked, or GROUP_MANY outside groups */
    int widest; /* bytes of the widest value a group stores */
    int nodes;  /* expression nodes of the group walked */
    int most;   /* ... of the largest group */
    int64_t total; /* ... of every computation */
} LocalCtx;

/* Above this many expression nodes in a column group's statements, one lane: a sweep that
 * long has independent work enough at each level for the core to overlap, and four lanes are
 * four copies of it to compile. Measured (one thread, 48x48 and 32x32 columns of 138 levels,
 * a saturation-adjustment-style FORWARD sweep of 25 to 230 assignments, 420 to 3,900 nodes,
 * with nested field conditionals and exp/log/pow): one lane as fast as four within the
 * noise (13.8 vs 14.8 ms, 46.8 vs 46.2 ms, 65.5 vs 66.2 ms), its build 2-4x faster (0.3 vs
 * 1.2 s at 230). A tridiagonal solve (30 nodes) or an advection step (26) is the short
 * chain of dependent divides lanes are for. */
enum { GT_LANES_MAX_NODES = 128 };

static void count_node(void *ctx, Expr *e) {
    (void)e;
    ((LocalCtx *)ctx)->nodes++;
    ((LocalCtx *)ctx)->total++;
}

static void note_access(LocalCtx *L, const Symbol *s) {
    if (s->kind != SYM_TEMP) return;
    int *g = &L->group[s->index];
    *g = *g == GROUP_NONE || *g == L->here ? L->here : GROUP_MANY;
}

static void note_read(void *ctx, Expr *e) {
    note_access(ctx, e->field.sym);
}

static void note_list(LocalCtx *L, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        expr_visit_fields(s->guard, note_read, L);
        expr_visit(s->guard, count_node, L);
        if (s->kind == S_ASSIGN) {
            expr_visit(s->assign.value, count_node, L);
            expr_visit_fields(s->assign.value, note_read, L);
            /* a write's variable K offset reads too (temporaries: a checked level) */
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, note_read, L);
            note_access(L, s->assign.target);
            int size = dtype_size(s->assign.target->dtype);
            if (L->here >= 0 && size > L->widest) L->widest = size;
        } else if (s->kind == S_WHILE) {
            expr_visit(s->while_.cond, count_node, L);
            expr_visit_fields(s->while_.cond, note_read, L);
            note_list(L, &s->while_.body);
        }
    }
}

/* The facts of the column groups the backend reads: which temporaries are column-local, and
 * how a bundle's lanes are chosen. A temporary that only one column group touches lives and
 * dies inside each column's sweep (the group reads nothing it writes at a horizontal offset),
 * so its buffer needs one bundle of columns, not the whole tile: it stays in L1 and its
 * lanes are adjacent in memory. */
static bool note_column_groups(Stencil *st) {
    LocalCtx L = {.group = arena_alloc(&st->arena, sizeof(int) * (size_t)(st->ntemps + 1))};
    if (L.group == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    for (int t = 0; t < st->ntemps; t++)
        L.group[t] = GROUP_NONE;
    int group = 0;
    for (int c = 0; c < st->ncomps; c++) {
        const Computation *comp = &st->comps[c];
        L.here = comp->columnwise ? group : GROUP_MANY;
        for (int i = 0; i < comp->nintervals; i++)
            note_list(&L, &comp->intervals[i].body);
        if (comp->columnwise && L.nodes > L.most) L.most = L.nodes;
        if (!comp->columnwise || !comp->column_fuse_next) L.nodes = 0;
        if (comp->columnwise && !comp->column_fuse_next) group++;
    }
    for (int t = 0; t < st->ntemps; t++)
        /* an IJ temporary's bundle buffer would need a K stride of 0, one with data
         * dimensions element strides: they keep a tile buffer */
        st->temps[t]->column_local = L.group[t] >= 0 && st->temps[t]->axes == AX_IJK &&
                                     st->temps[t]->ndata == 0;
    /* lanes: enough independent chains to cover a divide's latency; more lanes interleave
     * more memory streams than the prefetchers follow well (benchmarks/: 4 is best for
     * float32 and float64 alike on the tridiagonal solver and the advection step); one for
     * long sweeps (GT_LANES_MAX_NODES) */
    st->column_lanes = group == 0 ? 0 : L.most > GT_LANES_MAX_NODES ? 1 : 4;
    st->point_nodes = L.total;
    /* Where the lanes sit: adjacent columns, or a quarter of the tile's row apart, so that
     * each lane walks its own run of consecutive columns, a sequential stream per array the
     * prefetchers follow. Spread lanes sweep 64-bit columns 15-25% faster (benchmarks/:
     * thomas and advection, float64); for float32 adjacent lanes were as fast or faster. */
    st->column_spread = group > 0 && L.widest >= 8 && st->column_lanes > 1;
    return true;
}

/* ---- sweeps no value crosses a level of ---------------------------------------------
 * A FORWARD or BACKWARD computation runs level after level so that a level can read what the
 * levels before it wrote. One that reads nothing it writes at another level computes the
 * same values in any order of its levels, and runs as PARALLEL: each statement over all its
 * levels, in loop nests along K in C order that keep its temporaries in registers and
 * vectorise (nests.c, registers.c), instead of a scalar sweep of one column at a time
 * (a saturation adjustment written as FORWARD: 62-87 ms to 35 ms). It qualifies when
 *   - its interval bounds are constants (the call checks run-time bounds by the policy);
 *   - it writes at the level itself only, and only arrays with all three axes (an IJ field
 *     written at every level carries a value from one level to the next without an offset);
 *   - it reads no temporary it writes at another level (constant, variable or absolute K),
 *     and no argument field at another level at all: an input may share memory with an
 *     output the computation writes (call.c accepts such a call where the policy orders the
 *     levels), and then a read at K - 1 sees the previous level's new value.
 */
typedef struct LevelCtx {
    const Computation *comp;
    bool ok;
} LevelCtx;

static void level_read(void *ctx, Expr *e) {
    LevelCtx *L = ctx;
    const Symbol *s = e->field.sym;
    bool other_level = e->field.off[2] || e->field.kexpr || e->field.kabs;
    if (other_level && (s->kind == SYM_FIELD || written_in(L->comp, s))) L->ok = false;
}

static void levels_list(LevelCtx *L, const StmtList *l) {
    for (int i = 0; i < l->n && L->ok; i++) {
        const Stmt *s = l->items[i];
        expr_visit_fields(s->guard, level_read, L);
        if (s->kind == S_ASSIGN) {
            const Symbol *t = s->assign.target;
            if (s->assign.koff || s->assign.kexpr || (t->axes & AX_IJK) != AX_IJK) L->ok = false;
            expr_visit_fields(s->assign.value, level_read, L);
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, level_read, L);
            levels_list(L, &s->while_.body);
        } else {
            L->ok = false;
        }
    }
}

static bool levels_free(const Computation *c) {
    if (c->policy == POLICY_PARALLEL) return false;
    LevelCtx L = {c, true};
    for (int i = 0; i < c->nintervals && L.ok; i++) {
        const Interval *in = &c->intervals[i];
        if (in->start.sym || in->end.sym) return false;
        levels_list(&L, &in->body);
    }
    return L.ok;
}

/* Consecutive column-capable computations may also share the column loop (a tridiagonal
 * solver's FORWARD and BACKWARD sweeps, one column at a time, stay in L1) when neither reads
 * with a horizontal offset what the other writes. A PARALLEL computation is column-capable on
 * the same terms (its statements, each over its K range, then run column by column), but it
 * only joins a group with a FORWARD or BACKWARD one: alone it gains nothing. */
bool schedule_columns(Stencil *st) {
    int n = st->ncomps;
    for (int c = 0; c < n; c++) {
        Computation *comp = &st->comps[c];
        comp->as_written = comp->policy;
        comp->levels_free = levels_free(comp);
        if (comp->levels_free) comp->policy = POLICY_PARALLEL;
    }
    for (int c = 0; c < n; c++) {
        st->comps[c].columnwise = columnwise_against(&st->comps[c], NULL);
        st->comps[c].column_fuse_next = false;
    }
    for (int c = 0; c + 1 < n; c++) {
        Computation *a = &st->comps[c], *b = &st->comps[c + 1];
        a->column_fuse_next =
            a->columnwise && b->columnwise && columnwise_against(a, b) && columnwise_against(b, a);
    }
    for (int first = 0, last; first < n; first = last + 1) {
        bool sweeps = false;
        for (last = first;; last++) {
            sweeps |= st->comps[last].policy != POLICY_PARALLEL;
            if (!st->comps[last].column_fuse_next) break;
        }
        for (int c = first; c <= last && !sweeps; c++)
            st->comps[c].columnwise = st->comps[c].column_fuse_next = false;
    }
    return note_column_groups(st);
}
