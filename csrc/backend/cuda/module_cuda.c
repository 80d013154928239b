/* Building a stencil for the cuda backend: source, NVRTC, the cubin; see module_cuda.h. */
#include "backend/cuda/module_cuda.h"

#include <ctype.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/nvrtc.h"
#include "cache/cache.h"

/* site-packages/nvidia/<component>/lib for every sys.path entry: where the
 * nvidia-cuda-nvrtc wheel puts libnvrtc (nvidia/cu13/lib, nvidia/cuda_nvrtc/lib, ...). */
static bool load_nvrtc(char *err, size_t errlen) {
    enum { MAXDIRS = 64 };
    char *dirs[MAXDIRS];
    int n = 0;
    PyObject *path = PySys_GetObject("path"); /* borrowed */
    for (Py_ssize_t i = 0; path && PyList_Check(path) && i < PyList_GET_SIZE(path) && n < MAXDIRS; i++) {
        PyObject *e = PyList_GET_ITEM(path, i);
        const char *s = PyUnicode_Check(e) ? PyUnicode_AsUTF8(e) : NULL;
        if (s == NULL) {
            PyErr_Clear();
            continue;
        }
        char pattern[4096];
        snprintf(pattern, sizeof pattern, "%s/nvidia/*/lib", s[0] ? s : ".");
        glob_t g;
        if (glob(pattern, 0, NULL, &g) == 0)
            for (size_t k = 0; k < g.gl_pathc && n < MAXDIRS; k++) dirs[n] = strdup(g.gl_pathv[k]), n += dirs[n] != NULL;
        globfree(&g);
    }
    bool ok = nvrtc_load((const char *const *)dirs, n, err, errlen);
    for (int i = 0; i < n; i++) free(dirs[i]);
    return ok;
}

PyObject *cuda_nvrtc(PyObject *self, PyObject *unused) {
    char err[1024];
    if (!load_nvrtc(err, sizeof err)) {
        PyErr_SetString(PyExc_RuntimeError, err);
        return NULL;
    }
    return PyUnicode_FromString(nvrtc_version());
}

/* sm_XY, sm_XYZ, optionally with an a/f suffix. */
static bool valid_arch(const char *s) {
    if (strncmp(s, "sm_", 3) != 0) return false;
    int digits = 0;
    for (s += 3; isdigit((unsigned char)*s); s++) digits++;
    if (*s == 'a' || *s == 'f') s++;
    return digits >= 2 && digits <= 3 && *s == '\0';
}

/* The detected GPU's arch, else the gpu_arch option, else $GTSCRIPT_GPU_ARCH, else sm_90. */
static bool choose_arch(PyObject *options, char *arch, size_t n) {
    char err[256];
    if (cu_init(err, sizeof err) && cu_device_arch(arch, n, err, sizeof err)) return true;
    PyObject *o = options ? PyDict_GetItemString(options, "gpu_arch") : NULL;
    const char *env = getenv("GTSCRIPT_GPU_ARCH");
    const char *a = "sm_90", *what = NULL;
    if (o && o != Py_None) {
        if (!PyUnicode_Check(o)) {
            PyErr_SetString(PyExc_TypeError, "gpu_arch must be a string such as 'sm_90'");
            return false;
        }
        what = "gpu_arch";
        if ((a = PyUnicode_AsUTF8(o)) == NULL) { /* a lone surrogate: not an architecture */
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "gpu_arch must name a GPU architecture such as "
                                           "'sm_80' or 'sm_90' (got %R)", o);
            return false;
        }
    } else if (env && env[0]) {
        a = env;
        what = "GTSCRIPT_GPU_ARCH";
    }
    if (a == NULL) return false;
    if (!valid_arch(a)) {
        PyErr_Format(PyExc_ValueError, "%s must name a GPU architecture such as 'sm_80' or 'sm_90' (got '%s')", what, a);
        return false;
    }
    snprintf(arch, n, "%s", a);
    return true;
}

static bool parse_block(PyObject *options, int block[2]) {
    block[0] = 32;
    block[1] = 8;
    PyObject *o = options ? PyDict_GetItemString(options, "block_size") : NULL;
    if (o == NULL || o == Py_None) return true;
    PyObject *seq = PySequence_Fast(o, "block_size must be a pair of integers");
    bool ok = seq && PySequence_Fast_GET_SIZE(seq) == 2;
    for (int a = 0; ok && a < 2; a++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, a));
        ok = !(v == -1 && PyErr_Occurred()) && v >= 1 && v <= 1024;
        block[a] = (int)v;
    }
    Py_XDECREF(seq);
    if (!ok || block[0] * block[1] > 1024) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError,
                        "block_size must be (threads along the unit-stride axis, threads along the other), "
                        "each at least 1, at most 1024 threads in all");
        return false;
    }
    return true;
}

/* A cache miss: NVRTC compiles the generated source into a cubin (CacheBuildFn). */
static bool build_cubin(void *ctx, char **obj, size_t *objlen, char **source) {
    ModuleObject *m = ctx;
    CudaModule *c = m->cuda;
    char err[8192] = "";
    bool ok;
    Py_BEGIN_ALLOW_THREADS ok = nvrtc_compile(c->prog.source, m->st->name, c->arch, obj, objlen, err, sizeof err);
    Py_END_ALLOW_THREADS if (!ok) {
        PyErr_Format(PyExc_RuntimeError, "building stencil '%s' for the cuda backend failed: %s", m->st->name, err);
        return false;
    }
    if ((*source = strdup(c->prog.source)) == NULL) {
        free(*obj);
        *obj = NULL;
        PyErr_NoMemory();
        return false;
    }
    return true;
}

/* The cubin of the key from memory, disk or NVRTC. */
static bool obtain_cubin(ModuleObject *m, const char *target, bool rebuild) {
    CudaModule *c = m->cuda;
    CacheRequest rq = {.key = m->cache_key, .backend = "cuda", .target = target, .st = m->st,
                       .format = &cache_format_cuda};
    CacheEntry *e = cache_obtain(&rq, rebuild, build_cubin, m, &m->origin_of_code);
    if (e == NULL) return false;
    c->cubin = malloc(e->objlen ? e->objlen : 1);
    if (c->cubin) memcpy(c->cubin, e->object, e->objlen);
    c->cubinlen = c->cubin ? e->objlen : 0;
    cache_entry_unref(e); /* the memory level keeps its own reference */
    if (c->cubin == NULL) PyErr_NoMemory();
    return c->cubin != NULL;
}

bool cuda_build(ModuleObject *m, PyObject *options) {
    char err[8192] = "";
    CudaModule *c = calloc(1, sizeof *c);
    if (c == NULL) {
        PyErr_NoMemory();
        return false;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->scratch.lock, NULL);
    m->cuda = c;
    c->scratch.nslab = m->st->ntemps;
    c->scratch.slab = calloc((size_t)m->st->ntemps + 1, sizeof *c->scratch.slab);
    c->scratch.slabcap = calloc((size_t)m->st->ntemps + 1, sizeof *c->scratch.slabcap);
    if (c->scratch.slab == NULL || c->scratch.slabcap == NULL) {
        PyErr_NoMemory();
        return false;
    }
    if (!load_nvrtc(err, sizeof err)) {
        PyErr_Format(PyExc_RuntimeError, "the cuda backend needs NVRTC: %s", err);
        return false;
    }
    if (!parse_block(options, c->block) || !choose_arch(options, c->arch, sizeof c->arch)) return false;
    /* Generation is cheap and always runs: the call path needs its plan. The source also names
     * the kernels and variables after the stencil and its temporaries, which the canonical IR
     * leaves out, so its hash joins the key: a cached cubin always has the kernels this
     * source declares, and source() on a hit is exactly what NVRTC compiled. */
    if (!cuda_generate(m->st, c->block[0], c->block[1], &c->prog, err, sizeof err)) {
        PyErr_Format(PyExc_RuntimeError, "generating CUDA code for stencil '%s' failed: %s", m->st->name, err);
        return false;
    }
    char source_hash[CACHE_HEX_LEN + 1], target[192];
    if (!cache_sha256_hex(c->prog.source, strlen(c->prog.source), source_hash)) return false;
    snprintf(target, sizeof target, "cuda/%s/nvrtc-%s/block-%dx%d/source-%s", c->arch, nvrtc_version(), c->block[0],
             c->block[1], source_hash);
    if (!cache_key(m->st, "cuda", target, options, m->cache_key)) return false;
    PyObject *rb = options ? PyDict_GetItemString(options, "rebuild") : NULL;
    int rebuild = rb ? PyObject_IsTrue(rb) : 0;
    return rebuild >= 0 && obtain_cubin(m, target, rebuild);
}

/* Frees the scratch buffers (allocated by c->rt); the caller holds the scratch lock or
 * is the module's last user. */
static void scratch_drop(CudaModule *c) {
    CudaScratch *s = &c->scratch;
    if (c->rt_ready) {
        rt_free(&c->rt, s->args);
        for (int t = 0; s->slab && t < s->nslab; t++) rt_free(&c->rt, s->slab[t]);
    }
    s->args = 0;
    s->argscap = 0;
    s->lastlen = 0;
    for (int t = 0; s->slab && t < s->nslab; t++) {
        s->slab[t] = 0;
        s->slabcap[t] = 0;
    }
}

bool cuda_scratch_take(CudaModule *c) {
    return pthread_mutex_trylock(&c->scratch.lock) == 0;
}

void cuda_scratch_give(CudaModule *c) {
    pthread_mutex_unlock(&c->scratch.lock);
}

bool cuda_scratch_fit(const CudaRuntime *rt, DevPtr *p, size_t *cap, size_t need, char *err, size_t errlen) {
    if (*p && *cap >= need) return true;
    rt_free(rt, *p);
    *p = 0;
    *cap = 0;
    if (!rt_alloc(rt, need, p, err, errlen)) return false;
    *cap = need;
    return true;
}

void cuda_module_free(CudaModule *c) {
    if (c == NULL) return;
    scratch_drop(c);
    free(c->scratch.slab);
    free(c->scratch.slabcap);
    free(c->scratch.last);
    pthread_mutex_destroy(&c->scratch.lock);
    rt_unload(&c->rt);
    cuda_program_free(&c->prog);
    free(c->cubin);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static const char **kernel_names(const CudaModule *c) {
    const char **names = calloc((size_t)c->prog.nkernels + 1, sizeof *names);
    for (int k = 0; names && k < c->prog.nkernels; k++) names[k] = c->prog.kernels[k].name;
    return names;
}

const CudaRuntime *cuda_runtime(ModuleObject *m) {
    CudaModule *c = m->cuda;
    char err[1024] = "";
    bool ok = true;
    pthread_mutex_lock(&c->lock);
    if (!c->rt_ready) {
        const char **names = kernel_names(c);
        ok = names && rt_load_cubin(&c->rt, c->cubin, names, c->prog.nkernels, err, sizeof err);
        if (names == NULL) snprintf(err, sizeof err, "out of memory");
        free(names);
        c->rt_ready = ok;
    }
    pthread_mutex_unlock(&c->lock);
    if (!ok) {
        PyErr_Format(PyExc_RuntimeError, "cannot run stencil '%s' on the cuda backend (%s): %s", m->st->name,
                     c->arch, err);
        return NULL;
    }
    return &c->rt;
}

PyObject *cuda_method_ptx(ModuleObject *m, PyObject *arch) {
    if (m->cuda == NULL) {
        PyErr_SetString(PyExc_ValueError, "only cuda stencils have PTX");
        return NULL;
    }
    const char *a = PyUnicode_Check(arch) ? PyUnicode_AsUTF8(arch) : NULL;
    if (a == NULL || !valid_arch(a)) {
        PyErr_SetString(PyExc_ValueError, "arch must name a GPU architecture such as 'sm_80'");
        return NULL;
    }
    char virt[40], err[8192] = "";
    snprintf(virt, sizeof virt, "compute_%s", a + 3);
    char *ptx = NULL;
    size_t n = 0;
    bool ok;
    Py_BEGIN_ALLOW_THREADS ok = nvrtc_compile(m->cuda->prog.source, m->st->name, virt, &ptx, &n, err, sizeof err);
    Py_END_ALLOW_THREADS if (!ok) {
        PyErr_Format(PyExc_RuntimeError, "NVRTC failed for %s: %s", virt, err);
        return NULL;
    }
    PyObject *r = PyUnicode_FromStringAndSize(ptx, (Py_ssize_t)(n && ptx[n - 1] == '\0' ? n - 1 : n));
    free(ptx);
    return r;
}

PyObject *cuda_method_emulate(ModuleObject *m, PyObject *args) {
    PyObject *path, *block = Py_None;
    if (!PyArg_ParseTuple(args, "O|O", &path, &block)) return NULL;
    if (m->cuda == NULL) {
        PyErr_SetString(PyExc_ValueError, "only cuda stencils can run on the host emulation");
        return NULL;
    }
    CudaModule *c = m->cuda;
    int shape[2];
    PyObject *opts = block == Py_None ? NULL : Py_BuildValue("{s:O}", "block_size", block);
    if ((block != Py_None && opts == NULL) || !parse_block(opts, shape)) {
        Py_XDECREF(opts);
        return NULL;
    }
    Py_XDECREF(opts);
    for (int k = 0; block != Py_None && k < c->prog.nkernels; k++)
        if (cuda_smem_bytes(m->st, &c->prog, k, shape[0], shape[1]) > GT_CUDA_SMEM_LIMIT) {
            PyErr_SetString(PyExc_ValueError, "block_size: the shared memory tiles would exceed 48 KiB");
            return NULL;
        }
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(path, &bytes)) return NULL;
    char err[1024] = "";
    const char **names = kernel_names(c);
    CudaRuntime rt;
    bool ok = names && rt_load_emulation(&rt, PyBytes_AS_STRING(bytes), names, c->prog.nkernels, err, sizeof err);
    free(names);
    Py_DECREF(bytes);
    if (!ok) {
        PyErr_Format(PyExc_RuntimeError, "%s", names ? err : "out of memory");
        return NULL;
    }
    pthread_mutex_lock(&c->lock);
    pthread_mutex_lock(&c->scratch.lock); /* its buffers belong to the runtime replaced here */
    scratch_drop(c);
    pthread_mutex_unlock(&c->scratch.lock);
    rt_unload(&c->rt);
    c->rt = rt;
    c->rt_ready = true;
    if (block != Py_None) memcpy(c->block, shape, sizeof shape);
    pthread_mutex_unlock(&c->lock);
    Py_RETURN_NONE;
}

PyObject *cuda_method_info(ModuleObject *m, PyObject *unused) {
    if (m->cuda == NULL) {
        PyErr_SetString(PyExc_ValueError, "only cuda stencils have a kernel plan");
        return NULL;
    }
    const CudaModule *c = m->cuda;
    const Stencil *st = m->st;
    static const char *const kinds[] = {"unused", "register", "shared", "global"};
    PyObject *kernels = PyList_New(0), *storage = PyDict_New(), *r = NULL;
    if (kernels == NULL || storage == NULL) goto done;
    for (int k = 0; k < c->prog.nkernels; k++) {
        const CudaKernel *K = &c->prog.kernels[k];
        PyObject *d = Py_BuildValue("{s:s,s:i,s:O,s:O,s:n}", "name", K->name, "computation", K->comp, "per_level",
                                    K->per_level ? Py_True : Py_False, "k_chunks", K->kchunks ? Py_True : Py_False,
                                    "shared_bytes",
                                    (Py_ssize_t)cuda_smem_bytes(st, &c->prog, k, c->block[0], c->block[1]));
        if (d == NULL || PyList_Append(kernels, d) < 0) {
            Py_XDECREF(d);
            goto done;
        }
        Py_DECREF(d);
    }
    for (int t = 0; t < st->ntemps; t++) {
        PyObject *v = PyUnicode_FromString(kinds[c->prog.storage[t]]);
        if (v == NULL || PyDict_SetItemString(storage, st->temps[t]->name, v) < 0) {
            Py_XDECREF(v);
            goto done;
        }
        Py_DECREF(v);
    }
    r = Py_BuildValue("{s:O,s:O,s:s,s:(ii),s:s,s:l}", "kernels", kernels, "storage", storage, "arch", c->arch,
                      "block", c->block[0], c->block[1], "nvrtc", nvrtc_version(), "nvrtc_compiles_in_process",
                      nvrtc_compile_count());
done:
    Py_XDECREF(kernels);
    Py_XDECREF(storage);
    return r;
}
