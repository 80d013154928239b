#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "call/plan.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/blocks.h"
#include "backend/cpu/codegen.h"
#include "backend/cpu/stream.h"
#include "call/machine.h"
#include "call/pool.h"

enum {
    /* bytes of temporaries (or of a tile row's read window) per thread we aim to keep within
     * the L2 cache: half of it, as the OS reports it, at most this (measured on 1 MiB and
     * 2 MiB L2 parts: docs/performance.md) */
    TEMP_BUDGET_MAX = 512 * 1024,
    /* below this many points a call runs on the calling thread alone... */
    PARALLEL_MIN_POINTS = 1 << 15,
    /* ... unless its points times the expression nodes at each point reach this (a stencil
     * of 16 nodes: the same 2**15 points) */
    PARALLEL_MIN_WORK = 1 << 19,
    /* the most bytes of column-block scratch per thread (plan_blocks) */
    BLOCK_SCRATCH_MAX = 64 << 20,
};

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The L2 budget of a thread's tile: half the L2 the OS reports, capped (and the cap where
 * the OS says nothing). */
static int64_t temp_budget(void) {
    int64_t l2 = cpu_cache_bytes(2);
    return l2 > 0 && l2 / 2 < TEMP_BUDGET_MAX ? l2 / 2 : TEMP_BUDGET_MAX;
}

/* Sizes here come from the domain, which the call bounds by the arrays (and by 2**63 - 1
 * points, call.c) but not, with validate_args=False, by what memory can hold: products and
 * sums saturate at INT64_MAX (a buffer that large then fails to allocate: MemoryError). */
static int64_t sat_mul(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
static int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
/* ceil(n / d) for n >= 0, d > 0, without n + d - 1 (which overflows near INT64_MAX) */
static int64_t ceil_div(int64_t n, int64_t d) { return n / d + (n % d != 0); }

/* Threads a call on this domain may use: the pool's (`pool`), or one for a stencil that must
 * run as one tile or a domain too small to share out. Small is measured in work, points
 * times expression nodes: a microphysics sweep of a thousand statements on 100 columns of
 * 138 levels (13,800 points) runs 2.0x faster on two threads (13.8 -> 6.8 ms, the benchmark
 * of benchmarks/column_physics.py), where a copy of that many points is done before the
 * pool's threads wake. */
static int plan_threads(const Stencil *st, const int64_t n[3], int pool) {
    if (st->extended_writes) return 1;
    int64_t points = sat_mul(sat_mul(n[0], n[1]), n[2]);
    if (points >= PARALLEL_MIN_POINTS) return pool;
    return sat_mul(points, st->point_nodes) >= PARALLEL_MIN_WORK ? pool : 1;
}

/* Tile size: tiles are independent (temporaries are recomputed on their halos), so they
 * are sized for the cache; stencils writing argument fields beyond the domain run as one. */
static void model_tiles(const Stencil *st, const int64_t n[3], CpuLayout layout, PlanChoice *c) {
    const int64_t budget = temp_budget();
    const int nthreads = plan_threads(st, n, c->pool);
    c->tile_why = st->extended_writes ? "one tile (writes beyond the domain)" : "model";
    c->tile_free = !st->extended_writes;
    c->tile_axis = 0;
    if (st->extended_writes) {
        c->ti = n[0];
        c->tj = n[1];
    } else {
        int64_t column = 0; /* bytes of all temporaries in one (i, j) column */
        for (int t = 0; t < st->ntemps; t++) {
            const Extent *e = &st->temps[t]->access;
            if (!st->temps[t]->has_access || cpu_bundle_buffer(st, st->temps[t], layout) ||
                cpu_register_temp(st, st->temps[t], layout))
                continue;
            column = sat_add(column, sat_mul(sat_add(n[2], e->hi[2] - e->lo[2]), dtype_size(st->temps[t]->dtype)));
        }
        if (column > 0 && layout == LAYOUT_I_UNIT) {
            /* I is the unit-stride axis: long rows in I, as few J rows as the budget allows */
            c->ti = n[0] < 512 ? n[0] : 512;
            c->tj = clamp64(budget / sat_mul(column, c->ti), 2, n[1]);
            c->tile_axis = 1;
        } else if (column > 0) {
            c->tj = n[1] < 32 ? n[1] : 32;
            c->ti = clamp64(budget / sat_mul(column, c->tj), 2, n[0]);
        } else if (layout == LAYOUT_I_UNIT) {
            /* no temporaries: tiles only spread the work, a few per thread, and never cut
             * the unit-stride axis (whole rows stream best) */
            c->ti = n[0];
            c->tj = clamp64(ceil_div(n[1], 4 * nthreads), 1, n[1]);
            c->tile_axis = 1;
        } else {
            /* no temporaries, K innermost: each row of a tile sweeps its J columns, and the
             * rows a read spans in I (hdiff: i-2 to i+2) are read again by the next rows; J is
             * cut so that this window of rows stays in the L2 cache (at 512x512x80 hdiff runs
             * 15-20% faster than with whole rows) */
            int64_t window = 0;
            for (int i = 0; i < st->nparams; i++) {
                const Symbol *s = st->params[i];
                if (s->kind != SYM_FIELD) continue;
                int64_t rows = s->has_access ? s->access.hi[0] - s->access.lo[0] + 1 : 1;
                window = sat_add(window, sat_mul(sat_mul(rows, n[2]), dtype_size(s->dtype)));
            }
            c->tj = clamp64(budget / (window > 0 ? window : 1), 16, n[1]);
            c->ti = clamp64(ceil_div(n[0], 4 * nthreads), 1, n[0]);
            c->tile_axis = 1;
        }
    }
    /* GTSCRIPT_TILE_SIZE="TIxTJ" overrides the choice (for measurements and for tests that
     * need many tiles on small domains); never for a stencil that must run as one tile. */
    const char *env = getenv("GTSCRIPT_TILE_SIZE");
    char *x = NULL, *end = NULL;
    /* strtol, not sscanf: it saturates where sscanf's overflow is undefined */
    long ti = env ? strtol(env, &x, 10) : 0, tj = x && *x == 'x' ? strtol(x + 1, &end, 10) : 0;
    if (env && !st->extended_writes && end && end != x + 1 && ti > 0 && tj > 0) {
        c->ti = clamp64(ti, 1, n[0]);
        c->tj = clamp64(tj, 1, n[1]);
        c->tile_why = "env";
        c->tile_free = false;
        c->env = true;
    }
}

/* A 0/1 override from the environment (v: the variable's value): 0 or 1, -1 when unset or
 * anything else (gtscript/config.py reports such a value). Sets c->env when it decides. */
static int env_switch(const char *v, PlanChoice *c) {
    if (v == NULL || (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)) return -1;
    c->env = true;
    return v[0] == '1';
}

/* The bytes of one scratch buffer of a column block (each level padded to whole cache lines,
 * so that every level starts aligned) and of a thread's whole scratch, for nbuf buffers; false
 * when beyond BLOCK_SCRATCH_MAX per thread (a domain of very many levels: the scratch grows
 * with them, not with the tile), which is not worth its memory: bundles then. */
static bool block_scratch(int64_t nk, int nbuf, int64_t *buf, int64_t *total) {
    int64_t b;
    bool fits = !__builtin_mul_overflow((int64_t)cpu_block_cols(nbuf) * 8, nk, &b) && b <= BLOCK_SCRATCH_MAX &&
                !__builtin_mul_overflow((b + 63) / 64 * 64, (int64_t)nbuf, total) &&
                *total <= BLOCK_SCRATCH_MAX;
    *buf = fits ? (b + 63) / 64 * 64 : 0;
    return fits;
}

/* Column blocks or bundles, C order only. GTSCRIPT_COLUMN_BLOCKS=0 runs the column groups in
 * bundles instead, =1 in blocks (for measurements and tests). */
static void model_blocks(const Stencil *st, const int64_t n[3], CpuLayout layout, PlanChoice *c) {
    int nbuf = layout == LAYOUT_K_UNIT ? cpu_block_buffers(st) : 0;
    c->block_cols = 0;
    c->block_why = NULL;
    c->blocks_free = false;
    if (nbuf == 0) return;
    /* Measured on an AMD EPYC (Zen 4) guest, one thread, 256x256x80, CPU ms, bundles ->
     * blocks: tridiagonal float64 25.1 -> 23.9, float32 38.3 -> 11.6; advection float64
     * 34.9 -> 31.2, float32 31.8 -> 26.0 (docs/performance.md). */
    c->block_width = cpu_block_cols(nbuf);
    c->block_cols = c->block_width;
    c->block_why = "model";
    c->blocks_free = true;
    /* A group that calls libm's exp, log, `**`... runs them scalar in a block's vector loop,
     * once per lane, around spills of every live vector register: one column at a time in
     * bundles is faster (benchmarks/column_physics.py's micro, 1,024 columns: bundles 176 ms,
     * blocks 235 ms on one thread; 107 against 110 ms on two). The tuner still measures
     * blocks. With vector_math the calls are libmvec's, vectorised: blocks. */
    if (st->block_libm_calls && !st->vector_math) {
        c->block_cols = 0;
        c->block_why = "model: libm calls (no vector_math)";
    }
    int env = env_switch(getenv("GTSCRIPT_COLUMN_BLOCKS"), c);
    if (env >= 0) {
        c->block_cols = env ? c->block_width : 0;
        c->block_why = "env";
        c->blocks_free = false;
    }
    int64_t buf, total;
    if (!block_scratch(n[2], nbuf, &buf, &total)) {
        c->block_cols = 0;
        c->block_why = "model: scratch over 64 MiB";
        c->blocks_free = false;
    }
}

/* Streaming stores (backend/cpu/stream.h) where the stencil's outputs are larger than the
 * last-level cache: they would leave it before anything read them again, so reading their
 * lines first (what a plain store does) is wasted. Below the threads' L2 caches together
 * the outputs stay close to the cores: never streamed, not even by the tuner. In between
 * the model does not stream and the tuner (tune.h) measures both; it times the stencil
 * alone, not the next one reading the output. GTSCRIPT_STREAMING_STORES=0/1 decides. */
static void model_stream(const Stencil *st, const int64_t n[3], CpuVariant variant, PlanChoice *c) {
    c->stream = false;
    c->stream_why = NULL;
    c->stream_free = false;
    int per_point = cpu_streamed_bytes(st, variant);
    if (per_point == 0) return;
    int64_t bytes = sat_mul(sat_mul(sat_mul(n[0], n[1]), n[2]), per_point);
    int64_t l2 = cpu_cache_bytes(2), llc = cpu_cache_bytes(3);
    int64_t near = sat_mul(l2 > 0 ? l2 : 1 << 20, plan_threads(st, n, c->pool));
    if (llc < near) llc = near;
    if (bytes <= near) {
        c->stream_why = "model: outputs fit the L2 caches";
    } else if (bytes > llc) {
        c->stream = true;
        c->stream_why = "model: outputs larger than the last-level cache";
        c->stream_free = true;
    } else {
        c->stream_why = "model: outputs fit the last-level cache";
        c->stream_free = true;
    }
    int env = env_switch(getenv("GTSCRIPT_STREAMING_STORES"), c);
    if (env >= 0) {
        c->stream = env == 1;
        c->stream_why = "env";
        c->stream_free = false;
    }
}

void plan_model(const Stencil *st, const int64_t domain[3], CpuVariant variant, int pool,
                PlanChoice *c) {
    memset(c, 0, sizeof *c);
    c->pool = pool < 1 ? 1 : pool;
    model_tiles(st, domain, variant.layout, c);
    model_blocks(st, domain, variant.layout, c);
    model_stream(st, domain, variant, c);
}

/* The scratch of the column blocks (block_cols 0: the header only, for bundles). */
static bool plan_blocks(const Stencil *st, Plan *p) {
    int nbuf = p->layout == LAYOUT_K_UNIT ? cpu_block_buffers(st) : 0;
    if (nbuf == 0) {
        p->block_cols = 0;
        p->block_why = NULL;
        return true;
    }
    p->nblock_buffers = nbuf;
    int64_t buf, head = 64 * ((8 * (1 + nbuf) + 63) / 64), total;
    if (!block_scratch(p->domain[2], nbuf, &buf, &total)) p->block_cols = 0;
    total = head + (p->block_cols > 0 ? buf * nbuf : 0); /* bundles: the header only */
    p->block_mem = calloc((size_t)p->nthreads, sizeof *p->block_mem);
    if (p->block_mem == NULL) return false;
    for (int w = 0; w < p->nthreads; w++) {
        char *mem;
        if (posix_memalign((void **)&mem, 64, (size_t)total) != 0) return false;
        p->block_mem[w] = mem;
        int64_t *hdr = (int64_t *)(void *)mem;
        hdr[0] = p->block_cols;
        for (int x = 0; x < nbuf; x++)
            ((char **)(void *)mem)[1 + x] = p->block_cols > 0 ? mem + head + (int64_t)x * buf : NULL;
        p->ptrs[(size_t)w * (size_t)p->nptrs + (size_t)p->nslots] = mem;
    }
    return true;
}

Plan *plan_new(const Stencil *st, const int64_t domain[3], CpuLayout layout, const PlanChoice *c) {
    Plan *p = calloc(1, sizeof *p);
    if (p == NULL) goto oom;
    memcpy(p->domain, domain, sizeof p->domain);
    p->layout = layout;
    p->budget = temp_budget();
    p->ti = clamp64(c->ti, 1, domain[0]);
    p->tj = clamp64(c->tj, 1, domain[1]);
    p->tile_why = c->tile_why;
    p->block_cols = c->block_cols;
    p->block_why = c->block_why;
    p->stream = c->stream;
    p->stream_why = c->stream_why;
    p->pool = c->pool;
    p->nthreads = plan_threads(st, domain, c->pool < 1 ? 1 : c->pool);
    p->nti = ceil_div(domain[0], p->ti);
    p->ntj = ceil_div(domain[1], p->tj); /* nti * ntj <= n[0] * n[1]: fits (call.c) */
    if (p->nti * p->ntj < p->nthreads) p->nthreads = (int)(p->nti * p->ntj);
    if (p->nthreads < 1) p->nthreads = 1;
    p->nslots = stencil_nslots(st);
    p->nptrs = p->nslots + 1;
    p->ntemps = st->ntemps;
    size_t nt = (size_t)p->nthreads;
    p->ptrs = calloc(nt * (size_t)p->nptrs, sizeof *p->ptrs);
    p->strides = calloc(nt * (size_t)(p->nslots + 1) * GT_STRIDES, sizeof *p->strides);
    p->temp_mem = calloc(nt * (size_t)(p->ntemps + 1), sizeof *p->temp_mem);
    if (!p->ptrs || !p->strides || !p->temp_mem) goto oom;
    for (size_t w = 0; w < nt; w++) {
        for (int t = 0; t < st->ntemps; t++) {
            const Symbol *s = st->temps[t];
            const Extent *e = &s->access;
            const int *th = s->tile_hext; /* I/J: what a tile reads or writes (tiles.c) */
            if (!s->has_access) continue; /* computed on the fly everywhere (inline.c) */
            if (cpu_register_temp(st, s, layout)) continue; /* no memory (registers.c) */
            int64_t lo[3] = {-th[0], -th[2], -e->lo[2]};
            int64_t len[3] = {sat_add(p->ti, th[1] - th[0]), sat_add(p->tj, th[3] - th[2]),
                              sat_add(domain[2], e->hi[2] - e->lo[2])};
            bool ij = !(s->axes & AX_K); /* one plane, the same at every level */
            if (ij) {
                lo[2] = 0;
                len[2] = 1;
            }
            bool bundle = cpu_bundle_buffer(st, s, layout);
            if (bundle) { /* one bundle of columns, lane-major: see codegen.h */
                lo[0] = lo[1] = 0;
                len[0] = 1;
                len[1] = st->column_lanes;
            }
            int item = dtype_size(s->dtype);
            /* The seeds' block-private temporaries with the first interior point aligned: the
             * unit-stride row is padded to whole cache lines and the buffer offset so that
             * every row's interior starts on a 64-byte boundary (no split vector accesses). */
            int64_t line = 64 / item, *sv = p->strides + (w * (size_t)p->nslots + (size_t)s->slot) * GT_STRIDES;
            if (bundle) {
                sv[0] = 0;
                sv[1] = 1;
                sv[2] = len[1];
            } else if (layout == LAYOUT_I_UNIT) { /* I fastest, for Fortran-ordered calls */
                sv[0] = 1;
                sv[1] = sat_mul(ceil_div(len[0], line), line);
                sv[2] = ij ? 0 : sat_mul(sv[1], len[1]);
            } else if (ij) { /* J fastest, rows padded to cache lines */
                sv[2] = 0;
                sv[1] = 1;
                sv[0] = sat_mul(ceil_div(len[1], line), line);
            } else { /* K fastest (C order, NumPy's default) */
                sv[2] = 1;
                sv[1] = sat_mul(ceil_div(len[2], line), line);
                sv[0] = sat_mul(sv[1], len[1]);
            }
            int64_t span = bundle ? sat_mul(len[1], len[2])
                           : layout == LAYOUT_I_UNIT ? sat_mul(sat_mul(sv[1], len[1]), len[2])
                                                     : sat_mul(sv[0], len[0]);
            if (span == INT64_MAX) goto oom;
            /* data dimensions outermost: one whole buffer per element, the last fastest */
            for (int d = s->ndata - 1; d >= 0; d--) {
                sv[3 + d] = span;
                if (__builtin_mul_overflow(span, (int64_t)s->data_dims[d], &span)) goto oom;
            }
            /* below the buffer's size (span * item, checked below), as lo < len per axis */
            int64_t origin = sat_mul(sat_add(sat_add(sat_mul(lo[0], sv[0]), sat_mul(lo[1], sv[1])),
                                             sat_mul(lo[2], sv[2])),
                                     item);
            int64_t pad = (64 - origin % 64) % 64, bytes;
            if (__builtin_mul_overflow(span, (int64_t)item, &bytes) || bytes > INT64_MAX - pad - 64)
                goto oom;
            char *mem;
            if (posix_memalign((void **)&mem, 64, (size_t)(bytes + pad) + 64) != 0) goto oom;
            p->temp_mem[w * (size_t)p->ntemps + (size_t)t] = mem;
            p->ptrs[w * (size_t)p->nptrs + (size_t)s->slot] = mem + pad + origin;
        }
    }
    if (!plan_blocks(st, p)) goto oom;
    return p;
oom:
    plan_free(p);
    PyErr_NoMemory();
    return NULL;
}

void plan_free(Plan *p) {
    if (p == NULL) return;
    if (p->block_mem)
        for (int w = 0; w < p->nthreads; w++) free(p->block_mem[w]);
    free(p->block_mem);
    if (p->temp_mem)
        for (size_t i = 0; i < (size_t)p->nthreads * (size_t)p->ntemps; i++) free(p->temp_mem[i]);
    free(p->temp_mem);
    free(p->ptrs);
    free(p->strides);
    free(p);
}
