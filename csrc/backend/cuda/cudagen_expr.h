/* Internal to the CUDA source writer: expressions. Field reads and scalars are named by
 * the caller (which issues the loads), so this file only knows operators. */
#ifndef GT_CUDAGEN_EXPR_H
#define GT_CUDAGEN_EXPR_H

#include "backend/cuda/cudagen_write.h"

typedef struct ExprWriter {
    void *ctx;
    const char *(*read)(void *ctx, const Expr *access); /* a loaded value or a register */
    const char *(*scalar)(void *ctx, const Symbol *s);
    const char *(*level)(void *ctx); /* the current K level, from the domain's first */
    /* a checked interval bound (call.checked): the arguments after the level of the check
     * that wraps it (gt_kbound) */
    const char *(*bound_check)(void *ctx, const Expr *call);
} ExprWriter;

void cuda_expr(ExprWriter *x, StrBuf *sb, const Expr *e);

#endif
