/*
 * The cpu backend's entry points in a core built without LLVM (CMake's GTSCRIPT_LLVM=OFF),
 * compiled instead of the LLVM code generator and JIT. jit_init fails with the reason, and
 * every cpu build asks it first (module.c), so no cpu stencil is ever built and the others
 * here are never reached for one; they answer as a host without the feature would. The numpy
 * and cuda backends need none of this.
 */
#include <stdio.h>
#include <string.h>

#include "backend/cpu/build.h"
#include "backend/cpu/jit.h"
#include "backend/cpu/stream.h"

static const char NO_LLVM[] =
    "this gtscript was built without LLVM (GTSCRIPT_LLVM=OFF), so it has no cpu backend: use "
    "backend 'numpy' or 'cuda', or rebuild gtscript with LLVM 19 (docs/backends.md)";

bool jit_init(char *err, size_t errlen) {
    snprintf(err, errlen, "%s", NO_LLVM);
    return false;
}

const char *jit_target_id(void) { return "none/none/"; }

const char *jit_cpu_name(void) { return "none"; }

bool jit_has_wide_vectors(void) { return false; }

bool jit_has_asm_parser(void) { return false; }

bool jit_load_object(const char *obj, size_t objlen, JitModule *out, char *err, size_t errlen) {
    snprintf(err, errlen, "%s", NO_LLVM);
    return false;
}

void jit_unload(JitModule *m) { memset(m, 0, sizeof *m); }

bool cpu_build_object(const Stencil *st, CpuVariant variant, const char *passes, CpuObject *out,
                      char *err, size_t errlen) {
    snprintf(err, errlen, "%s", NO_LLVM);
    return false;
}

void cpu_object_free(CpuObject *o) {}

bool cpu_streaming_supported(void) { return false; }

int cpu_streamed_bytes(const Stencil *st, CpuVariant variant) { return 0; }
