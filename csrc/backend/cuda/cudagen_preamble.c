/* The helper functions every generated CUDA source starts with: NumPy's semantics for
 * the operations C does not define the same way (float -> int casts saturate, Python
 * floor division and modulo, NaN-propagating min/max ordering -0 before +0, integer
 * powers). They mirror the cpu backend's LLVM sequences operation for operation. */
#include "backend/cuda/cudagen_write.h"

static const char HEAD[] =
    "#ifdef __cplusplus\n"
    "#define GT_KERNEL extern \"C\" __global__\n"
    "#else\n"
    "#define GT_KERNEL __global__\n"
    "#endif\n"
    "#define GT_DEV static __device__ __forceinline__\n"
    "\n"
    "GT_DEV double gt_inf_f64(void) { return __longlong_as_double(0x7ff0000000000000LL); }\n"
    "GT_DEV float gt_inf_f32(void) { return __int_as_float(0x7f800000); }\n"
    "GT_DEV double gt_nan_f64(void) { return __longlong_as_double(0x7ff8000000000000LL); }\n"
    "GT_DEV float gt_nan_f32(void) { return __int_as_float(0x7fc00000); }\n"
    "GT_DEV int gt_cast_i32(double x) {\n"
    "    return x != x ? 0 : x >= 2147483648.0 ? 2147483647 : x <= -2147483648.0 ? (-2147483647 - 1) : (int)x;\n"
    "}\n"
    "GT_DEV long long gt_cast_i64(double x) {\n"
    "    return x != x ? 0 : x >= 9223372036854775808.0 ? 9223372036854775807LL\n"
    "         : x <= -9223372036854775808.0 ? (-9223372036854775807LL - 1) : (long long)x;\n"
    "}\n"
    /* int8/int16: through int32, keeping the low bits (NumPy's astype) */
    "GT_DEV signed char gt_cast_i8(double x) { return (signed char)gt_cast_i32(x); }\n"
    "GT_DEV short gt_cast_i16(double x) { return (short)gt_cast_i32(x); }\n"
    /* a K level computed from values the stencil writes: outside [lo, hi) (a read: the
     * levels its array holds; a write: the domain's) the first note is kept in the word
     * after the scalars (the call undoes itself), the thread stops its loops (*stop) and
     * level k, which the array holds, is accessed instead */
    "GT_DEV long long gt_klevel(long long lv, long long lo, long long hi, long long k, const char *flag,\n"
    "                           unsigned long long note, bool *stop) {\n"
    "    if (lv >= lo && lv < hi) return lv;\n"
    "    atomicCAS((unsigned long long *)flag, 0ULL, note);\n"
    "    *stop = true;\n"
    "    return k;\n"
    "}\n"
    /* an interval bound computed from values the stencil writes: outside [0, nk] the first
     * note is kept as gt_klevel keeps it, with the column and the level in info, and the
     * level is 0 (the call undoes itself) */
    "GT_DEV long long gt_kbound(long long lv, long long nk, const char *flag, const char *info,\n"
    "                           unsigned long long note, bool *stop, long long i, long long j) {\n"
    "    if (lv >= 0 && lv <= nk) return lv;\n"
    "    if (atomicCAS((unsigned long long *)flag, 0ULL, note) == 0ULL) {\n"
    "        long long *w = (long long *)info;\n"
    "        w[0] = i;\n"
    "        w[1] = j;\n"
    "        w[2] = lv;\n"
    "    }\n"
    "    *stop = true;\n"
    "    return 0;\n"
    "}\n"
    /* whether a check failed on any thread (loops look every 1024 iterations) */
    "GT_DEV bool gt_checked_failed(const char *flag) {\n"
    "    return *(const volatile unsigned long long *)flag != 0ULL;\n"
    "}\n";

/* Integer helpers for T in (signed char, i8, unsigned char), (short, i16, unsigned short),
 * (int, i32, unsigned) and (long long, i64, unsigned long long); the narrow ones compute in
 * int and cast back, which wraps as NumPy's int8/int16 arithmetic. */
static void int_helpers(StrBuf *sb, const char *T, const char *sfx, const char *U) {
    sb_printf(sb,
              "GT_DEV %1$s gt_floordiv_%2$s(%1$s a, %1$s d) {\n"
              "    if (d == 0) return 0;\n"
              "    if (d == -1) return (%1$s)((%3$s)0 - (%3$s)a);\n"
              "    %1$s q = a / d, r = a %% d;\n"
              "    return (r != 0 && (r ^ d) < 0) ? q - 1 : q;\n"
              "}\n"
              "GT_DEV %1$s gt_mod_%2$s(%1$s a, %1$s d) {\n"
              "    if (d == 0 || d == -1) return 0;\n"
              "    %1$s r = a %% d;\n"
              "    return (r != 0 && (r ^ d) < 0) ? r + d : r;\n"
              "}\n"
              "GT_DEV %1$s gt_pow_%2$s(%1$s a, %1$s e) {\n"
              "    if (e <= 0) return e == 0 ? 1 : 0;\n"
              "    %3$s acc = 1, b = (%3$s)a, ue = (%3$s)e;\n"
              "    while (ue) {\n"
              "        if (ue & 1) acc *= b;\n"
              "        b *= b;\n"
              "        ue >>= 1;\n"
              "    }\n"
              "    return (%1$s)acc;\n"
              "}\n"
              "GT_DEV %1$s gt_abs_%2$s(%1$s a) { return a < 0 ? (%1$s)((%3$s)0 - (%3$s)a) : a; }\n",
              T, sfx, U);
}

/* Float helpers: T, suffix, libm suffix ("" or "f"). */
static void float_helpers(StrBuf *sb, const char *T, const char *sfx, const char *m) {
    sb_printf(sb,
              "GT_DEV %1$s gt_floordiv_%2$s(%1$s a, %1$s d) {\n"
              "    %1$s mod = fmod%3$s(a, d);\n"
              "    if (d == 0) return a / d;\n"
              "    %1$s div = (a - mod) / d;\n"
              "    if (mod != 0 && ((d < 0) != (mod < 0))) div -= 1;\n"
              "    if (div != 0) {\n"
              "        %1$s fl = floor%3$s(div);\n"
              "        return div - fl > (%1$s)0.5 ? fl + 1 : fl;\n"
              "    }\n"
              "    return copysign%3$s((%1$s)0, a / d);\n"
              "}\n"
              "GT_DEV %1$s gt_mod_%2$s(%1$s a, %1$s d) {\n"
              "    %1$s mod = fmod%3$s(a, d);\n"
              "    if (d == 0) return mod;\n"
              "    if (mod != 0) return ((d < 0) != (mod < 0)) ? mod + d : mod;\n"
              "    return copysign%3$s((%1$s)0, d);\n"
              "}\n"
              /* np.minimum / np.maximum: a NaN operand gives NaN (the first where both are),
               * else the smaller (larger) one, and the second on a tie (-0.0 and 0.0) */
              "GT_DEV %1$s gt_min_%2$s(%1$s a, %1$s b) { return (a < b || a != a) ? a : b; }\n"
              "GT_DEV %1$s gt_max_%2$s(%1$s a, %1$s b) { return (a > b || a != a) ? a : b; }\n"
              "GT_DEV bool gt_isinf_%2$s(%1$s a) { return fabs%3$s(a) == gt_inf_%2$s(); }\n"
              "GT_DEV bool gt_isfinite_%2$s(%1$s a) { return fabs%3$s(a) < gt_inf_%2$s(); }\n",
              T, sfx, m);
}

void cuda_write_preamble(StrBuf *sb, const char *stencil_name) {
    sb_printf(sb, "/* CUDA kernels of the gtscript stencil '%s' (generated). */\n", stencil_name);
    sb_puts(sb, HEAD);
    int_helpers(sb, "signed char", "i8", "unsigned char");
    int_helpers(sb, "short", "i16", "unsigned short");
    int_helpers(sb, "int", "i32", "unsigned int");
    int_helpers(sb, "long long", "i64", "unsigned long long");
    float_helpers(sb, "double", "f64", "");
    float_helpers(sb, "float", "f32", "f");
    sb_puts(sb, "\n");
}
