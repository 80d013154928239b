/* IR -> optimised LLVM module -> object file: the whole cpu build, without Python. */
#ifndef GT_CPU_BUILD_H
#define GT_CPU_BUILD_H

#include <stddef.h>

#include "backend/cpu/codegen.h"

/* The optimisation pipeline. LLVM's default<O3> costs several times the compile time for
 * no faster stencil code: these loops need CSE of loads across stores to other arrays
 * (early-cse on MemorySSA, GVN: temporaries are noalias), LICM, rotation, forwarding of
 * values stored in one iteration to the next (loop-load-elim: a vertical sweep's c[k-1]
 * stays in a register), the loop vectoriser, and the SLP vectoriser (the lanes of a column
 * bundle, columns.c, are isomorphic scalar code it packs into vectors). Interleaving (unrolling vector loops) quadruples the code to compile and was
 * not faster on memory-bound stencils (benchmarks/), so only explicit requests interleave.
 * A textual `instcombine` verifies that it reached a fixpoint and aborts the process when it
 * did not (a testing aid of LLVM's), hence <no-verify-fixpoint>, as LLVM's own pipelines.
 * simplifycfg does not speculate blocks: it turned a branch around a few instructions into
 * selects that compute both sides, which in scalar code is the whole of every `if` of a
 * column-physics sweep at every point (benchmarks/column_physics.py's micro in column
 * bundles: 171 -> 142 ms); the loop vectoriser if-converts the loops it vectorises itself
 * (satadj's nests, the column blocks: unchanged). Jump threading then joins the branches of
 * one `if`: lowered to guarded statements, each statement of its body tests the same mask
 * again, and a physics sweep took a branch per statement where the C version takes one per
 * `if` (micro in column bundles 148 -> 130 ms, the C version 127; its build's code
 * generation a third shorter, fewer blocks; the suite's copy, laplacian, hdiff and thomas
 * optimise to the same IR, satadj's nests 1-2% slower). */
#define GT_CPU_PASSES                                                                              \
    "function(sroa,early-cse<memssa>,simplifycfg<no-speculate-blocks>,jump-threading,"             \
    "simplifycfg<no-speculate-blocks>,"                                                            \
    "instcombine<no-verify-fixpoint>,loop-mssa(loop-rotate,licm),gvn,loop-load-elim,"              \
    "loop-vectorize<interleave-forced-only>,slp-vectorizer,instcombine<no-verify-fixpoint>,"       \
    "simplifycfg<no-speculate-blocks>)"

/* The cheaper pipeline of a build over its budget (jit_optimise_budgeted): clean-up and
 * hoisting, no loop transformations, no vectoriser. */
#define GT_CPU_CHEAP_PASSES                                                                        \
    "function(sroa,early-cse<memssa>,simplifycfg,instcombine<no-verify-fixpoint>,loop-mssa(licm)," \
    "simplifycfg)"

/* Seconds of optimisation after which the rest of a kernel gets GT_CPU_CHEAP_PASSES: far
 * above any stencil of benchmarks/build_scaling.py (docs/performance.md), far below the
 * minutes a pathological shape could take. GTSCRIPT_LLVM_BUDGET overrides it (seconds). */
#define GT_CPU_LLVM_BUDGET 10.0

typedef struct CpuObject {
    char *obj; /* object file bytes (malloc) */
    size_t objlen;
    char *llvm_ir; /* optimised LLVM IR text (malloc), for Stencil.source() */
    /* seconds spent in each LLVM phase, for build_info (docs/performance.md) */
    double ir_seconds;       /* analysed IR -> LLVM IR */
    double optimise_seconds; /* the pass pipeline */
    double object_seconds;   /* code generation: LLVM IR -> object file */
    int functions;           /* functions of the kernel (codegen.c: parts) */
    int cheap_functions;     /* of them, optimised with GT_CPU_CHEAP_PASSES (over budget) */
    /* when the LLVM part of the build began and ended (CLOCK_MONOTONIC seconds, the clock of
     * Python's time.perf_counter): builds on several threads show their overlap */
    double start, end;
} CpuObject;

/* Generates, optimises (`passes`, NULL for GT_CPU_PASSES) and compiles the kernel for one
 * layout class, on a thread with a large stack (LLVM recurses deeply over big functions); the
 * caller waits for it. False with a message in err. */
bool cpu_build_object(const Stencil *st, CpuVariant variant, const char *passes, CpuObject *out,
                      char *err, size_t errlen);
void cpu_object_free(CpuObject *o);

#endif
