/*
 * The order-independence check of an aliased output and input (alias_check.h).
 */
#include "call/alias_check.h"

#include "analysis/aliasing.h"

#include <stdlib.h>
#include <string.h>

/* Above this many bytes of state the check gives up and the call is refused as before. */
#define STATE_MAX_BYTES ((size_t)64 << 20)

/* Points [lo, hi) along each axis (I, J, K) of the index space. */
typedef struct {
    int64_t lo[3], hi[3];
} Rect;

/* The sorted, distinct cut positions of one axis: cell c is [cut[c], cut[c + 1]). */
typedef struct {
    int64_t *cut;
    int n;
} Axis;

typedef struct {
    const Stencil *st;
    const Bound *b;
    const AliasSummary *sum;
    int ws, rs;   /* the slots of the written and the read field */
    Axis ax[3];
    size_t ncells;
    unsigned char *dirty; /* per cell: some statement may have stored another value there */
    unsigned char *own;   /* per cell and temporary: holds the input's value at the point */
    int *stamp;           /* per cell: the last op that visited it (boxes of an op may overlap) */
    int ntemps;
    /* per op, its points in each of its boxes (one rect without boxes): rects[rect0[op]..
     * rect0[op + 1]), live where not empty */
    int *rect0;
    Rect *rects;
    unsigned char *live;
} Check;

/* The points op runs on inside box k (k < 0: no box) in the plane, and its levels; false
 * when there are none. Box bounds are placed from the anchors of regions (Bound.domain[3..6]). */
static bool op_rect(const Check *c, const AliasOp *op, int k, Rect *r) {
    const int64_t *n = c->b->domain;
    for (int a = 0; a < 2; a++) {
        r->lo[a] = op->ext[2 * a];
        r->hi[a] = n[a] + op->ext[2 * a + 1];
        if (k < 0) continue;
        const Box *box = &op->boxes[k];
        for (int e = 0; e < 2; e++) {
            if (!box->has[2 * a + e]) continue;
            AxisBound ab = box->b[2 * a + e];
            int64_t v = n[3 + 2 * a + ab.level] + ab.offset;
            if (e == 0 && v > r->lo[a]) r->lo[a] = v;
            if (e == 1 && v < r->hi[a]) r->hi[a] = v;
        }
    }
    int64_t ks = bound_level(op->kstart, n[2], c->b->kvals), ke = bound_level(op->kend, n[2], c->b->kvals);
    r->lo[2] = ks < 0 ? 0 : ks;
    r->hi[2] = ke > n[2] ? n[2] : ke;
    return r->lo[0] < r->hi[0] && r->lo[1] < r->hi[1] && r->lo[2] < r->hi[2];
}

/* The first cell starting at or after v (cuts are sorted; v is one of them for op rects). */
static int cell_at(const Axis *x, int64_t v) {
    int lo = 0, hi = x->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (x->cut[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Adds v to the sorted, distinct cuts of x (room for it was allocated). */
static void add_cut(Axis *x, int64_t v) {
    int at = cell_at(x, v);
    if (at < x->n && x->cut[at] == v) return;
    memmove(x->cut + at + 1, x->cut + at, sizeof *x->cut * (size_t)(x->n - at));
    x->cut[at] = v;
    x->n++;
}

/* Every op's points, and their edges as the cuts of each axis. False with MemoryError. */
static bool make_axes(Check *c) {
    const AliasSummary *sum = c->sum;
    size_t nrects = 0;
    for (int i = 0; i < sum->nops; i++) nrects += sum->ops[i].nboxes ? (size_t)sum->ops[i].nboxes : 1;
    c->rect0 = malloc(sizeof(int) * ((size_t)sum->nops + 1));
    c->rects = malloc(sizeof(Rect) * (nrects + 1));
    c->live = malloc(nrects + 1);
    for (int a = 0; a < 3; a++) {
        c->ax[a].cut = malloc(sizeof(int64_t) * (2 * nrects + 1));
        c->ax[a].n = 0;
    }
    if (!c->rect0 || !c->rects || !c->live || !c->ax[0].cut || !c->ax[1].cut || !c->ax[2].cut) {
        PyErr_NoMemory();
        return false;
    }
    int n = 0;
    for (int i = 0; i < sum->nops; i++) {
        const AliasOp *op = &sum->ops[i];
        c->rect0[i] = n;
        for (int k = op->nboxes ? 0 : -1; k < op->nboxes; k++, n++) {
            Rect *r = &c->rects[n];
            c->live[n] = op_rect(c, op, k, r);
            for (int a = 0; c->live[n] && a < 3; a++) {
                add_cut(&c->ax[a], r->lo[a]);
                add_cut(&c->ax[a], r->hi[a]);
            }
        }
    }
    c->rect0[sum->nops] = n;
    return true;
}

static size_t cells_along(const Axis *x) { return x->n > 1 ? (size_t)x->n - 1 : 0; }

/* The state tables; 0 when they would be too large (the check gives up), -1 on MemoryError. */
static int make_state(Check *c) {
    size_t n = 1;
    for (int a = 0; a < 3; a++)
        if (__builtin_mul_overflow(n, cells_along(&c->ax[a]), &n)) return 0;
    size_t per = 1 + (size_t)c->ntemps + sizeof(int), bytes;
    if (__builtin_mul_overflow(n, per, &bytes) || bytes > STATE_MAX_BYTES) return 0;
    c->ncells = n;
    c->dirty = calloc(n + 1, 1);
    c->own = calloc(n * (size_t)c->ntemps + 1, 1);
    c->stamp = malloc(sizeof(int) * (n + 1));
    if (c->dirty == NULL || c->own == NULL || c->stamp == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < n; i++) c->stamp[i] = -1;
    return 1;
}

/* Whether op's value at cell i is the input's original value there. */
static bool value_is_input(const Check *c, const AliasOp *op, size_t i) {
    if (op->copy_of == c->rs) return true; /* read at a clean point (checked) */
    if (op->copy_of == c->ws) return !c->dirty[i];
    int t = op->copy_of - c->st->nfields;
    return t >= 0 && t < c->ntemps && c->own[i * (size_t)c->ntemps + (size_t)t];
}

/* Op at cell i, once: its timed reads of the input first, then its store. */
static bool step(Check *c, int opi, size_t i) {
    const AliasOp *op = &c->sum->ops[opi];
    if (c->stamp[i] == opi) return true;
    c->stamp[i] = opi;
    for (int k = 0; k < op->nreads; k++) {
        const AliasRead *rd = &c->sum->reads[op->first_read + k];
        if (rd->slot == c->rs && rd->timed && c->dirty[i]) return false;
    }
    if (op->target < 0) return true;
    bool orig = value_is_input(c, op, i);
    if (op->target == c->ws) {
        /* a store of the input's own value leaves the point as it is; a dirty point stays
         * dirty even when a copy puts the original value back, since a backend may have read
         * the point ahead (the cuda backend's slabs load a tile before its statements run) */
        if (!orig) c->dirty[i] = 1;
    } else if (op->target >= c->st->nfields) {
        unsigned char *o = &c->own[i * (size_t)c->ntemps + (size_t)(op->target - c->st->nfields)];
        *o = op->may ? (unsigned char)(*o && orig) : (unsigned char)orig;
    }
    return true;
}

/* Follows the ops in program order over the cells; false when a timed read meets a dirty
 * point. */
static bool run_ops(Check *c) {
    size_t ny = cells_along(&c->ax[1]), nz = cells_along(&c->ax[2]);
    for (int opi = 0; opi < c->sum->nops; opi++) {
        const AliasOp *op = &c->sum->ops[opi];
        int t = op->target - c->st->nfields;
        if (op->shifted_write && t >= 0 && t < c->ntemps) /* stores at other levels: anywhere */
            for (size_t i = 0; i < c->ncells; i++) c->own[i * (size_t)c->ntemps + (size_t)t] = 0;
        for (int k = c->rect0[opi]; k < c->rect0[opi + 1]; k++) {
            if (!c->live[k]) continue;
            const Rect *r = &c->rects[k];
            int x0 = cell_at(&c->ax[0], r->lo[0]), x1 = cell_at(&c->ax[0], r->hi[0]);
            int y0 = cell_at(&c->ax[1], r->lo[1]), y1 = cell_at(&c->ax[1], r->hi[1]);
            int z0 = cell_at(&c->ax[2], r->lo[2]), z1 = cell_at(&c->ax[2], r->hi[2]);
            for (int x = x0; x < x1; x++)
                for (int y = y0; y < y1; y++)
                    for (int z = z0; z < z1; z++)
                        if (!step(c, opi, ((size_t)x * ny + (size_t)y) * nz + (size_t)z)) return false;
        }
    }
    return true;
}

/* The cells [*first, *last) of axis x that meet the points [lo, hi). */
static void cells_meeting(const Axis *x, int64_t lo, int64_t hi, int *first, int *last) {
    int n = (int)cells_along(x);
    int a = cell_at(x, lo), b = cell_at(x, hi);
    /* the cell holding lo starts at or before it; cells from b on start at or after hi */
    if (a == x->n || (a > 0 && x->cut[a] > lo)) a--;
    *first = a < 0 ? 0 : a;
    *last = b > n ? n : b;
}

/* Whether any dirty cell meets r. */
static bool meets_dirty(const Check *c, const Rect *r) {
    size_t ny = cells_along(&c->ax[1]), nz = cells_along(&c->ax[2]);
    int lo[3], hi[3];
    for (int a = 0; a < 3; a++) cells_meeting(&c->ax[a], r->lo[a], r->hi[a], &lo[a], &hi[a]);
    for (int x = lo[0]; x < hi[0]; x++)
        for (int y = lo[1]; y < hi[1]; y++)
            for (int z = lo[2]; z < hi[2]; z++)
                if (c->dirty[((size_t)x * ny + (size_t)y) * nz + (size_t)z]) return true;
    return false;
}

/* Whether every untimed read of the input stays off the dirty points. */
static bool reads_clean(const Check *c) {
    for (int opi = 0; opi < c->sum->nops; opi++) {
        const AliasOp *op = &c->sum->ops[opi];
        for (int k = 0; k < op->nreads; k++) {
            const AliasRead *rd = &c->sum->reads[op->first_read + k];
            if (rd->slot != c->rs || rd->timed) continue;
            for (int bx = c->rect0[opi]; bx < c->rect0[opi + 1]; bx++) {
                if (!c->live[bx]) continue;
                Rect r = c->rects[bx];
                for (int a = 0; a < 3; a++) {
                    r.lo[a] += rd->off[a];
                    r.hi[a] += rd->off[a];
                }
                if (rd->anyk) r.lo[2] = INT64_MIN, r.hi[2] = INT64_MAX;
                if (meets_dirty(c, &r)) return false;
            }
        }
    }
    return true;
}

/* Fields this check reasons about: I, J and K axes, no data dimensions. */
static bool plain_field(const Symbol *s) { return s->axes == AX_IJK && s->ndata == 0; }

int alias_order_free(const Stencil *st, const Bound *b, const Symbol *w, const Symbol *r) {
    const AliasSummary *sum = st->alias;
    if (sum == NULL || !plain_field(w) || !plain_field(r)) return 0;
    if (!b->domain[0] || !b->domain[1] || !b->domain[2]) return 1; /* nothing runs */
    for (int i = 0; i < sum->nops; i++)
        if (sum->ops[i].target == w->slot && sum->ops[i].shifted_write) return 0;
    Check c = {.st = st, .b = b, .sum = sum, .ws = w->slot, .rs = r->slot,
               .ntemps = sum->nslots - st->nfields};
    int result = -1;
    if (!make_axes(&c)) goto done;
    int made = make_state(&c);
    if (made <= 0) {
        result = made;
        goto done;
    }
    result = run_ops(&c) && reads_clean(&c);
done:
    for (int a = 0; a < 3; a++) free(c.ax[a].cut);
    free(c.rect0);
    free(c.rects);
    free(c.live);
    free(c.dirty);
    free(c.own);
    free(c.stamp);
    return result;
}
