/*
 * The call path: binds Python arguments to the stencil's parameters, validates them
 * against the analysis results (dtypes, shapes, extents) before any data is touched, and
 * runs the kernel with the GIL released.
 */
#ifndef GT_CALL_H
#define GT_CALL_H

#include <time.h>

#include "module.h"

/* Seconds on the monotonic clock (time.perf_counter's clock on Linux), for exec_info. */
static inline double call_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* NumPy's type number for dtype t (NPY_FLOAT64, ...), -1 for none. */
int call_npy_type(DType t);

/* Number of I/J/K axes of a field (its array has these plus its data dimensions). */
static inline int field_naxes(const Symbol *s) {
    return !!(s->axes & AX_I) + !!(s->axes & AX_J) + !!(s->axes & AX_K);
}

/* Array dimension holding axis a (0 = I, 1 = J, 2 = K) of field s, or -1. */
static inline int field_dim_of(const Symbol *s, int a) {
    if (!(s->axes & (1 << a))) return -1;
    int d = 0;
    for (int b = 0; b < a; b++)
        if (s->axes & (1 << b)) d++;
    return d;
}

/* Parameters whose per-call tables live inside Bound (on the caller's stack, about 24 KiB);
 * a stencil with more (up to GT_MAX_PARAMS) gets them from one heap block per call, so that
 * the call path's stack stays small for every stencil (threads of embedding applications
 * may have stacks of a few hundred KiB). */
enum { GT_BOUND_INLINE = 256 };

/* The per-parameter tables of a call (indexed by parameter, field slot or scalar slot, all
 * below the stencil's parameter count). */
typedef struct BoundTables {
    PyObject *value[GT_BOUND_INLINE];
    bool owned[GT_BOUND_INLINE];
    bool has_own[GT_BOUND_INLINE];
    int64_t origin[GT_BOUND_INLINE][3];
    int64_t own_origin[GT_BOUND_INLINE][3];
    int64_t greach[GT_BOUND_INLINE][4];
    char *span_lo[GT_BOUND_INLINE], *span_hi[GT_BOUND_INLINE];
    int64_t kvals[GT_BOUND_INLINE];
    PyObject *saved[GT_BOUND_INLINE];
    char scalars[8 * (3 * GT_BOUND_INLINE + 5)]; /* scalars, K flag, watch, 2 per field, 3 */
} BoundTables;

/* Call arguments bound to the stencil's parameters (call.c's bind_all). */
typedef struct Bound {
    /* per parameter: fields a new reference to the array the kernel uses (arrays.h), scalars
     * borrowed (a default: the module's); NULL for a parameter the stencil never uses
     * (folded away by __INLINED) that the call passed as None or left out */
    PyObject **value;
    bool *owned; /* value[i] is a reference bound_release drops */
    int nparams; /* entries of value[] and owned[] in use */
    int64_t (*origin)[3];
    /* per parameter: the array's own origin (__gt_origin__), where has_own[i] */
    bool *has_own;
    int64_t (*own_origin)[3];
    /* the compute domain (ni, nj, nk), then the anchors of horizontal region bounds in the
     * domain's own index space: where the grid's first point (I[0]) and one past its last
     * point (I[-1] + 1) lie along I, then along J. Without global_origin/global_domain they
     * are 0, ni, 0, nj (the regions refer to the domain); with them, -global_origin and
     * global_domain - global_origin. The kernels read all seven (gt_domain). */
    int64_t domain[7];
    /* global_origin/global_domain were given (gregion.h): field extents are checked with
     * greach, the reach of this call's accesses worked out for its region placement */
    bool global;
    int64_t (*greach)[4]; /* per field slot: lowest I, highest I, lowest J, highest J offset */
    char **span_lo, **span_hi; /* fields: the bytes each array spans */
    bool shared;               /* a written field's span meets another field's */
    int64_t *kvals;            /* integer scalars by scalar slot (run-time bounds) */
    /* per parameter, for the run: the copies of checked K reads (call_save_written), and the
     * kernel's scalar block (8 bytes a scalar, then the K flag and the loop watch) */
    PyObject **saved;
    char *scalars;
    bool validate;
    PyObject *exec_info; /* borrowed, or NULL */
    void *heap; /* the block of the tables of a stencil with more than GT_BOUND_INLINE parameters */
    BoundTables in;
} Bound;

/* Binds and validates a call's arguments (every check of the cpu call path); false with a
 * Python exception set. Either way, bound_release(b) must follow. */
bool bind_all(ModuleObject *m, PyObject *args, PyObject *kwargs, Bound *b);
/* bind_all without the check of variable K offsets, run-time data indices and interval
 * bounds from IJ fields (kbounds_check), which reads field values on the host: the cuda call
 * runs it itself on host copies of the GPU arrays it reads. */
bool bind_all_but_kbounds(ModuleObject *m, PyObject *args, PyObject *kwargs, Bound *b);

/* Drops the references bind_all took and frees its tables. */
void bound_release(Bound *b);
/* Points b's per-parameter tables at its inline storage, or at one heap block for a stencil of
 * more than GT_BOUND_INLINE parameters (bound_release frees it). False with MemoryError. */
bool bound_tables(Bound *b, int n);

/* Whether parameter i has an argument (false: an unused parameter passed None or left out). */
static inline bool bound_present(const Bound *b, int i) { return b->value[i] != NULL; }

/* The address of the element at `origin` of field s in its array (the kernel's base pointer).
 * Computed on integers: with a negative origin (allowed where only positive offsets are
 * read) it lies before the array, where C pointer arithmetic is undefined. */
char *field_origin_address(const Symbol *s, PyObject *array, const int64_t *origin);

/* A scalar argument's value in its dtype, into an 8-byte slot; false with an exception. */
bool scalar_value(const Symbol *s, PyObject *o, char *slot);

/* Checked K levels (computed from values the stencil writes): copies of the written
 * argument arrays before the run (saved[p], NULL for others), released afterwards; when the
 * kernel noted a level outside the allowed ones (note != 0: the line, plus the argument's
 * index + 1 shifted left by 32 for a read), first put back, with a ValueError. Parameters with
 * skip[p] (skip may be NULL) are not copied: the cuda call keeps GPU arrays' copies on the GPU.
 * A note marked GT_NOTE_LEVEL_BOUND is a checked interval bound: bound_info (NULL: unknown)
 * holds the column (i, j) and the level the kernel found outside the domain's levels. */
bool call_save_written(const Stencil *st, const Bound *b, PyObject **saved, const bool *skip);
bool call_restore_written(const Stencil *st, const Bound *b, PyObject **saved, int64_t note,
                          int64_t nk, const int64_t *bound_info);
/* What checked K reads may read: for each field slot s, words[2 s] and words[2 s + 1] the
 * levels [lo, hi) its array holds, counted from the domain's first level (the kernels'
 * words after the scalars: backend/cpu/codegen.h, backend/cuda/cudagen.h). */
void call_array_levels(const Stencil *st, const Bound *b, int64_t *words);

/* The cuda backend's call (call_cuda.c): the same binding, then device execution. */
PyObject *call_cuda(ModuleObject *m, PyObject *args, PyObject *kwargs);

/* stencil(*args, origin=None, domain=None, validate_args=True, exec_info=None) */
PyObject *call_stencil(ModuleObject *m, PyObject *args, PyObject *kwargs);

/* For the numpy backend: the same binding and validation, returning
 * ({name: (array, origin)}, {name: value}, domain, exec_info, anchors): anchors are where
 * region bounds are anchored (Bound.domain[3..6]). */
PyObject *call_bind(ModuleObject *m, PyObject *args, PyObject *kwargs);

#endif
