#include "cache/hash.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

/* hashlib.sha256, looked up once per process (the module stays imported anyway). */
static PyObject *sha256_ctor;

bool cache_sha256_hex(const void *data, size_t n, char hex[CACHE_HEX_LEN + 1]) {
    if (sha256_ctor == NULL) {
        PyObject *hashlib = PyImport_ImportModule("hashlib");
        if (hashlib == NULL) return false;
        sha256_ctor = PyObject_GetAttrString(hashlib, "sha256");
        Py_DECREF(hashlib);
        if (sha256_ctor == NULL) return false;
    }
    /* A read-only view: large inputs (the core's shared object) are not copied. */
    PyObject *bytes = PyMemoryView_FromMemory((char *)data, (Py_ssize_t)n, PyBUF_READ);
    PyObject *h = bytes ? PyObject_CallOneArg(sha256_ctor, bytes) : NULL;
    PyObject *digest = h ? PyObject_CallMethod(h, "hexdigest", NULL) : NULL;
    Py_XDECREF(bytes);
    Py_XDECREF(h);
    if (digest == NULL) return false;
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(digest, &len);
    bool ok = s != NULL && len == CACHE_HEX_LEN;
    if (ok)
        memcpy(hex, s, CACHE_HEX_LEN + 1);
    else if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "hashlib returned an unexpected digest");
    Py_DECREF(digest);
    return ok;
}
