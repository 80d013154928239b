/* Expressions: IR expression -> C expression text, with NumPy semantics (see the preamble). */
#include "backend/cuda/cudagen_expr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cuda_ctype(DType t) {
    switch (t) {
    case DT_BOOL: return "bool";
    case DT_INT8: return "signed char";
    case DT_INT16: return "short";
    case DT_INT32: return "int";
    case DT_INT64: return "long long";
    case DT_FLOAT32: return "float";
    case DT_FLOAT64: return "double";
    default: return "double";
    }
}

const char *cuda_mtype(DType t) { return t == DT_BOOL ? "unsigned char" : cuda_ctype(t); }

static const char *sfx(DType t) {
    switch (t) {
    case DT_INT8: return "i8";
    case DT_INT16: return "i16";
    case DT_INT32: return "i32";
    case DT_INT64: return "i64";
    case DT_FLOAT32: return "f32";
    default: return "f64";
    }
}

static void emit(ExprWriter *x, StrBuf *sb, const Expr *e);

static void constant(StrBuf *sb, const Expr *e) {
    switch (e->type) {
    case DT_BOOL: sb_puts(sb, e->cnst.i ? "true" : "false"); return;
    case DT_INT8:
    case DT_INT16: sb_printf(sb, "((%s)(%d))", cuda_ctype(e->type), (int)e->cnst.i); return;
    case DT_INT32:
        if (e->cnst.i == INT32_MIN) sb_puts(sb, "(-2147483647 - 1)");
        else sb_printf(sb, e->cnst.i < 0 ? "(%d)" : "%d", (int)e->cnst.i);
        return;
    case DT_INT64:
        if (e->cnst.i == INT64_MIN) sb_puts(sb, "(-9223372036854775807LL - 1)");
        else sb_printf(sb, e->cnst.i < 0 ? "(%lldLL)" : "%lldLL", (long long)e->cnst.i);
        return;
    default: break;
    }
    bool f32 = e->type == DT_FLOAT32;
    double v = f32 ? (double)(float)e->cnst.f : e->cnst.f;
    if (isnan(v)) sb_puts(sb, f32 ? "gt_nan_f32()" : "gt_nan_f64()");
    else if (isinf(v)) sb_puts(sb, v > 0 ? (f32 ? "gt_inf_f32()" : "gt_inf_f64()") : (f32 ? "(-gt_inf_f32())" : "(-gt_inf_f64())"));
    else {
        /* the shortest decimal that reads back as exactly this value (as Python's repr) */
        char buf[48];
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, v);
            if (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
        }
        if (strpbrk(buf, ".e") == NULL) strcat(buf, ".0");
        sb_printf(sb, signbit(v) ? "(%s%s)" : "%s%s", buf, f32 ? "f" : "");
    }
}

/* target dtype `to` from an operand of dtype `from` (the cpu backend's emit_cast). */
static void cast(ExprWriter *x, StrBuf *sb, const Expr *a, DType to) {
    DType from = a->type;
    if (from == to) {
        emit(x, sb, a);
        return;
    }
    if (to == DT_BOOL) {
        sb_puts(sb, "(");
        emit(x, sb, a);
        sb_puts(sb, " != 0)");
        return;
    }
    if (dtype_is_float(from) && dtype_is_int(to)) {
        sb_printf(sb, "gt_cast_%s((double)", sfx(to));
        emit(x, sb, a);
        sb_puts(sb, ")");
        return;
    }
    sb_printf(sb, "((%s)", cuda_ctype(to));
    emit(x, sb, a);
    sb_puts(sb, ")");
}

static void call2(ExprWriter *x, StrBuf *sb, const char *fn, const Expr *a, const Expr *b) {
    sb_printf(sb, "%s(", fn);
    emit(x, sb, a);
    if (b) {
        sb_puts(sb, ", ");
        emit(x, sb, b);
    }
    sb_puts(sb, ")");
}

/* (a OP b), C's own operator for it. C computes int8/int16 arithmetic in int: the result is
 * cast back, so it wraps at the dtype's width as NumPy's does (and as the cpu backend's). */
static void infix(ExprWriter *x, StrBuf *sb, const Expr *e, const char *op) {
    bool narrow = dtype_is_small_int(e->type);
    if (narrow) sb_printf(sb, "((%s)", cuda_ctype(e->type));
    sb_puts(sb, "(");
    emit(x, sb, e->op.a);
    sb_printf(sb, " %s ", op);
    emit(x, sb, e->op.b);
    sb_puts(sb, ")");
    if (narrow) sb_puts(sb, ")");
}

static void binary(ExprWriter *x, StrBuf *sb, const Expr *e) {
    static const char *const sym[] = {[OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/"};
    char fn[48];
    switch (e->op.op) {
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_DIV:
        infix(x, sb, e, sym[e->op.op]);
        return;
    case OP_FLOORDIV: snprintf(fn, sizeof fn, "gt_floordiv_%s", sfx(e->type)); break;
    case OP_MOD: snprintf(fn, sizeof fn, "gt_mod_%s", sfx(e->type)); break;
    case OP_POW:
        if (dtype_is_float(e->type)) snprintf(fn, sizeof fn, "pow%s", e->type == DT_FLOAT32 ? "f" : "");
        else snprintf(fn, sizeof fn, "gt_pow_%s", sfx(e->type));
        break;
    default: snprintf(fn, sizeof fn, "gt_invalid"); break;
    }
    call2(x, sb, fn, e->op.a, e->op.b);
}

static void builtin(ExprWriter *x, StrBuf *sb, const Expr *e) {
    const Expr *a = e->call.args[0], *b = e->call.nargs > 1 ? e->call.args[1] : NULL;
    DType t = a->type;
    bool fl = dtype_is_float(t);
    char fn[48];
    switch (e->call.fn) {
    case FN_ABS:
        if (fl) snprintf(fn, sizeof fn, "fabs%s", t == DT_FLOAT32 ? "f" : "");
        else snprintf(fn, sizeof fn, "gt_abs_%s", sfx(t));
        break;
    case FN_MIN:
    case FN_MAX: {
        bool mn = e->call.fn == FN_MIN;
        if (fl) {
            snprintf(fn, sizeof fn, "gt_%s_%s", mn ? "min" : "max", sfx(t));
            break;
        }
        sb_puts(sb, "(");
        emit(x, sb, a);
        sb_puts(sb, mn ? " < " : " > ");
        emit(x, sb, b);
        sb_puts(sb, " ? ");
        emit(x, sb, a);
        sb_puts(sb, " : ");
        emit(x, sb, b);
        sb_puts(sb, ")");
        return;
    }
    case FN_FLOOR:
    case FN_CEIL:
    case FN_TRUNC:
    case FN_ROUND:
    case FN_ROUND_AWAY:
        if (!fl) { /* NumPy 2 keeps integers integers */
            emit(x, sb, a);
            return;
        }
        snprintf(fn, sizeof fn, "%s%s", builtin_libm_name(e->call.fn), t == DT_FLOAT32 ? "f" : "");
        break;
    case FN_ISNAN:
        sb_puts(sb, "(");
        emit(x, sb, a);
        sb_puts(sb, " != ");
        emit(x, sb, a);
        sb_puts(sb, ")");
        return;
    case FN_LEVEL_BOUND:
        if (e->call.checked) { /* computed from values the stencil writes: checked here */
            sb_puts(sb, "gt_kbound((long long)");
            emit(x, sb, a);
            sb_puts(sb, x->bound_check(x->ctx, e));
            sb_puts(sb, ")");
            return;
        }
        emit(x, sb, a); /* checked by the call before the kernel runs */
        return;
    case FN_DATA_INDEX: /* checked by the call before the kernel runs */
        emit(x, sb, a);
        return;
    case FN_ISINF: snprintf(fn, sizeof fn, "gt_isinf_%s", sfx(t)); break;
    case FN_ISFINITE: snprintf(fn, sizeof fn, "gt_isfinite_%s", sfx(t)); break;
    case FN_POW:
        if (!fl) {
            snprintf(fn, sizeof fn, "gt_pow_%s", sfx(t));
            break;
        }
        /* fall through */
    default: snprintf(fn, sizeof fn, "%s%s", builtin_libm_name(e->call.fn), t == DT_FLOAT32 ? "f" : ""); break;
    }
    call2(x, sb, fn, a, b);
}

static void emit(ExprWriter *x, StrBuf *sb, const Expr *e) {
    switch (e->kind) {
    case E_CONST: constant(sb, e); return;
    case E_FIELD: sb_puts(sb, x->read(x->ctx, e)); return;
    case E_SCALAR: sb_puts(sb, x->scalar(x->ctx, e->scalar)); return;
    case E_UNARY:
        if (e->op.op == OP_POS) {
            emit(x, sb, e->op.a);
            return;
        }
        if (dtype_is_small_int(e->type)) sb_printf(sb, "((%s)", cuda_ctype(e->type));
        sb_puts(sb, e->op.op == OP_NOT ? "(!" : "(-");
        emit(x, sb, e->op.a);
        sb_puts(sb, ")");
        if (dtype_is_small_int(e->type)) sb_puts(sb, ")");
        return;
    case E_BINARY: binary(x, sb, e); return;
    case E_CMP:
    case E_LOGIC: {
        static const char *const sym[] = {[OP_LT] = "<",  [OP_LE] = "<=", [OP_GT] = ">",  [OP_GE] = ">=",
                                          [OP_EQ] = "==", [OP_NE] = "!=", [OP_AND] = "&&", [OP_OR] = "||"};
        infix(x, sb, e, sym[e->op.op]);
        return;
    }
    case E_TERNARY:
        sb_puts(sb, "(");
        emit(x, sb, e->ternary.cond);
        sb_puts(sb, " ? ");
        emit(x, sb, e->ternary.a);
        sb_puts(sb, " : ");
        emit(x, sb, e->ternary.b);
        sb_puts(sb, ")");
        return;
    case E_CALL: builtin(x, sb, e); return;
    case E_CAST: cast(x, sb, e->cast, e->type); return;
    case E_KINDEX: sb_printf(sb, "((long long)%s)", x->level(x->ctx)); return;
    }
}

void cuda_expr(ExprWriter *x, StrBuf *sb, const Expr *e) { emit(x, sb, e); }
