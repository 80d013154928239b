/*
 * SHA-256 through Python's hashlib (OpenSSL underneath): a maintained implementation for
 * cache keys and for checking cached object files, rather than a hand-written one.
 * Call with the GIL held.
 */
#ifndef GT_CACHE_HASH_H
#define GT_CACHE_HASH_H

#include <stdbool.h>
#include <stddef.h>

enum { CACHE_HEX_LEN = 64 }; /* hex digits of a SHA-256 digest */

/* Writes the hex digest of data[0..n) and a NUL into hex; false with a Python error set. */
bool cache_sha256_hex(const void *data, size_t n, char hex[CACHE_HEX_LEN + 1]);

#endif
