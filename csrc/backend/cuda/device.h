/*
 * Where CUDA kernels run: the GPU through the CUDA driver API (libcuda.so.1, loaded with
 * dlopen on first use), or the host emulation used by the tests (the same CUDA source
 * compiled by the host C compiler against an emulation header, loaded with dlopen). Both
 * expose the same operations on "device addresses" (host addresses when emulated), so the
 * call path is the same code either way.
 */
#ifndef GT_CUDA_DEVICE_H
#define GT_CUDA_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t DevPtr;
/* A CUstream as an integer: 0 is the default (legacy) stream. */
typedef uint64_t DevStream;

/* Loads libcuda and initialises it. False with the reason: not found, or "no GPU"
 * (cuInit returns CUDA_ERROR_STUB_LIBRARY (34) or CUDA_ERROR_NO_DEVICE (100)). */
bool cu_init(char *err, size_t errlen);
/* "sm_XY" of device 0 after a successful cu_init. */
bool cu_device_arch(char *arch, size_t n, char *err, size_t errlen);

typedef struct CudaRuntime {
    bool emulated;
    void *handle;   /* CUmodule, or the dlopen handle of the emulation library */
    void **fn;      /* per kernel: CUfunction, or the emulated kernel's address */
    int nfn;
    void *launcher; /* emulation: gt_emu_launch */
    void *stream_log; /* emulation: gt_emu_last_stream, the stream of the last launch (tests) */
} CudaRuntime;

/* Loads a cubin and resolves the kernels (GPU). */
bool rt_load_cubin(CudaRuntime *rt, const void *cubin, const char *const *names, int n, char *err, size_t errlen);
/* Loads an emulation library built from the same source (host). */
bool rt_load_emulation(CudaRuntime *rt, const char *path, const char *const *names, int n, char *err, size_t errlen);
void rt_unload(CudaRuntime *rt);

bool rt_alloc(const CudaRuntime *rt, size_t bytes, DevPtr *p, char *err, size_t errlen);
void rt_free(const CudaRuntime *rt, DevPtr p);
/* Copies queued on `stream` (asynchronous on a GPU: rt_sync_stream before using the data). */
bool rt_h2d(const CudaRuntime *rt, DevPtr dst, const void *src, size_t n, DevStream stream, char *err,
            size_t errlen);
bool rt_d2h(const CudaRuntime *rt, void *dst, DevPtr src, size_t n, DevStream stream, char *err, size_t errlen);
bool rt_d2d(const CudaRuntime *rt, DevPtr dst, DevPtr src, size_t n, DevStream stream, char *err, size_t errlen);

/* Launches kernel `k` on `stream` with the common kernel parameters (see cudagen.h). */
bool rt_launch(const CudaRuntime *rt, int k, const unsigned grid[3], const unsigned block[3], size_t smem,
               const DevPtr args[4], long long klo, long long khi, DevStream stream, char *err, size_t errlen);
/* Waits for all work of the context (GPU); nothing to do when emulated (launches are synchronous). */
bool rt_sync(const CudaRuntime *rt, char *err, size_t errlen);
/* Makes the work queued later on `consumer` wait for the work queued so far on `producer`
 * (an event recorded there), without blocking the host. Handles as in the CUDA driver:
 * 0 and 1 (CU_STREAM_LEGACY) the legacy default stream, 2 the per-thread default stream. */
bool rt_stream_wait(const CudaRuntime *rt, DevStream producer, DevStream consumer, char *err, size_t errlen);
/* Waits for the work queued on one stream. */
bool rt_sync_stream(const CudaRuntime *rt, DevStream stream, char *err, size_t errlen);

#endif
