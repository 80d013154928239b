/*
 * A small persistent pthread pool for running tiles in parallel. Size: GTSCRIPT_NUM_THREADS,
 * default the cores this process may use. One job runs at a time; a caller that finds the
 * pool busy (another Python thread is running a stencil) runs its job alone, inline.
 */
#ifndef GT_POOL_H
#define GT_POOL_H

#include <stdbool.h>

typedef void (*PoolTask)(void *ctx, int worker);

/* Number of threads a job may use (>= 1), including the calling thread. */
int pool_threads(void);

/* Runs task(ctx, w) for w in [0, nthreads) concurrently, worker 0 on the calling thread,
 * and returns when all have finished. Returns the number of workers used. */
int pool_run(PoolTask task, void *ctx, int nthreads);

#endif
