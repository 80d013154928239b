/*
 * Hand-written C versions of the benchmarked stencils, the way a C programmer writes them for
 * C-ordered (I, J, K) arrays: K innermost (unit stride), `#pragma omp parallel for` on the
 * outer I loop, restrict pointers, every stencil fused into one pass over the grid. The
 * independent K loops carry `#pragma omp simd`: OpenMP outlining drops the restrict qualifiers,
 * and GCC then gives up on hdiff's many alias checks instead of vectorising it.
 *
 * Compiled at run time by benchmarks/c_baselines.py, once per element type:
 *     gcc -O3 -march=native -fopenmp -shared -fPIC -DREAL=double  (or float)
 * Every function takes the grid size (ni, nj, nk) of contiguous arrays and computes on the
 * domain the NumPy reference uses: the array minus the stencil's halo in I and J, all of K.
 */
#include <stdlib.h>

#ifndef REAL
#define REAL double
#endif
typedef REAL real;

/* Literals in the element type, so float kernels compute in float (as NumPy and gtscript do). */
#define R(x) ((real)(x))
#define AT(i, j, k) (((long)(i) * nj + (j)) * nk + (k))

/* STREAM-style copy of n elements: the machine's sustainable bandwidth. */
void stream_copy(const real *restrict src, real *restrict dst, long n) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) dst[i] = src[i];
}

void copy(const real *restrict inp, real *restrict out, long ni, long nj, long nk) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < ni; i++)
        for (long j = 0; j < nj; j++)
#pragma omp simd
            for (long k = 0; k < nk; k++) out[AT(i, j, k)] = inp[AT(i, j, k)];
}

void laplacian(const real *restrict inp, real *restrict out, long ni, long nj, long nk) {
    const long si = nj * nk, sj = nk;
#pragma omp parallel for schedule(static)
    for (long i = 1; i < ni - 1; i++)
        for (long j = 1; j < nj - 1; j++) {
            const real *p = inp + AT(i, j, 0);
            real *o = out + AT(i, j, 0);
#pragma omp simd
            for (long k = 0; k < nk; k++)
                o[k] = R(-4.0) * p[k] + p[k + si] + p[k - si] + p[k + sj] + p[k - sj];
        }
}

static inline real lap_at(const real *p, long si, long sj) {
    return R(4.0) * p[0] - (p[si] + p[-si] + p[sj] + p[-sj]);
}

/* The flux limiter: no flux against the local gradient. */
static inline real limited(real res, real diff) {
    return res * diff > R(0.0) ? R(0.0) : res;
}

void hdiff(const real *restrict inp, const real *restrict coeff, real *restrict out, long ni,
           long nj, long nk) {
    const long si = nj * nk, sj = nk;
#pragma omp parallel for schedule(static)
    for (long i = 2; i < ni - 2; i++)
        for (long j = 2; j < nj - 2; j++) {
            const long at = AT(i, j, 0);
#pragma omp simd
            for (long k = 0; k < nk; k++) {
                const real *p = inp + at + k;
                real c = lap_at(p, si, sj);
                real flx = limited(lap_at(p + si, si, sj) - c, p[si] - p[0]);
                real flx_w = limited(c - lap_at(p - si, si, sj), p[0] - p[-si]);
                real fly = limited(lap_at(p + sj, si, sj) - c, p[sj] - p[0]);
                real fly_s = limited(c - lap_at(p - sj, si, sj), p[0] - p[-sj]);
                out[at + k] = p[0] - coeff[at + k] * (flx - flx_w + fly - fly_s);
            }
        }
}

/* One tridiagonal solve per column; the modified upper diagonal lives in a per-thread column
 * buffer, the modified right-hand side in x itself. */
void thomas(const real *restrict a, const real *restrict b, const real *restrict c,
            const real *restrict d, real *restrict x, long ni, long nj, long nk) {
#pragma omp parallel
    {
        real *cp = malloc((size_t)nk * sizeof *cp);
#pragma omp for schedule(static)
        for (long i = 0; i < ni; i++)
            for (long j = 0; j < nj; j++) {
                const long at = AT(i, j, 0);
                cp[0] = c[at] / b[at];
                x[at] = d[at] / b[at];
                for (long k = 1; k < nk; k++) {
                    real denom = b[at + k] - a[at + k] * cp[k - 1];
                    cp[k] = c[at + k] / denom;
                    x[at + k] = (d[at + k] - a[at + k] * x[at + k - 1]) / denom;
                }
                for (long k = nk - 2; k >= 0; k--) x[at + k] -= cp[k] * x[at + k + 1];
            }
        free(cp);
    }
}

static inline real upwind(real vel, real q_up, real q_here) {
    return vel * (vel > R(0.0) ? q_up : q_here);
}

/* Upwind horizontal fluxes, implicit flux-form vertical transport (w >= 0, K downwards) and a
 * clip at zero, column by column: the horizontal part first into a per-thread column buffer
 * (a loop without dependences, so it vectorises), then the sequential sweep down the column. */
void advection(const real *restrict q, const real *restrict u, const real *restrict v,
               const real *restrict w, real *restrict out, long ni, long nj, long nk, real dtdx,
               real dtdy, real dtdz) {
    const long si = nj * nk, sj = nk;
#pragma omp parallel
    {
        real *qh = malloc((size_t)nk * sizeof *qh);
#pragma omp for schedule(static)
        for (long i = 1; i < ni - 1; i++)
            for (long j = 1; j < nj - 1; j++) {
                const long at = AT(i, j, 0);
#pragma omp simd
                for (long k = 0; k < nk; k++) {
                    const long p = at + k;
                    real fx_w = upwind(u[p], q[p - si], q[p]);
                    real fx_e = upwind(u[p + si], q[p], q[p + si]);
                    real fy_s = upwind(v[p], q[p - sj], q[p]);
                    real fy_n = upwind(v[p + sj], q[p], q[p + sj]);
                    qh[k] = q[p] - dtdx * (fx_e - fx_w) - dtdy * (fy_n - fy_s);
                }
                real prev = R(0.0);
                for (long k = 0; k < nk; k++) {
                    real inflow = k > 0 ? dtdz * w[at + k - 1] * prev : R(0.0);
                    prev = (qh[k] + inflow) / (R(1.0) + dtdz * w[at + k]);
                    out[at + k] = prev > R(0.0) ? prev : R(0.0);
                }
            }
        free(qh);
    }
}
