/*
 * gtscript._core: the extension module. Module(definition, backend, options) runs the
 * whole pipeline (build IR -> analyse -> generate -> optimise -> object -> JIT) and is
 * the callable stencil; Python's gtscript.Stencil subclasses it.
 */
#include "module.h"

#include <limits.h>

#define PY_ARRAY_UNIQUE_SYMBOL gtscript_ARRAY_API
#include <numpy/arrayobject.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "backend/cuda/module_cuda.h"
#include "call/call.h"
#include "call/exec_info.h"
#include "call/gregion.h"
#include "call/plan.h"
#include "call/tune.h"
#include "call/pool.h"
#include "backend/cpu/blocks.h"
#include "backend/cpu/build.h"
#include "backend/cpu/libm.h"
#include "cache/cache.h"
#include "ir/build.h"
#include "ir/export.h"
#include "ir/print.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- errors ------------------------------------------------------------------------- */

/* Raises the stencil's first diagnostic as gtscript.GTScript*Error (a SyntaxError with
 * filename, line, column and source text, so tracebacks and notebooks point at it). */
static void raise_diag(const Stencil *st) {
    const Diag *d = &st->diag;
    if (d->kind == DIAG_NOMEM) {
        PyErr_NoMemory();
        return;
    }
    const char *cls = d->kind == DIAG_SYNTAX ? "GTScriptSyntaxError" : "GTScriptSemanticError";
    PyObject *mod = PyImport_ImportModule("gtscript.errors");
    PyObject *type = mod ? PyObject_GetAttrString(mod, cls) : NULL;
    Py_XDECREF(mod);
    if (type == NULL) return;
    char msg[1200];
    if (d->count > 1)
        snprintf(msg, sizeof msg, "%s (%d problems found in this stencil; this is the first in source order)",
                 d->msg, d->count);
    else
        snprintf(msg, sizeof msg, "%s", d->msg);
    const char *text = stencil_source_line(st, d->line);
    PyObject *exc = PyObject_CallFunction(type, "s(siis)", msg, st->filename ? st->filename : "<unknown>",
                                          d->line, d->col + 1, text);
    Py_DECREF(type);
    if (exc == NULL) return;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
}

/* The analysis' warnings, as the module's `_analysis_warnings`: a list of (message,
 * category, filename, line) that the Python layer issues (and issues again when the stencil
 * is served from a cache). They are not issued here: capturing them around the build with
 * warnings.catch_warnings would swap process-wide state while the build runs without the
 * GIL, and builds on other threads would lose or keep each other's filters. */
static bool keep_warnings(ModuleObject *m) {
    const Stencil *st = m->st;
    PyObject *list = PyList_New(0);
    if (list == NULL) return false;
    for (const Warning *w = st->warnings; w; w = w->next) {
        PyObject *t = Py_BuildValue("(sOsi)", w->msg, PyExc_UserWarning,
                                    st->filename ? st->filename : "<unknown>", w->line);
        if (t == NULL || PyList_Append(list, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(list);
            return false;
        }
        Py_DECREF(t);
    }
    int r = PyObject_SetAttrString((PyObject *)m, "_analysis_warnings", list);
    Py_DECREF(list);
    return r == 0;
}

/* ---- building ----------------------------------------------------------------------- */

typedef struct CpuBuild {
    const Stencil *st;
    CpuVariant variant;
    const char *passes;
    ModuleObject *m; /* NULL, or the module whose phase timings a fresh build fills */
} CpuBuild;

/* A cache miss: IR -> object file and LLVM IR text (cache/cache.h's CacheBuildFn). */
static bool build_cpu_object(void *ctx, char **obj, size_t *objlen, char **source) {
    const CpuBuild *b = ctx;
    char err[2048] = "";
    CpuObject o;
    bool ok;
    /* The build reads only this module's IR (not yet visible to Python) and LLVM state of its
     * own: other threads run Python, and build other stencils, meanwhile. */
    Py_BEGIN_ALLOW_THREADS ok = cpu_build_object(b->st, b->variant, b->passes, &o, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_Format(PyExc_RuntimeError, "building stencil '%s' for the cpu backend failed: %s",
                     b->st->name, err);
        return false;
    }
    if (b->m) {
        b->m->ir_seconds = o.ir_seconds;
        b->m->optimise_seconds = o.optimise_seconds;
        b->m->object_seconds = o.object_seconds;
        b->m->llvm_functions = o.functions;
        b->m->llvm_cheap_functions = o.cheap_functions;
        b->m->llvm_start = o.start;
        b->m->llvm_end = o.end;
    }
    *obj = o.obj;
    *objlen = o.objlen;
    *source = o.llvm_ir;
    return true;
}

/* The key is computed from the analysed IR; the code then comes from memory, disk or a
 * fresh build (m->origin_of_code says which). */
static bool build_cpu(ModuleObject *m, const char *passes, PyObject *options, bool rebuild) {
    char err[512] = "";
    cpu_blocks_assign(m->st);
    if (!jit_init(err, sizeof err)) {
        PyErr_Format(PyExc_RuntimeError, "building stencil '%s' for the cpu backend failed: %s",
                     m->st->name, err);
        return false;
    }
    if (!cache_key(m->st, "cpu", jit_target_id(), options, m->cache_key)) return false;
    CacheRequest rq = {.key = m->cache_key, .backend = "cpu", .target = jit_target_id(), .st = m->st};
    CpuBuild b = {.st = m->st, .variant = {LAYOUT_K_UNIT, false}, .passes = passes, .m = m};
    m->code = cache_obtain(&rq, rebuild, build_cpu_object, &b, &m->origin_of_code);
    if (m->code == NULL) return false;
    m->kernel = (GtKernelFn)m->code->jit.fn;
    return true;
}

GtKernelFn module_kernel(ModuleObject *m, CpuVariant variant) {
    int v = cpu_variant_index(variant);
    if (v == 0 || m->kernel == NULL) {
        if (m->kernel == NULL) PyErr_SetString(PyExc_RuntimeError, "this stencil has no compiled kernel");
        return m->kernel;
    }
    if (m->variant[v]) return m->variant[v];
    /* A variant is cached like the main kernel, under a key derived from the module's. Its
     * build releases the GIL: another thread may build the same variant meanwhile, and the
     * first to get the GIL back keeps its code (the check and the store below run under it). */
    char key[CACHE_HEX_LEN + 1];
    if (!cache_variant_key(m->cache_key, v, key)) return NULL;
    CacheRequest rq = {.key = key, .backend = "cpu", .target = jit_target_id(), .st = m->st};
    CpuBuild b = {.st = m->st, .variant = variant, .passes = m->passes, .m = NULL};
    const char *origin;
    CacheEntry *code = cache_obtain(&rq, false, build_cpu_object, &b, &origin);
    if (code == NULL) return NULL;
    if (m->variant[v]) { /* another thread's build finished first */
        cache_entry_unref(code);
        return m->variant[v];
    }
    m->variant_code[v] = code;
    m->variant[v] = (GtKernelFn)code->jit.fn;
    return m->variant[v];
}

static int option_int(PyObject *options, const char *key, int dflt, bool *ok) {
    PyObject *v = options ? PyDict_GetItemString(options, key) : NULL;
    if (v == NULL || v == Py_None) return dflt;
    /* An integer option must say which option a wrong value was given to: PyLong_AsLong's own
     * TypeError ("'str' object cannot be interpreted as an integer") does not. */
    if (!PyLong_Check(v) && !PyIndex_Check(v)) {
        PyErr_Format(PyExc_TypeError, "option %s must be an integer or a bool, got %.100s",
                     key, Py_TYPE(v)->tp_name);
        *ok = false;
        return dflt;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) {
        /* an int beyond a C long: say which option, as the range check below does */
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "option %s is out of range", key);
        }
        *ok = false;
    }
    else if (x < INT_MIN || x > INT_MAX) { /* the cast below must not wrap 2**32 + 32 to 32 */
        PyErr_Format(PyExc_ValueError, "option %s=%ld is out of range", key, x);
        *ok = false;
    }
    return *ok ? (int)x : dflt;
}

/* The defaults of scalar parameters (a fourth entry of a "scalar" parameter in the
 * definition tree), checked against their dtypes now so that a call never finds a bad one. */
static bool read_defaults(ModuleObject *m, PyObject *definition) {
    PyObject *params = PyDict_Check(definition) ? PyDict_GetItemString(definition, "params") : NULL;
    if (params == NULL || !PyList_Check(params)) return true; /* ir_build has rejected it */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(params); i++) {
        PyObject *p = PyList_GET_ITEM(params, i);
        if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) < 4 || i >= m->st->nparams) continue;
        const Symbol *s = m->st->params[i];
        if (s->kind != SYM_SCALAR) continue;
        PyObject *value = PyTuple_GET_ITEM(p, 3);
        char slot[8];
        /* GT4Py's convention: a None default (`q: float = None`) is no value; the parameter
         * may then be left out only where the stencil does not use it (call.c: bind_args) */
        if (value != Py_None && !scalar_value(s, value, slot)) {
            PyErr_Format(PyExc_TypeError, "the default of parameter '%s' (%R) is not a %s value",
                         s->name, value, dtype_name(s->dtype));
            return false;
        }
        if (m->defaults == NULL && (m->defaults = PyDict_New()) == NULL) return false;
        if (PyDict_SetItemString(m->defaults, s->name, value) < 0) return false;
    }
    return true;
}

static PyObject *Module_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *definition, *options = NULL;
    const char *backend;
    static char *kwlist[] = {"definition", "backend", "options", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Os|O", kwlist, &definition, &backend, &options))
        return NULL;
    if (options == Py_None) options = NULL;
    if (options && !PyDict_Check(options)) {
        PyErr_SetString(PyExc_TypeError, "options must be a dict");
        return NULL;
    }
    Backend be;
    if (strcmp(backend, "cpu") == 0) be = BACKEND_CPU;
    else if (strcmp(backend, "numpy") == 0) be = BACKEND_NUMPY;
    else if (strcmp(backend, "cuda") == 0) be = BACKEND_CUDA;
    else {
        PyErr_Format(PyExc_ValueError, "unknown backend '%s' (available: 'cpu', 'numpy', 'cuda')", backend);
        return NULL;
    }
    bool ok = true;
    int lfp = option_int(options, "literal_float_precision", 0, &ok);
    int lip = ok ? option_int(options, "literal_int_precision", 0, &ok) : 0;
    int on_the_fly = ok ? option_int(options, "inline_temporaries", 1, &ok) : 1;
    int vector_math = ok ? option_int(options, "vector_math", 0, &ok) : 0;
    if (!ok) return NULL;
    if (vector_math != 0 && vector_math != 1) {
        PyErr_SetString(PyExc_ValueError, "vector_math must be True or False");
        return NULL;
    }
    if (lfp != 0 && lfp != 32 && lfp != 64) {
        PyErr_SetString(PyExc_ValueError, "literal_float_precision must be 32 or 64");
        return NULL;
    }
    if (lip != 0 && lip != 32 && lip != 64) {
        PyErr_SetString(PyExc_ValueError, "literal_int_precision must be 32 or 64");
        return NULL;
    }
    const char *passes = NULL; /* GT_CPU_PASSES */
    PyObject *p = options ? PyDict_GetItemString(options, "llvm_passes") : NULL;
    if (p && PyUnicode_Check(p) && (passes = PyUnicode_AsUTF8(p)) == NULL) {
        PyErr_Clear(); /* a lone surrogate: no pass has that name */
        PyErr_Format(PyExc_ValueError, "option llvm_passes is not a pass pipeline: %R", p);
        return NULL;
    }
    char *passes_copy = passes ? strdup(passes) : NULL;
    if (passes && passes_copy == NULL) return PyErr_NoMemory();

    ModuleObject *m = (ModuleObject *)type->tp_alloc(type, 0);
    if (m == NULL) {
        free(passes_copy);
        return NULL;
    }
    m->passes = passes_copy;
    double t0 = now();
    m->backend = be;
    m->origin_of_code = "build";
    m->st = stencil_new();
    if (m->st == NULL) {
        Py_DECREF(m);
        return PyErr_NoMemory();
    }
    m->st->literal_float_bits = lfp; /* 0: NumPy 2 weak literals; 32 or 64 */
    m->st->literal_int_bits = lip;
    /* The numpy backend is the reference: it executes the IR as written, without the
     * compiled backends' on-the-fly recomputation of temporaries (inline.c). */
    m->st->compute_on_the_fly = be != BACKEND_NUMPY && on_the_fly != 0;
    m->st->schedule_columns = be == BACKEND_CPU; /* column groups are the cpu's (columns.c) */
    m->st->vector_math = be == BACKEND_CPU && vector_math != 0; /* libmvec: the cpu's (vecmath.c) */
    bool built = ir_build(m->st, definition);
    double t1 = now();
    if (!built || !analyse_stencil(m->st)) {
        if (!PyErr_Occurred()) raise_diag(m->st);
        Py_DECREF(m);
        return NULL;
    }
    m->lower_seconds = t1 - t0;
    m->analysis_seconds = now() - t1;
    if (!read_defaults(m, definition)) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *rb = options ? PyDict_GetItemString(options, "rebuild") : NULL;
    int rebuild = rb ? PyObject_IsTrue(rb) : 0;
    if (rebuild < 0 || !keep_warnings(m) ||
        (be == BACKEND_CPU    ? !build_cpu(m, passes, options, rebuild)
         : be == BACKEND_CUDA ? !cuda_build(m, options)
                              : !cache_key(m->st, "numpy", "numpy", options, m->cache_key))) {
        Py_DECREF(m);
        return NULL;
    }
    m->build_seconds = now() - t0;
    return (PyObject *)m;
}

static void Module_dealloc(ModuleObject *m) {
    PyObject_GC_UnTrack(m);
    if (m->weakrefs) PyObject_ClearWeakRefs((PyObject *)m);
    Py_CLEAR(m->dict);
    Py_CLEAR(m->defaults);
    plan_free(m->plan);
    tune_table_free(m->tune);
    cache_entry_unref(m->code);
    for (int v = 0; v < CPU_VARIANT_COUNT; v++) cache_entry_unref(m->variant_code[v]);
    free(m->passes);
    cuda_module_free(m->cuda);
    stencil_free(m->st);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

static int Module_traverse(ModuleObject *m, visitproc visit, void *arg) {
    Py_VISIT(m->dict);
    Py_VISIT(m->defaults);
    Py_VISIT(Py_TYPE(m));
    return 0;
}

static int Module_clear(ModuleObject *m) {
    Py_CLEAR(m->dict);
    Py_CLEAR(m->defaults);
    return 0;
}

static PyObject *Module_call(ModuleObject *m, PyObject *args, PyObject *kwargs) {
    if (m->backend == BACKEND_CUDA) return call_cuda(m, args, kwargs);
    return call_stencil(m, args, kwargs);
}

/* ---- inspection --------------------------------------------------------------------- */

static PyObject *Module_ir(ModuleObject *m, PyObject *unused) {
    StrBuf sb = {0};
    ir_print(m->st, &sb);
    if (sb.oom) {
        sb_free(&sb);
        return PyErr_NoMemory();
    }
    PyObject *r = PyUnicode_FromStringAndSize(sb.data ? sb.data : "", (Py_ssize_t)sb.len);
    sb_free(&sb);
    return r;
}

static PyObject *Module_ir_tree(ModuleObject *m, PyObject *unused) { return ir_export(m->st); }

static PyObject *Module_source(ModuleObject *m, PyObject *unused) {
    if (m->cuda) return PyUnicode_FromString(m->cuda->prog.source); /* exactly what NVRTC compiled */
    if (m->code == NULL || m->code->source == NULL) {
        PyErr_SetString(PyExc_ValueError, "the numpy backend generates no source: see ir()");
        return NULL;
    }
    return PyUnicode_FromString(m->code->source);
}

static PyObject *Module_bind(ModuleObject *m, PyObject *args, PyObject *kwargs) {
    return call_bind(m, args, kwargs);
}

static PyObject *Module_record_call(ModuleObject *m, PyObject *args) {
    return exec_info_record_method(m, args);
}

static PyObject *Module_get_defaults(ModuleObject *m, void *unused) {
    return m->defaults ? PyDict_Copy(m->defaults) : PyDict_New();
}

static PyObject *extent_tuple(const Symbol *s) {
    const Extent *e = &s->access;
    if (!s->has_access) return Py_BuildValue("((ii)(ii)(ii))", 0, 0, 0, 0, 0, 0);
    return Py_BuildValue("((ii)(ii)(ii))", e->lo[0], e->hi[0], e->lo[1], e->hi[1], e->lo[2], e->hi[2]);
}

static PyObject *Module_get_field_info(ModuleObject *m, void *unused) {
    const Stencil *st = m->st;
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD) continue;
        const char *intent = s->written ? (s->read ? "inout" : "out") : (s->read ? "in" : "unused");
        char axes[4];
        int n = 0;
        for (int a = 0; a < 3; a++)
            if (s->axes & (1 << a)) axes[n++] = "IJK"[a];
        axes[n] = '\0';
        PyObject *dd = PyTuple_New(s->ndata);
        for (int k = 0; dd && k < s->ndata; k++) PyTuple_SET_ITEM(dd, k, PyLong_FromLong(s->data_dims[k]));
        PyObject *info = dd ? Py_BuildValue("{s:N,s:s,s:s,s:s,s:N}", "extent", extent_tuple(s), "intent",
                                            intent, "dtype", dtype_name(s->dtype), "axes", axes,
                                            "data_dims", dd)
                            : NULL;
        if (info == NULL || PyDict_SetItemString(d, s->name, info) < 0) {
            Py_XDECREF(info);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(info);
    }
    return d;
}

/* Per field, GT4Py's view of it (gtscript/info.py, gtscript/gt4py.py): (read before its first
 * write, (k_lo, k_hi) K boundary, ((i_lo, i_hi), (j_lo, j_hi)) the offsets it is accessed at
 * in I and J without the centre point: GT4Py's horizontal boundary is their negated minimum
 * and maximum, negative for a field read only on one side). Separate from field_info, whose
 * mapping keys stay as they always were. */
static PyObject *Module_get_gt4py_field_facts(ModuleObject *m, void *unused) {
    const Stencil *st = m->st;
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD) continue;
        bool r = s->has_access;
        PyObject *facts = Py_BuildValue(
            "(O(ii)((ii)(ii)))", s->read_before_write ? Py_True : Py_False,
            s->kbound_set[0] ? s->kbound[0] : 0, s->kbound_set[1] ? s->kbound[1] : 0,
            r ? s->reach_lo[0] : 0, r ? s->reach_hi[0] : 0, r ? s->reach_lo[1] : 0,
            r ? s->reach_hi[1] : 0);
        if (facts == NULL || PyDict_SetItemString(d, s->name, facts) < 0) {
            Py_XDECREF(facts);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(facts);
    }
    return d;
}

static PyObject *Module_get_halo(ModuleObject *m, void *unused) {
    const Stencil *st = m->st;
    Extent u = {{0, 0, 0}, {0, 0, 0}};
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_FIELD || !s->has_access) continue;
        for (int a = 0; a < 3; a++) {
            if (s->access.lo[a] < u.lo[a]) u.lo[a] = s->access.lo[a];
            if (s->access.hi[a] > u.hi[a]) u.hi[a] = s->access.hi[a];
        }
    }
    return Py_BuildValue("((ii)(ii)(ii))", -u.lo[0], u.hi[0], -u.lo[1], u.hi[1], -u.lo[2], u.hi[2]);
}

static PyObject *Module_get_min_k_levels(ModuleObject *m, void *unused) {
    return PyLong_FromLong(m->st->min_k_levels);
}

/* The smallest I, J sizes of a domain on which the per-region extents (halo, field_info)
 * are exact; calls below them are refused or checked without regions (extents.c). */
static PyObject *Module_get_region_min_domain(ModuleObject *m, void *unused) {
    const Stencil *st = m->st;
    int n[2];
    for (int d = 0; d < 2; d++) {
        n[d] = st->region_min_domain[d] > st->region_exact_domain[d] ? st->region_min_domain[d]
                                                                     : st->region_exact_domain[d];
        if (n[d] < 1) n[d] = 1;
    }
    return Py_BuildValue("(ii)", n[0], n[1]);
}

static PyObject *Module_get_build_info(ModuleObject *m, void *unused) {
    double load = m->build_seconds - m->lower_seconds - m->analysis_seconds - m->ir_seconds -
                  m->optimise_seconds - m->object_seconds;
    return Py_BuildValue("{s:(dd),s:i,s:i,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:s,s:s,s:s,s:s}",
                         "llvm_interval", m->llvm_start, m->llvm_end,
                         "llvm_functions", m->llvm_functions, "llvm_cheap_functions",
                         m->llvm_cheap_functions, "build_time",
                         m->build_seconds, "lower_time", m->lower_seconds, "analysis_time",
                         m->analysis_seconds, "llvm_ir_time", m->ir_seconds, "optimise_time",
                         m->optimise_seconds, "object_time", m->object_seconds, "load_time",
                         load > 0 ? load : 0.0, "module_source",
                         m->origin_of_code, "backend",
                         m->backend == BACKEND_CPU ? "cpu" : m->backend == BACKEND_CUDA ? "cuda" : "numpy",
                         "target",
                         m->backend == BACKEND_CPU ? jit_target_id() : m->cuda ? m->cuda->arch : "numpy",
                         "cache_key", m->cache_key);
}

static PyObject *Module_get_cache_key(ModuleObject *m, void *unused) {
    return PyUnicode_FromString(m->cache_key);
}

static PyObject *Module_get_name(ModuleObject *m, void *unused) {
    return PyUnicode_FromString(m->st->name ? m->st->name : "");
}

static PyMethodDef Module_methods[] = {
    {"ir", (PyCFunction)Module_ir, METH_NOARGS, "The analysed IR, as text."},
    {"ir_tree", (PyCFunction)Module_ir_tree, METH_NOARGS,
     "The analysed IR as tuples (executed by the numpy backend)."},
    {"source", (PyCFunction)Module_source, METH_NOARGS, "The optimised LLVM IR of the kernel (cuda: the CUDA C)."},
    {"_cuda_ptx", (PyCFunction)cuda_method_ptx, METH_O, "cuda: PTX of the source for an arch ('sm_80')."},
    {"_cuda_emulate", (PyCFunction)cuda_method_emulate, METH_VARARGS,
     "cuda: run later calls on a host emulation library built from source() (tests)."},
    {"_cuda_info", (PyCFunction)cuda_method_info, METH_NOARGS, "cuda: kernels and temporaries' storage."},
    {"bind", (PyCFunction)(void (*)(void))Module_bind, METH_VARARGS | METH_KEYWORDS,
     "Bind and validate call arguments: ({field: (array, origin)}, {scalar: value}, domain, "
     "exec_info, region anchors)."},
    {"_region_reach", (PyCFunction)gregion_reach_method, METH_VARARGS,
     "(domain, global_origin, global_domain) -> {field: ((i-, i+), (j-, j+))}: the offsets a "
     "call with this placement of the horizontal regions reads."},
    {"_record_call", (PyCFunction)Module_record_call, METH_VARARGS,
     "Fill exec_info after a numpy-backend call: "
     "(exec_info, fields, domain, call_start, run_start, run_end)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Module_getset[] = {
    {"field_info", (getter)Module_get_field_info, NULL, "Per field: access extent, intent, dtype.", NULL},
    {"_gt4py_field_facts", (getter)Module_get_gt4py_field_facts, NULL,
     "Per field: (read before written, K boundary), as GT4Py reports them.", NULL},
    {"halo", (getter)Module_get_halo, NULL, "((i-, i+), (j-, j+), (k-, k+)) over all fields.", NULL},
    {"_defaults", (getter)Module_get_defaults, NULL, "{scalar parameter: its default value}.",
     NULL},
    {"min_k_levels", (getter)Module_get_min_k_levels, NULL, "Fewest K levels a domain may have.", NULL},
    {"region_min_domain", (getter)Module_get_region_min_domain, NULL,
     "(ni, nj): the smallest domain on which the extents per horizontal region are exact.", NULL},
    {"build_info", (getter)Module_get_build_info, NULL, "How and how fast the module was built.", NULL},
    {"cache_key", (getter)Module_get_cache_key, NULL, "SHA-256 key of the compiled code (see docs/caching.md).", NULL},
    {"__name__", (getter)Module_get_name, NULL, "The stencil's name.", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ModuleType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gtscript._core.Module",
    .tp_basicsize = sizeof(ModuleObject),
    .tp_dealloc = (destructor)Module_dealloc,
    .tp_call = (ternaryfunc)Module_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A compiled stencil: Module(definition_tree, backend, options).",
    .tp_traverse = (traverseproc)Module_traverse,
    .tp_clear = (inquiry)Module_clear,
    .tp_methods = Module_methods,
    .tp_getset = Module_getset,
    .tp_dictoffset = offsetof(ModuleObject, dict),
    .tp_weaklistoffset = offsetof(ModuleObject, weakrefs),
    .tp_new = Module_new,
};

static PyObject *core_target(PyObject *self, PyObject *unused) {
#ifndef GTSCRIPT_NO_LLVM
    char err[512];
    if (!jit_init(err, sizeof err)) {
        PyErr_SetString(PyExc_RuntimeError, err);
        return NULL;
    }
#endif /* else no cpu backend: "llvm" says "none" (nollvm.c) */
    /* the libm functions cpu kernels call without glibc's errno wrapper (libm.c) */
    const char *names[8];
#ifndef GTSCRIPT_NO_LLVM
    size_t n = libm_direct_names(names, sizeof names / sizeof names[0]);
    if (n > sizeof names / sizeof names[0]) n = sizeof names / sizeof names[0];
#else
    size_t n = 0;
#endif
    PyObject *direct = PyTuple_New((Py_ssize_t)n);
    if (direct == NULL) return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *name = PyUnicode_FromString(names[i]);
        if (name == NULL) {
            Py_DECREF(direct);
            return NULL;
        }
        PyTuple_SET_ITEM(direct, (Py_ssize_t)i, name);
    }
    return Py_BuildValue("{s:s,s:s,s:s,s:N}", "target", jit_target_id(), "cpu", jit_cpu_name(),
                         "llvm", GT_LLVM_VERSION, "libm_direct", direct);
}

/* The size of the thread pool calls run on (GTSCRIPT_NUM_THREADS, else the CPUs this process
 * may run on, read at its first use; set_num_threads changes it). */
static PyObject *core_num_threads(PyObject *self, PyObject *unused) {
    return PyLong_FromLong(pool_threads());
}

/* set_num_threads(n): n a whole number 1..256 (gtscript.set_num_threads checks it and says
 * why; here only what the pool cannot take is refused). Takes effect at the next call. */
static PyObject *core_set_num_threads(PyObject *self, PyObject *arg) {
    int overflow = 0;
    long n = PyLong_AsLongAndOverflow(arg, &overflow);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (overflow != 0 || n < 1 || n > POOL_MAX) {
        PyErr_Format(PyExc_ValueError, "set_num_threads: n must be between 1 and %d", POOL_MAX);
        return NULL;
    }
    pool_set_threads((int)n);
    Py_RETURN_NONE;
}

static PyMethodDef core_methods[] = {
    {"target", core_target, METH_NOARGS, "The host target the cpu backend compiles for."},
    {"num_threads", core_num_threads, METH_NOARGS, "Threads a call may use."},
    {"set_num_threads", core_set_num_threads, METH_O, "Sets the threads the next calls may use."},
    {"nvrtc", cuda_nvrtc, METH_NOARGS, "NVRTC's version, loading it (RuntimeError: not found)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, .m_name = "gtscript._core",
    .m_doc = "The gtscript compiler core: IR, analyses, LLVM JIT backend, call path.",
    .m_size = -1, .m_methods = core_methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    import_array();
    if (PyType_Ready(&ModuleType) < 0) return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Module", (PyObject *)&ModuleType) < 0 ||
        PyModule_AddIntConstant(m, "MAX_PARAMETERS", GT_MAX_PARAMS) < 0 ||
        PyModule_AddFunctions(m, cache_functions) < 0 || !cache_init()) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
