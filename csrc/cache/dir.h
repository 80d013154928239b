/*
 * Where the disk cache lives and whether it is safe to load code from.
 *
 * $GTSCRIPT_CACHE_DIR, else $XDG_CACHE_HOME/gtscript, else ~/.cache/gtscript. The
 * environment is read at every use, so a test or a user can switch directories at run time.
 * A directory is only used when it is owned by this user and not writable by group or
 * others: loading an object file from a directory someone else can write would run their code.
 * The check is made on a descriptor (the directory opened once, without following a link) and
 * every later access is relative to that descriptor, so swapping the path for a link after the
 * check changes nothing; a directory whose parent lets others rename it (writable by others
 * and not sticky) is refused as well.
 */
#ifndef GT_CACHE_DIR_H
#define GT_CACHE_DIR_H

#include <stdbool.h>

typedef enum {
    CACHE_DIR_OK,          /* *path is the usable directory, *fd an open descriptor of it */
    CACHE_DIR_ABSENT,      /* does not exist and create was false; *path is set */
    CACHE_DIR_UNAVAILABLE, /* cannot be created: a warning was issued, the disk level is off */
    CACHE_DIR_ERROR,       /* unsafe or a Python error: an exception is set */
} CacheDirStatus;

/* The configured path (malloc'ed), or NULL with a Python error set. */
char *cache_dir_path(void);
/* "a/b" in a malloc'ed string; NULL with MemoryError set. */
char *cache_path_join(const char *a, const char *b);
/* Resolves, optionally creates (mode 0700, parents as needed), opens and checks the directory.
 * *path is malloc'ed for every status but CACHE_DIR_ERROR; *fd is the directory's descriptor
 * (O_CLOEXEC, the caller closes it) for CACHE_DIR_OK and -1 otherwise. */
CacheDirStatus cache_dir_prepare(bool create, char **path, int *fd);
/* The size limit: $GTSCRIPT_CACHE_MAX_BYTES, 1 GiB by default. */
unsigned long long cache_max_bytes(void);

#endif
