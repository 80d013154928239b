/*
 * Vector math (the cpu backend's `vector_math` option, docs/backends.md).
 *
 * A loop the vectoriser turns into vector code still calls the scalar exp once per lane
 * (LLVM splits llvm.exp on a vector into one call per element): a column-physics stencil
 * whose time is half exp, log and pow gains little from the rest being vectorised. glibc's
 * libmvec has SIMD versions of these functions, named by the x86 vector function ABI
 * (_ZGV<isa>N<lanes><args>_<name>: isa b SSE2, d AVX2, e AVX-512), accurate to within 4 ulps
 * where libm's are correctly rounded in most cases (tests/backends/cpu/test_vector_math.py
 * measures both). LLVM would map calls to them for a whole process (its -vector-library
 * option); a kernel built with the option instead names them on each call, in the
 * "vector-function-abi-variant" call-site attribute the vectoriser reads, so stencils built
 * without it keep libm's results bit for bit.
 *
 * Only the ISAs the host runs are named (the JIT compiles for the host), and only functions
 * libmvec exports (dlsym: glibc 2.22 has exp, log, pow, sin and cos; 2.35 added log10, tan,
 * the inverse and hyperbolic functions, atan2, erf, erfc and cbrt). Without libmvec (another
 * C library, or not x86-64) the kernel calls libm as without the option. libm's functions
 * other than those LLVM has intrinsics for are declared pure under the option (they may set
 * errno, which nothing reads), as a call the vectoriser may replace must be.
 */
#include "backend/cpu/vecmath.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/jit.h"

static void *libmvec;
static pthread_once_t libmvec_once = PTHREAD_ONCE_INIT;

/* RTLD_GLOBAL: the JIT resolves a kernel's external symbols in the process's global scope. */
static void load_libmvec(void) { libmvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL); }

bool vecmath_available(void) {
    pthread_once(&libmvec_once, load_libmvec);
    return libmvec != NULL;
}

void vecmath_declare_pure(CG *g, LLVMValueRef f) {
    const char *attrs[] = {"nounwind", "willreturn", "nosync", "nofree"};
    for (size_t a = 0; a < sizeof attrs / sizeof *attrs; a++) {
        unsigned kind = LLVMGetEnumAttributeKindForName(attrs[a], strlen(attrs[a]));
        LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->ctx, kind, 0));
    }
    unsigned memory = LLVMGetEnumAttributeKindForName("memory", 6);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->ctx, memory, 0));
}

/* The vector ABI's ISAs, widest first, with the host feature each needs. */
static const struct {
    char isa;
    int bits;
    const char *feature;
} ISAS[] = {{'e', 512, "+avx512f"}, {'d', 256, "+avx2"}, {'b', 128, NULL}};

/* Declares the vector variant `name` (lanes x t, nargs arguments: memory(none), so the
 * vectoriser may call it for lanes a branch would not have run) and records it. */
static LLVMValueRef declare_variant(CG *g, const char *name, LLVMTypeRef t, int lanes, int nargs) {
    LLVMValueRef f = LLVMGetNamedFunction(g->mod, name);
    if (f) return f;
    LLVMTypeRef vt = LLVMVectorType(t, (unsigned)lanes);
    LLVMTypeRef params[2] = {vt, vt};
    f = LLVMAddFunction(g->mod, name, LLVMFunctionType(vt, params, (unsigned)nargs, 0));
    vecmath_declare_pure(g, f);
    if (g->nvariants == g->variantcap) {
        int cap = g->variantcap ? 2 * g->variantcap : 16;
        LLVMValueRef *v = realloc(g->variants, sizeof *v * (size_t)cap);
        if (v == NULL) {
            g->oom = true;
            return f;
        }
        g->variants = v;
        g->variantcap = cap;
    }
    g->variants[g->nvariants++] = f;
    return f;
}

void vecmath_mark_call(CG *g, LLVMValueRef call, Builtin fn, DType t) {
    const char *base = builtin_libm_name(fn); /* tgamma, rint, ...: libmvec has none (dlsym) */
    if (base == NULL || (t != DT_FLOAT32 && t != DT_FLOAT64) || !vecmath_available()) return;
    int nargs = builtin_arity(fn), size = t == DT_FLOAT32 ? 4 : 8;
    size_t len = 0;
    const char *scalar = LLVMGetValueName2(LLVMGetCalledValue(call), &len);
    char mappings[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof ISAS / sizeof *ISAS; i++) {
        if (ISAS[i].feature && !jit_has_feature(ISAS[i].feature)) continue;
        int lanes = ISAS[i].bits / (8 * size);
        char name[48];
        snprintf(name, sizeof name, "_ZGV%cN%d%s_%s%s", ISAS[i].isa, lanes, nargs == 2 ? "vv" : "v", base,
                 size == 4 ? "f" : "");
        if (dlsym(libmvec, name) == NULL) continue;
        declare_variant(g, name, cg_type(g, t), lanes, nargs);
        int n = snprintf(mappings + used, sizeof mappings - used, "%s_ZGV_LLVM_N%d%s_%.*s(%s)",
                         used ? "," : "", lanes, nargs == 2 ? "vv" : "v", (int)len, scalar, name);
        if (n < 0 || (size_t)n >= sizeof mappings - used) break;
        used += (size_t)n;
    }
    if (used == 0) return;
    static const char key[] = "vector-function-abi-variant";
    LLVMAttributeRef a = LLVMCreateStringAttribute(g->ctx, key, sizeof key - 1, mappings, (unsigned)used);
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, a);
}

void vecmath_finish(CG *g) {
    if (g->nvariants == 0) return;
    LLVMTypeRef at = LLVMArrayType2(g->ptr, (uint64_t)g->nvariants);
    LLVMValueRef used = LLVMAddGlobal(g->mod, at, "llvm.compiler.used");
    LLVMSetLinkage(used, LLVMAppendingLinkage);
    LLVMSetSection(used, "llvm.metadata");
    LLVMSetInitializer(used, LLVMConstArray2(g->ptr, g->variants, (uint64_t)g->nvariants));
}
