/*
 * Hand-written C for benchmarks/layout_offsets.py: a stencil's reads at horizontal offsets in
 * C order (K contiguous) and in Fortran order (I contiguous), each written the ways one would
 * by hand to make it fast, so that gtscript's C-order and F-order times can be set against the
 * best this machine allows for each layout.
 *
 * Arrays are (ni, nj, nk) float64 with a halo of one in I and J; every kernel computes the
 * interior, all levels. Patterns: 0 copy, 1 reads at I-1, I, I+1 (an I offset), 2 at J-1, J,
 * J+1, 3 the five-point Laplacian. Variants, C order: 0 plain loops (i, j, k; K innermost), 1
 * the J and K loops joined into one run per I (rows are contiguous), 2 as 1 with a software
 * prefetch of the I+1 plane `ahead` elements in front, 3 runs of `chunk` elements of the
 * joined rows with I innermost (the I-1 and I planes of a chunk are still in L1). Fortran
 * order: 0 plain loops (k, j, i; I innermost), 2 as 0 with a prefetch of row J+1. Stores are
 * plain (as gtscript's are in this benchmark); compiled without loop-to-memcpy rewriting, so a
 * copy is a loop here as it is in gtscript's kernel.
 */
#include <stddef.h>

static inline double point(const double *p, long si, long sj, int pattern) {
    switch (pattern) {
    case 0: return p[0];
    case 1: return p[-si] + p[0] + p[si];
    case 2: return p[-sj] + p[0] + p[sj];
    default: return -4.0 * p[0] + p[si] + p[-si] + p[sj] + p[-sj];
    }
}

/* One run of n points from p (strides si, sj in elements) to o. */
static void run(const double *restrict p, double *restrict o, long n, long si, long sj,
                int pattern, long ahead) {
    if (ahead > 0) { /* a prefetch per cache line, the line's points in a loop that vectorises */
        long m = 0;
        for (; m + 8 <= n; m += 8) {
            __builtin_prefetch(p + m + si + ahead, 0, 3);
            for (long q = m; q < m + 8; q++) o[q] = point(p + q, si, sj, pattern);
        }
        for (; m < n; m++) o[m] = point(p + m, si, sj, pattern);
        return;
    }
    switch (pattern) { /* a constant pattern per loop, so that each vectorises alone */
    case 0:
        for (long m = 0; m < n; m++) o[m] = point(p + m, si, sj, 0);
        break;
    case 1:
        for (long m = 0; m < n; m++) o[m] = point(p + m, si, sj, 1);
        break;
    case 2:
        for (long m = 0; m < n; m++) o[m] = point(p + m, si, sj, 2);
        break;
    default:
        for (long m = 0; m < n; m++) o[m] = point(p + m, si, sj, 3);
    }
}

int c_order(const double *in, double *out, long ni, long nj, long nk, int pattern, int variant,
            long ahead, long chunk) {
    const long si = nj * nk, sj = nk, rowrun = (nj - 2) * nk;
    if (variant == 0) {
        for (long i = 1; i < ni - 1; i++)
            for (long j = 1; j < nj - 1; j++)
                run(in + i * si + j * sj, out + i * si + j * sj, nk, si, sj, pattern, 0);
    } else if (variant == 1 || variant == 2) {
        for (long i = 1; i < ni - 1; i++)
            run(in + i * si + sj, out + i * si + sj, rowrun, si, sj, pattern,
                variant == 2 ? ahead : 0);
    } else if (variant == 3) {
        if (chunk < 1) return -1;
        for (long m0 = 0; m0 < rowrun; m0 += chunk) {
            long n = rowrun - m0 < chunk ? rowrun - m0 : chunk;
            for (long i = 1; i < ni - 1; i++)
                run(in + i * si + sj + m0, out + i * si + sj + m0, n, si, sj, pattern, 0);
        }
    } else {
        return -1;
    }
    return 0;
}

int f_order(const double *in, double *out, long ni, long nj, long nk, int pattern, int variant,
            long ahead) {
    const long si = 1, sj = ni, sk = ni * nj;
    if (variant != 0 && variant != 2) return -1;
    for (long k = 0; k < nk; k++)
        for (long j = 1; j < nj - 1; j++) {
            const double *p = in + k * sk + j * sj + 1;
            double *o = out + k * sk + j * sj + 1;
            if (variant == 2) {
                long i = 0, n = ni - 2;
                for (; i + 8 <= n; i += 8) {
                    __builtin_prefetch(p + i + sj + ahead, 0, 3);
                    for (long q = i; q < i + 8; q++) o[q] = point(p + q, si, sj, pattern);
                }
                for (; i < n; i++) o[i] = point(p + i, si, sj, pattern);
            } else {
                run(p, o, ni - 2, si, sj, pattern, 0);
            }
        }
    return 0;
}
