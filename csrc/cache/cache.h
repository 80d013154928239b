/*
 * The module cache, both levels: memory (memory.h) then disk (disk.h), else build.
 * module.c computes the key (key.h) after analysis and asks for the loaded code here.
 */
#ifndef GT_CACHE_H
#define GT_CACHE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cache/disk.h"
#include "cache/key.h"
#include "cache/memory.h"

/* Builds the code of a miss: an object file and its source text, both malloc'ed.
 * False with a Python exception set. */
typedef bool (*CacheBuildFn)(void *ctx, char **obj, size_t *objlen, char **source);

/* The loaded code for rq->key (a new reference), looked up in memory, then on disk, else
 * built with `build`, loaded, stored on disk and remembered in memory. `rebuild` skips
 * both lookups and replaces what they hold. *origin is "memory", "disk" or "build".
 * NULL with a Python exception set. */
CacheEntry *cache_obtain(const CacheRequest *rq, bool rebuild, CacheBuildFn build, void *ctx,
                         const char **origin);

/* gtscript._core functions behind gtscript.cache: cache_info, cache_clear, cache_path. */
extern PyMethodDef cache_functions[];

#endif
