/*
 * Analysed IR -> LLVM IR for the host CPU.
 *
 * The module defines one function
 *     void gt_kernel(char **ptrs, const int64_t *strides, const int64_t *domain,
 *                    const char *scalars, const int64_t *tile)
 * ptrs[slot]      the element at the compute-domain origin of each field and temporary
 * strides[slot*GT_STRIDES + a]   element strides: I, J, K, then the data dimensions
 *                 (0 for an axis the field does not have)
 * domain[0..2]    ni, nj, nk
 * domain[3..6]    where horizontal region bounds are anchored, in the domain's index space:
 *                 the grid's first point and one past its last along I, then along J
 *                 (0, ni, 0, nj unless the call placed the domain on a global grid)
 * scalars         one 8-byte slot per scalar parameter, holding its value in its dtype;
 *                 then 8 bytes the kernel sets when a checked K level (one computed from
 *                 values the stencil writes) leaves the levels allowed: the line, plus the
 *                 argument's index + 1 shifted left by 32 for a read;
 *                 then a GtLoopWatch * (below); then, in stencils with checked K levels,
 *                 two words per field slot: the levels [lo, hi) its array holds, counted
 *                 from the domain's first level (what a checked read may read); then three
 *                 words the kernel sets with a note marked GT_NOTE_LEVEL_BOUND (ir.h): the
 *                 column (i, j) and the level of the interval bound outside the domain
 * tile[0..3]      i0, i1, j0, j1: the part of the I-J domain this call computes
 * tile[4]         flags: GT_TILE_STREAM, stores into the fields the stencil only writes may
 *                 bypass the caches (stream.h)
 * Each statement runs over the tile widened by its extent (the extents of the analysis), so
 * tiles are independent: values a tile reads from temporaries it computes itself. Pointers
 * of temporaries address tile-private buffers whose element (0, 0, 0) is the tile's origin
 * (i0, j0, 0). A stencil whose argument fields are written beyond the compute domain
 * (stencil_tileable() false) must run as one tile covering the whole domain.
 */
#ifndef GT_CODEGEN_H
#define GT_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#ifndef GTSCRIPT_NO_LLVM
#include <llvm-c/Core.h>
#endif

#include "ir/ir.h"

enum { GT_STRIDES = 3 + GT_MAX_DATA_DIMS };
enum { GT_TILE_STREAM = 1 };

/*
 * What while loops watch (call/interrupt.h): every GT_LOOP_CHECK iterations a loop compares
 * *counter with mark; when they differ it sets stopped and the kernel returns at once (the
 * rest of its tile never runs). The offsets are the kernel's ABI.
 */
typedef struct GtLoopWatch {
    unsigned long mark;
    const unsigned long *counter;
    int64_t stopped;
} GtLoopWatch;
_Static_assert(sizeof(unsigned long) == 8 && sizeof(void *) == 8, "LP64: the kernel reads 8-byte words");
_Static_assert(offsetof(GtLoopWatch, counter) == 8 && offsetof(GtLoopWatch, stopped) == 16,
               "the kernel's offsets of GtLoopWatch");
/* A power of two: the iterations between looks at the counter (a few microseconds to a few
 * milliseconds of a loop body), a countdown on the back edge costs one register decrement. */
enum { GT_LOOP_CHECK = 1 << 16 };

typedef void (*GtKernelFn)(char **ptrs, const int64_t *strides, const int64_t *domain,
                           const char *scalars, const int64_t *tile);

/*
 * Layout classes, decided per call from the arrays' strides (call/layout.c). Each gets a
 * kernel specialised for it: the unit-stride axis innermost with a constant stride of 1.
 *   LAYOUT_K_UNIT   every field with a K axis has K stride 1 (C order, NumPy's default)
 *   LAYOUT_I_UNIT   every field with an I axis has I stride 1 (Fortran order)
 *   LAYOUT_GENERIC  anything else: K innermost, all strides from the call
 * Temporaries are laid out like the class (K or I fastest).
 */
typedef enum { LAYOUT_K_UNIT, LAYOUT_I_UNIT, LAYOUT_GENERIC, LAYOUT_COUNT } CpuLayout;

/*
 * Column bundles. Where the analysis lets columns sweep K one by one (schedule.c), the
 * kernel takes st->column_lanes J columns at a time and interleaves their sweeps
 * level by level. A column-local temporary then needs no tile buffer: its buffer holds one
 * bundle, lane-major (element (lane, k) at lane + k * lanes; I stride 0), so every column
 * of the tile reuses the same few kilobytes. The I-unit layout runs level by level instead.
 */
static inline bool cpu_bundle_buffer(const Stencil *st, const Symbol *s, CpuLayout layout) {
    return s->kind == SYM_TEMP && s->column_local && !s->in_register && st->column_lanes > 0 &&
           layout != LAYOUT_I_UNIT;
}

/* A temporary kept in registers (registers.c), with no buffer at all: a column-local one of
 * the sweeps (C order and generic layouts, in bundles and in blocks alike), or one of a loop
 * nest's run (the others, and column-local ones in Fortran order, where a column group runs
 * level by level). */
static inline bool cpu_register_temp(const Stencil *st, const Symbol *s, CpuLayout layout) {
    if (s->kind != SYM_TEMP) return false;
    if (s->column_local && layout != LAYOUT_I_UNIT) return s->in_register && st->column_lanes > 0;
    return s->reg_run > 0;
}

/*
 * The kernel variant of a call: its layout class, and whether some argument arrays share
 * memory (an array passed for an input and an output, updated point by point). Without
 * shared memory every pointer of the kernel is `noalias`, so LLVM vectorises and keeps
 * loads across stores without run-time overlap checks; with it only temporaries are.
 */
typedef struct CpuVariant {
    CpuLayout layout;
    bool shared;
} CpuVariant;

enum { CPU_VARIANT_COUNT = 2 * LAYOUT_COUNT };

/* Variants are numbered from 0, the one built with the stencil (C order, no sharing). */
static inline int cpu_variant_index(CpuVariant v) { return (int)v.layout + (v.shared ? LAYOUT_COUNT : 0); }

#ifndef GTSCRIPT_NO_LLVM
/* Builds the kernel module in `ctx`; NULL with a message in err on failure. */
LLVMModuleRef codegen_cpu(const Stencil *st, CpuVariant variant, LLVMContextRef ctx, char *err,
                          size_t errlen);
#endif

#endif
