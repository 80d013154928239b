/*
 * Horizontal regions on a global grid: the call keywords global_origin= and global_domain=
 * (gregion.h).
 */
#include "call/gregion.h"

#include "call/ints.h"

#include <stdlib.h>
#include <string.h>

/* Entries of global_domain are at most this, so that an anchor plus a region bound's offset
 * (an int) never overflows in a kernel. */
#define GLOBAL_MAX (INT64_C(1) << 62)

/* A tuple of 2 (I, J) or 3 (I, J, K) integers into out; *n gets the count. */
static bool parse_global(PyObject *o, const char *what, int64_t out[3], int *n) {
    return call_ints(o, 2, 3, what, NULL, "a tuple of 2 (I, J) or 3 (I, J, K) integers", out, n);
}

bool gregion_bind(const Stencil *st, PyObject *global_origin, PyObject *global_domain, Bound *b) {
    int64_t *n = b->domain;
    /* the regions refer to the compute domain itself */
    n[3] = 0, n[4] = n[0], n[5] = 0, n[6] = n[1];
    b->global = false;
    bool has_origin = global_origin && global_origin != Py_None;
    if (global_domain == NULL || global_domain == Py_None) {
        if (!has_origin) return true;
        PyErr_SetString(PyExc_ValueError,
                        "global_origin needs global_domain: the size of the grid that the "
                        "horizontal regions refer to");
        return false;
    }
    int64_t go[3] = {0, 0, 0}, ng[3];
    int nd, no = 0;
    if (!parse_global(global_domain, "global_domain", ng, &nd)) return false;
    if (has_origin && !parse_global(global_origin, "global_origin", go, &no)) return false;
    for (int a = 0; a < nd; a++) {
        if (ng[a] < 1 || ng[a] > GLOBAL_MAX) {
            PyErr_Format(PyExc_ValueError,
                         "global_domain has %lld points along %c: it must be between 1 and 2**62",
                         (long long)ng[a], "IJK"[a]);
            return false;
        }
    }
    for (int a = 0; a < (no > nd ? no : nd); a++) {
        int64_t end;
        if (a < no && go[a] < 0) {
            PyErr_Format(PyExc_ValueError, "global_origin is %lld along %c: it must be at least 0",
                         (long long)go[a], "IJK"[a]);
            return false;
        }
        if (a >= nd) {
            PyErr_Format(PyExc_ValueError, "global_origin has a K entry but global_domain has none");
            return false;
        }
        if (__builtin_add_overflow(go[a], n[a], &end) || end > ng[a]) {
            PyErr_Format(PyExc_ValueError,
                         "the domain (%lld points along %c) from global_origin %lld does not lie "
                         "inside global_domain (%lld points along %c)",
                         (long long)n[a], "IJK"[a], (long long)go[a], (long long)ng[a], "IJK"[a]);
            return false;
        }
    }
    for (int a = 0; a < 2; a++) {
        if (n[0] && n[1] && n[2] && ng[a] < st->region_min_domain[a]) {
            /* the whole grid is where the regions' edges must not cross (as for a domain) */
            PyErr_Format(PyExc_ValueError,
                         "global_domain has %lld points along %c, but the stencil's horizontal "
                         "regions need at least %d for its extents to hold",
                         (long long)ng[a], "IJK"[a], st->region_min_domain[a]);
            return false;
        }
        n[3 + 2 * a] = -go[a];
        n[4 + 2 * a] = ng[a] - go[a];
    }
    /* the same placement as without the keywords: nothing to work out per call */
    b->global = !(n[3] == 0 && n[4] == n[0] && n[5] == 0 && n[6] == n[1]);
    return true;
}

/* ---- the reach of this placement -------------------------------------------------------- */

typedef struct {
    const Stencil *st;
    Bound *b;
    int64_t lo[2], hi[2]; /* the points [lo, hi) where the current statement runs */
    bool temp_read;
    bool writes; /* the reach includes the points written */
} RCtx;

/* The points [lo, hi) of the plane where a statement of extent h runs inside one box (NULL:
 * everywhere), the box's bounds placed from anchors (first point, one past the last, per
 * axis); false when there are none. Region box bounds are never run-time bounds. */
static bool box_points(const int64_t *n, const int *h, const Box *box, const int64_t *anchor,
                       int64_t lo[2], int64_t hi[2]) {
    for (int a = 0; a < 2; a++) {
        lo[a] = h[2 * a], hi[a] = n[a] + h[2 * a + 1];
        for (int e = 0; box && e < 2; e++) {
            if (!box->has[2 * a + e]) continue;
            AxisBound ab = box->b[2 * a + e];
            int64_t v = anchor[2 * a + ab.level] + ab.offset;
            if (e == 0 && v > lo[a]) lo[a] = v;
            if (e == 1 && v < hi[a]) hi[a] = v;
        }
    }
    return lo[0] < hi[0] && lo[1] < hi[1];
}

static void note_temp(void *ctx, Expr *e) {
    RCtx *c = ctx;
    if (e->field.sym->slot >= c->st->nfields) c->temp_read = true;
}

/* An access of field slot `slot` at horizontal offset off from every current point. */
static void reach(RCtx *c, int slot, const int *off) {
    if (slot >= c->st->nfields) return; /* temporaries: checked by the box test */
    int64_t *r = c->b->greach[slot];
    for (int a = 0; a < 2; a++) {
        int64_t lo = c->lo[a] + off[a], hi = c->hi[a] + off[a] - c->b->domain[a];
        if (lo < r[2 * a]) r[2 * a] = lo;
        if (hi > r[2 * a + 1]) r[2 * a + 1] = hi;
    }
}

static void note_read(void *ctx, Expr *e) { reach(ctx, e->field.sym->slot, e->field.off); }

static void stmt_fields(const Stmt *s, FieldVisitor fn, void *ctx) {
    expr_visit_fields(s->guard, fn, ctx);
    if (s->kind == S_ASSIGN) {
        expr_visit_fields(s->assign.value, fn, ctx);
        expr_visit_fields(s->assign.kexpr, fn, ctx);
    } else if (s->kind == S_WHILE) {
        expr_visit_fields(s->while_.cond, fn, ctx);
        for (int i = 0; i < s->while_.body.n; i++) stmt_fields(s->while_.body.items[i], fn, ctx);
    }
}

static void stmt_writes(RCtx *c, const Stmt *s) {
    static const int zero[3] = {0, 0, 0};
    if (!c->writes) return;
    if (s->kind == S_ASSIGN) reach(c, s->assign.target->slot, zero);
    else if (s->kind == S_WHILE)
        for (int i = 0; i < s->while_.body.n; i++) stmt_writes(c, s->while_.body.items[i]);
}

static bool stmt_reach(RCtx *c, const Stmt *s) {
    const int64_t *n = c->b->domain;
    const int64_t plain[4] = {0, n[0], 0, n[1]}; /* where the analysis placed the regions */
    c->temp_read = false;
    stmt_fields(s, note_temp, c);
    for (int k = 0; k < (s->nboxes ? s->nboxes : 1); k++) {
        const Box *box = s->nboxes ? &s->boxes[k] : NULL;
        if (!box_points(n, s->horizontal_extent, box, n + 3, c->lo, c->hi)) continue;
        int64_t alo[2], ahi[2];
        bool analysed = box_points(n, s->horizontal_extent, box, plain, alo, ahi);
        for (int a = 0; box && c->temp_read && a < 2; a++) {
            if (analysed && c->lo[a] >= alo[a] && c->hi[a] <= ahi[a]) continue;
            /* the temporaries it reads were computed for the statement's analysed points */
            PyErr_Format(PyExc_ValueError,
                         "line %d: with the domain at global_origin %lld of global_domain %lld "
                         "along %c, the horizontal region of this statement covers the points "
                         "%lld..%lld of the domain's index space, beyond those the stencil was "
                         "analysed for (the region at the grid's edge), where the temporaries "
                         "it reads are not computed; split the grid so that this part's edges "
                         "do not cut the region, or compute the values in the region into an "
                         "argument field",
                         s->line, (long long)-n[3 + 2 * a], (long long)(n[4 + 2 * a] - n[3 + 2 * a]),
                         "IJK"[a], (long long)c->lo[a], (long long)c->hi[a] - 1);
            return false;
        }
        stmt_fields(s, note_read, c);
        stmt_writes(c, s);
    }
    return true;
}

bool gregion_reach(const Stencil *st, Bound *b, bool writes) {
    for (int i = 0; i < st->nfields; i++) memset(b->greach[i], 0, sizeof b->greach[i]);
    RCtx c = {.st = st, .b = b, .writes = writes};
    for (int ci = 0; ci < st->ncomps; ci++) {
        const Computation *comp = &st->comps[ci];
        for (int i = 0; i < comp->nintervals; i++) {
            const StmtList *l = &comp->intervals[i].body;
            for (int k = 0; k < l->n; k++)
                if (!stmt_reach(&c, l->items[k])) return false;
        }
    }
    return true;
}

PyObject *gregion_reach_method(ModuleObject *m, PyObject *args) {
    const Stencil *st = m->st;
    PyObject *domain, *global_origin, *global_domain, *result = NULL;
    if (!PyArg_ParseTuple(args, "OOO:_region_reach", &domain, &global_origin, &global_domain))
        return NULL;
    Bound *b = calloc(1, sizeof *b); /* 30 kB: off the stack of a Python thread */
    if (b == NULL) return PyErr_NoMemory();
    if (!bound_tables(b, st->nparams)) {
        free(b);
        return NULL;
    }
    int64_t n[3];
    int count = 0;
    if (!parse_global(domain, "domain", n, &count)) goto done;
    if (count != 3 || n[0] < 1 || n[1] < 1 || n[2] < 1) {
        PyErr_SetString(PyExc_ValueError, "domain must be 3 integers of at least 1");
        goto done;
    }
    memcpy(b->domain, n, sizeof n);
    if (n[0] < st->region_min_domain[0] || n[1] < st->region_min_domain[1]) {
        PyErr_Format(PyExc_ValueError,
                     "the domain is %lld x %lld in I and J, but the stencil's horizontal regions "
                     "need at least %d x %d points for its extents to hold",
                     (long long)n[0], (long long)n[1], st->region_min_domain[0],
                     st->region_min_domain[1]);
        goto done;
    }
    if (!gregion_bind(st, global_origin, global_domain, b) || !gregion_reach(st, b, false)) goto done;
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD) continue;
        const int64_t *r = b->greach[s->slot];
        PyObject *v = Py_BuildValue("((LL)(LL))", (long long)r[0], (long long)r[1], (long long)r[2],
                                    (long long)r[3]);
        if (v == NULL || PyDict_SetItemString(d, s->name, v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    result = d;
done:
    bound_release(b);
    free(b);
    return result;
}
