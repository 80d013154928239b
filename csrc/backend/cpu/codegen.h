/*
 * Analysed IR -> LLVM IR for the host CPU.
 *
 * The module defines one function
 *     void gt_kernel(char **ptrs, const int64_t *strides, const int64_t *domain,
 *                    const char *scalars)
 * ptrs[slot]      the element at the compute-domain origin of each field and temporary
 * strides[slot*GT_STRIDES + a]   element strides: I, J, K, then the data dimensions
 *                 (0 for an axis the field does not have)
 * domain[0..2]    ni, nj, nk
 * scalars         one 8-byte slot per scalar parameter, holding its value in its dtype
 * Statements run over their extended compute domain (the extents of the analysis).
 */
#ifndef GT_CODEGEN_H
#define GT_CODEGEN_H

#include <llvm-c/Core.h>

#include "ir/ir.h"

enum { GT_STRIDES = 3 + GT_MAX_DATA_DIMS };

typedef void (*GtKernelFn)(char **ptrs, const int64_t *strides, const int64_t *domain,
                           const char *scalars);

/* Builds the kernel module in `ctx`; NULL with a message in err on failure. */
LLVMModuleRef codegen_cpu(const Stencil *st, LLVMContextRef ctx, char *err, size_t errlen);

#endif
