"""The host emulation header itself (tests/cuda_emulation/gt_cuda_emulation.h), through its
launcher entry point called with ctypes: the threads of a block are real threads,
__syncthreads() is a real barrier between them, and shared memory starts every block NaN."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from cuda_emulation.runner import build, compiler

pytestmark = pytest.mark.skipif(compiler() is None, reason="no host C compiler for the emulation")

# Each thread publishes a value in shared memory, waits at the barrier, then reads its
# neighbour's: without a real barrier the late threads' values would be missing. Thread 0
# dawdles first, so an early reader would see the NaN the launcher filled in.
SOURCE = r"""
__global__ void exchange(char *const *ptrs, const long long *strides, const long long *domain,
                         const char *scalars, long long klo, long long khi) {
    extern __shared__ __align__(16) unsigned char gt_smem[];
    double *shared = (double *)gt_smem;
    double *out = (double *)ptrs[0];
    const int n = blockDim.x * blockDim.y, t = threadIdx.x + blockDim.x * threadIdx.y;
    const int b = blockIdx.x + gridDim.x * blockIdx.y;
    volatile double spin = 0;
    if (t == 0)
        for (int i = 0; i < 2000000; i++) spin += 1;
    shared[t] = t + 100.0 * b;
    __syncthreads();
    out[b * n + t] = shared[(t + 1) % n];
    out[2 * n * gridDim.x * gridDim.y + b] = shared[n];  /* never written: NaN */
}
"""


def launch(lib, grid, block, out):
    kernel = ctypes.cast(lib.exchange, ctypes.c_void_p)
    ptrs = (ctypes.c_void_p * 1)(out.ctypes.data)
    dims = ctypes.c_uint * 3
    lib.gt_emu_launch.restype = ctypes.c_int
    return lib.gt_emu_launch(kernel, dims(*grid), dims(*block), ctypes.c_size_t(4096), ptrs, None, None, None,
                             ctypes.c_longlong(0), ctypes.c_longlong(1))


@pytest.mark.parametrize("grid, block", [((1, 1, 1), (8, 1, 1)), ((3, 2, 1), (4, 3, 1))])
def test_syncthreads_is_a_real_barrier_and_shared_memory_starts_nan(grid, block):
    lib = ctypes.CDLL(str(build(SOURCE)))
    n, nb = block[0] * block[1], grid[0] * grid[1]
    out = np.zeros(3 * n * nb)
    assert launch(lib, grid, block, out) == 0
    t = np.arange(n)
    for b in range(nb):
        np.testing.assert_array_equal(out[b * n:(b + 1) * n], (t + 1) % n + 100.0 * b)
    assert np.isnan(out[2 * n * nb:2 * n * nb + nb]).all()


def test_launcher_rejects_impossible_launches():
    lib = ctypes.CDLL(str(build(SOURCE)))
    assert launch(lib, (1, 1, 1), (1025, 1, 1), np.zeros(4096)) != 0
