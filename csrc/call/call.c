/*
 * Calling a stencil. Everything a call needs is checked here, in C, before any data is
 * touched: argument binding, dtypes and shapes against the annotations, origin + domain +
 * access extents against every array, writability and aliasing. Then the kernel runs on
 * base pointers and element strides with the GIL released.
 */
#include "call/call.h"
#include "call/alias_check.h"
#include "call/arrays.h"
#include "call/named_dims.h"
#include "call/exec_info.h"
#include "call/gregion.h"
#include "call/ibounds.h"
#include "call/ints.h"
#include "call/interrupt.h"
#include "call/pool.h"
#include "call/kbounds.h"
#include "call/unused.h"

#include "backend/cpu/blocks.h"
#include "backend/cpu/jit.h"
#include "call/machine.h"
#include "call/plan.h"
#include "call/tune.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL gtscript_ARRAY_API
#include <numpy/arrayobject.h>

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

int call_npy_type(DType t) {
    switch (t) {
    case DT_BOOL: return NPY_BOOL;
    case DT_INT8: return NPY_INT8;
    case DT_INT16: return NPY_INT16;
    case DT_INT32: return NPY_INT32;
    case DT_INT64: return NPY_INT64;
    case DT_FLOAT32: return NPY_FLOAT32;
    case DT_FLOAT64: return NPY_FLOAT64;
    default: return -1;
    }
}

/* ---- binding ------------------------------------------------------------------------ */

static bool is_option(const char *k) {
    /* by the first letter: most keywords are field names, and this runs for each of them on
     * every call (six strcmp per keyword measured as ~100 instructions per call) */
    switch (k[0]) {
    case 'o': return strcmp(k, "origin") == 0;
    case 'd': return strcmp(k, "domain") == 0;
    case 'v': return strcmp(k, "validate_args") == 0;
    case 'e': return strcmp(k, "exec_info") == 0;
    case 'g': return strcmp(k, "global_origin") == 0 || strcmp(k, "global_domain") == 0;
    default: return false;
    }
}

static bool bind_args(const ModuleObject *m, PyObject *args, PyObject *kwargs, Bound *b,
                      PyObject **origin, PyObject **domain, PyObject **global) {
    const Stencil *st = m->st;
    Py_ssize_t npos = PyTuple_GET_SIZE(args);
    if (npos > st->nparams) {
        PyErr_Format(PyExc_TypeError, "%s() takes %d positional arguments but %zd were given",
                     st->name, st->nparams, npos);
        return false;
    }
    for (int i = 0; i < st->nparams; i++) b->value[i] = i < npos ? PyTuple_GET_ITEM(args, i) : NULL;
    *origin = *domain = global[0] = global[1] = NULL;
    b->validate = true;
    b->exec_info = NULL;
    if (kwargs) {
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kwargs, &pos, &key, &val)) {
            const char *k = PyUnicode_AsUTF8(key);
            if (k == NULL) { /* a lone surrogate: no parameter or option has that name */
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", st->name,
                             key);
                return false;
            }
            if (strcmp(k, "stream") == 0) { /* the cuda call path takes it out before binding */
                PyErr_Format(PyExc_TypeError, "%s(): only the cuda backend takes stream=", st->name);
                return false;
            }
            if (is_option(k)) {
                if (k[0] == 'g') global[k[7] == 'd'] = val; /* global_origin, global_domain */
                else if (k[0] == 'o') *origin = val;
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
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        bool by_default = b->value[i] == NULL && s->kind == SYM_SCALAR && m->defaults;
        if (by_default) b->value[i] = PyDict_GetItemString(m->defaults, s->name); /* borrowed */
        /* GT4Py's convention: a parameter the stencil does not use may be None or left out,
         * and any other value is neither checked nor touched (unused.h) */
        if (b->value[i] == Py_None && !param_used(s)) b->value[i] = NULL;
        if (b->value[i] != NULL && !param_used(s)) {
            if (!unused_arg_note(st, s, b->value[i])) return false;
            b->value[i] = NULL;
        }
        if (b->value[i] == Py_None && by_default) { /* a None default, which is no value */
            PyErr_Format(PyExc_TypeError,
                         "%s() missing required argument '%s' (its default, None, is no value: "
                         "pass one where the stencil uses it)",
                         st->name, s->name);
            return false;
        }
        if (b->value[i] == NULL && param_used(s)) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", st->name, s->name);
            return false;
        }
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
    if (PyArray_TYPE(a) != call_npy_type(s->dtype) || !PyArray_ISNOTSWAPPED(a))
        return dtype_refusal(s, o, false);
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

/* A tuple of n integers for keyword `what` (of argument `name`, or NULL). */
static bool parse_triple(PyObject *o, const char *what, const char *name, int n, int64_t *out) {
    char shape[32];
    snprintf(shape, sizeof shape, "a tuple of %d integers", n);
    return call_ints(o, n, n, what, name, shape, out, NULL);
}

/* Lowest K index (relative to the K origin) that an interval starting at the domain's
 * bottom reads: the default K origin must leave room for it. */
static int64_t default_k_halo(const Stencil *st) {
    int64_t h = 0;
    for (int i = 0; i < st->nkacc; i++) {
        const KAccess *k = &st->kacc[i];
        /* a run-time start is only known at the call: the extent check reports it */
        if (k->slot >= st->nfields || k->start.level != 0 || k->start.sym) continue;
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
        if (k->slot >= st->nfields || (slot >= 0 && k->slot != slot) || k->end.level != 1 ||
            k->end.sym)
            continue;
        int64_t need = k->end.offset + k->dhi;
        if (need > h) h = need;
    }
    return h;
}

/* The origin of each field: its own entry of an origin dict, else the dict's "_all_" or a
 * tuple origin, else its array's __gt_origin__ (has_own[i]), else the default: the largest
 * lower halo any field needs, so that one origin fits every field (GT4Py's order, with
 * gtscript's default instead of zero). */
static bool resolve_origins(const Stencil *st, PyObject *origin, Bound *b, const bool *has_own,
                            const int64_t (*own_origin)[3]) {
    int64_t def[3] = {0, 0, default_k_halo(st)};
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !s->has_access) continue;
        for (int a = 0; a < 2; a++)
            if (-s->access.lo[a] > def[a]) def[a] = -s->access.lo[a];
    }
    PyObject *all = NULL;
    if (origin && origin != Py_None && !PyDict_Check(origin)) {
        all = origin;
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
        memcpy(b->origin[i], all == NULL && has_own[i] ? own_origin[i] : def, sizeof def);
        PyObject *own = origin && PyDict_Check(origin) ? PyDict_GetItemString(origin, s->name) : NULL;
        if (own == NULL) continue;
        Py_ssize_t n = PySequence_Check(own) ? PySequence_Size(own) : -1;
        if (n == 3) {
            if (!parse_triple(own, "origin", s->name, 3, b->origin[i])) return false;
        } else {
            /* the field's own axes only, e.g. (i, j) for an IJ field; or, as exec_info reports
             * it (GT4Py's form), followed by a zero per data dimension */
            int naxes = field_naxes(s), nall = n == naxes + s->ndata ? (int)n : naxes;
            int64_t v[3 + GT_MAX_DATA_DIMS];
            if (!parse_triple(own, "origin", s->name, nall, v)) return false;
            for (int d = naxes; d < nall; d++)
                if (v[d] != 0) {
                    PyErr_Format(PyExc_ValueError,
                                 "origin of %s: the entries for its data dimensions must be 0",
                                 s->name);
                    return false;
                }
            for (int a = 0, d = 0; a < 3; a++)
                if (s->axes & (1 << a)) b->origin[i][a] = v[d++];
        }
    }
    return true;
}

/* Upper extent of field s along axis a: the points the stencil reads beyond the domain. */
static int64_t upper_extent(const Stencil *st, const Symbol *s, int a) {
    return a < 2 ? s->access.hi[a] : upper_k_halo(st, s->slot);
}

/* Whether field i takes part in the default domain: passed, and read or written. */
static bool sizes_domain(const Stencil *st, const Bound *b, int i) {
    const Symbol *s = st->params[i];
    return s->kind == SYM_FIELD && bound_present(b, i) && s->has_access;
}

/* A tuple of n integers as Python writes it, into sb. */
static void sb_tuple(StrBuf *sb, const int64_t *v, int n) {
    sb_puts(sb, "(");
    for (int d = 0; d < n; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)v[d]);
    sb_puts(sb, n == 1 ? ",)" : ")");
}

static void sb_shape(StrBuf *sb, PyArrayObject *arr) {
    int64_t v[NPY_MAXDIMS];
    for (int d = 0; d < PyArray_NDIM(arr); d++) v[d] = PyArray_DIM(arr, d);
    sb_tuple(sb, v, PyArray_NDIM(arr));
}

/* "'name' of shape (...) from origin (...)" for every field that sizes the domain. */
static void describe_fields(const Stencil *st, const Bound *b, StrBuf *sb) {
    for (int i = 0, n = 0; i < st->nparams; i++) {
        if (!sizes_domain(st, b, i)) continue;
        const Symbol *s = st->params[i];
        int64_t o[3];
        for (int a = 0, d = 0; a < 3; a++)
            if (s->axes & (1 << a)) o[d++] = b->origin[i][a];
        sb_printf(sb, "%s'%s' of shape ", n++ ? ", " : "", s->name);
        sb_shape(sb, (PyArrayObject *)b->value[i]);
        sb_puts(sb, " from origin ");
        sb_tuple(sb, o, field_naxes(s));
    }
}

/* Field i's array along axis a (one it has): its room from its origin, and the domain that
 * leaves (less what the stencil reads beyond the domain); false when either overflows. */
static bool field_room(const Stencil *st, const Bound *b, int i, int a, int64_t *room,
                       int64_t *size) {
    const Symbol *s = st->params[i];
    return !__builtin_sub_overflow((int64_t)PyArray_DIM((PyArrayObject *)b->value[i],
                                                        field_dim_of(s, a)),
                                   b->origin[i][a], room) &&
           !__builtin_sub_overflow(*room, upper_extent(st, s, a), size);
}

/* The second fix of arrays that disagree in size along axis a, into sb: "fix the shape of
 * 'b'" for the odd one out (the one array whose size differs when all the others agree),
 * "... of 'a' or of 'b'" for two arrays, else "give the arrays shapes that agree". */
static void shape_fix(const Stencil *st, const Bound *b, int a, StrBuf *sb) {
    int n = 0, odd = -1, first = -1, second = -1;
    for (int i = 0; i < st->nparams; i++) {
        int64_t room, size, other;
        if (!sizes_domain(st, b, i) || field_dim_of(st->params[i], a) < 0 ||
            !field_room(st, b, i, a, &room, &size))
            continue;
        if (n++ == 0) first = i;
        else if (n == 2) second = i;
        int same = 0;
        for (int j = 0; j < st->nparams; j++)
            if (j != i && sizes_domain(st, b, j) && field_dim_of(st->params[j], a) >= 0 &&
                field_room(st, b, j, a, &room, &other) && other == size)
                same++;
        if (same == 0) odd = odd == -1 ? i : -2; /* -2: more than one without a match */
    }
    if (n == 2)
        sb_printf(sb, "fix the shape of '%s' or of '%s'", st->params[first]->name,
                  st->params[second]->name);
    else if (odd >= 0)
        sb_printf(sb, "fix the shape of '%s'", st->params[odd]->name);
    else
        sb_puts(sb, "give the arrays shapes that agree");
}

static bool resolve_domain(const Stencil *st, PyObject *domain, Bound *b) {
    if (domain && domain != Py_None) {
        if (!parse_triple(domain, "domain", NULL, 3, b->domain)) return false;
        for (int a = 0; a < 3; a++)
            if (b->domain[a] <= 0) {
                PyErr_Format(PyExc_ValueError,
                             "domain (%lld, %lld, %lld) is empty along %c: every entry must be at "
                             "least 1 (a call computes at least one point)",
                             (long long)b->domain[0], (long long)b->domain[1],
                             (long long)b->domain[2], "IJK"[a]);
                return false;
            }
        return true;
    }
    /* Default: the largest domain that fits every field. Per axis, each field has `room`
     * points from its origin and leaves room - upper for the domain. Arrays whose room
     * differs in a way that changes the domain are ambiguous (which box did the caller
     * mean?): that is an error, not a silently smaller domain. */
    for (int a = 0; a < 3; a++) {
        bool have = false, rooms_differ = false, sizes_differ = false;
        int64_t room0 = 0, size0 = 0, best = 0;
        int limit = -1;
        for (int i = 0; i < st->nparams; i++) {
            if (!sizes_domain(st, b, i)) continue;
            const Symbol *s = st->params[i];
            if (field_dim_of(s, a) < 0) continue;
            int64_t room, size;
            if (!field_room(st, b, i, a, &room, &size)) {
                PyErr_Format(PyExc_ValueError, "origin %lld of '%s' along %c is out of range",
                             (long long)b->origin[i][a], s->name, "IJK"[a]);
                return false;
            }
            if (have) {
                rooms_differ = rooms_differ || room != room0;
                sizes_differ = sizes_differ || size != size0;
            } else {
                room0 = room, size0 = size;
            }
            if (!have || size < best) best = size, limit = i;
            have = true;
        }
        if (!have) { /* no field has this axis (an IJ-only stencil's K): one point, as in GT4Py */
            b->domain[a] = 1;
            continue;
        }
        if (rooms_differ && sizes_differ) {
            StrBuf sb = {0}, fix = {0};
            describe_fields(st, b, &sb);
            shape_fix(st, b, a, &fix);
            PyErr_Format(PyExc_ValueError,
                         "the arrays disagree in size along %c (%s), so the default domain would "
                         "leave part of some of them uncomputed: pass domain= to say which box to "
                         "compute, or %s",
                         "IJK"[a], sb.oom || sb.data == NULL ? "?" : sb.data,
                         fix.oom || fix.data == NULL ? "fix the shapes" : fix.data);
            sb_free(&sb);
            sb_free(&fix);
            return false;
        }
        if (best <= 0) {
            const Symbol *s = st->params[limit];
            PyArrayObject *arr = (PyArrayObject *)b->value[limit];
            int64_t need, up = upper_extent(st, s, a);
            StrBuf sb = {0};
            sb_shape(&sb, arr);
            if (__builtin_add_overflow(b->origin[limit][a], 1 + up, &need)) need = INT64_MAX;
            PyErr_Format(PyExc_ValueError,
                         "argument '%s' of shape %s is too small along %c for the stencil: from "
                         "origin %lld, with %lld point%s read beyond the domain, even a domain of "
                         "one point needs %lld points along %c; the compute domain would be empty",
                         s->name, sb.oom || sb.data == NULL ? "?" : sb.data, "IJK"[a],
                         (long long)b->origin[limit][a], (long long)up, up == 1 ? "" : "s",
                         (long long)need, "IJK"[a]);
            sb_free(&sb);
            return false;
        }
        b->domain[a] = best;
    }
    return true;
}

/* Every size the call derives from the domain (tiles, their count, buffers: plan.c) is at
 * most its number of points, so that number must fit in int64; arrays bound it when the
 * call is validated, but arrays with zero strides (np.broadcast_to) can be long, and
 * validate_args=False trusts the domain. */
static bool domain_countable(const int64_t *n) {
    int64_t points;
    if (__builtin_mul_overflow(n[0], n[1], &points) || __builtin_mul_overflow(points, n[2], &points)) {
        PyErr_Format(PyExc_ValueError, "domain (%lld, %lld, %lld) has more than 2**63 - 1 points",
                     (long long)n[0], (long long)n[1], (long long)n[2]);
        return false;
    }
    return true;
}

/* Sets *out = a + b + c; false (with a ValueError) on overflow. */
static bool add3(int64_t a, int64_t b, int64_t c, int64_t *out, const Symbol *s) {
    if (__builtin_add_overflow(a, b, out) || __builtin_add_overflow(*out, c, out)) {
        PyErr_Format(PyExc_ValueError, "argument '%s': origin + domain is out of range", s->name);
        return false;
    }
    return true;
}

/* Whether every point field s is read or written at lies inside its array. The check is on
 * the offsets actually accessed (reach_lo/hi in I and J, the K ranges of kacc), so an origin
 * below zero is fine where only positive offsets are read. */
static bool fits(const Stencil *st, const Symbol *s, PyArrayObject *arr, const int64_t *kvals,
                 const int64_t *o, const int64_t *n, const int64_t *greach) {
    for (int a = 0; a < 2; a++) {
        int d = field_dim_of(s, a);
        if (d < 0 || !s->has_access) continue;
        /* per-region extents are exact from region_exact_domain points on; below, the
         * regions' edges may cross and only the extent ignoring regions is sure */
        bool plain = n[a] < st->region_exact_domain[a];
        int elo = s->reach_lo[a], ehi = s->reach_hi[a];
        if (plain && s->plain_hext[2 * a] < elo) elo = s->plain_hext[2 * a];
        if (plain && s->plain_hext[2 * a + 1] > ehi) ehi = s->plain_hext[2 * a + 1];
        int64_t lo, hi;
        if (greach) { /* the reach of this call's region placement (gregion.h) */
            if (__builtin_add_overflow(o[a], greach[2 * a], &lo) ||
                !add3(o[a], n[a], greach[2 * a + 1], &hi, s))
                return false;
            if (lo < 0 || hi > PyArray_DIM(arr, d)) {
                PyErr_Format(PyExc_ValueError,
                             "argument '%s': origin %lld + domain %lld along %c, with the stencil's "
                             "horizontal regions placed on the global grid (global_origin, "
                             "global_domain), reads indices %lld..%lld, but the array has size %zd",
                             s->name, (long long)o[a], (long long)n[a], "IJK"[a], (long long)lo,
                             (long long)hi - 1, (Py_ssize_t)PyArray_DIM(arr, d));
                return false;
            }
            continue;
        }
        if (!add3(o[a], elo, 0, &lo, s) || !add3(o[a], n[a], ehi, &hi, s)) return false;
        if (lo < 0 || hi > PyArray_DIM(arr, d)) {
            PyErr_Format(PyExc_ValueError,
                         "argument '%s': origin %lld + domain %lld along %c with the stencil's "
                         "extent <%d, %d> needs indices %lld..%lld, but the array has size %zd",
                         s->name, (long long)o[a], (long long)n[a], "IJK"[a], elo, ehi,
                         (long long)lo, (long long)hi - 1,
                         (Py_ssize_t)PyArray_DIM(arr, d));
            return false;
        }
    }
    int d = field_dim_of(s, 2);
    if (d < 0) return true;
    for (int i = 0; i < st->nkacc; i++) {
        const KAccess *k = &st->kacc[i];
        if (k->slot != s->slot) continue;
        /* run-time bounds were checked against the domain before (ibounds_check) */
        int64_t ks = bound_level(k->start, n[2], kvals), ke = bound_level(k->end, n[2], kvals);
        int64_t lo, hi;
        if (ks >= ke) continue;
        if (!add3(o[2], ks, k->dlo, &lo, s) || !add3(o[2], ke - 1, k->dhi, &hi, s)) return false;
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
 * computation, unless no read can see a value the call stored (alias_check.h). The same
 * array for an input read at zero offset and an output is a point-wise update and is
 * allowed. */
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
            if (!r->written && same_points(w, wa, b->origin[i], r, ra, b->origin[j])) {
                /* read around the point: fine where no read can see another value (a
                 * corner fill in place) */
                int free_order = alias_order_free(st, b, w, r);
                if (free_order < 0) return false;
                if (free_order) continue;
            }
            /* GT4Py runs such calls (its numpy backend as NumPy would, its compiled ones in
             * whatever order their loops take): say that refusing is deliberate */
            PyErr_Format(PyExc_ValueError,
                         "arguments '%s' and '%s' share memory: %s; the result would depend on the "
                         "order of execution, so pass separate arrays (for example a copy of '%s': "
                         "%s.copy()). gtscript refuses this call on purpose, unlike GT4Py, whose "
                         "result depends on the backend; see 'Differences from GT4Py' in "
                         "docs/parallel-model.md",
                         w->name, r->name, why, r->name, r->name);
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
        if (st->params[i]->kind == SYM_FIELD && bound_present(b, i) &&
            !array_byte_span(b->value[i], &b->span_lo[i], &b->span_hi[i])) {
            /* unaddressable (validation refuses it): assume it meets everything */
            b->span_lo[i] = (char *)0;
            b->span_hi[i] = (char *)UINTPTR_MAX;
        }
    for (int i = 0; i < st->nparams && !b->shared; i++) {
        if (st->params[i]->kind != SYM_FIELD || !st->params[i]->written) continue;
        for (int j = 0; j < st->nparams && !b->shared; j++)
            b->shared = j != i && st->params[j]->kind == SYM_FIELD && bound_present(b, j) &&
                        b->span_lo[j] < b->span_hi[i] && b->span_lo[i] < b->span_hi[j];
    }
}

void bound_release(Bound *b) {
    for (int i = 0; i < b->nparams; i++)
        if (b->owned[i]) Py_CLEAR(b->value[i]);
    b->nparams = 0;
    free(b->heap);
    b->heap = NULL;
}

/* Points b's tables at its inline storage, or at one heap block for n > GT_BOUND_INLINE
 * parameters (n <= GT_MAX_PARAMS: no size here can overflow). False with MemoryError. */
bool bound_tables(Bound *b, int n) {
    BoundTables *t = &b->in;
    if (n <= GT_BOUND_INLINE) {
        b->value = t->value, b->owned = t->owned, b->has_own = t->has_own;
        b->origin = t->origin, b->own_origin = t->own_origin, b->greach = t->greach;
        b->span_lo = t->span_lo, b->span_hi = t->span_hi, b->kvals = t->kvals;
        b->saved = t->saved, b->scalars = t->scalars;
        return true;
    }
    size_t m = (size_t)n; /* 8-byte entries first, the bools last: every table aligned */
    /* value, origin, own_origin, greach, the spans, kvals, saved, scalars (a word for each
     * scalar, the K flag, the loop watch, two words for each field, a checked interval
     * bound's column and level: at most 3m + 5) */
    size_t words = m + 3 * m + 3 * m + 4 * m + 2 * m + m + m + (3 * m + 5);
    char *p = malloc(8 * words + 2 * m /* owned, has_own */);
    if (p == NULL) {
        PyErr_NoMemory();
        return false;
    }
    b->heap = p;
    b->value = (PyObject **)p, p += 8 * m;
    b->origin = (int64_t(*)[3])p, p += 24 * m;
    b->own_origin = (int64_t(*)[3])p, p += 24 * m;
    b->greach = (int64_t(*)[4])p, p += 32 * m;
    b->span_lo = (char **)p, p += 8 * m;
    b->span_hi = (char **)p, p += 8 * m;
    b->kvals = (int64_t *)p, p += 8 * m;
    b->saved = (PyObject **)p, p += 8 * m;
    b->scalars = p, p += 8 * (3 * m + 5);
    b->owned = (bool *)p, p += m;
    b->has_own = (bool *)p;
    return true;
}

bool bind_all(ModuleObject *m, PyObject *args, PyObject *kwargs, Bound *b) {
    return bind_all_but_kbounds(m, args, kwargs, b) &&
           (!b->validate || kbounds_check(m->st, b->value, b->origin, b->domain, b->kvals));
}

bool bind_all_but_kbounds(ModuleObject *m, PyObject *args, PyObject *kwargs, Bound *b) {
    const Stencil *st = m->st;
    PyObject *origin, *domain, *global[2];
    b->nparams = 0;
    b->heap = NULL;
    if (st->nparams > GT_MAX_PARAMS) { /* ir_build refuses such a stencil: never reached */
        PyErr_Format(PyExc_ValueError, "stencils take at most %d arguments", (int)GT_MAX_PARAMS);
        return false;
    }
    if (!bound_tables(b, st->nparams) || !bind_args(m, args, kwargs, b, &origin, &domain, global) ||
        !named_dims_check(st, b))
        return false;
    bool *has_own = b->has_own;
    int64_t(*own_origin)[3] = b->own_origin;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        b->owned[i] = has_own[i] = false;
        b->nparams = i + 1;
        if (s->kind != SYM_FIELD || !bound_present(b, i)) continue;
        PyObject *arr = field_array(s, b->value[i], &has_own[i], own_origin[i]);
        if (arr == NULL) return false;
        b->value[i] = arr;
        b->owned[i] = true;
        if (!check_field(s, arr, b->validate)) return false;
    }
    if (!resolve_origins(st, origin, b, has_own, (const int64_t(*)[3])own_origin) ||
        !resolve_domain(st, domain, b) || !domain_countable(b->domain) ||
        !gregion_bind(st, global[0], global[1], b) ||
        !ibounds_check(st, b->value, b->domain, b->kvals))
        return false;
    if (b->domain[2] < st->min_k_levels) {
        PyErr_Format(PyExc_ValueError,
                     "the domain has %lld K levels but the stencil's intervals need at least %d",
                     (long long)b->domain[2], st->min_k_levels);
        return false;
    }
    if (b->domain[0] && b->domain[1] && b->domain[2] &&
        (b->domain[0] < st->region_min_domain[0] || b->domain[1] < st->region_min_domain[1])) {
        /* per-region extents assume the regions' edges do not cross; below this size they
         * would, and the extents (hence the bounds check) would no longer be exact */
        PyErr_Format(PyExc_ValueError,
                     "the domain is %lld x %lld in I and J, but the stencil's horizontal regions "
                     "need at least %d x %d points for its extents to hold",
                     (long long)b->domain[0], (long long)b->domain[1], st->region_min_domain[0],
                     st->region_min_domain[1]);
        return false;
    }
    /* a region placed away from the domain's edges reads what the analysis did not see */
    if (b->global && !gregion_reach(st, b, true)) return false;
    note_shared_memory(st, b);
    if (!b->validate) return true;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !bound_present(b, i)) continue;
        PyArrayObject *arr = (PyArrayObject *)b->value[i];
        if (!array_within_memory(s, b->value[i])) return false;
        if (!fits(st, s, arr, b->kvals, b->origin[i], b->domain, b->global ? b->greach[s->slot] : NULL))
            return false;
        if (s->written && !PyArray_ISWRITEABLE(arr)) {
            PyErr_Format(PyExc_ValueError, "argument '%s' is written by the stencil but is read-only",
                         s->name);
            return false;
        }
    }
    return check_aliasing(st, b);
}

char *field_origin_address(const Symbol *s, PyObject *array, const int64_t *origin) {
    PyArrayObject *arr = (PyArrayObject *)array;
    uintptr_t at = (uintptr_t)PyArray_BYTES(arr);
    for (int a = 0; a < 3; a++) {
        int d = field_dim_of(s, a);
        if (d >= 0) at += (uintptr_t)origin[a] * (uintptr_t)PyArray_STRIDE(arr, d); /* mod 2^64 */
    }
    return (char *)at;
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
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    if (overflow) {
        /* a ValueError, as every call error is a TypeError or ValueError (docs/calling.md) */
        PyErr_Format(PyExc_ValueError, "argument '%s' (%S) does not fit in %s", s->name, idx,
                     dtype_name(s->dtype));
        Py_DECREF(idx);
        return false;
    }
    Py_DECREF(idx);
    if (v == -1 && PyErr_Occurred()) goto bad;
    if (!dtype_int_fits(s->dtype, v)) {
        PyErr_Format(PyExc_ValueError, "argument '%s' (%lld) does not fit in %s", s->name, v,
                     dtype_name(s->dtype));
        return false;
    }
    if (s->dtype == DT_INT32) {
        int32_t x = (int32_t)v;
        memcpy(slot, &x, sizeof x);
    } else if (s->dtype == DT_INT16) {
        int16_t x = (int16_t)v;
        memcpy(slot, &x, sizeof x);
    } else if (s->dtype == DT_INT8) {
        int8_t x = (int8_t)v;
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
 * 64-byte boundary), why the tile and the column blocks are what they are, and the tuning
 * (tune.h). For tuning and for tests of the plan. */
static PyObject *plan_info(const ModuleObject *m, const Plan *p, CpuVariant variant, TuneCall *tc,
                           int workers) {
    static const char *layouts[] = {"C", "F", "generic"};
    const Stencil *st = m->st;
    const char *tile_why, *block_why, *stream_why;
    PyObject *tuning = tune_info(tc, p, &tile_why, &block_why, &stream_why);
    if (tuning == NULL) return NULL;
    /* column groups in C order: blocks of this many columns (0: bundles) and why */
    bool chose = p && block_why && variant.layout == LAYOUT_K_UNIT && !variant.shared;
    bool blocks = chose && p->block_cols > 0;
    PyObject *temps = PyDict_New();
    if (temps == NULL) {
        Py_DECREF(tuning);
        return NULL;
    }
    for (int t = 0; t < st->ntemps && p; t++) {
        const Symbol *s = st->temps[t];
        if (!s->has_access) continue;
        uintptr_t at = (uintptr_t)p->ptrs[s->slot];
        bool block = blocks && s->column_local && cpu_block_holds(st, s);
        bool reg = !block && cpu_register_temp(st, s, p->layout);
        const char *buffer = block ? "block"
                             : reg ? "register"
                             : cpu_bundle_buffer(st, s, p->layout) ? "bundle"
                                                                   : "tile";
        PyObject *aligned = reg ? Py_None
                            : at % 64 == 0                         ? Py_True
                                                                   : Py_False;
        PyObject *e = Py_BuildValue("{s:s,s:O}", "buffer", buffer, "aligned", aligned);
        if (e == NULL || PyDict_SetItemString(temps, s->name, e) < 0) {
            Py_XDECREF(e);
            Py_DECREF(temps);
            Py_DECREF(tuning);
            return NULL;
        }
        Py_DECREF(e);
    }
    /* the machine facts the plan was derived from (sysfs; 0 where the OS does not say) */
    PyObject *machine = Py_BuildValue("{s:L,s:L,s:L,s:O}", "l1d_bytes", (long long)cpu_cache_bytes(1),
                                      "l2_bytes", (long long)cpu_cache_bytes(2), "l3_bytes",
                                      (long long)cpu_cache_bytes(3), "vector_512",
                                      jit_has_wide_vectors() ? Py_True : Py_False);
    if (machine == NULL) {
        Py_DECREF(temps);
        Py_DECREF(tuning);
        return NULL;
    }
    /* the axis the blocks of a whole tile run along (cpu_blocks_along_i) */
    const char *axis = !blocks ? NULL : cpu_blocks_along_i(p->ti, p->tj) ? "I" : "J";
    return Py_BuildValue("{s:s,s:O,s:i,s:i,s:(LL),s:s,s:L,s:N,s:L,s:s,s:z,s:O,s:s,s:N,s:N}", "layout",
                         layouts[variant.layout], "shared_memory", variant.shared ? Py_True : Py_False,
                         "threads", p ? p->nthreads : 1, "workers", workers, "tile", (long long)(p ? p->ti : 0),
                         (long long)(p ? p->tj : 0), "tile_why", tile_why, "l2_budget_bytes",
                         (long long)(p ? p->budget : 0), "temporaries", temps, "column_blocks",
                         (long long)(chose ? p->block_cols : 0), "column_blocks_why",
                         chose ? block_why : "none", "column_blocks_axis", axis, "streaming_stores",
                         p && p->stream ? Py_True : Py_False, "streaming_stores_why",
                         p && stream_why ? stream_why : "none", "machine", machine, "tuning", tuning);
}

static bool fill_exec_info(ModuleObject *m, const Bound *b, double t0, double t1, double t2,
                           const Plan *plan, CpuVariant variant, TuneCall *tc, int workers) {
    PyObject *extra = NULL;
    if (m->backend == BACKEND_CPU) {
        extra = Py_BuildValue("{s:N}", "plan", plan_info(m, plan, variant, tc, workers));
        if (extra == NULL) return false;
    }
    ExecTimes times = {t0, t1, t2};
    bool ok = exec_info_record(m, b, b->exec_info, &times, extra);
    Py_XDECREF(extra);
    return ok;
}

/* ---- checked K reads ----------------------------------------------------------------
 * A K level computed from values the stencil writes is only known while it runs: the kernel
 * notes a level outside the domain, and the call then undoes itself. Copies of the written
 * arrays are taken before the run, put back when the kernel noted such a level. */

bool call_save_written(const Stencil *st, const Bound *b, PyObject **saved, const bool *skip) {
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !s->written || b->value[i] == NULL || (skip && skip[i])) continue;
        saved[i] = PyArray_NewCopy((PyArrayObject *)b->value[i], NPY_KEEPORDER);
        if (saved[i] == NULL) {
            for (int j = 0; j < i; j++) Py_CLEAR(saved[j]);
            return false;
        }
    }
    return true;
}

/* Releases the copies; when note != 0, first puts them back and raises. */
bool call_restore_written(const Stencil *st, const Bound *b, PyObject **saved, int64_t note,
                          int64_t nk, const int64_t *bound_info) {
    bool ok = true;
    for (int i = 0; i < st->nparams; i++) {
        if (saved[i] == NULL) continue;
        if (note && ok &&
            PyArray_CopyInto((PyArrayObject *)b->value[i], (PyArrayObject *)saved[i]) < 0)
            ok = false;
        Py_CLEAR(saved[i]);
    }
    if (!ok || note == 0) return ok;
    long long line = (long long)(note & 0xffffffff);
    if ((uint64_t)note & GT_NOTE_LEVEL_BOUND)
        return kbounds_checked_bound_error(st, line, nk, bound_info);
    int64_t arg = (int64_t)((uint64_t)note >> 32) - 1;
    if (arg >= 0 && arg < st->nparams && b->value[arg] != NULL) {
        const Symbol *s = st->params[arg];
        int64_t lo = -b->origin[arg][2];
        int64_t n = (int64_t)PyArray_DIM((PyArrayObject *)b->value[arg], field_dim_of(s, 2));
        PyErr_Format(PyExc_ValueError,
                     "argument '%s': the K level read on line %lld, computed from values the "
                     "stencil writes, is outside the array's %lld levels (levels %lld to %lld "
                     "counted from the compute domain's first); the call was undone (every "
                     "array it wrote was restored)",
                     s->name, line, (long long)n, (long long)lo, (long long)(lo + n - 1));
        return false;
    }
    PyErr_Format(PyExc_ValueError,
                 "the K level written on line %lld, computed from values the stencil writes, "
                 "is outside the compute domain's %lld levels; the call was undone (every array "
                 "it wrote was restored)",
                 line, (long long)nk);
    return false;
}

void call_array_levels(const Stencil *st, const Bound *b, int64_t *words) {
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        int dk = s->kind == SYM_FIELD ? field_dim_of(s, 2) : -1;
        if (dk < 0 || b->value[i] == NULL) continue;
        words[2 * s->slot] = -b->origin[i][2];
        int64_t n = (int64_t)PyArray_DIM((PyArrayObject *)b->value[i], dk);
        words[2 * s->slot + 1] = n - b->origin[i][2];
    }
}

/* One call's work: tiles handed out to the pool's threads through an atomic counter. */
typedef struct Job {
    GtKernelFn kernel;
    const Plan *plan;
    const int64_t *domain;
    const char *scalars;
    int64_t next_tile;
    /* interrupt.h: watch.mark is where the SIGINT counter stood; tiles stop being taken when
     * it moves, while loops stop when watch.counter moves (codegen.h) */
    GtLoopWatch watch;
    /* the note of a failed check of a K level (codegen.h), NULL without checked levels: once
     * set no tile starts, and the run is over (the call undoes itself) */
    const int64_t *kflag;
} Job;

static bool check_failed(const Job *job) {
    return job->kflag && __atomic_load_n(job->kflag, __ATOMIC_RELAXED) != 0;
}

static RunState tiles_left(void *ctx) {
    const Job *job = ctx;
    if (__atomic_load_n(&job->watch.stopped, __ATOMIC_RELAXED)) return RUN_BROKEN;
    if (check_failed(job)) return RUN_DONE;
    return __atomic_load_n(&job->next_tile, __ATOMIC_RELAXED) < job->plan->nti * job->plan->ntj
               ? RUN_RESUME
               : RUN_DONE;
}

static void run_tiles(void *ctx, int worker) {
    Job *job = ctx;
    const Plan *p = job->plan;
    char **ptrs = p->ptrs + (size_t)worker * (size_t)p->nptrs;
    const int64_t *strides = p->strides + (size_t)worker * (size_t)p->nslots * GT_STRIDES;
    int64_t ntiles = p->nti * p->ntj;
    /* a tile is claimed only when it will run, so the tiles left after an interrupt are
     * exactly those from next_tile on */
    while (!interrupt_since(job->watch.mark) && !check_failed(job)) {
        int64_t t = __atomic_fetch_add(&job->next_tile, 1, __ATOMIC_RELAXED);
        if (t >= ntiles) break;
        int64_t ti = t / p->ntj, tj = t % p->ntj;
        int64_t tile[5] = {ti * p->ti, (ti + 1) * p->ti, tj * p->tj, (tj + 1) * p->tj,
                           p->stream ? GT_TILE_STREAM : 0};
        if (tile[1] > job->domain[0]) tile[1] = job->domain[0];
        if (tile[3] > job->domain[1]) tile[3] = job->domain[1];
        job->kernel(ptrs, strides, job->domain, job->scalars, tile);
    }
}

/* The plan for this domain: the stencil's cached one when it fits, is the choice the tuner
 * (tune.h) makes for this call and no other thread is using it, else a new one (which becomes
 * the cached one if the slot is free). Only a call holding the slot measures for the tuner. */
static Plan *acquire_plan(ModuleObject *m, const int64_t *domain, CpuVariant variant, bool *owned,
                          TuneCall *tc) {
    *owned = false;
    if (m->tune == NULL) m->tune = tune_table_new(); /* NULL (no memory): the model's plans */
    if (__atomic_exchange_n(&m->plan_busy, 1, __ATOMIC_ACQUIRE) == 0) {
        bool fits = plan_fits(m->plan, domain, variant.layout);
        tune_begin(m->tune, m->st, m->cache_key, domain, variant, true, !fits, tc);
        if (fits && plan_is(m->plan, &tc->choice)) return m->plan;
        plan_free(m->plan);
        m->plan = plan_new(m->st, domain, variant.layout, &tc->choice);
        if (m->plan == NULL) __atomic_store_n(&m->plan_busy, 0, __ATOMIC_RELEASE);
        return m->plan;
    }
    *owned = true;
    tune_begin(m->tune, m->st, m->cache_key, domain, variant, false, true, tc);
    return plan_new(m->st, domain, variant.layout, &tc->choice);
}

/* The layout class of this call's arrays (see codegen.h): K unit-stride everywhere, else I
 * unit-stride everywhere, else generic. */
static CpuLayout classify_layout(const Stencil *st, const Bound *b) {
    bool k_unit = true, i_unit = true;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !bound_present(b, i)) continue;
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
    Bound b;
    PyObject *result = NULL;
    if (!bind_all(m, args, kwargs, &b)) goto done;
    CpuLayout layout = classify_layout(st, &b);
    CpuVariant variant = {layout, b.shared};
    GtKernelFn kernel = module_kernel(m, variant);
    if (kernel == NULL) goto done;
    /* the scalars (an unused parameter's slot is never read), then the flag of checked K
     * levels (the note of one outside the allowed levels), then the while loops' watch, then
     * the levels each field's array holds (codegen.h): bound_tables sizes it for that */
    char *scalars = b.scalars;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind == SYM_SCALAR && bound_present(&b, i) &&
            !scalar_value(s, b.value[i], scalars + 8 * s->slot))
            goto done;
    }
    memset(scalars + 8 * st->nscalars, 0, 8);
    bool owned;
    TuneCall tc;
    Plan *plan = acquire_plan(m, b.domain, variant, &owned, &tc);
    if (plan == NULL) goto done;
    /* Argument fields: the element at the origin and element strides, in every thread's
     * table (the temporaries' entries were filled when the plan was made). */
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !bound_present(&b, i)) continue; /* never accessed */
        PyArrayObject *arr = (PyArrayObject *)b.value[i];
        int item = dtype_size(s->dtype);
        char *ptr = field_origin_address(s, b.value[i], b.origin[i]);
        int64_t sv[GT_STRIDES] = {0};
        for (int a = 0; a < 3; a++) {
            int d = field_dim_of(s, a);
            if (d >= 0) sv[a] = PyArray_STRIDE(arr, d) / item;
        }
        for (int d = 0; d < s->ndata; d++) sv[3 + d] = PyArray_STRIDE(arr, field_naxes(s) + d) / item;
        for (int w = 0; w < plan->nthreads; w++) {
            plan->ptrs[(size_t)w * (size_t)plan->nptrs + (size_t)s->slot] = ptr;
            memcpy(plan->strides + ((size_t)w * (size_t)plan->nslots + (size_t)s->slot) * GT_STRIDES,
                   sv, sizeof sv);
        }
    }
    Job job = {kernel, plan, b.domain, scalars, 0, {0, NULL, 0}, NULL};
    GtLoopWatch *watch = &job.watch;
    memcpy(scalars + 8 * st->nscalars + 8, &watch, sizeof watch);
    if (st->has_checked_k) {
        job.kflag = (const int64_t *)(void *)(scalars + 8 * st->nscalars);
        call_array_levels(st, &b, (int64_t *)(void *)(scalars + 8 * st->nscalars + 16));
    }
    PyObject **saved = b.saved;
    memset(saved, 0, sizeof *saved * (size_t)st->nparams);
    if (st->has_checked_k && !call_save_written(st, &b, saved, NULL)) {
        release_plan(m, plan, owned);
        goto done;
    }
    int workers = 0; /* threads that took part, summed over the runs of an interrupted call */
    double t1 = call_now();
    /* A single tile without while loops always ends: it runs without the SIGINT watch (a
     * Ctrl-C is then seen by Python right after the call, as for any C function). */
    if (plan->nti * plan->ntj <= 1 && !st->has_while) {
        job.watch.mark = interrupt_mark();
        job.watch.counter = &job.watch.mark; /* (no loops to watch) */
        Py_BEGIN_ALLOW_THREADS workers = pool_run(run_tiles, &job, plan->nthreads);
        Py_END_ALLOW_THREADS
    } else if (!interrupt_run(run_tiles, &job, plan->nthreads, &job.watch.mark, &job.watch.counter,
                              tiles_left, &workers)) {
        call_restore_written(st, &b, saved, 0, 0, NULL); /* releases the copies */
        release_plan(m, plan, owned); /* KeyboardInterrupt: the outputs hold a partial result */
        goto done;
    }
    double t2 = call_now();
    bool ok = true;
    if (st->has_checked_k) {
        int64_t note;
        memcpy(&note, scalars + 8 * st->nscalars, sizeof note);
        /* a bound's column and level: three words after the fields' levels (codegen.h) */
        const int64_t *info =
            (const int64_t *)(const void *)(scalars + 8 * (st->nscalars + 2 + 2 * st->nfields));
        ok = call_restore_written(st, &b, saved, note, b.domain[2], info);
    }
    /* the kernel's time, for the tuner: a clean measurement when every thread of the plan
     * took part, once (a busy pool runs the call on its own thread; an interrupted run that
     * resumed counts its threads twice) */
    if (ok) tune_end(m->tune, m->cache_key, &tc, t2 - t1, workers == plan->nthreads, b.exec_info != NULL);
    ok = ok &&
         (b.exec_info == NULL || fill_exec_info(m, &b, t0, t1, t2, plan, variant, &tc, workers));
    release_plan(m, plan, owned);
    if (ok) result = Py_NewRef(Py_None);
done:
    bound_release(&b);
    return result;
}

PyObject *call_bind(ModuleObject *m, PyObject *args, PyObject *kwargs) {
    const Stencil *st = m->st;
    Bound b;
    PyObject *fields = NULL, *scalars = NULL, *result = NULL;
    if (!bind_all(m, args, kwargs, &b)) goto fail;
    fields = PyDict_New(), scalars = PyDict_New();
    if (fields == NULL || scalars == NULL) goto fail;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (!bound_present(&b, i)) continue; /* never accessed */
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
    result = Py_BuildValue("(OO(LLL)O(LLLL))", fields, scalars, (long long)b.domain[0],
                           (long long)b.domain[1], (long long)b.domain[2],
                           b.exec_info ? b.exec_info : Py_None, (long long)b.domain[3],
                           (long long)b.domain[4], (long long)b.domain[5], (long long)b.domain[6]);
fail:
    Py_XDECREF(fields);
    Py_XDECREF(scalars);
    bound_release(&b);
    return result;
}
