/*
 * Temporaries: where each is written and read, on the structured IR in execution order
 * (checks_structure has already put the intervals in that order).
 *
 *   error    a temporary read but never written anywhere: its values would be undefined
 *            (a declaration `tmp: float` without a value does not write it);
 *   warning  a temporary written but never read: the assignment has no effect, and it is
 *            often a misspelt output argument, so the closest argument name is suggested;
 *   warning  a temporary read before it is written on some path: in an earlier statement or
 *            computation than its first write, or after writes that happen only in one branch
 *            of a conditional, in a while loop (which may run zero times) or in a horizontal
 *            region (which covers part of the plane).
 *
 * Reading at a K level that an earlier iteration of the same FORWARD/BACKWARD computation
 * wrote (`t[0, 0, -1]` in FORWARD) is the point of sequential computations and is not
 * flagged. Intervals count as one path: a write in any interval counts for the later ones,
 * whatever K levels it covers; which levels are written and read is templevels.c's check.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

enum { UNSET, MAYBE, SET };

typedef struct {
    bool read, written;
    int rline, rcol; /* first read in source order */
    int wline, wcol; /* first write in source order */
} TempUse;

typedef struct {
    Stencil *st;
    int nt;
    TempUse *use;
    bool *written_in; /* [temp * ncomps + comp] */
    bool *warned;
    int comp;
    Policy policy;
    /* the path state of the statement being checked */
    unsigned char *state;
    int *why; /* line of the construct that left a MAYBE */
} Temps;

static bool is_user_temp(const Symbol *s) {
    return s->kind == SYM_TEMP && !s->is_mask;
}

/* ---- facts: who is read and written, and where first ---------------------------------- */

static bool before(int l1, int c1, int l2, int c2) {
    return l2 == 0 || l1 < l2 || (l1 == l2 && c1 < c2);
}

static void fact_read(void *ctx, Expr *e) {
    Temps *T = ctx;
    const Symbol *s = e->field.sym;
    if (!is_user_temp(s)) return;
    TempUse *u = &T->use[s->index];
    u->read = true;
    if (before(e->line, e->col, u->rline, u->rcol)) u->rline = e->line, u->rcol = e->col;
}

static void facts(Temps *T, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        switch (s->kind) {
        case S_ASSIGN: {
            expr_visit_fields(s->assign.value, fact_read, T);
            /* a write's variable K offset reads too (temporaries: a checked level) */
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, fact_read, T);
            const Symbol *t = s->assign.target;
            if (!is_user_temp(t)) break;
            TempUse *u = &T->use[t->index];
            u->written = true;
            T->written_in[(size_t)t->index * (size_t)T->st->ncomps + (size_t)T->comp] = true;
            if (before(s->line, s->col, u->wline, u->wcol)) u->wline = s->line, u->wcol = s->col;
            break;
        }
        case S_IF:
            expr_visit_fields(s->if_.cond, fact_read, T);
            facts(T, &s->if_.then);
            facts(T, &s->if_.els);
            break;
        case S_WHILE:
            expr_visit_fields(s->while_.cond, fact_read, T);
            facts(T, &s->while_.body);
            break;
        case S_REGION:
            facts(T, &s->region.body);
            break;
        }
    }
}

/* ---- written but never read: suggest the closest argument ----------------------------- */

/* Optimal-string-alignment distance (Levenshtein with adjacent transpositions: "otu" is one
 * edit from "out"); names longer than 63 characters get no suggestion. */
static int edit_distance(const char *a, const char *b) {
    enum { N = 64 };
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la >= N || lb >= N) return N;
    _Static_assert(N * N * sizeof(int) <= 16384, "the distance table fits the stack");
    int d[N][N];
    for (int i = 0; i <= la; i++)
        d[i][0] = i;
    for (int j = 0; j <= lb; j++)
        d[0][j] = j;
    for (int i = 1; i <= la; i++) {
        for (int j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

/* The field argument closest to `name`, if close enough to be a likely typo. */
static const char *closest_argument(const Stencil *st, const char *name) {
    const char *best = NULL;
    int bestd = 0;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *p = st->params[i];
        if (p->kind != SYM_FIELD) continue;
        int d = edit_distance(name, p->name);
        int len =
            (int)strlen(p->name) > (int)strlen(name) ? (int)strlen(p->name) : (int)strlen(name);
        if (d >= 1 && 3 * d <= len && (best == NULL || d < bestd)) best = p->name, bestd = d;
    }
    return best;
}

static void unread_and_unwritten(Temps *T) {
    Stencil *st = T->st;
    for (int t = 0; t < T->nt; t++) {
        const Symbol *s = st->temps[t];
        const TempUse *u = &T->use[t];
        if (!is_user_temp(s)) continue;
        if (u->read && !u->written) {
            diag_error(st, DIAG_SEMANTIC, u->rline, u->rcol,
                       "temporary '%s' is read here but never written anywhere in the stencil, so "
                       "its values would be undefined; assign it before reading it (a declaration "
                       "without a value does not)",
                       s->name);
        } else if (u->written && !u->read) {
            const char *near = closest_argument(st, s->name);
            if (near)
                diag_warning(st, u->wline, u->wcol,
                             "temporary '%s' is written but never read; did you mean '%s'?",
                             s->name, near);
            else
                diag_warning(st, u->wline, u->wcol,
                             "temporary '%s' is written but never read, so this assignment has no "
                             "effect",
                             s->name);
        }
    }
}

/* ---- read before written on some path --------------------------------------------------- */

static bool reads_earlier_level(const Temps *T, const Expr *e) {
    if (!T->written_in[(size_t)e->field.sym->index * (size_t)T->st->ncomps + (size_t)T->comp])
        return false;
    if (e->field.kexpr) return T->policy != POLICY_PARALLEL;
    return (T->policy == POLICY_FORWARD && e->field.off[2] < 0) ||
           (T->policy == POLICY_BACKWARD && e->field.off[2] > 0);
}

static void path_read(void *ctx, Expr *e) {
    Temps *T = ctx;
    const Symbol *s = e->field.sym;
    if (!is_user_temp(s)) return;
    int t = s->index;
    const TempUse *u = &T->use[t];
    if (!u->written || T->warned[t] || T->state[t] == SET || reads_earlier_level(T, e)) return;
    T->warned[t] = true;
    if (T->state[t] == UNSET)
        diag_warning(T->st, e->line, e->col,
                     "temporary '%s' is read here before it is first written (line %d), so it "
                     "holds undefined values on this path",
                     s->name, u->wline);
    else
        diag_warning(T->st, e->line, e->col,
                     "temporary '%s' may be read before it is written: it is written only in "
                     "part of the construct on line %d, so elsewhere it holds undefined values",
                     s->name, T->why[t]);
}

/* The state after either of two alternative paths: set only if set on both. */
static void merge(Temps *T, const unsigned char *a, const int *awhy, const unsigned char *b,
                  const int *bwhy, int line) {
    for (int t = 0; t < T->nt; t++) {
        unsigned char m = a[t] == b[t] ? a[t] : MAYBE;
        if (m == MAYBE) T->why[t] = a[t] == MAYBE ? awhy[t] : b[t] == MAYBE ? bwhy[t] : line;
        T->state[t] = m;
    }
}

static bool path(Temps *T, const StmtList *l);

/* Runs `l` on a copy of the current state; the copy is returned in *out (caller frees). */
static bool branch(Temps *T, const StmtList *l, unsigned char **out, int **outwhy) {
    size_t n = (size_t)T->nt + 1;
    unsigned char *saved = T->state, *copy = malloc(n);
    int *savedwhy = T->why, *whycopy = malloc(n * sizeof(int));
    if (copy == NULL || whycopy == NULL) {
        free(copy);
        free(whycopy);
        return diag_error(T->st, DIAG_NOMEM, 0, 0, "out of memory");
    }
    memcpy(copy, saved, n);
    memcpy(whycopy, savedwhy, n * sizeof(int));
    T->state = copy;
    T->why = whycopy;
    bool ok = path(T, l);
    T->state = saved;
    T->why = savedwhy;
    *out = copy;
    *outwhy = whycopy;
    return ok;
}

static bool path_construct(Temps *T, const Stmt *s, const StmtList *a, const StmtList *b) {
    unsigned char *sa = NULL, *sb = NULL;
    int *wa = NULL, *wb = NULL;
    bool ok = branch(T, a, &sa, &wa) && (b == NULL || branch(T, b, &sb, &wb));
    if (ok) {
        if (b)
            merge(T, sa, wa, sb, wb, s->line);
        else
            merge(T, T->state, T->why, sa, wa, s->line); /* may not run: before meets after */
    }
    free(sa);
    free(sb);
    free(wa);
    free(wb);
    return ok;
}

static bool path(Temps *T, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        bool ok = true;
        switch (s->kind) {
        case S_ASSIGN:
            expr_visit_fields(s->assign.value, path_read, T);
            /* a write's variable K offset reads too (temporaries: a checked level) */
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, path_read, T);
            if (is_user_temp(s->assign.target)) T->state[s->assign.target->index] = SET;
            break;
        case S_IF:
            expr_visit_fields(s->if_.cond, path_read, T);
            ok = path_construct(T, s, &s->if_.then, &s->if_.els);
            break;
        case S_WHILE:
            expr_visit_fields(s->while_.cond, path_read, T);
            ok = path_construct(T, s, &s->while_.body, NULL);
            break;
        case S_REGION:
            ok = path_construct(T, s, &s->region.body, NULL);
            break;
        }
        if (!ok) return false;
    }
    return true;
}

/* ---- the pass ------------------------------------------------------------------------- */

static bool each_interval(Temps *T, bool run_path) {
    for (int c = 0; c < T->st->ncomps; c++) {
        const Computation *comp = &T->st->comps[c];
        T->comp = c;
        T->policy = comp->policy;
        for (int i = 0; i < comp->nintervals; i++) {
            if (!run_path)
                facts(T, &comp->intervals[i].body);
            else if (!path(T, &comp->intervals[i].body))
                return false;
        }
    }
    return true;
}

bool checks_temporaries(Stencil *st) {
    size_t nt = (size_t)st->ntemps + 1, nc = (size_t)st->ncomps + 1;
    Temps T = {.st = st, .nt = st->ntemps};
    T.use = calloc(nt, sizeof *T.use);
    T.written_in = calloc(nt * nc, sizeof(bool));
    T.warned = calloc(nt, sizeof(bool));
    T.state = calloc(nt, 1);
    T.why = calloc(nt, sizeof(int));
    bool ok = T.use && T.written_in && T.warned && T.state && T.why;
    if (!ok) diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    if (ok) ok = each_interval(&T, false);
    if (ok) unread_and_unwritten(&T);
    if (ok) ok = each_interval(&T, true);
    if (ok) ok = checks_temporary_levels(st);
    free(T.use);
    free(T.written_in);
    free(T.warned);
    free(T.state);
    free(T.why);
    return ok && st->diag.kind == DIAG_NONE;
}
