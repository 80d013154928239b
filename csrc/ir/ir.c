/* IR helpers shared by every pass: names of enums, node constructors, diagnostics. */
#include "ir/ir.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const DTYPE_NAMES[DT_COUNT] = {"bool",    "int32", "int64", "float32",
                                                  "float64", "int8",  "int16"};
static const int DTYPE_SIZES[DT_COUNT] = {1, 4, 8, 4, 8, 1, 2};

const char *dtype_name(DType t) { return t < DT_COUNT ? DTYPE_NAMES[t] : "?"; }
int dtype_size(DType t) { return DTYPE_SIZES[t]; }

bool dtype_parse(const char *s, DType *out) {
    for (int t = 0; t < DT_COUNT; t++) {
        if (strcmp(s, DTYPE_NAMES[t]) == 0) {
            *out = (DType)t;
            return true;
        }
    }
    return false;
}

const char *policy_name(Policy p) {
    switch (p) {
    case POLICY_PARALLEL: return "PARALLEL";
    case POLICY_FORWARD: return "FORWARD";
    case POLICY_BACKWARD: return "BACKWARD";
    }
    return "?";
}

const char *op_name(Op op) {
    static const char *const names[] = {"+",  "-",  "*",  "/",  "//", "%",  "**",  "-",   "+",
                                        "not", "<", "<=", ">", ">=", "==", "!=", "and", "or"};
    return names[op];
}

static const struct {
    const char *name;
    int arity;
} BUILTINS[FN_COUNT] = {
    [FN_ABS] = {"abs", 1},         [FN_MIN] = {"min", 2},         [FN_MAX] = {"max", 2},
    [FN_SQRT] = {"sqrt", 1},       [FN_EXP] = {"exp", 1},         [FN_LOG] = {"log", 1},
    [FN_LOG10] = {"log10", 1},     [FN_POW] = {"pow", 2},         [FN_FLOOR] = {"floor", 1},
    [FN_CEIL] = {"ceil", 1},       [FN_TRUNC] = {"trunc", 1},     [FN_SIN] = {"sin", 1},
    [FN_COS] = {"cos", 1},         [FN_TAN] = {"tan", 1},         [FN_ARCSIN] = {"arcsin", 1},
    [FN_ARCCOS] = {"arccos", 1},   [FN_ARCTAN] = {"arctan", 1},   [FN_ARCTAN2] = {"arctan2", 2},
    [FN_SINH] = {"sinh", 1},       [FN_COSH] = {"cosh", 1},       [FN_TANH] = {"tanh", 1},
    [FN_ISFINITE] = {"isfinite", 1}, [FN_ISINF] = {"isinf", 1},   [FN_ISNAN] = {"isnan", 1},
    [FN_ARCSINH] = {"arcsinh", 1}, [FN_ARCCOSH] = {"arccosh", 1}, [FN_ARCTANH] = {"arctanh", 1},
    [FN_GAMMA] = {"gamma", 1},     [FN_ERF] = {"erf", 1},         [FN_ERFC] = {"erfc", 1},
    [FN_CBRT] = {"cbrt", 1},       [FN_ROUND] = {"round", 1},
    [FN_ROUND_AWAY] = {"round_away_from_zero", 1},
    [FN_DATA_INDEX] = {"__data_index", 2},
    [FN_LEVEL_BOUND] = {"__level_bound", 1},
};

const char *builtin_name(Builtin fn) { return BUILTINS[fn].name; }

const char *builtin_libm_name(Builtin f) {
    switch (f) {
    case FN_SQRT: return "sqrt";
    case FN_EXP: return "exp";
    case FN_LOG: return "log";
    case FN_LOG10: return "log10";
    case FN_FLOOR: return "floor";
    case FN_CEIL: return "ceil";
    case FN_TRUNC: return "trunc";
    case FN_SIN: return "sin";
    case FN_COS: return "cos";
    case FN_TAN: return "tan";
    case FN_ARCSIN: return "asin";
    case FN_ARCCOS: return "acos";
    case FN_ARCTAN: return "atan";
    case FN_ARCTAN2: return "atan2";
    case FN_SINH: return "sinh";
    case FN_COSH: return "cosh";
    case FN_TANH: return "tanh";
    case FN_ARCSINH: return "asinh";
    case FN_ARCCOSH: return "acosh";
    case FN_ARCTANH: return "atanh";
    case FN_GAMMA: return "tgamma";
    case FN_ERF: return "erf";
    case FN_ERFC: return "erfc";
    case FN_CBRT: return "cbrt";
    case FN_ROUND: return "rint"; /* np.round: halves to even (the default rounding mode) */
    case FN_ROUND_AWAY: return "round";
    case FN_POW: return "pow";
    default: return NULL;
    }
}

bool builtin_is_libm_call(Builtin f) {
    switch (f) {
    case FN_SQRT: case FN_FLOOR: case FN_CEIL: case FN_TRUNC: case FN_ROUND: case FN_ROUND_AWAY:
        return false; /* one instruction each (llvm.sqrt, llvm.floor, ...) */
    default: return builtin_libm_name(f) != NULL;
    }
}
int builtin_arity(Builtin fn) { return BUILTINS[fn].arity; }

bool builtin_parse(const char *s, Builtin *out) {
    for (int f = 0; f < FN_COUNT; f++) {
        if (strcmp(s, BUILTINS[f].name) == 0) {
            *out = (Builtin)f;
            return true;
        }
    }
    return false;
}

const char *stencil_source_line(const Stencil *st, int line) {
    if (line < 1 || line > st->nsource || st->source[line - 1] == NULL) return "";
    return st->source[line - 1];
}

bool diag_error(Stencil *st, DiagKind kind, int line, int col, const char *fmt, ...) {
    Diag *d = &st->diag;
    d->count++;
    /* Keep the first violation in source order (passes may visit out of order). */
    if (d->kind != DIAG_NONE && !(line > 0 && (line < d->line || (line == d->line && col < d->col))))
        return false;
    d->kind = kind;
    d->line = line;
    d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return false;
}

void diag_warning(Stencil *st, int line, int col, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    Warning *w = arena_alloc(&st->arena, sizeof *w);
    if (w == NULL) return;
    w->line = line;
    w->col = col;
    if ((w->msg = arena_strdup(&st->arena, buf)) == NULL) return;
    Warning **tail = &st->warnings;
    while (*tail) tail = &(*tail)->next;
    *tail = w;
}

Stencil *stencil_new(void) {
    Stencil *st = calloc(1, sizeof *st);
    return st;
}

void stencil_free(Stencil *st) {
    if (st == NULL) return;
    arena_free(&st->arena);
    free(st);
}

static void *st_alloc(Stencil *st, size_t n) {
    void *p = arena_alloc(&st->arena, n);
    if (p == NULL) diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    return p;
}

Expr *expr_new(Stencil *st, ExprKind kind, int line, int col) {
    Expr *e = st_alloc(st, sizeof *e);
    if (e) {
        e->kind = kind;
        e->line = line;
        e->col = col;
    }
    return e;
}

Stmt *stmt_new(Stencil *st, StmtKind kind, int line, int col) {
    Stmt *s = st_alloc(st, sizeof *s);
    if (s) {
        s->kind = kind;
        s->line = line;
        s->col = col;
    }
    return s;
}

bool stmts_push(Stencil *st, StmtList *l, Stmt *s) {
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        Stmt **items = arena_grow(&st->arena, l->items, (size_t)l->n, (size_t)cap, sizeof *items);
        if (items == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = s;
    return true;
}

Symbol *stencil_lookup(const Stencil *st, const char *name) {
    for (int i = 0; i < st->nparams; i++)
        if (strcmp(st->params[i]->name, name) == 0) return st->params[i];
    for (int i = 0; i < st->ntemps; i++)
        if (strcmp(st->temps[i]->name, name) == 0) return st->temps[i];
    return NULL;
}

Symbol *stencil_add_temp(Stencil *st, const char *name, int line, int col) {
    if (st->ntemps == st->captemps) {
        int cap = st->captemps ? 2 * st->captemps : 8;
        Symbol **t = arena_grow(&st->arena, st->temps, (size_t)st->ntemps, (size_t)cap, sizeof *t);
        if (t == NULL) {
            diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
            return NULL;
        }
        st->temps = t;
        st->captemps = cap;
    }
    Symbol *s = st_alloc(st, sizeof *s);
    if (s == NULL) return NULL;
    if ((s->name = arena_strdup(&st->arena, name)) == NULL) {
        diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
        return NULL;
    }
    s->kind = SYM_TEMP;
    s->axes = AX_IJK;
    s->index = st->ntemps;
    s->slot = st->nfields + st->ntemps;
    s->line = line;
    s->col = col;
    s->dtype = DT_FLOAT64;
    st->temps[st->ntemps++] = s;
    return s;
}

void expr_visit(Expr *e, ExprVisitor fn, void *ctx) {
    if (e == NULL) return;
    fn(ctx, e);
    switch (e->kind) {
    case E_CONST:
    case E_SCALAR:
    case E_KINDEX: return;
    case E_FIELD: expr_visit(e->field.kexpr, fn, ctx); return;
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        expr_visit(e->op.a, fn, ctx);
        expr_visit(e->op.b, fn, ctx);
        return;
    case E_TERNARY:
        expr_visit(e->ternary.cond, fn, ctx);
        expr_visit(e->ternary.a, fn, ctx);
        expr_visit(e->ternary.b, fn, ctx);
        return;
    case E_CALL:
        for (int i = 0; i < e->call.nargs; i++) expr_visit(e->call.args[i], fn, ctx);
        return;
    case E_CAST: expr_visit(e->cast, fn, ctx); return;
    }
}

typedef struct FieldsOnly {
    FieldVisitor fn;
    void *ctx;
} FieldsOnly;

static void fields_only(void *ctx, Expr *e) {
    const FieldsOnly *f = ctx;
    if (e->kind == E_FIELD) f->fn(f->ctx, e);
}

void expr_visit_fields(Expr *e, FieldVisitor fn, void *ctx) {
    FieldsOnly f = {fn, ctx};
    expr_visit(e, fields_only, &f);
}
