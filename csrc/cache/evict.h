/*
 * Housekeeping of the disk cache directory: sizes, least-recently-used eviction, clearing.
 * An entry's last use is the modification time of its metadata file, which a hit touches.
 * Entries are removed by first renaming them to a private name (readers never see a
 * half-deleted entry under its key) and then deleting the files; a key name that is not a
 * directory (a file or a link someone put there) is unlinked, never followed.
 * Every function works relative to the cache directory's descriptor (dir.h).
 */
#ifndef GT_CACHE_EVICT_H
#define GT_CACHE_EVICT_H

#include <stdbool.h>

/* Is `name` an entry directory name (a 64-digit lowercase hex key)? */
bool cache_is_key_name(const char *name);
/* Counts the entries under the directory `dirfd` and the bytes their files hold. */
void cache_totals(int dirfd, long *entries, unsigned long long *bytes);
/* Removes the least recently used entries until at most `max_bytes` remain. */
void cache_evict(int dirfd, unsigned long long max_bytes);
/* After an index file is stored (gtscript/_index.py): when the directory holds more index
 * files than the limit (docs/caching.md), the orphans and the oldest go. A readdir only
 * while under the limit. */
void cache_trim_indexes(int dirfd);
/* Removes every entry and stale temporary; returns how many entries went. */
long cache_clear_dir(int dirfd);
/* Removes the entry `name` in `dirfd` (a directory is renamed away first, anything else is
 * unlinked); false if it could not be removed. */
bool cache_discard(int dirfd, const char *name);

#endif
