/*
 * Type inference with NumPy 2 promotion rules. Python literals are "weak" (NEP 50): a
 * literal takes the type of the typed operand it meets when it is of the same or a lower
 * kind (so `a_f32 * 2.0` stays float32). Afterwards every operation's operands carry its
 * type: casts are explicit, constants are converted in place.
 */
#include <math.h>
#include <stdint.h>

#include "analysis/analysis.h"

enum { KIND_BOOL, KIND_INT, KIND_FLOAT };

static int kind_of(DType t) {
    return t == DT_BOOL ? KIND_BOOL : dtype_is_int(t) ? KIND_INT : KIND_FLOAT;
}

/* numpy.result_type for two typed (strong) dtypes. */
static DType promote_strong(DType a, DType b) {
    if (a == b) return a;
    if (a == DT_BOOL) return b;
    if (b == DT_BOOL) return a;
    if (dtype_is_int(a) && dtype_is_int(b)) return dtype_int_bits(a) > dtype_int_bits(b) ? a : b;
    if (dtype_is_float(a) && dtype_is_float(b)) return DT_FLOAT64;
    /* int and float: float32 is only enough for int8/int16 */
    DType i = dtype_is_int(a) ? a : b, f = dtype_is_int(a) ? b : a;
    return f == DT_FLOAT32 && dtype_is_small_int(i) ? DT_FLOAT32 : DT_FLOAT64;
}

typedef struct {
    DType t;
    bool weak;
} TypeInfo;

static TypeInfo promote(TypeInfo a, TypeInfo b) {
    if (a.weak && b.weak) return kind_of(a.t) >= kind_of(b.t) ? a : b;
    if (a.weak || b.weak) {
        TypeInfo w = a.weak ? a : b, s = a.weak ? b : a;
        if (kind_of(w.t) <= kind_of(s.t)) return s;
        /* a weak float meets an int or bool, or a weak int meets a bool */
        return (TypeInfo){kind_of(w.t) == KIND_FLOAT ? DT_FLOAT64 : DT_INT64, false};
    }
    return (TypeInfo){promote_strong(a.t, b.t), false};
}

static TypeInfo info(const Expr *e) { return (TypeInfo){e->type, e->weak}; }

/* Converts `e` to type t: constants in place, anything else through an E_CAST node. */
static Expr *coerce(Stencil *st, Expr *e, DType t) {
    if (e == NULL) return NULL;
    if (e->type == t) {
        e->weak = false;
        return e;
    }
    if (e->kind == E_CONST && e->weak && e->type == DT_INT64 && dtype_is_int(t) &&
        !dtype_int_fits(t, e->cnst.i)) {
        /* NumPy 2 refuses a Python int that the other operand's dtype cannot hold */
        diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                   "the literal %lld does not fit in %s, the type of the expression it meets "
                   "(NumPy 2 raises OverflowError here): cast the other operand with int(...)",
                   (long long)e->cnst.i, dtype_name(t));
        return NULL;
    }
    /* a float constant out of an integer's range converts at run time, as the backends do
     * (int8 and int16 go through int32, as NumPy's astype on x86) */
    bool fits_int = !(e->kind == E_CONST && dtype_is_float(e->type) && dtype_is_int(t) &&
                      !(e->cnst.f >= -9223372036854775808.0 && e->cnst.f < 9223372036854775808.0 &&
                        (t == DT_INT64 || (e->cnst.f >= -2147483648.0 && e->cnst.f < 2147483648.0))));
    if (e->kind == E_CONST && fits_int) {
        if (dtype_is_float(t)) {
            double v = dtype_is_float(e->type) ? e->cnst.f : (double)e->cnst.i;
            e->cnst.f = t == DT_FLOAT32 ? (double)(float)v : v;
        } else if (t == DT_BOOL) {
            e->cnst.i = dtype_is_float(e->type) ? e->cnst.f != 0.0 : e->cnst.i != 0;
        } else {
            int64_t v = dtype_is_float(e->type) ? (int64_t)e->cnst.f : e->cnst.i;
            e->cnst.i = dtype_wrap_int(t, v);
        }
        e->type = t;
        e->weak = false;
        return e;
    }
    Expr *c = expr_new(st, E_CAST, e->line, e->col);
    if (c == NULL) return NULL;
    c->type = t;
    c->cast = e;
    return c;
}

static bool infer(Stencil *st, Expr *e);

/* false for an int constant outside the range of the integer dtype t */
static bool const_fits(const Expr *e, DType t) {
    return !(e->kind == E_CONST && e->type == DT_INT64 && !dtype_int_fits(t, e->cnst.i));
}

/* ---- variable K offsets ------------------------------------------------------------- */

static bool list_writes(const StmtList *l, const Symbol *s);

static bool stmt_writes(const Stmt *x, const Symbol *s) {
    switch (x->kind) {
    case S_ASSIGN: return x->assign.target == s;
    case S_IF: return list_writes(&x->if_.then, s) || list_writes(&x->if_.els, s);
    case S_WHILE: return list_writes(&x->while_.body, s);
    case S_REGION: return list_writes(&x->region.body, s);
    }
    return false;
}

static bool list_writes(const StmtList *l, const Symbol *s) {
    for (int i = 0; i < l->n; i++)
        if (stmt_writes(l->items[i], s)) return true;
    return false;
}

static bool stencil_writes(const Stencil *st, const Symbol *s) {
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++)
            if (list_writes(&st->comps[c].intervals[i].body, s)) return true;
    return false;
}

typedef struct {
    Stencil *st;
    Expr *bad;
} KSources;

static void koffset_source(void *ctx, Expr *e) {
    KSources *k = ctx;
    Symbol *s = e->field.sym;
    if (k->bad == NULL && (s->kind == SYM_TEMP || stencil_writes(k->st, s))) k->bad = e;
}

/* The call checks, before the kernel runs, that every variable K offset stays inside its
 * array (call/kbounds.c): the offset may only depend on values known then, that is on
 * scalar arguments and on fields the stencil does not write. */
static bool check_koffset_sources(Stencil *st, Expr *kexpr, const char *what) {
    KSources k = {st, NULL};
    expr_visit_fields(kexpr, koffset_source, &k);
    if (k.bad == NULL) return true;
    Symbol *s = k.bad->field.sym;
    return diag_error(st, DIAG_SEMANTIC, k.bad->line, k.bad->col,
                      "%s cannot be computed from %s '%s': it may only depend on "
                      "scalar parameters and on fields the stencil does not write, so that the "
                      "call can check before running that every read stays inside the array",
                      what, s->kind == SYM_TEMP ? "the temporary" : "the field written by this stencil",
                      s->name);
}

static void note_read(void *ctx, Expr *e) {
    (void)e;
    *(bool *)ctx = true;
}

/* A K-axis field read in an interval bound (the frontend checks parameters; this catches a
 * temporary): a level varies with K there, so the bound would change from level to level. */
static void bound_axes(void *ctx, Expr *e) {
    const Expr **bad = ctx;
    if (*bad == NULL && (e->field.sym->axes & AX_K)) *bad = e;
}

/* __level_bound(level): an int64 level read from IJ fields (and IJ temporaries). A level read
 * from fields the stencil does not write is checked by the call before running; one computed
 * from values the stencil writes (a temporary, a written field: GT4Py's debug backend takes
 * them) cannot be, so the kernel checks it where it evaluates it (call.checked). */
static bool infer_level_bound(Stencil *st, Expr *e) {
    const Expr *l = e->call.args[0];
    if (!dtype_is_int(l->type))
        return diag_error(st, DIAG_SEMANTIC, l->line, l->col,
                          "an interval bound must be an integer, not %s (GT4Py's debug backend "
                          "truncates a float bound toward zero, and NaN or inf is no level at "
                          "all: compute the level into an integer IJ temporary, "
                          "t: Field[IJ, np.int64] = ..., and bound the interval by t)",
                          dtype_name(l->type));
    const Expr *kaxis = NULL;
    expr_visit_fields(e->call.args[0], bound_axes, &kaxis);
    if (kaxis != NULL)
        return diag_error(st, DIAG_SEMANTIC, kaxis->line, kaxis->col,
                          "interval bound '%s' has a K axis: a bound is one level per column, "
                          "read from an integer IJ field or IJ temporary (declare it "
                          "%s: Field[IJ, np.int64])",
                          kaxis->field.sym->name, kaxis->field.sym->name);
    e->type = DT_INT64;
    e->weak = false;
    if (!(e->call.args[0] = coerce(st, e->call.args[0], DT_INT64))) return false;
    KSources k = {st, NULL};
    expr_visit_fields(e->call.args[0], koffset_source, &k);
    if (k.bad == NULL) {
        st->has_level_bound = true;
        return true;
    }
    e->call.checked = true;
    e->call.from = k.bad->field.sym;
    st->has_checked_k = true;
    return true;
}

static DType float_of(TypeInfo t) { return t.t == DT_FLOAT32 ? DT_FLOAT32 : DT_FLOAT64; }

static bool infer_call(Stencil *st, Expr *e) {
    for (int i = 0; i < e->call.nargs; i++)
        if (!infer(st, e->call.args[i])) return false;
    if (e->call.fn == FN_DATA_INDEX) {
        /* an int64 index; the call evaluates it before running, as a variable K offset */
        const Expr *i = e->call.args[0];
        if (!dtype_is_int(i->type) || e->call.args[1]->kind != E_CONST)
            return diag_error(st, DIAG_SEMANTIC, i->line, i->col,
                              "a data index must be an integer, not %s", dtype_name(i->type));
        st->has_data_index = true;
        expr_visit_fields(e->call.args[0], note_read, &st->data_index_reads_fields);
        e->type = DT_INT64;
        e->weak = false;
        for (int a = 0; a < 2; a++)
            if (!(e->call.args[a] = coerce(st, e->call.args[a], DT_INT64))) return false;
        return check_koffset_sources(st, e->call.args[0], "a run-time data index");
    }
    if (e->call.fn == FN_LEVEL_BOUND) return infer_level_bound(st, e);
    TypeInfo t = info(e->call.args[0]);
    for (int i = 1; i < e->call.nargs; i++) t = promote(t, info(e->call.args[i]));
    switch (e->call.fn) {
    case FN_ABS:
    case FN_MIN:
    case FN_MAX:
        if (t.t == DT_BOOL && e->call.fn == FN_ABS)
            return diag_error(st, DIAG_SEMANTIC, e->line, e->col, "abs() of a bool");
        break;
    case FN_POW: break;
    case FN_FLOOR:
    case FN_CEIL:
    case FN_TRUNC:
    case FN_ROUND:
    case FN_ROUND_AWAY:
        /* NumPy 2 rounds integers and bools to themselves, keeping their dtype */
        if (!dtype_is_float(t.t)) break;
        t.t = float_of(t);
        break;
    case FN_ISFINITE:
    case FN_ISINF:
    case FN_ISNAN:
        e->type = DT_BOOL;
        e->weak = false;
        if (!dtype_is_float(t.t)) t.t = DT_FLOAT64;
        for (int i = 0; i < e->call.nargs; i++)
            if (!(e->call.args[i] = coerce(st, e->call.args[i], float_of(t)))) return false;
        return true;
    default: /* transcendental and rounding functions compute in floating point */
        t.t = float_of(t);
        break;
    }
    if (e->call.fn == FN_POW && dtype_is_int(t.t)) t.t = DT_FLOAT64; /* numpy float_power-like */
    e->type = t.t;
    e->weak = t.weak;
    for (int i = 0; i < e->call.nargs; i++)
        if (!(e->call.args[i] = coerce(st, e->call.args[i], t.t))) return false;
    e->weak = t.weak;
    return true;
}

static bool infer(Stencil *st, Expr *e) {
    switch (e->kind) {
    case E_CONST:
        /* literal_float_precision=64 (GT4Py's default) or 32: a float literal is a typed
         * value of that precision instead of a NumPy 2 weak scalar */
        if (e->type == DT_FLOAT64 && e->weak && st->literal_float_bits != 0) {
            e->weak = false;
            if (st->literal_float_bits == 32) {
                e->type = DT_FLOAT32;
                e->cnst.f = (double)(float)e->cnst.f;
            }
        }
        /* literal_int_precision=64 or 32: an int literal is a typed value of that precision
         * (it then takes part in promotion like a field of that dtype) */
        if (e->type == DT_INT64 && e->weak && st->literal_int_bits != 0) {
            if (st->literal_int_bits == 32 && (e->cnst.i < INT32_MIN || e->cnst.i > INT32_MAX))
                return diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                                  "the literal %lld does not fit in int32 "
                                  "(literal_int_precision=32): write it as a float or build "
                                  "with literal_int_precision=64",
                                  (long long)e->cnst.i);
            e->weak = false;
            if (st->literal_int_bits == 32) e->type = DT_INT32;
        }
        return true;
    case E_FIELD:
        e->type = e->field.sym->dtype;
        e->weak = false;
        if (e->field.kexpr) {
            const char *what = e->field.kabs ? "an absolute K index" : "a variable K offset";
            if (!infer(st, e->field.kexpr)) return false;
            if (!dtype_is_int(e->field.kexpr->type))
                return diag_error(st, DIAG_SEMANTIC, e->field.kexpr->line, e->field.kexpr->col,
                                  "%s must be an integer, not %s", what,
                                  dtype_name(e->field.kexpr->type));
            e->field.kexpr = coerce(st, e->field.kexpr, DT_INT64);
            if (e->field.kexpr == NULL) return false;
            KSources k = {st, NULL};
            expr_visit_fields(e->field.kexpr, koffset_source, &k);
            if (k.bad != NULL && e->field.sym->kind == SYM_FIELD) {
                /* computed from values the stencil writes (FV3's remapping): the call cannot
                 * evaluate it beforehand, so the kernel checks each level it reads */
                e->field.kchecked = true;
                e->field.sym->kread_checked = true;
                st->has_checked_k = true;
            } else if (!check_koffset_sources(st, e->field.kexpr, what)) {
                return false;
            }
        }
        return true;
    case E_SCALAR:
        e->type = e->scalar->dtype;
        e->weak = false;
        e->scalar->read = true; /* used: the call requires its argument (call.c) */
        return true;
    case E_UNARY:
        if (!infer(st, e->op.a)) return false;
        if (e->op.op == OP_NOT) {
            e->type = DT_BOOL;
            return (e->op.a = coerce(st, e->op.a, DT_BOOL)) != NULL;
        }
        if (e->op.a->type == DT_BOOL && e->op.op == OP_NEG)
            return diag_error(st, DIAG_SEMANTIC, e->line, e->col,
                              "unary minus of a bool: use 'not'");
        e->type = e->op.a->type;
        e->weak = e->op.a->weak;
        return true;
    case E_BINARY: {
        if (!infer(st, e->op.a) || !infer(st, e->op.b)) return false;
        TypeInfo t = promote(info(e->op.a), info(e->op.b));
        if (t.t == DT_BOOL) t.t = DT_INT64; /* arithmetic on bools computes in integers */
        if (e->op.op == OP_DIV && !dtype_is_float(t.t)) t.t = DT_FLOAT64;
        e->type = t.t;
        e->weak = t.weak;
        e->op.a = coerce(st, e->op.a, t.t);
        e->op.b = coerce(st, e->op.b, t.t);
        e->weak = t.weak;
        return e->op.a && e->op.b;
    }
    case E_CMP: {
        if (!infer(st, e->op.a) || !infer(st, e->op.b)) return false;
        TypeInfo t = promote(info(e->op.a), info(e->op.b));
        /* NumPy 2 compares with an out-of-range Python int exactly (i32 < 2**40 is True) */
        if (dtype_is_int(t.t) && (!const_fits(e->op.a, t.t) || !const_fits(e->op.b, t.t)))
            t.t = DT_INT64;
        e->type = DT_BOOL;
        e->op.a = coerce(st, e->op.a, t.t);
        e->op.b = coerce(st, e->op.b, t.t);
        return e->op.a && e->op.b;
    }
    case E_LOGIC:
        if (!infer(st, e->op.a) || !infer(st, e->op.b)) return false;
        e->type = DT_BOOL;
        e->op.a = coerce(st, e->op.a, DT_BOOL);
        e->op.b = coerce(st, e->op.b, DT_BOOL);
        return e->op.a && e->op.b;
    case E_TERNARY: {
        if (!infer(st, e->ternary.cond) || !infer(st, e->ternary.a) || !infer(st, e->ternary.b))
            return false;
        TypeInfo t = promote(info(e->ternary.a), info(e->ternary.b));
        e->type = t.t;
        e->weak = t.weak;
        e->ternary.cond = coerce(st, e->ternary.cond, DT_BOOL);
        e->ternary.a = coerce(st, e->ternary.a, t.t);
        e->ternary.b = coerce(st, e->ternary.b, t.t);
        e->weak = t.weak;
        return e->ternary.cond && e->ternary.a && e->ternary.b;
    }
    case E_CALL: return infer_call(st, e);
    case E_CAST:
        e->weak = false;
        return infer(st, e->cast);
    case E_KINDEX: /* GT4Py's `K`: an int of the default integer precision */
        e->type = DT_INT64;
        e->weak = false;
        return true;
    }
    return true;
}

/* Concrete type of a finished expression: weak literals default to int64 / float64. */
static Expr *finish(Stencil *st, Expr *e, DType want) {
    return coerce(st, e, want);
}

static bool type_stmts(Stencil *st, StmtList *l, bool final);

/* A temporary without a declaration takes the type of its first assignment in program
 * order; `final` is false during the pre-pass that only fixes those types. */
static bool type_assign(Stencil *st, Stmt *s, bool final) {
    Symbol *t = s->assign.target;
    if (!final) {
        if (!t->typed && t->kind == SYM_TEMP) {
            if (!infer(st, s->assign.value)) return false;
            DType v = s->assign.value->type;
            if (s->assign.value->weak && dtype_is_float(v) && st->literal_float_bits == 0)
                v = DT_FLOAT64;
            t->dtype = v;
            t->typed = true;
        }
        return true;
    }
    if (!infer(st, s->assign.value)) return false;
    s->assign.value = finish(st, s->assign.value, t->dtype);
    if (s->assign.value == NULL) return false;
    Expr *k = s->assign.kexpr;
    if (k == NULL) return true;
    /* a variable K offset of a write: the call checks every level written before running */
    if (!infer(st, k)) return false;
    if (!dtype_is_int(k->type))
        return diag_error(st, DIAG_SEMANTIC, k->line, k->col,
                          "a variable K offset must be an integer, not %s", dtype_name(k->type));
    if (t->kind != SYM_FIELD)
        return diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                          "'%s' is a temporary: only field parameters can be written at a variable "
                          "K offset",
                          t->name);
    st->has_variable_k = true;
    if ((s->assign.kexpr = coerce(st, k, DT_INT64)) == NULL) return false;
    KSources src = {st, NULL};
    expr_visit_fields(s->assign.kexpr, koffset_source, &src);
    if (src.bad == NULL) return true;
    /* computed from values the stencil writes: the call cannot evaluate it beforehand, so the
     * kernel checks each level written (a level outside the domain fails the call, which
     * restores the arrays); the target must then hold every level of the domain */
    s->assign.kchecked = true;
    t->kread_checked = true;
    st->has_checked_k = true;
    return true;
}

static bool type_cond(Stencil *st, Expr **cond) {
    if (!infer(st, *cond)) return false;
    *cond = coerce(st, *cond, DT_BOOL);
    return *cond != NULL;
}

static bool type_stmts(Stencil *st, StmtList *l, bool final) {
    for (int i = 0; i < l->n; i++) {
        Stmt *s = l->items[i];
        bool ok = true;
        switch (s->kind) {
        case S_ASSIGN: ok = type_assign(st, s, final); break;
        case S_IF:
            ok = (!final || type_cond(st, &s->if_.cond)) && type_stmts(st, &s->if_.then, final) &&
                 type_stmts(st, &s->if_.els, final);
            break;
        case S_WHILE:
            ok = (!final || type_cond(st, &s->while_.cond)) &&
                 type_stmts(st, &s->while_.body, final);
            break;
        case S_REGION: ok = type_stmts(st, &s->region.body, final); break;
        }
        if (!ok && st->diag.kind == DIAG_NOMEM) return false;
    }
    return st->diag.kind == DIAG_NONE;
}

static bool all_temps_typed(const Stencil *st) {
    for (int i = 0; i < st->ntemps; i++)
        if (!st->temps[i]->typed) return false;
    return true;
}

/* ---- interval bounds written inside the interval they bound -------------------------- */

typedef struct {
    Stencil *st;
    const Expr *bound;
    const StmtList *body; /* the interval's statements, under the bound's guard */
    bool bad;
} BoundWrites;

static void bound_source_written(void *ctx, Expr *e) {
    BoundWrites *w = ctx;
    if (w->bad || !list_writes(w->body, e->field.sym)) return;
    w->bad = true;
    diag_error(w->st, DIAG_SEMANTIC, w->bound->line, w->bound->col,
               "interval bound '%s' is written inside the interval it bounds: GT4Py fixes a "
               "column's levels when the interval starts there, gtscript would read the bound "
               "again at every level; compute it in an earlier computation",
               e->field.sym->name);
}

static void bound_in_guard(void *ctx, Expr *e) {
    BoundWrites *w = ctx;
    if (e->kind != E_CALL || e->call.fn != FN_LEVEL_BOUND) return;
    w->bound = e;
    expr_visit_fields(e->call.args[0], bound_source_written, w);
}

/* The frontend guards an interval bounded by IJ fields or temporaries with a condition on the
 * level (structure.py): a bound written by the statements it guards would change while the
 * column runs, where GT4Py's bound stays what it was when the column started. */
static bool check_bound_writes(Stencil *st, const StmtList *body) {
    for (int i = 0; i < body->n; i++) {
        const Stmt *s = body->items[i];
        if (s->kind != S_IF) continue;
        BoundWrites w = {st, NULL, &s->if_.then, false};
        expr_visit(s->if_.cond, bound_in_guard, &w);
        if (w.bad) return false;
    }
    return true;
}

bool types_infer(Stencil *st) {
    /* Temporaries read before their first assignment (in a later computation, or at another K
     * level) need their types fixed first; a few rounds settle any dependency chain. */
    for (int round = 0; round < 8 && !all_temps_typed(st); round++) {
        for (int c = 0; c < st->ncomps; c++)
            for (int i = 0; i < st->comps[c].nintervals; i++)
                if (!type_stmts(st, &st->comps[c].intervals[i].body, false)) return false;
    }
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++) {
            Interval *in = &st->comps[c].intervals[i];
            /* a run-time bound's parameter is used too: the call requires its argument and
             * never drops it as unused (call.c, unused.h) */
            if (in->start.sym) in->start.sym->read = true;
            if (in->end.sym) in->end.sym->read = true;
            if (!type_stmts(st, &in->body, true)) return false;
            if (st->has_checked_k && !check_bound_writes(st, &in->body)) return false;
        }
    return st->diag.kind == DIAG_NONE;
}
