#include "backend/cpu/build.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cpu/jit.h"

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double llvm_budget(void) {
    const char *v = getenv("GTSCRIPT_LLVM_BUDGET");
    char *end = NULL;
    double b = v && *v ? strtod(v, &end) : -1.0;
    return end && *end == '\0' && b >= 0.0 ? b : GT_CPU_LLVM_BUDGET;
}

bool cpu_build_object(const Stencil *st, CpuVariant variant, const char *passes, CpuObject *out,
                      char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!jit_init(err, errlen)) return false;
    double t0 = seconds();
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = codegen_cpu(st, variant, ctx, err, errlen);
    bool ok = mod != NULL;
    double t1 = seconds();
    out->ir_seconds = t1 - t0;
    if (ok) {
        jit_prepare_module(mod);
        JitBudgetReport r;
        ok = jit_optimise_budgeted(mod, passes ? passes : GT_CPU_PASSES, GT_CPU_CHEAP_PASSES,
                                   llvm_budget(), &r, err, errlen);
        out->functions = r.functions;
        out->cheap_functions = r.cheap;
    }
    double t2 = seconds();
    out->optimise_seconds = t2 - t1;
    if (ok) {
        char *text = LLVMPrintModuleToString(mod);
        out->llvm_ir = text ? strdup(text) : NULL;
        LLVMDisposeMessage(text);
        /* code generation mutates the module: emit once, then load that object */
        ok = jit_emit_object(mod, &out->obj, &out->objlen, err, errlen);
        out->object_seconds = seconds() - t2;
    }
    if (mod) LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    if (!ok) cpu_object_free(out);
    return ok;
}

void cpu_object_free(CpuObject *o) {
    free(o->obj);
    free(o->llvm_ir);
    memset(o, 0, sizeof *o);
}
