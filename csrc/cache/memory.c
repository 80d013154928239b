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

void cache_entry_ref(CacheEntry *e) {
    e->refs++;
}

void cache_entry_unref(CacheEntry *e) {
    if (e == NULL || --e->refs > 0) return;
    jit_unload(&e->jit);
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
