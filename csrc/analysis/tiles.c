/*
 * Tile extents. The backends compute a stencil tile by tile (cpu tiles, cuda thread blocks),
 * each tile recomputing on its halo the temporaries it reads there. Without regions a
 * statement's analysed extent is that halo. Per-region extents (extents.c) clip a
 * temporary's extent to what the regions read of the whole domain: region[I[1]:] reading
 * t[-1, 0, 0] needs t from the domain's first point only, but every tile needs t one point
 * left of its own first point. So a tile runs each top-level statement on its tile extent:
 * the analysed extent widened, as the extent analysis does but ignoring region boxes, by
 * what later statements read of the temporaries it writes. Beyond the tile a backend stays
 * inside the analysed extent in the domain (the call checked the arrays for that, and no
 * point outside it is read), so the tile extent only matters at the edges between tiles.
 * Tiles are independent (their buffers are private), so a read in any later statement of
 * the stencil counts.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

typedef struct {
    Stencil *st;
    int (*need)[4]; /* per temporary */
    const int *ext; /* the tile extent of the statement visited */
} TileCtx;

/* Widens e (ilo, ihi, jlo, jhi) to hold x shifted by (di, dj). */
static void widen_by(int *e, const int *x, int di, int dj) {
    if (x[0] + di < e[0]) e[0] = x[0] + di;
    if (x[1] + di > e[1]) e[1] = x[1] + di;
    if (x[2] + dj < e[2]) e[2] = x[2] + dj;
    if (x[3] + dj > e[3]) e[3] = x[3] + dj;
}

static bool is_temp(const Symbol *s) { return s->kind == SYM_TEMP && s->has_access; }

static void read_need(void *ctx, Expr *e) {
    TileCtx *T = ctx;
    const Symbol *s = e->field.sym;
    if (is_temp(s)) widen_by(T->need[s->index], T->ext, e->field.off[0], e->field.off[1]);
}

static void read_halo(void *ctx, Expr *e) {
    TileCtx *T = ctx;
    Symbol *s = e->field.sym;
    if (is_temp(s)) widen_by(s->tile_hext, T->ext, e->field.off[0], e->field.off[1]);
}

/* Every read of the statement (guards, values, K indices, while conditions and bodies)
 * through `visit` (if any); for every temporary it writes, its need widens `widen_ext` (the
 * statement's tile extent), or (mark_writes) its buffer's halo holds the tile extent. */
static void visit_stmt(TileCtx *T, const Stmt *s, FieldVisitor visit, int *widen_ext, bool mark_writes) {
    if (visit) expr_visit_fields(s->guard, visit, T);
    if (s->kind == S_ASSIGN) {
        if (visit) {
            expr_visit_fields(s->assign.value, visit, T);
            expr_visit_fields(s->assign.kexpr, visit, T);
        }
        Symbol *t = s->assign.target;
        if (is_temp(t)) {
            if (widen_ext) widen_by(widen_ext, T->need[t->index], 0, 0);
            if (mark_writes) widen_by(t->tile_hext, T->ext, 0, 0);
        }
    } else if (s->kind == S_WHILE) {
        if (visit) expr_visit_fields(s->while_.cond, visit, T);
        for (int i = 0; i < s->while_.body.n; i++)
            visit_stmt(T, s->while_.body.items[i], visit, widen_ext, mark_writes);
    }
}

bool tile_extents(Stencil *st) {
    TileCtx T = {.st = st, .need = calloc((size_t)st->ntemps + 1, sizeof *T.need)};
    if (T.need == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    /* from the last statement to the first: a statement's tile extent, then what it needs */
    for (int c = st->ncomps - 1; c >= 0; c--)
        for (int i = st->comps[c].nintervals - 1; i >= 0; i--) {
            const StmtList *l = &st->comps[c].intervals[i].body;
            for (int k = l->n - 1; k >= 0; k--) {
                Stmt *s = l->items[k];
                memcpy(s->tile_extent, s->horizontal_extent, sizeof s->tile_extent);
                T.ext = s->tile_extent;
                visit_stmt(&T, s, NULL, s->tile_extent, false);
                visit_stmt(&T, s, read_need, NULL, false);
            }
        }
    /* each temporary's buffer holds every point a tile writes or reads of it */
    for (int t = 0; t < st->ntemps; t++) {
        Symbol *s = st->temps[t];
        memset(s->tile_hext, 0, sizeof s->tile_hext);
        if (!s->has_access) continue;
        const Extent *a = &s->access;
        int acc[4] = {a->lo[0], a->hi[0], a->lo[1], a->hi[1]};
        widen_by(s->tile_hext, acc, 0, 0);
    }
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++) {
            const StmtList *l = &st->comps[c].intervals[i].body;
            for (int k = 0; k < l->n; k++) {
                T.ext = l->items[k]->tile_extent;
                visit_stmt(&T, l->items[k], read_halo, NULL, true);
            }
        }
    free(T.need);
    return true;
}
