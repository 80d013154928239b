/*
 * Call plans: the per-domain decisions of a call (tile sizes, number of threads) and the
 * tile-private buffers of the temporaries, kept with the stencil so that repeated calls on
 * the same domain allocate nothing and touch no fresh pages.
 */
#ifndef GT_PLAN_H
#define GT_PLAN_H

#include <stdint.h>

#include "backend/cpu/codegen.h"
#include "ir/ir.h"

typedef struct Plan {
    int64_t domain[3];
    CpuLayout layout;   /* temporaries are laid out like the kernel's layout class */
    int nthreads;
    int64_t ti, tj;     /* tile size */
    int64_t budget;     /* the L2 bytes per thread the tiles were sized for */
    const char *tile_why; /* "model" (from the cache sizes), "env", or why one tile */
    int64_t nti, ntj;   /* tiles along I and J */
    int nslots;
    int nptrs;          /* entries per thread of ptrs: the slots, then the block header */
    char **ptrs;        /* nthreads x nptrs: per-thread pointer tables */
    int64_t *strides;   /* nthreads x nslots x GT_STRIDES */
    char **temp_mem;    /* nthreads x ntemps: buffers of the temporaries */
    int ntemps;
    /* column blocks (backend/cpu/blocks.h), C order: per thread a header {block_cols,
     * buffer pointers...} and the scratch buffers, at ptrs[w * nptrs + nslots] */
    int64_t block_cols;    /* columns per block; 0: the column groups run in bundles */
    int nblock_buffers;
    char **block_mem;      /* nthreads */
    const char *block_why; /* "model", "env" or "measured" */
} Plan;

/* NULL (with a Python MemoryError set) when out of memory. */
Plan *plan_new(const Stencil *st, const int64_t domain[3], CpuLayout layout);
void plan_free(Plan *p);
static inline bool plan_fits(const Plan *p, const int64_t domain[3], CpuLayout layout) {
    return p && p->layout == layout && p->domain[0] == domain[0] && p->domain[1] == domain[1] &&
           p->domain[2] == domain[2];
}

#endif
