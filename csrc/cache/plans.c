#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cache/plans.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/dir.h"
#include "cache/evict.h"
#include "cache/fsutil.h"

static const char PLANS_FILE[] = "plans.txt";
static const char PLANS_MAGIC[] = "gtscript-plans 1\n";
/* the largest file read: a full one is PLANS_MAX_RECORDS lines at most */
enum { PLANS_MAX_BYTES = PLANS_MAX_RECORDS * PLANS_MAX_LINE + 64 };

/* The entry directory of `key`, opened without following links; -1 when there is none (or
 * the cache directory is unusable: its Python error, if any, is cleared, since the call
 * that asks goes on without the disk). */
static int open_entry(const char *key) {
    if (!cache_is_key_name(key)) return -1;
    char *dir;
    int dirfd;
    CacheDirStatus s = cache_dir_prepare(false, &dir, &dirfd);
    if (s == CACHE_DIR_ERROR) {
        PyErr_Clear();
        return -1;
    }
    free(dir);
    if (s != CACHE_DIR_OK) return -1;
    int fd = openat(dirfd, key, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    close(dirfd);
    return fd;
}

/* A line (without its newline) is a record when it has a name, a tab, a value, no other
 * control characters, and fits PLANS_MAX_LINE. */
static bool valid_line(const char *s, size_t n) {
    if (n == 0 || n >= PLANS_MAX_LINE) return false;
    int tabs = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\t')
            tabs++;
        else if (c < 0x20 || c == 0x7f)
            return false;
    }
    return tabs == 1 && s[0] != '\t' && s[n - 1] != '\t';
}

/* Each record of the file in order (the rest ignored): calls fn(line, length, ctx). Nothing
 * when the file is missing, unreadable or of another format. */
static void each_record(int efd, void (*fn)(const char *, size_t, void *), void *ctx) {
    size_t len;
    char *text = fs_read_at_most(efd, PLANS_FILE, PLANS_MAX_BYTES, &len);
    if (text == NULL) return;
    size_t m = sizeof PLANS_MAGIC - 1;
    if (len >= m && memcmp(text, PLANS_MAGIC, m) == 0) {
        for (size_t at = m; at < len;) {
            const char *nl = memchr(text + at, '\n', len - at);
            if (nl == NULL) break; /* a truncated last line */
            size_t n = (size_t)(nl - (text + at));
            if (valid_line(text + at, n)) fn(text + at, n, ctx);
            at += n + 1;
        }
    }
    free(text);
}

static bool has_name(const char *line, size_t n, const char *name) {
    size_t k = strlen(name);
    return n > k && memcmp(line, name, k) == 0 && line[k] == '\t';
}

typedef struct Lookup {
    const char *name;
    char *value;
    size_t size;
    bool found;
} Lookup;

static void look(const char *line, size_t n, void *ctx) {
    Lookup *L = ctx;
    size_t k = strlen(L->name);
    if (!has_name(line, n, L->name) || n - k - 1 >= L->size) return;
    memcpy(L->value, line + k + 1, n - k - 1);
    L->value[n - k - 1] = '\0';
    L->found = true; /* the last of several wins: the newest */
}

bool plans_read(const char *key, const char *name, char *value, size_t size) {
    int efd = open_entry(key);
    if (efd < 0) return false;
    Lookup L = {name, value, size, false};
    each_record(efd, look, &L);
    close(efd);
    return L.found;
}

typedef struct Kept {
    const char *name;
    size_t len[PLANS_MAX_RECORDS + 1];
    char *copy[PLANS_MAX_RECORDS + 1];
    int n;
    bool oom;
} Kept;

/* Keeps the newest PLANS_MAX_RECORDS - 1 other records (a ring: the oldest goes). */
static void keep(const char *line, size_t n, void *ctx) {
    Kept *K = ctx;
    if (has_name(line, n, K->name) || K->oom) return;
    char *c = malloc(n);
    if (c == NULL) {
        K->oom = true;
        return;
    }
    memcpy(c, line, n);
    if (K->n == PLANS_MAX_RECORDS - 1) {
        free(K->copy[0]);
        memmove(K->copy, K->copy + 1, (size_t)(K->n - 1) * sizeof *K->copy);
        memmove(K->len, K->len + 1, (size_t)(K->n - 1) * sizeof *K->len);
        K->n--;
    }
    K->copy[K->n] = c;
    K->len[K->n++] = n;
}

bool plans_write(const char *key, const char *name, const char *value) {
    size_t nn = strlen(name), nv = strlen(value);
    if (nn + nv + 1 >= PLANS_MAX_LINE) return false;
    int efd = open_entry(key);
    if (efd < 0) return false;
    Kept K = {.name = name};
    each_record(efd, keep, &K);
    size_t total = sizeof PLANS_MAGIC - 1 + nn + nv + 2;
    for (int i = 0; i < K.n; i++)
        total += K.len[i] + 1;
    char *text = K.oom ? NULL : malloc(total);
    bool ok = false;
    if (text != NULL) {
        size_t at = sizeof PLANS_MAGIC - 1;
        memcpy(text, PLANS_MAGIC, at);
        for (int i = 0; i < K.n; i++) {
            memcpy(text + at, K.copy[i], K.len[i]);
            at += K.len[i];
            text[at++] = '\n';
        }
        memcpy(text + at, name, nn);
        at += nn;
        text[at++] = '\t';
        memcpy(text + at, value, nv);
        at += nv;
        text[at++] = '\n';
        ok = valid_line(text + at - nn - nv - 2, nn + nv + 1) &&
             fs_replace_at(efd, PLANS_FILE, text, at);
    }
    free(text);
    for (int i = 0; i < K.n; i++)
        free(K.copy[i]);
    close(efd);
    return ok;
}
