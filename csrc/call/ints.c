/*
 * Integer tuples of a call's keywords (ints.h).
 */
#include "call/ints.h"

bool call_ints(PyObject *o, int n_min, int n_max, const char *what, const char *name,
               const char *shape, int64_t *out, int *n) {
    const char *of = name ? " of " : "", *whose = name ? name : "";
    PyObject *seq = PySequence_Fast(o, "");
    Py_ssize_t len = seq ? PySequence_Fast_GET_SIZE(seq) : -1;
    if (seq == NULL || len < n_min || len > n_max) {
        Py_XDECREF(seq);
        PyErr_Clear(); /* a non-sequence and a wrong length are the same mistake to the user */
        PyErr_Format(PyExc_ValueError, "%s%s%s must be %s", what, of, whose, shape);
        return false;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *v = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
        long long x = v ? PyLong_AsLongLong(v) : -1;
        Py_XDECREF(v);
        if (x == -1 && PyErr_Occurred()) {
            bool too_big = PyErr_ExceptionMatches(PyExc_OverflowError);
            Py_DECREF(seq);
            PyErr_Clear();
            PyErr_Format(too_big ? PyExc_ValueError : PyExc_TypeError, "%s%s%s must contain %s",
                         what, of, whose, too_big ? "integers of at most 64 bits" : "integers");
            return false;
        }
        out[i] = x;
    }
    if (n) *n = (int)len;
    Py_DECREF(seq);
    return true;
}
