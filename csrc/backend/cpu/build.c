#include "backend/cpu/build.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cpu/jit.h"
#include "backend/cpu/stream.h"

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

/* One build (on the compiler thread: cpu_build_object). */
static bool build_here(const Stencil *st, CpuVariant variant, const char *passes, CpuObject *out,
                       char *err, size_t errlen) {
    double t0 = seconds();
    out->start = t0;
    LLVMTargetMachineRef tm = jit_tm_acquire(err, errlen);
    if (tm == NULL) return false;
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef mod = codegen_cpu(st, variant, ctx, err, errlen);
    bool ok = mod != NULL;
    double t1 = seconds();
    out->ir_seconds = t1 - t0;
    if (ok) {
        jit_prepare_module(mod, tm);
        JitBudgetReport r;
        ok = jit_optimise_budgeted(mod, tm, passes ? passes : GT_CPU_PASSES, GT_CPU_CHEAP_PASSES,
                                   llvm_budget(), &r, err, errlen);
        out->functions = r.functions;
        out->cheap_functions = r.cheap;
        /* after the vectoriser: it is the vector stores that may stream */
        if (ok) cpu_stream_stores(mod, st, variant);
    }
    double t2 = seconds();
    out->optimise_seconds = t2 - t1;
    if (ok) {
        char *text = LLVMPrintModuleToString(mod);
        out->llvm_ir = text ? strdup(text) : NULL;
        LLVMDisposeMessage(text);
        /* code generation mutates the module: emit once, then load that object */
        ok = jit_emit_object(mod, tm, &out->obj, &out->objlen, err, errlen);
        out->object_seconds = seconds() - t2;
    }
    out->end = seconds();
    if (mod) LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    jit_tm_release(tm);
    if (!ok) cpu_object_free(out);
    return ok;
}

void cpu_object_free(CpuObject *o) {
    free(o->obj);
    free(o->llvm_ir);
    memset(o, 0, sizeof *o);
}

/* LLVM's analyses recurse over a function's loops and values (ScalarEvolution, the
 * dominator tree, instruction selection's DAG): a stencil of thousands of computation blocks
 * overflows the 8 MiB main-thread stack (and the smaller stack of a Python thread) and kills
 * the process. The build therefore runs on a thread of its own with a stack large enough for
 * that depth; it is address space only, the pages a build does not touch are never mapped. */
enum { BUILD_STACK_BYTES = 256u << 20 };

typedef struct BuildJob {
    const Stencil *st;
    CpuVariant variant;
    const char *passes;
    CpuObject *out;
    char *err;
    size_t errlen;
    bool ok;
} BuildJob;

static void *build_thread(void *arg) {
    BuildJob *j = arg;
    j->ok = build_here(j->st, j->variant, j->passes, j->out, j->err, j->errlen);
    return NULL;
}

bool cpu_build_object(const Stencil *st, CpuVariant variant, const char *passes, CpuObject *out,
                      char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!jit_init(err, errlen)) return false;
    BuildJob job = {st, variant, passes, out, err, errlen, false};
    pthread_attr_t attr;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        rc = pthread_attr_setstacksize(&attr, BUILD_STACK_BYTES);
        pthread_t tid;
        if (rc == 0) rc = pthread_create(&tid, &attr, build_thread, &job);
        pthread_attr_destroy(&attr);
        if (rc == 0) return pthread_join(tid, NULL) == 0 && job.ok; /* join cannot fail here */
    }
    snprintf(err, errlen, "cannot start the compiler thread (a %u MiB stack): %s",
             BUILD_STACK_BYTES >> 20, strerror(rc));
    return false;
}
