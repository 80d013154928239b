/*
 * Level 2 of the module cache: one directory per key under the cache directory (dir.h),
 *     <key>/<object>    the compiled code: kernel.o (cpu: LLVM's object file) or
 *                       kernel.cubin (cuda: NVRTC's cubin)
 *     <key>/<source>    its source text (Module.source()): kernel.ll or kernel.cu
 *     <key>/meta.json   key, versions, backend, target, signature, extents, creation time,
 *                       and the name, size and SHA-256 of both files
 * The backend's CacheFormat names the two files and says how the object is loaded.
 * An entry is written under a temporary name and renamed into place, so other processes
 * see all of it or nothing. Before anything is loaded, the metadata must match the key,
 * versions and target and both files their recorded size and hash; anything else is
 * reported with a warning and rebuilt, never loaded.
 */
#ifndef GT_CACHE_DISK_H
#define GT_CACHE_DISK_H

#include <stdbool.h>
#include <stddef.h>

#include "cache/memory.h"
#include "ir/ir.h"

/* What one backend's entries hold. */
typedef struct CacheFormat {
    const char *object_file; /* the compiled code */
    const char *source_file; /* its source text */
    bool jit;                /* load the object into the JIT (cpu), else keep its bytes (cuda) */
} CacheFormat;
extern const CacheFormat cache_format_cpu, cache_format_cuda;

/* What a lookup or a store is about. */
typedef struct CacheRequest {
    const char *key;
    const char *backend;
    const char *target;         /* e.g. jit_target_id(), or the cuda arch and NVRTC version */
    const Stencil *st;          /* for the metadata's signature and extents */
    const CacheFormat *format;  /* NULL: cache_format_cpu */
} CacheRequest;

/* rq->format, or the cpu format when the request names none. */
const CacheFormat *cache_format(const CacheRequest *rq);

typedef enum { DISK_MISS, DISK_HIT, DISK_ERROR } DiskResult;

/* DISK_HIT: *out is a new, loaded entry. DISK_MISS: nothing usable (*replace is true when an
 * invalid entry is in the way). DISK_ERROR: a Python exception is set (unsafe directory). */
DiskResult cache_disk_load(const CacheRequest *rq, CacheEntry **out, bool *replace);

/* Writes an entry (replacing an existing one when `replace`), then evicts down to the size
 * limit. I/O failures only warn; false means a Python exception is set. */
bool cache_disk_store(const CacheRequest *rq, const char *obj, size_t objlen, const char *source,
                      bool replace);

#endif
