/*
 * Temporaries computed on the fly. A temporary read at a horizontal offset makes every
 * stage before it run on a wider (extended) domain and go through a buffer; for a short
 * expression it is cheaper to recompute it where it is read, as a hand-written kernel
 * would: `lap = f(inp)` then `out = lap[1, 0, 0] - lap[0, 0, 0]` becomes
 * `out = f(inp)[shifted by +1] - f(inp)`. Memory traffic shrinks to the arguments.
 *
 * A read of temporary T in statement S (in the same interval as its definition D) is
 * replaced by D's value shifted by the read's horizontal offset when
 *   - D is the last assignment of T before S, applies everywhere (no guard, no region),
 *     writes at K offset 0, and its value has no variable K offset;
 *   - the read is at K offset 0 (a K-shifted read would reach levels D never computed);
 *   - nothing D's value reads is written from D up to and including S (so the value
 *     recomputed in S equals the one D stored), and S is not inside a `while`;
 *   - the inlined copy stays small (INLINE_MAX_NODES), so nothing blows up;
 *   - a read at the point itself (no horizontal offset) is inlined only when that duplicates
 *     nothing: it is the only read D reaches and no other interval reads T before writing
 *     it, or D's value is a leaf or one operation on leaves, or T may be recomputed at
 *     other points anyway: T is read at an offset, or read by the definition of a temporary
 *     that may be (its shifted copies need T's value at their points, and a buffer of T
 *     would need the reader's extent). Otherwise T stays a value computed once per point:
 *     a physics scheme's table lookup (`qs = qsat(t, p)` read by a dozen guards and
 *     updates) expanded into every reader made LLVM compile, and the kernel compute, the
 *     same divisions a dozen times over (benchmarks/build_scaling.py --realistic).
 * Assignments of a temporary that inlining left unread are then dropped. Semantics are those
 * of the seed's statement-by-statement reading, so backends compute the same values; only
 * the compiled backends run this pass, and the numpy reference backend checks them.
 */
#include <string.h>

#include "analysis/analysis.h"

enum { INLINE_MAX_NODES = 128, STMT_MAX_NODES = 800, POINT_INLINE_MAX_NODES = 3 };

static int expr_size(const Expr *e) {
    if (e == NULL) return 0;
    switch (e->kind) {
    case E_CONST:
    case E_SCALAR:
    case E_KINDEX: return 1;
    case E_FIELD: return 1 + expr_size(e->field.kexpr);
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC: return 1 + expr_size(e->op.a) + expr_size(e->op.b);
    case E_TERNARY:
        return 1 + expr_size(e->ternary.cond) + expr_size(e->ternary.a) + expr_size(e->ternary.b);
    case E_CALL: {
        int n = 1;
        for (int i = 0; i < e->call.nargs; i++) n += expr_size(e->call.args[i]);
        return n;
    }
    case E_CAST: return 1 + expr_size(e->cast);
    }
    return 1;
}

/* A copy of `e` evaluated at a point shifted by (di, dj). */
static Expr *clone_shifted(Stencil *st, const Expr *e, int di, int dj) {
    if (e == NULL) return NULL;
    Expr *c = expr_new(st, e->kind, e->line, e->col);
    if (c == NULL) return NULL;
    *c = *e;
    switch (e->kind) {
    case E_CONST:
    case E_SCALAR:
    case E_KINDEX: break; /* a horizontal shift keeps the K level */
    case E_FIELD:
        c->field.off[0] += di;
        c->field.off[1] += dj;
        if (e->field.kexpr && !(c->field.kexpr = clone_shifted(st, e->field.kexpr, di, dj)))
            return NULL;
        break;
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        if (!(c->op.a = clone_shifted(st, e->op.a, di, dj))) return NULL;
        if (e->op.b && !(c->op.b = clone_shifted(st, e->op.b, di, dj))) return NULL;
        break;
    case E_TERNARY:
        if (!(c->ternary.cond = clone_shifted(st, e->ternary.cond, di, dj)) ||
            !(c->ternary.a = clone_shifted(st, e->ternary.a, di, dj)) ||
            !(c->ternary.b = clone_shifted(st, e->ternary.b, di, dj)))
            return NULL;
        break;
    case E_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (!(c->call.args[i] = clone_shifted(st, e->call.args[i], di, dj))) return NULL;
        break;
    case E_CAST:
        if (!(c->cast = clone_shifted(st, e->cast, di, dj))) return NULL;
        break;
    }
    return c;
}

/* ---- facts about a statement list --------------------------------------------------- */

static bool has_kexpr(const Expr *e) {
    if (e == NULL) return false;
    switch (e->kind) {
    case E_FIELD: return e->field.kexpr != NULL;
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC: return has_kexpr(e->op.a) || has_kexpr(e->op.b);
    case E_TERNARY:
        return has_kexpr(e->ternary.cond) || has_kexpr(e->ternary.a) || has_kexpr(e->ternary.b);
    case E_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (has_kexpr(e->call.args[i])) return true;
        return false;
    case E_CAST: return has_kexpr(e->cast);
    default: return false;
    }
}

static bool stmt_writes(const Stmt *s, const Symbol *sym) {
    if (s->kind == S_ASSIGN) return s->assign.target == sym;
    if (s->kind == S_WHILE)
        for (int i = 0; i < s->while_.body.n; i++)
            if (stmt_writes(s->while_.body.items[i], sym)) return true;
    return false;
}

typedef struct {
    const StmtList *body;
    int from, to; /* statements [from, to] of body */
    bool clobbered;
} ClobberCtx;

static void check_clobber(void *ctx, Expr *e) {
    ClobberCtx *C = ctx;
    for (int i = C->from; i <= C->to && !C->clobbered; i++)
        if (stmt_writes(C->body->items[i], e->field.sym)) C->clobbered = true;
}

bool value_clobbered(const Expr *value, const StmtList *body, int from, int to) {
    ClobberCtx C = {body, from, to, false};
    expr_visit_fields((Expr *)value, check_clobber, &C);
    return C.clobbered;
}

/* ---- rewriting reads ---------------------------------------------------------------- */

/* Definitions whose value was inlined somewhere: once their temporary is read nowhere
 * else, they are dead. (A definition nobody ever read is not ours to drop: its reads count
 * in the extents, so every backend asks the same of the arrays.) */
typedef struct {
    const Stmt **items;
    int n, cap;
} StmtSet;

/* How the stencil as written reads each temporary: how often, and whether its value may be
 * needed at other points than where it is read (`shifted`, see the file's comment). */
typedef struct {
    int *count;
    bool *shifted;
} TempReads;

typedef struct {
    Stencil *st;
    const StmtList *body;
    int at; /* index of the statement being rewritten */
    int budget;
    StmtSet *used;
    const TempReads *reads; /* of the stencil as written, per temporary */
    const int *defreads;    /* [statement of body]: reads its definition reaches, as written */
    const int *exposed;     /* [temporary]: reads no definition of body reaches, as written */
    const int *all_exposed; /* the same, summed over the stencil's bodies */
} Inliner;

static bool set_add(Stencil *st, StmtSet *set, const Stmt *s) {
    for (int i = 0; i < set->n; i++)
        if (set->items[i] == s) return true;
    if (set->n == set->cap) {
        int cap = set->cap ? 2 * set->cap : 16;
        const Stmt **p = arena_grow(&st->arena, set->items, (size_t)set->n, (size_t)cap, sizeof *p);
        if (p == NULL) return false;
        set->items = p;
        set->cap = cap;
    }
    set->items[set->n++] = s;
    return true;
}

static bool set_has(const StmtSet *set, const Stmt *s) {
    for (int i = 0; i < set->n; i++)
        if (set->items[i] == s) return true;
    return false;
}

/* The definition of temporary `t` that reaches statement `at`, if it can be inlined, and its
 * index in the body. */
static const Stmt *reaching_def(const Inliner *I, const Symbol *t, int *index) {
    for (int i = I->at - 1; i >= 0; i--) {
        const Stmt *d = I->body->items[i];
        if (!stmt_writes(d, t)) continue;
        if (d->kind != S_ASSIGN || d->guard || d->nboxes || d->assign.koff || d->assign.ndi ||
            has_kexpr(d->assign.value) || expr_size(d->assign.value) > INLINE_MAX_NODES ||
            value_clobbered(d->assign.value, I->body, i, I->at))
            return NULL;
        *index = i;
        return d;
    }
    return NULL;
}

static Expr *rewrite(Inliner *I, Expr *e);

static bool rewrite_slot(Inliner *I, Expr **slot) {
    if (*slot == NULL) return true;
    Expr *r = rewrite(I, *slot);
    if (r == NULL) return false;
    *slot = r;
    return true;
}

/* Returns the rewritten expression (possibly `e` itself), NULL only when out of memory. */
static Expr *rewrite(Inliner *I, Expr *e) {
    switch (e->kind) {
    case E_CONST:
    case E_SCALAR:
    case E_KINDEX: return e;
    case E_FIELD: {
        Symbol *t = e->field.sym;
        /* an IJ temporary keeps its value from level to level: never recomputed in place */
        if (t->kind == SYM_TEMP && t->axes == AX_IJK && e->field.off[2] == 0 && e->field.kexpr == NULL &&
            e->field.ndi == 0) {
            int di = 0;
            const Stmt *d = reaching_def(I, t, &di);
            int size = d ? expr_size(d->assign.value) : 0;
            /* D's value stays computed once per point when its other readers need it too */
            bool at_point = e->field.off[0] == 0 && e->field.off[1] == 0;
            bool duplicates = d && at_point && !I->reads->shifted[t->index] &&
                              size > POINT_INLINE_MAX_NODES &&
                              (I->defreads[di] > 1 || I->all_exposed[t->index] > I->exposed[t->index]);
            if (d && !duplicates && size <= I->budget && d->assign.value->type == e->type) {
                I->budget -= size;
                if (!set_add(I->st, I->used, d)) return NULL;
                return clone_shifted(I->st, d->assign.value, e->field.off[0], e->field.off[1]);
            }
        }
        return rewrite_slot(I, &e->field.kexpr) ? e : NULL;
    }
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC: return rewrite_slot(I, &e->op.a) && rewrite_slot(I, &e->op.b) ? e : NULL;
    case E_TERNARY:
        return rewrite_slot(I, &e->ternary.cond) && rewrite_slot(I, &e->ternary.a) &&
                       rewrite_slot(I, &e->ternary.b)
                   ? e
                   : NULL;
    case E_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (!rewrite_slot(I, &e->call.args[i])) return NULL;
        return e;
    case E_CAST: return rewrite_slot(I, &e->cast) ? e : NULL;
    }
    return e;
}

/* Reads of a body as written, by the definition that reaches them (see Inliner). */
typedef struct {
    int *cur;         /* [temporary]: 1 + index of the definition reaching the statement, or 0 */
    int *defreads;    /* [statement] */
    int *exposed;     /* [temporary] */
    int *all_exposed; /* [temporary] */
} DefReads;

static void count_def_read(void *ctx, Expr *e) {
    DefReads *R = ctx;
    if (e->field.sym->kind != SYM_TEMP) return;
    int t = e->field.sym->index;
    if (R->cur[t]) R->defreads[R->cur[t] - 1]++;
    else R->exposed[t]++;
}

/* `top`: the statement of the body that holds l (a while's body counts as its statement). */
static void count_def_reads(const StmtList *l, DefReads *R, int top) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        int at = top >= 0 ? top : i;
        expr_visit_fields(s->guard, count_def_read, R);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, count_def_read, R);
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, count_def_read, R);
            if (s->assign.target->kind == SYM_TEMP)
                R->cur[s->assign.target->index] = top >= 0 ? 0 : at + 1; /* in a loop: unknown */
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, count_def_read, R);
            count_def_reads(&s->while_.body, R, at);
        }
    }
}

static bool count_body(Stencil *st, const StmtList *body, DefReads *R) {
    size_t nt = (size_t)st->ntemps + 1;
    memset(R->cur, 0, sizeof(int) * nt);
    memset(R->exposed, 0, sizeof(int) * nt);
    R->defreads = arena_alloc(&st->arena, sizeof(int) * ((size_t)body->n + 1));
    if (R->defreads == NULL) return false;
    count_def_reads(body, R, -1);
    return true;
}

static bool inline_list(Stencil *st, StmtList *body, StmtSet *used, const TempReads *reads,
                        DefReads *R) {
    if (!count_body(st, body, R)) return false;
    for (int i = 0; i < body->n; i++) {
        Stmt *s = body->items[i];
        if (s->kind != S_ASSIGN) continue; /* a while body iterates: values change per trip */
        Inliner I = {st,   body, i, STMT_MAX_NODES - expr_size(s->assign.value) - expr_size(s->guard),
                     used, reads, R->defreads, R->exposed, R->all_exposed};
        if (!rewrite_slot(&I, &s->assign.value) || !rewrite_slot(&I, &s->guard)) return false;
    }
    return true;
}

/* ---- dropping dead assignments ------------------------------------------------------ */

static void count_read(void *ctx, Expr *e) {
    TempReads *R = ctx;
    if (e->field.sym->kind != SYM_TEMP) return;
    R->count[e->field.sym->index]++;
    if (R->shifted && (e->field.off[0] != 0 || e->field.off[1] != 0))
        R->shifted[e->field.sym->index] = true;
}

typedef struct {
    bool *shifted;
    bool changed;
} Shift;

static void mark_shifted(void *ctx, Expr *e) {
    Shift *S = ctx;
    if (e->field.sym->kind != SYM_TEMP || S->shifted[e->field.sym->index]) return;
    S->shifted[e->field.sym->index] = true;
    S->changed = true;
}

/* Temporaries read by the definition of a shifted temporary are shifted too. */
static void propagate_shifted(const StmtList *l, Shift *S) {
    for (int i = l->n - 1; i >= 0; i--) {
        const Stmt *s = l->items[i];
        if (s->kind == S_WHILE) propagate_shifted(&s->while_.body, S);
        if (s->kind != S_ASSIGN || s->assign.target->kind != SYM_TEMP ||
            !S->shifted[s->assign.target->index])
            continue;
        expr_visit_fields(s->guard, mark_shifted, S);
        expr_visit_fields(s->assign.value, mark_shifted, S);
    }
}

static void count_reads(const StmtList *l, TempReads *reads) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        expr_visit_fields(s->guard, count_read, reads);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, count_read, reads);
            /* a write's variable K offset reads too (temporaries: a checked level) */
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, count_read, reads);
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, count_read, reads);
            count_reads(&s->while_.body, reads);
        }
    }
}

static void drop_dead(StmtList *l, const int *reads, const StmtSet *used) {
    int n = 0;
    for (int i = 0; i < l->n; i++) {
        Stmt *s = l->items[i];
        if (s->kind == S_ASSIGN && s->assign.target->kind == SYM_TEMP &&
            reads[s->assign.target->index] == 0 && set_has(used, s))
            continue;
        l->items[n++] = s;
    }
    l->n = n;
}

/* The reads of every temporary; with `shifted`, also which are shifted. */
static bool count_all_reads(Stencil *st, TempReads *R, bool shifted) {
    size_t n = (size_t)st->ntemps + 1;
    R->count = arena_alloc(&st->arena, sizeof(int) * n);
    R->shifted = shifted ? arena_alloc(&st->arena, sizeof(bool) * n) : NULL;
    if (R->count == NULL || (shifted && R->shifted == NULL)) return false; /* zeroed */
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++)
            count_reads(&st->comps[c].intervals[i].body, R);
    if (!shifted) return true;
    /* to a fixed point: a pass in reverse order settles a stencil whose readers follow their
     * definitions; each further pass marks at least one more temporary */
    Shift S = {R->shifted, true};
    while (S.changed) {
        S.changed = false;
        for (int c = st->ncomps - 1; c >= 0; c--)
            for (int i = st->comps[c].nintervals - 1; i >= 0; i--)
                propagate_shifted(&st->comps[c].intervals[i].body, &S);
    }
    return true;
}

bool inline_temporaries(Stencil *st) {
    StmtSet used = {0};
    TempReads written = {0}, left = {0};
    size_t nt = (size_t)st->ntemps + 1;
    DefReads R = {arena_alloc(&st->arena, sizeof(int) * nt), NULL,
                  arena_alloc(&st->arena, sizeof(int) * nt), arena_alloc(&st->arena, sizeof(int) * nt)};
    if (R.cur == NULL || R.exposed == NULL || R.all_exposed == NULL ||
        !count_all_reads(st, &written, true))
        return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++) {
            if (!count_body(st, &st->comps[c].intervals[i].body, &R))
                return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
            for (int t = 0; t <= st->ntemps; t++) R.all_exposed[t] += R.exposed[t];
        }
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++)
            if (!inline_list(st, &st->comps[c].intervals[i].body, &used, &written, &R))
                return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    if (!count_all_reads(st, &left, false))
        return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++)
            drop_dead(&st->comps[c].intervals[i].body, left.count, &used);
    return true;
}
