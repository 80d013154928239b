/*
 * Analysed IR -> CUDA C source (see cudagen.c for the execution model).
 *
 * Every kernel has the same signature, the cpu kernel's plus a K range:
 *     extern "C" __global__ void NAME(char *const *ptrs, const long long *strides,
 *                                     const long long *domain, const char *scalars,
 *                                     long long klo, long long khi)
 * ptrs[slot]     fields: the element at the compute-domain origin (as on the cpu);
 *                global (slab) temporaries: the origin of block 0's slab
 * strides[slot*GT_STRIDES + a]   element strides I, J, K, then data dimensions; for slab
 *                temporaries index 3 holds the elements of one block's slab
 * domain         ni, nj, nk, and 1 when threadIdx.x runs along J (the unit-stride axis)
 * scalars        one 8-byte slot per scalar parameter; then, in stencils with checked K levels
 *                (computed from values the stencil writes), the word a failed check sets (as
 *                on the cpu: backend/cpu/codegen.h) and two words per field slot, the levels
 *                [lo, hi) its array holds counted from the domain's first, then the column
 *                (i, j) and the level of a checked interval bound outside the domain
 * klo, khi       the K levels this launch computes (all levels, or one for level-by-level
 *                launches)
 * The source is also valid C, so a host compiler can run it against an emulation header.
 */
#ifndef GT_CUDAGEN_H
#define GT_CUDAGEN_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/cpu/codegen.h"
#include "ir/ir.h"

typedef enum {
    TS_UNUSED,
    TS_REG,  /* read only at offset (0, 0, 0) inside one stage: a register */
    TS_SMEM, /* K offset 0 only, inside one kernel: a shared-memory tile with halo */
    TS_SLAB, /* anything else: a block-private slab (tile + halo, all K) in global memory */
} TempStorage;

typedef struct CudaKernel {
    char name[96];
    int comp;       /* computation */
    bool per_level; /* FORWARD/BACKWARD computation in several kernels: launched level by level */
    bool kchunks;   /* PARALLEL without K dependencies inside: K may be split over blockIdx.z */
} CudaKernel;

typedef struct CudaProgram {
    char *source;
    int nkernels;
    CudaKernel *kernels;
    TempStorage *storage; /* per temporary */
    int *temp_kernel;     /* per temporary: the kernel holding a TS_SMEM temporary */
} CudaProgram;

/* Largest dynamic shared memory a kernel may ask for without opting in. */
enum { GT_CUDA_SMEM_LIMIT = 48 * 1024 };

/* Plans the kernels and writes their source into *out. block_x * block_y is the default
 * tile (threads of a block); shared-memory temporaries that would not fit in
 * GT_CUDA_SMEM_LIMIT for it are kept in global memory instead. False with a message. */
bool cuda_generate(const Stencil *st, int block_x, int block_y, CudaProgram *out, char *err, size_t errlen);
void cuda_program_free(CudaProgram *p);

/* Dynamic shared memory of kernel `k` for a tile of bi x bj points: the kernel carves its
 * shared temporaries in temporary order, each (bi + halo) x (bj + halo) rounded up to 16. */
size_t cuda_smem_bytes(const Stencil *st, const CudaProgram *p, int k, int bi, int bj);

/* Halo sizes (lo <= 0 <= hi) of temporary t along I, J, K. */
void cuda_temp_halo(const Symbol *t, int lo[3], int hi[3]);

#endif
