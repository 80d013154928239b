/*
 * The cpu code generator's shared state, private to csrc/backend/cpu: codegen.c emits
 * expressions, statements and level-by-level loop nests; columns.c emits column groups
 * (bundled column sweeps with values carried between levels in registers).
 */
#ifndef GT_CPU_CG_H
#define GT_CPU_CG_H

#include <llvm-c/Core.h>

#include "backend/cpu/codegen.h"

enum { GT_MAX_LANES = 16 };

/* Loop nests per part of a kernel (codegen.c: begin_part), chosen with
 * benchmarks/build_scaling.py (docs/performance.md). */
#ifndef GT_CPU_PART_NESTS
#define GT_CPU_PART_NESTS 16
#endif

/* A value a column sweep carries from one level to the next (columns.c). */
typedef struct Carry {
    const Symbol *sym;
    const Expr *read;                /* a read of sym at the previous level */
    LLVMValueRef prev[GT_MAX_LANES]; /* per lane: sym at the previous level (a phi) */
    LLVMValueRef last[GT_MAX_LANES]; /* per lane: the value written at this level */
} Carry;

typedef struct CG {
    const Stencil *st;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMValueRef fn;
    LLVMTypeRef i1, i8, i16, i32, i64, f32, f64, ptr, vd;
    LLVMValueRef *base;                 /* per slot */
    LLVMValueRef (*stride)[GT_STRIDES]; /* per slot, loaded on first use (cg_slot_strides) */
    LLVMValueRef strides_arg;           /* the current function's strides parameter */
    LLVMBuilderRef pb;                  /* at the end of the current function's prologue */
    /* The kernel is split into parts (codegen.c): functions of at most GT_CPU_PART_NESTS
     * loop nests each, called in order by gt_kernel. */
    LLVMValueRef *parts;
    int nparts, partcap;
    int nests; /* loop nests emitted into the current part */
    LLVMValueRef *args; /* gt_kernel's arguments to the parts */
    bool oom;           /* a part could not be started: the build fails */
    LLVMValueRef *scalar;               /* per scalar slot */
    LLVMValueRef ni, nj, nk;
    LLVMValueRef anchor[4]; /* domain[3..6]: region bounds' anchors (codegen.h) */
    LLVMValueRef kflag; /* checked K levels: where one outside the allowed levels is noted */
    LLVMValueRef (*klevels)[2]; /* per slot: the levels its array holds (loaded on first use) */
    LLVMValueRef scalars_arg; /* the current part's scalars parameter */
    LLVMValueRef watch;       /* the part's GtLoopWatch pointer (loaded at its first while) */
    LLVMValueRef countdown;   /* the part's iterations left before its loops look at it */
    bool has_while;           /* some part has a while loop: gt_kernel checks watch->stopped */
    LLVMValueRef ti0, ti1, tj0, tj1; /* the tile: [ti0, ti1) x [tj0, tj1) */
    LLVMValueRef i, j, k;            /* the current point */
    LLVMValueRef jb;                 /* first column of the current bundle */
    LLVMValueRef jstep;              /* J distance between the lanes of a bundle */
    int lane;                        /* the current column's lane in its bundle */
    int kprev;                       /* K offset of the previous level of a sweep */
    Carry *carry;                    /* values carried by the sweep being emitted */
    int ncarry;
    CpuLayout layout;
    bool shared;
    /* Column blocks (blocks.c, columns.c): the parts take the scratch header and `nblk`
     * noalias scratch buffers after their usual parameters; blk_on is the block width the
     * plan chose (0: bundles, else cpu_block_cols(nblk)), loaded in each part's prologue,
     * blk_cols that constant. While a block's sweeps are emitted, views[x] (x < nviews)
     * says which accesses go to scratch buffer blkbuf[x] (blocks.h) and col is the column's
     * index in the block. */
    int nblk;
    LLVMValueRef blk_on, blk_cols;
    LLVMValueRef *blkbuf;
    const struct BlockSym *views;
    int nviews;
    LLVMValueRef col; /* argument arrays may share memory: only temporaries are noalias */
    /* the axis the current tile's blocks run along (columns.c): along_i, and the I and J
     * steps from one column of a block to the next (1 and 0, or 0 and 1) */
    LLVMValueRef blk_along_i, blk_di, blk_dj;
    /* streaming stores (stream.h): whether the kernel has fields to stream, and in the
     * current part whether the plan streams (tile[4], loaded in its prologue) */
    bool streams;
    LLVMValueRef stream_on;
    bool *touched; /* per slot: the arrays of the nest being emitted (codegen.c, joined rows) */
    /* per temporary kept in registers (registers.c), its value at this level [0] and, when
     * carried, at the previous one [1], per lane: slots in the current part (allocas of its
     * entry block, promoted to SSA values by the pipeline's sroa) */
    LLVMValueRef (*regs)[2][GT_MAX_LANES];
    /* the vector math variants declared (vecmath.c), kept until the vectoriser has run */
    LLVMValueRef *variants;
    int nvariants, variantcap;
    char *err;
    size_t errlen;
} CG;

typedef struct Loop {
    LLVMBasicBlockRef header, exit;
    LLVMValueRef iv, lo, hi;
    const char *name;
} Loop;

LLVMValueRef cg_c64(CG *g, long long v);
/* Starts a new part before `cost` more loop nests when the current one would exceed
 * GT_CPU_PART_NESTS; true when it did (values of the old part are then out of scope). */
bool cg_part_split(CG *g, int cost);
LLVMTypeRef cg_type(CG *g, DType t);
LLVMValueRef cg_bound_value(CG *g, AxisBound ab, LLVMValueRef n);

void cg_loop_guard(CG *g, Loop *L, LLVMValueRef lo, LLVMValueRef hi, const char *name);
LLVMValueRef cg_loop_enter(CG *g, Loop *L);
LLVMValueRef cg_loop_begin(CG *g, Loop *L, LLVMValueRef lo, LLVMValueRef hi, const char *name);
void cg_loop_end_step(CG *g, Loop *L, int step);
void cg_loop_end(CG *g, Loop *L);
LLVMValueRef cg_sweep_level(CG *g, const Computation *c, LLVMValueRef iv, LLVMValueRef ks,
                            LLVMValueRef ke);

/* Whether an access to temporary s is to its register (cpu_register_temp), not memory: a
 * carried one lives in a column block's scratch while blocks are emitted. */
bool cg_in_register(const CG *g, const Symbol *s);
/* At the start of a level of a sweep of computation c: each carried register's previous
 * level is the value the last level left (one copy per lane). */
void cg_registers_next_level(CG *g, const Computation *c);
/* At a column of a column block, in a sweep of computation c: its registers that carry
 * nothing from level to level start at zero (each is written before it is read at a point),
 * so no value crosses from one column of the block to the next and LLVM can vectorise the
 * loop over the block's columns. */
void cg_registers_start_column(CG *g, const Computation *c);

/* An expression, or a statement list, at the current point (g->i, g->j, g->k). */
LLVMValueRef cg_emit_expr(CG *g, const Expr *e);
/* The address of symbol s at the current point (in place, or its block scratch). */
LLVMValueRef cg_point_address(CG *g, const Symbol *s);
LLVMTypeRef cg_mem_type(CG *g, DType t);
/* The element stride of symbol s along axis (0 I, 1 J, 2 K) in the current part. */
LLVMValueRef cg_slot_stride(CG *g, const Symbol *s, int axis);
void cg_emit_point(CG *g, const Stmt *s);
void cg_emit_point_list(CG *g, const StmtList *l);

/* columns.c */
void cg_emit_column_group(CG *g, const Computation *first, int n);
LLVMValueRef cg_carried_read(CG *g, const Expr *e); /* NULL: not carried, load it */
void cg_carry_write(CG *g, const Symbol *target, LLVMValueRef v);

#endif
