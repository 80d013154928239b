/*
 * The cache key: SHA-256 of the canonical IR text (ir/serialise.h) together with everything
 * else the compiled code depends on: backend, code options, target, LLVM version, the
 * package version and the build of the compiler core itself (a hash of its shared object,
 * so a rebuilt compiler never loads objects an earlier build produced).
 */
#ifndef GT_CACHE_KEY_H
#define GT_CACHE_KEY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>

#include "cache/hash.h"
#include "ir/ir.h"

/* What the key and an on-disk entry's metadata record; strings live for the process. */
typedef struct CacheVersions {
    const char *package; /* gtscript.__version__ */
    const char *core;    /* SHA-256 of the gtscript._core shared object */
    const char *llvm;    /* LLVM_VERSION_STRING */
} CacheVersions;

/* NULL with a Python error set when they cannot be determined. */
const CacheVersions *cache_versions(void);
/* Hashes the core's shared object now, at import: the file on disk may be replaced by a
 * newer build while this process runs the one it loaded. False with a Python error set. */
bool cache_init(void);

/* key = hex SHA-256 of the key document. `target` identifies the machine code target
 * ("triple/cpu/features" for cpu); `options` (a dict or NULL) holds the code options, of
 * which every one except "rebuild" is part of the key. False with a Python error set. */
bool cache_key(const Stencil *st, const char *backend, const char *target, PyObject *options,
               char key[CACHE_HEX_LEN + 1]);

/* The key of a variant of the code of `key` (another layout class of the same stencil):
 * SHA-256 of the key and the variant number. False with a Python error set. */
bool cache_variant_key(const char *key, int variant, char out[CACHE_HEX_LEN + 1]);

#endif
