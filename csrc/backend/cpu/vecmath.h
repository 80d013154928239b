/*
 * Vector math: the cpu backend's `vector_math` option (vecmath.c).
 */
#ifndef GT_CPU_VECMATH_H
#define GT_CPU_VECMATH_H

#include <stdbool.h>

#include "backend/cpu/cg.h"

/* Whether glibc's libmvec is loaded (once, on the first call) so kernels can call it. */
bool vecmath_available(void);

/* Names the libmvec SIMD versions of the scalar call `call` of `fn` (exp, log, log10, pow, the
 * trigonometric, inverse and hyperbolic functions, erf, erfc, cbrt; float32 or float64) that
 * this CPU runs as its vector variants, for LLVM's loop vectoriser; nothing for other
 * functions, or without libmvec. */
void vecmath_mark_call(CG *g, LLVMValueRef call, Builtin fn, DType t);

/* Declares libm function f pure (memory(none), nounwind, ...), which a call the vectoriser
 * may replace by a vector variant must be: errno, which libm may set, is read by nothing. */
void vecmath_declare_pure(CG *g, LLVMValueRef f);

/* Keeps the module's vector variant declarations until the vectoriser has run (an unused
 * declaration would be dropped before it). */
void vecmath_finish(CG *g);

#endif
