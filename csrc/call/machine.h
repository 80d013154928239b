/*
 * Facts of the machine the call plans are sized for, as the OS reports them.
 */
#ifndef GT_MACHINE_H
#define GT_MACHINE_H

#include <stdint.h>

/* Bytes of the data (or unified) cache of `level` (1, 2, 3) of CPU 0, from
 * /sys/devices/system/cpu/cpu0/cache; 0 when the OS does not say. Read once. */
int64_t cpu_cache_bytes(int level);

/* The CPU's model as the OS names it (/proc/cpuinfo: "model name", else "Processor",
 * "cpu model" or "uarch"), "" when it does not say. Read once. */
const char *cpu_model_name(void);

#endif
