/*
 * Filling exec_info (exec_info.h). GT4Py reports the origin of each field in the field's
 * own dimensions (its axes, then a zero per data dimension) and the domain as (I, J, K);
 * its aggregation keeps, per stencil, the last call's times and running totals.
 */
#include "call/exec_info.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL gtscript_ARRAY_API
#include <numpy/arrayobject.h>

#include <limits.h>
#include <string.h>

static const char *backend_name(const ModuleObject *m) {
    return m->backend == BACKEND_CPU ? "cpu" : m->backend == BACKEND_CUDA ? "cuda" : "numpy";
}

/* A field's origin as GT4Py reports it: its own axes, then zeros for its data dimensions. */
static PyObject *field_origin(const Symbol *s, const int64_t *o) {
    PyObject *t = PyTuple_New(field_naxes(s) + s->ndata);
    if (t == NULL) return NULL;
    int d = 0;
    for (int a = 0; a < 3; a++)
        if (s->axes & (1 << a)) PyTuple_SET_ITEM(t, d++, PyLong_FromLongLong(o[a]));
    for (int k = 0; k < s->ndata; k++) PyTuple_SET_ITEM(t, d++, PyLong_FromLong(0));
    for (int i = 0; i < d; i++)
        if (PyTuple_GET_ITEM(t, i) == NULL) {
            Py_DECREF(t);
            return NULL;
        }
    return t;
}

/* Sets info[key] = v, stealing v; false with an exception (v may be NULL: an error). */
static bool put(PyObject *info, const char *key, PyObject *v) {
    if (v == NULL) return false;
    int r = PyDict_SetItemString(info, key, v);
    Py_DECREF(v);
    return r == 0;
}

static double get_float(PyObject *d, const char *key, double dflt) {
    PyObject *v = PyDict_GetItemString(d, key); /* borrowed */
    if (v == NULL) return dflt;
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return dflt;
    }
    return x;
}

/* GT4Py's "__aggregate_data": info[stencil id] keeps the last call's times and totals. */
static bool aggregate(ModuleObject *m, PyObject *info, double call_start, double call_end,
                      double run_time) {
    PyObject *flag = PyDict_GetItemString(info, "__aggregate_data"); /* borrowed */
    if (flag == NULL) return put(info, "__aggregate_data", Py_NewRef(Py_False));
    int on = PyObject_IsTrue(flag);
    if (on <= 0) return on == 0;
    char id[256];
    snprintf(id, sizeof id, "%s__%s_%.10s", m->st->name ? m->st->name : "stencil", backend_name(m),
             m->cache_key);
    PyObject *stats = PyDict_GetItemString(info, id); /* borrowed */
    if (stats == NULL || !PyDict_Check(stats)) {
        stats = PyDict_New();
        if (stats == NULL || PyDict_SetItemString(info, id, stats) < 0) {
            Py_XDECREF(stats);
            return false;
        }
        Py_DECREF(stats); /* info holds it */
    }
    long long ncalls = 0;
    PyObject *n = PyDict_GetItemString(stats, "ncalls");
    if (n) {
        ncalls = PyLong_AsLongLong(n);
        if (ncalls == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            ncalls = 0;
        }
    }
    double total_call = get_float(stats, "total_call_time", 0.0);
    double total_run = get_float(stats, "total_run_time", 0.0);
    return put(stats, "call_start_time", PyFloat_FromDouble(call_start)) &&
           put(stats, "call_end_time", PyFloat_FromDouble(call_end)) &&
           put(stats, "call_time", PyFloat_FromDouble(call_end - call_start)) &&
           put(stats, "total_call_time", PyFloat_FromDouble(total_call + call_end - call_start)) &&
           /* the count is the caller's dict entry: saturate rather than overflow */
           put(stats, "ncalls", PyLong_FromLongLong(ncalls < LLONG_MAX ? ncalls + 1 : ncalls)) &&
           put(stats, "run_time", PyFloat_FromDouble(run_time)) &&
           put(stats, "total_run_time", PyFloat_FromDouble(total_run + run_time));
}

/* Everything but the origins, which the callers build from what they have. */
static bool record(ModuleObject *m, PyObject *info, const ExecTimes *t, const int64_t *domain,
                   PyObject *origin, PyObject *extra) {
    double end = call_now();
    if (!put(info, "call_start_time", PyFloat_FromDouble(t->call_start)) ||
        !put(info, "call_run_start_time", PyFloat_FromDouble(t->call_start)) ||
        !put(info, "run_start_time", PyFloat_FromDouble(t->run_start)) ||
        !put(info, "run_end_time", PyFloat_FromDouble(t->run_end)) ||
        !put(info, "call_run_end_time", PyFloat_FromDouble(end)) ||
        !put(info, "call_end_time", PyFloat_FromDouble(end)) ||
        !put(info, "run_time", PyFloat_FromDouble(t->run_end - t->run_start)) ||
        !put(info, "domain", Py_BuildValue("(LLL)", (long long)domain[0], (long long)domain[1],
                                           (long long)domain[2])) ||
        !put(info, "origin", Py_NewRef(origin)) ||
        !put(info, "module_source",
             PyUnicode_FromString(m->origin_of_code ? m->origin_of_code : "build")) ||
        !put(info, "build_time", PyFloat_FromDouble(m->build_seconds)) ||
        !put(info, "backend", PyUnicode_FromString(backend_name(m))))
        return false;
    if (extra && PyDict_Update(info, extra) < 0) return false;
    return aggregate(m, info, t->call_start, end, t->run_end - t->run_start);
}

bool exec_info_record(ModuleObject *m, const Bound *b, PyObject *info, const ExecTimes *t,
                      PyObject *extra) {
    const Stencil *st = m->st;
    PyObject *origin = PyDict_New();
    if (origin == NULL) return false;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !bound_present(b, i)) continue;
        if (!put(origin, s->name, field_origin(s, b->origin[i]))) {
            Py_DECREF(origin);
            return false;
        }
    }
    bool ok = record(m, info, t, b->domain, origin, extra);
    Py_DECREF(origin);
    return ok;
}

PyObject *exec_info_record_method(ModuleObject *m, PyObject *args) {
    PyObject *info, *fields;
    long long dom[3];
    ExecTimes t;
    if (!PyArg_ParseTuple(args, "O!O!(LLL)ddd", &PyDict_Type, &info, &PyDict_Type, &fields, &dom[0],
                          &dom[1], &dom[2], &t.call_start, &t.run_start, &t.run_end))
        return NULL;
    const Stencil *st = m->st;
    PyObject *origin = PyDict_New();
    if (origin == NULL) return NULL;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        PyObject *entry = s->kind == SYM_FIELD ? PyDict_GetItemString(fields, s->name) : NULL;
        PyObject *array;
        long long o[3];
        if (entry == NULL) continue;
        if (!PyArg_ParseTuple(entry, "O(LLL)", &array, &o[0], &o[1], &o[2]) ||
            !put(origin, s->name, field_origin(s, (const int64_t[3]){o[0], o[1], o[2]}))) {
            Py_DECREF(origin);
            return NULL;
        }
    }
    int64_t domain[3] = {dom[0], dom[1], dom[2]};
    bool ok = record(m, info, &t, domain, origin, NULL);
    Py_DECREF(origin);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}
