/* Internal to the CUDA source writer: the kernel/stage plan shared by cudagen_plan.c
 * (deciding) and cudagen.c (writing). */
#ifndef GT_CUDAGEN_IMPL_H
#define GT_CUDAGEN_IMPL_H

#include "backend/cuda/cudagen.h"

/* One field or temporary access of a statement (reads of guards, values, while
 * conditions and bodies; writes of assignments). */
typedef struct Access {
    int slot;
    bool write;
    int off[3]; /* writes: (0, 0, koff) */
    bool kexpr; /* a variable K offset */
} Access;

/* A top-level statement of an interval with where it runs. */
typedef struct PStmt {
    const Stmt *s;
    int comp, interval;
    int kernel, stage; /* stage numbers are global and increase in execution order */
    Access *acc;
    int nacc;
} PStmt;

typedef struct KPlan {
    PStmt *stmts; /* every top-level statement, in execution order */
    int nstmts;
    int nkernels;
    bool *needs_sync; /* per kernel: some thread reads a temporary another thread wrote */
} KPlan;

bool kplan_build(const Stencil *st, KPlan *P, CudaProgram *out, int block_x, int block_y);
void kplan_free(KPlan *P);

#endif
