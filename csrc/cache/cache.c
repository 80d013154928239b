#include "cache/cache.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "cache/dir.h"
#include "cache/evict.h"

static CacheEntry *build_and_store(const CacheRequest *rq, bool replace, CacheBuildFn build,
                                   void *ctx) {
    char *obj = NULL, *source = NULL;
    size_t objlen = 0;
    if (!build(ctx, &obj, &objlen, &source)) return NULL;
    char err[1024] = "";
    CacheEntry *e =
        cache_entry_from_object(rq->key, cache_format(rq)->jit, obj, objlen, source, err, sizeof err);
    if (e == NULL) {
        if (err[0])
            PyErr_Format(PyExc_RuntimeError, "loading the compiled stencil '%s' failed: %s",
                         rq->st->name, err);
    } else {
        source = NULL; /* owned by the entry */
        if (!cache_disk_store(rq, obj, objlen, e->source, replace)) {
            cache_entry_unref(e);
            e = NULL;
        }
    }
    free(obj);
    free(source);
    return e;
}

CacheEntry *cache_obtain(const CacheRequest *rq, bool rebuild, CacheBuildFn build, void *ctx,
                         const char **origin) {
    CacheEntry *e = NULL;
    bool replace = rebuild;
    if (!rebuild && (e = cache_memory_get(rq->key)) != NULL) {
        cache_stats.memory_hits++;
        *origin = "memory";
        return e; /* already in the table */
    }
    if (!rebuild) {
        DiskResult r = cache_disk_load(rq, &e, &replace);
        if (r == DISK_ERROR) return NULL;
        if (r == DISK_HIT) {
            cache_stats.disk_hits++;
            *origin = "disk";
        }
    }
    if (e == NULL) {
        cache_stats.misses++;
        *origin = "build";
        if ((e = build_and_store(rq, replace, build, ctx)) == NULL) return NULL;
    }
    if (!cache_memory_put(e)) {
        cache_entry_unref(e);
        return NULL;
    }
    return e;
}

/* ---- gtscript.cache ----------------------------------------------------------------- */

static PyObject *cache_path(PyObject *self, PyObject *unused) {
    char *dir = cache_dir_path();
    PyObject *r = dir ? PyUnicode_DecodeFSDefault(dir) : NULL;
    free(dir);
    return r;
}

static PyObject *cache_info(PyObject *self, PyObject *unused) {
    char *dir;
    int dirfd;
    CacheDirStatus s = cache_dir_prepare(false, &dir, &dirfd);
    if (s == CACHE_DIR_ERROR) return NULL;
    long entries = 0;
    unsigned long long bytes = 0;
    if (s == CACHE_DIR_OK) {
        cache_totals(dirfd, &entries, &bytes);
        close(dirfd);
    }
    const CacheStats *c = &cache_stats;
    PyObject *r = Py_BuildValue(
        "{s:N,s:l,s:K,s:K,s:n,s:l,s:l,s:l,s:l,s:l,s:l}", "path", PyUnicode_DecodeFSDefault(dir),
        "entries", entries, "bytes", bytes, "max_bytes", cache_max_bytes(), "memory_entries",
        cache_memory_count(), "hits", c->memory_hits + c->disk_hits, "memory_hits", c->memory_hits,
        "disk_hits", c->disk_hits, "misses", c->misses, "invalid_entries", c->invalid_entries,
        "stores", c->stores);
    free(dir);
    return r;
}

/* The checked cache directory as an open descriptor the caller owns (None when it is absent,
 * or cannot be created, and `create` asks for it): the decorator's pre-key index
 * (gtscript/_index.py) reads and writes its files relative to it, under the same rules as
 * the entries. */
static PyObject *cache_dir_fd(PyObject *self, PyObject *arg) {
    int create = PyObject_IsTrue(arg);
    if (create < 0) return NULL;
    char *dir;
    int dirfd;
    CacheDirStatus s = cache_dir_prepare(create != 0, &dir, &dirfd);
    if (s == CACHE_DIR_ERROR) return NULL;
    free(dir);
    if (s != CACHE_DIR_OK) Py_RETURN_NONE;
    PyObject *r = PyLong_FromLong(dirfd);
    if (r == NULL) close(dirfd);
    return r;
}

static PyObject *cache_clear(PyObject *self, PyObject *unused) {
    cache_memory_clear();
    char *dir;
    int dirfd;
    CacheDirStatus s = cache_dir_prepare(false, &dir, &dirfd);
    if (s == CACHE_DIR_ERROR) return NULL;
    long removed = 0;
    if (s == CACHE_DIR_OK) {
        removed = cache_clear_dir(dirfd);
        close(dirfd);
    }
    free(dir);
    return PyLong_FromLong(removed);
}

/* cache_trim_index(dirfd): the index's store (gtscript/_index.py) calls it with the
 * descriptor of cache_dir_fd, so that index files of every backend are bounded (the numpy
 * backend stores no entry, whose eviction would bound them). */
static PyObject *cache_trim_index(PyObject *self, PyObject *arg) {
    long dirfd = PyLong_Check(arg) ? PyLong_AsLong(arg) : -1;
    if (dirfd < 0 || dirfd > INT_MAX) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "cache_trim_index: a descriptor");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS cache_trim_indexes((int)dirfd);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

PyMethodDef cache_functions[] = {
    {"cache_trim_index", cache_trim_index, METH_O,
     "Bound the index files in the cache directory open as the given descriptor."},
    {"cache_path", cache_path, METH_NOARGS, "The disk cache directory (from the environment)."},
    {"cache_info", cache_info, METH_NOARGS, "Disk cache size and this process's hits and misses."},
    {"cache_dir_fd", cache_dir_fd, METH_O,
     "The checked disk cache directory, opened (a descriptor to close), or None."},
    {"cache_clear", cache_clear, METH_NOARGS,
     "Empty the memory table and remove every disk entry; returns how many entries went."},
    {NULL, NULL, 0, NULL},
};
