/*
 * IR -> LLVM IR. Each statement becomes a loop nest over its extended compute domain:
 * PARALLEL computations run statement by statement over I, J and the interval's K range
 * (as the seed's whole-array NumPy reading); FORWARD/BACKWARD run level by level with each
 * statement over the I-J plane. Values are computed exactly as NumPy computes them
 * (no fast-math; Python's floor-division and modulo rules).
 */
#include "backend/cpu/codegen.h"
#include "analysis/analysis.h"
#include "backend/cpu/blocks.h"
#include "backend/cpu/cg.h"
#include "backend/cpu/jit.h"
#include "backend/cpu/stream.h"
#include "backend/cpu/vecmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value type of a dtype (bools as i1). */
LLVMTypeRef cg_type(CG *g, DType t) {
    switch (t) {
    case DT_BOOL: return g->i1;
    case DT_INT8: return g->i8;
    case DT_INT16: return g->i16;
    case DT_INT32: return g->i32;
    case DT_INT64: return g->i64;
    case DT_FLOAT32: return g->f32;
    case DT_FLOAT64: return g->f64;
    default: return g->f64;
    }
}

/* The in-memory type: NumPy stores bools as bytes. */
static LLVMTypeRef mem_ty(CG *g, DType t) { return t == DT_BOOL ? g->i8 : cg_type(g, t); }
LLVMTypeRef cg_mem_type(CG *g, DType t) { return mem_ty(g, t); }

LLVMValueRef cg_c64(CG *g, long long v) { return LLVMConstInt(g->i64, (unsigned long long)v, 1); }

/* ---- intrinsics and libm ------------------------------------------------------------ */

static LLVMValueRef intrinsic(CG *g, const char *name, LLVMTypeRef t, LLVMValueRef *args, int n) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMTypeRef types[1] = {t};
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(g->mod, id, types, 1);
    LLVMTypeRef ft = LLVMIntrinsicGetType(g->ctx, id, types, 1);
    return LLVMBuildCall2(g->b, ft, f, args, (unsigned)n, "");
}

/* A math function of LLVM's (llvm.exp, ...) for builtin fn of dtype dt, with libmvec's SIMD
 * versions named where the stencil was built with vector_math. */
static LLVMValueRef math_intrinsic(CG *g, const char *name, Builtin fn, DType dt, LLVMValueRef *args) {
    LLVMValueRef call = intrinsic(g, name, cg_type(g, dt), args, builtin_arity(fn));
    if (g->st->vector_math) vecmath_mark_call(g, call, fn, dt);
    return call;
}

/* A call of the C library's function for builtin fn (its name: builtin_libm_name) of dtype
 * dt, with libmvec's SIMD versions named where the stencil was built with vector_math. */
static LLVMValueRef libm(CG *g, Builtin fn, DType dt, LLVMValueRef *args) {
    char fname[32];
    LLVMTypeRef t = cg_type(g, dt);
    int n = builtin_arity(fn);
    snprintf(fname, sizeof fname, "%s%s", builtin_libm_name(fn), t == g->f32 ? "f" : "");
    LLVMTypeRef params[2] = {t, t};
    LLVMTypeRef ft = LLVMFunctionType(t, params, (unsigned)n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(g->mod, fname);
    if (f == NULL) {
        f = LLVMAddFunction(g->mod, fname, ft);
        LLVMSetLinkage(f, LLVMExternalLinkage);
        /* With vector_math the function is declared pure (it may set errno, which nothing
         * here reads), so the vectoriser may call its vector variant (vecmath.c); without
         * it the declaration stays as it was. */
        if (g->st->vector_math) vecmath_declare_pure(g, f);
    }
    LLVMValueRef call = LLVMBuildCall2(g->b, ft, f, args, (unsigned)n, "");
    if (g->st->vector_math) vecmath_mark_call(g, call, fn, dt);
    return call;
}

/* ---- addressing --------------------------------------------------------------------- */

/*
 * Address of field or temporary `s` at the current point shifted by the constant `off` (I, J,
 * K) and data index `didx`; `kidx`, when given, is the K index itself (variable offsets,
 * absolute K) and replaces g->k + off[2]. The offset is built as (point part) + (constant
 * part): the point part, i * si + j * sj + k * sk, is the same for every access of the slot
 * at this point, so it is computed once; the constant part, off * strides, depends only on
 * loop-invariant strides and is hoisted out of every loop. A stencil reading a field at a
 * dozen offsets then costs one multiply-add per field and column, not a dozen.
 */
static LLVMValueRef (*slot_strides(CG *g, int slot))[GT_STRIDES];

static LLVMValueRef address(CG *g, const Symbol *s, const int off[3], LLVMValueRef kidx, int ndi,
                            const int *didx) {
    LLVMBuilderRef b = g->b;
    for (int x = 0; x < g->nviews; x++) { /* a block's scratch: (col, k) at col + k * cols */
        const BlockSym *v = &g->views[x];
        if (v->sym != s || v->di != off[0] || v->dj != off[1]) continue;
        LLVMValueRef k = kidx ? kidx : LLVMBuildNSWAdd(b, g->k, cg_c64(g, off[2]), "");
        LLVMValueRef idx = LLVMBuildNSWAdd(b, g->col, LLVMBuildNSWMul(b, k, g->blk_cols, ""), "");
        return LLVMBuildInBoundsGEP2(b, mem_ty(g, s->dtype), g->blkbuf[x], &idx, 1, "");
    }
    LLVMValueRef (*st)[GT_STRIDES] = slot_strides(g, s->slot);
    LLVMValueRef i = g->i, j = g->j;
    if (cpu_bundle_buffer(g->st, s, g->layout)) { /* a bundle's buffer: indexed by lane */
        i = cg_c64(g, 0);
        j = cg_c64(g, g->lane);
    } else if (s->kind == SYM_TEMP) { /* tile-private buffer: indexed from the tile's origin */
        i = LLVMBuildNSWSub(b, i, g->ti0, "");
        j = LLVMBuildNSWSub(b, j, g->tj0, "");
    }
    LLVMValueRef point = LLVMBuildNSWMul(b, i, (*st)[0], "");
    point = LLVMBuildNSWAdd(b, point, LLVMBuildNSWMul(b, j, (*st)[1], ""), "");
    point = LLVMBuildNSWAdd(b, point, LLVMBuildNSWMul(b, kidx ? kidx : g->k, (*st)[2], ""), "");
    LLVMValueRef shift = cg_c64(g, 0);
    for (int a = 0; a < 3; a++)
        if (off[a] && (a < 2 || kidx == NULL))
            shift = LLVMBuildNSWAdd(b, shift, LLVMBuildNSWMul(b, cg_c64(g, off[a]), (*st)[a], ""), "");
    for (int d = 0; d < ndi; d++)
        if (didx[d]) shift = LLVMBuildNSWAdd(b, shift, LLVMBuildNSWMul(b, cg_c64(g, didx[d]), (*st)[3 + d], ""), "");
    LLVMValueRef total = LLVMBuildNSWAdd(b, point, shift, "");
    return LLVMBuildInBoundsGEP2(b, mem_ty(g, s->dtype), g->base[s->slot], &total, 1, "");
}

LLVMValueRef cg_slot_stride(CG *g, const Symbol *s, int axis) { return (*slot_strides(g, s->slot))[axis]; }

LLVMValueRef cg_point_address(CG *g, const Symbol *s) {
    static const int zero[3] = {0, 0, 0};
    return address(g, s, zero, NULL, 0, NULL);
}

/* The register of temporary s in the current lane (cpu_register_temp): an alloca in the
 * part's entry block, made on first use and set to zero there (a mask may be read where it
 * was not written, registers.c: never an undefined value); the column sweeps' lanes have
 * one each. */
static LLVMValueRef reg_slot(CG *g, const Symbol *s, int prev) {
    LLVMValueRef *r = &g->regs[s->index][prev][g->lane];
    if (*r == NULL) {
        LLVMTypeRef t = cg_type(g, s->dtype);
        *r = LLVMBuildAlloca(g->pb, t, s->name);
        LLVMBuildStore(g->pb, LLVMConstNull(t), *r);
    }
    return *r;
}

bool cg_in_register(const CG *g, const Symbol *s) {
    return cpu_register_temp(g->st, s, g->layout) && !(s->reg_carried && g->nviews > 0);
}

void cg_registers_next_level(CG *g, const Computation *c) {
    int index = (int)(c - g->st->comps);
    for (int t = 0; t < g->st->ntemps; t++) {
        const Symbol *s = g->st->temps[t];
        if (!s->reg_carried || s->reg_comp != index || !cg_in_register(g, s)) continue;
        LLVMValueRef v = LLVMBuildLoad2(g->b, cg_type(g, s->dtype), reg_slot(g, s, 0), "");
        LLVMBuildStore(g->b, v, reg_slot(g, s, 1));
    }
}

void cg_registers_start_column(CG *g, const Computation *c) {
    int index = (int)(c - g->st->comps);
    for (int t = 0; t < g->st->ntemps; t++) {
        const Symbol *s = g->st->temps[t];
        if (s->in_register && !s->reg_carried && s->reg_comp == index && cg_in_register(g, s))
            LLVMBuildStore(g->b, LLVMConstNull(cg_type(g, s->dtype)), reg_slot(g, s, 0));
    }
}

static LLVMValueRef load_mem(CG *g, DType t, LLVMValueRef addr) {
    LLVMValueRef v = LLVMBuildLoad2(g->b, mem_ty(g, t), addr, "");
    if (t == DT_BOOL) v = LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstInt(g->i8, 0, 0), "");
    return v;
}

static void store_mem(CG *g, DType t, LLVMValueRef v, LLVMValueRef addr) {
    if (t == DT_BOOL) v = LLVMBuildZExt(g->b, v, g->i8, "");
    LLVMBuildStore(g->b, v, addr);
}

/* ---- expressions -------------------------------------------------------------------- */

static LLVMValueRef emit_cast(CG *g, LLVMValueRef v, DType from, DType to) {
    LLVMBuilderRef b = g->b;
    if (from == to) return v;
    LLVMTypeRef t = cg_type(g, to);
    if (to == DT_BOOL) {
        if (dtype_is_float(from)) return LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstReal(cg_type(g, from), 0.0), "");
        return LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(cg_type(g, from), 0, 0), "");
    }
    if (from == DT_BOOL) return dtype_is_float(to) ? LLVMBuildUIToFP(b, v, t, "") : LLVMBuildZExt(b, v, t, "");
    if (dtype_is_float(from) && dtype_is_float(to))
        return to == DT_FLOAT64 ? LLVMBuildFPExt(b, v, t, "") : LLVMBuildFPTrunc(b, v, t, "");
    if (dtype_is_int(from) && dtype_is_int(to))
        return dtype_int_bits(to) > dtype_int_bits(from) ? LLVMBuildSExt(b, v, t, "")
                                                         : LLVMBuildTrunc(b, v, t, "");
    if (dtype_is_int(from)) return LLVMBuildSIToFP(b, v, t, "");
    /* float -> int8/int16: NumPy's astype converts to int32 and keeps the low bits */
    if (dtype_is_small_int(to)) return LLVMBuildTrunc(b, emit_cast(g, v, from, DT_INT32), t, "");
    /* float -> int: saturating, so NaN and overflow give a defined value (no poison) */
    LLVMValueRef args[1] = {v};
    unsigned id = LLVMLookupIntrinsicID("llvm.fptosi.sat", 15);
    LLVMTypeRef types[2] = {t, cg_type(g, from)};
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(g->mod, id, types, 2);
    LLVMTypeRef ft = LLVMIntrinsicGetType(g->ctx, id, types, 2);
    LLVMValueRef sat = LLVMBuildCall2(b, ft, f, args, 1, "");
#if defined(__x86_64__) || defined(__i386__)
    /* NumPy's astype is the C cast, which on x86 gives the "integer indefinite" INT_MIN for
     * NaN and for values out of range: do the same, so both backends agree bit for bit */
    double lim = to == DT_INT32 ? 2147483648.0 : 9223372036854775808.0;
    LLVMTypeRef ft_from = cg_type(g, from);
    LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGE, v, LLVMConstReal(ft_from, -lim), ""),
                                   LLVMBuildFCmp(b, LLVMRealOLT, v, LLVMConstReal(ft_from, lim), ""), "");
    LLVMValueRef int_min = to == DT_INT32 ? LLVMConstInt(t, 0x80000000ULL, 0) : LLVMConstInt(t, 1ULL << 63, 0);
    return LLVMBuildSelect(b, in, sat, int_min, "");
#else
    return sat;
#endif
}

/* Python/NumPy integer floor division and modulo; x // 0 == x % 0 == 0 as in NumPy. */
static LLVMValueRef int_divmod(CG *g, LLVMValueRef a, LLVMValueRef d, LLVMTypeRef t, bool want_mod) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef zero = LLVMConstInt(t, 0, 0), one = LLVMConstInt(t, 1, 0);
    LLVMValueRef minus1 = LLVMConstAllOnes(t);
    LLVMValueRef is0 = LLVMBuildICmp(b, LLVMIntEQ, d, zero, "");
    LLVMValueRef ism1 = LLVMBuildICmp(b, LLVMIntEQ, d, minus1, "");
    LLVMValueRef safe = LLVMBuildSelect(b, LLVMBuildOr(b, is0, ism1, ""), one, d, "");
    LLVMValueRef q = LLVMBuildSDiv(b, a, safe, "");
    LLVMValueRef r = LLVMBuildSRem(b, a, safe, "");
    LLVMValueRef adjust = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntNE, r, zero, ""),
                                       LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, d, ""), zero, ""), "");
    if (want_mod) {
        LLVMValueRef m = LLVMBuildSelect(b, adjust, LLVMBuildAdd(b, r, d, ""), r, "");
        return LLVMBuildSelect(b, LLVMBuildOr(b, is0, ism1, ""), zero, m, "");
    }
    q = LLVMBuildSub(b, q, LLVMBuildZExt(b, adjust, t, ""), "");
    q = LLVMBuildSelect(b, ism1, LLVMBuildSub(b, zero, a, ""), q, "");
    return LLVMBuildSelect(b, is0, zero, q, "");
}

/* NumPy's npy_divmod for floats (fmod-based, with its rounding fix-ups). */
static LLVMValueRef float_divmod(CG *g, LLVMValueRef a, LLVMValueRef d, LLVMTypeRef t, bool want_mod) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef zero = LLVMConstReal(t, 0.0);
    LLVMValueRef mod = LLVMBuildFRem(b, a, d, "");
    LLVMValueRef dneg = LLVMBuildFCmp(b, LLVMRealOLT, d, zero, "");
    LLVMValueRef mneg = LLVMBuildFCmp(b, LLVMRealOLT, mod, zero, "");
    LLVMValueRef mnz = LLVMBuildFCmp(b, LLVMRealUNE, mod, zero, "");
    LLVMValueRef fix = LLVMBuildAnd(b, mnz, LLVMBuildXor(b, dneg, mneg, ""), "");
    LLVMValueRef div = LLVMBuildFDiv(b, LLVMBuildFSub(b, a, mod, ""), d, "");
    if (want_mod) {
        LLVMValueRef m = LLVMBuildSelect(b, fix, LLVMBuildFAdd(b, mod, d, ""), mod, "");
        LLVMValueRef cs[2] = {zero, d};
        LLVMValueRef signed0 = intrinsic(g, "llvm.copysign", t, cs, 2);
        m = LLVMBuildSelect(b, mnz, m, signed0, "");
        /* d == 0: fmod gives NaN, as NumPy */
        return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, d, zero, ""), mod, m, "");
    }
    div = LLVMBuildSelect(b, fix, LLVMBuildFSub(b, div, LLVMConstReal(t, 1.0), ""), div, "");
    LLVMValueRef fl_args[1] = {div};
    LLVMValueRef fl = intrinsic(g, "llvm.floor", t, fl_args, 1);
    LLVMValueRef up = LLVMBuildFCmp(b, LLVMRealOGT, LLVMBuildFSub(b, div, fl, ""), LLVMConstReal(t, 0.5), "");
    fl = LLVMBuildSelect(b, up, LLVMBuildFAdd(b, fl, LLVMConstReal(t, 1.0), ""), fl, "");
    LLVMValueRef q = LLVMBuildFDiv(b, a, d, "");
    LLVMValueRef cs[2] = {zero, q};
    LLVMValueRef signed0 = intrinsic(g, "llvm.copysign", t, cs, 2);
    LLVMValueRef divnz = LLVMBuildFCmp(b, LLVMRealUNE, div, zero, "");
    LLVMValueRef res = LLVMBuildSelect(b, divnz, fl, signed0, "");
    return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, d, zero, ""), q, res, "");
}

/* Integer power by squaring, as an internal helper function of the module. */
static LLVMValueRef int_pow(CG *g, LLVMValueRef a, LLVMValueRef e, LLVMTypeRef t) {
    const char *name = t == g->i8 ? "gt_ipow8" : t == g->i16 ? "gt_ipow16" : t == g->i32 ? "gt_ipow32" : "gt_ipow64";
    LLVMTypeRef params[2] = {t, t};
    LLVMTypeRef ft = LLVMFunctionType(t, params, 2, 0);
    LLVMValueRef f = LLVMGetNamedFunction(g->mod, name);
    if (f == NULL) {
        f = LLVMAddFunction(g->mod, name, ft);
        LLVMSetLinkage(f, LLVMInternalLinkage);
        LLVMBuilderRef b = LLVMCreateBuilderInContext(g->ctx);
        LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(g->ctx, f, "entry");
        LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g->ctx, f, "loop");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, f, "done");
        LLVMPositionBuilderAtEnd(b, entry);
        LLVMValueRef base = LLVMGetParam(f, 0), ex = LLVMGetParam(f, 1);
        LLVMValueRef zero = LLVMConstInt(t, 0, 0), one = LLVMConstInt(t, 1, 0);
        /* x ** 0 == 1; a negative exponent gives 0 (NumPy raises; a stencil cannot) */
        LLVMValueRef trivial =
            LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, ex, zero, ""), one, zero, "");
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, ex, zero, ""), loop, done);
        LLVMPositionBuilderAtEnd(b, loop);
        LLVMValueRef acc = LLVMBuildPhi(b, t, "acc"), bb = LLVMBuildPhi(b, t, "b"), ee = LLVMBuildPhi(b, t, "e");
        LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, ee, one, ""), zero, "");
        LLVMValueRef acc2 = LLVMBuildSelect(b, odd, LLVMBuildMul(b, acc, bb, ""), acc, "");
        LLVMValueRef bb2 = LLVMBuildMul(b, bb, bb, "");
        LLVMValueRef ee2 = LLVMBuildLShr(b, ee, one, "");
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, ee2, zero, ""), loop, done);
        LLVMValueRef in_acc[2] = {one, acc2}, in_b[2] = {base, bb2}, in_e[2] = {ex, ee2};
        LLVMBasicBlockRef from[2] = {entry, loop};
        LLVMAddIncoming(acc, in_acc, from, 2);
        LLVMAddIncoming(bb, in_b, from, 2);
        LLVMAddIncoming(ee, in_e, from, 2);
        LLVMPositionBuilderAtEnd(b, done);
        LLVMValueRef r = LLVMBuildPhi(b, t, "r");
        LLVMValueRef r_in[2] = {trivial, acc2};
        LLVMAddIncoming(r, r_in, from, 2);
        LLVMBuildRet(b, r);
        LLVMDisposeBuilder(b);
    }
    LLVMValueRef args[2] = {a, e};
    return LLVMBuildCall2(g->b, ft, f, args, 2, "");
}

static LLVMValueRef emit_binary(CG *g, const Expr *e) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef x = cg_emit_expr(g, e->op.a), y = cg_emit_expr(g, e->op.b);
    LLVMTypeRef t = cg_type(g, e->type);
    bool fl = dtype_is_float(e->type);
    switch (e->op.op) {
    case OP_ADD: return fl ? LLVMBuildFAdd(b, x, y, "") : LLVMBuildAdd(b, x, y, "");
    case OP_SUB: return fl ? LLVMBuildFSub(b, x, y, "") : LLVMBuildSub(b, x, y, "");
    case OP_MUL: return fl ? LLVMBuildFMul(b, x, y, "") : LLVMBuildMul(b, x, y, "");
    case OP_DIV: return LLVMBuildFDiv(b, x, y, "");
    case OP_FLOORDIV: return fl ? float_divmod(g, x, y, t, false) : int_divmod(g, x, y, t, false);
    case OP_MOD: return fl ? float_divmod(g, x, y, t, true) : int_divmod(g, x, y, t, true);
    case OP_POW: {
        if (!fl) return int_pow(g, x, y, t);
        LLVMValueRef args[2] = {x, y};
        return math_intrinsic(g, "llvm.pow", FN_POW, e->type, args);
    }
    default: break;
    }
    return LLVMGetUndef(t);
}

static LLVMValueRef emit_cmp(CG *g, const Expr *e) {
    LLVMValueRef x = cg_emit_expr(g, e->op.a), y = cg_emit_expr(g, e->op.b);
    DType t = e->op.a->type;
    if (dtype_is_float(t)) {
        /* ordered comparisons, except != which is true for NaN (as IEEE and NumPy) */
        static const LLVMRealPredicate fp[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOGT,
                                               LLVMRealOGE, LLVMRealOEQ, LLVMRealUNE};
        return LLVMBuildFCmp(g->b, fp[e->op.op - OP_LT], x, y, "");
    }
    static const LLVMIntPredicate sp[] = {LLVMIntSLT, LLVMIntSLE, LLVMIntSGT,
                                          LLVMIntSGE, LLVMIntEQ,  LLVMIntNE};
    static const LLVMIntPredicate up[] = {LLVMIntULT, LLVMIntULE, LLVMIntUGT,
                                          LLVMIntUGE, LLVMIntEQ,  LLVMIntNE};
    return LLVMBuildICmp(g->b, t == DT_BOOL ? up[e->op.op - OP_LT] : sp[e->op.op - OP_LT], x, y, "");
}

/* Where ok is false, notes `note` in the flag the call reads after the run (a checked K
 * level or interval bound, checked_level) and returns from the part at once. The thread
 * whose note stays also stores `info` (NULL: nothing) in the three words after the fields'
 * levels (codegen.h). */
static void note_unless(CG *g, LLVMValueRef ok, unsigned long long note, const LLVMValueRef *info) {
    LLVMBuilderRef b = g->b;
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "kout");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "kok");
    LLVMBuildCondBr(b, ok, cont, bad);
    LLVMPositionBuilderAtEnd(b, bad);
    /* the first note stays (threads may note at once: compare-and-swap from 0) */
    LLVMValueRef res =
        LLVMBuildAtomicCmpXchg(b, g->kflag, cg_c64(g, 0), LLVMConstInt(g->i64, note, 0),
                               LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
    if (info) {
        LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "kfirst");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "kdone");
        LLVMBuildCondBr(b, LLVMBuildExtractValue(b, res, 1, "won"), first, done);
        LLVMPositionBuilderAtEnd(b, first);
        for (int w = 0; w < 3; w++) {
            LLVMValueRef off = cg_c64(g, 8LL * (g->st->nscalars + 2 + 2LL * g->st->nfields + w));
            LLVMValueRef p = LLVMBuildInBoundsGEP2(b, g->i8, g->scalars_arg, &off, 1, "");
            LLVMSetAlignment(LLVMBuildStore(b, info[w], p), 8);
        }
        LLVMBuildBr(b, done);
        LLVMPositionBuilderAtEnd(b, done);
    }
    LLVMBuildRetVoid(b);
    LLVMPositionBuilderAtEnd(b, cont);
}

/* An interval bound computed from values the stencil writes (call.checked): a level of the
 * domain, 0 <= level <= nk (nk itself: an empty interval above, a whole column below), else
 * noted as checked_level notes a K level, marked GT_NOTE_LEVEL_BOUND, with the column and
 * the level for the error. */
static LLVMValueRef checked_bound(CG *g, LLVMValueRef level, int line) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, level, cg_c64(g, 0), ""),
                                   LLVMBuildICmp(b, LLVMIntSLE, level, g->nk, ""), "bin");
    LLVMValueRef info[3] = {g->i, g->j, level};
    note_unless(g, ok, (unsigned long long)(line > 0 ? line : 1) | GT_NOTE_LEVEL_BOUND, info);
    return level;
}

/* x86's minsd/maxsd, exactly: x if x < y (x > y for max), else y, so y where either is NaN or
 * they tie. LLVM lowers this select to the one instruction. */
static LLVMValueRef x86_min_max(CG *g, LLVMValueRef x, LLVMValueRef y, bool max) {
    LLVMValueRef less = LLVMBuildFCmp(g->b, max ? LLVMRealOGT : LLVMRealOLT, x, y, "");
    return LLVMBuildSelect(g->b, less, x, y, max ? "maxsd" : "minsd");
}

/* Whether v is a float constant other than NaN; its value in *d. */
static bool constant_number(LLVMValueRef v, double *d) {
    if (!LLVMIsAConstantFP(v)) return false;
    LLVMBool loses;
    *d = LLVMConstRealGetDouble(v, &loses);
    return !isnan(*d);
}

/* np.minimum / np.maximum: a NaN operand gives NaN (the first, where both are), else the
 * smaller (larger) operand, and the second on a tie: min(0.0, -0.0) is -0.0 and min(-0.0, 0.0)
 * is 0.0, as NumPy computes them (llvm.minimum orders -0.0 below 0.0 and gives -0.0 for both).
 * x86's minsd/maxsd (x86_min_max) is that already wherever the first operand cannot be NaN:
 * min(c, b) for a constant c (not NaN) is minsd(c, b); min(a, c) for a constant c other than zero is
 * minsd(c, a) too (on a tie a and c are the same bits); min(a, 0.0) is minsd(0.0, a) + 0.0 (the
 * sum turns the -0.0 of a tie into NumPy's 0.0 and leaves every other value as it is). Else
 * select(a is not NaN, minsd(a, b), a): the instruction, a compare and a masked move. Physics
 * clamps with constants (`max(q, 0.0)`, `max(x, 1e-12)`): micro of benchmarks/column_physics.py
 * has 236 min/max, 182 of them against a constant, and runs 9-12% faster than with the NaN
 * check on every one (alternating calls; plain selects, which do not propagate NaN, were 13%
 * faster). Written as one select of (a < b or a is NaN), the check compiled to two compares, a
 * mask or and a masked move. */
static LLVMValueRef float_min_max(CG *g, LLVMValueRef a, LLVMValueRef b, bool max) {
    double c;
    if (constant_number(a, &c)) return x86_min_max(g, a, b, max);
    if (constant_number(b, &c) && c != 0.0) return x86_min_max(g, b, a, max);
    if (constant_number(b, &c) && !signbit(c))
        return LLVMBuildFAdd(g->b, x86_min_max(g, b, a, max), b, max ? "max" : "min");
    LLVMValueRef not_nan = LLVMBuildFCmp(g->b, LLVMRealORD, a, a, "");
    return LLVMBuildSelect(g->b, not_nan, x86_min_max(g, a, b, max), a, max ? "max" : "min");
}

static LLVMValueRef emit_call(CG *g, const Expr *e) {
    LLVMValueRef a[GT_MAX_ARGS];
    for (int i = 0; i < e->call.nargs; i++) a[i] = cg_emit_expr(g, e->call.args[i]);
    DType at = e->call.args[0]->type;
    LLVMTypeRef t = cg_type(g, at);
    bool fl = dtype_is_float(at);
    LLVMBuilderRef b = g->b;
    switch (e->call.fn) {
    case FN_ABS:
        if (fl) return intrinsic(g, "llvm.fabs", t, a, 1);
        return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, a[0], LLVMConstInt(t, 0, 0), ""),
                               LLVMBuildSub(b, LLVMConstInt(t, 0, 0), a[0], ""), a[0], "");
    case FN_MIN:
        if (fl) return float_min_max(g, a[0], a[1], false);
        return LLVMBuildSelect(b, LLVMBuildICmp(b, at == DT_BOOL ? LLVMIntULT : LLVMIntSLT, a[0], a[1], ""), a[0], a[1], "");
    case FN_MAX:
        if (fl) return float_min_max(g, a[0], a[1], true);
        return LLVMBuildSelect(b, LLVMBuildICmp(b, at == DT_BOOL ? LLVMIntUGT : LLVMIntSGT, a[0], a[1], ""), a[0], a[1], "");
    case FN_SQRT: return intrinsic(g, "llvm.sqrt", t, a, 1);
    case FN_EXP: return math_intrinsic(g, "llvm.exp", e->call.fn, at, a);
    case FN_LOG: return math_intrinsic(g, "llvm.log", e->call.fn, at, a);
    case FN_LOG10: return math_intrinsic(g, "llvm.log10", e->call.fn, at, a);
    case FN_POW: return fl ? math_intrinsic(g, "llvm.pow", e->call.fn, at, a) : int_pow(g, a[0], a[1], t);
    case FN_FLOOR: return fl ? intrinsic(g, "llvm.floor", t, a, 1) : a[0]; /* ints: NumPy 2 */
    case FN_CEIL: return fl ? intrinsic(g, "llvm.ceil", t, a, 1) : a[0];
    case FN_TRUNC: return fl ? intrinsic(g, "llvm.trunc", t, a, 1) : a[0];
    case FN_SIN: case FN_COS: case FN_TAN: case FN_ARCSIN: case FN_ARCCOS: case FN_ARCTAN:
    case FN_ARCTAN2: case FN_SINH: case FN_COSH: case FN_TANH: case FN_ARCSINH: case FN_ARCCOSH:
    case FN_ARCTANH: case FN_GAMMA: case FN_ERF: case FN_ERFC: case FN_CBRT:
        return libm(g, e->call.fn, at, a);
    /* np.round: halves to even, which rint does in the default rounding mode */
    case FN_ROUND: return fl ? intrinsic(g, "llvm.rint", t, a, 1) : a[0];
    case FN_ROUND_AWAY: return fl ? intrinsic(g, "llvm.round", t, a, 1) : a[0];
    case FN_ISNAN: return LLVMBuildFCmp(b, LLVMRealUNO, a[0], a[0], "");
    case FN_DATA_INDEX: return a[0]; /* checked by the call before the kernel runs */
    case FN_LEVEL_BOUND: /* checked by the call before the kernel runs, or (checked) here */
        return e->call.checked ? checked_bound(g, a[0], e->line) : a[0];
    case FN_ISINF:
    case FN_ISFINITE: {
        LLVMValueRef m = intrinsic(g, "llvm.fabs", t, a, 1);
        LLVMValueRef inf = LLVMConstReal(t, __builtin_inf());
        return LLVMBuildFCmp(b, e->call.fn == FN_ISINF ? LLVMRealOEQ : LLVMRealOLT, m, inf, "");
    }
    default: break;
    }
    return LLVMGetUndef(cg_type(g, e->type));
}

/* The levels [lo, hi) the array of field s holds, counted from the domain's first level:
 * two words per field slot after the loop watch (codegen.h), loaded once per part. */
static void array_levels(CG *g, const Symbol *s, LLVMValueRef *lo, LLVMValueRef *hi) {
    if (g->klevels[s->slot][0] == NULL) {
        for (int e = 0; e < 2; e++) {
            LLVMValueRef off = cg_c64(g, 8LL * g->st->nscalars + 16 + 16LL * s->slot + 8 * e);
            LLVMValueRef p = LLVMBuildInBoundsGEP2(g->pb, g->i8, g->scalars_arg, &off, 1, "");
            g->klevels[s->slot][e] = LLVMBuildLoad2(g->pb, g->i64, p, e ? "khi" : "klo");
        }
    }
    *lo = g->klevels[s->slot][0];
    *hi = g->klevels[s->slot][1];
}

/* A K level computed from values the stencil writes (kchecked), relative to the domain's
 * first level. A read (field: the field read) may read any level its array holds, a write
 * only the domain's [0, nk). Outside them the kernel notes the line (and, for a read, the
 * argument) in the flag the call reads after the run, which then restores the arrays and
 * raises, and the part returns at once: nothing after the failed check runs, and no loop
 * can go on from a value the check refused (a while loop searching past the top would
 * never end). gt_kernel runs no later part, the loops of other threads return at their
 * next look at the flag (emit_while) and no tile starts (call.c). */
static LLVMValueRef checked_level(CG *g, LLVMValueRef level, int line, const Symbol *field) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef lo = cg_c64(g, 0), hi = g->nk;
    unsigned long long note = (unsigned long long)(line > 0 ? line : 1);
    if (field) {
        array_levels(g, field, &lo, &hi);
        note |= (unsigned long long)(field->index + 1) << 32;
    }
    LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, level, lo, ""),
                                   LLVMBuildICmp(b, LLVMIntSLT, level, hi, ""), "kin");
    note_unless(g, ok, note, NULL);
    return level;
}

LLVMValueRef cg_emit_expr(CG *g, const Expr *e) {
    LLVMBuilderRef b = g->b;
    switch (e->kind) {
    case E_CONST:
        if (dtype_is_float(e->type)) return LLVMConstReal(cg_type(g, e->type), e->cnst.f);
        return LLVMConstInt(cg_type(g, e->type), (unsigned long long)e->cnst.i, 1);
    case E_FIELD: {
        LLVMValueRef carried = g->ncarry ? cg_carried_read(g, e) : NULL;
        if (carried) return carried;
        LLVMValueRef kidx = NULL;
        if (e->field.kabs) /* K index from the origin */
            kidx = cg_emit_expr(g, e->field.kexpr);
        else if (e->field.kexpr)
            kidx = LLVMBuildAdd(b, LLVMBuildNSWAdd(b, g->k, cg_c64(g, e->field.off[2]), ""),
                                cg_emit_expr(g, e->field.kexpr), "");
        if (e->field.kchecked) kidx = checked_level(g, kidx, e->line, e->field.sym);
        if (cg_in_register(g, e->field.sym)) /* at the point, or the previous level */
            return LLVMBuildLoad2(b, cg_type(g, e->type), reg_slot(g, e->field.sym, e->field.off[2] != 0), "");
        LLVMValueRef addr = address(g, e->field.sym, e->field.off, kidx, e->field.ndi, e->field.data_index);
        return load_mem(g, e->type, addr);
    }
    case E_SCALAR: return g->scalar[e->scalar->slot];
    case E_UNARY: {
        LLVMValueRef x = cg_emit_expr(g, e->op.a);
        if (e->op.op == OP_NOT) return LLVMBuildNot(b, x, "");
        if (e->op.op == OP_POS) return x;
        return dtype_is_float(e->type) ? LLVMBuildFNeg(b, x, "") : LLVMBuildNeg(b, x, "");
    }
    case E_BINARY: return emit_binary(g, e);
    case E_CMP: return emit_cmp(g, e);
    case E_LOGIC: {
        LLVMValueRef x = cg_emit_expr(g, e->op.a), y = cg_emit_expr(g, e->op.b);
        return e->op.op == OP_AND ? LLVMBuildAnd(b, x, y, "") : LLVMBuildOr(b, x, y, "");
    }
    case E_TERNARY: {
        LLVMValueRef c = cg_emit_expr(g, e->ternary.cond);
        LLVMValueRef x = cg_emit_expr(g, e->ternary.a), y = cg_emit_expr(g, e->ternary.b);
        return LLVMBuildSelect(b, c, x, y, "");
    }
    case E_CALL: return emit_call(g, e);
    case E_CAST: return emit_cast(g, cg_emit_expr(g, e->cast), e->cast->type, e->type);
    case E_KINDEX: return g->k; /* the level, counted from the domain's first (as GT4Py) */
    }
    return LLVMGetUndef(cg_type(g, e->type));
}

/* ---- loops -------------------------------------------------------------------------- */

/* for (iv = lo; iv < hi; iv++) in rotated form, in two steps: cg_loop_guard branches around
 * the loop when it runs no iteration and leaves the builder in the preheader (code there runs
 * once, only if the loop runs); cg_loop_enter starts the body. */
void cg_loop_guard(CG *g, Loop *L, LLVMValueRef lo, LLVMValueRef hi, const char *name) {
    LLVMBuilderRef b = g->b;
    LLVMBasicBlockRef pre = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "pre");
    L->header = LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
    L->exit = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "exit");
    L->lo = lo;
    L->hi = hi;
    L->name = name;
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lo, hi, ""), pre, L->exit);
    LLVMPositionBuilderAtEnd(b, pre);
}

LLVMValueRef cg_loop_enter(CG *g, Loop *L) {
    LLVMBuilderRef b = g->b;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBuildBr(b, L->header);
    LLVMPositionBuilderAtEnd(b, L->header);
    L->iv = LLVMBuildPhi(b, g->i64, L->name);
    LLVMAddIncoming(L->iv, &L->lo, &pre, 1);
    return L->iv;
}

/* Both steps at once; leaves the builder in the body. */
LLVMValueRef cg_loop_begin(CG *g, Loop *L, LLVMValueRef lo, LLVMValueRef hi, const char *name) {
    cg_loop_guard(g, L, lo, hi, name);
    return cg_loop_enter(g, L);
}

/* The end of a loop whose step is a value (positive). */
static void loop_end_by(CG *g, Loop *L, LLVMValueRef step) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef next = LLVMBuildNSWAdd(b, L->iv, step, "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    LLVMAddIncoming(L->iv, &next, &latch, 1);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, L->hi, ""), L->header, L->exit);
    LLVMPositionBuilderAtEnd(b, L->exit);
}

void cg_loop_end_step(CG *g, Loop *L, int step) { loop_end_by(g, L, cg_c64(g, step)); }

void cg_loop_end(CG *g, Loop *L) { cg_loop_end_step(g, L, 1); }

/* The K level of iteration `iv` of a sweep over [ks, ke): BACKWARD runs from ke - 1 down. */
LLVMValueRef cg_sweep_level(CG *g, const Computation *c, LLVMValueRef iv, LLVMValueRef ks,
                            LLVMValueRef ke) {
    if (c->policy != POLICY_BACKWARD) return iv;
    LLVMValueRef last = LLVMBuildNSWSub(g->b, ke, cg_c64(g, 1), "");
    return LLVMBuildNSWSub(g->b, LLVMBuildNSWAdd(g->b, ks, last, ""), iv, "");
}

LLVMValueRef cg_bound_value(CG *g, AxisBound ab, LLVMValueRef n) {
    if (ab.sym) { /* a run-time bound: the scalar (checked by the call) plus the offset */
        LLVMValueRef v = g->scalar[ab.sym->slot];
        if (ab.sym->dtype != DT_INT64) v = LLVMBuildSExt(g->b, v, g->i64, "");
        return LLVMBuildNSWAdd(g->b, v, cg_c64(g, ab.offset), "");
    }
    return ab.level == 0 ? cg_c64(g, ab.offset) : LLVMBuildNSWAdd(g->b, n, cg_c64(g, ab.offset), "");
}

static LLVMValueRef smax(CG *g, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSGT, a, b, ""), a, b, "");
}
static LLVMValueRef smin(CG *g, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, a, b, ""), a, b, "");
}

/* A region box bound along axis a (never a run-time bound): its offset from the anchor it
 * refers to, the grid's first point or one past its last (domain[3..6], placed by the call
 * so that one kernel serves every part of a global grid). */
static LLVMValueRef box_bound(CG *g, int a, AxisBound ab) {
    return LLVMBuildNSWAdd(g->b, g->anchor[2 * a + ab.level], cg_c64(g, ab.offset), "");
}

/* ---- statements --------------------------------------------------------------------- */

void cg_emit_point_list(CG *g, const StmtList *l) {
    for (int i = 0; i < l->n; i++) cg_emit_point(g, l->items[i]);
}

/* One statement at the current point (g->i, g->j, g->k). */
/* The condition of a while statement (its guard and its own condition). */
static LLVMValueRef while_cond(CG *g, const Stmt *s) {
    LLVMValueRef c = cg_emit_expr(g, s->while_.cond);
    return s->guard ? LLVMBuildAnd(g->b, cg_emit_expr(g, s->guard), c, "") : c;
}

/*
 * A while loop, watched for Ctrl-C: every GT_LOOP_CHECK iterations the loop looks at the
 * GtLoopWatch (codegen.h); after a Ctrl-C it marks the watch stopped and returns from the
 * part, so that a loop that never ends cannot hold the call (call/interrupt.h). Emitted
 * rotated, with the look outside the loop LLVM optimises:
 *
 *     if (!cond) goto done;
 *   watched:
 *     do { body; left--; c = cond; } while (c && left != 0);
 *     if (!c) goto done;
 *     left = GT_LOOP_CHECK; if (*watch->counter != watch->mark) { stop; return; }
 *     if (checked K levels && *kflag) return;   (a check failed on another thread)
 *     goto watched;
 *   done:
 *
 * The inner loop has one exit, so LLVM keeps the loop's temporaries in registers and stores
 * them once at its exit; an atomic load or a second exit inside it prevents that (a
 * while-heavy stencil ran 40% slower). (A checked K level the body reads or writes is such
 * a second exit, taken when the check fails: checked_level.) The countdown is one per part,
 * carried from loop to loop and point to point (a register after mem2reg), so that many
 * short loops are watched as one long one.
 */
static void emit_while(CG *g, const Stmt *s) {
    LLVMBuilderRef b = g->b;
    g->has_while = true;
    if (g->countdown == NULL) {
        /* in the part's entry block, before its branch to the body */
        g->countdown = LLVMBuildAlloca(g->pb, g->i32, "countdown");
        LLVMBuildStore(g->pb, LLVMConstInt(g->i32, GT_LOOP_CHECK, 0), g->countdown);
        LLVMValueRef off = cg_c64(g, 8LL * g->st->nscalars + 8);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(g->pb, g->i8, g->scalars_arg, &off, 1, "");
        g->watch = LLVMBuildLoad2(g->pb, g->ptr, p, "watch");
    }
    LLVMBasicBlockRef watched = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "while_watched");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "while_body");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "while_exit");
    LLVMBasicBlockRef look = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "watch");
    LLVMBasicBlockRef stop = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "watch_stop");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "while_done");
    LLVMBuildCondBr(b, while_cond(g, s), watched, done);
    LLVMPositionBuilderAtEnd(b, watched);
    LLVMBuildBr(b, body);
    LLVMPositionBuilderAtEnd(b, body);
    cg_emit_point_list(g, &s->while_.body);
    LLVMValueRef left = LLVMBuildSub(b, LLVMBuildLoad2(b, g->i32, g->countdown, ""),
                                     LLVMConstInt(g->i32, 1, 0), "");
    LLVMBuildStore(b, left, g->countdown);
    LLVMValueRef c = while_cond(g, s);
    LLVMValueRef more = LLVMBuildICmp(b, LLVMIntNE, left, LLVMConstInt(g->i32, 0, 0), "");
    LLVMBuildCondBr(b, LLVMBuildAnd(b, c, more, ""), body, exit);
    LLVMPositionBuilderAtEnd(b, exit);
    LLVMBuildCondBr(b, c, look, done);
    LLVMPositionBuilderAtEnd(b, look);
    LLVMBuildStore(b, LLVMConstInt(g->i32, GT_LOOP_CHECK, 0), g->countdown);
    LLVMValueRef eight = cg_c64(g, 8), sixteen = cg_c64(g, 16);
    LLVMValueRef cp = LLVMBuildLoad2(b, g->ptr, LLVMBuildInBoundsGEP2(b, g->i8, g->watch, &eight, 1, ""), "");
    LLVMValueRef now = LLVMBuildLoad2(b, g->i64, cp, "sigints");
    LLVMSetOrdering(now, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(now, 8);
    LLVMValueRef mark = LLVMBuildLoad2(b, g->i64, g->watch, "mark");
    if (g->st->has_checked_k) { /* a check failed on another thread: the call is undone */
        LLVMBasicBlockRef go_on = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "watch_checked");
        LLVMBasicBlockRef quit = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "checked_stop");
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, now, mark, ""), stop, go_on);
        LLVMPositionBuilderAtEnd(b, go_on);
        LLVMValueRef note = LLVMBuildLoad2(b, g->i64, g->kflag, "checked");
        LLVMSetOrdering(note, LLVMAtomicOrderingMonotonic);
        LLVMSetAlignment(note, 8);
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, note, cg_c64(g, 0), ""), quit, watched);
        LLVMPositionBuilderAtEnd(b, quit);
        LLVMBuildRetVoid(b);
        LLVMPositionBuilderAtEnd(b, stop);
    } else {
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, now, mark, ""), stop, watched);
        LLVMPositionBuilderAtEnd(b, stop);
    }
    /* other threads may store the same 1 at once: an atomic store, no data race */
    LLVMValueRef st = LLVMBuildStore(b, cg_c64(g, 1), LLVMBuildInBoundsGEP2(b, g->i8, g->watch, &sixteen, 1, ""));
    LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(st, 8);
    LLVMBuildRetVoid(b);
    LLVMPositionBuilderAtEnd(b, done);
}

void cg_emit_point(CG *g, const Stmt *s) {
    LLVMBuilderRef b = g->b;
    LLVMBasicBlockRef cont = NULL;
    if (s->guard && s->kind == S_ASSIGN) {
        LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "guarded");
        cont = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cont");
        LLVMBuildCondBr(b, cg_emit_expr(g, s->guard), then, cont);
        LLVMPositionBuilderAtEnd(b, then);
    }
    if (s->kind == S_ASSIGN) {
        const Symbol *t = s->assign.target;
        LLVMValueRef v = cg_emit_expr(g, s->assign.value);
        if (g->ncarry) cg_carry_write(g, t, v);
        if (cg_in_register(g, t)) {
            LLVMBuildStore(b, v, reg_slot(g, t, 0));
            goto done;
        }
        int off[3] = {0, 0, s->assign.koff};
        LLVMValueRef kidx = NULL; /* a variable K offset, checked by the call or (kchecked) here */
        if (s->assign.kexpr) kidx = LLVMBuildAdd(b, g->k, cg_emit_expr(g, s->assign.kexpr), "");
        if (s->assign.kchecked) kidx = checked_level(g, kidx, s->line, NULL);
        LLVMValueRef addr = address(g, t, off, kidx, s->assign.ndi, s->assign.data_index);
        store_mem(g, t->dtype, v, addr);
    } else if (s->kind == S_WHILE) {
        /* Per point: while (guard and cond) { body }, as the seed's final while model. */
        emit_while(g, s);
    }
done:
    if (cont) {
        LLVMBuildBr(b, cont);
        LLVMPositionBuilderAtEnd(b, cont);
    }
}

/* ---- C-order rows joined ---------------------------------------------------------------
 * In C order a nest's inner loop runs along K, a row of nk levels: with 80 levels, ten
 * vectors of float64, and whatever the loop does per row (its remainder, the peel of
 * streaming stores) is paid every ten vectors. Where every array the nest touches has its
 * rows back to back (the J stride equal to the rows' length: a domain spanning the arrays'
 * whole K axis, unpadded), the rows of consecutive J columns are one contiguous run, and the
 * nest runs over each I row's J columns as one loop: the same points in the same order, each
 * address the same linear function of (i, j, k), with j fixed at the run's first column and
 * k running on past the row's end. Checked per call (the strides are the call's); otherwise
 * the nest runs row by row. Only where nothing else reads the level: no K as a value, no
 * variable or absolute K offsets, no while loops, every array with a K axis. */

typedef struct Joinable {
    const CG *g;
    bool ok;
} Joinable;

static void joinable_node(void *ctx, Expr *e) {
    Joinable *j = ctx;
    if (e->kind == E_KINDEX) j->ok = false;
    if (e->kind != E_FIELD) return;
    const Symbol *s = e->field.sym;
    if (e->field.kexpr || e->field.kabs || e->field.kchecked || !(s->axes & AX_K) ||
        cpu_bundle_buffer(j->g->st, s, j->g->layout))
        j->ok = false;
    j->g->touched[s->slot] = true;
}

/* Whether a run's rows may be joined (above); g->touched marks the arrays it touches. */
static bool rows_join(CG *g, Stmt *const *run, int n) {
    memset(g->touched, 0, sizeof *g->touched * (size_t)stencil_nslots(g->st));
    Joinable j = {g, true};
    for (int i = 0; i < n && j.ok; i++) {
        const Stmt *s = run[i];
        if (s->kind != S_ASSIGN) return false;
        const Symbol *t = s->assign.target;
        if (s->assign.kexpr || s->assign.kchecked || !(t->axes & AX_K) ||
            cpu_bundle_buffer(g->st, t, g->layout))
            return false;
        g->touched[t->slot] = true;
        expr_visit(s->guard, joinable_node, &j);
        expr_visit(s->assign.value, joinable_node, &j);
    }
    return j.ok;
}

/* The J columns a row of the nest joins: jhi - jlo where every touched array's J stride is
 * the row length `trip`, else 1. */
static LLVMValueRef joined_columns(CG *g, LLVMValueRef trip, LLVMValueRef jlo, LLVMValueRef jhi) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef ok = LLVMConstInt(g->i1, 1, 0);
    for (int s = 0; s < stencil_nslots(g->st); s++)
        if (g->touched[s])
            ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, (*slot_strides(g, s))[1], trip, ""), "");
    return LLVMBuildSelect(b, ok, LLVMBuildNSWSub(b, jhi, jlo, ""), cg_c64(g, 1), "joined");
}

/* The first statement of a run that stores into a field whose stores may stream (stream.h),
 * along the unit-stride axis the nest's inner loop runs on; NULL when there is none. */
static const Stmt *stream_aligner(const CG *g, Stmt *const *run, int n) {
    if (!g->streams) return NULL;
    int unit = g->layout == LAYOUT_K_UNIT ? AX_K : AX_I;
    for (int i = 0; i < n; i++) {
        const Stmt *s = run[i];
        if (s->kind != S_ASSIGN || s->assign.kexpr || s->assign.kchecked) continue;
        if (cpu_streamed_field(s->assign.target) && (s->assign.target->axes & unit)) return s;
    }
    return NULL;
}

/* The unit-stride loop of a nest. With a streamed store (`al`), it runs in two segments,
 * one loop emitted once inside a loop over the two: [lo, a) until al's store address is
 * 64-byte aligned, then [a, hi), so the vector loop LLVM makes of it stores whole aligned
 * vectors (stream.h). Where the plan does not stream, a = lo: the first segment is empty. */
typedef struct Inner {
    Loop seg, loop;
    bool split;
} Inner;

static LLVMValueRef inner_begin(CG *g, Inner *in, LLVMValueRef lo, LLVMValueRef hi, const Stmt *al,
                                LLVMValueRef *axis, const char *name) {
    LLVMBuilderRef b = g->b;
    in->split = al != NULL;
    if (!in->split) return cg_loop_begin(g, &in->loop, lo, hi, name);
    /* al's address at the loop's first point */
    LLVMValueRef saved = *axis;
    *axis = lo;
    const Symbol *t = al->assign.target;
    int off[3] = {0, 0, al->assign.koff};
    LLVMValueRef addr = LLVMBuildPtrToInt(b, address(g, t, off, NULL, al->assign.ndi, al->assign.data_index), g->i64, "");
    *axis = saved;
    LLVMValueRef gap = LLVMBuildAnd(b, LLVMBuildNeg(b, addr, ""), cg_c64(g, 63), "");
    LLVMValueRef peel = LLVMBuildUDiv(b, gap, cg_c64(g, dtype_size(t->dtype)), "");
    peel = LLVMBuildSelect(b, g->stream_on, peel, cg_c64(g, 0), "peel");
    LLVMValueRef a = smin(g, LLVMBuildNSWAdd(b, lo, peel, ""), hi);
    LLVMValueRef seg = cg_loop_begin(g, &in->seg, cg_c64(g, 0), cg_c64(g, 2), "segment");
    LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, seg, cg_c64(g, 0), "");
    LLVMValueRef from = LLVMBuildSelect(b, first, lo, a, ""), to = LLVMBuildSelect(b, first, a, hi, "");
    return cg_loop_begin(g, &in->loop, from, to, name);
}

static void inner_end(CG *g, Inner *in) {
    cg_loop_end(g, &in->loop);
    if (in->split) cg_loop_end(g, &in->seg);
}

/* A nest's registers (registers.c: the temporaries of its run) start each point at zero:
 * every read comes after the point's own write, so no value crosses from one point to the
 * next, and LLVM sees none (a value carried around the loop would keep it from vectorising
 * a run whose writes are guarded). */
static void start_point_registers(CG *g, int run) {
    if (run == 0) return;
    for (int t = 0; t < g->st->ntemps; t++) {
        const Symbol *s = g->st->temps[t];
        if (s->reg_run == run)
            LLVMBuildStore(g->b, LLVMConstNull(cg_type(g, s->dtype)), reg_slot(g, s, 0));
    }
}

/* Loops a run of statements (nests.c: they share the extent and region boxes) over their
 * horizontal range (one box, or the whole extended domain), with K either fixed (g->k set
 * by the caller) or looped over [klo, khi); at each point the statements in order. */
static void emit_nest(CG *g, Stmt *const *run, int n, const Box *box, LLVMValueRef klo,
                      LLVMValueRef khi) {
    const Stmt *s = run[0];
    /* The statement's extended domain, restricted to this tile plus the statement's tile
     * extent: over all tiles that covers [lo, n + hi) once, and every value a later statement
     * of the tile reads has been computed by the tile itself (redundantly on the halo). The
     * tile extent may reach further than the analysed one (regions reading temporaries across
     * tile edges, analysis/tiles.c), never beyond it in the domain. */
    const int *h = s->horizontal_extent, *t = s->tile_extent;
    LLVMValueRef ilo = LLVMBuildNSWAdd(g->b, g->ti0, cg_c64(g, t[0]), "");
    LLVMValueRef ihi = LLVMBuildNSWAdd(g->b, g->ti1, cg_c64(g, t[1]), "");
    LLVMValueRef jlo = LLVMBuildNSWAdd(g->b, g->tj0, cg_c64(g, t[2]), "");
    LLVMValueRef jhi = LLVMBuildNSWAdd(g->b, g->tj1, cg_c64(g, t[3]), "");
    if (t[0] < h[0]) ilo = smax(g, ilo, cg_c64(g, h[0]));
    if (t[1] > h[1]) ihi = smin(g, ihi, LLVMBuildNSWAdd(g->b, g->ni, cg_c64(g, h[1]), ""));
    if (t[2] < h[2]) jlo = smax(g, jlo, cg_c64(g, h[2]));
    if (t[3] > h[3]) jhi = smin(g, jhi, LLVMBuildNSWAdd(g->b, g->nj, cg_c64(g, h[3]), ""));
    if (box) {
        if (box->has[0]) ilo = smax(g, ilo, box_bound(g, 0, box->b[0]));
        if (box->has[1]) ihi = smin(g, ihi, box_bound(g, 0, box->b[1]));
        if (box->has[2]) jlo = smax(g, jlo, box_bound(g, 1, box->b[2]));
        if (box->has[3]) jhi = smin(g, jhi, box_bound(g, 1, box->b[3]));
    }
    /* The unit-stride axis innermost, so the inner loop streams and vectorises. */
    Loop li, lj, lk;
    Inner in;
    const Stmt *al = stream_aligner(g, run, n);
    if (g->layout == LAYOUT_K_UNIT || g->layout == LAYOUT_GENERIC) {
        /* C-order rows joined (above): J advances by the columns each K loop covers */
        LLVMValueRef cols = cg_c64(g, 1), kend = khi;
        if (klo && g->layout == LAYOUT_K_UNIT && rows_join(g, run, n)) {
            LLVMValueRef trip = LLVMBuildNSWSub(g->b, khi, klo, "");
            cols = joined_columns(g, trip, jlo, jhi);
            kend = LLVMBuildNSWAdd(g->b, klo, LLVMBuildNSWMul(g->b, cols, trip, ""), "");
        }
        g->i = cg_loop_begin(g, &li, ilo, ihi, "i");
        g->j = cg_loop_begin(g, &lj, jlo, jhi, "j");
        if (klo) g->k = inner_begin(g, &in, klo, kend, al, &g->k, "k");
        start_point_registers(g, s->run);
        for (int i = 0; i < n; i++) cg_emit_point(g, run[i]);
        if (klo) inner_end(g, &in);
        loop_end_by(g, &lj, cols);
        cg_loop_end(g, &li);
    } else {
        if (klo) g->k = cg_loop_begin(g, &lk, klo, khi, "k");
        g->j = cg_loop_begin(g, &lj, jlo, jhi, "j");
        g->i = inner_begin(g, &in, ilo, ihi, al, &g->i, "i");
        start_point_registers(g, s->run);
        for (int i = 0; i < n; i++) cg_emit_point(g, run[i]);
        inner_end(g, &in);
        cg_loop_end(g, &lj);
        if (klo) cg_loop_end(g, &lk);
    }
}

static void emit_stmt(CG *g, Stmt *const *run, int n, LLVMValueRef klo, LLVMValueRef khi) {
    const Stmt *s = run[0];
    if (s->nboxes == 0) {
        emit_nest(g, run, n, NULL, klo, khi);
        return;
    }
    for (int i = 0; i < s->nboxes; i++) emit_nest(g, run, n, &s->boxes[i], klo, khi);
}

static int stmt_nests(const Stmt *s) { return s->nboxes > 0 ? s->nboxes : 1; }

/* The statements from i on that share one loop nest: the run the analysis fixed (nests.c;
 * every top-level statement has one). */
static int run_length(const StmtList *l, int i) {
    int n = 1;
    while (i + n < l->n && l->items[i + n]->run == l->items[i]->run) n++;
    return n;
}

static void emit_interval(CG *g, const Computation *c, const Interval *in) {
    if (c->policy == POLICY_PARALLEL) {
        /* every statement is a loop nest of its own: a part may end between two */
        LLVMValueRef ks = NULL, ke = NULL;
        for (int i = 0; i < in->body.n;) {
            int n = run_length(&in->body, i);
            if (cg_part_split(g, n * stmt_nests(in->body.items[i])) || ks == NULL) {
                ks = cg_bound_value(g, in->start, g->nk);
                ke = cg_bound_value(g, in->end, g->nk);
            }
            emit_stmt(g, in->body.items + i, n, ks, ke);
            i += n;
        }
        return;
    }
    int cost = 0;
    for (int i = 0; i < in->body.n; i++) cost += stmt_nests(in->body.items[i]);
    cg_part_split(g, cost); /* a sweep's levels stay in one function */
    LLVMValueRef ks = cg_bound_value(g, in->start, g->nk), ke = cg_bound_value(g, in->end, g->nk);
    Loop lk;
    LLVMValueRef k = cg_sweep_level(g, c, cg_loop_begin(g, &lk, ks, ke, "klevel"), ks, ke);
    for (int i = 0; i < in->body.n;) {
        int n = run_length(&in->body, i);
        g->k = k;
        emit_stmt(g, in->body.items + i, n, NULL, NULL);
        i += n;
    }
    cg_loop_end(g, &lk);
}

static void emit_computation(CG *g, const Computation *c) {
    for (int i = 0; i < c->nintervals; i++) emit_interval(g, c, &c->intervals[i]);
}

/* The stencil's computations in order: level by level as the parallel model reads, or
 * column by column when the analysis found that equivalent (schedule.c) and K is the
 * unit-stride axis, so each column sweeps contiguous memory. With I the unit-stride axis,
 * level by level vectorises along I instead. */
static bool level_by_level(const CG *g, const Computation *c) {
    return !c->columnwise || g->layout == LAYOUT_I_UNIT;
}

/* Whether computation b may continue a's loop nests: both PARALLEL over one and the same
 * interval (comps_continue), both run level by level. The parallel model runs a PARALLEL
 * computation statement by statement, each over the whole domain, exactly as it runs
 * consecutive PARALLEL computations, so their statements form one list and point-wise ones
 * share loop nests (nests.c). A definition of thousands of one-statement
 * `with computation(PARALLEL)` blocks is then a few dozen loops, not thousands. (FORWARD and
 * BACKWARD computations sweep K one after the other: never merged.) */
static bool continues(const CG *g, const Computation *a, const Computation *b) {
    return comps_continue(a, b) && level_by_level(g, a) && level_by_level(g, b);
}

/* Computations [c, c + n) that continue each other, as one interval; false when out of memory. */
static bool emit_joined(CG *g, const Computation *comps, int n) {
    int total = 0;
    for (int k = 0; k < n; k++) total += comps[k].intervals[0].body.n;
    Interval joined = comps[0].intervals[0];
    joined.body.items = malloc(sizeof(Stmt *) * ((size_t)total + 1));
    if (joined.body.items == NULL) return false;
    joined.body.n = joined.body.cap = 0;
    for (int k = 0; k < n; k++) {
        const StmtList *l = &comps[k].intervals[0].body;
        for (int i = 0; i < l->n; i++) joined.body.items[joined.body.n++] = l->items[i];
    }
    joined.body.cap = joined.body.n;
    emit_interval(g, &comps[0], &joined);
    free(joined.body.items);
    return true;
}

static void emit_computations(CG *g) {
    const Stencil *st = g->st;
    for (int c = 0; c < st->ncomps;) {
        const Computation *comp = &st->comps[c];
        if (level_by_level(g, comp)) {
            int n = 1;
            while (c + n < st->ncomps && continues(g, &st->comps[c + n - 1], &st->comps[c + n])) n++;
            if (n == 1) emit_computation(g, comp);
            else if (!emit_joined(g, comp, n)) g->oom = true;
            c += n;
            continue;
        }
        int n = 1;
        while (c + n < st->ncomps && st->comps[c + n - 1].column_fuse_next) n++;
        int cost = 0; /* a column group carries values in registers: one function */
        for (int k = 0; k < n; k++)
            for (int i = 0; i < st->comps[c + k].nintervals; i++)
                for (int s = 0; s < st->comps[c + k].intervals[i].body.n; s++)
                    cost += stmt_nests(st->comps[c + k].intervals[i].body.items[s]);
        cg_part_split(g, cost);
        cg_emit_column_group(g, comp, n);
        c += n;
    }
}

/* base[index], an i64 array element, loaded by builder b. */
static LLVMValueRef load_i64(CG *g, LLVMBuilderRef b, LLVMValueRef base, long long index,
                             const char *name) {
    LLVMValueRef idx = cg_c64(g, index);
    return LLVMBuildLoad2(b, g->i64, LLVMBuildInBoundsGEP2(b, g->i64, base, &idx, 1, ""), name);
}

/* The strides of a slot in the current part, loaded in its prologue the first time a
 * statement of the part addresses the slot: a part of a 500-statement stencil touches a
 * few of its slots, and loading all of them in every part would make the IR quadratic. */
static LLVMValueRef (*slot_strides(CG *g, int s))[GT_STRIDES] {
    if (g->stride[s][0]) return &g->stride[s];
    const Stencil *st = g->st;
    for (int a = 0; a < GT_STRIDES; a++)
        g->stride[s][a] = load_i64(g, g->pb, g->strides_arg, (long long)s * GT_STRIDES + a, "stride");
    /* A layout variant knows the unit-stride axis: a constant stride of 1 there lets
     * LLVM vectorise without versioning the loops on the strides. */
    int unit = g->layout == LAYOUT_K_UNIT ? 2 : g->layout == LAYOUT_I_UNIT ? 0 : -1;
    const Symbol *sym = s < st->nfields ? NULL : st->temps[s - st->nfields];
    for (int i = 0; sym == NULL && i < st->nparams; i++)
        if (st->params[i]->kind == SYM_FIELD && st->params[i]->slot == s) sym = st->params[i];
    if (unit >= 0 && sym && (sym->axes & (1 << unit))) g->stride[s][unit] = cg_c64(g, 1);
    /* An axis the field does not have: stride 0 (the call passes 0), a constant, so that LLVM
     * neither multiplies by it nor versions a loop on its being 1 (an IJ field read in a loop
     * along K; a K field in a column block's loop over columns, which then never ran its
     * vector body) */
    for (int a = 0; a < 3 && sym && sym->kind == SYM_FIELD; a++)
        if (!(sym->axes & (1 << a))) g->stride[s][a] = cg_c64(g, 0);
    if (sym && cpu_bundle_buffer(st, sym, g->layout)) {
        g->stride[s][0] = cg_c64(g, 0);
        g->stride[s][1] = cg_c64(g, 1);
        g->stride[s][2] = cg_c64(g, st->column_lanes);
    }
    return &g->stride[s];
}

/* Loads the sizes, the tile and the scalars in the entry block of the current part; the
 * strides follow on demand (slot_strides) before the entry block's branch to the body. */
static void emit_prologue(CG *g, LLVMValueRef strides, LLVMValueRef domain, LLVMValueRef scalars,
                          LLVMValueRef tile) {
    LLVMBuilderRef b = g->b;
    const Stencil *st = g->st;
    int nslots = stencil_nslots(st);
    for (int s = 0; s < nslots; s++) {
        g->base[s] = LLVMGetParam(g->fn, (unsigned)s);
        for (int a = 0; a < GT_STRIDES; a++) g->stride[s][a] = NULL;
        g->klevels[s][0] = g->klevels[s][1] = NULL;
    }
    g->strides_arg = strides;
    g->scalars_arg = scalars;
    g->watch = g->countdown = NULL;
    memset(g->regs, 0, sizeof *g->regs * (size_t)st->ntemps);
    g->ni = load_i64(g, b, domain, 0, "ni");
    g->nj = load_i64(g, b, domain, 1, "nj");
    g->nk = load_i64(g, b, domain, 2, "nk");
    for (int a = 0; a < 4; a++) g->anchor[a] = load_i64(g, b, domain, 3 + a, "anchor");
    g->ti0 = load_i64(g, b, tile, 0, "ti0");
    g->ti1 = load_i64(g, b, tile, 1, "ti1");
    g->tj0 = load_i64(g, b, tile, 2, "tj0");
    g->tj1 = load_i64(g, b, tile, 3, "tj1");
    g->stream_on = NULL;
    if (g->streams) {
        LLVMValueRef bit = LLVMBuildAnd(b, load_i64(g, b, tile, 4, "tile_flags"), cg_c64(g, GT_TILE_STREAM), "");
        g->stream_on = LLVMBuildICmp(b, LLVMIntNE, bit, cg_c64(g, 0), "streaming");
    }
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_SCALAR) continue;
        LLVMValueRef off = cg_c64(g, 8LL * s->slot);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(b, g->i8, scalars, &off, 1, "");
        g->scalar[s->slot] = load_mem(g, s->dtype, p);
    }
    /* the 8 bytes after the scalars: the note of a checked K level outside the allowed ones */
    LLVMValueRef off = cg_c64(g, 8LL * st->nscalars);
    g->kflag = LLVMBuildInBoundsGEP2(b, g->i8, scalars, &off, 1, "kflag");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "body");
    LLVMValueRef br = LLVMBuildBr(b, body);
    LLVMPositionBuilderBefore(g->pb, br);
    LLVMPositionBuilderAtEnd(b, body);
}

static void add_attr(CG *g, LLVMValueRef fn, unsigned index, const char *name) {
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(g->ctx, kind, 0));
}

/*
 * A part: an internal function gt_part(base_0, ..., base_n-1, strides, domain, scalars,
 * tile) holding a run of the stencil's loop nests. Its pointer parameters are `noalias`, so
 * LLVM needs no run-time overlap checks and keeps loaded values across stores: temporaries
 * are tile-private buffers, and the call picks this variant only when no two argument
 * arrays share memory. The `shared` variant (the same array passed for an input and an
 * output read point-wise) makes only the temporaries noalias.
 *
 * Why parts: LLVM's loop analyses and code generation (ScalarEvolution's loop guards,
 * register allocation over the live ranges of a function) cost more than linearly in the
 * size of a function, and a dycore stencil of hundreds of statements is hundreds of loop
 * nests (benchmarks/build_scaling.py, docs/performance.md). A part of a few dozen nests
 * compiles at the cost per nest of a small stencil; the calls between parts cost nothing
 * measurable against a loop nest over a tile. Leaves the builder in the part's body.
 */
static bool begin_part(CG *g) {
    int nslots = stencil_nslots(g->st);
    if (g->nparts == g->partcap) {
        int cap = g->partcap ? 2 * g->partcap : 8;
        LLVMValueRef *p = realloc(g->parts, sizeof *p * (size_t)cap);
        if (p == NULL) return false;
        g->parts = p;
        g->partcap = cap;
    }
    int nparams = nslots + 4 + (g->nblk ? 1 + g->nblk : 0);
    LLVMTypeRef *bparams = malloc(sizeof(LLVMTypeRef) * (size_t)nparams);
    if (bparams == NULL) return false;
    for (int i = 0; i < nparams; i++) bparams[i] = g->ptr;
    g->fn = LLVMAddFunction(g->mod, "gt_part", LLVMFunctionType(g->vd, bparams, (unsigned)nparams, 0));
    free(bparams);
    g->parts[g->nparts++] = g->fn;
    LLVMSetLinkage(g->fn, LLVMInternalLinkage);
    for (int s = g->shared ? g->st->nfields : 0; s < nslots; s++) add_attr(g, g->fn, (unsigned)s + 1, "noalias");
    /* the scalars (parameter 3 of 4) are written when checked K reads note an error */
    for (unsigned p = 1; p <= 4; p++) {
        add_attr(g, g->fn, (unsigned)nslots + p, "noalias");
        if (!(p == 3 && g->st->has_checked_k)) add_attr(g, g->fn, (unsigned)nslots + p, "readonly");
    }
    /* the block scratch header (read only) and its buffers: disjoint allocations */
    for (int p = nslots + 4; p < nparams; p++) add_attr(g, g->fn, (unsigned)p + 1, "noalias");
    if (g->nblk) add_attr(g, g->fn, (unsigned)nslots + 5, "readonly");
    add_attr(g, g->fn, LLVMAttributeFunctionIndex, "nounwind");
    /* parts stay functions of their own even under a pipeline that inlines */
    add_attr(g, g->fn, LLVMAttributeFunctionIndex, "noinline");
    /* LLVM's cost model for recent x86 cores prefers 256-bit vectors (frequency drops of
     * older AVX-512 parts); stencils are long, uniform loops and run faster with the full
     * width here (benchmarks/: horizontal diffusion 13%, a float32 column solver 18%). */
    if (jit_has_wide_vectors()) {
        const char *k = "prefer-vector-width", *v = "512";
        LLVMAddAttributeAtIndex(g->fn, LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(g->ctx, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
    }
    LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, g->fn, "entry"));
    emit_prologue(g, LLVMGetParam(g->fn, (unsigned)nslots), LLVMGetParam(g->fn, (unsigned)nslots + 1),
                  LLVMGetParam(g->fn, (unsigned)nslots + 2), LLVMGetParam(g->fn, (unsigned)nslots + 3));
    if (g->nblk) {
        g->blk_on = load_i64(g, g->pb, LLVMGetParam(g->fn, (unsigned)nslots + 4), 0, "block_cols");
        g->blk_cols = cg_c64(g, cpu_block_cols(g->nblk));
        for (int x = 0; x < g->nblk; x++) g->blkbuf[x] = LLVMGetParam(g->fn, (unsigned)(nslots + 5 + x));
    }
    g->nests = 0;
    return true;
}

/* GTSCRIPT_PART_NESTS overrides the part size, for measurements (benchmarks/) and tests;
 * it changes how the code is split, never what it computes. */
static int part_nests(void) {
    const char *v = getenv("GTSCRIPT_PART_NESTS");
    int x = v && *v ? atoi(v) : 0;
    return x > 0 ? x : GT_CPU_PART_NESTS;
}

bool cg_part_split(CG *g, int cost) {
    if (g->fn == NULL || g->nests == 0 || g->nests + cost <= part_nests()) {
        g->nests += cost;
        return false;
    }
    LLVMBuildRetVoid(g->b);
    if (!begin_part(g)) {
        /* out of memory: keep emitting into the current function (its block is closed, so
         * continue in a fresh one) rather than fail halfway through a statement */
        g->oom = true;
        LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, g->fn, "more"));
        return false;
    }
    g->nests = cost;
    return true;
}

/* gt_kernel(ptrs, strides, domain, scalars, tile): loads the pointer table and calls the
 * parts in order. */
static void emit_kernel(CG *g, int nslots) {
    LLVMTypeRef kparams[5] = {g->ptr, g->ptr, g->ptr, g->ptr, g->ptr};
    LLVMValueRef kernel = LLVMAddFunction(g->mod, GT_KERNEL_SYMBOL, LLVMFunctionType(g->vd, kparams, 5, 0));
    for (unsigned p = 1; p <= 5; p++) {
        add_attr(g, kernel, p, "noalias");
        if (!(p == 4 && g->st->has_checked_k)) add_attr(g, kernel, p, "readonly");
    }
    add_attr(g, kernel, LLVMAttributeFunctionIndex, "nounwind");
    add_attr(g, kernel, LLVMAttributeFunctionIndex, "noinline"); /* see jit_optimise_budgeted */
    LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, kernel, "entry"));
    for (int s = 0; s < nslots; s++) {
        LLVMValueRef idx = cg_c64(g, s);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, g->ptr, LLVMGetParam(kernel, 0), &idx, 1, "");
        g->args[s] = LLVMBuildLoad2(g->b, g->ptr, p, "base");
    }
    for (int p = 1; p < 5; p++) g->args[nslots + p - 1] = LLVMGetParam(kernel, (unsigned)p);
    int nargs = nslots + 4;
    if (g->nblk) { /* ptrs[nslots]: the block header {cols, buffer 0, buffer 1, ...} (plan.c) */
        LLVMValueRef idx = cg_c64(g, nslots);
        LLVMValueRef hp = LLVMBuildInBoundsGEP2(g->b, g->ptr, LLVMGetParam(kernel, 0), &idx, 1, "");
        LLVMValueRef hdr = LLVMBuildLoad2(g->b, g->ptr, hp, "block_header");
        g->args[nargs++] = hdr;
        for (int x = 0; x < g->nblk; x++) {
            LLVMValueRef bi = cg_c64(g, 1 + x);
            g->args[nargs++] = LLVMBuildLoad2(g->b, g->ptr, LLVMBuildInBoundsGEP2(g->b, g->ptr, hdr, &bi, 1, ""), "block_buffer");
        }
    }
    /* a part stopped by a Ctrl-C inside a while loop (watch->stopped) or by a failed check
     * of a K level (the flag after the scalars): the later parts do not run */
    LLVMValueRef stopped = NULL, kflag = NULL;
    if (g->has_while) {
        LLVMValueRef off = cg_c64(g, 8LL * g->st->nscalars + 8), sixteen = cg_c64(g, 16);
        LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, g->i8, LLVMGetParam(kernel, 3), &off, 1, "");
        LLVMValueRef watch = LLVMBuildLoad2(g->b, g->ptr, p, "watch");
        stopped = LLVMBuildInBoundsGEP2(g->b, g->i8, watch, &sixteen, 1, "stopped");
    }
    if (g->st->has_checked_k) {
        LLVMValueRef off = cg_c64(g, 8LL * g->st->nscalars);
        kflag = LLVMBuildInBoundsGEP2(g->b, g->i8, LLVMGetParam(kernel, 3), &off, 1, "kflag");
    }
    for (int i = 0; i < g->nparts; i++) {
        LLVMBuildCall2(g->b, LLVMGlobalGetValueType(g->parts[i]), g->parts[i], g->args,
                       (unsigned)nargs, "");
        if (i + 1 == g->nparts) continue;
        LLVMValueRef flags[2] = {stopped, kflag}, any = NULL;
        for (int f = 0; f < 2; f++) {
            if (flags[f] == NULL) continue;
            LLVMValueRef v = LLVMBuildLoad2(g->b, g->i64, flags[f], "");
            LLVMSetOrdering(v, LLVMAtomicOrderingMonotonic);
            LLVMSetAlignment(v, 8);
            LLVMValueRef set = LLVMBuildICmp(g->b, LLVMIntNE, v, cg_c64(g, 0), "");
            any = any ? LLVMBuildOr(g->b, any, set, "") : set;
        }
        if (any == NULL) continue;
        LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(g->ctx, kernel, "next_part");
        LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(g->ctx, kernel, "stopped");
        LLVMBuildCondBr(g->b, any, out, next);
        LLVMPositionBuilderAtEnd(g->b, out);
        LLVMBuildRetVoid(g->b);
        LLVMPositionBuilderAtEnd(g->b, next);
    }
    LLVMBuildRetVoid(g->b);
}

LLVMModuleRef codegen_cpu(const Stencil *st, CpuVariant variant, LLVMContextRef ctx, char *err,
                          size_t errlen) {
    CG g = {.st = st, .ctx = ctx, .layout = variant.layout, .shared = variant.shared, .err = err, .errlen = errlen};
    g.mod = LLVMModuleCreateWithNameInContext(st->name, ctx);
    g.b = LLVMCreateBuilderInContext(ctx);
    g.pb = LLVMCreateBuilderInContext(ctx);
    g.i1 = LLVMInt1TypeInContext(ctx);
    g.i8 = LLVMInt8TypeInContext(ctx);
    g.i16 = LLVMInt16TypeInContext(ctx);
    g.i32 = LLVMInt32TypeInContext(ctx);
    g.i64 = LLVMInt64TypeInContext(ctx);
    g.f32 = LLVMFloatTypeInContext(ctx);
    g.f64 = LLVMDoubleTypeInContext(ctx);
    g.ptr = LLVMPointerTypeInContext(ctx, 0);
    g.vd = LLVMVoidTypeInContext(ctx);
    int nslots = stencil_nslots(st);
    /* column blocks in C order, where no two arrays share memory (the scratch copies would
     * hide one's writes from the other) */
    g.nblk = variant.layout == LAYOUT_K_UNIT && !variant.shared ? cpu_block_buffers(st) : 0;
    g.streams = cpu_streamed_bytes(st, variant) > 0;
    g.blkbuf = calloc((size_t)g.nblk + 1, sizeof *g.blkbuf);
    g.base = calloc((size_t)nslots + 1, sizeof *g.base);
    g.stride = calloc((size_t)nslots + 1, sizeof *g.stride);
    g.scalar = calloc((size_t)st->nscalars + 1, sizeof *g.scalar);
    g.args = calloc((size_t)nslots + 5 + (size_t)g.nblk, sizeof *g.args);
    g.touched = calloc((size_t)nslots + 1, sizeof *g.touched);
    g.klevels = calloc((size_t)nslots + 1, sizeof *g.klevels);
    g.regs = calloc((size_t)st->ntemps + 1, sizeof *g.regs);
    if (!g.base || !g.stride || !g.scalar || !g.args || !g.blkbuf || !g.touched || !g.klevels || !g.regs ||
        !begin_part(&g))
        goto oom;
    emit_computations(&g);
    LLVMBuildRetVoid(g.b);
    if (g.oom) goto oom;
    emit_kernel(&g, nslots);
    vecmath_finish(&g);
    if (g.oom) goto oom;
    goto done;
oom:
    snprintf(err, errlen, "out of memory");
    LLVMDisposeModule(g.mod);
    g.mod = NULL;
done:
    LLVMDisposeBuilder(g.b);
    LLVMDisposeBuilder(g.pb);
    free(g.base);
    free(g.stride);
    free(g.scalar);
    free(g.args);
    free(g.parts);
    free(g.blkbuf);
    free(g.touched);
    free(g.klevels);
    free(g.regs);
    free(g.variants);
    return g.mod;
}
