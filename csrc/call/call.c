/*
 * Calling a stencil. Everything a call needs is checked here, in C, before any data is
 * touched: argument binding, dtypes and shapes against the annotations, origin + domain +
 * access extents against every array, writability and aliasing. Then the kernel runs on
 * base pointers and element strides with the GIL released.
 */
#include "call/call.h"
#include "call/interrupt.h"
#include "call/kbounds.h"

#include "call/plan.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL gtscript_ARRAY_API
#include <numpy/arrayobject.h>

#include <stdlib.h>
#include <string.h>

static int npy_type_of(DType t) {
    switch (t) {
    case DT_BOOL: return NPY_BOOL;
    case DT_INT32: return NPY_INT32;
    case DT_INT64: return NPY_INT64;
    case DT_FLOAT32: return NPY_FLOAT32;
    case DT_FLOAT64: return NPY_FLOAT64;
    default: return -1;
    }
}

/* ---- binding ------------------------------------------------------------------------ */

static bool is_option(const char *k) {
    return strcmp(k, "origin") == 0 || strcmp(k, "domain") == 0 ||
           strcmp(k, "validate_args") == 0 || strcmp(k, "exec_info") == 0;
}

static bool bind_args(const Stencil *st, PyObject *args, PyObject *kwargs, Bound *b,
                      PyObject **origin, PyObject **domain) {
    Py_ssize_t npos = PyTuple_GET_SIZE(args);
    if (npos > st->nparams) {
        PyErr_Format(PyExc_TypeError, "%s() takes %d positional arguments but %zd were given",
                     st->name, st->nparams, npos);
        return false;
    }
    for (int i = 0; i < st->nparams; i++) b->value[i] = i < npos ? PyTuple_GET_ITEM(args, i) : NULL;
    *origin = *domain = NULL;
    b->validate = true;
    b->exec_info = NULL;
    if (kwargs) {
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kwargs, &pos, &key, &val)) {
            const char *k = PyUnicode_AsUTF8(key);
            if (k == NULL) return false;
            if (strcmp(k, "stream") == 0) { /* the cuda call path takes it out before binding */
                PyErr_Format(PyExc_TypeError, "%s(): only the cuda backend takes stream=", st->name);
                return false;
            }
            if (is_option(k)) {
                if (k[0] == 'o') *origin = val;
                else if (k[0] == 'd') *domain = val;
                else if (k[0] == 'v') {
                    int t = PyObject_IsTrue(val);
                    if (t < 0) return false;
                    b->validate = t;
                } else if (val != Py_None) {
                    if (!PyDict_Check(val)) {
                        PyErr_SetString(PyExc_TypeError, "exec_info must be a dict or None");
                        return false;
                    }
                    b->exec_info = val;
                }
                continue;
            }
            int i = 0;
            while (i < st->nparams && strcmp(st->params[i]->name, k) != 0) i++;
            if (i == st->nparams) {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'",
                             st->name, k);
                return false;
            }
            if (b->value[i]) {
                PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
                             st->name, k);
                return false;
            }
            b->value[i] = val;
        }
    }
    for (int i = 0; i < st->nparams; i++)
        if (b->value[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", st->name,
                         st->params[i]->name);
            return false;
        }
    return true;
}

static bool check_field(const Symbol *s, PyObject *o, bool validate) {
    if (!PyArray_Check(o)) {
        PyErr_Format(PyExc_TypeError, "argument '%s' must be a NumPy array (got %s)", s->name,
                     Py_TYPE(o)->tp_name);
        return false;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    int want = field_naxes(s) + s->ndata;
    if (PyArray_NDIM(a) != want) {
        PyErr_Format(PyExc_ValueError,
                     "argument '%s' must have %d dimensions (%d axes + %d data dimensions), got %d",
                     s->name, want, field_naxes(s), s->ndata, PyArray_NDIM(a));
        return false;
    }
    if (!validate) return true;
    if (PyArray_TYPE(a) != npy_type_of(s->dtype) || !PyArray_ISNOTSWAPPED(a)) {
        PyObject *r = PyObject_Str((PyObject *)PyArray_DESCR(a));
        PyErr_Format(PyExc_TypeError,
                     "argument '%s' has dtype %s but the stencil declares %s (no implicit cast)",
                     s->name, r ? PyUnicode_AsUTF8(r) : "?", dtype_name(s->dtype));
        Py_XDECREF(r);
        return false;
    }
    for (int d = 0; d < s->ndata; d++)
        if (PyArray_DIM(a, field_naxes(s) + d) != s->data_dims[d]) {
            PyErr_Format(PyExc_ValueError,
                         "argument '%s': data dimension %d has size %zd, the stencil declares %d",
                         s->name, d, (Py_ssize_t)PyArray_DIM(a, field_naxes(s) + d), s->data_dims[d]);
            return false;
        }
    int item = dtype_size(s->dtype);
    for (int d = 0; d < PyArray_NDIM(a); d++)
        if (PyArray_STRIDE(a, d) % item != 0) {
            PyErr_Format(PyExc_ValueError,
                         "argument '%s' has a stride (%zd bytes) that is not a multiple of its "
                         "item size",
                         s->name, (Py_ssize_t)PyArray_STRIDE(a, d));
            return false;
        }
    return true;
}

static bool parse_triple(PyObject *o, const char *what, const char *name, int n, int64_t *out) {
    PyObject *seq = PySequence_Fast(o, "");
    if (seq == NULL || PySequence_Fast_GET_SIZE(seq) != n) {
        Py_XDECREF(seq);
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s%s%s must be a tuple of %d integers", what,
                     name ? " of " : "", name ? name : "", n);
        return false;
    }
    for (int i = 0; i < n; i++) {
        PyObject *v = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
        long long x = v ? PyLong_AsLongLong(v) : -1;
        Py_XDECREF(v);
        if (x == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s%s%s must contain integers", what, name ? " of " : "",
                         name ? name : "");
            return false;
        }
        out[i] = x;
    }
    Py_DECREF(seq);
    return true;
}

/* Lowest K index (relative to the K origin) that an interval starting at the domain's
 * bottom reads: the default K origin must leave room for it. */
static int64_t default_k_halo(const Stencil *st) {
    int64_t h = 0;
    for (int i = 0; i < st->nkacc; i++) {
        const KAccess *k = &st->kacc[i];
        if (k->slot >= st->nfields || k->start.level != 0) continue;
        int64_t need = -(k->start.offset + k->dlo);
        if (need > h) h = need;
    }
    return h;
}

/* Upper K halo needed at the top of the domain by field slot `slot` (or any, slot < 0). */
static int64_t upper_k_halo(const Stencil *st, int slot) {
    int64_t h = 0;
    for (int i = 0; i < st->nkacc; i++) {
        const KAccess *k = &st->kacc[i];
        if (k->slot >= st->nfields || (slot >= 0 && k->slot != slot) || k->end.level != 1) continue;
        int64_t need = k->end.offset + k->dhi;
        if (need > h) h = need;
    }
    return h;
}

static bool resolve_origins(const Stencil *st, PyObject *origin, Bound *b) {
    /* Default: one origin for every field, the largest halo any field needs. */
    int64_t def[3] = {0, 0, default_k_halo(st)};
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !s->has_access) continue;
        for (int a = 0; a < 2; a++)
            if (-s->access.lo[a] > def[a]) def[a] = -s->access.lo[a];
    }
    PyObject *all = NULL;
    if (origin && origin != Py_None && !PyDict_Check(origin)) {
        if (!parse_triple(origin, "origin", NULL, 3, def)) return false;
    } else if (origin && PyDict_Check(origin)) {
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (PyDict_Next(origin, &pos, &key, &val)) {
            const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
            if (k == NULL) {
                PyErr_SetString(PyExc_TypeError, "origin keys must be argument names");
                return false;
            }
            if (strcmp(k, "_all_") == 0) {
                all = val;
                continue;
            }
            const Symbol *s = stencil_lookup(st, k);
            if (s == NULL || s->kind != SYM_FIELD) {
                PyErr_Format(PyExc_ValueError, "origin given for '%s', which is not a field argument", k);
                return false;
            }
        }
        if (all && !parse_triple(all, "origin", "'_all_'", 3, def)) return false;
    }
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD) continue;
        memcpy(b->origin[i], def, sizeof def);
        PyObject *own = origin && PyDict_Check(origin) ? PyDict_GetItemString(origin, s->name) : NULL;
        if (own == NULL) continue;
        Py_ssize_t n = PySequence_Check(own) ? PySequence_Size(own) : -1;
        if (n == 3) {
            if (!parse_triple(own, "origin", s->name, 3, b->origin[i])) return false;
        } else {
            /* the field's own axes only, e.g. (i, j) for an IJ field */
            int64_t v[3];
            if (!parse_triple(own, "origin", s->name, field_naxes(s), v)) return false;
            for (int a = 0, d = 0; a < 3; a++)
                if (s->axes & (1 << a)) b->origin[i][a] = v[d++];
        }
    }
    return true;
}

static bool resolve_domain(const Stencil *st, PyObject *domain, Bound *b) {
    if (domain && domain != Py_None) {
        if (!parse_triple(domain, "domain", NULL, 3, b->domain)) return false;
        for (int a = 0; a < 3; a++)
            if (b->domain[a] < 0) {
                PyErr_Format(PyExc_ValueError, "domain (%lld, %lld, %lld) has a negative size",
                             (long long)b->domain[0], (long long)b->domain[1], (long long)b->domain[2]);
                return false;
            }
        return true;
    }
    /* Default: the largest domain that fits every field. */
    bool have[3] = {false, false, false};
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD) continue;
        PyArrayObject *arr = (PyArrayObject *)b->value[i];
        for (int a = 0; a < 3; a++) {
            int d = field_dim_of(s, a);
            if (d < 0) continue;
            int64_t upper = a < 2 ? (s->has_access ? s->access.hi[a] : 0) : upper_k_halo(st, s->slot);
            int64_t n = PyArray_DIM(arr, d) - b->origin[i][a] - upper;
            if (!have[a] || n < b->domain[a]) b->domain[a] = n;
            have[a] = true;
        }
    }
    for (int a = 0; a < 3; a++) {
        if (!have[a]) {
            PyErr_Format(PyExc_ValueError,
                         "no field has a%s %c axis: pass domain= explicitly", a == 0 ? "n" : "",
                         "IJK"[a]);
            return false;
        }
        if (b->domain[a] < 0) b->domain[a] = 0;
    }
    return true;
}

static bool fits(const Stencil *st, const Symbol *s, PyArrayObject *arr, const int64_t *o,
                 const int64_t *n) {
    for (int a = 0; a < 2; a++) {
        int d = field_dim_of(s, a);
        if (d < 0 || !s->has_access || n[0] == 0 || n[1] == 0 || n[2] == 0) continue;
        int64_t lo = o[a] + s->access.lo[a], hi = o[a] + n[a] + s->access.hi[a];
        if (lo < 0 || hi > PyArray_DIM(arr, d)) {
            PyErr_Format(PyExc_ValueError,
                         "argument '%s': origin %lld + domain %lld along %c with the stencil's "
                         "extent <%d, %d> needs indices %lld..%lld, but the array has size %zd",
                         s->name, (long long)o[a], (long long)n[a], "IJK"[a], s->access.lo[a],
                         s->access.hi[a], (long long)lo, (long long)hi - 1,
                         (Py_ssize_t)PyArray_DIM(arr, d));
            return false;
        }
    }
    int d = field_dim_of(s, 2);
    if (d < 0 || n[0] == 0 || n[1] == 0) return true;
    for (int i = 0; i < st->nkacc; i++) {
        const KAccess *k = &st->kacc[i];
        if (k->slot != s->slot) continue;
        int64_t ks = k->start.level ? n[2] + k->start.offset : k->start.offset;
        int64_t ke = k->end.level ? n[2] + k->end.offset : k->end.offset;
        if (ks >= ke) continue;
        int64_t lo = o[2] + ks + k->dlo, hi = o[2] + ke - 1 + k->dhi;
        if (lo < 0 || hi >= PyArray_DIM(arr, d)) {
            PyErr_Format(PyExc_ValueError,
                         "argument '%s': origin %lld + domain %lld along K with K offsets <%d, %d> "
                         "needs levels %lld..%lld, but the array has %zd",
                         s->name, (long long)o[2], (long long)n[2], k->dlo, k->dhi, (long long)lo,
                         (long long)hi, (Py_ssize_t)PyArray_DIM(arr, d));
            return false;
        }
    }
    return true;
}

/* Byte range [lo, hi) spanned by an array. */
static void byte_span(PyArrayObject *a, char **lo, char **hi) {
    char *p = PyArray_BYTES(a), *l = p, *h = p + PyArray_ITEMSIZE(a);
    for (int d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp ext = (PyArray_DIM(a, d) - 1) * PyArray_STRIDE(a, d);
        if (PyArray_DIM(a, d) == 0) {
            *lo = *hi = p;
            return;
        }
        if (ext < 0) l += ext;
        else h += ext;
    }
    *lo = l;
    *hi = h;
}

/* Whether fields s (array a, origin oa) and t (array b, origin ob) put every point (i, j, k)
 * and data index at the same address: same item size, same strides, same origin element. */
static bool same_points(const Symbol *s, PyArrayObject *a, const int64_t *oa, const Symbol *t,
                        PyArrayObject *b, const int64_t *ob) {
    if (s->axes != t->axes || PyArray_NDIM(a) != PyArray_NDIM(b) ||
        PyArray_ITEMSIZE(a) != PyArray_ITEMSIZE(b))
        return false;
    for (int d = 0; d < PyArray_NDIM(a); d++)
        if (PyArray_DIM(a, d) > 1 && PyArray_DIM(b, d) > 1 && PyArray_STRIDE(a, d) != PyArray_STRIDE(b, d))
            return false;
    char *pa = PyArray_BYTES(a), *pb = PyArray_BYTES(b);
    for (int ax = 0; ax < 3; ax++) {
        int d = field_dim_of(s, ax);
        if (d < 0) continue;
        pa += oa[ax] * PyArray_STRIDE(a, d);
        pb += ob[ax] * PyArray_STRIDE(b, d);
    }
    return pa == pb;
}

/* Two fields passed overlapping memory (byte spans intersect, np.may_share_memory's
 * conservative test) break the parallel model through the alias when both are written, when
 * the written one is seen by the other at other positions, or when the other is read around
 * each point (a horizontal read extent, rule 1) or at another K level in a PARALLEL
 * computation. The same array for an input read at zero offset and an output is a point-wise
 * update and is allowed. */
static bool check_aliasing(const Stencil *st, Bound *b) {
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *w = st->params[i];
        if (w->kind != SYM_FIELD || !w->written) continue;
        PyArrayObject *wa = (PyArrayObject *)b->value[i];
        char *wl = b->span_lo[i], *wh = b->span_hi[i];
        for (int j = 0; j < st->nparams; j++) {
            const Symbol *r = st->params[j];
            if (j == i || r->kind != SYM_FIELD || !(r->written || r->read)) continue;
            if (r->written && j < i) continue; /* the pair was seen the other way round */
            PyArrayObject *ra = (PyArrayObject *)b->value[j];
            if (!(b->span_lo[j] < wh && wl < b->span_hi[j])) continue;
            const int *h = r->read_hext;
            const char *why = NULL;
            char buf[160];
            if (r->written) {
                why = "both are written by the stencil";
            } else if (!same_points(w, wa, b->origin[i], r, ra, b->origin[j])) {
                why = "they overlap at different positions, so a point of the second may read a "
                      "value the stencil wrote for another point";
            } else if (h[0] || h[1] || h[2] || h[3]) {
                snprintf(buf, sizeof buf,
                         "the first is written while the second is read with a horizontal offset "
                         "(extent <%d, %d> in I, <%d, %d> in J)",
                         h[0], h[1], h[2], h[3]);
                why = buf;
            } else if (r->kread_parallel) {
                why = "the first is written while the second is read at another K level in a "
                      "PARALLEL computation";
            }
            if (why == NULL) continue; /* the same points, read at zero offset: point-wise update */
            PyErr_Format(PyExc_ValueError,
                         "arguments '%s' and '%s' share memory: %s; the result would depend on the "
                         "order of execution, so pass separate arrays (for example a copy of '%s')",
                         w->name, r->name, why, r->name);
            return false;
        }
    }
    return true;
}

/* Each field's byte span, and whether a written field's span meets another field's: then the
 * kernel may not treat their pointers as `noalias` (codegen.h). Every call, validate_args or
 * not (an in-place update is legal and must stay right); check_aliasing reuses the spans. */
static void note_shared_memory(const Stencil *st, Bound *b) {
    b->shared = false;
    for (int i = 0; i < st->nparams; i++)
        if (st->params[i]->kind == SYM_FIELD)
            byte_span((PyArrayObject *)b->value[i], &b->span_lo[i], &b->span_hi[i]);
    for (int i = 0; i < st->nparams && !b->shared; i++) {
        if (st->params[i]->kind != SYM_FIELD || !st->params[i]->written) continue;
        for (int j = 0; j < st->nparams && !b->shared; j++)
            b->shared = j != i && st->params[j]->kind == SYM_FIELD &&
                        b->span_lo[j] < b->span_hi[i] && b->span_lo[i] < b->span_hi[j];
    }
}

bool bind_all(ModuleObject *m, PyObject *args, PyObject *kwargs, Bound *b) {
    const Stencil *st = m->st;
    PyObject *origin, *domain;
    if (!bind_args(st, args, kwargs, b, &origin, &domain)) return false;
    for (int i = 0; i < st->nparams; i++)
        if (st->params[i]->kind == SYM_FIELD && !check_field(st->params[i], b->value[i], b->validate))
            return false;
    if (!resolve_origins(st, origin, b) || !resolve_domain(st, domain, b)) return false;
    if (b->domain[0] && b->domain[1] && b->domain[2] && b->domain[2] < st->min_k_levels) {
        PyErr_Format(PyExc_ValueError,
                     "the domain has %lld K levels but the stencil's intervals need at least %d",
                     (long long)b->domain[2], st->min_k_levels);
        return false;
    }
    note_shared_memory(st, b);
    if (!b->validate) return true;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD) continue;
        PyArrayObject *arr = (PyArrayObject *)b->value[i];
        if (!fits(st, s, arr, b->origin[i], b->domain)) return false;
        if (s->written && !PyArray_ISWRITEABLE(arr)) {
            PyErr_Format(PyExc_ValueError, "argument '%s' is written by the stencil but is read-only",
                         s->name);
            return false;
        }
    }
    return check_aliasing(st, b) && kbounds_check(st, b->value, b->origin, b->domain);
}

/* ---- scalars ------------------------------------------------------------------------ */

bool scalar_value(const Symbol *s, PyObject *o, char *slot) {
    if (PyArray_Check(o) && PyArray_NDIM((PyArrayObject *)o) > 0) goto bad;
    if (dtype_is_float(s->dtype)) {
        if (PyUnicode_Check(o) || PyBytes_Check(o) || o == Py_None) goto bad;
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) goto bad;
        if (s->dtype == DT_FLOAT32) {
            float f = (float)v;
            memcpy(slot, &f, sizeof f);
        } else {
            memcpy(slot, &v, sizeof v);
        }
        return true;
    }
    if (s->dtype == DT_BOOL) {
        int t = PyObject_IsTrue(o);
        if (t < 0 || o == Py_None || PyUnicode_Check(o)) goto bad;
        slot[0] = (char)t;
        return true;
    }
    PyObject *idx = PyNumber_Index(o);
    if (idx == NULL) goto bad;
    long long v = PyLong_AsLongLong(idx);
    Py_DECREF(idx);
    if (v == -1 && PyErr_Occurred()) goto bad;
    if (s->dtype == DT_INT32) {
        if (v < INT32_MIN || v > INT32_MAX) {
            PyErr_Format(PyExc_OverflowError, "argument '%s' (%lld) does not fit in int32", s->name, v);
            return false;
        }
        int32_t x = (int32_t)v;
        memcpy(slot, &x, sizeof x);
    } else {
        int64_t x = v;
        memcpy(slot, &x, sizeof x);
    }
    return true;
bad:
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "argument '%s' must be a %s scalar (got %s)", s->name,
                 dtype_name(s->dtype), Py_TYPE(o)->tp_name);
    return false;
}

/* ---- running ------------------------------------------------------------------------ */

/* How the call ran (cpu): layout class, kernel variant, threads, tiles and each temporary's
 * buffer (a tile buffer or one column bundle's; whether its first interior point is on a
 * 64-byte boundary). For tuning and for tests of the plan. */
static PyObject *plan_info(const ModuleObject *m, const Plan *p, CpuVariant variant) {
    static const char *layouts[] = {"C", "F", "generic"};
    const Stencil *st = m->st;
    PyObject *temps = PyDict_New();
    if (temps == NULL) return NULL;
    for (int t = 0; t < st->ntemps && p; t++) {
        const Symbol *s = st->temps[t];
        if (!s->has_access) continue;
        uintptr_t at = (uintptr_t)p->ptrs[s->slot];
        PyObject *e = Py_BuildValue("{s:s,s:O}", "buffer",
                                    cpu_bundle_buffer(st, s, p->layout) ? "bundle" : "tile",
                                    "aligned", at % 64 == 0 ? Py_True : Py_False);
        if (e == NULL || PyDict_SetItemString(temps, s->name, e) < 0) {
            Py_XDECREF(e);
            Py_DECREF(temps);
            return NULL;
        }
        Py_DECREF(e);
    }
    return Py_BuildValue("{s:s,s:O,s:i,s:(LL),s:N}", "layout", layouts[variant.layout],
                         "shared_memory", variant.shared ? Py_True : Py_False, "threads",
                         p ? p->nthreads : 1, "tile", (long long)(p ? p->ti : 0),
                         (long long)(p ? p->tj : 0), "temporaries", temps);
}

static bool fill_exec_info(ModuleObject *m, PyObject *info, double t0, double t1, double t2,
                           const Plan *plan, CpuVariant variant) {
    PyObject *v;
#define SET(key, expr)                                                                             \
    if ((v = (expr)) == NULL || PyDict_SetItemString(info, key, v) < 0) {                          \
        Py_XDECREF(v);                                                                             \
        return false;                                                                              \
    }                                                                                              \
    Py_DECREF(v);
    SET("call_start_time", PyFloat_FromDouble(t0));
    SET("run_start_time", PyFloat_FromDouble(t1));
    SET("run_end_time", PyFloat_FromDouble(t2));
    SET("call_end_time", PyFloat_FromDouble(call_now()));
    SET("run_time", PyFloat_FromDouble(t2 - t1));
    SET("module_source", PyUnicode_FromString(m->origin_of_code ? m->origin_of_code : "build"));
    SET("build_time", PyFloat_FromDouble(m->build_seconds));
    SET("backend", PyUnicode_FromString(m->backend == BACKEND_CPU ? "cpu" : "numpy"));
    if (m->backend == BACKEND_CPU) SET("plan", plan_info(m, plan, variant));
#undef SET
    return true;
}

/* One call's work: tiles handed out to the pool's threads through an atomic counter. */
typedef struct Job {
    GtKernelFn kernel;
    const Plan *plan;
    const int64_t *domain;
    const char *scalars;
    int64_t next_tile;
    unsigned long sigint_mark; /* interrupt.h: stop taking tiles after a Ctrl-C */
} Job;

static bool tiles_left(void *ctx) {
    const Job *job = ctx;
    return __atomic_load_n(&job->next_tile, __ATOMIC_RELAXED) < job->plan->nti * job->plan->ntj;
}

static void run_tiles(void *ctx, int worker) {
    Job *job = ctx;
    const Plan *p = job->plan;
    char **ptrs = p->ptrs + (size_t)worker * (size_t)p->nslots;
    const int64_t *strides = p->strides + (size_t)worker * (size_t)p->nslots * GT_STRIDES;
    int64_t ntiles = p->nti * p->ntj;
    /* a tile is claimed only when it will run, so the tiles left after an interrupt are
     * exactly those from next_tile on */
    while (!interrupt_since(job->sigint_mark)) {
        int64_t t = __atomic_fetch_add(&job->next_tile, 1, __ATOMIC_RELAXED);
        if (t >= ntiles) break;
        int64_t ti = t / p->ntj, tj = t % p->ntj;
        int64_t tile[4] = {ti * p->ti, (ti + 1) * p->ti, tj * p->tj, (tj + 1) * p->tj};
        if (tile[1] > job->domain[0]) tile[1] = job->domain[0];
        if (tile[3] > job->domain[1]) tile[3] = job->domain[1];
        job->kernel(ptrs, strides, job->domain, job->scalars, tile);
    }
}

/* The plan for this domain: the stencil's cached one when it fits and no other thread is
 * using it, else a new one (which becomes the cached one if the slot is free). */
static Plan *acquire_plan(ModuleObject *m, const int64_t *domain, CpuLayout layout, bool *owned) {
    *owned = false;
    if (__atomic_exchange_n(&m->plan_busy, 1, __ATOMIC_ACQUIRE) == 0) {
        if (plan_fits(m->plan, domain, layout)) return m->plan;
        plan_free(m->plan);
        m->plan = plan_new(m->st, domain, layout);
        if (m->plan == NULL) __atomic_store_n(&m->plan_busy, 0, __ATOMIC_RELEASE);
        return m->plan;
    }
    *owned = true;
    return plan_new(m->st, domain, layout);
}

/* The layout class of this call's arrays (see codegen.h): K unit-stride everywhere, else I
 * unit-stride everywhere, else generic. */
static CpuLayout classify_layout(const Stencil *st, const Bound *b) {
    bool k_unit = true, i_unit = true;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD) continue;
        PyArrayObject *arr = (PyArrayObject *)b->value[i];
        npy_intp item = dtype_size(s->dtype);
        int dk = field_dim_of(s, 2), di = field_dim_of(s, 0);
        if (dk >= 0 && PyArray_STRIDE(arr, dk) != item) k_unit = false;
        if (di >= 0 && PyArray_STRIDE(arr, di) != item) i_unit = false;
    }
    return k_unit ? LAYOUT_K_UNIT : i_unit ? LAYOUT_I_UNIT : LAYOUT_GENERIC;
}

static void release_plan(ModuleObject *m, Plan *p, bool owned) {
    if (owned) plan_free(p);
    else __atomic_store_n(&m->plan_busy, 0, __ATOMIC_RELEASE);
}

PyObject *call_stencil(ModuleObject *m, PyObject *args, PyObject *kwargs) {
    double t0 = call_now();
    const Stencil *st = m->st;
    if (st->nparams > 256) {
        PyErr_SetString(PyExc_ValueError, "stencils take at most 256 arguments");
        return NULL;
    }
    Bound b;
    if (!bind_all(m, args, kwargs, &b)) return NULL;
    CpuLayout layout = classify_layout(st, &b);
    CpuVariant variant = {layout, b.shared};
    GtKernelFn kernel = module_kernel(m, variant);
    if (kernel == NULL) return NULL;
    char scalars[8 * 256];
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind == SYM_SCALAR && !scalar_value(s, b.value[i], scalars + 8 * s->slot)) return NULL;
    }
    if (b.domain[0] == 0 || b.domain[1] == 0 || b.domain[2] == 0) {
        double t = call_now();
        if (b.exec_info && !fill_exec_info(m, b.exec_info, t0, t, t, NULL, variant)) return NULL;
        Py_RETURN_NONE;
    }
    bool owned;
    Plan *plan = acquire_plan(m, b.domain, layout, &owned);
    if (plan == NULL) return NULL;
    /* Argument fields: the element at the origin and element strides, in every thread's
     * table (the temporaries' entries were filled when the plan was made). */
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD) continue;
        PyArrayObject *arr = (PyArrayObject *)b.value[i];
        int item = dtype_size(s->dtype);
        char *ptr = PyArray_BYTES(arr);
        int64_t sv[GT_STRIDES] = {0};
        for (int a = 0; a < 3; a++) {
            int d = field_dim_of(s, a);
            if (d < 0) continue;
            sv[a] = PyArray_STRIDE(arr, d) / item;
            ptr += b.origin[i][a] * PyArray_STRIDE(arr, d);
        }
        for (int d = 0; d < s->ndata; d++) sv[3 + d] = PyArray_STRIDE(arr, field_naxes(s) + d) / item;
        for (int w = 0; w < plan->nthreads; w++) {
            plan->ptrs[(size_t)w * (size_t)plan->nslots + (size_t)s->slot] = ptr;
            memcpy(plan->strides + ((size_t)w * (size_t)plan->nslots + (size_t)s->slot) * GT_STRIDES,
                   sv, sizeof sv);
        }
    }
    Job job = {kernel, plan, b.domain, scalars, 0, 0};
    double t1 = call_now();
    if (!interrupt_run(run_tiles, &job, plan->nthreads, &job.sigint_mark, tiles_left)) {
        release_plan(m, plan, owned); /* KeyboardInterrupt: the outputs hold a partial result */
        return NULL;
    }
    double t2 = call_now();
    bool ok = b.exec_info == NULL || fill_exec_info(m, b.exec_info, t0, t1, t2, plan, variant);
    release_plan(m, plan, owned);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

PyObject *call_bind(ModuleObject *m, PyObject *args, PyObject *kwargs) {
    const Stencil *st = m->st;
    if (st->nparams > 256) {
        PyErr_SetString(PyExc_ValueError, "stencils take at most 256 arguments");
        return NULL;
    }
    Bound b;
    if (!bind_all(m, args, kwargs, &b)) return NULL;
    PyObject *fields = PyDict_New(), *scalars = PyDict_New();
    if (fields == NULL || scalars == NULL) goto fail;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind == SYM_SCALAR) {
            char slot[8] = {0};
            if (!scalar_value(s, b.value[i], slot)) goto fail;
            if (PyDict_SetItemString(scalars, s->name, b.value[i]) < 0) goto fail;
            continue;
        }
        const int64_t *o = b.origin[i];
        PyObject *entry = Py_BuildValue("(O(LLL))", b.value[i], (long long)o[0], (long long)o[1],
                                        (long long)o[2]);
        if (entry == NULL || PyDict_SetItemString(fields, s->name, entry) < 0) {
            Py_XDECREF(entry);
            goto fail;
        }
        Py_DECREF(entry);
    }
    return Py_BuildValue("(NN(LLL)O)", fields, scalars, (long long)b.domain[0],
                         (long long)b.domain[1], (long long)b.domain[2],
                         b.exec_info ? b.exec_info : Py_None);
fail:
    Py_XDECREF(fields);
    Py_XDECREF(scalars);
    return NULL;
}
