/* Loop-nest merging of consecutive statements (merge.c). */
#ifndef GT_CPU_MERGE_H
#define GT_CPU_MERGE_H

#include "ir/ir.h"

/* How many statements of `l` from `start` on (at least 1) may share one loop nest. */
int cpu_merge_run(const StmtList *l, int start);

#endif
