/*
 * NVRTC, loaded with dlopen on first use (no CUDA headers or libraries at build time).
 * Searched, in order: $CUDA_HOME (and $CUDA_PATH) lib64/ and lib/, the folders the
 * nvidia-cuda-nvrtc wheel installs (site-packages/nvidia/<x>/lib for every sys.path entry,
 * given by the caller), then the system's library path. libnvrtc-builtins is loaded from
 * the same folder first, since libnvrtc finds it only through the library search path.
 */
#ifndef GT_NVRTC_H
#define GT_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

/* `dirs`: extra folders to search after CUDA_HOME (the wheel's). False with a message
 * naming everything that was looked at. Not thread-safe: call with the GIL held. */
bool nvrtc_load(const char *const *dirs, int ndirs, char *err, size_t errlen);

/* "13.0" etc.; valid after nvrtc_load. */
const char *nvrtc_version(void);

/* Compiles `source` for `arch` ("sm_90": a cubin; "compute_90": PTX) into a malloc'ed
 * buffer. False with the compiler's log in err. */
bool nvrtc_compile(const char *source, const char *name, const char *arch, char **out, size_t *outlen,
                   char *err, size_t errlen);

/* How many compilations nvrtc_compile has started in this process (a cache hit starts none). */
long nvrtc_compile_count(void);

#endif
