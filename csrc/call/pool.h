/*
 * A small persistent pthread pool for running tiles in parallel. Size: GTSCRIPT_NUM_THREADS,
 * default the cores this process may use, read at the first use; pool_set_threads (from
 * gtscript.set_num_threads or threadpoolctl) changes it at run time for the calls that plan
 * after it. One job runs at a time; a caller that finds the pool busy (another Python thread is
 * running a stencil) runs its job alone, inline.
 */
#ifndef GT_POOL_H
#define GT_POOL_H

#include <stdbool.h>

typedef void (*PoolTask)(void *ctx, int worker);

enum { POOL_MAX = 256 };

/* Number of threads a job may use (>= 1, <= POOL_MAX), including the calling thread. */
int pool_threads(void);

/* Sets that number (clamped to [1, POOL_MAX]) for the jobs planned from now on; a job already
 * running keeps the threads it started with. Safe from any thread, with or without the GIL. */
void pool_set_threads(int n);

/* Runs task(ctx, w) for w in [0, nthreads) concurrently, worker 0 on the calling thread,
 * and returns when all have finished. Returns the number of workers used. nthreads is the
 * caller's plan's (made from pool_threads() when it was planned), so a size set while the
 * call was being prepared does not change it. */
int pool_run(PoolTask task, void *ctx, int nthreads);

#endif
