/*
 * The cuda backend's part of a compiled stencil: the CUDA C source (what NVRTC compiled
 * and what source() returns), the cubin for the target arch (from the module cache, so
 * NVRTC runs only on a miss), and the loaded kernels.
 * Building needs NVRTC only; the kernels are loaded on the first call, which needs a GPU
 * (or the host emulation the tests install with _cuda_emulate()).
 */
#ifndef GT_MODULE_CUDA_H
#define GT_MODULE_CUDA_H

#include <pthread.h>

#include "backend/cuda/cudagen.h"
#include "backend/cuda/device.h"
#include "module.h"

/* Device buffers kept from one call to the next, so that a call on GPU arrays allocates
 * nothing: cuMemAlloc costs microseconds and cuMemFree may synchronise the device. One call
 * at a time uses them (lock, taken with trylock: a concurrent call allocates its own). */
typedef struct CudaScratch {
    pthread_mutex_t lock;
    DevPtr args;         /* the kernels' argument block */
    size_t argscap;
    char *last;          /* the bytes last copied into it: an identical block is not copied again */
    size_t lastlen;
    DevPtr *slab;        /* per temporary: its global slabs */
    size_t *slabcap;
    int nslab;
} CudaScratch;

typedef struct CudaModule {
    CudaProgram prog;
    char arch[32];
    char *cubin;
    size_t cubinlen;
    int block[2]; /* threads along the unit-stride axis, along the other */
    CudaRuntime rt;
    bool rt_ready;
    pthread_mutex_t lock; /* guards loading rt */
    CudaScratch scratch;
} CudaModule;

/* Takes the module's scratch buffers for one call (false: another call holds them). */
bool cuda_scratch_take(CudaModule *c);
void cuda_scratch_give(CudaModule *c);
/* A device buffer of at least `need` bytes in *p (capacity *cap), reallocated when smaller. */
bool cuda_scratch_fit(const CudaRuntime *rt, DevPtr *p, size_t *cap, size_t need, char *err, size_t errlen);

/* Generates the source and compiles it; false with a Python exception set. */
bool cuda_build(ModuleObject *m, PyObject *options);
void cuda_module_free(CudaModule *c);

/* The runtime, loading the cubin on first use; NULL with a Python exception set. */
const CudaRuntime *cuda_runtime(ModuleObject *m);

/* Module methods: _cuda_ptx(arch) -> PTX text; _cuda_emulate(path, block_size=None) runs
 * later calls on the host emulation library at path (with that block shape: the kernels
 * take any); _cuda_info() -> dict of the plan (kernels, storage). */
PyObject *cuda_method_ptx(ModuleObject *m, PyObject *arch);
PyObject *cuda_method_emulate(ModuleObject *m, PyObject *args);
PyObject *cuda_method_info(ModuleObject *m, PyObject *unused);
/* _core.nvrtc(): NVRTC's version ("13.0"), loading it if needed; RuntimeError saying where it
 * was looked for when it is not found (python -m gtscript info). */
PyObject *cuda_nvrtc(PyObject *self, PyObject *unused);

#endif
