#include "cache/dir.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *cache_path_join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", a, b);
    else
        PyErr_NoMemory();
    return p;
}

static const char *nonempty_env(const char *name) {
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

char *cache_dir_path(void) {
    const char *dir = nonempty_env("GTSCRIPT_CACHE_DIR");
    if (dir) {
        char *p = strdup(dir);
        if (p == NULL) PyErr_NoMemory();
        return p;
    }
    const char *xdg = nonempty_env("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/')
        return cache_path_join(xdg, "gtscript"); /* the XDG spec ignores relative paths */
    const char *home = nonempty_env("HOME");
    if (home == NULL) {
        const struct passwd *pw = getpwuid(geteuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (home == NULL) {
        PyErr_SetString(
            PyExc_RuntimeError,
            "gtscript cache: no home directory; set GTSCRIPT_CACHE_DIR to a private directory");
        return NULL;
    }
    char *cache = cache_path_join(home, ".cache");
    char *p = cache ? cache_path_join(cache, "gtscript") : NULL;
    free(cache);
    return p;
}

/* mkdir -p with mode 0700 for every directory it creates (as XDG asks of ~/.cache). */
static bool make_dirs(char *path) {
    for (char *s = path + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        int r = mkdir(path, 0700);
        *s = '/';
        if (r < 0 && errno != EEXIST) return false;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST;
}

static CacheDirStatus refuse(const char *path, const char *why) {
    PyErr_Format(PyExc_PermissionError,
                 "gtscript refuses the cache directory '%s': %s, so loading compiled code from it "
                 "could run code someone else put there. Make it private (chmod 700, owned by "
                 "you) or set GTSCRIPT_CACHE_DIR to a private directory.",
                 path, why);
    return CACHE_DIR_ERROR;
}

static CacheDirStatus check_safe(const char *path, const struct stat *sb) {
    char why[160];
    if (!S_ISDIR(sb->st_mode)) return refuse(path, "it is not a directory");
    if (sb->st_uid != geteuid()) {
        snprintf(why, sizeof why, "it is owned by user id %lu, not by you (user id %lu)",
                 (unsigned long)sb->st_uid, (unsigned long)geteuid());
        return refuse(path, why);
    }
    if (sb->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, sizeof why, "it is writable by %s (mode %04o)",
                 (sb->st_mode & S_IWOTH) ? "every user" : "its group",
                 (unsigned)(sb->st_mode & 07777));
        return refuse(path, why);
    }
    return CACHE_DIR_OK;
}

/* The directory holding `path` (malloc'ed): what decides who may rename or replace it. */
static char *parent_of(const char *path) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--; /* "a/b/" names b */
    while (n > 0 && path[n - 1] != '/') n--;
    if (n == 0) return strdup(".");
    while (n > 1 && path[n - 1] == '/') n--;
    char *p = strndup(path, n);
    return p;
}

/* Another user who can write to the parent (and is not stopped by the sticky bit) can rename
 * the cache directory away and put a link or a directory of theirs in its place. */
static CacheDirStatus check_parent(const char *path) {
    char *parent = parent_of(path);
    if (parent == NULL) {
        PyErr_NoMemory();
        return CACHE_DIR_ERROR;
    }
    struct stat sb;
    /* O_PATH: the parent's mode and owner need no read permission on it */
    int pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    bool ok = pfd >= 0 && fstat(pfd, &sb) == 0;
    int err = errno;
    if (pfd >= 0) close(pfd);
    CacheDirStatus s = CACHE_DIR_OK;
    if (!ok) {
        char why[256];
        snprintf(why, sizeof why, "its parent directory '%s' cannot be checked (%s)", parent,
                 strerror(err));
        s = refuse(path, why);
    } else if ((sb.st_mode & S_IWOTH) && !(sb.st_mode & S_ISVTX)) {
        PyErr_Format(PyExc_PermissionError,
                     "gtscript refuses the cache directory '%s': its parent directory '%s' is "
                     "writable by every user and not sticky (mode %04o), so anyone could replace "
                     "the cache directory with one holding their code. Move it to a private "
                     "place or set GTSCRIPT_CACHE_DIR to a private directory.",
                     path, parent, (unsigned)(sb.st_mode & 07777));
        s = CACHE_DIR_ERROR;
    }
    free(parent);
    return s;
}

/* Warns once per process: a read-only home should not make every build noisy. */
static CacheDirStatus unavailable(const char *path, int err) {
    static bool warned;
    if (!warned) {
        warned = true;
        if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                             "gtscript cache: cannot create '%s' (%s); compiled stencils are "
                             "cached in memory only",
                             path, strerror(err)) < 0)
            return CACHE_DIR_ERROR;
    }
    return CACHE_DIR_UNAVAILABLE;
}

static int open_dir(const char *path) {
    return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Opens the directory once; the checks read the descriptor, not the path, so what was checked
 * is what every later *at() call uses. */
static CacheDirStatus prepare(const char *path, bool create, int *fd) {
    *fd = open_dir(path);
    if (*fd < 0 && errno == ENOENT) {
        if (!create) return CACHE_DIR_ABSENT;
        char *p = strdup(path);
        bool made = p && make_dirs(p);
        int err = p ? errno : ENOMEM;
        free(p);
        if (!made) return unavailable(path, err);
        *fd = open_dir(path);
    }
    if (*fd < 0) {
        struct stat lsb; /* only to say why: O_NOFOLLOW with O_DIRECTORY fails either way */
        if ((errno == ELOOP || errno == ENOTDIR) && lstat(path, &lsb) == 0)
            return refuse(path, S_ISLNK(lsb.st_mode) ? "it is a symbolic link"
                                                     : "it is not a directory");
        return unavailable(path, errno);
    }
    struct stat sb;
    CacheDirStatus s;
    if (fstat(*fd, &sb) < 0)
        s = unavailable(path, errno);
    else if ((s = check_safe(path, &sb)) == CACHE_DIR_OK)
        s = check_parent(path);
    if (s != CACHE_DIR_OK) {
        close(*fd);
        *fd = -1;
    }
    return s;
}

CacheDirStatus cache_dir_prepare(bool create, char **path, int *fd) {
    *fd = -1;
    *path = cache_dir_path();
    if (*path == NULL) return CACHE_DIR_ERROR;
    CacheDirStatus s = prepare(*path, create, fd);
    if (s == CACHE_DIR_ERROR) {
        free(*path);
        *path = NULL;
    }
    return s;
}

unsigned long long cache_max_bytes(void) {
    const char *v = nonempty_env("GTSCRIPT_CACHE_MAX_BYTES");
    if (v) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (errno == 0 && *end == '\0' && v[0] != '-') return n;
    }
    return 1ULL << 30;
}
