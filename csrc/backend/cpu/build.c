#include "backend/cpu/build.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cpu/jit.h"

bool cpu_build_object(const Stencil *st, CpuVariant variant, const char *passes, CpuObject *out,
                      char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!jit_init(err, errlen)) return false;
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = codegen_cpu(st, variant, ctx, err, errlen);
    bool ok = mod != NULL;
    if (ok) {
        jit_prepare_module(mod);
        ok = jit_optimise(mod, passes ? passes : GT_CPU_PASSES, err, errlen);
    }
    if (ok) {
        char *text = LLVMPrintModuleToString(mod);
        out->llvm_ir = text ? strdup(text) : NULL;
        LLVMDisposeMessage(text);
        /* code generation mutates the module: emit once, then load that object */
        ok = jit_emit_object(mod, &out->obj, &out->objlen, err, errlen);
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
