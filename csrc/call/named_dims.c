/*
 * Dimension names of field arguments (named_dims.h). Only objects that are not NumPy arrays
 * are looked at (a plain ndarray costs one type check), and only their `dims` when it is a
 * tuple with one entry per dimension of the field: anything else is not a naming this check
 * understands, and the conversion to an array reports a wrong number of dimensions itself.
 */
#include "call/named_dims.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL gtscript_ARRAY_API
#include <numpy/arrayobject.h>

/* o.dims as a new reference when it is a tuple of field s's length; NULL otherwise, and
 * without an exception unless looking it up raised something other than AttributeError
 * (*failed set then). An object naming its axes for GT4Py (__gt_dims__) is placed by those
 * names instead, so it is left out. */
static PyObject *dims_of(const Symbol *s, PyObject *o, bool *failed) {
    *failed = false;
    if (o == NULL || PyArray_Check(o) || o == Py_None) return NULL;
    if (PyObject_HasAttrString(o, "__gt_dims__")) return NULL;
    PyObject *dims = PyObject_GetAttrString(o, "dims");
    if (dims == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) PyErr_Clear();
        else *failed = true;
        return NULL;
    }
    if (dims && (!PyTuple_Check(dims) || PyTuple_GET_SIZE(dims) != field_naxes(s) + s->ndata))
        Py_CLEAR(dims);
    return dims;
}

/* "I in 'a' (dims (...)), K in 'b' (dims (...))": the conflict, as a ValueError. */
static void report(const Stencil *st, PyObject *name, PyObject *first, int axis0, int i, int axis1,
                   PyObject *dims) {
    const Symbol *s0 = st->params[PyLong_AsLong(PyTuple_GET_ITEM(first, 1))];
    PyErr_Format(PyExc_ValueError,
                 "arguments '%s' (dims %R) and '%s' (dims %R) put dimension %R on different axes "
                 "(%c in '%s', %c in '%s'): fields are matched to the stencil's axes by position "
                 "(I, J, K, then data dimensions), not by name: pass them in one order "
                 "(with xarray: %s.transpose(*%s.dims, missing_dims='ignore'))",
                 s0->name, PyTuple_GET_ITEM(first, 2), st->params[i]->name, dims, name,
                 "IJK"[axis0], s0->name, "IJK"[axis1], st->params[i]->name, st->params[i]->name,
                 s0->name);
}

bool named_dims_check(const Stencil *st, const Bound *b) {
    /* name -> (axis, parameter index, dims), made at the first named field */
    PyObject *seen = NULL;
    bool ok = false;
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD) continue;
        bool failed;
        PyObject *dims = dims_of(s, b->value[i], &failed);
        if (failed) goto done;
        if (dims == NULL) continue;
        if (seen == NULL && (seen = PyDict_New()) == NULL) {
            Py_DECREF(dims);
            goto done;
        }
        for (int a = 0; a < 3; a++) {
            int d = field_dim_of(s, a);
            if (d < 0) continue;
            PyObject *name = PyTuple_GET_ITEM(dims, d);
            PyObject *first = PyDict_GetItemWithError(seen, name); /* borrowed */
            if (first == NULL && PyErr_Occurred()) {
                /* an unhashable name is no name to compare: this argument is left out */
                if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
                    Py_DECREF(dims);
                    goto done;
                }
                PyErr_Clear();
                break;
            }
            if (first == NULL) {
                PyObject *entry = Py_BuildValue("(iiO)", a, i, dims);
                int r = entry ? PyDict_SetItem(seen, name, entry) : -1;
                Py_XDECREF(entry);
                if (r < 0) {
                    Py_DECREF(dims);
                    goto done;
                }
                continue;
            }
            int axis0 = (int)PyLong_AsLong(PyTuple_GET_ITEM(first, 0));
            if (axis0 != a) {
                report(st, name, first, axis0, i, a, dims);
                Py_DECREF(dims);
                goto done;
            }
        }
        Py_DECREF(dims);
    }
    ok = true;
done:
    Py_XDECREF(seen);
    return ok;
}
