/* NVRTC through dlopen: see nvrtc.h. Only the handful of entry points the backend uses
 * are declared here, with NVRTC's documented C signatures. */
#include "backend/cuda/nvrtc.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

typedef int nvrtcResult; /* NVRTC_SUCCESS == 0 */
typedef struct _nvrtcProgram *nvrtcProgram;

static struct {
    bool loaded;
    char version[32];
    const char *(*GetErrorString)(nvrtcResult);
    nvrtcResult (*Version)(int *, int *);
    nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                 const char *const *);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *);
    nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetPTX)(nvrtcProgram, char *);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
} N;

/* The last match of `pattern` in sorted order (the highest version), or NULL. */
static char *last_match(const char *dir, const char *pattern) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, pattern);
    glob_t g;
    char *r = NULL;
    if (glob(path, 0, NULL, &g) == 0 && g.gl_pathc > 0) r = strdup(g.gl_pathv[g.gl_pathc - 1]);
    globfree(&g);
    return r;
}

static void *open_in(const char *dir) {
    char *lib = last_match(dir, "libnvrtc.so*");
    if (lib == NULL) return NULL;
    char *builtins = last_match(dir, "libnvrtc-builtins.so*");
    if (builtins) dlopen(builtins, RTLD_NOW | RTLD_GLOBAL); /* kept loaded for libnvrtc */
    free(builtins);
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    free(lib);
    return h;
}

static void *open_system(void) {
    static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (h) return h;
    }
    return NULL;
}

static bool bind(void *h, char *err, size_t errlen) {
#define SYM(field, name)                                                                           \
    if ((*(void **)&N.field = dlsym(h, name)) == NULL) {                                           \
        snprintf(err, errlen, "the NVRTC library lacks %s", name);                                 \
        return false;                                                                              \
    }
    SYM(GetErrorString, "nvrtcGetErrorString");
    SYM(Version, "nvrtcVersion");
    SYM(CreateProgram, "nvrtcCreateProgram");
    SYM(DestroyProgram, "nvrtcDestroyProgram");
    SYM(CompileProgram, "nvrtcCompileProgram");
    SYM(GetPTXSize, "nvrtcGetPTXSize");
    SYM(GetPTX, "nvrtcGetPTX");
    SYM(GetCUBINSize, "nvrtcGetCUBINSize");
    SYM(GetCUBIN, "nvrtcGetCUBIN");
    SYM(GetProgramLogSize, "nvrtcGetProgramLogSize");
    SYM(GetProgramLog, "nvrtcGetProgramLog");
#undef SYM
    int major = 0, minor = 0;
    N.Version(&major, &minor);
    snprintf(N.version, sizeof N.version, "%d.%d", major, minor);
    return true;
}

bool nvrtc_load(const char *const *dirs, int ndirs, char *err, size_t errlen) {
    if (N.loaded) return true;
    StrBuf looked = {0};
    void *h = NULL;
    static const char *const envs[] = {"CUDA_HOME", "CUDA_PATH"};
    for (size_t e = 0; e < 2 && h == NULL; e++) {
        const char *root = getenv(envs[e]);
        if (root == NULL || root[0] == '\0') continue;
        static const char *const subs[] = {"lib64", "lib"};
        for (int s = 0; s < 2 && h == NULL; s++) {
            char dir[4096];
            snprintf(dir, sizeof dir, "%s/%s", root, subs[s]);
            sb_printf(&looked, "%s%s (%s)", looked.len ? ", " : "", dir, envs[e]);
            h = open_in(dir);
        }
    }
    for (int d = 0; d < ndirs && h == NULL; d++) {
        sb_printf(&looked, "%s%s", looked.len ? ", " : "", dirs[d]);
        h = open_in(dirs[d]);
    }
    if (h == NULL) h = open_system();
    if (h == NULL) {
        const char *where = "only on the system library path (CUDA_HOME and CUDA_PATH are "
                            "unset, and no sys.path entry has the nvidia-cuda-nvrtc wheel's "
                            "nvidia/*/lib)";
        bool some = looked.len && looked.data;
        snprintf(err, errlen,
                 "NVRTC (libnvrtc.so*) was not found: looked %s%s%s; install it with "
                 "'pip install gtscript[cuda]' (or 'pip install nvidia-cuda-nvrtc') or set "
                 "CUDA_HOME",
                 some ? "in " : where, some ? looked.data : "",
                 some ? " and on the system library path" : "");
        sb_free(&looked);
        return false;
    }
    sb_free(&looked);
    if (!bind(h, err, errlen)) return false;
    N.loaded = true;
    return true;
}

const char *nvrtc_version(void) { return N.loaded ? N.version : ""; }

static void program_log(nvrtcProgram p, char *err, size_t errlen) {
    size_t n = 0;
    if (N.GetProgramLogSize(p, &n) != 0 || n == 0) return;
    char *log = malloc(n + 1);
    if (log == NULL) return;
    if (N.GetProgramLog(p, log) == 0) {
        log[n] = '\0';
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, ":\n%s", log);
    }
    free(log);
}

static atomic_long compiles; /* nvrtc_compile runs without the GIL */

long nvrtc_compile_count(void) {
    return atomic_load(&compiles);
}

bool nvrtc_compile(const char *source, const char *name, const char *arch, char **out, size_t *outlen,
                   char *err, size_t errlen) {
    *out = NULL;
    *outlen = 0;
    if (!N.loaded) {
        snprintf(err, errlen, "NVRTC is not loaded");
        return false;
    }
    atomic_fetch_add(&compiles, 1);
    bool cubin = strncmp(arch, "sm_", 3) == 0;
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    /* No FMA contraction: results equal the cpu backend's (and NumPy's) operation by operation. */
    /* 177: a helper or prologue value the kernels of this stencil do not use */
    const char *opts[] = {archopt, "--std=c++17", "--fmad=false", "--diag-suppress=177"};
    nvrtcProgram p = NULL;
    nvrtcResult r = N.CreateProgram(&p, source, name, 0, NULL, NULL);
    if (r != 0) {
        snprintf(err, errlen, "nvrtcCreateProgram: %s", N.GetErrorString(r));
        return false;
    }
    bool ok = false;
    r = N.CompileProgram(p, (int)(sizeof opts / sizeof *opts), opts);
    if (r != 0) {
        snprintf(err, errlen, "NVRTC could not compile the generated source for %s (%s)", arch, N.GetErrorString(r));
        program_log(p, err, errlen);
        goto done;
    }
    size_t n = 0;
    r = cubin ? N.GetCUBINSize(p, &n) : N.GetPTXSize(p, &n);
    char *buf = r == 0 ? malloc(n ? n : 1) : NULL;
    if (buf == NULL) {
        snprintf(err, errlen, "NVRTC returned no %s: %s", cubin ? "cubin" : "PTX", r ? N.GetErrorString(r) : "out of memory");
        goto done;
    }
    r = cubin ? N.GetCUBIN(p, buf) : N.GetPTX(p, buf);
    if (r != 0) {
        free(buf);
        snprintf(err, errlen, "NVRTC returned no %s: %s", cubin ? "cubin" : "PTX", N.GetErrorString(r));
        goto done;
    }
    *out = buf;
    *outlen = n;
    ok = true;
done:
    N.DestroyProgram(&p);
    return ok;
}
