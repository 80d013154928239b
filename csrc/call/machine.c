/*
 * Cache sizes from sysfs (Linux). Each index directory describes one cache of CPU 0: its
 * level, type (Data, Instruction, Unified) and size ("32K", "1024K", "32M"). The CPU's model
 * name from /proc/cpuinfo.
 */
#include "call/machine.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int64_t sizes[4];
static pthread_once_t once = PTHREAD_ONCE_INIT, model_once = PTHREAD_ONCE_INIT;
static char model[128];

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

/* The first of these /proc/cpuinfo keys that is present names the model (x86, most arm64
 * kernels, s390x/ppc64, risc-v). */
static void read_model(void) {
    static const char *keys[] = {"model name", "Processor", "cpu model", "uarch"};
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) return;
    char line[256];
    int best = (int)(sizeof keys / sizeof *keys);
    while (fgets(line, sizeof line, f) != NULL && best > 0) {
        for (int k = 0; k < best; k++) {
            size_t n = strlen(keys[k]);
            if (strncmp(line, keys[k], n) != 0 || (line[n] != ' ' && line[n] != '\t' && line[n] != ':'))
                continue;
            const char *v = strchr(line + n, ':');
            if (v == NULL) continue;
            for (v++; *v == ' ' || *v == '\t'; v++) {}
            snprintf(model, sizeof model, "%s", v);
            model[strcspn(model, "\n")] = '\0';
            best = k;
            break;
        }
    }
    fclose(f);
}

const char *cpu_model_name(void) {
    pthread_once(&model_once, read_model);
    return model;
}
