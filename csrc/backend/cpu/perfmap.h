/*
 * Names for JIT-compiled code, for profilers: with GTSCRIPT_PERF_MAP=1 every loaded kernel's
 * functions are appended to /tmp/perf-<pid>.map, the file `perf report` (and other profilers
 * that read perf maps) uses to name addresses outside any mapped file. Off by default; when
 * off, a load pays one cached flag test.
 */
#ifndef GT_PERFMAP_H
#define GT_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>

/* Whether GTSCRIPT_PERF_MAP=1 (read once per process). */
bool perfmap_enabled(void);

/* Appends a line per function of the loaded object file `obj` (the one the JIT just loaded),
 * placed from the address `kernel` of its GT_KERNEL_SYMBOL: functions of the same section keep
 * their offsets from it. Names are "gtscript:<stencil>:<function>", the stencil's name being the
 * object's file symbol. Best effort: a failure is said once on stderr and changes nothing else. */
void perfmap_record(const char *obj, size_t objlen, const void *kernel);

#endif
