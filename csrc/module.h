/* The compiled-stencil object shared by module.c (build, inspection) and call/ (calls). */
#ifndef GT_MODULE_H
#define GT_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "backend/cpu/codegen.h"
#include "backend/cpu/jit.h"
#include "ir/ir.h"

typedef enum { BACKEND_CPU, BACKEND_NUMPY, BACKEND_CUDA } Backend;

typedef struct ModuleObject {
    PyObject_HEAD
    Stencil *st;     /* analysed IR; owns every IR node */
    Backend backend;
    struct CacheEntry *code; /* cpu: the loaded object (layout class LAYOUT_K_UNIT), shared
                                through the module cache (cache/memory.h) */
    char cache_key[65];      /* hex SHA-256 (cache/key.h) */
    GtKernelFn kernel;
    /* the other kernel variants (codegen.h), compiled on the first call that needs them */
    struct CacheEntry *variant_code[CPU_VARIANT_COUNT]; /* cached like `code` (cache/cache.h) */
    GtKernelFn variant[CPU_VARIANT_COUNT];
    char *passes;    /* the build's LLVM pipeline (NULL: the default), for those builds */
    double build_seconds;
    /* build_seconds by phase (build_info, docs/performance.md): lowering of the definition
     * tree, analysis, and for a cpu build LLVM IR, optimisation and code generation; `load`
     * is the rest (cache key, cache lookup, loading the object), so they add up. */
    double lower_seconds, analysis_seconds, ir_seconds, optimise_seconds, object_seconds;
    int llvm_functions, llvm_cheap_functions; /* a fresh cpu build: its functions, and how many
                                                 went over the optimisation budget */
    double llvm_start, llvm_end; /* a fresh cpu build: its LLVM part (time.perf_counter's clock) */
    const char *origin_of_code; /* "build", "memory" or "disk" */
    struct Plan *plan; /* call plan (tiling, temporaries) of the last domain; see call/plan.h */
    int plan_busy;     /* set while a call uses `plan` (other threads build their own) */
    struct TuneTable *tune; /* measured plans per domain (call/tune.h), made at the first call */
    struct CudaModule *cuda; /* cuda: source, cubin, loaded kernels (backend/cuda/module_cuda.h) */
    PyObject *defaults; /* {scalar name: default value} from the definition's signature, or NULL */
    PyObject *dict;  /* instance __dict__ (Python subclasses add attributes) */
    PyObject *weakrefs;
} ModuleObject;

extern PyTypeObject ModuleType;

/* The kernel of a variant, compiling it on first use; NULL with an exception set. */
GtKernelFn module_kernel(ModuleObject *m, CpuVariant variant);

#endif
