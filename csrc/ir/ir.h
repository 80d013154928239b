/*
 * The gtscript IR: a stencil definition after name resolution, owned by one arena.
 *
 * The builder (build.c) produces the structured form: assignments, if/else, while and
 * horizontal regions nested as written. The analyses (csrc/analysis) then type it, lower
 * control flow to guarded statements (the seed's "condition evaluated into a mask first")
 * and compute extents; backends only read the analysed form.
 */
#ifndef GT_IR_H
#define GT_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "util/arena.h"

enum { GT_MAX_DATA_DIMS = 4, GT_MAX_ARGS = 3 };

/* Parameters (fields and scalars) a stencil may have: the call path keeps per-parameter
 * tables of this size on the stack (call.h's Bound, about 90 bytes a parameter). The
 * frontend and ir_build refuse more at build time, so a built stencil can always be called. */
enum { GT_MAX_PARAMS = 1024 };

/* int8 and int16 come last so that the older dtypes keep their numbers */
typedef enum { DT_BOOL, DT_INT32, DT_INT64, DT_FLOAT32, DT_FLOAT64, DT_INT8, DT_INT16, DT_COUNT } DType;

const char *dtype_name(DType t);
bool dtype_parse(const char *s, DType *out);
int dtype_size(DType t);
static inline bool dtype_is_float(DType t) { return t == DT_FLOAT32 || t == DT_FLOAT64; }
static inline bool dtype_is_int(DType t) {
    return t == DT_INT8 || t == DT_INT16 || t == DT_INT32 || t == DT_INT64;
}
/* the width of an integer dtype in bits (0 for others) */
static inline int dtype_int_bits(DType t) {
    return t == DT_INT8 ? 8 : t == DT_INT16 ? 16 : t == DT_INT32 ? 32 : t == DT_INT64 ? 64 : 0;
}
/* an integer narrower than int32: arithmetic wraps to its width (C would promote to int) */
static inline bool dtype_is_small_int(DType t) { return t == DT_INT8 || t == DT_INT16; }
/* v wrapped to the integer dtype t (two's complement), as NumPy's integer arithmetic */
static inline int64_t dtype_wrap_int(DType t, int64_t v) {
    switch (t) {
    case DT_INT8: return (int64_t)(int8_t)(uint8_t)(uint64_t)v;
    case DT_INT16: return (int64_t)(int16_t)(uint16_t)(uint64_t)v;
    case DT_INT32: return (int64_t)(int32_t)(uint32_t)(uint64_t)v;
    default: return v;
    }
}
/* whether v is in the range of the integer dtype t */
static inline bool dtype_int_fits(DType t, int64_t v) { return dtype_wrap_int(t, v) == v; }

enum { AX_I = 1, AX_J = 2, AX_K = 4, AX_IJK = 7 };

typedef enum { POLICY_PARALLEL, POLICY_FORWARD, POLICY_BACKWARD } Policy;
const char *policy_name(Policy p);

/* A horizontal or vertical extent: <lo, hi> as in the seeds (lo <= 0 <= hi). */
typedef struct Extent {
    int lo[3], hi[3];
} Extent;

typedef enum { SYM_FIELD, SYM_SCALAR, SYM_TEMP } SymKind;

typedef struct Symbol {
    const char *name;
    SymKind kind;
    DType dtype;
    int axes; /* AX_* bits; temporaries are IJK */
    int ndata;
    int data_dims[GT_MAX_DATA_DIMS];
    int index;     /* parameter position (fields, scalars) or temporary number */
    int slot;      /* fields and temporaries: pointer slot of the kernel; scalars: scalar slot */
    int line, col; /* where declared (parameters: the definition line) */
    bool typed;    /* temporaries: dtype fixed (by a declaration or first assignment) */
    bool is_mask;  /* temporaries created to hold a field condition */
    /* analysis results */
    bool read, written;
    int first_write_line;
    Extent access;  /* union of read and write extents (horizontal and K) */
    bool has_access;
    /* the I/J offsets actually read or written: `access` without the widening to include 0,
     * so the call accepts a negative origin where only positive offsets are read (valid
     * when has_access) */
    int reach_lo[2], reach_hi[2];
    /* reads only (the call's aliasing check): horizontal extent of the points read around
     * each point of the domain, and whether a PARALLEL statement reads it at another K level */
    int read_hext[4]; /* ilo, ihi, jlo, jhi */
    /* reads and writes, ignoring horizontal regions (every statement accesses its whole
     * extent): the call checks these on a domain below st->region_exact_domain */
    int plain_hext[4];
    /* temporaries (tiles.c): the I/J halo of a tile's buffer, every point a tile writes or
     * reads of it relative to the tile (ilo, ihi, jlo, jhi; lo <= 0 <= hi) */
    int tile_hext[4];
    bool kread_parallel;
    /* fields: read at a K level the kernel checks (kchecked): the array must hold every level
     * of the compute domain */
    bool kread_checked;
    /* GT4Py's field_info facts, reported and read by no backend (extents.c): whether a read
     * comes before the first write in program order (READ_WRITE rather than WRITE), and the K
     * boundary per side (0: below, 1: above): the most levels beyond the domain that an access
     * at a constant K offset reaches inside an interval anchored on that side; negative when
     * the accesses stay that far inside (kbound_set[side] false: no such access, boundary 0) */
    bool read_before_write;
    bool kbound_set[2];
    int kbound[2];
    /* analysed (schedule.c), temporaries: every access lies in one column group, at zero
     * horizontal offset, so a column's values die with its sweep and the buffer needs only
     * the columns of one bundle (lane-major: the lanes of a level are adjacent) */
    bool column_local;
    /* analysed (registers.c), column-local temporaries: read only at the point itself, in one
     * FORWARD or BACKWARD computation, each level's value written before it is read: a column
     * sweep keeps it in a register and it has no buffer at all */
    bool in_register;
    /* ... also read at the previous level of its sweep (K - 1 in FORWARD, K + 1 in BACKWARD),
     * carried in a second register from level to level; reg_comp: the computation */
    bool reg_carried;
    int reg_comp;
    /* analysed (registers.c): every access lies in loop-nest run reg_run (1-based, st->runs;
     * 0: none), read at the point after the run wrote it there: a register of that run's
     * nest wherever the run runs as a nest (a column group's: in Fortran order only) */
    int reg_run;
    /* set by the cpu backend (backend/cpu/blocks.c, cpu_blocks_assign), column-local
     * temporaries: a column block's scratch holds it when the groups run in blocks */
    bool block_held;
} Symbol;

typedef enum {
    E_CONST,
    E_FIELD,  /* field or temporary access at a constant offset (or variable K) */
    E_SCALAR, /* scalar parameter */
    E_UNARY,  /* OP_NEG, OP_POS, OP_NOT */
    E_BINARY, /* arithmetic */
    E_CMP,
    E_LOGIC, /* OP_AND, OP_OR: two operands */
    E_TERNARY,
    E_CALL,
    E_CAST,
    E_KINDEX, /* the current K level as a value (GT4Py's `K`): 0 is the domain's first level */
} ExprKind;

typedef enum {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW,
    OP_NEG, OP_POS, OP_NOT,
    OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE,
    OP_AND, OP_OR,
} Op;
const char *op_name(Op op);

typedef enum {
    FN_ABS, FN_MIN, FN_MAX, FN_SQRT, FN_EXP, FN_LOG, FN_LOG10, FN_POW, FN_FLOOR, FN_CEIL,
    FN_TRUNC, FN_SIN, FN_COS, FN_TAN, FN_ARCSIN, FN_ARCCOS, FN_ARCTAN, FN_ARCTAN2, FN_SINH,
    FN_COSH, FN_TANH, FN_ISFINITE, FN_ISINF, FN_ISNAN, FN_ARCSINH, FN_ARCCOSH, FN_ARCTANH,
    FN_GAMMA, FN_ERF, FN_ERFC, FN_CBRT, FN_ROUND, FN_ROUND_AWAY,
    /* __data_index(i, n): the run-time data index i of a dimension of size n; its value is i,
     * and the call checks 0 <= i < n wherever the statement runs (call/kbounds.c). The
     * frontend writes it for f[0, 0, 0][i]; users cannot call it. */
    FN_DATA_INDEX,
    /* __level_bound(level): a level given by an IJ field as an interval bound (the frontend
     * writes it for interval(0, top)); its value is level, and the call checks
     * 0 <= level <= nk wherever the statement runs (call/kbounds.c), so that no column is
     * silently cut at the domain's edge. A level computed from values the stencil writes (an
     * IJ temporary, a written IJ field) is checked by the kernel instead (call.checked). */
    FN_LEVEL_BOUND, FN_COUNT
} Builtin;
const char *builtin_name(Builtin fn);
/* The C math library's (libm's, CUDA's) name of a float64 builtin ("f" appended for
 * float32), NULL where there is none. */
const char *builtin_libm_name(Builtin fn);
/* Whether the cpu backend computes it by calling that function (exp, log, `**`, sin, ...; not
 * sqrt and the roundings, single instructions): scalar calls in a vector loop unless
 * vector_math makes them libmvec's. */
bool builtin_is_libm_call(Builtin fn);
bool builtin_parse(const char *s, Builtin *out);
int builtin_arity(Builtin fn);

typedef struct Expr Expr;
struct Expr {
    ExprKind kind;
    DType type;
    bool weak; /* an untyped Python literal (NumPy 2 "weak scalar" promotion) */
    int line, col;
    union {
        union {
            int64_t i; /* bool and ints */
            double f;
        } cnst;
        struct {
            Symbol *sym;
            int off[3];
            Expr *kexpr; /* variable K offset (int expr), or NULL */
            bool kabs;   /* f.at(K=kexpr): kexpr is the absolute K index (off all 0) */
            /* kexpr is computed from values the stencil writes, so the call cannot check it
             * before running: the kernel checks the level against the compute domain's
             * levels, reads the current level instead and reports the line (types.c) */
            bool kchecked;
            int ndi;
            int data_index[GT_MAX_DATA_DIMS];
        } field;
        Symbol *scalar;
        struct {
            Op op;
            Expr *a, *b;
        } op;
        struct {
            Expr *cond, *a, *b;
        } ternary;
        struct {
            Builtin fn;
            int nargs;
            Expr *args[GT_MAX_ARGS];
            /* FN_LEVEL_BOUND computed from values the stencil writes: the call cannot check
             * it before running, so the kernel checks 0 <= level <= nk where it evaluates it
             * and notes the line (GT_NOTE_LEVEL_BOUND) on failure; from is the temporary or
             * field it is computed from, named by the error (types.c) */
            bool checked;
            const Symbol *from;
        } call;
        Expr *cast; /* operand of E_CAST; the target is `type` */
    };
};

/* The note of a failed in-kernel check (codegen.h) is the line, plus the argument's index + 1
 * shifted left by 32 for a checked read; this bit marks a checked interval bound instead. */
#define GT_NOTE_LEVEL_BOUND (1ULL << 62)

typedef struct AxisBound {
    int level; /* 0: start of the domain, 1: end */
    int offset;
    /* interval bounds only: a run-time bound, `interval(n + 1, ...)` with n an integer scalar
     * parameter: the level is 0 and the value of n adds to the offset (NULL: none) */
    Symbol *sym;
} AxisBound;

/* The K index of an interval bound, from the domain's first level, on a domain of n levels;
 * kvals[slot]: the value of each integer scalar argument by scalar slot (run-time bounds;
 * the call has checked that these stay inside the domain, so nothing overflows). */
static inline int64_t bound_level(AxisBound b, int64_t n, const int64_t *kvals) {
    int64_t v = b.level ? n + b.offset : b.offset;
    return b.sym ? v + kvals[b.sym->slot] : v;
}

/* A horizontal region box; an absent bound is unbounded. */
typedef struct Box {
    bool has[4]; /* i_lo, i_hi, j_lo, j_hi */
    AxisBound b[4];
} Box;

typedef struct Stmt Stmt;
typedef struct StmtList {
    Stmt **items;
    int n, cap;
} StmtList;

typedef enum {
    S_ASSIGN,
    S_IF,     /* structured form only */
    S_REGION, /* structured form only */
    S_WHILE,
} StmtKind;

struct Stmt {
    StmtKind kind;
    int line, col;
    int horizontal_extent[4]; /* analysed: ilo, ihi, jlo, jhi (ilo, jlo <= 0) */
    /* analysed (tiles.c), top-level statements: where a tile computes the statement relative
     * to the tile, horizontal_extent widened by what later statements of the tile read of the
     * temporaries it writes; never run outside horizontal_extent in the domain */
    int tile_extent[4];
    /* a statement writing an argument field keeps at least the extent it had in the IR as
     * written (extents_recompute_keeping_contract): its writes are visible to the caller */
    int contract_extent[4];
    bool has_contract;
    /* analysed (nests.c), top-level statements: the loop-nest run holding the statement,
     * 1-based (st->runs); 0: none fixed */
    int run;
    /* analysed form: the statement applies where `guard` holds (NULL: everywhere) and inside
     * one of the region boxes (nboxes == 0: everywhere). */
    Expr *guard;
    int nboxes;
    Box *boxes;
    union {
        struct {
            Symbol *target;
            int koff;
            /* a variable K offset of the write, or NULL: an int expr of scalars and of fields
             * the stencil does not write (the call checks the levels before running), or, when
             * kchecked, of values the stencil writes (temporaries, written fields): the kernel
             * checks each level written, as for kchecked reads (types.c) */
            Expr *kexpr;
            bool kchecked;
            int ndi;
            int data_index[GT_MAX_DATA_DIMS];
            Expr *value;
        } assign;
        struct {
            Expr *cond;
            StmtList then, els;
        } if_;
        struct {
            Expr *cond;
            StmtList body;
        } while_;
        struct {
            StmtList body;
        } region;
    };
};

typedef struct Interval {
    int line, col;
    AxisBound start, end;
    StmtList body;
} Interval;

typedef struct Computation {
    int line, col;
    Policy policy;
    int nintervals;
    Interval *intervals; /* analysed: in execution order */
    /* analysed (schedule.c): the policy of the definition, where policy is another (a
     * FORWARD or BACKWARD computation no value crosses a level of, run as PARALLEL) */
    Policy as_written;
    bool levels_free;
    /* analysed (schedule.c): a FORWARD/BACKWARD computation whose statements only touch
     * their own column, so it may run column by column instead of level by level */
    bool columnwise;
    /* analysed (schedule.c): this columnwise computation and the next one may run on the
     * same column back to back (neither reads, shifted, what the other writes) */
    bool column_fuse_next;
} Computation;

/* The first error found by a pass; module.c turns it into a Python exception. */
typedef enum { DIAG_NONE, DIAG_SYNTAX, DIAG_SEMANTIC, DIAG_TYPE, DIAG_VALUE, DIAG_NOMEM, DIAG_INTERNAL } DiagKind;
typedef struct Diag {
    DiagKind kind;
    int line, col;
    int count; /* violations found; the first (in source order) is reported */
    char msg[1024];
} Diag;

typedef struct Warning {
    int line, col;
    char *msg;
    struct Warning *next;
} Warning;

/* K range of an interval in which a field slot is accessed, with the K offsets used there;
 * the call checks these against the array's K size. */
typedef struct KAccess {
    int slot;
    AxisBound start, end;
    int dlo, dhi;
} KAccess;

typedef struct Stencil {
    Arena arena;
    const char *name;
    const char *filename;
    int nsource;
    const char **source; /* source[line - 1] */
    int nparams;
    Symbol **params;
    int nfields, nscalars; /* among params */
    int ntemps, captemps;
    Symbol **temps;
    int ncomps;
    Computation *comps;
    Diag diag;
    Warning *warnings;
    /* extent analysis results */
    int nkacc, capkacc;
    KAccess *kacc;
    int min_k_levels; /* the intervals need at least this many K levels */
    /* an argument field is written beyond the compute domain (read later with an offset):
     * tiles would write each other's halo, so the stencil runs as a single tile */
    bool extended_writes;
    /* per-region extents (extents.c) hold when the domain has at least this many points
     * along I and J (the regions' start- and end-anchored edges do not cross). Below
     * region_min_domain, statements would compute less than later statements read: the call
     * refuses; below region_exact_domain, the argument fields' access extents may be too
     * small: the call checks plain_hext instead. Both only grow (recomputing extents keeps
     * the contract). */
    int region_min_domain[2], region_exact_domain[2];
    /* some read has a variable or absolute K index (kexpr): the call checks its range */
    bool has_variable_k;
    /* some expression has a run-time data index (FN_DATA_INDEX): the call checks its range;
     * data_index_reads_fields: some such index is computed from fields (read on the host) */
    bool has_data_index, data_index_reads_fields;
    /* some interval is bounded by an IJ field (FN_LEVEL_BOUND): the call checks its values */
    bool has_level_bound;
    /* some read has a kchecked K index: calls keep a copy of the written arrays, and restore
     * them and raise when the kernel reports a level outside the domain */
    bool has_checked_k;
    /* some computation has a while loop: a single-tile call watches for Ctrl-C too, since a
     * loop may never end (call/interrupt.h) */
    bool has_while;
    /* some interval has a run-time bound (a scalar parameter): the call checks the bounds */
    bool has_runtime_bounds;
    /* analysed (schedule.c): columns per bundle of a column group's sweep (0: no group), and
     * whether a bundle's lanes are spread over the tile's row instead of adjacent */
    int column_lanes;
    bool column_spread;
    /* analysed (schedule.c): expression nodes of every computation's statements, a measure
     * of the work at one point (a call's threads, plan.c); 0 where not counted */
    int64_t point_nodes;
    /* set by the cpu backend (backend/cpu/blocks.c, cpu_blocks_assign): the most scratch
     * buffers a column group needs to run in blocks (0: no group can) */
    int block_buffers;
    /* ... and whether such a group calls a math function libm computes (exp, log, `**`, ...:
     * without vector_math, a block's vector loop calls it once per lane) */
    bool block_libm_calls;
    /* analysed (nests.c): the loop-nest runs of the computations, in execution order; runs[r - 1]
     * is run r (the statements share one loop nest), run_grouped[r - 1] whether it is of a
     * column group's computation */
    StmtList *runs;
    bool *run_grouped;
    int nruns;
    /* options that change semantics */
    int literal_float_bits; /* 64: Python float literals are float64 (GT4Py's default); 0: weak */
    int literal_int_bits;   /* 64 or 32: Python int literals are typed int64 / int32; 0: weak */
    bool compute_on_the_fly; /* run inline.c (compiled backends; the numpy oracle does not) */
    bool schedule_columns;   /* run schedule.c (the cpu backend's column groups) */
    bool vector_math;        /* cpu: vectorised exp/log/pow call libmvec (vecmath.c) */
    /* what the call needs to accept an input aliasing an output where the order of the points
     * cannot matter (analysis/aliasing.h); NULL when no call can alias an input and an output */
    struct AliasSummary *alias;
} Stencil;

/* Records the first error (later ones only increase the count); returns false for `return`. */
bool diag_error(Stencil *st, DiagKind kind, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void diag_warning(Stencil *st, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *stencil_source_line(const Stencil *st, int line);

/* Visits every node of an expression, each before its operands (a field access before its
 * variable K offset). */
typedef void (*ExprVisitor)(void *ctx, Expr *node);
void expr_visit(Expr *e, ExprVisitor fn, void *ctx);

/* Visits every field access (reads of fields/temporaries, including guards, while
 * conditions and variable K offsets) of an expression. */
typedef void (*FieldVisitor)(void *ctx, Expr *access);
void expr_visit_fields(Expr *e, FieldVisitor fn, void *ctx);

Stencil *stencil_new(void);
void stencil_free(Stencil *st);

/* Node constructors: arena-allocated, zeroed, NULL on out-of-memory (with diag set). */
Expr *expr_new(Stencil *st, ExprKind kind, int line, int col);
Stmt *stmt_new(Stencil *st, StmtKind kind, int line, int col);
bool stmts_push(Stencil *st, StmtList *l, Stmt *s);
Symbol *stencil_add_temp(Stencil *st, const char *name, int line, int col);
Symbol *stencil_lookup(const Stencil *st, const char *name);

/* Field slots: parameters' fields first, then temporaries. */
static inline int stencil_nslots(const Stencil *st) { return st->nfields + st->ntemps; }

#endif
