/*
 * Housekeeping of the disk cache directory: sizes, least-recently-used eviction, clearing.
 * An entry's last use is the modification time of its metadata file, which a hit touches.
 * Entries are removed by first renaming them to a private name (readers never see a
 * half-deleted entry under its key) and then deleting the files.
 */
#ifndef GT_CACHE_EVICT_H
#define GT_CACHE_EVICT_H

#include <stdbool.h>

/* Is `name` an entry directory name (a 64-digit lowercase hex key)? */
bool cache_is_key_name(const char *name);
/* Counts the entries under `dir` and the bytes their files hold. */
void cache_totals(const char *dir, long *entries, unsigned long long *bytes);
/* Removes the least recently used entries until at most `max_bytes` remain. */
void cache_evict(const char *dir, unsigned long long max_bytes);
/* Removes every entry and stale temporary; returns how many entries went. */
long cache_clear_dir(const char *dir);
/* Removes the entry dir/name (renamed away first); false if it could not be moved. */
bool cache_discard(const char *dir, const char *name);

#endif
