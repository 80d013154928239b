/*
 * The C library's entry points a kernel's libm calls resolve to (libm.c).
 */
#ifndef GT_CPU_LIBM_H
#define GT_CPU_LIBM_H

#include <stddef.h>

/* The address a kernel's call of libm function `name` ("exp") should run in place of the
 * one the process resolves `name` to, or NULL: the same function without its errno wrapper,
 * where the C library has one that returns the wrapper's result bit for bit. */
void *libm_direct_entry(const char *name);

/* The names of the functions that have a direct entry here (at most `cap` of them, in
 * `names`); how many there are. */
size_t libm_direct_names(const char **names, size_t cap);

#endif
