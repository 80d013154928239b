#include "cache/memory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

CacheStats cache_stats;

/* key (str) -> capsule around a CacheEntry holding one reference. A dict keeps this simple
 * and is protected by the GIL like every other use of the table. */
static PyObject *table;

static const char *const CAPSULE_NAME = "gtscript.cache.entry";

CacheEntry *cache_entry_new(const char *key, JitModule jit, char *source) {
    CacheEntry *e = calloc(1, sizeof *e);
    if (e == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    e->refs = 1;
    snprintf(e->key, sizeof e->key, "%s", key);
    e->jit = jit;
    e->source = source;
    return e;
}

CacheEntry *cache_entry_from_object(const char *key, bool jit, const char *obj, size_t objlen,
                                    char *source, char *err, size_t errlen) {
    JitModule m = {0};
    char *bytes = NULL;
    err[0] = '\0';
    if (jit && !jit_load_object(obj, objlen, &m, err, errlen)) {
        if (err[0] == '\0') snprintf(err, errlen, "the JIT rejected the object file");
        return NULL;
    }
    if (!jit && (bytes = malloc(objlen ? objlen : 1)) == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    if (bytes) memcpy(bytes, obj, objlen);
    CacheEntry *e = cache_entry_new(key, m, source);
    if (e == NULL) {
        jit_unload(&m);
        free(bytes);
        return NULL;
    }
    e->object = bytes;
    e->objlen = bytes ? objlen : 0;
    return e;
}

void cache_entry_ref(CacheEntry *e) {
    e->refs++;
}

void cache_entry_unref(CacheEntry *e) {
    if (e == NULL || --e->refs > 0) return;
    jit_unload(&e->jit);
    free(e->object);
    free(e->source);
    free(e);
}

static void capsule_release(PyObject *capsule) {
    cache_entry_unref(PyCapsule_GetPointer(capsule, CAPSULE_NAME));
}

Py_ssize_t cache_memory_limit(void) {
    const char *v = getenv("GTSCRIPT_CACHE_MEMORY_ENTRIES");
    if (v && v[0] != '\0' && v[0] != '-') {
        char *end;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (errno == 0 && *end == '\0' && n >= 0)
            return n > PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : (Py_ssize_t)n;
    }
    return 256;
}

/* Drops the least recently used entries beyond the limit (dicts keep insertion order and a
 * hit re-inserts its key); an entry no stencil uses is unloaded from the JIT right here. */
static bool trim(void) {
    Py_ssize_t limit = cache_memory_limit();
    while (PyDict_GET_SIZE(table) > limit) {
        Py_ssize_t pos = 0;
        PyObject *oldest, *value;
        if (!PyDict_Next(table, &pos, &oldest, &value)) break;
        Py_INCREF(oldest);
        int r = PyDict_DelItem(table, oldest);
        Py_DECREF(oldest);
        if (r < 0) return false;
    }
    return true;
}

CacheEntry *cache_memory_get(const char *key) {
    if (table == NULL) return NULL;
    PyObject *capsule = PyDict_GetItemString(table, key); /* borrowed; never raises */
    if (capsule == NULL) return NULL;
    CacheEntry *e = PyCapsule_GetPointer(capsule, CAPSULE_NAME);
    if (e == NULL) {
        PyErr_Clear();
        return NULL;
    }
    cache_entry_ref(e);
    /* most recently used: to the end of the order (a failure only leaves the order as is) */
    Py_INCREF(capsule);
    if (PyDict_DelItemString(table, key) < 0 || PyDict_SetItemString(table, key, capsule) < 0)
        PyErr_Clear();
    Py_DECREF(capsule);
    return e;
}

bool cache_memory_put(CacheEntry *e) {
    if (table == NULL && (table = PyDict_New()) == NULL) return false;
    PyObject *capsule = PyCapsule_New(e, CAPSULE_NAME, capsule_release);
    if (capsule == NULL) return false;
    cache_entry_ref(e); /* the capsule's reference */
    int r = PyDict_SetItemString(table, e->key, capsule);
    Py_DECREF(capsule);
    return r == 0 && trim();
}

void cache_memory_clear(void) {
    if (table) PyDict_Clear(table);
#ifdef __GLIBC__
    /* The modules just unloaded leave free memory spread over the heap that glibc keeps
     * mapped; clearing the cache is the moment to hand it back. */
    malloc_trim(0);
#endif
}

Py_ssize_t cache_memory_count(void) {
    return table ? PyDict_GET_SIZE(table) : 0;
}
