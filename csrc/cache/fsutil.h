/* Small POSIX file helpers for the disk cache: whole-file reads and writes that never
 * follow symbolic links, and removal of an entry directory. errno tells why.
 * Reads open with O_NONBLOCK and refuse anything but a regular file (errno = ENODEV), so a FIFO
 * or a device put where a file belongs can never block or feed the reader. */
#ifndef GT_CACHE_FSUTIL_H
#define GT_CACHE_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The whole file into a malloc'ed buffer (NUL-terminated, *len excludes the NUL). */
char *fs_read_path(const char *path, size_t *len);
/* The file `name` in directory `dirfd`, which must hold exactly `expect` bytes (a regular
 * file, not a link); NULL with errno = EINVAL when the size differs. */
char *fs_read_at(int dirfd, const char *name, size_t expect);
/* The file `name` in directory `dirfd` (a regular file, not a link) when it holds at most
 * `max` bytes (NUL-terminated, *len excludes the NUL); NULL with errno = EFBIG when larger. */
char *fs_read_at_most(int dirfd, const char *name, size_t max, size_t *len);
/* Creates `name` in `dirfd` (mode 0600, must not exist) holding data[0..n). */
bool fs_write_at(int dirfd, const char *name, const void *data, size_t n);
/* Replaces (or creates) `name` in `dirfd` with data[0..n): written under a fresh temporary
 * name (`name` + ".tmp-" + 6 random characters, removed on failure), then renamed over it,
 * so that readers see the old file or the new one, whole. */
bool fs_replace_at(int dirfd, const char *name, const void *data, size_t n);
/* Creates a fresh directory `prefix` + 6 random characters in `dirfd` (mode 0700), like
 * mkdtemp(3) relative to a descriptor; name[] receives its name (size at least
 * strlen(prefix) + 7). */
bool fs_mkdtemp_at(int dirfd, const char *prefix, char *name, size_t size);
/* Removes the directory `name` in `dirfd` and what it holds (an entry's files, and the
 * directories a damaged entry may hold, a few levels deep; links are removed, never
 * followed). True when it is gone. */
bool fs_remove_dir_at(int dirfd, const char *name);

#endif
