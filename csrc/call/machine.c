/*
 * Cache sizes from sysfs (Linux). Each index directory describes one cache of CPU 0: its
 * level, type (Data, Instruction, Unified) and size ("32K", "1024K", "32M").
 */
#include "call/machine.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int64_t sizes[4];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int read_line(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return 0;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    return ok;
}

static void read_caches(void) {
    for (int idx = 0; idx < 16; idx++) {
        char path[96], buf[64];
        int level;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
        if (!read_line(path, buf, sizeof buf) || sscanf(buf, "%d", &level) != 1) break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
        if (!read_line(path, buf, sizeof buf) || strncmp(buf, "Instruction", 11) == 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        long long v;
        char unit = 0;
        if (!read_line(path, buf, sizeof buf) || sscanf(buf, "%lld%c", &v, &unit) < 1 || v <= 0 ||
            v > (1LL << 40))
            continue;
        int64_t bytes = unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : unit == 'G' ? v << 30 : v;
        if (level >= 1 && level <= 3) sizes[level] = bytes;
    }
}

int64_t cpu_cache_bytes(int level) {
    pthread_once(&once, read_caches);
    return level >= 1 && level <= 3 ? sizes[level] : 0;
}
