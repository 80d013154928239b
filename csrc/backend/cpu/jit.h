/*
 * The host target and LLVM's ORC LLJIT: one LLJIT per process and target machines handed
 * to builds one at a time (a build on each of several threads compiles in parallel: a
 * target machine is not safe for concurrent use, distinct ones in distinct contexts are),
 * one JITDylib per loaded stencil module (emptied when the module is unloaded and reused by a
 * later load). A module is built to an object file
 * (kept for the disk cache) and that object is what the JIT loads, for a fresh build and
 * a cache hit alike.
 */
#ifndef GT_JIT_H
#define GT_JIT_H

#include <stdbool.h>
#include <stddef.h>

#ifndef GTSCRIPT_NO_LLVM
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <llvm/Config/llvm-config.h>
/* The LLVM the core was built with, for cache keys and gtscript.sysinfo. */
#define GT_LLVM_VERSION LLVM_VERSION_STRING
#else
/* Built without LLVM (CMake's GTSCRIPT_LLVM=OFF): nollvm.c stands in for the functions below
 * that need no LLVM type, and jit_init fails with the reason, so no cpu stencil is built. */
#define GT_LLVM_VERSION "none"
#endif

#define GT_KERNEL_SYMBOL "gt_kernel"

/* Initialises LLVM's native target once; false with a message on failure. */
bool jit_init(char *err, size_t errlen);
/* "triple/cpu/features" of the host, for cache keys. Valid after jit_init. */
const char *jit_target_id(void);
const char *jit_cpu_name(void);
/* Whether the host has LLVM feature `feature` ("+avx2"): one of the host's features, whole. */
bool jit_has_feature(const char *feature);
/* Whether the host has 512-bit vectors (AVX-512F): kernels then ask LLVM for them. */
bool jit_has_wide_vectors(void);
/* Whether LLVM can assemble inline assembly for the host (its assembler parser initialised). */
bool jit_has_asm_parser(void);
#ifndef GTSCRIPT_NO_LLVM
/* A target machine for the host that no other thread uses until jit_tm_release; made once
 * and reused (creating one costs a build of a small stencil a measurable part of its time).
 * NULL with a message on failure. */
LLVMTargetMachineRef jit_tm_acquire(char *err, size_t errlen);
void jit_tm_release(LLVMTargetMachineRef tm);
/* Gives a module the host's triple and data layout. */
void jit_prepare_module(LLVMModuleRef m, LLVMTargetMachineRef tm);
/* Runs the optimisation pipeline (`passes`, e.g. "default<O3>") with the host target. */
bool jit_optimise(LLVMModuleRef m, LLVMTargetMachineRef tm, const char *passes, char *err,
                  size_t errlen);
/* Functions optimised per run of the pipeline (jit_optimise_budgeted). */
enum { JIT_BATCH = 8 };

typedef struct JitBudgetReport {
    int functions; /* defined functions of the module */
    int cheap;     /* of them, optimised with the cheaper pipeline: the budget ran out */
} JitBudgetReport;

/* Runs `passes` on the module's functions a batch at a time; once `budget` seconds have gone
 * by, the remaining batches get `cheap` instead (a build that would run for minutes
 * finishes, with slower code for those functions). Functions must be noinline. */
bool jit_optimise_budgeted(LLVMModuleRef m, LLVMTargetMachineRef tm, const char *passes,
                           const char *cheap, double budget, JitBudgetReport *report, char *err,
                           size_t errlen);
/* Emits an object file into a malloc'ed buffer (*obj, *objlen). */
bool jit_emit_object(LLVMModuleRef m, LLVMTargetMachineRef tm, char **obj, size_t *objlen,
                     char *err, size_t errlen);
#endif

typedef struct JitModule {
    void *jd; /* LLVMOrcJITDylibRef */
    void *fn; /* address of GT_KERNEL_SYMBOL */
} JitModule;

/* Loads an object file (copied) into a new JITDylib and resolves the kernel. */
bool jit_load_object(const char *obj, size_t objlen, JitModule *out, char *err, size_t errlen);
void jit_unload(JitModule *m);

#endif
