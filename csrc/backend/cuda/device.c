/* The CUDA driver API through dlopen, and the host emulation: see device.h. The driver
 * entry points are declared here with the driver API's documented C signatures. */
#include "backend/cuda/device.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult; /* CUDA_SUCCESS == 0 */
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;

enum { CUDA_ERROR_STUB_LIBRARY = 34, CUDA_ERROR_NO_DEVICE = 100 };
enum { CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };

static struct {
    bool loaded, inited;
    CUcontext ctx;
    CUdevice dev;
    CUresult (*Init)(unsigned);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*MemAlloc)(DevPtr *, size_t);
    CUresult (*MemFree)(DevPtr);
    CUresult (*MemcpyHtoD)(DevPtr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, DevPtr, size_t);
    CUresult (*MemcpyHtoDAsync)(DevPtr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, DevPtr, size_t, CUstream);
    CUresult (*MemcpyDtoDAsync)(DevPtr, DevPtr, size_t, CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
} D;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *cu_error(CUresult r) {
    const char *s = NULL;
    if (D.GetErrorString && D.GetErrorString(r, &s) == 0 && s) return s;
    return "unknown CUDA error";
}

static bool cu_check(CUresult r, const char *what, char *err, size_t errlen) {
    if (r == 0) return true;
    snprintf(err, errlen, "%s failed: %s (CUDA error %d)", what, cu_error(r), r);
    return false;
}

static bool cu_bind(void *h, char *err, size_t errlen) {
#define SYM(field, name)                                                                           \
    if ((*(void **)&D.field = dlsym(h, name)) == NULL) {                                           \
        snprintf(err, errlen, "libcuda.so.1 lacks %s", name);                                      \
        return false;                                                                              \
    }
    SYM(Init, "cuInit");
    SYM(GetErrorString, "cuGetErrorString");
    SYM(DeviceGet, "cuDeviceGet");
    SYM(DeviceGetCount, "cuDeviceGetCount");
    SYM(DeviceGetAttribute, "cuDeviceGetAttribute");
    SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    SYM(CtxSetCurrent, "cuCtxSetCurrent");
    SYM(CtxSynchronize, "cuCtxSynchronize");
    SYM(ModuleLoadData, "cuModuleLoadData");
    SYM(ModuleUnload, "cuModuleUnload");
    SYM(ModuleGetFunction, "cuModuleGetFunction");
    SYM(MemAlloc, "cuMemAlloc_v2");
    SYM(MemFree, "cuMemFree_v2");
    SYM(MemcpyHtoD, "cuMemcpyHtoD_v2");
    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
    SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    SYM(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    SYM(StreamSynchronize, "cuStreamSynchronize");
    SYM(EventCreate, "cuEventCreate");
    SYM(EventRecord, "cuEventRecord");
    SYM(EventDestroy, "cuEventDestroy_v2");
    SYM(StreamWaitEvent, "cuStreamWaitEvent");
    SYM(LaunchKernel, "cuLaunchKernel");
#undef SYM
    return true;
}

static bool cu_init_locked(char *err, size_t errlen) {
    if (D.inited) return true;
    if (!D.loaded) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
        if (h == NULL) {
            snprintf(err, errlen, "no GPU: the CUDA driver (libcuda.so.1) was not found (%s)", dlerror());
            return false;
        }
        if (!cu_bind(h, err, errlen)) return false;
        D.loaded = true;
    }
    CUresult r = D.Init(0);
    if (r == CUDA_ERROR_STUB_LIBRARY || r == CUDA_ERROR_NO_DEVICE) {
        snprintf(err, errlen, "no GPU: cuInit returned %d (%s)", r,
                 r == CUDA_ERROR_STUB_LIBRARY ? "CUDA_ERROR_STUB_LIBRARY: only the toolkit's stub driver is installed"
                                              : "CUDA_ERROR_NO_DEVICE");
        return false;
    }
    int count = 0;
    if (!cu_check(r, "cuInit", err, errlen) || !cu_check(D.DeviceGetCount(&count), "cuDeviceGetCount", err, errlen))
        return false;
    if (count == 0) {
        snprintf(err, errlen, "no GPU: the CUDA driver reports no device");
        return false;
    }
    if (!cu_check(D.DeviceGet(&D.dev, 0), "cuDeviceGet", err, errlen) ||
        !cu_check(D.PrimaryCtxRetain(&D.ctx, D.dev), "cuDevicePrimaryCtxRetain", err, errlen))
        return false;
    D.inited = true;
    return true;
}

bool cu_init(char *err, size_t errlen) {
    pthread_mutex_lock(&init_lock);
    bool ok = cu_init_locked(err, errlen);
    pthread_mutex_unlock(&init_lock);
    return ok;
}

bool cu_device_arch(char *arch, size_t n, char *err, size_t errlen) {
    int major = 0, minor = 0;
    if (!D.inited || !cu_check(D.DeviceGetAttribute(&major, CU_ATTR_CC_MAJOR, D.dev), "cuDeviceGetAttribute", err, errlen) ||
        !cu_check(D.DeviceGetAttribute(&minor, CU_ATTR_CC_MINOR, D.dev), "cuDeviceGetAttribute", err, errlen))
        return false;
    snprintf(arch, n, "sm_%d%d", major, minor);
    return true;
}

/* Every driver call of a thread needs the context current on that thread. */
static bool cu_current(char *err, size_t errlen) {
    return cu_check(D.CtxSetCurrent(D.ctx), "cuCtxSetCurrent", err, errlen);
}

/* ---- runtime: loading ---------------------------------------------------------------- */

bool rt_load_cubin(CudaRuntime *rt, const void *cubin, const char *const *names, int n, char *err, size_t errlen) {
    memset(rt, 0, sizeof *rt);
    if (!cu_init(err, errlen) || !cu_current(err, errlen)) return false;
    rt->fn = calloc((size_t)n + 1, sizeof *rt->fn);
    if (rt->fn == NULL) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    rt->nfn = n;
    if (!cu_check(D.ModuleLoadData((CUmodule *)&rt->handle, cubin), "cuModuleLoadData", err, errlen)) goto fail;
    for (int k = 0; k < n; k++)
        if (!cu_check(D.ModuleGetFunction((CUfunction *)&rt->fn[k], rt->handle, names[k]), "cuModuleGetFunction",
                      err, errlen))
            goto fail;
    return true;
fail:
    rt_unload(rt);
    return false;
}

bool rt_load_emulation(CudaRuntime *rt, const char *path, const char *const *names, int n, char *err, size_t errlen) {
    memset(rt, 0, sizeof *rt);
    rt->emulated = true;
    rt->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (rt->handle == NULL) {
        snprintf(err, errlen, "cannot load the emulation library %s: %s", path, dlerror());
        return false;
    }
    rt->fn = calloc((size_t)n + 1, sizeof *rt->fn);
    rt->nfn = n;
    rt->launcher = dlsym(rt->handle, "gt_emu_launch");
    rt->stream_log = dlsym(rt->handle, "gt_emu_last_stream"); /* optional */
    if (rt->fn == NULL || rt->launcher == NULL) {
        snprintf(err, errlen, "%s has no gt_emu_launch (was it built with the emulation header?)", path);
        goto fail;
    }
    for (int k = 0; k < n; k++)
        if ((rt->fn[k] = dlsym(rt->handle, names[k])) == NULL) {
            snprintf(err, errlen, "%s has no kernel %s", path, names[k]);
            goto fail;
        }
    return true;
fail:
    rt_unload(rt);
    return false;
}

void rt_unload(CudaRuntime *rt) {
    if (rt->handle) {
        if (rt->emulated) dlclose(rt->handle);
        else if (D.inited) D.ModuleUnload(rt->handle);
    }
    free(rt->fn);
    memset(rt, 0, sizeof *rt);
}

/* ---- runtime: memory and launches ------------------------------------------------------ */

bool rt_alloc(const CudaRuntime *rt, size_t bytes, DevPtr *p, char *err, size_t errlen) {
    if (bytes == 0) bytes = 16;
    if (rt->emulated) {
        void *m = NULL;
        if (posix_memalign(&m, 64, bytes) != 0) {
            snprintf(err, errlen, "out of memory (%zu bytes)", bytes);
            return false;
        }
        memset(m, 0xff, bytes); /* NaN-filled: reading unwritten memory shows */
        *p = (DevPtr)(uintptr_t)m;
        return true;
    }
    return cu_current(err, errlen) && cu_check(D.MemAlloc(p, bytes), "cuMemAlloc", err, errlen);
}

void rt_free(const CudaRuntime *rt, DevPtr p) {
    if (p == 0) return;
    if (rt->emulated) free((void *)(uintptr_t)p);
    else D.MemFree(p);
}

bool rt_h2d(const CudaRuntime *rt, DevPtr dst, const void *src, size_t n, DevStream stream, char *err,
            size_t errlen) {
    if (rt->emulated) {
        memcpy((void *)(uintptr_t)dst, src, n);
        return true;
    }
    return cu_current(err, errlen) &&
           cu_check(D.MemcpyHtoDAsync(dst, src, n, (CUstream)(uintptr_t)stream), "cuMemcpyHtoDAsync", err, errlen);
}

bool rt_d2h(const CudaRuntime *rt, void *dst, DevPtr src, size_t n, DevStream stream, char *err, size_t errlen) {
    if (rt->emulated) {
        memcpy(dst, (const void *)(uintptr_t)src, n);
        return true;
    }
    return cu_current(err, errlen) &&
           cu_check(D.MemcpyDtoHAsync(dst, src, n, (CUstream)(uintptr_t)stream), "cuMemcpyDtoHAsync", err, errlen);
}

bool rt_d2d(const CudaRuntime *rt, DevPtr dst, DevPtr src, size_t n, DevStream stream, char *err, size_t errlen) {
    if (rt->emulated) {
        memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
        return true;
    }
    return cu_current(err, errlen) &&
           cu_check(D.MemcpyDtoDAsync(dst, src, n, (CUstream)(uintptr_t)stream), "cuMemcpyDtoDAsync", err, errlen);
}

typedef void (*EmuKernel)(char *const *, const long long *, const long long *, const char *, long long, long long);
typedef int (*EmuLaunch)(EmuKernel, const unsigned *, const unsigned *, size_t, char *const *, const long long *,
                         const long long *, const char *, long long, long long);

bool rt_launch(const CudaRuntime *rt, int k, const unsigned grid[3], const unsigned block[3], size_t smem,
               const DevPtr args[4], long long klo, long long khi, DevStream stream, char *err, size_t errlen) {
    if (rt->emulated) {
        if (rt->stream_log) *(unsigned long long *)rt->stream_log = stream;
        EmuLaunch launch;
        *(void **)&launch = rt->launcher;
        EmuKernel kern;
        *(void **)&kern = rt->fn[k];
        int r = launch(kern, grid, block, smem, (char *const *)(uintptr_t)args[0], (const long long *)(uintptr_t)args[1],
                       (const long long *)(uintptr_t)args[2], (const char *)(uintptr_t)args[3], klo, khi);
        if (r != 0) snprintf(err, errlen, "the emulated launch failed (code %d)", r);
        return r == 0;
    }
    DevPtr a0 = args[0], a1 = args[1], a2 = args[2], a3 = args[3];
    void *params[6] = {&a0, &a1, &a2, &a3, &klo, &khi};
    return cu_current(err, errlen) &&
           cu_check(D.LaunchKernel(rt->fn[k], grid[0], grid[1], grid[2], block[0], block[1], block[2], (unsigned)smem,
                                   (CUstream)(uintptr_t)stream, params, NULL),
                    "cuLaunchKernel", err, errlen);
}

bool rt_sync(const CudaRuntime *rt, char *err, size_t errlen) {
    if (rt->emulated) return true;
    return cu_current(err, errlen) && cu_check(D.CtxSynchronize(), "cuCtxSynchronize", err, errlen);
}

bool rt_sync_stream(const CudaRuntime *rt, DevStream stream, char *err, size_t errlen) {
    if (rt->emulated) return true;
    return cu_current(err, errlen) &&
           cu_check(D.StreamSynchronize((CUstream)(uintptr_t)stream), "cuStreamSynchronize", err, errlen);
}

bool rt_stream_wait(const CudaRuntime *rt, DevStream producer, DevStream consumer, char *err, size_t errlen) {
    if (rt->emulated) return true;
    enum { CU_EVENT_DISABLE_TIMING = 2 };
    CUevent ev = NULL;
    if (!cu_current(err, errlen) ||
        !cu_check(D.EventCreate(&ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate", err, errlen))
        return false;
    /* an event per wait: a shared one could be re-recorded by a concurrent call in between */
    bool ok = cu_check(D.EventRecord(ev, (CUstream)(uintptr_t)producer), "cuEventRecord", err, errlen) &&
              cu_check(D.StreamWaitEvent((CUstream)(uintptr_t)consumer, ev, 0), "cuStreamWaitEvent", err, errlen);
    D.EventDestroy(ev); /* released once the recorded work completes */
    return ok;
}
