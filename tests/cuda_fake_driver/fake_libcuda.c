/* A stand-in for libcuda.so.1 that runs nothing: it records the driver calls a stencil call
 * makes (tests/backends/cuda/test_cuda_call_overhead.py), so the GPU call path's host work can be counted
 * on a machine without a GPU. Device memory is host memory; kernels are never executed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static char log_buf[1 << 16];
static size_t log_len;
static int fake_handle;

static CUresult note(const char *what, unsigned long long arg) {
    int n = snprintf(log_buf + log_len, sizeof log_buf - log_len, "%s %llx\n", what, arg);
    if (n > 0 && log_len + (size_t)n < sizeof log_buf) log_len += (size_t)n;
    return 0;
}

const char *fake_log(void) { return log_buf; }
void fake_clear(void) { log_len = 0; log_buf[0] = 0; }

CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake error"; return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) { (void)d; *v = attr == 75 ? 8 : 0; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &fake_handle; return 0; }
CUresult cuCtxSetCurrent(void *c) { (void)c; return 0; }
CUresult cuCtxSynchronize(void) { return note("cuCtxSynchronize", 0); }
CUresult cuModuleLoadData(void **m, const void *img) { (void)img; *m = &fake_handle; return 0; }
CUresult cuModuleUnload(void *m) { (void)m; return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { (void)m; (void)name; *f = &fake_handle; return 0; }
CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
    void *m = calloc(1, n);
    *p = (unsigned long long)(size_t)m;
    note("cuMemAlloc", n);
    return m ? 0 : 2;
}
CUresult cuMemFree_v2(unsigned long long p) { free((void *)(size_t)p); return note("cuMemFree", 0); }
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n) { memcpy((void *)(size_t)d, s, n); return note("cuMemcpyHtoD", n); }
CUresult cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n) { memcpy(d, (void *)(size_t)s, n); return note("cuMemcpyDtoH", n); }
CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void *s, size_t n, void *st) {
    (void)st; memcpy((void *)(size_t)d, s, n); return note("cuMemcpyHtoDAsync", n);
}
CUresult cuMemcpyDtoHAsync_v2(void *d, unsigned long long s, size_t n, void *st) {
    (void)st; memcpy(d, (void *)(size_t)s, n); return note("cuMemcpyDtoHAsync", n);
}
CUresult cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s, size_t n, void *st) {
    (void)st; memcpy((void *)(size_t)d, (void *)(size_t)s, n); return note("cuMemcpyDtoDAsync", n);
}
CUresult cuStreamSynchronize(void *s) { return note("cuStreamSynchronize", (unsigned long long)(size_t)s); }
CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = &fake_handle; return note("cuEventCreate", 0); }
CUresult cuEventRecord(void *e, void *s) { (void)e; return note("cuEventRecord", (unsigned long long)(size_t)s); }
CUresult cuEventDestroy_v2(void *e) { (void)e; return note("cuEventDestroy", 0); }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { (void)e; (void)f; return note("cuStreamWaitEvent", (unsigned long long)(size_t)s); }
/* What a "kernel" does (fake_on_launch): writes `note` into the word `word` of the scalar
 * block (the kernels' fourth argument), as a kernel noting a checked K level outside the
 * allowed ones does, and overwrites `n` bytes at `scribble` with 0x5a, as a kernel writing. */
static long long launch_note;
static size_t launch_word, launch_n;
static unsigned char *launch_scribble;
void fake_on_launch(long long note, size_t word, void *scribble, size_t n) {
    launch_note = note, launch_word = word, launch_scribble = scribble, launch_n = n;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *s, void **params, void **extra) {
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)smem; (void)extra;
    if (launch_note) memcpy((long long *)(size_t)*(unsigned long long *)params[3] + launch_word, &launch_note, 8);
    if (launch_scribble) memset(launch_scribble, 0x5a, launch_n);
    return note("cuLaunchKernel", (unsigned long long)(size_t)s);
}
