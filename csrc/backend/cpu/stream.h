/*
 * Streaming (non-temporal) stores into the fields a stencil only writes.
 *
 * A plain store of a line the core does not hold first reads that line from memory (a read
 * for ownership): a stencil writing an output it never reads moves three arrays' worth of
 * bytes for two. A non-temporal store writes the line without reading it, and does not keep
 * it in the caches. That pays when the output is larger than the caches will keep anyway
 * and is not read again soon; it costs when the output would have stayed cached for the next
 * stencil. The plan decides per call (tile[4] & GT_TILE_STREAM, codegen.h; call/plan.c and
 * the measured plans of call/tune.c).
 *
 * Two pieces: the code generator splits the unit-stride loop of a nest writing such a field
 * in two, the first iterations until that field's store address is 64-byte aligned (none
 * when the plan does not stream), so the vector loop that follows stores whole aligned
 * vectors (codegen.c); and cpu_stream_stores, after LLVM's optimisation (the vectoriser
 * cannot form non-temporal stores itself: it refuses loops whose scalar stores are marked),
 * turns each store into such a field into
 *     if (!streaming) the plain store
 *     else if (a vector, aligned to its size) one non-temporal store
 *     else each element by movnti
 * (no line is then written partly plainly: see stream.c), and fences each function's
 * returns, since non-temporal stores are weakly ordered and the pool's threads hand their
 * tiles over with ordinary atomics. What a store writes is never changed, only how: the
 * result is the same either way.
 */
#ifndef GT_CPU_STREAM_H
#define GT_CPU_STREAM_H

#include <stdbool.h>

#ifndef GTSCRIPT_NO_LLVM
#include <llvm-c/Core.h>
#endif

#include "backend/cpu/codegen.h"
#include "ir/ir.h"

/* A field the stencil writes and never reads, of 4- or 8-byte elements (x86 writes single
 * elements non-temporally only in those sizes): its stores may stream. */
static inline bool cpu_streamed_field(const Symbol *s) {
    return s->kind == SYM_FIELD && s->written && !s->read &&
           (dtype_size(s->dtype) == 4 || dtype_size(s->dtype) == 8);
}

/* Whether the host can stream: x86-64 (non-temporal stores of vectors and of single
 * elements), with LLVM's assembler parser for the latter's inline assembly. */
bool cpu_streaming_supported(void);

/* The bytes per point of the fields of `st` whose stores in `variant`'s kernel may stream:
 * written only, with the layout's unit-stride axis (the inner loop runs along it); 0 when
 * none may: the generic layout, the variant whose arrays share memory (variant.shared), a
 * host that cannot stream. */
int cpu_streamed_bytes(const Stencil *st, CpuVariant variant);

/* The pass described above, over the module's parts (optimised). Returns the number of
 * stores it made conditional; 0 leaves the module as it was. */
#ifndef GTSCRIPT_NO_LLVM
int cpu_stream_stores(LLVMModuleRef mod, const Stencil *st, CpuVariant variant);
#endif

#endif
