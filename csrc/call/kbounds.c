/*
 * Call-time validation of variable K offsets and absolute K indices (f.at(K=...), the same
 * rules with the level read independent of the point's own). The build rejects offsets that depend on
 * temporaries or on fields the stencil writes (types.c), so an offset is a function of the
 * arguments only and can be evaluated here, before the kernel runs, with exactly the
 * arithmetic the generated code uses (the IR is fully typed: every cast is explicit).
 * The check is conservative in the way the parallel model's rule 6 reads: a read must stay
 * inside its array at every point where its statement runs, whatever the guards say.
 */
#include "call/kbounds.h"

#include "call/call.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL gtscript_ARRAY_API
#include <numpy/arrayobject.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

typedef union Val {
    int64_t i; /* bools (0/1) and ints */
    double f;  /* floats; float32 values are kept rounded to float32 */
} Val;

typedef struct KCtx {
    const Stencil *st;
    PyObject *const *values;
    const int64_t (*origin)[3];
    const int64_t *domain;
    Val *scalars; /* per scalar slot */
    const Stmt *stmt; /* the statement whose reads are being checked */
    int64_t ks, ke;   /* its K range */
    bool failed;      /* a Python exception is set */
    bool writing;     /* the access checked is the target of a write at a variable K offset */
} KCtx;

/* ---- arrays ------------------------------------------------------------------------- */

static Val load(DType t, const char *p) {
    Val v = {0};
    switch (t) {
    case DT_BOOL: v.i = *(const unsigned char *)p != 0; break;
    case DT_INT8: v.i = *(const int8_t *)p; break;
    case DT_INT16: {
        int16_t x;
        memcpy(&x, p, sizeof x);
        v.i = x;
        break;
    }
    case DT_INT32: {
        int32_t x;
        memcpy(&x, p, sizeof x);
        v.i = x;
        break;
    }
    case DT_INT64: memcpy(&v.i, p, sizeof v.i); break;
    case DT_FLOAT32: {
        float x;
        memcpy(&x, p, sizeof x);
        v.f = x;
        break;
    }
    default: memcpy(&v.f, p, sizeof v.f); break;
    }
    return v;
}

/* ---- arithmetic, as the generated code does it -------------------------------------- */

static int64_t wrap(DType t, int64_t v) {
    if (t == DT_BOOL) return v != 0;
    return dtype_wrap_int(t, v);
}

static double round_to(DType t, double v) { return t == DT_FLOAT32 ? (double)(float)v : v; }

/* Python's floor division and modulo; x // 0 == x % 0 == 0 as in NumPy. */
static int64_t int_divmod(int64_t a, int64_t d, bool want_mod) {
    if (d == 0) return 0;
    if (d == -1) return want_mod ? 0 : (int64_t)(0 - (uint64_t)a);
    int64_t q = a / d, r = a % d;
    if (r != 0 && (r ^ d) < 0) {
        q -= 1;
        r += d;
    }
    return want_mod ? r : q;
}

/* NumPy's npy_divmod. */
static double float_divmod(double a, double b, bool want_mod) {
    double mod = fmod(a, b);
    if (b == 0.0) return want_mod ? mod : a / b;
    double div = (a - mod) / b;
    if (mod != 0.0) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= 1.0;
        }
    } else {
        mod = copysign(0.0, b);
    }
    if (want_mod) return mod;
    if (div != 0.0) {
        double fl = floor(div);
        return div - fl > 0.5 ? fl + 1.0 : fl;
    }
    return copysign(0.0, a / b);
}

/* x ** e for integers by squaring; a negative exponent gives 0 (as the compiled code). */
static int64_t int_pow(int64_t x, int64_t e) {
    if (e < 0) return 0;
    uint64_t acc = 1, b = (uint64_t)x;
    for (; e > 0; e >>= 1) {
        if (e & 1) acc *= b;
        b *= b;
    }
    return (int64_t)acc;
}

/* float -> int as the generated code converts (codegen.c, emit_cast): x86 gives INT_MIN for
 * NaN and out-of-range values, as NumPy's astype there; elsewhere it saturates, NaN -> 0. */
static int64_t float_to_int(double f, DType t) {
    if (dtype_is_small_int(t)) return dtype_wrap_int(t, float_to_int(f, DT_INT32)); /* as NumPy */
#if defined(__x86_64__) || defined(__i386__)
    double lim = t == DT_INT32 ? 2147483648.0 : 9223372036854775808.0;
    if (!(f >= -lim && f < lim)) return t == DT_INT32 ? INT32_MIN : INT64_MIN;
#endif
    if (isnan(f)) return 0;
    if (t == DT_INT32) {
        if (f <= -2147483648.0) return INT32_MIN;
        if (f >= 2147483647.0) return INT32_MAX;
        return (int64_t)f;
    }
    if (f <= -9223372036854775808.0) return INT64_MIN;
    if (f >= 9223372036854775808.0) return INT64_MAX;
    return (int64_t)f;
}

static Val cast(Val v, DType from, DType to) {
    Val r = {0};
    if (to == DT_BOOL) r.i = dtype_is_float(from) ? !(v.f == 0.0) : v.i != 0;
    else if (dtype_is_float(to) && dtype_is_float(from)) r.f = round_to(to, v.f);
    else if (dtype_is_float(to)) r.f = to == DT_FLOAT32 ? (double)(float)v.i : (double)v.i;
    else if (dtype_is_float(from)) r.i = float_to_int(v.f, to);
    else r.i = wrap(to, v.i);
    return r;
}

/* np.minimum / np.maximum, as the kernels compute them: a NaN operand gives NaN, else the
 * smaller (larger) operand, the second on a tie (-0.0 and 0.0). */
static double fminmax(double a, double b, bool want_max) {
    return (want_max ? a > b : a < b) || isnan(a) ? a : b;
}

#define LIBM(fn, t, x) ((t) == DT_FLOAT32 ? (double)fn##f((float)(x)) : fn(x))

static double float_call(Builtin fn, DType t, double x, double y) {
    switch (fn) {
    case FN_ABS: return fabs(x);
    case FN_MIN: return fminmax(x, y, false);
    case FN_MAX: return fminmax(x, y, true);
    case FN_SQRT: return LIBM(sqrt, t, x);
    case FN_EXP: return LIBM(exp, t, x);
    case FN_LOG: return LIBM(log, t, x);
    case FN_LOG10: return LIBM(log10, t, x);
    case FN_POW: return t == DT_FLOAT32 ? (double)powf((float)x, (float)y) : pow(x, y);
    case FN_FLOOR: return floor(x);
    case FN_CEIL: return ceil(x);
    case FN_TRUNC: return trunc(x);
    case FN_SIN: return LIBM(sin, t, x);
    case FN_COS: return LIBM(cos, t, x);
    case FN_TAN: return LIBM(tan, t, x);
    case FN_ARCSIN: return LIBM(asin, t, x);
    case FN_ARCCOS: return LIBM(acos, t, x);
    case FN_ARCTAN: return LIBM(atan, t, x);
    case FN_ARCTAN2: return t == DT_FLOAT32 ? (double)atan2f((float)x, (float)y) : atan2(x, y);
    case FN_SINH: return LIBM(sinh, t, x);
    case FN_COSH: return LIBM(cosh, t, x);
    case FN_TANH: return LIBM(tanh, t, x);
    case FN_ARCSINH: return LIBM(asinh, t, x);
    case FN_ARCCOSH: return LIBM(acosh, t, x);
    case FN_ARCTANH: return LIBM(atanh, t, x);
    case FN_GAMMA: return LIBM(tgamma, t, x);
    case FN_ERF: return LIBM(erf, t, x);
    case FN_ERFC: return LIBM(erfc, t, x);
    case FN_CBRT: return LIBM(cbrt, t, x);
    case FN_ROUND: return rint(x); /* exact in either precision; halves to even */
    case FN_ROUND_AWAY: return round(x);
    default: return NAN;
    }
}

static int64_t int_call(Builtin fn, DType t, int64_t x, int64_t y) {
    switch (fn) {
    case FN_ABS: return x < 0 ? wrap(t, (int64_t)(0 - (uint64_t)x)) : x;
    case FN_MIN: return x < y ? x : y;
    case FN_MAX: return x > y ? x : y;
    case FN_POW: return wrap(t, int_pow(x, y));
    default: return x; /* floor, ceil, trunc of an integer; a data index */
    }
}

static Val binary(Op op, DType t, Val a, Val b) {
    Val r = {0};
    if (dtype_is_float(t)) {
        switch (op) {
        case OP_ADD: r.f = a.f + b.f; break;
        case OP_SUB: r.f = a.f - b.f; break;
        case OP_MUL: r.f = a.f * b.f; break;
        case OP_DIV: r.f = a.f / b.f; break;
        case OP_FLOORDIV: r.f = float_divmod(a.f, b.f, false); break;
        case OP_MOD: r.f = float_divmod(a.f, b.f, true); break;
        default: r.f = float_call(FN_POW, t, a.f, b.f); break;
        }
        r.f = round_to(t, r.f);
        return r;
    }
    uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
    switch (op) {
    case OP_ADD: r.i = (int64_t)(x + y); break;
    case OP_SUB: r.i = (int64_t)(x - y); break;
    case OP_MUL: r.i = (int64_t)(x * y); break;
    case OP_FLOORDIV: r.i = int_divmod(a.i, b.i, false); break;
    case OP_MOD: r.i = int_divmod(a.i, b.i, true); break;
    default: r.i = int_pow(a.i, b.i); break;
    }
    r.i = wrap(t, r.i);
    return r;
}

static bool compare(Op op, DType t, Val a, Val b) {
    if (dtype_is_float(t)) {
        switch (op) {
        case OP_LT: return a.f < b.f;
        case OP_LE: return a.f <= b.f;
        case OP_GT: return a.f > b.f;
        case OP_GE: return a.f >= b.f;
        case OP_EQ: return a.f == b.f;
        default: return a.f != b.f;
        }
    }
    switch (op) {
    case OP_LT: return a.i < b.i;
    case OP_LE: return a.i <= b.i;
    case OP_GT: return a.i > b.i;
    case OP_GE: return a.i >= b.i;
    case OP_EQ: return a.i == b.i;
    default: return a.i != b.i;
    }
}

/* ---- evaluation, a column at a time -------------------------------------------------
 * An offset is evaluated on the n levels k0 .. k0 + n - 1 of one (i, j) column at once, so
 * that interpreting the expression costs per node and column rather than per point.
 * `scratch` has room for 2 * n values per level of the expression below the node. */

typedef struct Col {
    int64_t i, j, k0, n;
} Col;

static bool outside(KCtx *c, const Symbol *s, int axis, int64_t x, Py_ssize_t size) {
    PyErr_Format(PyExc_ValueError,
                 "argument '%s': computing the variable K offset on line %d reads it at %c index "
                 "%lld, outside the array (size %zd)",
                 s->name, c->stmt->line, "IJK"[axis], (long long)x, size);
    return false;
}

/* a + b, saturated at the int64 limits: a K index computed from run-time values (any
 * int64) that overflows is outside every array either way, and stays outside so. */
static int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

/* Field `e` read on the column, K shifted per level by kv (or not, kv == NULL). */
static bool read_column(KCtx *c, const Expr *e, Col p, const Val *kv, Val *out) {
    const Symbol *s = e->field.sym;
    PyArrayObject *a = (PyArrayObject *)c->values[s->index];
    const char *base = PyArray_BYTES(a);
    const int64_t *origin = c->origin[s->index];
    int64_t at[2] = {p.i + e->field.off[0], p.j + e->field.off[1]};
    for (int ax = 0; ax < 2; ax++) {
        int d = field_dim_of(s, ax);
        if (d < 0) continue;
        int64_t x = origin[ax] + at[ax];
        if (x < 0 || x >= PyArray_DIM(a, d)) return outside(c, s, ax, x, PyArray_DIM(a, d));
        base += x * PyArray_STRIDE(a, d);
    }
    for (int d = 0; d < e->field.ndi; d++)
        base += e->field.data_index[d] * PyArray_STRIDE(a, field_naxes(s) + d);
    int dk = field_dim_of(s, 2);
    if (dk < 0) {
        Val v = load(e->type, base);
        for (int64_t m = 0; m < p.n; m++) out[m] = v;
        return true;
    }
    npy_intp nk = PyArray_DIM(a, dk), sk = PyArray_STRIDE(a, dk);
    /* an absolute index (f.at(K=...)) is kv itself: it does not move with the level */
    int64_t k = origin[2] + (e->field.kabs ? 0 : p.k0 + e->field.off[2]), step = !e->field.kabs;
    for (int64_t m = 0; m < p.n; m++) {
        int64_t x = sat_add(k + m * step, kv ? kv[m].i : 0);
        if (x < 0 || x >= nk) return outside(c, s, 2, x, nk);
    }
    /* from here on k + m * step + kv[m] is inside [0, nk): it did not overflow */
    /* the common index dtypes without a per-element dispatch */
#define READ(T, field)                                                                             \
    for (int64_t m = 0; m < p.n; m++) {                                                            \
        T v;                                                                                       \
        memcpy(&v, base + (k + m * step + (kv ? kv[m].i : 0)) * sk, sizeof v);                     \
        out[m].field = v;                                                                          \
    }
    if (e->type == DT_INT32) READ(int32_t, i)
    else if (e->type == DT_INT64) READ(int64_t, i)
    else for (int64_t m = 0; m < p.n; m++) out[m] = load(e->type, base + (k + m * step + (kv ? kv[m].i : 0)) * sk);
#undef READ
    return true;
}

static bool veval(KCtx *c, const Expr *e, Col p, Val *out, Val *scratch);

static bool veval_call(KCtx *c, const Expr *e, Col p, Val *out, Val *scratch) {
    Val *second = scratch;
    if (!veval(c, e->call.args[0], p, out, scratch + p.n)) return false;
    if (e->call.nargs > 1 && !veval(c, e->call.args[1], p, second, scratch + p.n)) return false;
    DType at = e->call.args[0]->type;
    Builtin fn = e->call.fn;
    for (int64_t m = 0; m < p.n; m++) {
        Val x = out[m], y = e->call.nargs > 1 ? second[m] : x;
        if (fn == FN_ISNAN || fn == FN_ISINF || fn == FN_ISFINITE)
            out[m].i = fn == FN_ISNAN ? isnan(x.f) : fn == FN_ISINF ? isinf(x.f) != 0 : isfinite(x.f);
        else if (dtype_is_float(at))
            out[m].f = round_to(e->type, float_call(fn, at, x.f, y.f));
        else
            out[m].i = int_call(fn, at, x.i, y.i);
    }
    return true;
}

static bool veval(KCtx *c, const Expr *e, Col p, Val *out, Val *scratch) {
    int64_t n = p.n;
    Val *b = scratch, *rest = scratch + n;
    switch (e->kind) {
    case E_CONST:
    case E_SCALAR: {
        Val v = {0};
        if (e->kind == E_SCALAR) v = c->scalars[e->scalar->slot];
        else if (dtype_is_float(e->type)) v.f = e->cnst.f;
        else v.i = e->cnst.i;
        for (int64_t m = 0; m < n; m++) out[m] = v;
        return true;
    }
    case E_FIELD:
        if (e->field.kexpr && !veval(c, e->field.kexpr, p, b, rest)) return false;
        return read_column(c, e, p, e->field.kexpr ? b : NULL, out);
    case E_UNARY:
        if (!veval(c, e->op.a, p, out, scratch)) return false;
        for (int64_t m = 0; m < n; m++) {
            if (e->op.op == OP_NOT) out[m].i = !out[m].i;
            else if (e->op.op == OP_NEG && dtype_is_float(e->type)) out[m].f = -out[m].f;
            else if (e->op.op == OP_NEG) out[m].i = wrap(e->type, (int64_t)(0 - (uint64_t)out[m].i));
        }
        return true;
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        if (!veval(c, e->op.a, p, out, scratch) || !veval(c, e->op.b, p, b, rest)) return false;
        for (int64_t m = 0; m < n; m++) {
            if (e->kind == E_BINARY) out[m] = binary(e->op.op, e->type, out[m], b[m]);
            else if (e->kind == E_CMP) out[m].i = compare(e->op.op, e->op.a->type, out[m], b[m]);
            else out[m].i = e->op.op == OP_AND ? (out[m].i && b[m].i) : (out[m].i || b[m].i);
        }
        return true;
    case E_TERNARY:
        /* both sides are evaluated, as the generated select does: both must be readable */
        if (!veval(c, e->ternary.cond, p, b, rest) || !veval(c, e->ternary.a, p, out, rest) ||
            !veval(c, e->ternary.b, p, rest, rest + n))
            return false;
        for (int64_t m = 0; m < n; m++)
            if (!b[m].i) out[m] = rest[m];
        return true;
    case E_CALL: return veval_call(c, e, p, out, scratch);
    case E_KINDEX: /* GT4Py's `K`: the level itself */
        for (int64_t m = 0; m < n; m++) out[m].i = p.k0 + m;
        return true;
    case E_CAST:
        if (!veval(c, e->cast, p, out, scratch)) return false;
        if (dtype_is_int(e->type) && dtype_is_int(e->cast->type) && e->type == DT_INT64) return true;
        for (int64_t m = 0; m < n; m++) out[m] = cast(out[m], e->cast->type, e->type);
        return true;
    }
    return true;
}

static int depth(const Expr *e) {
    if (e == NULL) return 0;
    int d = 0, x;
    switch (e->kind) {
    case E_FIELD: d = depth(e->field.kexpr); break;
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        d = depth(e->op.a);
        if ((x = depth(e->op.b)) > d) d = x;
        break;
    case E_TERNARY:
        d = depth(e->ternary.cond);
        if ((x = depth(e->ternary.a)) > d) d = x;
        if ((x = depth(e->ternary.b)) > d) d = x;
        break;
    case E_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if ((x = depth(e->call.args[i])) > d) d = x;
        break;
    case E_CAST: d = depth(e->cast); break;
    default: break;
    }
    return d + 1;
}

/* ---- the check ---------------------------------------------------------------------- */

static void mark_read(void *ctx, Expr *e) {
    (void)e;
    *(bool *)ctx = true;
}

/* "'idx', 'kk'": the arguments a variable offset is computed from, for the message. */
static void sources(const Expr *e, char *buf, size_t n) {
    if (e == NULL) return;
    const char *name = e->kind == E_FIELD ? e->field.sym->name : e->kind == E_SCALAR ? e->scalar->name : NULL;
    if (name) {
        char quoted[160];
        snprintf(quoted, sizeof quoted, "'%s'", name);
        if (strstr(buf, quoted) == NULL && strlen(buf) + strlen(quoted) + 3 < n) {
            if (buf[0]) strcat(buf, ", ");
            strcat(buf, quoted);
        }
    }
    switch (e->kind) {
    case E_FIELD: sources(e->field.kexpr, buf, n); break;
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        sources(e->op.a, buf, n);
        sources(e->op.b, buf, n);
        break;
    case E_TERNARY:
        sources(e->ternary.cond, buf, n);
        sources(e->ternary.a, buf, n);
        sources(e->ternary.b, buf, n);
        break;
    case E_CALL:
        for (int i = 0; i < e->call.nargs; i++) sources(e->call.args[i], buf, n);
        break;
    case E_CAST: sources(e->cast, buf, n); break;
    default: break;
    }
}

static bool level_ok(KCtx *c, const Expr *e, const int64_t p[3], int64_t level) {
    const Symbol *s = e->field.sym;
    PyArrayObject *a = (PyArrayObject *)c->values[s->index];
    int64_t x = sat_add(c->origin[s->index][2], level);
    Py_ssize_t nk = (Py_ssize_t)PyArray_DIM(a, field_dim_of(s, 2));
    if (x >= 0 && x < nk) return true;
    char from[512] = "";
    sources(e->field.kexpr, from, sizeof from);
    PyErr_Format(PyExc_ValueError,
                 "argument '%s': the %s on line %d %s K index %lld of the array "
                 "(origin %lld + level %lld) at point (%lld, %lld, %lld) of the domain, outside "
                 "its %zd levels; the %s is computed from %s",
                 s->name, e->field.kabs ? "absolute K index .at(K=...)" : "variable K offset",
                 e->line, c->writing ? "writes" : "reads", (long long)x, (long long)c->origin[s->index][2],
                 (long long)level, (long long)p[0], (long long)p[1], (long long)p[2], nk,
                 e->field.kabs ? "index" : "offset", from[0] ? from : "constants");
    return false;
}

/* region box bounds (never run-time bounds), placed from the anchors in c->domain[3..6]
 * (call.h: the grid's first point and one past its last, per axis) */
static int64_t bound_at(const KCtx *c, int a, AxisBound b) {
    return c->domain[3 + 2 * a + b.level] + b.offset;
}

/* The points [lo, hi) of the plane where c->stmt runs inside one box (NULL: everywhere);
 * false when there are none. */
static bool stmt_points(const KCtx *c, const Box *box, int64_t lo[2], int64_t hi[2]) {
    const int *h = c->stmt->horizontal_extent;
    lo[0] = h[0], lo[1] = h[2], hi[0] = c->domain[0] + h[1], hi[1] = c->domain[1] + h[3];
    for (int a = 0; box && a < 2; a++) {
        if (box->has[2 * a] && bound_at(c, a, box->b[2 * a]) > lo[a]) lo[a] = bound_at(c, a, box->b[2 * a]);
        if (box->has[2 * a + 1] && bound_at(c, a, box->b[2 * a + 1]) < hi[a])
            hi[a] = bound_at(c, a, box->b[2 * a + 1]);
    }
    return lo[0] < hi[0] && lo[1] < hi[1];
}

/* What one column's check sees: the point (i, j), the levels c->ks.. of the column, and the
 * values of the checked expression there (one per level). */
typedef bool (*ColumnCheck)(KCtx *c, const Expr *e, int64_t i, int64_t j, const Val *v, int64_t n);

/* Evaluates `value` (part of `e`) over `nlevels` levels from c->ks in every column of one
 * horizontal box where c->stmt runs, and hands each column's values to `check`; a value that
 * reads no field is the same in every column, so one column decides. False at the first
 * column refused (the check has set the error). */
static bool each_column(KCtx *c, const Expr *e, const Expr *value, const Box *box, int64_t nlevels,
                        ColumnCheck check) {
    int64_t lo[2], hi[2];
    if (!stmt_points(c, box, lo, hi)) return true;
    bool pointwise = false;
    expr_visit_fields((Expr *)value, mark_read, &pointwise);
    if (!pointwise) hi[0] = lo[0] + 1, hi[1] = lo[1] + 1;
    /* two values per node of the expression per level, as veval needs (nlevels is the
     * domain's, any int64: the size is checked) */
    size_t bytes;
    Val *v = NULL;
    if (!__builtin_mul_overflow(sizeof(Val) * (size_t)(2 * depth(value) + 3), (size_t)nlevels, &bytes))
        v = malloc(bytes);
    if (v == NULL) {
        PyErr_NoMemory();
        return false;
    }
    bool ok = true;
    for (int64_t i = lo[0]; ok && i < hi[0]; i++)
        for (int64_t j = lo[1]; ok && j < hi[1]; j++) {
            Col col = {i, j, c->ks, nlevels};
            ok = veval(c, value, col, v, v + nlevels) && check(c, e, i, j, v, nlevels);
        }
    free(v);
    return ok;
}

/* A variable-offset (or absolute) K read or write: its lowest and highest level inside the
 * array. */
static bool levels_ok(KCtx *c, const Expr *e, int64_t i, int64_t j, const Val *kv, int64_t n) {
    /* the level read is the point's own plus the offset, or the absolute index */
    int64_t step = !e->field.kabs, mlo = 0, mhi = 0;
    for (int64_t m = 1; m < n; m++) {
        if (sat_add(m * step, kv[m].i) < sat_add(mlo * step, kv[mlo].i)) mlo = m;
        if (sat_add(m * step, kv[m].i) > sat_add(mhi * step, kv[mhi].i)) mhi = m;
    }
    int64_t plo[3] = {i, j, c->ks + mlo}, phi[3] = {i, j, c->ks + mhi};
    return level_ok(c, e, plo, sat_add((plo[2] + e->field.off[2]) * step, kv[mlo].i)) &&
           level_ok(c, e, phi, sat_add((phi[2] + e->field.off[2]) * step, kv[mhi].i));
}

/* Checks one variable-offset read of c->stmt at every point of one horizontal box. */
static bool check_box(KCtx *c, const Expr *e, const Box *box) {
    return each_column(c, e, e->field.kexpr, box, c->ke - c->ks, levels_ok);
}

/* A run-time data index (__data_index(i, size)): 0 <= i < size on every level. */
static bool index_ok(KCtx *c, const Expr *call, int64_t i, int64_t j, const Val *v, int64_t n) {
    int64_t size = call->call.args[1]->cnst.i;
    for (int64_t m = 0; m < n; m++) {
        if (v[m].i >= 0 && v[m].i < size) continue;
        char from[512] = "";
        sources(call->call.args[0], from, sizeof from);
        PyErr_Format(PyExc_IndexError,
                     "the data index on line %d is %lld at point (%lld, %lld, %lld) of the "
                     "domain, outside the dimension's %lld components; it is computed "
                     "from %s",
                     c->stmt->line, (long long)v[m].i, (long long)i, (long long)j,
                     (long long)(c->ks + m), (long long)size, from[0] ? from : "constants");
        return false;
    }
    return true;
}

/* Checks one run-time data index (__data_index(i, size)) of c->stmt at every point of one
 * horizontal box: 0 <= i < size, as the read or write it selects must stay in the array. */
static bool check_index_box(KCtx *c, const Expr *call, const Box *box) {
    return each_column(c, call, call->call.args[0], box, c->ke - c->ks, index_ok);
}

static void first_field(void *ctx, Expr *e) {
    const Expr **first = ctx;
    if (*first == NULL) *first = e;
}

/* An interval bound given by an IJ field (__level_bound(level)): 0 <= level <= nk in the
 * column, or the interval would silently run on fewer levels than the field asks for. */
static bool level_bound_ok(KCtx *c, const Expr *call, int64_t i, int64_t j, const Val *v,
                           int64_t n) {
    (void)n; /* an IJ field: the same on every level, evaluated on one */
    int64_t nk = c->domain[2], lv = v[0].i;
    if (lv >= 0 && lv <= nk) return true;
    const Expr *field = NULL;
    expr_visit_fields(call->call.args[0], first_field, &field);
    if (field == NULL) { /* the frontend always bounds by a field; be safe anyway */
        PyErr_Format(PyExc_ValueError,
                     "the interval bound on line %d is level %lld in column (%lld, %lld) of "
                     "the domain, outside its levels [0, %lld]",
                     call->line, (long long)lv, (long long)i, (long long)j, (long long)nk);
        return false;
    }
    Val *fv = malloc(sizeof(Val) * (size_t)(2 * depth(field) + 3)); /* as each_column's */
    if (fv == NULL) {
        PyErr_NoMemory();
        return false;
    }
    Col col = {i, j, c->ks, 1};
    bool ok = veval(c, field, col, fv, fv + 1);
    char value[64];
    if (ok && dtype_is_float(field->type)) snprintf(value, sizeof value, "%g", fv[0].f);
    else if (ok) snprintf(value, sizeof value, "%lld", (long long)fv[0].i);
    free(fv);
    if (!ok) return false;
    PyErr_Format(PyExc_ValueError,
                 "argument '%s': the interval bound on line %d is level %lld in column "
                 "(%lld, %lld) of the domain ('%s' there is %s), outside the domain's "
                 "levels [0, %lld]: the interval would silently run on fewer levels than "
                 "asked for",
                 field->field.sym->name, call->line, (long long)lv, (long long)i,
                 (long long)j, field->field.sym->name, value, (long long)nk);
    return false;
}

/* Checks one interval bound given by an IJ field (__level_bound(level)) of c->stmt in every
 * column of one horizontal box where the statement runs. */
static bool check_level_box(KCtx *c, const Expr *call, const Box *box) {
    return each_column(c, call, call->call.args[0], box, 1, level_bound_ok);
}

/* Every __data_index and __level_bound call of an expression, checked in every box of
 * c->stmt. */
static void visit_indices(KCtx *c, const Expr *e) {
    if (e == NULL || c->failed) return;
    switch (e->kind) {
    case E_FIELD: visit_indices(c, e->field.kexpr); break;
    case E_UNARY:
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        visit_indices(c, e->op.a);
        visit_indices(c, e->op.b);
        break;
    case E_TERNARY:
        visit_indices(c, e->ternary.cond);
        visit_indices(c, e->ternary.a);
        visit_indices(c, e->ternary.b);
        break;
    case E_CALL:
        for (int i = 0; i < e->call.nargs; i++) visit_indices(c, e->call.args[i]);
        /* a checked level bound (computed from values the stencil writes) is the kernel's */
        if (e->call.fn == FN_DATA_INDEX || (e->call.fn == FN_LEVEL_BOUND && !e->call.checked)) {
            const Stmt *s = c->stmt;
            for (int b = 0; b < (s->nboxes ? s->nboxes : 1) && !c->failed; b++) {
                const Box *box = s->nboxes ? &s->boxes[b] : NULL;
                if (!(e->call.fn == FN_DATA_INDEX ? check_index_box(c, e, box) : check_level_box(c, e, box)))
                    c->failed = true;
            }
        }
        break;
    case E_CAST: visit_indices(c, e->cast); break;
    default: break;
    }
}

static void visit_access(void *ctx, Expr *e) {
    KCtx *c = ctx;
    /* a checked level (computed from values the stencil writes) is checked by the kernel */
    if (c->failed || e->field.kexpr == NULL || e->field.kchecked) return;
    const Stmt *s = c->stmt;
    for (int b = 0; b < (s->nboxes ? s->nboxes : 1) && !c->failed; b++)
        if (!check_box(c, e, s->nboxes ? &s->boxes[b] : NULL)) c->failed = true;
}

static void check_stmts(KCtx *c, const StmtList *l) {
    for (int i = 0; i < l->n && !c->failed; i++) {
        Stmt *s = l->items[i];
        c->stmt = s;
        expr_visit_fields(s->guard, visit_access, c);
        if (c->st->has_data_index || c->st->has_level_bound) visit_indices(c, s->guard);
        if (s->kind == S_ASSIGN) {
            expr_visit_fields(s->assign.value, visit_access, c);
            if (c->st->has_data_index || c->st->has_level_bound) visit_indices(c, s->assign.value);
            if (s->assign.kexpr) {
                /* a write at a variable K offset: checked as a read of the target there */
                Expr w = {.kind = E_FIELD, .type = s->assign.target->dtype, .line = s->line,
                          .col = s->col};
                w.field.sym = s->assign.target;
                w.field.kexpr = s->assign.kexpr;
                w.field.kchecked = s->assign.kchecked; /* then the kernel checks it */
                expr_visit_fields(s->assign.kexpr, visit_access, c);
                c->writing = true;
                visit_access(c, &w);
                c->writing = false;
            }
        } else if (s->kind == S_WHILE) {
            expr_visit_fields(s->while_.cond, visit_access, c);
            if (c->st->has_data_index || c->st->has_level_bound) visit_indices(c, s->while_.cond);
            check_stmts(c, &s->while_.body);
        }
    }
}

/* The scalar arguments as the kernel sees them; false (no exception) when one is not a
 * number of its dtype: the call reports that itself, before any kernel runs. */
static bool read_scalars(const Stencil *st, PyObject *const *values, Val *out) {
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_SCALAR || values[i] == NULL) continue; /* NULL: never used */
        PyObject *o = values[i];
        Val v = {0};
        if (dtype_is_float(s->dtype)) {
            v.f = round_to(s->dtype, PyFloat_AsDouble(o));
        } else if (s->dtype == DT_BOOL) {
            int t = PyObject_IsTrue(o);
            v.i = t > 0;
            if (t < 0) goto bad;
        } else {
            PyObject *idx = PyNumber_Index(o);
            v.i = idx ? wrap(s->dtype, PyLong_AsLongLong(idx)) : 0;
            Py_XDECREF(idx);
        }
        if (PyErr_Occurred()) goto bad;
        out[s->slot] = v;
    }
    return true;
bad:
    PyErr_Clear();
    return false;
}

bool kbounds_check(const Stencil *st, PyObject *const *values, const int64_t (*origin)[3],
                   const int64_t *domain, const int64_t *kvals) {
    if (domain[0] == 0 || domain[1] == 0 || domain[2] == 0) return true;
    if (!st->has_variable_k && !st->has_data_index && !st->has_level_bound) return true;
    Val *scalars = calloc((size_t)st->nscalars + 1, sizeof *scalars);
    if (scalars == NULL) {
        PyErr_NoMemory();
        return false;
    }
    KCtx c = {.st = st, .values = values, .origin = origin, .domain = domain, .scalars = scalars};
    if (read_scalars(st, values, scalars)) {
        for (int ci = 0; ci < st->ncomps && !c.failed; ci++) {
            const Computation *comp = &st->comps[ci];
            for (int i = 0; i < comp->nintervals && !c.failed; i++) {
                const Interval *in = &comp->intervals[i];
                c.ks = bound_level(in->start, domain[2], kvals);
                c.ke = bound_level(in->end, domain[2], kvals);
                if (c.ks < c.ke) check_stmts(&c, &in->body);
            }
        }
    }
    free(scalars);
    return !c.failed;
}

/* ---- the fields the check reads ------------------------------------------------------ */

static void mark_field(void *ctx, Expr *e) {
    if (e->field.sym->kind == SYM_FIELD) ((bool *)ctx)[e->field.sym->index] = true;
}

/* Marks the fields an offset, index or bound computed on the host reads: every field inside a
 * variable K offset (a checked one included: a superset costs a copy, never a check) and
 * inside a __data_index or __level_bound argument (but a checked bound's: the kernel's). */
static void mark_expr(void *ctx, Expr *e) {
    if (e->kind == E_FIELD && e->field.kexpr) expr_visit_fields(e->field.kexpr, mark_field, ctx);
    if (e->kind == E_CALL && (e->call.fn == FN_DATA_INDEX ||
                              (e->call.fn == FN_LEVEL_BOUND && !e->call.checked)))
        expr_visit_fields(e->call.args[0], mark_field, ctx);
}

static void mark_stmts(const StmtList *l, bool *reads) {
    for (int i = 0; i < l->n; i++) {
        Stmt *s = l->items[i];
        expr_visit(s->guard, mark_expr, reads);
        if (s->kind == S_ASSIGN) {
            expr_visit(s->assign.value, mark_expr, reads);
            expr_visit(s->assign.kexpr, mark_expr, reads);
            expr_visit_fields(s->assign.kexpr, mark_field, reads);
        } else if (s->kind == S_WHILE) {
            expr_visit(s->while_.cond, mark_expr, reads);
            mark_stmts(&s->while_.body, reads);
        }
    }
}

bool kbounds_reads_fields(const Stencil *st, bool *reads) {
    memset(reads, 0, sizeof *reads * (size_t)st->nparams);
    if (!st->has_variable_k && !st->has_data_index && !st->has_level_bound) return false;
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++) mark_stmts(&st->comps[c].intervals[i].body, reads);
    bool any = false;
    for (int p = 0; p < st->nparams; p++) any = any || reads[p];
    return any;
}

/* ---- a bound the kernel checked -------------------------------------------------------- */

typedef struct {
    int line;
    const Symbol *from;
} BoundAt;

static void find_checked_bound(void *ctx, Expr *e) {
    BoundAt *at = ctx;
    if (at->from == NULL && e->kind == E_CALL && e->call.fn == FN_LEVEL_BOUND && e->call.checked &&
        e->line == at->line)
        at->from = e->call.from;
}

static void find_in_stmts(const StmtList *l, BoundAt *at) {
    for (int i = 0; i < l->n && at->from == NULL; i++) {
        Stmt *s = l->items[i];
        expr_visit(s->guard, find_checked_bound, at);
        if (s->kind == S_ASSIGN) expr_visit(s->assign.value, find_checked_bound, at); /* a mask */
        if (s->kind == S_WHILE) {
            expr_visit(s->while_.cond, find_checked_bound, at);
            find_in_stmts(&s->while_.body, at);
        }
    }
}

bool kbounds_checked_bound_error(const Stencil *st, int64_t line, int64_t nk, const int64_t *info) {
    BoundAt at = {(int)line, NULL};
    for (int c = 0; c < st->ncomps && at.from == NULL; c++)
        for (int i = 0; i < st->comps[c].nintervals && at.from == NULL; i++)
            find_in_stmts(&st->comps[c].intervals[i].body, &at);
    const char *what = at.from && at.from->kind == SYM_TEMP ? "the temporary" : "the field";
    char where[96] = "a level in some column";
    if (info)
        snprintf(where, sizeof where, "level %lld in column (%lld, %lld) of the domain",
                 (long long)info[2], (long long)info[0], (long long)info[1]);
    PyErr_Format(PyExc_ValueError,
                 "the interval bound on line %lld, computed from %s '%s' the stencil writes, is "
                 "%s, outside the domain's levels [0, %lld]: the interval would silently run "
                 "on fewer levels than asked for; the call was undone (every array it wrote "
                 "was restored)",
                 (long long)line, what, at.from ? at.from->name : "?", where, (long long)nk);
    return false;
}
