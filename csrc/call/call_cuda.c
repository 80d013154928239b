/*
 * Calling a cuda stencil. Binding and validation are the cpu call path's (bind_all); then:
 * - arrays exposing __cuda_array_interface__ (CuPy, PyTorch, Numba) are used in place,
 *   with their strides: they are bound as NumPy headers over the device memory, which
 *   bind_all validates like any array but nothing here dereferences on the host (the checks
 *   that read field values read host copies of those fields: check_on_host);
 * - NumPy arrays are copied to the device (overlapping arrays share one copy, so aliasing
 *   behaves as on the cpu) and the written ones copied back;
 * - the kernels are launched in order with the GIL released. The thread mapping follows
 *   the first written field's strides: threadIdx.x runs along its unit-stride axis;
 * - copies and launches are queued on the call's stream= (the default stream when None),
 *   which is synchronised before the call returns, whatever kind the arrays are.
 */
#include "call/call.h"
#include "call/unused.h"
#include "call/arrays.h"
#include "call/exec_info.h"
#include "call/kbounds.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL gtscript_ARRAY_API
#include <numpy/arrayobject.h>

#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "backend/cuda/module_cuda.h"

/* ---- device arrays ------------------------------------------------------------------ */

/* What a device array's producer asks of its consumer before use (the interface's
 * version 3 'stream' key): nothing ('stream': None), to order after the work queued on a
 * stream (an integer: 1 the legacy default stream, 2 the per-thread one, else a CUstream),
 * or, without the key (older producers say nothing), to wait for the whole context. */
typedef enum { SYNC_NONE, SYNC_STREAM, SYNC_CONTEXT } SyncKind;

static bool producer_stream(PyObject *cai, SyncKind *kind, DevStream *stream) {
    PyObject *s = PyDict_GetItemString(cai, "stream"); /* borrowed */
    *stream = 0;
    if (s == NULL) {
        *kind = SYNC_CONTEXT;
        return true;
    }
    if (s == Py_None) {
        *kind = SYNC_NONE;
        return true;
    }
    if (!PyLong_Check(s) || PyBool_Check(s)) return false;
    *stream = (DevStream)PyLong_AsUnsignedLongLong(s);
    *kind = SYNC_STREAM;
    return !PyErr_Occurred();
}

/* A NumPy header over the memory an object's __cuda_array_interface__ describes (a new
 * reference), the object itself (new reference) when it has none, NULL on error. */
static PyObject *device_view(PyObject *o, bool *is_device, SyncKind *kind, DevStream *producer) {
    *is_device = false;
    *kind = SYNC_NONE;
    if (PyArray_Check(o) || PyLong_Check(o) || PyFloat_Check(o)) return Py_NewRef(o);
    PyObject *cai = PyObject_GetAttrString(o, "__cuda_array_interface__");
    if (cai == NULL) {
        PyErr_Clear();
        return Py_NewRef(o);
    }
    PyObject *r = NULL, *shape = NULL, *strides = NULL, *data = NULL, *typestr = NULL, *mask = NULL;
    PyArray_Descr *descr = NULL;
    if (!PyDict_Check(cai)) goto bad;
    shape = PyDict_GetItemString(cai, "shape");
    strides = PyDict_GetItemString(cai, "strides");
    data = PyDict_GetItemString(cai, "data");
    typestr = PyDict_GetItemString(cai, "typestr");
    mask = PyDict_GetItemString(cai, "mask");
    if (!shape || !PyTuple_Check(shape) || !data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2 ||
        !typestr || (mask && mask != Py_None) || PyTuple_GET_SIZE(shape) > NPY_MAXDIMS)
        goto bad;
    int nd = (int)PyTuple_GET_SIZE(shape);
    npy_intp dims[NPY_MAXDIMS], st[NPY_MAXDIMS];
    bool have_strides = strides && strides != Py_None;
    if (have_strides && (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != nd)) goto bad;
    for (int d = 0; d < nd; d++) {
        dims[d] = (npy_intp)PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
        if (have_strides) st[d] = (npy_intp)PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, d));
    }
    if (!producer_stream(cai, kind, producer)) goto bad;
    void *ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    int readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    if (PyErr_Occurred() || readonly < 0 || !PyArray_DescrConverter(typestr, &descr)) goto bad;
    r = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, have_strides ? st : NULL, ptr,
                             readonly ? 0 : NPY_ARRAY_WRITEABLE, NULL);
    descr = NULL; /* stolen */
    if (r) *is_device = true;
    Py_DECREF(cai);
    return r;
bad:
    Py_XDECREF(descr);
    Py_DECREF(cai);
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "a %s argument has an invalid __cuda_array_interface__", Py_TYPE(o)->tp_name);
    return NULL;
}

typedef struct Views {
    PyObject *args, *kwargs; /* with device arrays replaced by their NumPy headers */
    PyObject *dev[GT_MAX_PARAMS]; /* the headers (borrowed from args/kwargs) */
    int ndev;
    DevStream wait[GT_MAX_PARAMS]; /* the producers' streams to order after, distinct */
    int nwait;
    bool sync_context; /* a producer that names no stream */
} Views;

static bool add_view(Views *v, PyObject *o, PyObject **out) {
    bool dev;
    SyncKind kind;
    DevStream producer;
    *out = device_view(o, &dev, &kind, &producer);
    if (*out == NULL || !dev || v->ndev >= GT_MAX_PARAMS) return *out != NULL;
    v->dev[v->ndev++] = *out;
    if (kind == SYNC_CONTEXT) v->sync_context = true;
    if (kind == SYNC_STREAM) {
        int i = 0;
        while (i < v->nwait && v->wait[i] != producer) i++;
        if (i == v->nwait) v->wait[v->nwait++] = producer;
    }
    return true;
}

/* Whether the argument for parameter `s` (NULL: no parameter, such as an option) is one the
 * stencil does not use: binding drops it (unused.h), so it is not viewed either, and its
 * producer's stream is not waited for. */
static bool unused_param(const Symbol *s) {
    return s != NULL && s->kind != SYM_TEMP && !param_used(s);
}

static bool make_views(Views *v, const Stencil *st, PyObject *args, PyObject *kwargs) {
    memset(v, 0, sizeof *v);
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if ((v->args = PyTuple_New(n)) == NULL) return false;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, i);
        if (i < st->nparams && unused_param(st->params[i])) o = Py_NewRef(o);
        else if (!add_view(v, o, &o)) return false;
        PyTuple_SET_ITEM(v->args, i, o);
    }
    if (kwargs == NULL) return true;
    if ((v->kwargs = PyDict_New()) == NULL) return false;
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &val)) {
        PyObject *o;
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (k == NULL) PyErr_Clear(); /* binding reports the key */
        if (k != NULL && unused_param(stencil_lookup(st, k))) o = Py_NewRef(val);
        else if (!add_view(v, val, &o)) return false;
        int r = PyDict_SetItem(v->kwargs, key, o);
        Py_DECREF(o);
        if (r < 0) return false;
    }
    return true;
}

/* ---- the stream ---------------------------------------------------------------------- */

static bool is_handle(PyObject *o) {
    return o == Py_None || (PyLong_Check(o) && !PyBool_Check(o));
}

/* The CUstream that stream= names: None (the default stream), an integer handle, or another
 * library's stream object: .ptr (CuPy), .handle (Numba: an int or a ctypes c_void_p, whose
 * .value is the handle), .cuda_stream (PyTorch). */
static bool stream_handle(PyObject *o, DevStream *out) {
    static const char *const attrs[] = {"ptr", "handle", "cuda_stream", "value"};
    PyObject *v = Py_NewRef(o);
    for (int depth = 0; depth < 3 && !is_handle(v); depth++) {
        PyObject *next = NULL;
        for (size_t a = 0; next == NULL && a < sizeof attrs / sizeof *attrs; a++) {
            next = PyObject_GetAttrString(v, attrs[a]);
            if (next == NULL && !PyErr_ExceptionMatches(PyExc_AttributeError)) goto fail;
            PyErr_Clear();
        }
        Py_DECREF(v);
        if ((v = next) == NULL) break;
    }
    if (v == NULL || !is_handle(v)) {
        PyErr_Format(PyExc_TypeError,
                     "stream must be None (the default stream), an integer CUstream handle, or a stream "
                     "object with .ptr or .handle (CuPy, Numba) or .cuda_stream (PyTorch), not %s",
                     Py_TYPE(o)->tp_name);
        goto fail;
    }
    *out = v == Py_None ? 0 : (DevStream)PyLong_AsUnsignedLongLong(v);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "stream must be a handle between 0 and 2**64 - 1");
        goto fail;
    }
    Py_DECREF(v);
    return true;
fail:
    Py_XDECREF(v);
    return false;
}

/* Removes stream= from the call's keyword arguments (it is no stencil argument). */
static bool take_stream(Views *v, DevStream *out) {
    *out = 0;
    PyObject *o = v->kwargs ? PyDict_GetItemString(v->kwargs, "stream") : NULL; /* borrowed */
    if (o == NULL) return true;
    return stream_handle(o, out) && PyDict_DelItemString(v->kwargs, "stream") == 0;
}

static bool is_device(const Views *v, PyObject *o) {
    for (int i = 0; i < v->ndev; i++)
        if (v->dev[i] == o) return true;
    return false;
}

static bool is_legacy(DevStream s) {
    return s == 0 || s == 1; /* 0: the default stream (stream=None, a producer's 0), 1: CU_STREAM_LEGACY */
}

/* Orders the call's work after what the GPU arrays' producers queued: nothing where a
 * producer's stream is the call's own (stream order suffices), an event wait on the call's
 * stream for another stream, a context synchronisation for a producer that names none. */
static bool wait_producers(const CudaRuntime *rt, const Views *v, DevStream stream, char *err, size_t errlen) {
    if (v->sync_context) return rt_sync(rt, err, errlen);
    for (int i = 0; i < v->nwait; i++) {
        DevStream p = v->wait[i];
        if (p == stream || (is_legacy(p) && is_legacy(stream))) continue;
        if (!rt_stream_wait(rt, p, stream, err, errlen)) return false;
    }
    return true;
}

/* ---- host arrays: one device copy per group of overlapping arrays --------------------- */

typedef struct Region {
    char *lo, *hi;
    DevPtr dev;
    bool written;
} Region;

/* Adds [lo, hi) to the regions, merging every region it overlaps. */
static int add_region(Region *r, int n, char *lo, char *hi, bool written) {
    for (int i = 0; i < n; i++) {
        if (lo < r[i].hi && r[i].lo < hi) {
            if (r[i].lo < lo) lo = r[i].lo;
            if (r[i].hi > hi) hi = r[i].hi;
            written = written || r[i].written;
            r[i] = r[--n];
            i = -1; /* the grown span may overlap regions seen before */
        }
    }
    r[n] = (Region){lo, hi, 0, written};
    return n + 1;
}

static int region_of(const Region *r, int n, const char *p) {
    for (int i = 0; i < n; i++)
        if (r[i].lo <= p && p < r[i].hi) return i;
    return 0;
}

/* ---- the call ----------------------------------------------------------------------- */

typedef struct Launch {
    const CudaRuntime *rt;
    const CudaModule *c;
    const Stencil *st;
    Region *regions;
    int nregions;
    DevPtr args[4];
    unsigned grid[2], block[2];
    int bi, bj;
    int64_t nk;
    DevStream stream;
    bool timed; /* exec_info asked for: the kernels' time is measured on the host */
    char err[1024];
} Launch;

/* Blocks along K for a PARALLEL kernel: enough blocks to fill a large GPU. */
static unsigned k_blocks(const Launch *L) {
    int64_t blocks = (int64_t)L->grid[0] * L->grid[1];
    int64_t z = (1024 + blocks - 1) / blocks;
    if (z > L->nk) z = L->nk;
    return z < 1 ? 1 : (unsigned)z;
}

static bool launch_one(Launch *L, int k, int64_t klo, int64_t khi) {
    const CudaKernel *K = &L->c->prog.kernels[k];
    unsigned grid[3] = {L->grid[0], L->grid[1], K->kchunks ? k_blocks(L) : 1};
    unsigned block[3] = {L->block[0], L->block[1], 1};
    size_t smem = cuda_smem_bytes(L->st, &L->c->prog, k, L->bi, L->bj);
    return rt_launch(L->rt, k, grid, block, smem, L->args, klo, khi, L->stream, L->err, sizeof L->err);
}

/* Every kernel in order; a FORWARD/BACKWARD computation split into several kernels runs
 * level by level, all its kernels per level. */
static bool run_kernels(Launch *L) {
    const CudaProgram *p = &L->c->prog;
    for (int q = 0; q < p->nkernels;) {
        if (!p->kernels[q].per_level) {
            if (!launch_one(L, q, 0, L->nk)) return false;
            q++;
            continue;
        }
        int r = q;
        while (r < p->nkernels && p->kernels[r].comp == p->kernels[q].comp) r++;
        bool backward = L->st->comps[p->kernels[q].comp].policy == POLICY_BACKWARD;
        for (int64_t n = 0; n < L->nk; n++) {
            int64_t lev = backward ? L->nk - 1 - n : n;
            for (int t = q; t < r; t++)
                if (!launch_one(L, t, lev, lev + 1)) return false;
        }
        q = r;
    }
    /* only exec_info's kernel time needs the host to wait here: copy_out's wait ends the call */
    return !L->timed || rt_sync_stream(L->rt, L->stream, L->err, sizeof L->err);
}

static bool copy_in(Launch *L) {
    for (int i = 0; i < L->nregions; i++) {
        Region *r = &L->regions[i];
        if (!rt_alloc(L->rt, (size_t)(r->hi - r->lo), &r->dev, L->err, sizeof L->err) ||
            !rt_h2d(L->rt, r->dev, r->lo, (size_t)(r->hi - r->lo), L->stream, L->err, sizeof L->err))
            return false;
    }
    return true;
}

/* Queues the copies back (and the checked K reads' failed line into *kline when given, with
 * a checked interval bound's column and level into info[3]), then waits for the stream: the
 * call's one synchronisation when exec_info is not asked for. */
static bool copy_out(Launch *L, int64_t *kline, DevPtr kline_dev, int64_t *info, DevPtr info_dev) {
    for (int i = 0; i < L->nregions; i++) {
        Region *r = &L->regions[i];
        if (r->written &&
            !rt_d2h(L->rt, r->lo, r->dev, (size_t)(r->hi - r->lo), L->stream, L->err, sizeof L->err))
            return false;
    }
    if (kline && !rt_d2h(L->rt, kline, kline_dev, sizeof *kline, L->stream, L->err, sizeof L->err)) return false;
    if (kline &&
        !rt_d2h(L->rt, info, info_dev, 3 * sizeof *info, L->stream, L->err, sizeof L->err))
        return false;
    return rt_sync_stream(L->rt, L->stream, L->err, sizeof L->err); /* the results are on the host now */
}

/* The first written field with both I and J axes decides which axis threadIdx.x follows. */
static bool j_fastest(const Stencil *st, const Bound *b) {
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < st->nparams; i++) {
            const Symbol *s = st->params[i];
            if (s->kind != SYM_FIELD || !bound_present(b, i) || (pass == 0 && !s->written) ||
                (s->axes & 3) != 3)
                continue;
            PyArrayObject *a = (PyArrayObject *)b->value[i];
            npy_intp si = PyArray_STRIDE(a, field_dim_of(s, 0)), sj = PyArray_STRIDE(a, field_dim_of(s, 1));
            return llabs((long long)sj) < llabs((long long)si);
        }
    return false;
}

static bool fill_exec_info(ModuleObject *m, const Bound *b, double t0, double t1, double t2) {
    PyObject *extra = Py_BuildValue("{s:s}", "device",
                                    m->cuda->rt.emulated ? "host emulation" : m->cuda->arch);
    ExecTimes times = {t0, t1, t2};
    bool ok = extra && exec_info_record(m, b, b->exec_info, &times, extra);
    Py_XDECREF(extra);
    return ok;
}

typedef struct Buffers {
    char *host; /* ptrs, strides, domain, scalars packed */
    size_t hostlen;
    DevPtr *slab; /* per temporary */
    DevPtr args;
    CudaScratch *scratch; /* the module's buffers, when this call holds them: then nothing is freed */
} Buffers;

/* A device buffer: the module's kept one when the call holds the scratch, else a new one. */
static bool get_buffer(Launch *L, Buffers *B, DevPtr *kept, size_t *cap, size_t bytes, DevPtr *out) {
    if (B->scratch == NULL) return rt_alloc(L->rt, bytes, out, L->err, sizeof L->err);
    if (!cuda_scratch_fit(L->rt, kept, cap, bytes, L->err, sizeof L->err)) return false;
    *out = *kept;
    return true;
}

/* Queues the argument block's copy, unless the kept buffer already holds these bytes (the
 * same arrays, domain and scalars as the last call). A stencil with checked K reads always
 * copies: its kernels write the failed line into the block. */
static bool upload_args(Launch *L, Buffers *B, bool kernels_write) {
    CudaScratch *s = B->scratch;
    if (s && !kernels_write && s->lastlen == B->hostlen && memcmp(s->last, B->host, B->hostlen) == 0) return true;
    if (s) s->lastlen = 0; /* unknown until the copy is queued */
    if (!rt_h2d(L->rt, B->args, B->host, B->hostlen, L->stream, L->err, sizeof L->err)) return false;
    if (s && !kernels_write) {
        char *last = realloc(s->last, B->hostlen);
        if (last) { /* without it, the next call copies again */
            memcpy(last, B->host, B->hostlen);
            s->last = last;
            s->lastlen = B->hostlen;
        }
    }
    return true;
}

/* Slabs of the global temporaries: per block, the tile and its halo at every K level,
 * the fast thread axis fastest. */
static bool alloc_slabs(Launch *L, Buffers *B, char **ptrs, int64_t *strides, bool swap, int64_t nblocks) {
    const Stencil *st = L->st;
    for (int t = 0; t < st->ntemps; t++) {
        if (L->c->prog.storage[t] != TS_SLAB) continue;
        const Symbol *s = st->temps[t];
        int lo[3], hi[3];
        cuda_temp_halo(s, lo, hi);
        bool ij = !(s->axes & AX_K); /* one plane, the same at every level */
        int64_t ni = L->bi + hi[0] - lo[0], nj = L->bj + hi[1] - lo[1], nk = ij ? 1 : L->nk + hi[2] - lo[2];
        int64_t *sv = strides + (size_t)s->slot * GT_STRIDES;
        sv[0] = swap ? nj : 1;
        sv[1] = swap ? 1 : ni;
        sv[2] = ij ? 0 : ni * nj;
        /* data dimensions outermost within a block's slab, the last fastest */
        int64_t span = ni * nj * nk;
        for (int d = s->ndata - 1; d >= 0; d--) {
            sv[3 + d] = span;
            if (__builtin_mul_overflow(span, (int64_t)s->data_dims[d], &span)) {
                snprintf(L->err, sizeof L->err, "temporary '%s' is too large", s->name);
                return false;
            }
        }
        sv[GT_STRIDES - 1] = span; /* one block's slab (cudagen.c's slot_ptr) */
        int item = dtype_size(s->dtype);
        size_t bytes;
        if (__builtin_mul_overflow((size_t)span, (size_t)nblocks, &bytes) ||
            __builtin_mul_overflow(bytes, (size_t)item, &bytes)) {
            snprintf(L->err, sizeof L->err, "temporary '%s' is too large", s->name);
            return false;
        }
        if (!get_buffer(L, B, B->scratch ? &B->scratch->slab[t] : NULL, B->scratch ? &B->scratch->slabcap[t] : NULL,
                        bytes, &B->slab[t]))
            return false;
        ptrs[s->slot] = (char *)(uintptr_t)B->slab[t] + (-lo[0] * sv[0] - lo[1] * sv[1] - lo[2] * sv[2]) * item;
    }
    return true;
}

static bool bind_fields(Launch *L, const Views *v, const Bound *b, char **ptrs, int64_t *strides) {
    const Stencil *st = L->st;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !bound_present(b, i)) continue; /* never accessed */
        PyArrayObject *arr = (PyArrayObject *)b->value[i];
        int item = dtype_size(s->dtype);
        char *p = PyArray_BYTES(arr);
        if (!is_device(v, b->value[i])) {
            const Region *r = &L->regions[region_of(L->regions, L->nregions, p)];
            p = (char *)(uintptr_t)r->dev + (p - r->lo);
        }
        int64_t *sv = strides + (size_t)s->slot * GT_STRIDES;
        for (int a = 0; a < 3; a++) {
            int d = field_dim_of(s, a);
            if (d >= 0) sv[a] = PyArray_STRIDE(arr, d) / item;
        }
        for (int d = 0; d < s->ndata; d++) sv[3 + d] = PyArray_STRIDE(arr, field_naxes(s) + d) / item;
        /* the origin element's address, on integers (a negative origin lies before the array) */
        uintptr_t host_origin = (uintptr_t)field_origin_address(s, b->value[i], b->origin[i]);
        ptrs[s->slot] = (char *)((uintptr_t)p + (host_origin - (uintptr_t)PyArray_BYTES(arr)));
    }
    return true;
}

static bool plan_regions(Launch *L, const Views *v, const Bound *b) {
    const Stencil *st = L->st;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !bound_present(b, i) || is_device(v, b->value[i])) continue;
        char *lo, *hi;
        if (!array_byte_span(b->value[i], &lo, &hi)) {
            /* validation refuses such an array; validate_args=False reaches here */
            PyErr_Format(PyExc_ValueError,
                         "argument '%s': its shape and strides reach beyond the address space",
                         s->name);
            return false;
        }
        if (hi == lo) hi = lo + 1;
        bool written = s->written && PyArray_ISWRITEABLE((PyArrayObject *)b->value[i]);
        L->nregions = add_region(L->regions, L->nregions, lo, hi, written);
    }
    return true;
}

/* ---- GPU arrays: the host's checks and the undo of checked K reads --------------------- */

/* A host copy of a GPU array's bytes, shaped and strided as it (a new reference, NULL with
 * an exception); the copy is queued on the call's stream: synchronise before reading it. */
static PyObject *host_mirror(Launch *L, PyObject *header) {
    PyArrayObject *a = (PyArrayObject *)header;
    char *lo, *hi;
    if (!array_byte_span(header, &lo, &hi)) {
        PyErr_SetString(PyExc_ValueError, "a GPU array's shape and strides reach beyond the address space");
        return NULL;
    }
    npy_intp n = (npy_intp)(hi - lo);
    PyObject *bytes = PyArray_SimpleNew(1, &n, NPY_UINT8), *view = NULL;
    if (bytes == NULL) return NULL;
    if (n && !rt_d2h(L->rt, PyArray_BYTES((PyArrayObject *)bytes), (DevPtr)(uintptr_t)lo, (size_t)n, L->stream,
                     L->err, sizeof L->err)) {
        PyErr_Format(PyExc_RuntimeError, "copying a GPU array to the host failed: %s", L->err);
        goto fail;
    }
    PyArray_Descr *d = PyArray_DESCR(a);
    Py_INCREF(d);
    view = PyArray_NewFromDescr(&PyArray_Type, d, PyArray_NDIM(a), PyArray_DIMS(a), PyArray_STRIDES(a),
                                PyArray_BYTES((PyArrayObject *)bytes) + (PyArray_BYTES(a) - lo), 0, NULL);
    if (view == NULL || PyArray_SetBaseObject((PyArrayObject *)view, bytes) < 0) goto fail;
    return view; /* owns bytes */
fail:
    Py_XDECREF(view);
    Py_DECREF(bytes);
    return NULL;
}

/* kbounds_check, which bind_all_but_kbounds left out, on host copies of the GPU arrays it
 * reads (index fields: usually a small part of the arguments). The same checks, the same
 * errors as with NumPy arrays, before anything runs. */
static bool check_on_host(Launch *L, const Views *v, const Bound *b) {
    const Stencil *st = L->st;
    bool reads[GT_MAX_PARAMS];
    if (!b->validate || !kbounds_reads_fields(st, reads))
        return !b->validate || kbounds_check(st, b->value, b->origin, b->domain, b->kvals);
    PyObject *values[GT_MAX_PARAMS], *mirror[GT_MAX_PARAMS] = {0};
    bool ok = true, copied = false;
    for (int i = 0; i < st->nparams; i++) {
        values[i] = b->value[i];
        if (!ok || !reads[i] || !bound_present(b, i) || !is_device(v, b->value[i])) continue;
        if (!copied) { /* the arrays' producers may still be writing them */
            copied = true;
            ok = wait_producers(L->rt, v, L->stream, L->err, sizeof L->err);
            if (!ok) PyErr_Format(PyExc_RuntimeError, "waiting for the GPU arrays failed: %s", L->err);
        }
        if (ok) ok = (values[i] = mirror[i] = host_mirror(L, b->value[i])) != NULL;
    }
    if (ok && copied) {
        Py_BEGIN_ALLOW_THREADS;
        ok = rt_sync_stream(L->rt, L->stream, L->err, sizeof L->err);
        Py_END_ALLOW_THREADS;
        if (!ok) PyErr_Format(PyExc_RuntimeError, "copying GPU arrays to the host failed: %s", L->err);
    }
    if (!ok && copied) { /* no copy still queued may write into a buffer freed below */
        char ignored[256];
        Py_BEGIN_ALLOW_THREADS;
        rt_sync_stream(L->rt, L->stream, ignored, sizeof ignored);
        Py_END_ALLOW_THREADS;
    }
    ok = ok && kbounds_check(st, values, b->origin, b->domain, b->kvals);
    for (int i = 0; i < st->nparams; i++) Py_XDECREF(mirror[i]);
    return ok;
}

/* Checked K reads on GPU arrays (dev[p]: parameter p is a written one): each one's bytes are
 * copied to a device buffer (saves[p]) before the kernels, and copied back when the kernels
 * noted a level outside the allowed ones. The host cannot read device memory, and a device
 * copy never crosses the bus. Queued on the call's stream, after the producers' work. */
static bool save_device(Launch *L, const Bound *b, const bool *dev, DevPtr *saves) {
    for (int i = 0; i < L->st->nparams; i++) {
        if (!dev[i]) continue;
        char *lo, *hi;
        if (!array_byte_span(b->value[i], &lo, &hi)) {
            snprintf(L->err, sizeof L->err, "argument '%s' reaches beyond the address space", L->st->params[i]->name);
            return false;
        }
        if (hi == lo) continue;
        if (!rt_alloc(L->rt, (size_t)(hi - lo), &saves[i], L->err, sizeof L->err) ||
            !rt_d2d(L->rt, saves[i], (DevPtr)(uintptr_t)lo, (size_t)(hi - lo), L->stream, L->err, sizeof L->err))
            return false;
    }
    return true;
}

/* Puts the saved bytes back and waits for the copies. */
static bool restore_device(Launch *L, const Bound *b, const DevPtr *saves) {
    for (int i = 0; i < L->st->nparams; i++) {
        if (saves[i] == 0) continue;
        char *lo, *hi;
        (void)array_byte_span(b->value[i], &lo, &hi); /* save_device computed it */
        if (!rt_d2d(L->rt, (DevPtr)(uintptr_t)lo, saves[i], (size_t)(hi - lo), L->stream, L->err, sizeof L->err))
            return false;
    }
    return rt_sync_stream(L->rt, L->stream, L->err, sizeof L->err);
}

static PyObject *run(ModuleObject *m, const Views *v, Bound *b, DevStream stream, double t0) {
    const Stencil *st = m->st;
    Launch L = {.c = m->cuda, .st = st, .nk = b->domain[2], .stream = stream,
                .timed = b->exec_info != NULL};
    int nslots = stencil_nslots(st);
    /* the scalars, the flag of checked K levels, two words per field, a checked interval
     * bound's column and level (cudagen.h) */
    size_t nptr = (size_t)nslots + 1, nstr = nptr * GT_STRIDES,
           nsc = (size_t)st->nscalars + 1 + 2 * (size_t)st->nfields + 3;
    Buffers B = {0};
    B.hostlen = 8 * (nptr + nstr + 8 + nsc);
    B.host = calloc(1, B.hostlen);
    B.slab = calloc((size_t)st->ntemps + 1, sizeof *B.slab);
    L.regions = calloc((size_t)st->nparams + 1, sizeof *L.regions);
    DevPtr *saves = calloc((size_t)st->nparams + 1, sizeof *saves); /* GPU arrays' copies */
    bool dev_written[GT_MAX_PARAMS] = {0}, any_dev_written = false;
    PyObject *result = NULL;
    bool ok = false, restored = false;
    PyObject **saved = b->saved; /* every exit of run releases them: all start NULL */
    memset(saved, 0, sizeof *saved * (size_t)st->nparams);
    int64_t kline = 0, bound_info[3] = {0};
    if (!B.host || !B.slab || !L.regions || !saves) {
        PyErr_NoMemory();
        goto done;
    }
    char **ptrs = (char **)B.host;
    int64_t *strides = (int64_t *)(B.host + 8 * nptr), *domain = strides + nstr;
    char *scalars = (char *)(domain + 8);
    for (int i = 0; i < st->nparams; i++)
        if (st->params[i]->kind == SYM_SCALAR && bound_present(b, i) &&
            !scalar_value(st->params[i], b->value[i], scalars + 8 * st->params[i]->slot))
            goto done;
    /* after the flag of checked K levels: the levels each field's array holds (cudagen.h) */
    if (st->has_checked_k)
        call_array_levels(st, b, (int64_t *)(void *)(scalars + 8 * st->nscalars + 8));
    if ((L.rt = cuda_runtime(m)) == NULL || (v->ndev && !check_on_host(&L, v, b))) goto done;
    for (int i = 0; st->has_checked_k && i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        dev_written[i] = s->kind == SYM_FIELD && s->written && bound_present(b, i) && is_device(v, b->value[i]);
        any_dev_written = any_dev_written || dev_written[i];
    }
    bool swap = j_fastest(st, b);
    L.block[0] = (unsigned)m->cuda->block[0];
    L.block[1] = (unsigned)m->cuda->block[1];
    L.bi = swap ? m->cuda->block[1] : m->cuda->block[0];
    L.bj = swap ? m->cuda->block[0] : m->cuda->block[1];
    /* rounded up without n + b - 1, which overflows for a domain near 2**63 */
    int64_t nbi = b->domain[0] / L.bi + (b->domain[0] % L.bi != 0),
            nbj = b->domain[1] / L.bj + (b->domain[1] % L.bj != 0);
    if ((swap ? nbj : nbi) > 0x7fffffff || (swap ? nbi : nbj) > 65535) { /* gridDim.x, gridDim.y limits */
        PyErr_Format(PyExc_ValueError, "the domain (%lld, %lld) needs too many thread blocks",
                     (long long)b->domain[0], (long long)b->domain[1]);
        goto done;
    }
    L.grid[0] = (unsigned)(swap ? nbj : nbi);
    L.grid[1] = (unsigned)(swap ? nbi : nbj);
    memcpy(domain, b->domain, 3 * sizeof *domain);
    domain[3] = swap;
    memcpy(domain + 4, b->domain + 3, 4 * sizeof *domain); /* the region anchors (call.h) */
    if (!plan_regions(&L, v, b)) goto done;
    if (cuda_scratch_take(m->cuda)) B.scratch = &m->cuda->scratch;
    if (st->has_checked_k && !call_save_written(st, b, saved, dev_written)) goto done;
    double t1 = call_now(), t2 = t1;
    Py_BEGIN_ALLOW_THREADS;
    ok = copy_in(&L) && bind_fields(&L, v, b, ptrs, strides) &&
         alloc_slabs(&L, &B, ptrs, strides, swap, nbi * nbj) &&
         get_buffer(&L, &B, B.scratch ? &B.scratch->args : NULL, B.scratch ? &B.scratch->argscap : NULL, B.hostlen,
                    &B.args);
    if (ok) {
        L.args[0] = B.args;
        L.args[1] = B.args + 8 * nptr;
        L.args[2] = L.args[1] + 8 * nstr;
        L.args[3] = L.args[2] + 8 * 8;
        ok = upload_args(&L, &B, st->has_checked_k);
    }
    /* arrays of other libraries may still be written by work queued on their streams */
    if (ok && v->ndev) ok = wait_producers(L.rt, v, L.stream, L.err, sizeof L.err);
    if (ok && any_dev_written) ok = save_device(&L, b, dev_written, saves);
    t1 = call_now();
    ok = ok && run_kernels(&L);
    t2 = call_now();
    /* checked K levels: the word after the scalars holds the note of one outside the allowed */
    ok = ok && copy_out(&L, st->has_checked_k ? &kline : NULL, L.args[3] + 8 * (DevPtr)st->nscalars,
                        bound_info, L.args[3] + 8 * (DevPtr)(st->nscalars + 1 + 2 * st->nfields));
    if (ok && kline != 0 && any_dev_written) ok = restore_device(&L, b, saves); /* then raised below */
    Py_END_ALLOW_THREADS;
    if (!ok) {
        PyErr_Format(PyExc_RuntimeError, "running stencil '%s' on the cuda backend failed: %s", st->name, L.err);
        goto done;
    }
    if (st->has_checked_k) {
        restored = true;
        if (!call_restore_written(st, b, saved, kline, b->domain[2], bound_info)) goto done;
    }
    if (b->exec_info && !fill_exec_info(m, b, t0, t1, t2)) goto done;
    result = Py_NewRef(Py_None);
done:
    if (!restored) call_restore_written(st, b, saved, 0, 0, NULL); /* releases the copies */
    if (L.rt) {
        char ignored[256];
        if (!ok) rt_sync_stream(L.rt, L.stream, ignored, sizeof ignored); /* nothing queued still uses them */
        for (int i = 0; i < L.nregions; i++) rt_free(L.rt, L.regions[i].dev);
        for (int t = 0; !B.scratch && B.slab && t < st->ntemps; t++) rt_free(L.rt, B.slab[t]);
        if (!B.scratch) rt_free(L.rt, B.args);
        for (int i = 0; saves && i < st->nparams; i++) rt_free(L.rt, saves[i]);
    }
    if (B.scratch) {
        if (!ok) B.scratch->lastlen = 0; /* a failed call may have left the block half copied */
        cuda_scratch_give(m->cuda);
    }
    free(saves);
    free(L.regions);
    free(B.slab);
    free(B.host);
    return result;
}

PyObject *call_cuda(ModuleObject *m, PyObject *args, PyObject *kwargs) {
    double t0 = call_now();
    if (m->st->nparams > GT_MAX_PARAMS) { /* ir_build refuses such a stencil: never reached */
        PyErr_Format(PyExc_ValueError, "stencils take at most %d arguments", (int)GT_MAX_PARAMS);
        return NULL;
    }
    Views v;
    PyObject *result = NULL;
    Bound b; /* bind_all sets it up; its tables are too big to zero on every call */
    b.nparams = 0;
    b.heap = NULL;
    DevStream stream;
    /* with GPU arrays, the values kbounds_check reads are copied to the host in run() */
    if (make_views(&v, m->st, args, kwargs) && take_stream(&v, &stream) &&
        (v.ndev ? bind_all_but_kbounds(m, v.args, v.kwargs, &b) : bind_all(m, v.args, v.kwargs, &b)))
        result = run(m, &v, &b, stream, t0);
    bound_release(&b);
    Py_XDECREF(v.args);
    Py_XDECREF(v.kwargs);
    return result;
}
