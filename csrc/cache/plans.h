/*
 * The measured call plans of a disk cache entry (call/tune.h): a small text file next to the
 * entry's object file and metadata,
 *     <key>/plans.txt   "gtscript-plans 1", then one record per line: "<name>\t<value>"
 * The caller decides what names and values say (the tuner: the machine, layout, threads and
 * domain; the plan measured). At most PLANS_MAX_RECORDS records, the oldest dropped. The file
 * is written under a temporary name and renamed into place; a file that cannot be read, or of
 * another format, counts as empty and a malformed line as absent, and both are replaced at the
 * next write. It lives and goes with its entry: eviction counts it in the entry's bytes and
 * removes it with the rest. Nothing here creates an entry: a stencil without one (no disk
 * cache) keeps its measurements in memory.
 */
#ifndef GT_CACHE_PLANS_H
#define GT_CACHE_PLANS_H

#include <stdbool.h>
#include <stddef.h>

enum { PLANS_MAX_RECORDS = 64, PLANS_MAX_LINE = 2048 };

/* The value recorded under `name` in entry `key`'s file, into value[0..size) (false: no
 * entry, no file, no such record, or unreadable). Call with the GIL held; never raises. */
bool plans_read(const char *key, const char *name, char *value, size_t size);

/* Records `value` under `name` (replacing an earlier record of that name) in entry `key`'s
 * file; true when written. Names and values hold no tab or newline. Call with the GIL held;
 * never raises. */
bool plans_write(const char *key, const char *name, const char *value);

#endif
