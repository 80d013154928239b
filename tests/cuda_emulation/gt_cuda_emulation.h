/*
 * Host emulation of the CUDA C that gtscript's cuda backend generates, so that the exact
 * source given to NVRTC can be compiled by a host C compiler and run on the CPU:
 *
 *     gcc -O1 -shared -fPIC -pthread -include gt_cuda_emulation.h -x c kernels.cu -o k.so -lm
 *
 * Blocks run one after another (in increasing or decreasing order, gt_emu_block_order);
 * the threads of a block are real POSIX threads, so
 * __syncthreads() is a real barrier and a missing one shows as a wrong result. Dynamic
 * shared memory is one buffer, filled with 0xff bytes (NaN) before every block, so a
 * kernel reading shared memory it did not write in that block sees NaN.
 */
#ifndef GT_CUDA_EMULATION_H
#define GT_CUDA_EMULATION_H

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned x, y, z;
} dim3;

static __thread dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__
#define __align__(n) __attribute__((aligned(n)))

enum { GT_EMU_SMEM_MAX = 1 << 20, GT_EMU_MAX_THREADS = 1024 };
__attribute__((aligned(16))) unsigned char gt_smem[GT_EMU_SMEM_MAX];

static pthread_barrier_t gt_emu_barrier;
#define __syncthreads() pthread_barrier_wait(&gt_emu_barrier)

/* CUDA's atomicCAS on 64-bit words, with the threads of a block being real threads */
static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long expected,
                                           unsigned long long desired) {
    return __sync_val_compare_and_swap(p, expected, desired);
}

static inline double __longlong_as_double(long long x) {
    double d;
    memcpy(&d, &x, sizeof d);
    return d;
}
static inline long long __double_as_longlong(double d) {
    long long x;
    memcpy(&x, &d, sizeof x);
    return x;
}
static inline float __int_as_float(int x) {
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}
static inline int __float_as_int(float f) {
    int x;
    memcpy(&x, &f, sizeof x);
    return x;
}

/* ---- the launcher ------------------------------------------------------------------ */

typedef void (*gt_emu_kernel)(char *const *, const long long *, const long long *, const char *, long long,
                              long long);

typedef struct {
    gt_emu_kernel kernel;
    char *const *ptrs;
    const long long *strides, *domain;
    const char *scalars;
    long long klo, khi;
    size_t smem;
    dim3 tid;
} gt_emu_job;

/* 0: blocks in increasing blockIdx order (x fastest); 1: in decreasing order. A kernel that
 * depends on the order of its blocks (which a GPU does not define) gives different results
 * in the two; the tests set it through ctypes. */
int gt_emu_block_order = 0;

static void *gt_emu_thread(void *arg) {
    const gt_emu_job *j = arg;
    threadIdx = j->tid;
    bool first = j->tid.x == 0 && j->tid.y == 0 && j->tid.z == 0;
    unsigned long n = (unsigned long)gridDim.x * gridDim.y * gridDim.z;
    for (unsigned long q = 0; q < n; q++) {
        unsigned long b = gt_emu_block_order ? n - 1 - q : q;
        blockIdx = (dim3){(unsigned)(b % gridDim.x), (unsigned)(b / gridDim.x % gridDim.y),
                          (unsigned)(b / ((unsigned long)gridDim.x * gridDim.y))};
        if (first) memset(gt_smem, 0xff, j->smem);
        pthread_barrier_wait(&gt_emu_barrier);
        j->kernel(j->ptrs, j->strides, j->domain, j->scalars, j->klo, j->khi);
        pthread_barrier_wait(&gt_emu_barrier);
    }
    return NULL;
}

/* The stream handle the caller gave the last launch: the emulated device runs every launch
 * synchronously on the calling thread, so it only records the handle, for the tests. */
unsigned long long gt_emu_last_stream;

/* Runs kernel<<<grid, block, smem>>>(...); 0 on success. */
int gt_emu_launch(gt_emu_kernel kernel, const unsigned grid[3], const unsigned block[3], size_t smem,
                  char *const *ptrs, const long long *strides, const long long *domain, const char *scalars,
                  long long klo, long long khi) {
    unsigned n = block[0] * block[1] * block[2];
    if (n == 0 || n > GT_EMU_MAX_THREADS || smem > GT_EMU_SMEM_MAX) return 1;
    blockDim = (dim3){block[0], block[1], block[2]};
    gridDim = (dim3){grid[0], grid[1], grid[2]};
    gt_emu_job *jobs = calloc(n, sizeof *jobs);
    pthread_t *threads = calloc(n, sizeof *threads);
    if (jobs == NULL || threads == NULL || pthread_barrier_init(&gt_emu_barrier, NULL, n) != 0) {
        free(jobs);
        free(threads);
        return 2;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    int rc = 0;
    unsigned started = 0;
    for (unsigned t = 0; t < n; t++) {
        jobs[t] = (gt_emu_job){kernel, ptrs, strides, domain, scalars, klo, khi, smem,
                               {t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])}};
        if (pthread_create(&threads[t], &attr, gt_emu_thread, &jobs[t]) != 0) {
            rc = 3; /* the started threads would wait at the barrier forever */
            abort();
        }
        started++;
    }
    for (unsigned t = 0; t < started; t++) pthread_join(threads[t], NULL);
    pthread_attr_destroy(&attr);
    pthread_barrier_destroy(&gt_emu_barrier);
    free(jobs);
    free(threads);
    return rc;
}

#endif
