/* Internal to the CUDA source writer: pieces shared by its files. */
#ifndef GT_CUDAGEN_WRITE_H
#define GT_CUDAGEN_WRITE_H

#include "backend/cuda/cudagen_impl.h"
#include "backend/cuda/gen.h"

/* The helper functions the kernels use (NumPy semantics of casts, //, %, min, max, **). */
void cuda_write_preamble(StrBuf *sb, const char *stencil_name);

/* C type of a value of dtype t, and of its storage (bools are bytes in memory). */
const char *cuda_ctype(DType t);
const char *cuda_mtype(DType t);

#endif
