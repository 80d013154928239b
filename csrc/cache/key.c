#include "cache/key.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/jit.h"
#include "cache/fsutil.h"
#include "ir/serialise.h"
#include "util/strbuf.h"

enum { KEY_FORMAT = 2 }; /* bump when the key document's layout changes */

static CacheVersions versions;
static char core_hash[CACHE_HEX_LEN + 1];

/* The shared object this function lives in: the compiler core as it is loaded now. */
static bool hash_core(void) {
    Dl_info info;
    if (dladdr((void *)&hash_core, &info) == 0 || info.dli_fname == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "gtscript cache: cannot locate the compiler core's shared object");
        return false;
    }
    size_t len;
    char *bytes = fs_read_path(info.dli_fname, &len);
    if (bytes == NULL) {
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, info.dli_fname);
        return false;
    }
    bool ok = cache_sha256_hex(bytes, len, core_hash);
    free(bytes);
    return ok;
}

bool cache_init(void) {
    return core_hash[0] != '\0' || hash_core();
}

static const char *package_version(void) {
    static char *version;
    if (version) return version;
    PyObject *pkg = PyImport_ImportModule("gtscript");
    PyObject *v = pkg ? PyObject_GetAttrString(pkg, "__version__") : NULL;
    const char *s = v && PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    if (s) version = strdup(s);
    if (v && s == NULL && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "gtscript.__version__ is not a string");
    if (s && version == NULL) PyErr_NoMemory();
    Py_XDECREF(v);
    Py_XDECREF(pkg);
    return version;
}

const CacheVersions *cache_versions(void) {
    if (versions.core) return &versions;
    const char *pkg = package_version();
    if (pkg == NULL || !cache_init()) return NULL;
    versions.package = pkg;
    versions.llvm = GT_LLVM_VERSION;
    versions.core = core_hash;
    return &versions;
}

/* repr(sorted((k, v) for k, v in options.items() if k != "rebuild")): Python's repr is
 * stable across processes for the values options hold (str, int, float, bool, None). */
static PyObject *options_repr(PyObject *options) {
    PyObject *items = PyList_New(0);
    if (items == NULL) return NULL;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (options && PyDict_Next(options, &pos, &k, &v)) {
        if (PyUnicode_Check(k) && PyUnicode_CompareWithASCIIString(k, "rebuild") == 0) continue;
        PyObject *pair = PyTuple_Pack(2, k, v);
        if (pair == NULL || PyList_Append(items, pair) < 0) {
            Py_XDECREF(pair);
            goto fail;
        }
        Py_DECREF(pair);
    }
    if (PyList_Sort(items) < 0) goto fail;
    PyObject *r = PyObject_Repr(items);
    Py_DECREF(items);
    return r;
fail:
    Py_DECREF(items);
    return NULL;
}

bool cache_key(const Stencil *st, const char *backend, const char *target, PyObject *options,
               char key[CACHE_HEX_LEN + 1]) {
    const CacheVersions *ver = cache_versions();
    if (ver == NULL) return false;
    PyObject *opts = options_repr(options);
    const char *opts_text = opts ? PyUnicode_AsUTF8(opts) : NULL;
    if (opts_text == NULL) {
        Py_XDECREF(opts);
        return false;
    }
    StrBuf doc = {0};
    sb_printf(
        &doc,
        "gtscript-cache-key %d\npackage %s\ncore %s\nllvm %s\nbackend %s\ntarget %s\noptions %s\n",
        KEY_FORMAT, ver->package, ver->core, ver->llvm, backend, target, opts_text);
    Py_DECREF(opts);
    bool ok = ir_serialise(st, &doc) && !doc.oom;
    if (!ok)
        PyErr_NoMemory();
    else
        ok = cache_sha256_hex(doc.data, doc.len, key);
    sb_free(&doc);
    return ok;
}

bool cache_variant_key(const char *key, int variant, char out[CACHE_HEX_LEN + 1]) {
    char doc[CACHE_HEX_LEN + 32];
    int n = snprintf(doc, sizeof doc, "%s variant %d", key, variant);
    return cache_sha256_hex(doc, (size_t)n, out);
}
