/*
 * Temporaries read on K levels that no interval writes (the level-aware part of temps.c).
 *
 * temps.c counts a write in any interval as covering every level. Here each interval's
 * levels are taken into account: `t = a` in interval(0, 1) and `out = t` in interval(1, None)
 * reads t on levels 1.. that nothing writes.
 *
 *   error    every level a read of a temporary touches (its interval shifted by the read's
 *            constant K offset, inside the domain) is written by no interval, whatever the
 *            domain's K size: its values there are undefined;
 *   warning  some of those levels are written by no interval, for some K size.
 *
 * A write counts for the levels of its interval (shifted by its K offset, `t[0, 0, 1] = ...`)
 * even when it sits in a branch or a region
 * (temps.c's path warnings cover those); a sequential sweep reading the previous level of a
 * temporary written at every level (`t[0, 0, -1]` in interval(1, None) of a temporary written
 * in interval(0, None)) reads written levels and is fine. Reads at a variable or absolute K
 * index are not checked (their levels are known only at run time).
 *
 * Interval bounds count from the bottom (a) or from the top (N + b), so which levels are
 * covered depends on the K size N only through comparisons of a with N + b, that is up to
 * N = max(a) - min(b) + 1: the check runs every N from the smallest domain the stencil
 * accepts to that one, and stays quiet when that span is very large (huge offsets).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

/* The largest K size the check enumerates; beyond, it says nothing rather than spend time. */
enum { MAX_LEVELS = 1024 };

typedef struct {
    int temp;
    AxisBound start, end;
    int dk; /* an off-centre write (`t[0, 0, 1] = ...` in a sweep) writes its interval shifted */
} LevelWrite;

typedef struct {
    int temp;
    AxisBound start, end;
    int dk;
    int line, col;
} LevelRead;

typedef struct {
    Stencil *st;
    LevelWrite *writes;
    int nwrites, capw;
    LevelRead *reads;
    int nreads, capr;
    const Interval *in; /* the interval being collected */
    bool nomem;
} Levels;

/* IJ temporaries hold one plane from level to level: any level's write serves every later
 * level, so they are not checked level by level. */
static bool is_user_temp(const Symbol *s) {
    return s->kind == SYM_TEMP && !s->is_mask && (s->axes & AX_K);
}

static bool grow(void **items, int *cap, int n, size_t size) {
    if (n < *cap) return true;
    int ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*items, (size_t)ncap * size);
    if (p == NULL) return false;
    *items = p;
    *cap = ncap;
    return true;
}

static void collect_read(void *ctx, Expr *e) {
    Levels *L = ctx;
    const Symbol *s = e->field.sym;
    if (!is_user_temp(s) || e->field.kexpr != NULL || e->field.kabs || L->nomem) return;
    if (!grow((void **)&L->reads, &L->capr, L->nreads, sizeof *L->reads)) {
        L->nomem = true;
        return;
    }
    L->reads[L->nreads++] = (LevelRead){s->index, L->in->start, L->in->end, e->field.off[2],
                                        e->line, e->col};
}

static void collect_write(Levels *L, const Symbol *t, int dk) {
    if (!is_user_temp(t) || L->nomem) return;
    for (int i = L->nwrites - 1; i >= 0; i--) /* once per interval and offset is enough */
        if (L->writes[i].temp == t->index && L->writes[i].dk == dk &&
            bound_cmp(L->writes[i].start, L->in->start) == 0 &&
            bound_cmp(L->writes[i].end, L->in->end) == 0)
            return;
    if (!grow((void **)&L->writes, &L->capw, L->nwrites, sizeof *L->writes)) {
        L->nomem = true;
        return;
    }
    L->writes[L->nwrites++] = (LevelWrite){t->index, L->in->start, L->in->end, dk};
}

static void collect(Levels *L, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        switch (s->kind) {
        case S_ASSIGN:
            expr_visit_fields(s->assign.value, collect_read, L);
            collect_write(L, s->assign.target, s->assign.koff);
            break;
        case S_IF:
            expr_visit_fields(s->if_.cond, collect_read, L);
            collect(L, &s->if_.then);
            collect(L, &s->if_.els);
            break;
        case S_WHILE:
            expr_visit_fields(s->while_.cond, collect_read, L);
            collect(L, &s->while_.body);
            break;
        case S_REGION:
            collect(L, &s->region.body);
            break;
        }
    }
}

/* A bound as a level for K size n, in 64 bits (offsets are ints: no overflow). */
static long long at(AxisBound b, long long n) {
    return (b.level ? n : 0) + b.offset;
}

static void track(long long *lo, long long *hi, AxisBound b, long long shift) {
    long long v = (long long)b.offset + shift;
    if (b.level == 0 && v > *lo) *lo = v; /* the largest bottom-anchored point */
    if (b.level == 1 && v < *hi) *hi = v; /* the smallest top-anchored point */
}

/* Per K size n: cover[t * (n + 1) + k] counts the writes of temp t over level k (a
 * difference array turned into a prefix count of covered levels). */
static bool check_size(Levels *L, int nt, long long n, long long *cover, unsigned char *state) {
    size_t row = (size_t)n + 1;
    memset(cover, 0, (size_t)nt * row * sizeof *cover);
    for (int w = 0; w < L->nwrites; w++) {
        const LevelWrite *x = &L->writes[w];
        long long a = at(x->start, n) + x->dk, b = at(x->end, n) + x->dk;
        if (a < 0) a = 0;
        if (b > n) b = n;
        if (a >= b) continue;
        cover[(size_t)x->temp * row + (size_t)a] += 1;
        cover[(size_t)x->temp * row + (size_t)b] -= 1;
    }
    for (int t = 0; t < nt; t++) { /* covered[k] = 1 if level k is written; then prefix sums */
        long long *c = &cover[(size_t)t * row], depth = 0, sum = 0;
        for (size_t k = 0; k < row; k++) {
            depth += c[k];
            c[k] = sum;
            sum += k < (size_t)n && depth > 0;
        }
    }
    for (int r = 0; r < L->nreads; r++) {
        const LevelRead *x = &L->reads[r];
        long long a = at(x->start, n) + x->dk, b = at(x->end, n) + x->dk;
        if (a < 0) a = 0;
        if (b > n) b = n;
        if (a >= b) continue; /* reads nothing inside the domain at this size */
        const long long *c = &cover[(size_t)x->temp * row];
        long long written = c[b] - c[a];
        /* state bits: 1 read something, 2 some size read only unwritten levels,
         * 4 some size read some unwritten level, 8 some size read a written level */
        state[r] |= 1;
        if (written == 0) state[r] |= 2 | 4;
        else state[r] |= 8;
        if (written < b - a) state[r] |= 4;
    }
    return true;
}

/* A temporary written nowhere is temps.c's error already ("never written anywhere"). */
static bool written_somewhere(const Levels *L, int temp) {
    for (int w = 0; w < L->nwrites; w++)
        if (L->writes[w].temp == temp) return true;
    return false;
}

static void report(Levels *L, const unsigned char *state) {
    Stencil *st = L->st;
    bool *said = calloc((size_t)st->ntemps + 1, sizeof(bool));
    if (said == NULL) {
        diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
        return;
    }
    for (int r = 0; r < L->nreads; r++) {
        const LevelRead *x = &L->reads[r];
        const Symbol *s = st->temps[x->temp];
        if (said[x->temp] || !(state[r] & 1) || !written_somewhere(L, x->temp)) continue;
        if ((state[r] & 2) && !(state[r] & 8)) {
            said[x->temp] = true;
            diag_error(st, DIAG_SEMANTIC, x->line, x->col,
                       "temporary '%s' is read here on K levels that no interval writes (it is "
                       "written only on other levels), so its values would be undefined; write "
                       "it in an interval that covers these levels",
                       s->name);
        } else if (state[r] & 4) {
            said[x->temp] = true;
            diag_warning(st, x->line, x->col,
                         "temporary '%s' is read here on K levels some of which no interval "
                         "writes (for some K sizes), so it may hold undefined values there",
                         s->name);
        }
    }
    free(said);
}

bool checks_temporary_levels(Stencil *st) {
    Levels L = {.st = st};
    /* run-time interval bounds are known at the call only: the levels are not checked then */
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++)
            if (st->comps[c].intervals[i].start.sym || st->comps[c].intervals[i].end.sym)
                return true;
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++) {
            L.in = &st->comps[c].intervals[i];
            collect(&L, &L.in->body);
        }
    bool ok = !L.nomem;
    if (!ok) diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    if (ok && L.nreads > 0 && L.nwrites > 0) {
        /* the K sizes where the order of the bounds can change, from the smallest accepted */
        long long lo = 0, hi = 0;
        for (int w = 0; w < L.nwrites; w++) {
            track(&lo, &hi, L.writes[w].start, L.writes[w].dk);
            track(&lo, &hi, L.writes[w].end, L.writes[w].dk);
        }
        for (int r = 0; r < L.nreads; r++) {
            track(&lo, &hi, L.reads[r].start, L.reads[r].dk);
            track(&lo, &hi, L.reads[r].end, L.reads[r].dk);
        }
        long long first = stencil_min_k_levels(st), last = lo - hi + 2;
        if (first < 1) first = 1;
        if (last < first) last = first;
        if (last <= MAX_LEVELS) {
            int nt = st->ntemps;
            long long *cover = malloc(((size_t)nt + 1) * ((size_t)last + 1) * sizeof *cover);
            unsigned char *state = calloc((size_t)L.nreads, 1);
            ok = cover != NULL && state != NULL;
            if (!ok) diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
            for (long long n = first; ok && n <= last; n++)
                ok = check_size(&L, nt, n, cover, state);
            if (ok) report(&L, state);
            free(cover);
            free(state);
        }
    }
    free(L.writes);
    free(L.reads);
    return ok && st->diag.kind == DIAG_NONE;
}
