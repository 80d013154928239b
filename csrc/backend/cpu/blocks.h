/*
 * Column blocks: the C-order (K unit-stride) form of a column group, sweeping a block of
 * columns level by level through a small column-fastest scratch copy (columns.c). This file
 * decides which groups can run so and which of their fields and temporaries live in the
 * scratch; the plan (call/plan.c) sizes the scratch from the same facts.
 */
#ifndef GT_CPU_BLOCKS_H
#define GT_CPU_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* The most scratch buffers of one group (a column-physics scheme reads and writes some 70
 * fields), and the most horizontal offsets one symbol is read at. */
enum { GT_MAX_BLOCK_SYMS = 128, GT_MAX_BLOCK_VIEWS = 24 };

/* Columns per block: a constant of the kernel, so that LLVM sees that a sweep's level k and
 * level k - 1 of a scratch buffer are this many elements apart and vectorises the column
 * loop without run-time overlap checks (with a run-time width it checked the whole buffer,
 * found the levels overlapping and ran the scalar loop). 64 (eight 512-bit vectors of
 * float64 per level) for up to 24 buffers: the scratch of a 7-buffer tridiagonal solve at 80
 * levels is 280 KiB; fewer columns for more buffers, so that a block's scratch stays about
 * as large (24 buffers x 64 columns), down to 8 (one 512-bit vector): 16 columns for the
 * 70 buffers of benchmarks/column_physics.py's microphysics (1.2 MiB at 137 levels). */
enum { GT_BLOCK_COLS_MAX = 64, GT_BLOCK_COLS_MIN = 8, GT_BLOCK_COL_BUFFERS = 24 * 64 };
int cpu_block_cols(int nbuf);

/* A tile's blocks run along J, or along I where the tile is fewer J columns wide than the
 * narrowest block and wider in I (columns of shape (ncol, 1, nk), as physics schemes call
 * them; fewer than a vector's worth of J columns would leave the vector loop empty). The
 * kernel decides per tile (columns.c), by this rule. */
static inline bool cpu_blocks_along_i(int64_t ti, int64_t tj) { return tj < GT_BLOCK_COLS_MIN && ti > tj; }

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

/* Runs cpu_block_group over every column group of the analysed stencil once, when the cpu
 * backend takes it (module.c), and keeps what the build and every call ask:
 * st->block_buffers and each temporary's block_held. (A call used to redo it: on a
 * column-physics scheme that was milliseconds per call, and a second per call that asked for
 * exec_info.) */
void cpu_blocks_assign(Stencil *st);

/* Whether temporary `t` lives in a block's scratch when the column groups run in blocks. */
bool cpu_block_holds(const Stencil *st, const Symbol *t);

/* The most scratch buffers any group of the stencil needs (0: no group runs in blocks). Each
 * buffer holds a block's columns (cpu_block_cols of it) at every level of the domain, column
 * fastest. */
int cpu_block_buffers(const Stencil *st);

#endif
