/*
 * Arguments a build does not use (unused.h). The value is only looked at, never converted
 * (conversion may call the object's __array__) and never read or written: a plain ndarray's
 * header, or a scalar's conversion to the declared dtype into a scratch slot, is all that
 * decides whether the debug record is written.
 */
#include "call/unused.h"

#include "call/call.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL gtscript_ARRAY_API
#include <numpy/arrayobject.h>

#include <stdio.h>

enum { LOG_DEBUG = 10 }; /* logging.DEBUG */

/* The "gtscript" logger (a reference kept for the life of the process), NULL with an
 * exception set. */
static PyObject *gtscript_logger(void) {
    static PyObject *logger;
    if (logger == NULL) {
        PyObject *logging = PyImport_ImportModule("logging");
        if (logging == NULL) return NULL;
        logger = PyObject_CallMethod(logging, "getLogger", "s", "gtscript");
        Py_DECREF(logging);
    }
    return logger;
}

/* How field value `o` differs from field s's declaration, into `why`; false where it would
 * pass the dimension, dtype and data-dimension checks of a used field. */
static bool field_differs(const Symbol *s, PyObject *o, char *why, size_t n) {
    if (!PyArray_Check(o)) {
        snprintf(why, n, "a %s, not a NumPy array", Py_TYPE(o)->tp_name);
        return true;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    int want = field_naxes(s) + s->ndata;
    if (PyArray_NDIM(a) != want) {
        snprintf(why, n, "an array of %d dimensions where %d are declared (%d axes + %d data "
                 "dimensions)", PyArray_NDIM(a), want, field_naxes(s), s->ndata);
        return true;
    }
    if (PyArray_TYPE(a) != call_npy_type(s->dtype) || !PyArray_ISNOTSWAPPED(a)) {
        snprintf(why, n, "an array of dtype %s where %s is declared",
                 PyArray_DESCR(a)->typeobj->tp_name, dtype_name(s->dtype));
        return true;
    }
    for (int d = 0; d < s->ndata; d++)
        if (PyArray_DIM(a, field_naxes(s) + d) != s->data_dims[d]) {
            snprintf(why, n, "an array whose data dimension %d has size %zd where %d is declared",
                     d, (Py_ssize_t)PyArray_DIM(a, field_naxes(s) + d), s->data_dims[d]);
            return true;
        }
    return false;
}

/* How scalar value `o` differs from scalar s's declaration, into `why`; false where it
 * converts to s's dtype as a used scalar's value must. */
static bool scalar_differs(const Symbol *s, PyObject *o, char *why, size_t n) {
    char slot[8];
    if (scalar_value(s, o, slot)) return false;
    PyErr_Clear();
    snprintf(why, n, "a %s, not a scalar of dtype %s", Py_TYPE(o)->tp_name, dtype_name(s->dtype));
    return true;
}

bool unused_arg_note(const Stencil *st, const Symbol *s, PyObject *o) {
    char why[256];
    bool differs = s->kind == SYM_FIELD ? field_differs(s, o, why, sizeof why)
                                        : scalar_differs(s, o, why, sizeof why);
    if (!differs) return true;
    PyObject *logger = gtscript_logger();
    if (logger == NULL) return false;
    PyObject *on = PyObject_CallMethod(logger, "isEnabledFor", "i", (int)LOG_DEBUG);
    if (on == NULL) return false;
    int enabled = PyObject_IsTrue(on);
    Py_DECREF(on);
    if (enabled <= 0) return enabled == 0;
    PyObject *r = PyObject_CallMethod(
        logger, "debug", "ssss", "stencil '%s': argument '%s' is %s; the stencil does not use it "
        "(access NONE), so, as in GT4Py, its value is not checked and never read or written",
        st->name, s->name, why);
    Py_XDECREF(r);
    return r != NULL;
}
