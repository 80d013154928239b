/*
 * Column blocks: the C-order (K unit-stride) form of a column group, sweeping a block of
 * columns level by level through a small column-fastest scratch copy (columns.c). This file
 * decides which groups can run so and which of their fields and temporaries live in the
 * scratch; the plan (call/plan.c) sizes the scratch from the same facts.
 */
#ifndef GT_CPU_BLOCKS_H
#define GT_CPU_BLOCKS_H

#include <stdbool.h>

#include "ir/ir.h"

enum { GT_MAX_BLOCK_SYMS = 24 };

/* Columns per block. A constant of the kernel, so that LLVM sees that a sweep's level k and
 * level k - 1 of a scratch buffer are this many elements apart and vectorises the column
 * loop without run-time overlap checks (with a run-time width it checked the whole buffer,
 * found the levels overlapping and ran the scalar loop). 32: four 512-bit vectors of
 * float64 per level, the scratch of a 7-buffer tridiagonal solve at 80 levels 140 KiB,
 * well inside a 1 MiB L2. */
enum { GT_BLOCK_COLS = 64 };

/* A buffer of a block's scratch: symbol `sym` read at horizontal offset (di, dj) (a symbol
 * only read may be read at several offsets, one buffer each), copied in before the sweeps
 * (copy_in) and back after them (copy_out). Column-local temporaries are neither. */
typedef struct BlockSym {
    const Symbol *sym;
    int di, dj;
    bool copy_in, copy_out;
} BlockSym;

/* The block symbols of the group of computations [first, first + n): their number, or -1
 * when the group cannot run in blocks (then it keeps its column bundles). */
int cpu_block_group(const Stencil *st, const Computation *first, int n, BlockSym *out);

/* Whether temporary `t` lives in a block's scratch when the column groups run in blocks. */
bool cpu_block_holds(const Stencil *st, const Symbol *t);

/* The most scratch buffers any group of the stencil needs (0: no group runs in blocks). Each
 * buffer holds a block's columns at every level of the domain, column fastest. */
int cpu_block_buffers(const Stencil *st);

#endif
