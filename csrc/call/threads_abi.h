/*
 * The thread count as plain C functions exported from the extension module, so that
 * threadpoolctl (which finds libraries among the loaded shared objects and calls them through
 * ctypes, without the GIL) can read and limit gtscript's pool as it does OpenMP's and BLAS's
 * (gtscript/threads.py registers the controller). Everything else in the module is hidden.
 */
#ifndef GT_THREADS_ABI_H
#define GT_THREADS_ABI_H

#define GT_EXPORT __attribute__((visibility("default")))

/* The threads a call planned from now on may use (pool.h's pool_threads). */
GT_EXPORT int gtscript_get_num_threads(void);

/* Sets them: n < 1 counts as 1, n > 256 as 256 (pool.h's pool_set_threads). */
GT_EXPORT void gtscript_set_num_threads(int n);

#endif
