#include "cache/memory.h"

#include <stdlib.h>
#include <string.h>

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

CacheEntry *cache_memory_get(const char *key) {
    if (table == NULL) return NULL;
    PyObject *capsule = PyDict_GetItemString(table, key); /* borrowed; never raises */
    if (capsule == NULL) return NULL;
    CacheEntry *e = PyCapsule_GetPointer(capsule, CAPSULE_NAME);
    if (e) cache_entry_ref(e);
    return e;
}

bool cache_memory_put(CacheEntry *e) {
    if (table == NULL && (table = PyDict_New()) == NULL) return false;
    PyObject *capsule = PyCapsule_New(e, CAPSULE_NAME, capsule_release);
    if (capsule == NULL) return false;
    cache_entry_ref(e); /* the capsule's reference */
    int r = PyDict_SetItemString(table, e->key, capsule);
    Py_DECREF(capsule);
    return r == 0;
}

void cache_memory_clear(void) {
    if (table) PyDict_Clear(table);
}

Py_ssize_t cache_memory_count(void) {
    return table ? PyDict_GET_SIZE(table) : 0;
}
