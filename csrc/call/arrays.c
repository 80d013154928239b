/*
 * Field arguments as arrays (arrays.h). A plain ndarray is used as it is, with no attribute
 * lookups (the common case costs one type check). Anything else goes through NumPy's own
 * conversion, so exactly what np.asarray understands is accepted; an output must convert
 * without a copy and be writable, since the stencil writes the caller's memory or nothing.
 */
#include "call/arrays.h"

#include "call/call.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL gtscript_ARRAY_API
#include <numpy/arrayobject.h>

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* numpy.ma.MaskedArray (a borrowed reference kept for the life of the process), NULL with
 * an exception set. */
static PyObject *masked_array_type(void) {
    static PyObject *type;
    if (type == NULL) {
        PyObject *ma = PyImport_ImportModule("numpy.ma");
        if (ma == NULL) return NULL;
        type = PyObject_GetAttrString(ma, "MaskedArray");
        Py_DECREF(ma);
    }
    return type;
}

static bool has_array_protocol(PyObject *o) {
    return PyObject_CheckBuffer(o) || PyObject_HasAttrString(o, "__array_interface__") ||
           PyObject_HasAttrString(o, "__array_struct__") || PyObject_HasAttrString(o, "__array__");
}

/* Re-raises the pending exception as `type` with `message`, the original as its cause. */
static void raise_from(PyObject *type, const char *message) {
    PyObject *ct, *cause, *ctb, *t, *exc, *tb;
    PyErr_Fetch(&ct, &cause, &ctb);
    PyErr_NormalizeException(&ct, &cause, &ctb);
    if (cause && ctb) PyException_SetTraceback(cause, ctb);
    Py_XDECREF(ct);
    Py_XDECREF(ctb);
    PyErr_SetString(type, message);
    if (cause == NULL) return;
    PyErr_Fetch(&t, &exc, &tb);
    PyErr_NormalizeException(&t, &exc, &tb);
    if (exc) PyException_SetCause(exc, cause); /* steals cause */
    else Py_DECREF(cause);
    PyErr_Restore(t, exc, tb);
}

/* Whether NumPy converts `o` through its __array__ method: the only protocol that does not
 * hand over the object's own memory (buffer protocol, __array_interface__ and
 * __array_struct__ do, and NumPy tries them first). */
static bool through_array_method(PyObject *o) {
    return !PyObject_CheckBuffer(o) && !PyObject_HasAttrString(o, "__array_interface__") &&
           !PyObject_HasAttrString(o, "__array_struct__");
}

/* For a written argument: whether `a`, the conversion of `o`, is o's own memory. An
 * __array__ method is asked for no copy, but a lazy array (dask's, or xarray's DataArray
 * over one) computes and returns new memory anyway, with only a warning: the stencil would
 * write a temporary and the caller would never see the result. So `o` is converted a second
 * time, with the first result still alive: memory of its own gives the same address both
 * times, a fresh copy cannot. False with a TypeError. */
static bool converts_in_place(const Symbol *s, PyObject *o, PyObject *a) {
    if (!through_array_method(o)) return true;
    PyObject *again = PyArray_FromAny(o, NULL, 0, 0, NPY_ARRAY_ENSURENOCOPY, NULL);
    if (again == NULL) return false; /* it converted once: a second failure is its own error */
    bool same = PyArray_BYTES((PyArrayObject *)again) == PyArray_BYTES((PyArrayObject *)a);
    Py_DECREF(again);
    if (same) return true;
    PyErr_Format(PyExc_TypeError,
                 "argument '%s' (%s) is written by the stencil, but its __array__ returns new "
                 "memory at every conversion (a lazily computed array, such as a dask array or an "
                 "xarray DataArray over one): the result would be written to a temporary copy and "
                 "lost. Pass a writable NumPy array (or an object NumPy views in place: the buffer "
                 "protocol, __array_interface__) and read the result from it; for dask, run the "
                 "stencil per block with map_blocks/map_overlap (see \"With xarray and dask\" in "
                 "docs/calling.md)",
                 s->name, Py_TYPE(o)->tp_name);
    return false;
}

/* The stencil's declaration of field `s` with dtype `dtype` ("np.float32"), as GTScript
 * spells it: Field[np.float32], Field[IJ, np.float32], Field[(np.float32, (3,))]. */
static void field_declaration(const Symbol *s, const char *dtype, StrBuf *sb) {
    sb_puts(sb, "Field[");
    if ((s->axes & AX_IJK) != AX_IJK) {
        for (int a = 0; a < 3; a++)
            if (s->axes & (1 << a)) sb_printf(sb, "%c", "IJK"[a]);
        sb_puts(sb, ", ");
    }
    if (s->ndata == 0) {
        sb_printf(sb, "%s]", dtype);
        return;
    }
    sb_printf(sb, "(%s, (", dtype);
    for (int d = 0; d < s->ndata; d++) sb_printf(sb, "%s%d", d ? ", " : "", s->data_dims[d]);
    sb_puts(sb, s->ndata == 1 ? ",))]" : "))]");
}

/* NumPy's spelling of dtype t for Python code: np.float64, np.bool_, ... */
static void np_spelling(DType t, char *out, size_t n) {
    snprintf(out, n, "np.%s%s", dtype_name(t), t == DT_BOOL ? "_" : "");
}

bool dtype_refusal(const Symbol *s, PyObject *array, bool from_sequence) {
    PyArrayObject *a = (PyArrayObject *)array;
    PyObject *r = PyObject_Str((PyObject *)PyArray_DESCR(a));
    const char *have = r ? PyUnicode_AsUTF8(r) : NULL;
    PyErr_Clear();
    char want[32], other[32] = "";
    np_spelling(s->dtype, want, sizeof want);
    /* the argument's own dtype, where a field may declare it (native byte order) */
    for (int t = 0; t < DT_COUNT && PyArray_ISNOTSWAPPED(a); t++)
        if (call_npy_type((DType)t) == PyArray_TYPE(a)) np_spelling((DType)t, other, sizeof other);
    StrBuf fix = {0};
    if (from_sequence)
        sb_printf(&fix, "pass np.asarray(%s, dtype=%s)", s->name, want);
    else
        sb_printf(&fix, "pass %s.astype(%s)", s->name, want);
    if (other[0]) {
        sb_puts(&fix, ", or declare ");
        field_declaration(s, other, &fix);
    }
    PyErr_Format(PyExc_TypeError,
                 "argument '%s' has dtype %s%s but the stencil declares %s (no implicit cast): %s",
                 s->name, have ? have : "?", from_sequence ? " (as NumPy converts it)" : "",
                 dtype_name(s->dtype), fix.oom || fix.data == NULL ? "cast it" : fix.data);
    sb_free(&fix);
    Py_XDECREF(r);
    return false;
}

/* Whether `o` is a GPU array: one with __cuda_array_interface__ (CuPy, PyTorch, Numba). A
 * pending exception (a failed conversion's) is kept. */
static bool is_gpu_array(PyObject *o) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyObject *cai = PyObject_GetAttrString(o, "__cuda_array_interface__");
    if (cai == NULL) PyErr_Clear();
    Py_XDECREF(cai);
    PyErr_Restore(t, v, tb);
    return cai != NULL;
}

/* The refusal of a GPU array on a host backend (a TypeError), the pending exception, where
 * there is one, as its cause. */
static PyObject *gpu_array_refusal(const Symbol *s, PyObject *o) {
    char msg[640];
    snprintf(msg, sizeof msg,
             "argument '%s' (%s) is a GPU array (it has __cuda_array_interface__), but this "
             "stencil runs on the host and cannot use device memory: build the stencil with "
             "backend=\"cuda\", which takes GPU arrays in place, or copy the array to the host "
             "(%s.get(), cupy.asnumpy(%s))%s",
             s->name, Py_TYPE(o)->tp_name, s->name, s->name,
             s->written ? " and the result back to the device afterwards" : "");
    if (PyErr_Occurred()) raise_from(PyExc_TypeError, msg);
    else PyErr_SetString(PyExc_TypeError, msg);
    return NULL;
}

/* A read argument that NumPy converts but that is no array (a list, a tuple, nested ones):
 * converted as GT4Py converts it, with np.asarray and no dtype, so that its dtype is checked
 * as an array's is (a new reference, NULL with a TypeError). */
static PyObject *convert_sequence(const Symbol *s, PyObject *o) {
    char msg[512];
    PyObject *a = PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
    if (a == NULL) {
        snprintf(msg, sizeof msg,
                 "argument '%s' (%s) could not be read as an array: NumPy cannot convert it "
                 "(nested sequences of numbers of one shape convert); pass a NumPy array",
                 s->name, Py_TYPE(o)->tp_name);
        raise_from(PyExc_TypeError, msg);
        return NULL;
    }
    PyArrayObject *arr = (PyArrayObject *)a;
    if (PyArray_TYPE(arr) != call_npy_type(s->dtype) || !PyArray_ISNOTSWAPPED(arr)) {
        dtype_refusal(s, a, true);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* A view (or, for an input, possibly a copy) of `o` as an ndarray: a new reference. */
static PyObject *convert(const Symbol *s, PyObject *o) {
    const char *type = Py_TYPE(o)->tp_name;
    char msg[512];
    if (PyArray_Check(o)) return Py_NewRef(o);
    if (o == Py_None) {
        PyErr_Format(PyExc_TypeError,
                     "argument '%s' is None, but the stencil %s it (None is accepted only for a "
                     "field the stencil does not use)",
                     s->name, s->written ? "writes" : "reads");
        return NULL;
    }
    if (PyList_Check(o) || PyTuple_Check(o)) {
        if (!s->written) return convert_sequence(s, o);
        PyErr_Format(PyExc_TypeError,
                     "argument '%s' is a %s, but the stencil writes it, and a %s cannot be "
                     "written in place: pass np.asarray(data) and read the result from that "
                     "array",
                     s->name, type, type);
        return NULL;
    }
    if (!has_array_protocol(o)) {
        if (is_gpu_array(o)) return gpu_array_refusal(s, o);
        PyErr_Format(PyExc_TypeError,
                     "argument '%s' must be an array: a NumPy array, an object NumPy views "
                     "without a copy (buffer protocol, __array_interface__, __array__), or, for "
                     "a field the stencil only reads, a list or tuple NumPy converts; got %s",
                     s->name, type);
        return NULL;
    }
    if (!s->written) {
        PyObject *a = PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
        if (a == NULL) {
            if (is_gpu_array(o)) return gpu_array_refusal(s, o);
            snprintf(msg, sizeof msg, "argument '%s' (%s) could not be read as an array",
                     s->name, type);
            raise_from(PyExc_TypeError, msg);
        }
        return a;
    }
    PyObject *a = PyArray_FromAny(o, NULL, 0, 0, NPY_ARRAY_ENSURENOCOPY, NULL);
    if (a == NULL) {
        if (is_gpu_array(o)) return gpu_array_refusal(s, o);
        snprintf(msg, sizeof msg,
                 "argument '%s' (%s) is written by the stencil, so the result must land in its "
                 "memory, but NumPy cannot view it without a copy: pass a writable NumPy array "
                 "(np.asarray(x), or x.values for xarray, when they share x's memory) and read the "
                 "result from it; for dask, run the stencil per block with map_blocks/map_overlap "
                 "(see \"With xarray and dask\" in docs/calling.md)",
                 s->name, type);
        raise_from(PyExc_TypeError, msg);
        return NULL;
    }
    if (!converts_in_place(s, o, a)) {
        Py_DECREF(a);
        return NULL;
    }
    if (!PyArray_ISWRITEABLE((PyArrayObject *)a)) {
        Py_DECREF(a);
        PyErr_Format(PyExc_TypeError,
                     "argument '%s' (%s) is written by the stencil but NumPy sees its memory as "
                     "read-only: pass a writable NumPy array (np.asarray(x) of writable memory, or "
                     "x.values for xarray)",
                     s->name, type);
        return NULL;
    }
    return a;
}

/* The integer at position i of sequence `seq` (a fast sequence), into *out; false with an
 * exception. */
static bool item_int64(PyObject *seq, Py_ssize_t i, int64_t *out) {
    PyObject *v = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
    long long x = v ? PyLong_AsLongLong(v) : -1;
    Py_XDECREF(v);
    if (x == -1 && PyErr_Occurred()) return false;
    *out = x;
    return true;
}

/* perm[d]: the dimension of `a` that becomes dimension d (I, J, K, then data dimensions),
 * from the names in dims; false with a ValueError naming the argument. */
static bool dims_permutation(const Symbol *s, PyObject *dims, int ndim, npy_intp *perm) {
    int naxes = field_naxes(s);
    PyObject *seq = PySequence_Fast(dims, "");
    if (seq == NULL || PySequence_Fast_GET_SIZE(seq) != ndim || ndim != naxes + s->ndata) goto bad;
    for (int d = 0; d < ndim; d++) perm[d] = -1;
    for (Py_ssize_t p = 0; p < ndim; p++) {
        PyObject *name = PyObject_Str(PySequence_Fast_GET_ITEM(seq, p));
        const char *n = name ? PyUnicode_AsUTF8(name) : NULL;
        int target = -1;
        if (n && strlen(n) == 1 && strchr("IJK", n[0])) {
            target = field_dim_of(s, (int)(strchr("IJK", n[0]) - "IJK"));
        } else if (n && n[0] && strlen(n) <= 2 && strspn(n, "0123456789") == strlen(n)) {
            int k = atoi(n);
            if (k < s->ndata) target = naxes + k;
        }
        Py_XDECREF(name);
        if (n == NULL) goto bad;
        if (target < 0 || perm[target] >= 0) goto bad;
        perm[target] = p;
    }
    Py_DECREF(seq);
    return true;
bad:
    Py_XDECREF(seq);
    PyErr_Clear();
    char axes[4] = {0};
    for (int a = 0, n = 0; a < 3; a++)
        if (s->axes & (1 << a)) axes[n++] = "IJK"[a];
    PyErr_Format(PyExc_ValueError,
                 "argument '%s' names its dimensions %R (__gt_dims__), but the stencil declares "
                 "axes %s and %d data dimension%s (named '0', '1', ...)",
                 s->name, dims, axes, s->ndata, s->ndata == 1 ? "" : "s");
    return false;
}

/* __gt_origin__, in the array's own dimension order, onto the stencil's axes (perm from
 * __gt_dims__, or NULL). */
static bool gt_origin(const Symbol *s, PyObject *value, int ndim, const npy_intp *perm,
                      int64_t origin[3]) {
    PyObject *seq = PySequence_Fast(value, "");
    Py_ssize_t n = seq ? PySequence_Fast_GET_SIZE(seq) : -1;
    int naxes = field_naxes(s);
    if (seq == NULL || (n != ndim && n != naxes)) goto bad;
    for (int a = 0; a < 3; a++) {
        int d = field_dim_of(s, a);
        if (d < 0) continue;
        Py_ssize_t at = perm ? perm[d] : d;
        if (at >= n || !item_int64(seq, at, &origin[a])) goto bad;
    }
    Py_DECREF(seq);
    return true;
bad:
    Py_XDECREF(seq);
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError,
                 "argument '%s' has __gt_origin__ %R: it must be a tuple of integers, one per "
                 "dimension of the array",
                 s->name, value);
    return false;
}

bool array_byte_span(PyObject *o, char **lo, char **hi) {
    PyArrayObject *a = (PyArrayObject *)o;
    int64_t down = 0, up = PyArray_ITEMSIZE(a);
    for (int d = 0; d < PyArray_NDIM(a); d++)
        if (PyArray_DIM(a, d) == 0) {
            *lo = *hi = PyArray_BYTES(a);
            return true;
        }
    for (int d = 0; d < PyArray_NDIM(a); d++) {
        int64_t ext;
        if (__builtin_mul_overflow((int64_t)PyArray_DIM(a, d) - 1, (int64_t)PyArray_STRIDE(a, d), &ext))
            return false;
        if (ext < 0 ? __builtin_add_overflow(down, ext, &down) : __builtin_add_overflow(up, ext, &up))
            return false;
    }
    /* the addresses themselves must not wrap around either */
    uintptr_t p = (uintptr_t)PyArray_BYTES(a), below = (uintptr_t)0 - (uintptr_t)down; /* -down, INT64_MIN too */
    if (p < below || UINTPTR_MAX - p < (uintptr_t)up) return false;
    *lo = (char *)(p - below);
    *hi = (char *)(p + (uintptr_t)up);
    return true;
}

/* The memory that array `a` views, where it can be known: [*lo, *hi) set and true; false
 * (no exception) where it cannot (memory from C without an owner object). Follows the chain
 * of bases to the array that owns the data (its own span is its allocation), a
 * buffer-protocol object (bytes, bytearray, mmap: its length), or the ndarray that an
 * object in the chain keeps as `base` (NumPy's as_strided keeps the array it views so). */
static bool viewed_memory(PyArrayObject *a, char **lo, char **hi) {
    PyObject *o = (PyObject *)a;
    for (int hops = 0; hops < 64; hops++) {
        PyArrayObject *arr = (PyArrayObject *)o;
        PyObject *base = PyArray_BASE(arr);
        if (base == NULL)
            return PyArray_CHKFLAGS(arr, NPY_ARRAY_OWNDATA) && array_byte_span(o, lo, hi);
        if (PyArray_Check(base)) {
            o = base;
            continue;
        }
        if (PyObject_CheckBuffer(base)) {
            Py_buffer view;
            if (PyObject_GetBuffer(base, &view, PyBUF_SIMPLE) != 0) {
                PyErr_Clear();
                return false;
            }
            *lo = view.buf;
            *hi = (char *)view.buf + view.len;
            PyBuffer_Release(&view);
            return true;
        }
        PyObject *inner = PyObject_GetAttrString(base, "base");
        if (inner == NULL) PyErr_Clear();
        bool next = inner != NULL && PyArray_Check(inner);
        Py_XDECREF(inner); /* base holds it */
        if (!next) return false;
        o = inner;
    }
    return false;
}

bool array_within_memory(const Symbol *s, PyObject *o) {
    PyArrayObject *a = (PyArrayObject *)o;
    char *lo, *hi, *mlo, *mhi;
    if (!array_byte_span(o, &lo, &hi)) {
        PyErr_Format(PyExc_ValueError,
                     "argument '%s': its shape and strides reach beyond the address space (a span "
                     "of more than 2**63 bytes, or addresses that wrap around; strides from "
                     "np.lib.stride_tricks.as_strided?): the stencil cannot address it",
                     s->name);
        return false;
    }
    if (lo == hi || !viewed_memory(a, &mlo, &mhi)) return true;
    /* compared as integers: the two ranges may belong to different objects */
    if ((uintptr_t)lo < (uintptr_t)mlo || (uintptr_t)hi > (uintptr_t)mhi) {
        PyErr_Format(PyExc_ValueError,
                     "argument '%s' reaches outside the memory it views: its shape and strides "
                     "span %zd bytes from %zd bytes before its first element, the memory it "
                     "views has %zd bytes (strides from np.lib.stride_tricks.as_strided?); the "
                     "stencil would read or write outside it",
                     s->name, (Py_ssize_t)(hi - lo), (Py_ssize_t)(PyArray_BYTES(a) - lo),
                     (Py_ssize_t)(mhi - mlo));
        return false;
    }
    return true;
}

PyObject *field_array(const Symbol *s, PyObject *o, bool *has_origin, int64_t origin[3]) {
    *has_origin = false;
    if (PyArray_CheckExact(o)) return Py_NewRef(o);
    PyObject *masked = masked_array_type();
    if (masked == NULL) return NULL;
    int is_masked = PyObject_IsInstance(o, masked);
    if (is_masked < 0) return NULL;
    if (is_masked) {
        PyErr_Format(PyExc_TypeError,
                     "argument '%s' is a masked array (numpy.ma.MaskedArray): a stencil would "
                     "ignore its mask; pass x.filled(value) for the values to use at masked "
                     "points, or x.data to ignore the mask on purpose",
                     s->name);
        return NULL;
    }
    PyObject *dims = NULL, *org = NULL, *a = convert(s, o);
    if (a == NULL) return NULL;
    int ndim = PyArray_NDIM((PyArrayObject *)a);
    npy_intp perm[NPY_MAXDIMS];
    bool permuted = false;
    dims = PyObject_GetAttrString(o, "__gt_dims__");
    if (dims == NULL && !PyErr_ExceptionMatches(PyExc_AttributeError)) goto fail;
    PyErr_Clear();
    if (dims && dims != Py_None) {
        if (!dims_permutation(s, dims, ndim, perm)) goto fail;
        PyArray_Dims p = {perm, ndim};
        PyObject *t = PyArray_Transpose((PyArrayObject *)a, &p);
        if (t == NULL) goto fail;
        Py_SETREF(a, t);
        permuted = true;
    }
    org = PyObject_GetAttrString(o, "__gt_origin__");
    if (org == NULL && !PyErr_ExceptionMatches(PyExc_AttributeError)) goto fail;
    PyErr_Clear();
    if (org && org != Py_None) {
        if (!gt_origin(s, org, ndim, permuted ? perm : NULL, origin)) goto fail;
        *has_origin = true;
    }
    Py_XDECREF(dims);
    Py_XDECREF(org);
    return a;
fail:
    Py_XDECREF(dims);
    Py_XDECREF(org);
    Py_DECREF(a);
    return NULL;
}
