/*
 * Level 1 of the module cache: key -> loaded code, for the life of the process, bounded: at
 * most GTSCRIPT_CACHE_MEMORY_ENTRIES keys (default 256), the least recently used dropped.
 *
 * A CacheEntry is the compiled, loaded kernel of one key. Every Module built for that key
 * shares it (re-decorating an equivalent definition costs no compile and no load); it is
 * reference counted, with the GIL held for every count change, and unloaded from the JIT
 * when its last user goes.
 */
#ifndef GT_CACHE_MEMORY_H
#define GT_CACHE_MEMORY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "backend/cpu/jit.h"
#include "cache/hash.h"

typedef struct CacheEntry {
    Py_ssize_t refs;
    char key[CACHE_HEX_LEN + 1];
    JitModule jit;       /* cpu: the code loaded into the JIT */
    char *object;        /* backends loaded outside the JIT (cuda): the object's bytes (a cubin) */
    size_t objlen;
    char *source;        /* source text for Module.source() (LLVM IR, CUDA C); may be NULL */
} CacheEntry;

/* This process's cache activity, reported by gtscript.cache.info(). */
typedef struct CacheStats {
    long memory_hits, disk_hits, misses, invalid_entries, stores;
} CacheStats;
extern CacheStats cache_stats;

/* A new entry holding one reference; takes ownership of `jit` and `source`. */
CacheEntry *cache_entry_new(const char *key, JitModule jit, char *source);
/* A new entry from an object file: loaded into the JIT when `jit`, else a copy of its bytes
 * kept for a loader outside the cache (the cuda driver). Takes ownership of `source` on
 * success. NULL either with the loader's complaint in err (no Python exception: the object
 * is bad) or, with err empty, a Python exception set. */
CacheEntry *cache_entry_from_object(const char *key, bool jit, const char *obj, size_t objlen,
                                    char *source, char *err, size_t errlen);
void cache_entry_ref(CacheEntry *e);
void cache_entry_unref(CacheEntry *e);

/* GTSCRIPT_CACHE_MEMORY_ENTRIES (read at every use; 256 when unset or not a count). */
Py_ssize_t cache_memory_limit(void);
/* A new reference to the entry of `key`, or NULL (never an error). */
CacheEntry *cache_memory_get(const char *key);
/* Makes `e` the entry of its key (the table holds its own reference); false on error. */
bool cache_memory_put(CacheEntry *e);
/* Drops the table's references; modules in use keep their code. */
void cache_memory_clear(void);
Py_ssize_t cache_memory_count(void);

#endif
