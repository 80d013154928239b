#include "cache/evict.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/fsutil.h"

/* Temporaries left by a process that died while writing or deleting: removed once they are
 * this old (a live writer finishes within seconds). */
enum { STALE_SECONDS = 3600 };

/* Index files of the decorator's pre-key (gtscript/_index.py) kept at most, of every backend
 * (the numpy backend's name no entry, so no entry's eviction bounds them): when a store finds
 * more, the oldest by modification time go until INDEX_LOW_WATER remain, so that a directory
 * at the limit is not scanned in full at every store. */
enum { MAX_INDEXES = 4096, INDEX_LOW_WATER = MAX_INDEXES - MAX_INDEXES / 8 };

#define INDEX_PREFIX "index-"
#define INDEX_MAGIC "gtscript-index-2\n"

typedef struct EntryInfo {
    char name[65];        /* a key: 64 hex digits */
    struct timespec used; /* metadata mtime; 0 when the metadata is missing (evicted first) */
    unsigned long long bytes;
} EntryInfo;

bool cache_is_key_name(const char *name) {
    size_t n = 0;
    for (; name[n]; n++)
        if (!((name[n] >= '0' && name[n] <= '9') || (name[n] >= 'a' && name[n] <= 'f')))
            return false;
    return n == 64;
}

static bool is_temp_name(const char *name) {
    return strncmp(name, ".tmp-", 5) == 0 || strncmp(name, ".del-", 5) == 0 ||
           strncmp(name, ".idx-tmp-", 9) == 0; /* an index file's (gtscript/_index.py) */
}

static void measure(int dirfd, const char *name, EntryInfo *e) {
    memset(e, 0, sizeof *e);
    memcpy(e->name, name, 64); /* only called for key names */
    e->name[64] = '\0';
    struct stat sb;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (d == NULL) {
        if (fd >= 0) close(fd);
        /* not a directory: its own size, and evicted first (used stays 0) */
        else if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
            e->bytes = (unsigned long long)sb.st_size;
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0) continue;
        e->bytes += (unsigned long long)sb.st_size;
        if (strcmp(de->d_name, "meta.json") == 0) e->used = sb.st_mtim;
    }
    closedir(d);
}

/* Every entry under dir (malloc'ed array); stale temporaries are removed on the way. */
static EntryInfo *scan(int dirfd, size_t *n) {
    *n = 0;
    /* a descriptor of its own: readdir moves the offset, which a dup() would share */
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (d == NULL) {
        if (fd >= 0) close(fd);
        return NULL;
    }
    size_t cap = 16;
    EntryInfo *v = malloc(cap * sizeof *v);
    struct dirent *de;
    time_t now = time(NULL);
    struct stat sb;
    while (v && (de = readdir(d)) != NULL) {
        if (is_temp_name(de->d_name)) {
            if (fstatat(dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
                now - sb.st_mtime > STALE_SECONDS)
                cache_discard(dirfd, de->d_name);
            continue;
        }
        if (!cache_is_key_name(de->d_name)) continue;
        if (*n == cap) {
            EntryInfo *w = realloc(v, 2 * cap * sizeof *v);
            if (w == NULL) break;
            v = w;
            cap *= 2;
        }
        measure(dirfd, de->d_name, &v[(*n)++]);
    }
    closedir(d);
    return v;
}

void cache_totals(int dirfd, long *entries, unsigned long long *bytes) {
    size_t n;
    EntryInfo *v = scan(dirfd, &n);
    *entries = (long)n;
    *bytes = 0;
    for (size_t i = 0; i < n; i++)
        *bytes += v[i].bytes;
    free(v);
}

static int by_use(const void *a, const void *b) {
    const struct timespec *x = &((const EntryInfo *)a)->used, *y = &((const EntryInfo *)b)->used;
    if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
    return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* ---- index files ------------------------------------------------------------------- */

typedef struct IndexInfo {
    char *name;
    struct timespec mtime;
} IndexInfo;

typedef enum { INDEX_ORPHAN, INDEX_ENTRY, INDEX_ENTRYLESS, INDEX_GONE } IndexKind;

/* What the key line of index file `name` says, checked against the directory: a file that
 * is not a regular file, of another format, or naming an entry that is gone is an orphan. */
static IndexKind index_kind(int dirfd, const char *name, struct timespec *mtime) {
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? INDEX_GONE : INDEX_ORPHAN; /* gone: nothing to do */
    enum { MAGIC_LEN = sizeof INDEX_MAGIC - 1, HEAD = MAGIC_LEN + 67 };
    char head[HEAD];
    struct stat sb;
    ssize_t got = 0;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        *mtime = sb.st_mtim;
        while (got < HEAD) {
            ssize_t r = read(fd, head + got, (size_t)(HEAD - got));
            if (r <= 0) break;
            got += r;
        }
    }
    close(fd);
    if (got < HEAD || memcmp(head, INDEX_MAGIC, MAGIC_LEN) != 0 || head[MAGIC_LEN + 64] != ' ' ||
        head[HEAD - 1] != '\n')
        return INDEX_ORPHAN;
    char key[65];
    memcpy(key, head + MAGIC_LEN, 64);
    key[64] = '\0';
    if (!cache_is_key_name(key)) return INDEX_ORPHAN;
    if (head[MAGIC_LEN + 65] == 'N') return INDEX_ENTRYLESS;
    if (head[MAGIC_LEN + 65] != 'E') return INDEX_ORPHAN;
    return fstatat(dirfd, key, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode) ? INDEX_ENTRY
                                                                                       : INDEX_ORPHAN;
}

static int by_mtime_newest_first(const void *a, const void *b) {
    const struct timespec *x = &((const IndexInfo *)a)->mtime, *y = &((const IndexInfo *)b)->mtime;
    if (x->tv_sec != y->tv_sec) return x->tv_sec > y->tv_sec ? -1 : 1;
    return (x->tv_nsec < y->tv_nsec) - (x->tv_nsec > y->tv_nsec);
}

/* Index files go with the entries they name, so that they never outgrow the cache: an orphan
 * is removed (a writer racing with this sees a miss next time and writes it again), and of
 * the others at most MAX_INDEXES stay (see INDEX_LOW_WATER). */
static void evict_indexes(int dirfd) {
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (d == NULL) {
        if (fd >= 0) close(fd);
        return;
    }
    IndexInfo *keep = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, INDEX_PREFIX, sizeof INDEX_PREFIX - 1) != 0) continue;
        struct timespec mtime = {0, 0};
        IndexKind k = index_kind(dirfd, de->d_name, &mtime);
        if (k == INDEX_ORPHAN) {
            unlinkat(dirfd, de->d_name, 0); /* a directory of that name stays: not ours */
            continue;
        }
        if (k == INDEX_GONE) continue;
        if (n == cap) {
            size_t c = cap ? 2 * cap : 64;
            IndexInfo *w = realloc(keep, c * sizeof *w);
            if (w == NULL) break; /* out of memory: the count is bounded at a later store */
            keep = w;
            cap = c;
        }
        if ((keep[n].name = strdup(de->d_name)) == NULL) break;
        keep[n++].mtime = mtime;
    }
    closedir(d);
    if (n > MAX_INDEXES) {
        qsort(keep, n, sizeof *keep, by_mtime_newest_first);
        for (size_t i = INDEX_LOW_WATER; i < n; i++) unlinkat(dirfd, keep[i].name, 0);
    }
    for (size_t i = 0; i < n; i++) free(keep[i].name);
    free(keep);
}

/* The number of names that look like index files (a readdir, no file opened). */
static size_t count_indexes(int dirfd) {
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (d == NULL) {
        if (fd >= 0) close(fd);
        return 0;
    }
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += strncmp(de->d_name, INDEX_PREFIX, sizeof INDEX_PREFIX - 1) == 0;
    closedir(d);
    return n;
}

void cache_trim_indexes(int dirfd) {
    if (count_indexes(dirfd) > MAX_INDEXES) evict_indexes(dirfd);
}

void cache_evict(int dirfd, unsigned long long max_bytes) {
    size_t n;
    EntryInfo *v = scan(dirfd, &n);
    unsigned long long total = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i].bytes;
    if (total > max_bytes) qsort(v, n, sizeof *v, by_use);
    for (size_t i = 0; i < n && total > max_bytes; i++)
        if (cache_discard(dirfd, v[i].name)) total -= v[i].bytes;
    free(v);
    evict_indexes(dirfd);
}

long cache_clear_dir(int dirfd) {
    size_t n;
    EntryInfo *v = scan(dirfd, &n);
    long removed = 0;
    for (size_t i = 0; i < n; i++)
        removed += cache_discard(dirfd, v[i].name);
    free(v);
    return removed;
}

bool cache_discard(int dirfd, const char *name) {
    struct stat sb;
    if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0) return false;
    if (!S_ISDIR(sb.st_mode)) return unlinkat(dirfd, name, 0) == 0 || errno == ENOENT;
    if (strncmp(name, ".del-", 5) == 0) return fs_remove_dir_at(dirfd, name);
    /* renameat() replaces the empty directory fs_mkdtemp_at made, atomically. */
    char to[16];
    if (!fs_mkdtemp_at(dirfd, ".del-", to, sizeof to)) return false;
    if (renameat(dirfd, name, dirfd, to) < 0) {
        unlinkat(dirfd, to, AT_REMOVEDIR);
        return false;
    }
    return fs_remove_dir_at(dirfd, to);
}
