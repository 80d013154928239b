/*
 * Direct libm entry points for kernels.
 *
 * Since glibc 2.29, exp, log and pow (the default GLIBC_2.29 versions) are small wrappers:
 * each calls the implementation glibc selected for the CPU at load time (__exp_finite, an
 * ifunc: __ieee754_exp_fma on a CPU with FMA) through the PLT, then tests the result or the
 * argument to set errno, and returns the implementation's result unchanged (glibc 2.36's
 * implementations set errno themselves as well; a kernel reads none). In column physics,
 * where exp/log/pow are half the time, the wrappers cost a tenth of it (perf, the
 * benchmark's micro: exp@@GLIBC_2.29 5.6%, pow 3.1%, log 0.8% of its time). glibc still
 * exports the implementations as __exp_finite, __log_finite and __pow_finite (version
 * GLIBC_2.15, kept for binaries built with -ffinite-math-only before 2.31; despite the name
 * they compute every input, infinities and NaNs included, as the wrappers return). A kernel's
 * call of exp resolves to __exp_finite where both are there, so it computes the same bits as
 * libm's exp (tests/backends/cpu/test_libm_entry.py compares them with the wrappers, called
 * through ctypes).
 *
 * Only wrappers of that kind are bypassed: the float32 functions of glibc 2.27 and later have
 * none, and the GLIBC_2.2.5 wrappers of sinh, cosh, log10, ... may return another result than
 * the implementation for some inputs (the SVID error handling of __kernel_standard). Another
 * C library, or a glibc older than 2.29, keeps every call as it was.
 */
#include "backend/cpu/libm.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

typedef struct {
    const char *name;   /* the function a kernel calls */
    const char *direct; /* glibc's implementation without the errno wrapper */
    void *addr;         /* its address, or NULL (libm_init) */
} Entry;

static Entry ENTRIES[] = {
    {"exp", "__exp_finite", NULL},
    {"log", "__log_finite", NULL},
    {"pow", "__pow_finite", NULL},
};
enum { NENTRIES = sizeof ENTRIES / sizeof ENTRIES[0] };

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void libm_init(void) {
#if defined(__GLIBC__) && defined(__x86_64__)
    for (int i = 0; i < NENTRIES; i++) {
        /* the process's `exp` is glibc 2.29's wrapper (a wrapper of that version only sets
         * errno), and the implementation it calls is exported */
        void *wrapper = dlvsym(RTLD_DEFAULT, ENTRIES[i].name, "GLIBC_2.29");
        if (wrapper == NULL || wrapper != dlsym(RTLD_DEFAULT, ENTRIES[i].name)) continue;
        ENTRIES[i].addr = dlvsym(RTLD_DEFAULT, ENTRIES[i].direct, "GLIBC_2.15");
    }
#endif
}

void *libm_direct_entry(const char *name) {
    pthread_once(&once, libm_init);
    for (int i = 0; i < NENTRIES; i++)
        if (strcmp(ENTRIES[i].name, name) == 0) return ENTRIES[i].addr;
    return NULL;
}

size_t libm_direct_names(const char **names, size_t cap) {
    pthread_once(&once, libm_init);
    size_t n = 0;
    for (int i = 0; i < NENTRIES; i++) {
        if (ENTRIES[i].addr == NULL) continue;
        if (n < cap) names[n] = ENTRIES[i].name;
        n++;
    }
    return n;
}
