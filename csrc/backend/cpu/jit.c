#include "backend/cpu/jit.h"
#include "backend/cpu/libm.h"
#include "backend/cpu/vecmath.h"

#include "backend/cpu/perfmap.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/LLJITUtils.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

/* Process-wide JIT state. LLVM objects are not safe for concurrent use from several
 * threads, so every use of these below holds `lock`; a build's target machine is its own
 * while it holds it (jit_tm_acquire). */
enum { JIT_SPARE_TMS = 16 };
static struct {
    pthread_mutex_t lock;
    bool ready;
    bool asm_parser; /* LLVMInitializeNativeAsmParser succeeded */
    char *triple, *cpu, *features, *target_id;
    int codegen_level;
    LLVMTargetMachineRef tm; /* the first target machine: data layout, and the first build's */
    bool tm_taken;
    LLVMTargetMachineRef tms[JIT_SPARE_TMS]; /* more, made for concurrent builds, free */
    int ntms;
    LLVMOrcLLJITRef jit;
    unsigned long ndylibs;
    /* JITDylibs whose module is gone, emptied and ready for the next load. LLVM's C API
     * cannot remove a JITDylib from the session, so a dylib per load would grow the session
     * by one for every module ever loaded; reusing emptied ones bounds them by the most
     * modules alive at once. */
    LLVMOrcJITDylibRef *spare;
    size_t nspare, capspare;
} J = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool take_error(LLVMErrorRef e, const char *what, char *err, size_t errlen) {
    if (e == NULL) return true;
    char *msg = LLVMGetErrorMessage(e);
    snprintf(err, errlen, "%s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return false;
}

static LLVMTargetMachineRef make_tm(LLVMCodeGenOptLevel level, char *err, size_t errlen) {
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(J.triple, &target, &msg)) {
        snprintf(err, errlen, "LLVM has no target for %s: %s", J.triple, msg ? msg : "");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, J.triple, J.cpu, J.features, level,
                                                      LLVMRelocPIC, LLVMCodeModelSmall);
    if (tm == NULL) snprintf(err, errlen, "cannot create an LLVM target machine for %s", J.triple);
    return tm;
}

/* LLVM ends the process on a fatal error and cannot be made to return: say at least that
 * it happened while gtscript was compiling a stencil, and how to report it. */
static void on_llvm_fatal_error(const char *reason) {
    fprintf(stderr,
            "gtscript: LLVM stopped the process with a fatal error while compiling a stencil: %s\n"
            "gtscript: this is a bug (or an invalid llvm_passes option); please report it with "
            "the stencil definition.\n",
            reason);
}

/*
 * Code generation without loop strength reduction. LSR rewrites the address arithmetic of
 * every loop; on the loops of a large stencil (hundreds of loads at distinct offsets of a
 * few induction variables, after inlining of temporaries) it costs most of the build and
 * makes the register allocator's work several times larger (docs/performance.md: 200
 * chained statements 0.46 s of code generation with it, 0.10 s without), while x86's
 * base + index * scale + offset addressing leaves it little to gain: the runtime benchmarks
 * (benchmarks/run.py) do not change. LLVM reads the setting from its command-line options,
 * process-wide, so it is set once here. GTSCRIPT_LSR=1 keeps LSR, for measurements.
 */
static void set_codegen_options(void) {
    static bool done; /* under J.lock; a second parse of an option would end the process */
    if (done) return;
    done = true;
    const char *keep = getenv("GTSCRIPT_LSR");
    if (keep && strcmp(keep, "1") == 0) return;
    const char *argv[] = {"gtscript", "-disable-lsr"};
    LLVMParseCommandLineOptions(2, argv, "");
}

/*
 * GTSCRIPT_GDB_JIT=1: every object the JIT loads is announced to debuggers through the GDB JIT
 * interface (__jit_debug_register_code), so gdb (and lldb) sees the kernels' symbols:
 * `info symbol`, breakpoints on gt_kernel, named frames in `bt`. ORC's debug-object plugin does it; it finds its registration function in
 * the process, and libLLVM is loaded privately (RTLD_LOCAL) with the extension module, so
 * libLLVM is first made global. Off by default: the plugin copies and patches every object.
 * A failure is said on stderr and the JIT runs without it.
 */
static void enable_gdb_jit_interface(void) {
    const char *v = getenv("GTSCRIPT_GDB_JIT");
    if (v != NULL && v[0] != '\0' && strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
        fprintf(stderr, "gtscript: GTSCRIPT_GDB_JIT=%s is neither 0 nor 1: not enabled\n", v);
    if (v == NULL || strcmp(v, "1") != 0) return;
    Dl_info info;
    void *self = NULL;
    if (dladdr((void *)LLVMOrcLLJITEnableDebugSupport, &info) && info.dli_fname)
        self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    if (self == NULL) {
        fprintf(stderr, "gtscript: GTSCRIPT_GDB_JIT: cannot make libLLVM's symbols global: %s\n",
                dlerror());
        return;
    }
    /* the RTLD_NOLOAD handle only changes the library's scope; it stays loaded as before */
    LLVMErrorRef e = LLVMOrcLLJITEnableDebugSupport(J.jit);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        fprintf(stderr, "gtscript: GTSCRIPT_GDB_JIT: %s\n", msg);
        LLVMDisposeErrorMessage(msg);
    }
}

static bool init_locked(char *err, size_t errlen) {
    if (J.ready) return true;
    LLVMInstallFatalErrorHandler(on_llvm_fatal_error);
    set_codegen_options();
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
        snprintf(err, errlen, "LLVM cannot initialise the native target");
        return false;
    }
    /* the assembler's parser: streaming stores write single elements with inline assembly
     * (stream.c); without it they write those elements plainly */
    J.asm_parser = LLVMInitializeNativeAsmParser() == 0;
    /* a kernel built with vector_math calls libmvec: loaded before any kernel is, also one
     * from the disk cache (vecmath.c) */
    (void)vecmath_available();
    J.triple = LLVMGetDefaultTargetTriple();
    J.cpu = LLVMGetHostCPUName();
    J.features = LLVMGetHostCPUFeatures();
    size_t n = strlen(J.triple) + strlen(J.cpu) + strlen(J.features) + 3;
    J.target_id = malloc(n);
    if (J.target_id == NULL) return snprintf(err, errlen, "out of memory"), false;
    snprintf(J.target_id, n, "%s/%s/%s", J.triple, J.cpu, J.features);
    /* The IR arrives optimised and vectorised: the code generator's Default level runs as fast
     * as Aggressive (benchmarks/), and None is measurably slower (no scheduling, fast
     * register allocation). GTSCRIPT_CODEGEN_LEVEL (0-3) overrides it, for measurements. */
    const char *lv = getenv("GTSCRIPT_CODEGEN_LEVEL");
    int level = lv && *lv ? atoi(lv) : (int)LLVMCodeGenLevelDefault;
    if (level < 0 || level > 3) level = (int)LLVMCodeGenLevelDefault;
    J.codegen_level = level;
    J.tm = make_tm((LLVMCodeGenOptLevel)level, err, errlen);
    if (J.tm == NULL) return false;

    /* LLJIT gets a target machine builder made from a target machine of its own: the C API
     * has no setters for the CPU or the level, and this keeps the small code model + PIC. */
    LLVMTargetMachineRef jtm = make_tm(LLVMCodeGenLevelAggressive, err, errlen);
    if (jtm == NULL) return false;
    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
        builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jtm));
    if (!take_error(LLVMOrcCreateLLJIT(&J.jit, builder), "cannot create the LLVM JIT", err, errlen))
        return false;
    enable_gdb_jit_interface();
    J.ready = true;
    return true;
}

bool jit_init(char *err, size_t errlen) {
    pthread_mutex_lock(&J.lock);
    bool ok = init_locked(err, errlen);
    pthread_mutex_unlock(&J.lock);
    return ok;
}

const char *jit_target_id(void) { return J.target_id ? J.target_id : ""; }
const char *jit_cpu_name(void) { return J.cpu ? J.cpu : ""; }
bool jit_has_asm_parser(void) { return J.asm_parser; }
bool jit_has_feature(const char *feature) {
    if (J.features == NULL) return false;
    size_t n = strlen(feature);
    for (const char *p = J.features; (p = strstr(p, feature)) != NULL; p += n)
        if ((p == J.features || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return true;
    return false;
}

bool jit_has_wide_vectors(void) { return jit_has_feature("+avx512f"); }

LLVMTargetMachineRef jit_tm_acquire(char *err, size_t errlen) {
    LLVMTargetMachineRef tm = NULL;
    pthread_mutex_lock(&J.lock);
    if (init_locked(err, errlen)) {
        if (!J.tm_taken) {
            J.tm_taken = true;
            tm = J.tm;
        } else if (J.ntms > 0) {
            tm = J.tms[--J.ntms];
        } else {
            tm = make_tm((LLVMCodeGenOptLevel)J.codegen_level, err, errlen);
        }
    }
    pthread_mutex_unlock(&J.lock);
    return tm;
}

void jit_tm_release(LLVMTargetMachineRef tm) {
    if (tm == NULL) return;
    pthread_mutex_lock(&J.lock);
    if (tm == J.tm) J.tm_taken = false;
    else if (J.ntms < JIT_SPARE_TMS) J.tms[J.ntms++] = tm;
    else LLVMDisposeTargetMachine(tm);
    pthread_mutex_unlock(&J.lock);
}

void jit_prepare_module(LLVMModuleRef m, LLVMTargetMachineRef tm) {
    LLVMSetTarget(m, J.triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(m, dl);
    LLVMDisposeTargetData(dl);
}

static bool verify(LLVMModuleRef m, char *err, size_t errlen) {
    char *msg = NULL;
    /* LLVMReturnStatusAction: the verifier pass would abort the process. */
    if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
        snprintf(err, errlen, "gtscript generated invalid LLVM IR (a bug): %s", msg ? msg : "");
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMDisposeMessage(msg);
    return true;
}

static bool run_passes(LLVMModuleRef m, LLVMTargetMachineRef tm, const char *passes, char *err,
                       size_t errlen) {
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
    LLVMErrorRef e = LLVMRunPasses(m, passes, tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    return take_error(e, "LLVM optimisation failed", err, errlen);
}

bool jit_optimise(LLVMModuleRef m, LLVMTargetMachineRef tm, const char *passes, char *err,
                  size_t errlen) {
    return verify(m, err, errlen) && run_passes(m, tm, passes, err, errlen);
}

/* Marks every defined function but those in [from, to) optnone (the pass managers then skip
 * them); from == to clears the mark from all. Functions of a kernel are all noinline. */
static void only_optimise(LLVMValueRef *fns, int n, int from, int to) {
    unsigned kind = LLVMGetEnumAttributeKindForName("optnone", 7);
    for (int i = 0; i < n; i++) {
        bool skip = from < to && (i < from || i >= to);
        bool has = LLVMGetEnumAttributeAtIndex(fns[i], LLVMAttributeFunctionIndex, kind) != NULL;
        if (skip && !has)
            LLVMAddAttributeAtIndex(fns[i], LLVMAttributeFunctionIndex,
                                    LLVMCreateEnumAttribute(LLVMGetModuleContext(LLVMGetGlobalParent(fns[i])), kind, 0));
        else if (!skip && has)
            LLVMRemoveEnumAttributeAtIndex(fns[i], LLVMAttributeFunctionIndex, kind);
    }
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bool jit_optimise_budgeted(LLVMModuleRef m, LLVMTargetMachineRef tm, const char *passes,
                           const char *cheap, double budget, JitBudgetReport *report, char *err,
                           size_t errlen) {
    memset(report, 0, sizeof *report);
    int n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f)) n++;
    LLVMValueRef *fns = malloc(sizeof *fns * (size_t)(n ? n : 1));
    if (fns == NULL) return snprintf(err, errlen, "out of memory"), false;
    n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f)) fns[n++] = f;
    report->functions = n;
    double start = seconds_now();
    bool ok = verify(m, err, errlen);
    /* Batches of functions: one run of the pipeline per batch keeps the pass managers' set-up
     * cost small, and the budget is checked between batches. A single batch needs no marks. */
    for (int from = 0; ok && from < n; from += JIT_BATCH) {
        int to = from + JIT_BATCH < n ? from + JIT_BATCH : n;
        bool over = seconds_now() - start >= budget;
        if (n > JIT_BATCH || over) only_optimise(fns, n, from, to);
        if (over) report->cheap += to - from;
        ok = run_passes(m, tm, over ? cheap : passes, err, errlen);
    }
    if (n > JIT_BATCH || report->cheap) only_optimise(fns, n, 0, 0);
    free(fns);
    return ok;
}

bool jit_emit_object(LLVMModuleRef m, LLVMTargetMachineRef tm, char **obj, size_t *objlen,
                     char *err, size_t errlen) {
    LLVMMemoryBufferRef buf = NULL;
    char *msg = NULL;
    LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &msg, &buf);
    if (failed) {
        snprintf(err, errlen, "LLVM code generation failed: %s", msg ? msg : "");
        LLVMDisposeMessage(msg);
        return false;
    }
    *objlen = LLVMGetBufferSize(buf);
    *obj = malloc(*objlen ? *objlen : 1);
    if (*obj == NULL) {
        LLVMDisposeMemoryBuffer(buf);
        snprintf(err, errlen, "out of memory");
        return false;
    }
    memcpy(*obj, LLVMGetBufferStart(buf), *objlen);
    LLVMDisposeMemoryBuffer(buf);
    return true;
}

typedef struct {
    bool done;
    void *addr;
    char *error;
} LookupResult;

static void on_lookup(LLVMErrorRef e, LLVMOrcCSymbolMapPairs result, size_t n, void *ctx) {
    LookupResult *r = ctx;
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        r->error = strdup(msg);
        LLVMDisposeErrorMessage(msg);
    } else if (n >= 1) {
        r->addr = (void *)(uintptr_t)result[0].Sym.Address;
    }
    r->done = true;
}

/* Empties `jd` (frees the module's code and symbols) and keeps it for the next load. */
static void retire_locked(LLVMOrcJITDylibRef jd) {
    LLVMErrorRef e = LLVMOrcJITDylibClear(jd);
    if (e) {
        LLVMConsumeError(e); /* not reusable: its symbols may linger, so it is dropped */
        return;
    }
    if (J.nspare == J.capspare) {
        size_t cap = J.capspare ? 2 * J.capspare : 16;
        LLVMOrcJITDylibRef *p = realloc(J.spare, cap * sizeof *p);
        if (p == NULL) return; /* out of memory: the emptied dylib is just not reused */
        J.spare = p;
        J.capspare = cap;
    }
    J.spare[J.nspare++] = jd;
    /* The session's string pool keeps an entry for every symbol name it ever saw until told
     * to drop the unused ones. */
    LLVMOrcSymbolStringPoolClearDeadEntries(
        LLVMOrcExecutionSessionGetSymbolStringPool(LLVMOrcLLJITGetExecutionSession(J.jit)));
}

/* A definition generator that resolves a kernel's libm calls that have a direct entry point
 * (libm.c: exp to glibc's __exp_finite) to it, before the process's symbols are searched. */
static LLVMErrorRef libm_generate(LLVMOrcDefinitionGeneratorRef gen, void *ctx,
                                  LLVMOrcLookupStateRef *state, LLVMOrcLookupKind kind,
                                  LLVMOrcJITDylibRef jd, LLVMOrcJITDylibLookupFlags flags,
                                  LLVMOrcCLookupSet set, size_t n) {
    (void)gen, (void)ctx, (void)state, (void)kind, (void)flags;
    LLVMOrcCSymbolMapPair found[8];
    size_t nfound = 0;
    for (size_t i = 0; i < n && nfound < sizeof found / sizeof found[0]; i++) {
        void *addr = libm_direct_entry(LLVMOrcSymbolStringPoolEntryStr(set[i].Name));
        if (addr == NULL) continue;
        LLVMOrcRetainSymbolStringPoolEntry(set[i].Name); /* the definition takes a reference */
        found[nfound++] = (LLVMOrcCSymbolMapPair){
            set[i].Name,
            {(LLVMOrcExecutorAddress)(uintptr_t)addr,
             {LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0}}};
    }
    if (nfound == 0) return NULL; /* the next generator (the process's symbols) looks */
    return LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(found, nfound));
}

/* An empty JITDylib that resolves libm and the C runtime from the process. */
static bool dylib_locked(LLVMOrcJITDylibRef *out, char *err, size_t errlen) {
    if (J.nspare > 0) {
        *out = J.spare[--J.nspare];
        return true;
    }
    char name[64];
    snprintf(name, sizeof name, "gtscript_module_%lu", J.ndylibs++);
    LLVMOrcExecutionSessionRef es = LLVMOrcLLJITGetExecutionSession(J.jit);
    LLVMOrcJITDylibRef jd;
    if (!take_error(LLVMOrcExecutionSessionCreateJITDylib(es, &jd, name), "cannot create a JITDylib",
                    err, errlen))
        return false;
    /* generators are asked in the order they were added: libm's direct entry points first */
    LLVMOrcJITDylibAddGenerator(
        jd, LLVMOrcCreateCustomCAPIDefinitionGenerator(libm_generate, NULL, NULL));
    LLVMOrcDefinitionGeneratorRef gen;
    if (!take_error(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                        &gen, LLVMOrcLLJITGetGlobalPrefix(J.jit), NULL, NULL),
                    "cannot create the process symbol generator", err, errlen))
        return false; /* the empty dylib stays unused: without the generator it resolves no libm */
    LLVMOrcJITDylibAddGenerator(jd, gen);
    *out = jd;
    return true;
}

static bool load_locked(const char *obj, size_t objlen, JitModule *out, char *err, size_t errlen) {
    LLVMOrcExecutionSessionRef es = LLVMOrcLLJITGetExecutionSession(J.jit);
    LLVMOrcJITDylibRef jd;
    if (!dylib_locked(&jd, err, errlen)) return false;
    LLVMMemoryBufferRef buf =
        LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, objlen, "gtscript-kernel");
    if (!take_error(LLVMOrcLLJITAddObjectFile(J.jit, jd, buf), "cannot load the object file", err,
                    errlen)) {
        retire_locked(jd);
        return false;
    }
    LLVMOrcSymbolStringPoolEntryRef sym = LLVMOrcLLJITMangleAndIntern(J.jit, GT_KERNEL_SYMBOL);
    LLVMOrcCJITDylibSearchOrderElement order[2] = {
        {jd, LLVMOrcJITDylibLookupFlagsMatchExportedSymbolsOnly}, {NULL, 0}};
    LLVMOrcCLookupSetElement syms[1] = {{sym, LLVMOrcSymbolLookupFlagsRequiredSymbol}};
    LookupResult r = {0};
    /* Materialisation runs in place on this thread (LLJIT has no compile threads here), so
     * the handler has run when the call returns. */
    LLVMOrcExecutionSessionLookup(es, LLVMOrcLookupKindStatic, order, 1, syms, 1, on_lookup, &r);
    /* the lookup took ownership of `sym` */
    if (!r.done || r.addr == NULL) {
        snprintf(err, errlen, "cannot resolve the kernel in the loaded object: %s",
                 r.error ? r.error : "lookup did not complete");
        free(r.error);
        retire_locked(jd);
        return false;
    }
    out->jd = jd;
    out->fn = r.addr;
    if (perfmap_enabled()) perfmap_record(obj, objlen, r.addr);
    return true;
}

bool jit_load_object(const char *obj, size_t objlen, JitModule *out, char *err, size_t errlen) {
    pthread_mutex_lock(&J.lock);
    bool ok = init_locked(err, errlen) && load_locked(obj, objlen, out, err, errlen);
    pthread_mutex_unlock(&J.lock);
    return ok;
}

void jit_unload(JitModule *m) {
    if (m->jd == NULL) return;
    pthread_mutex_lock(&J.lock);
    retire_locked((LLVMOrcJITDylibRef)m->jd);
    pthread_mutex_unlock(&J.lock);
    m->jd = NULL;
    m->fn = NULL;
}
