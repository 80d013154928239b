#include "cache/disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/dir.h"
#include "cache/evict.h"
#include "cache/fsutil.h"
#include "cache/hash.h"
#include "cache/key.h"

/* Format 2: each file's record names it, and the backend's format decides the names. */
enum { META_FORMAT = 2 };
static const char META_FILE[] = "meta.json";

const CacheFormat cache_format_cpu = {"kernel.o", "kernel.ll", true};
const CacheFormat cache_format_cuda = {"kernel.cubin", "kernel.cu", false};

const CacheFormat *cache_format(const CacheRequest *rq) {
    return rq->format ? rq->format : &cache_format_cpu;
}

/* ---- metadata ----------------------------------------------------------------------- */

static PyObject *json_call(const char *fn, PyObject *arg) {
    PyObject *json = PyImport_ImportModule("json");
    PyObject *r = json ? PyObject_CallMethod(json, fn, "O", arg) : NULL;
    Py_XDECREF(json);
    return r;
}

static PyObject *param_list(const Stencil *st) {
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        char axes[4] = "";
        int n = 0;
        for (int a = 0; a < 3; a++)
            if (s->axes & (1 << a)) axes[n++] = "IJK"[a];
        axes[n] = '\0';
        PyObject *dims = PyList_New(s->ndata);
        for (int k = 0; dims && k < s->ndata; k++)
            PyList_SET_ITEM(dims, k, PyLong_FromLong(s->data_dims[k]));
        const Extent *e = &s->access;
        PyObject *p =
            dims ? Py_BuildValue("{s:s,s:s,s:s,s:s,s:N,s:((ii)(ii)(ii))}", "name", s->name, "kind",
                                 s->kind == SYM_FIELD ? "field" : "scalar", "dtype",
                                 dtype_name(s->dtype), "axes", axes, "data_dims", dims, "extent",
                                 e->lo[0], e->hi[0], e->lo[1], e->hi[1], e->lo[2], e->hi[2])
                 : NULL;
        if (p == NULL || PyList_Append(l, p) < 0) Py_CLEAR(l);
        Py_XDECREF(p);
    }
    return l;
}

static PyObject *file_info(const char *name, const char *data, size_t n) {
    char hex[CACHE_HEX_LEN + 1];
    if (!cache_sha256_hex(data, n, hex)) return NULL;
    return Py_BuildValue("{s:s,s:n,s:s}", "file", name, "size", (Py_ssize_t)n, "sha256", hex);
}

static PyObject *metadata_json(const CacheRequest *rq, const char *obj, size_t objlen,
                               const char *src) {
    const CacheVersions *v = cache_versions();
    if (v == NULL) return NULL;
    const CacheFormat *f = cache_format(rq);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    PyObject *meta = Py_BuildValue(
        "{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:d,s:N,s:N,s:N}", "format", META_FORMAT, "key", rq->key,
        "package", v->package, "core", v->core, "llvm", v->llvm, "backend", rq->backend, "target",
        rq->target, "name", rq->st->name ? rq->st->name : "", "created",
        (double)now.tv_sec + 1e-9 * (double)now.tv_nsec, "params", param_list(rq->st), "object",
        file_info(f->object_file, obj, objlen), "source",
        file_info(f->source_file, src, strlen(src)));
    if (meta == NULL) return NULL;
    PyObject *text = json_call("dumps", meta);
    Py_DECREF(meta);
    PyObject *bytes = text ? PyUnicode_AsUTF8String(text) : NULL;
    Py_XDECREF(text);
    return bytes;
}

static const char *meta_str(PyObject *d, const char *name) {
    PyObject *v = PyDict_Check(d) ? PyDict_GetItemString(d, name) : NULL;
    return v && PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
}

static bool meta_is(PyObject *d, const char *name, const char *expect) {
    const char *s = meta_str(d, name);
    return s && strcmp(s, expect) == 0;
}

/* A file's recorded size and hash; false when absent or malformed. */
static bool meta_file(PyObject *meta, const char *field, size_t *size, const char **hash) {
    PyObject *f = PyDict_GetItemString(meta, field);
    PyObject *n = f && PyDict_Check(f) ? PyDict_GetItemString(f, "size") : NULL;
    *hash = f ? meta_str(f, "sha256") : NULL;
    if (n == NULL || !PyLong_Check(n) || *hash == NULL || strlen(*hash) != CACHE_HEX_LEN)
        return false;
    Py_ssize_t v = PyLong_AsSsize_t(n);
    if (v < 0) {
        PyErr_Clear();
        return false;
    }
    *size = (size_t)v;
    return true;
}

/* ---- lookup ------------------------------------------------------------------------- */

typedef struct Loaded {
    char *obj, *src;
    size_t objlen;
    bool vanished; /* a file disappeared: a concurrent eviction, not corruption */
} Loaded;

/* Reads one file of the entry and checks it against its recorded size and hash. */
static const char *read_checked(int dfd, const char *name, PyObject *meta, const char *field,
                                char **out, size_t *len, bool *vanished) {
    size_t size;
    const char *hash;
    if (!meta_file(meta, field, &size, &hash)) return "malformed metadata";
    if (!meta_is(PyDict_GetItemString(meta, field), "file", name))
        return "its metadata names other files";
    *out = fs_read_at(dfd, name, size);
    if (*out == NULL) {
        if (errno == ENOENT) *vanished = true;
        return errno == EINVAL   ? "a file is truncated or has the wrong size"
               : errno == ENODEV ? "a file is not a regular file"
                                 : "a file cannot be read";
    }
    char hex[CACHE_HEX_LEN + 1];
    if (!cache_sha256_hex(*out, size, hex)) {
        PyErr_Clear();
        return "a file cannot be hashed";
    }
    if (strcmp(hex, hash) != 0) return "a file does not match its recorded SHA-256 (corrupt)";
    if (len) *len = size;
    return NULL;
}

static const char *check_meta(PyObject *meta, const CacheRequest *rq) {
    const CacheVersions *v = cache_versions();
    if (v == NULL) {
        PyErr_Clear();
        return "versions unknown";
    }
    if (!PyDict_Check(meta)) return "malformed metadata";
    PyObject *fmt = PyDict_GetItemString(meta, "format");
    if (fmt == NULL || !PyLong_Check(fmt) || PyLong_AsLong(fmt) != META_FORMAT)
        return "unknown metadata format";
    if (!meta_is(meta, "key", rq->key)) return "its metadata is for another key";
    if (!meta_is(meta, "package", v->package) || !meta_is(meta, "core", v->core) ||
        !meta_is(meta, "llvm", v->llvm))
        return "it was made by another version of gtscript or LLVM";
    if (!meta_is(meta, "backend", rq->backend) || !meta_is(meta, "target", rq->target))
        return "it was made for another backend or target";
    return NULL;
}

/* NULL when the entry in dfd is complete and valid for rq; else why not. */
static const char *read_entry(int dfd, const CacheRequest *rq, Loaded *L) {
    char *text = fs_read_at(dfd, META_FILE, (size_t)-1);
    if (text == NULL) {
        if (errno == ENOENT) L->vanished = true;
        return errno == ENODEV ? "its metadata is not a regular file" : "its metadata cannot be read";
    }
    PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "strict");
    free(text);
    PyObject *meta = s ? json_call("loads", s) : NULL;
    Py_XDECREF(s);
    if (meta == NULL) {
        PyErr_Clear();
        return "its metadata is not valid JSON";
    }
    const char *why = check_meta(meta, rq);
    const CacheFormat *f = cache_format(rq);
    if (why == NULL)
        why = read_checked(dfd, f->object_file, meta, "object", &L->obj, &L->objlen, &L->vanished);
    if (why == NULL)
        why = read_checked(dfd, f->source_file, meta, "source", &L->src, NULL, &L->vanished);
    Py_DECREF(meta);
    return why;
}

static DiskResult invalid(const char *path, const char *why, bool *replace) {
    *replace = true;
    cache_stats.invalid_entries++;
    if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                         "gtscript cache: ignoring the entry '%s' (%s); rebuilding it", path,
                         why) < 0)
        return DISK_ERROR;
    return DISK_MISS;
}

/* Why the entry `key` in dirfd cannot be opened as a directory. */
static const char *not_a_directory(int dirfd, const char *key) {
    struct stat sb;
    if (fstatat(dirfd, key, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(sb.st_mode)) return "it is a symbolic link, not a directory";
        if (!S_ISDIR(sb.st_mode)) return "it is not a directory";
    }
    return NULL;
}

static DiskResult load_from(int dirfd, const char *path, const CacheRequest *rq, CacheEntry **out,
                            bool *replace) {
    int dfd = openat(dirfd, rq->key, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dfd < 0) {
        if (errno == ENOENT) return DISK_MISS;
        const char *why = errno == ENOTDIR || errno == ELOOP ? not_a_directory(dirfd, rq->key)
                                                             : NULL;
        return invalid(path, why ? why : strerror(errno), replace);
    }
    Loaded L = {0};
    const char *why = read_entry(dfd, rq, &L);
    char err[1024] = "";
    if (why == NULL &&
        (*out = cache_entry_from_object(rq->key, cache_format(rq)->jit, L.obj, L.objlen, L.src, err,
                                        sizeof err)) == NULL)
        why = err[0] ? err : NULL;
    DiskResult r = DISK_HIT;
    if (*out == NULL && why == NULL) {
        free(L.src);
        r = DISK_ERROR; /* a Python exception (no memory) */
    } else if (why != NULL) {
        free(L.src);
        r = L.vanished ? (*replace = true, DISK_MISS) : invalid(path, why, replace);
    } else {
        /* a use, for least-recently-used eviction */
        utimensat(dfd, META_FILE, NULL, AT_SYMLINK_NOFOLLOW);
    }
    free(L.obj);
    close(dfd);
    return r;
}

DiskResult cache_disk_load(const CacheRequest *rq, CacheEntry **out, bool *replace) {
    *out = NULL;
    *replace = false;
    char *dir;
    int dirfd;
    CacheDirStatus s = cache_dir_prepare(true, &dir, &dirfd);
    if (s == CACHE_DIR_ERROR) return DISK_ERROR;
    DiskResult r = DISK_MISS;
    char *path = s == CACHE_DIR_OK ? cache_path_join(dir, rq->key) : NULL; /* for messages */
    if (path)
        r = load_from(dirfd, path, rq, out, replace);
    else if (s == CACHE_DIR_OK)
        r = DISK_ERROR;
    free(path);
    free(dir);
    if (dirfd >= 0) close(dirfd);
    return r;
}

/* ---- store -------------------------------------------------------------------------- */

static bool warn_store(const char *dir, const char *what) {
    return PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                            "gtscript cache: cannot store a compiled stencil in '%s' (%s: %s)", dir,
                            what, strerror(errno)) == 0;
}

/* Writes the three files into the fresh directory tmp; metadata last. */
static bool write_files(int dirfd, const char *tmp, const CacheRequest *rq, const char *obj,
                        size_t objlen, const char *src, PyObject *meta) {
    int dfd = openat(dirfd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dfd < 0) return false;
    const CacheFormat *f = cache_format(rq);
    bool ok = fs_write_at(dfd, f->object_file, obj, objlen) &&
              fs_write_at(dfd, f->source_file, src, strlen(src)) &&
              fs_write_at(dfd, META_FILE, PyBytes_AS_STRING(meta), (size_t)PyBytes_GET_SIZE(meta));
    int saved = errno;
    close(dfd);
    errno = saved;
    return ok;
}

/* Renames tmp to key. Another process may have stored the same key first: its entry is as
 * good as ours, unless we are replacing an invalid one (or rebuilding on request). A file or a
 * link under the key (ENOTDIR) is never as good as ours: it is always replaced. */
static bool publish(int dirfd, const char *tmp, const char *key, bool replace) {
    int r = renameat(dirfd, tmp, dirfd, key);
    if (r < 0 && (errno == ENOTDIR || ((errno == EEXIST || errno == ENOTEMPTY) && replace)) &&
        cache_discard(dirfd, key))
        r = renameat(dirfd, tmp, dirfd, key);
    return r == 0;
}

bool cache_disk_store(const CacheRequest *rq, const char *obj, size_t objlen, const char *source,
                      bool replace) {
    char *dir;
    int dirfd;
    CacheDirStatus s = cache_dir_prepare(true, &dir, &dirfd);
    if (s == CACHE_DIR_ERROR) return false;
    if (s != CACHE_DIR_OK) {
        free(dir);
        return true;
    }
    PyObject *meta = metadata_json(rq, obj, objlen, source ? source : "");
    char tmp[16];
    bool ok = meta != NULL;
    if (ok && !fs_mkdtemp_at(dirfd, ".tmp-", tmp, sizeof tmp)) {
        ok = warn_store(dir, "creating a temporary directory");
    } else if (ok) {
        bool published = false;
        if (!write_files(dirfd, tmp, rq, obj, objlen, source ? source : "", meta))
            ok = warn_store(dir, "writing");
        else if ((published = publish(dirfd, tmp, rq->key, replace)))
            cache_stats.stores++;
        else if (errno != EEXIST && errno != ENOTEMPTY)
            ok = warn_store(dir, "renaming into place");
        if (!published) fs_remove_dir_at(dirfd, tmp);
        cache_evict(dirfd, cache_max_bytes());
    }
    Py_XDECREF(meta);
    free(dir);
    close(dirfd);
    return ok;
}
