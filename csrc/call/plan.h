/*
 * Call plans: the per-domain decisions of a call (tile sizes, number of threads) and the
 * tile-private buffers of the temporaries, kept with the stencil so that repeated calls on
 * the same domain allocate nothing and touch no fresh pages. The decisions are a PlanChoice:
 * the model's (plan_model, from the cache sizes and the environment's overrides) or one the
 * tuner measures (call/tune.h). No choice changes what a call computes.
 */
#ifndef GT_PLAN_H
#define GT_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/cpu/codegen.h"
#include "ir/ir.h"

/* The choices a plan is made from. */
typedef struct PlanChoice {
    int pool;              /* the pool's size the choice was made for (pool_threads() then): a
                              plan for 8 threads is not one for 1 (gtscript.set_num_threads) */
    int64_t ti, tj;        /* tile size, 1 <= ti <= ni, 1 <= tj <= nj */
    int64_t block_cols;    /* C-order column groups: block_width (blocks) or 0 (bundles) */
    int64_t block_width;   /* the columns of a block of this stencil (cpu_block_cols) */
    const char *tile_why;  /* "model", "env" or "one tile (writes beyond the domain)" */
    const char *block_why; /* "model", "env", "model: scratch over 64 MiB"; NULL: no group
                              can run in blocks (block_cols is then 0) */
    int tile_axis;         /* the axis (0: I, 1: J) whose extent the model worked out (the
                              other it took whole or fixed): the tuner varies it first */
    bool tile_free;        /* the model chose the tile: other tiles compute the same */
    bool blocks_free;      /* the model chose, and blocks and bundles are both possible */
    bool stream;           /* stores into the fields only written bypass the caches */
    const char *stream_why; /* "model: ...", "env"; NULL: the kernel has no such stores */
    bool stream_free;      /* the model chose, and both are possible */
    bool env;              /* GTSCRIPT_TILE_SIZE, GTSCRIPT_COLUMN_BLOCKS or
                              GTSCRIPT_STREAMING_STORES decided something */
} PlanChoice;

typedef struct Plan {
    int64_t domain[3];
    CpuLayout layout;   /* temporaries are laid out like the kernel's layout class */
    int pool;           /* the choice's pool size */
    int nthreads;       /* threads the call runs on: the pool's, fewer for a small domain */
    int64_t ti, tj;     /* tile size */
    int64_t budget;     /* the L2 bytes per thread the tiles were sized for */
    const char *tile_why; /* the choice's (PlanChoice) */
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
    const char *block_why; /* the choice's; NULL: no column group runs in blocks */
    bool stream;           /* tile[4] & GT_TILE_STREAM (backend/cpu/stream.h) */
    const char *stream_why; /* the choice's; NULL: no store can stream */
} Plan;

/* The model's choice for this domain and kernel variant on a pool of `pool` threads: tiles
 * sized for the L2 cache, column blocks where they fit, streaming stores for outputs larger
 * than the last-level cache, GTSCRIPT_TILE_SIZE, GTSCRIPT_COLUMN_BLOCKS and
 * GTSCRIPT_STREAMING_STORES where set. */
void plan_model(const Stencil *st, const int64_t domain[3], CpuVariant variant, int pool,
                PlanChoice *c);

/* A plan made from choice `c` (plan_model's, or the tuner's). NULL (with a Python MemoryError
 * set) when out of memory. */
Plan *plan_new(const Stencil *st, const int64_t domain[3], CpuLayout layout, const PlanChoice *c);
void plan_free(Plan *p);
static inline bool plan_fits(const Plan *p, const int64_t domain[3], CpuLayout layout) {
    return p && p->layout == layout && p->domain[0] == domain[0] && p->domain[1] == domain[1] &&
           p->domain[2] == domain[2];
}
/* Whether p was made from choice c (its pool size, tile, column blocks and streaming). */
static inline bool plan_is(const Plan *p, const PlanChoice *c) {
    return p->pool == c->pool && p->ti == c->ti && p->tj == c->tj &&
           p->block_cols == c->block_cols && p->stream == c->stream;
}

#endif
