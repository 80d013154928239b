/*
 * Writing the CUDA C kernels planned by cudagen_plan.c. Each kernel is written through a
 * generator context (gen.h): values every thread needs (its tile, the field pointers and
 * strides, scalars) are declared on first use and hoisted to the top of the kernel; each
 * statement is a reordering section, so its loads come first, then its arithmetic and
 * store.
 */
#include "backend/cuda/cudagen_expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HOIST = 1000 }; /* gen_declare: the kernel's outermost block */

typedef struct Load {
    const Symbol *sym;
    int off[3];
    int ndi, didx[GT_MAX_DATA_DIMS];
    const char *name;
} Load;

typedef struct W {
    const Stencil *st;
    const CudaProgram *prog;
    Gen g;
    /* lazily declared per kernel */
    const char *v_anchor[4];
    const char *v_ni, *v_nj, *v_nk, *v_swap, *v_ti, *v_tj, *v_bi, *v_bj, *v_i0, *v_j0, *v_nit,
        *v_njt, *v_first_i, *v_last_i, *v_first_j, *v_last_j, *v_blin, *v_kb, *v_ke, *v_kchunk;
    const char *v_stop, *v_spin;
    char bound_tail[160]; /* bound_check's text */
    const char **ptr;                   /* per slot */
    const char *(*stride)[GT_STRIDES];  /* per slot */
    const char **scal;                  /* per scalar slot */
    /* names shared by sibling (never nested) loops, as the seed's shared variables */
    const char *ii, *jj, *i, *j, *k;
    Load loads[128];
    int nloads, nload_names;
    bool kchunks;
} W;

/* ---- values of the kernel prologue, declared on first use ---------------------------- */

#define LAZY(field, type, base, ...)                                                               \
    do {                                                                                           \
        if (w->field == NULL) w->field = gen_declare(&w->g, HOIST, type, base, __VA_ARGS__);       \
        return w->field;                                                                           \
    } while (0)

static const char *ni(W *w) { LAZY(v_ni, "const long long", "ni", "gt_domain[0]"); }
static const char *nj(W *w) { LAZY(v_nj, "const long long", "nj", "gt_domain[1]"); }
static const char *nk(W *w) { LAZY(v_nk, "const long long", "nk", "gt_domain[2]"); }
/* checked K levels: set when one of this thread's checks failed (its loops then end) */
static const char *stop_flag(W *w) { LAZY(v_stop, "bool", "checked_stop", "false"); }
/* iterations of this thread's while loops, for their looks at the other threads' checks */
static const char *spin_count(W *w) { LAZY(v_spin, "unsigned", "loop_spins", "0u"); }
static const char *swp(W *w) { LAZY(v_swap, "const bool", "j_fastest", "gt_domain[3] != 0"); }
/* gt_domain[4..7]: where region box bounds are anchored (the grid's first point and one past
 * its last, along I then J, in the domain's index space; call.h, Bound.domain) */
static const char *anchor(W *w, int k) {
    static const char *const names[4] = {"grid_i0", "grid_i1", "grid_j0", "grid_j1"};
    if (w->v_anchor[k] == NULL)
        w->v_anchor[k] = gen_declare(&w->g, HOIST, "const long long", names[k], "gt_domain[%d]", 4 + k);
    return w->v_anchor[k];
}
static const char *ti(W *w) {
    const char *s = swp(w);
    LAZY(v_ti, "const int", "ti", "(int)(%s ? threadIdx.y : threadIdx.x)", s);
}
static const char *tj(W *w) {
    const char *s = swp(w);
    LAZY(v_tj, "const int", "tj", "(int)(%s ? threadIdx.x : threadIdx.y)", s);
}
static const char *bi(W *w) {
    const char *s = swp(w);
    LAZY(v_bi, "const int", "bi", "(int)(%s ? blockDim.y : blockDim.x)", s);
}
static const char *bj(W *w) {
    const char *s = swp(w);
    LAZY(v_bj, "const int", "bj", "(int)(%s ? blockDim.x : blockDim.y)", s);
}
static const char *i0(W *w) {
    const char *s = swp(w), *b = bi(w);
    LAZY(v_i0, "const long long", "i0", "(long long)(%s ? blockIdx.y : blockIdx.x) * %s", s, b);
}
static const char *j0(W *w) {
    const char *s = swp(w), *b = bj(w);
    LAZY(v_j0, "const long long", "j0", "(long long)(%s ? blockIdx.x : blockIdx.y) * %s", s, b);
}
static const char *nit(W *w) {
    const char *n = ni(w), *o = i0(w), *b = bi(w);
    LAZY(v_nit, "const int", "ni_tile", "(int)(%s - %s < %s ? %s - %s : %s)", n, o, b, n, o, b);
}
static const char *njt(W *w) {
    const char *n = nj(w), *o = j0(w), *b = bj(w);
    LAZY(v_njt, "const int", "nj_tile", "(int)(%s - %s < %s ? %s - %s : %s)", n, o, b, n, o, b);
}
static const char *first_i(W *w) {
    const char *o = i0(w);
    LAZY(v_first_i, "const bool", "first_i", "%s == 0", o);
}
static const char *last_i(W *w) {
    const char *o = i0(w), *b = bi(w), *n = ni(w);
    LAZY(v_last_i, "const bool", "last_i", "%s + %s >= %s", o, b, n);
}
static const char *first_j(W *w) {
    const char *o = j0(w);
    LAZY(v_first_j, "const bool", "first_j", "%s == 0", o);
}
static const char *last_j(W *w) {
    const char *o = j0(w), *b = bj(w), *n = nj(w);
    LAZY(v_last_j, "const bool", "last_j", "%s + %s >= %s", o, b, n);
}
static const char *blin(W *w) {
    LAZY(v_blin, "const long long", "block", "(long long)blockIdx.x + (long long)gridDim.x * blockIdx.y");
}
/* This block's K levels: the launch's [klo, khi), split over blockIdx.z for PARALLEL. */
static const char *kb(W *w) {
    if (!w->kchunks) LAZY(v_kb, "const long long", "kbeg", "gt_klo");
    if (w->v_kchunk == NULL)
        w->v_kchunk = gen_declare(&w->g, HOIST, "const long long", "kchunk",
                                  "(gt_khi - gt_klo + gridDim.z - 1) / gridDim.z");
    const char *c = w->v_kchunk;
    LAZY(v_kb, "const long long", "kbeg", "gt_klo + (long long)blockIdx.z * %s", c);
}
static const char *ke(W *w) {
    if (!w->kchunks) LAZY(v_ke, "const long long", "kend", "gt_khi");
    const char *b = kb(w), *c = w->v_kchunk;
    LAZY(v_ke, "const long long", "kend", "gt_khi < %s + %s ? gt_khi : %s + %s", b, c, b, c);
}

/* ---- bindings of fields, temporaries and scalars ------------------------------------- */

/* prefix + the ASCII letters, digits and inner underscores of a user name + suffix: a C
 * identifier whatever the Python name was (gen_name makes it unique). */
static void ident(char *buf, size_t n, const char *prefix, const char *name, const char *suffix) {
    size_t len = (size_t)snprintf(buf, n, "%s", prefix);
    while (*name == '_') name++;
    for (; *name && len + 1 < n && len < 80; name++) {
        char c = *name;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        buf[len++] = ok ? c : '_';
    }
    buf[len] = '\0';
    snprintf(buf + len, n - len, "%s", suffix);
}

static const char *slot_stride(W *w, const Symbol *s, int a) {
    if (w->stride[s->slot][a] == NULL) {
        static const char *const suffix[GT_STRIDES] = {"si", "sj", "sk", "sd0", "sd1", "sd2", "sd3"};
        char base[160], sub[8];
        snprintf(sub, sizeof sub, "_%s", suffix[a]);
        ident(base, sizeof base, s->kind == SYM_FIELD ? "f_" : "t_", s->name, sub);
        w->stride[s->slot][a] = gen_declare(&w->g, HOIST, "const long long", base, "gt_strides[%d]",
                                            s->slot * GT_STRIDES + a);
    }
    return w->stride[s->slot][a];
}

static const char *slot_ptr(W *w, const Symbol *s) {
    if (w->ptr[s->slot]) return w->ptr[s->slot];
    char type[64], base[160];
    snprintf(type, sizeof type, "%s *", cuda_mtype(s->dtype));
    if (s->kind == SYM_FIELD) {
        ident(base, sizeof base, "f_", s->name, "");
        w->ptr[s->slot] = gen_declare(&w->g, HOIST, type, base, "(%s)gt_ptrs[%d]", type, s->slot);
    } else { /* a slab: this block's part of the temporary (its size in the last stride: a
              * temporary has at most GT_MAX_DATA_DIMS - 1 data dimensions, build.c) */
        ident(base, sizeof base, "t_", s->name, "");
        const char *b = blin(w);
        /* restrict: a slab is the call's own allocation that no field and no other temporary
         * overlaps, so the compiler may keep field values loaded across stores to it */
        char rtype[80];
        snprintf(rtype, sizeof rtype, "%s *__restrict__", cuda_mtype(s->dtype));
        w->ptr[s->slot] = gen_declare(&w->g, HOIST, rtype, base, "(%s)gt_ptrs[%d] + %s * gt_strides[%d]",
                                      type, s->slot, b, s->slot * GT_STRIDES + GT_STRIDES - 1);
    }
    return w->ptr[s->slot];
}

static TempStorage storage(const W *w, const Symbol *s) {
    return s->kind == SYM_TEMP ? w->prog->storage[s->index] : TS_UNUSED;
}

/* Shared-memory tiles of the kernel's TS_SMEM temporaries, in temporary order, laid out
 * as cuda_smem_bytes() counts them; the fast index runs along the fast thread axis. */
static void bind_smem(W *w, int kernel) {
    const Stencil *st = w->st;
    const char *off = NULL;
    char end[320] = ""; /* the previous tile's end, declared only if another tile follows */
    for (int t = 0; t < st->ntemps; t++) {
        const Symbol *s = st->temps[t];
        if (w->prog->storage[t] != TS_SMEM || w->prog->temp_kernel[t] != kernel) continue;
        if (off == NULL) {
            gen_declare(&w->g, HOIST, "extern __shared__ __align__(16) unsigned char", "gt_smem[]", NULL);
            off = "0";
        } else {
            off = gen_declare(&w->g, HOIST, "const long long", "smem_offset", "%s", end);
        }
        int lo[3], hi[3];
        cuda_temp_halo(s, lo, hi);
        const char *sw = swp(w), *b_i = bi(w), *b_j = bj(w);
        char base[160], type[64];
        ident(base, sizeof base, "t_", s->name, "_si");
        const char *si = gen_declare(&w->g, HOIST, "const int", base, "%s ? %s + %d : 1", sw, b_j, hi[1] - lo[1]);
        ident(base, sizeof base, "t_", s->name, "_sj");
        const char *sj = gen_declare(&w->g, HOIST, "const int", base, "%s ? 1 : %s + %d", sw, b_i, hi[0] - lo[0]);
        snprintf(type, sizeof type, "%s *", cuda_mtype(s->dtype));
        ident(base, sizeof base, "t_", s->name, "");
        w->ptr[s->slot] = gen_declare(&w->g, HOIST, type, base, "(%s)(gt_smem + %s) + %d * %s + %d * %s",
                                      type, off, -lo[0], si, -lo[1], sj);
        w->stride[s->slot][0] = si;
        w->stride[s->slot][1] = sj;
        snprintf(end, sizeof end, "%s + ((long long)(%s + %d) * (%s + %d) * (long long)sizeof(%s) + 15) / 16 * 16",
                 off, b_i, hi[0] - lo[0], b_j, hi[1] - lo[1], cuda_mtype(s->dtype));
    }
}

static const char *scalar_name(void *ctx, const Symbol *s) {
    W *w = ctx;
    if (w->scal[s->slot] == NULL) {
        char base[160], init[160];
        ident(base, sizeof base, "s_", s->name, "");
        if (s->dtype == DT_BOOL) snprintf(init, sizeof init, "gt_scalars[%d] != 0", 8 * s->slot);
        else snprintf(init, sizeof init, "*(const %s *)(gt_scalars + %d)", cuda_ctype(s->dtype), 8 * s->slot);
        char type[64];
        snprintf(type, sizeof type, "const %s", cuda_ctype(s->dtype));
        w->scal[s->slot] = gen_declare(&w->g, HOIST, type, base, "%s", init);
    }
    return w->scal[s->slot];
}

/* ---- addresses ------------------------------------------------------------------------ */

static void term(StrBuf *sb, const char *var, int off, const char *extra, const char *stride) {
    if (sb->len) sb_puts(sb, " + ");
    if (off == 0 && extra == NULL) sb_printf(sb, "%s * %s", var, stride);
    else {
        sb_printf(sb, "(%s", var);
        if (off) sb_printf(sb, " %c %d", off < 0 ? '-' : '+', off < 0 ? -off : off);
        if (extra) sb_printf(sb, " + %s", extra);
        sb_printf(sb, ") * %s", stride);
    }
}

/* "ptr[index]" of symbol s at the current point shifted by off (and kexpr, data index). */
static void address(W *w, StrBuf *out, const Symbol *s, const int off[3], const char *kextra, int ndi,
                    const int *didx) {
    StrBuf idx = {0};
    TempStorage ts = storage(w, s);
    const char *p = slot_ptr(w, s);
    if (s->kind == SYM_FIELD) {
        const char *pos[3] = {w->i, w->j, w->k};
        for (int a = 0; a < 3; a++)
            if (s->axes & (1 << a)) term(&idx, pos[a], off[a], a == 2 ? kextra : NULL, slot_stride(w, s, a));
        for (int d = 0; d < ndi; d++)
            if (didx[d]) sb_printf(&idx, "%s%d * %s", idx.len ? " + " : "", didx[d], slot_stride(w, s, 3 + d));
    } else {
        term(&idx, w->ii, off[0], NULL, slot_stride(w, s, 0));
        term(&idx, w->jj, off[1], NULL, slot_stride(w, s, 1));
        if (ts == TS_SLAB) term(&idx, w->k, off[2], kextra, slot_stride(w, s, 2));
        for (int d = 0; d < ndi; d++) /* slabs only (cudagen_plan.c) */
            if (didx[d]) sb_printf(&idx, "%s%d * %s", idx.len ? " + " : "", didx[d], slot_stride(w, s, 3 + d));
    }
    sb_printf(out, "%s[%s]", p, idx.data ? idx.data : "0");
    sb_free(&idx);
}

/* ---- loads ---------------------------------------------------------------------------- */

static ExprWriter writer(W *w);

static const char *read_access(void *ctx, const Expr *e) {
    W *w = ctx;
    const Symbol *s = e->field.sym;
    if (storage(w, s) == TS_REG) return w->ptr[s->slot];
    bool cacheable = e->field.kexpr == NULL;
    for (int i = 0; cacheable && i < w->nloads; i++) {
        const Load *l = &w->loads[i];
        if (l->sym == s && !memcmp(l->off, e->field.off, sizeof l->off) && l->ndi == e->field.ndi &&
            !memcmp(l->didx, e->field.data_index, sizeof(int) * (size_t)l->ndi))
            return l->name;
    }
    StrBuf kx = {0}, addr = {0};
    if (e->field.kexpr && e->field.kchecked) {
        /* the K term prints as (k + off + kx): kx is the checked level less k + off */
        ExprWriter x = writer(w);
        StrBuf lv = {0};
        if (e->field.kabs) sb_puts(&lv, "(long long)");
        else sb_printf(&lv, "%s + %d + (long long)", w->k, e->field.off[2]);
        cuda_expr(&x, &lv, e->field.kexpr);
        int at = 8 * w->st->nscalars + 8 + 16 * s->slot; /* the levels its array holds */
        unsigned long long note = (unsigned long long)(e->line > 0 ? e->line : 1) |
                                  (unsigned long long)(s->index + 1) << 32;
        sb_printf(&kx,
                  "(gt_klevel(%s, ((const long long *)(gt_scalars + %d))[0], "
                  "((const long long *)(gt_scalars + %d))[1], %s, gt_scalars + %d, %lluULL, &%s)",
                  lv.data ? lv.data : "0", at, at, w->k, 8 * w->st->nscalars, note, stop_flag(w));
        if (!e->field.kabs) sb_printf(&kx, " - %s - %d", w->k, e->field.off[2]);
        sb_puts(&kx, ")");
        sb_free(&lv);
    } else if (e->field.kexpr) {
        ExprWriter x = writer(w);
        sb_puts(&kx, "(long long)");
        cuda_expr(&x, &kx, e->field.kexpr);
    }
    if (e->field.kabs) { /* f.at(K=...): the K term is the index itself, not k + offset */
        const char *k = w->k;
        w->k = "0LL";
        address(w, &addr, s, e->field.off, kx.data, e->field.ndi, e->field.data_index);
        w->k = k;
    } else {
        address(w, &addr, s, e->field.off, kx.data, e->field.ndi, e->field.data_index);
    }
    char base[16], type[64];
    snprintf(base, sizeof base, "x%d", w->nload_names++);
    snprintf(type, sizeof type, "const %s", cuda_ctype(e->type));
    const char *name = gen_name(&w->g, base);
    if (s->dtype == DT_BOOL) gen_line(&w->g, GEN_FETCH, "%s %s = %s != 0;", type, name, addr.data ? addr.data : "");
    else gen_line(&w->g, GEN_FETCH, "%s %s = %s;", type, name, addr.data ? addr.data : "");
    sb_free(&kx);
    sb_free(&addr);
    if (cacheable && w->nloads < (int)(sizeof w->loads / sizeof w->loads[0])) {
        Load *l = &w->loads[w->nloads++];
        l->sym = s;
        memcpy(l->off, e->field.off, sizeof l->off);
        l->ndi = e->field.ndi;
        memcpy(l->didx, e->field.data_index, sizeof l->didx);
        l->name = name;
    }
    return name;
}

static const char *level_name(void *ctx) { return ((W *)ctx)->k; }

/* A checked interval bound's level must be one of the domain's, 0 <= level <= nk; on failure
 * the note marks it GT_NOTE_LEVEL_BOUND, the column and the level go to the three words
 * after the fields' levels (cudagen.h) and the level is 0 (the call is undone anyway). */
static const char *bound_check(void *ctx, const Expr *call) {
    W *w = ctx;
    unsigned long long note =
        (unsigned long long)(call->line > 0 ? call->line : 1) | GT_NOTE_LEVEL_BOUND;
    int flag = 8 * w->st->nscalars, info = 8 * (w->st->nscalars + 1 + 2 * w->st->nfields);
    snprintf(w->bound_tail, sizeof w->bound_tail,
             ", %s, gt_scalars + %d, gt_scalars + %d, %lluULL, &%s, %s, %s", nk(w), flag, info,
             note, stop_flag(w), w->i, w->j);
    return w->bound_tail;
}

static ExprWriter writer(W *w) {
    return (ExprWriter){w, read_access, scalar_name, level_name, bound_check};
}

/* Writes the C text of e into a fresh buffer (loads are issued as FETCH lines). */
static char *expr_text(W *w, const Expr *e) {
    StrBuf sb = {0};
    ExprWriter x = writer(w);
    cuda_expr(&x, &sb, e);
    if (sb.oom || sb.data == NULL) {
        sb_free(&sb);
        w->g.failed = true;
        return NULL;
    }
    return sb.data;
}

/* ---- statements at one point ------------------------------------------------------- */

static void point_stmt(W *w, const Stmt *s);

static void point_assign(W *w, const Stmt *s) {
    const Symbol *t = s->assign.target;
    char *v = expr_text(w, s->assign.value);
    if (v == NULL) return;
    if (storage(w, t) == TS_REG) {
        gen_line(&w->g, GEN_STORE, "%s = %s;", w->ptr[t->slot], v);
    } else {
        StrBuf addr = {0}, kx = {0};
        int off[3] = {0, 0, s->assign.koff};
        if (s->assign.kexpr && s->assign.kchecked) {
            /* computed from values the stencil writes: the level is checked here, as a
             * checked read's (the K term is the checked level less k) */
            ExprWriter x = writer(w);
            StrBuf lv = {0};
            sb_printf(&lv, "%s + (long long)", w->k);
            cuda_expr(&x, &lv, s->assign.kexpr);
            sb_printf(&kx, "(gt_klevel(%s, 0LL, %s, %s, gt_scalars + %d, %dULL, &%s) - %s)",
                      lv.data ? lv.data : "0", nk(w), w->k, 8 * w->st->nscalars,
                      s->line > 0 ? s->line : 1, stop_flag(w), w->k);
            sb_free(&lv);
        } else if (s->assign.kexpr) { /* a variable K offset, checked by the call */
            ExprWriter x = writer(w);
            sb_puts(&kx, "(long long)");
            cuda_expr(&x, &kx, s->assign.kexpr);
        }
        address(w, &addr, t, off, kx.data, s->assign.ndi, s->assign.data_index);
        sb_free(&kx);
        if (t->dtype == DT_BOOL) gen_line(&w->g, GEN_STORE, "%s = (unsigned char)%s;", addr.data, v);
        else gen_line(&w->g, GEN_STORE, "%s = %s;", addr.data, v);
        sb_free(&addr);
    }
    free(v);
}

/* A while loop. In a stencil with checked K levels it also ends when a check failed: at
 * once on the thread whose check failed (its stop flag), within 1024 iterations on the
 * others (the flag after the scalars), so that no loop goes on from a refused level's value
 * (a search past the top would never end) and the call returns to undo itself. Threads
 * never leave the kernel early: its stages may meet at __syncthreads(). */
static void point_while(W *w, const Stmt *s) {
    const char *stop = w->st->has_checked_k ? stop_flag(w) : NULL;
    gen_open(&w->g, "for (;;)");
    gen_section_begin(&w->g);
    w->nloads = 0;
    char *g = s->guard ? expr_text(w, s->guard) : NULL;
    char *c = expr_text(w, s->while_.cond);
    if (c)
        gen_line(&w->g, GEN_ARITH, "if (%s%s!(%s%s%s)) break;", stop ? stop : "",
                 stop ? " || " : "", g ? g : "", g ? " && " : "", c);
    free(g);
    free(c);
    gen_section_end(&w->g);
    for (int i = 0; i < s->while_.body.n; i++) point_stmt(w, s->while_.body.items[i]);
    if (stop)
        gen_line(&w->g, GEN_ARITH,
                 "if ((++%s & 1023u) == 0u && gt_checked_failed(gt_scalars + %d)) %s = true;",
                 spin_count(w), 8 * w->st->nscalars, stop);
    gen_close(&w->g);
}

static void point_stmt(W *w, const Stmt *s) {
    w->nloads = 0;
    if (s->kind == S_WHILE) {
        point_while(w, s);
        return;
    }
    gen_section_begin(&w->g);
    char *g = s->guard ? expr_text(w, s->guard) : NULL;
    if (g) gen_open(&w->g, "if (%s)", g);
    if (g) gen_section_begin(&w->g);
    point_assign(w, s);
    if (g) gen_close(&w->g);
    free(g);
    gen_section_end(&w->g);
}

/* ---- stages --------------------------------------------------------------------------- */

static bool writes_field(const PStmt *p, int nfields) {
    for (int a = 0; a < p->nacc; a++)
        if (p->acc[a].write && p->acc[a].slot < nfields) return true;
    return false;
}

static void cond_and(StrBuf *c, const char *fmt, const char *x, const char *y) {
    if (c->len) sb_puts(c, " && ");
    sb_printf(c, fmt, x, y);
}

static void bound_text(W *w, char *buf, size_t n, AxisBound b, const char *size) {
    if (b.sym) /* a run-time bound: the scalar (checked by the call) plus the offset */
        snprintf(buf, n, "((long long)%s + %d)", scalar_name(w, b.sym), b.offset);
    else if (b.level == 0) snprintf(buf, n, "%d", b.offset);
    else if (b.offset == 0) snprintf(buf, n, "%s", size);
    else snprintf(buf, n, "%s %c %d", size, b.offset < 0 ? '-' : '+', b.offset < 0 ? -b.offset : b.offset);
}

/* The extent a stage loop covers for statement p: argument fields' writers run on the
 * points the block owns and, at the domain's edges, on their analysed extent; temporaries'
 * writers on their tile extent (analysis/tiles.c). */
static const int *loop_extent(W *w, const PStmt *p) {
    return writes_field(p, w->st->nfields) ? p->s->horizontal_extent : p->s->tile_extent;
}

/* Where statement p runs inside the stage loop (which covers the union of extents
 * [lo_i, nit + hi_i) x [lo_j, njt + hi_j)); the box, if any, restricts it further. */
static void stmt_range(W *w, const PStmt *p, const int ulo[2], const int uhi[2], const Box *box, StrBuf *c) {
    const int *h = p->s->horizontal_extent, *t = loop_extent(w, p);
    bool own = writes_field(p, w->st->nfields);
    const char *loop[2] = {w->ii, w->jj}, *pos[2] = {w->i, w->j};
    const char *tile[2] = {nit(w), njt(w)}, *size[2] = {ni(w), nj(w)};
    char buf[160], buf2[160];
    for (int a = 0; a < 2; a++) {
        int lo = h[2 * a], hi = h[2 * a + 1], tlo = t[2 * a], thi = t[2 * a + 1];
        if (own && lo != 0) {
            snprintf(buf, sizeof buf, "(%s ? %d : 0)", a ? first_j(w) : first_i(w), lo);
            cond_and(c, "%s >= %s", loop[a], buf);
        } else if (tlo != ulo[a]) {
            snprintf(buf, sizeof buf, "%d", tlo);
            cond_and(c, "%s >= %s", loop[a], buf);
        }
        /* beyond its tile a temporary's writer runs only inside its analysed extent: the
         * call checked the arrays for that, and the points outside it are never read */
        if (!own && tlo < lo) {
            snprintf(buf, sizeof buf, "%d", lo);
            cond_and(c, "%s >= %s", pos[a], buf);
        }
        if (own && hi != 0) {
            snprintf(buf, sizeof buf, "(%s ? %s + %d : %s)", a ? last_j(w) : last_i(w), tile[a], hi, tile[a]);
            cond_and(c, "%s < %s", loop[a], buf);
        } else if (thi != uhi[a]) {
            snprintf(buf, sizeof buf, "%s + %d", tile[a], thi);
            cond_and(c, "%s < %s", loop[a], buf);
        }
        if (!own && thi > hi) {
            if (hi == 0) snprintf(buf, sizeof buf, "%s", size[a]);
            else snprintf(buf, sizeof buf, "%s %c %d", size[a], hi < 0 ? '-' : '+', hi < 0 ? -hi : hi);
            cond_and(c, "%s < %s", pos[a], buf);
        }
    }
    if (box == NULL) return;
    for (int a = 0; a < 2; a++) {
        for (int e = 0; e < 2; e++) {
            if (!box->has[2 * a + e]) continue;
            AxisBound ab = box->b[2 * a + e]; /* never a run-time bound */
            const char *at = anchor(w, 2 * a + ab.level);
            if (ab.offset == 0) snprintf(buf2, sizeof buf2, "%s", at);
            else snprintf(buf2, sizeof buf2, "%s %c %d", at, ab.offset < 0 ? '-' : '+',
                          ab.offset < 0 ? -ab.offset : ab.offset);
            cond_and(c, e ? "%s < %s" : "%s >= %s", pos[a], buf2);
        }
    }
}

static void stage_stmt(W *w, const PStmt *p, const int ulo[2], const int uhi[2], const Box *box) {
    StrBuf c = {0};
    stmt_range(w, p, ulo, uhi, box, &c);
    if (c.len) gen_open(&w->g, "if (%s)", c.data);
    point_stmt(w, p->s);
    if (c.len) gen_close(&w->g);
    if (c.oom) w->g.failed = true;
    sb_free(&c);
}

/* for (ii = <first point of this thread at or after lo>; ii < tile + hi; ii += bi) */
static void open_axis(W *w, const char *var, const char *t, const char *b, const char *tile, int lo, int hi) {
    if (lo == 0 && hi == 0) {
        gen_open(&w->g, "if (%s < %s)", t, tile);
        gen_line(&w->g, GEN_ARITH, "const int %s = %s;", var, t);
        return;
    }
    char start[96], end[96];
    if (lo == 0) snprintf(start, sizeof start, "%s", t);
    else snprintf(start, sizeof start, "%d + (%s + %d) %% %s", lo, t, -lo, b);
    if (hi == 0) snprintf(end, sizeof end, "%s", tile);
    else snprintf(end, sizeof end, "%s + %d", tile, hi);
    gen_open(&w->g, "for (int %s = %s; %s < %s; %s += %s)", var, start, var, end, var, b);
}

static void write_stage(W *w, const PStmt *first, int n) {
    int ulo[2] = {0, 0}, uhi[2] = {0, 0};
    for (int q = 0; q < n; q++) {
        const int *h = loop_extent(w, &first[q]);
        for (int a = 0; a < 2; a++) {
            if (h[2 * a] < ulo[a]) ulo[a] = h[2 * a];
            if (h[2 * a + 1] > uhi[a]) uhi[a] = h[2 * a + 1];
        }
    }
    open_axis(w, w->ii, ti(w), bi(w), nit(w), ulo[0], uhi[0]);
    open_axis(w, w->jj, tj(w), bj(w), njt(w), ulo[1], uhi[1]);
    gen_line(&w->g, GEN_ARITH, "const long long %s = %s + %s, %s = %s + %s;", w->i, i0(w), w->ii, w->j, j0(w), w->jj);
    for (int q = 0; q < n; q++) {
        const Stmt *s = first[q].s;
        if (s->nboxes == 0) stage_stmt(w, &first[q], ulo, uhi, NULL);
        for (int b = 0; b < s->nboxes; b++) stage_stmt(w, &first[q], ulo, uhi, &s->boxes[b]);
    }
    gen_close(&w->g);
    gen_close(&w->g);
}

/* ---- kernels -------------------------------------------------------------------------- */

static void write_interval(W *w, const KPlan *P, int first, int n, bool sync) {
    const PStmt *p0 = &P->stmts[first];
    const Computation *c = &w->st->comps[p0->comp];
    const Interval *in = &c->intervals[p0->interval];
    char ks[96], ke_[96];
    bound_text(w, ks, sizeof ks, in->start, nk(w));
    bound_text(w, ke_, sizeof ke_, in->end, nk(w));
    const char *b = kb(w), *e = ke(w);
    const char *lo = gen_declare(&w->g, HOIST, "const long long", "klev_lo", "%s > %s ? %s : %s", ks, b, ks, b);
    const char *hi = gen_declare(&w->g, HOIST, "const long long", "klev_hi", "%s < %s ? %s : %s", ke_, e, ke_, e);
    gen_line(&w->g, GEN_ARITH, "/* %s interval, line %d */", policy_name(c->policy), in->line);
    if (c->policy == POLICY_BACKWARD)
        gen_open(&w->g, "for (long long %s = %s - 1; %s >= %s; --%s)", w->k, hi, w->k, lo, w->k);
    else
        gen_open(&w->g, "for (long long %s = %s; %s < %s; ++%s)", w->k, lo, w->k, hi, w->k);
    for (int q = first; q < first + n;) {
        int r = q;
        while (r < first + n && P->stmts[r].stage == P->stmts[q].stage) r++;
        write_stage(w, &P->stmts[q], r - q);
        if (sync) gen_line(&w->g, GEN_ARITH, "__syncthreads();");
        q = r;
    }
    /* a failed check of a K level ends the thread's levels where no barrier waits for it */
    if (w->v_stop && !sync) gen_line(&w->g, GEN_ARITH, "if (%s) break;", w->v_stop);
    gen_close(&w->g);
}

static void write_kernel(W *w, const KPlan *P, int kernel, StrBuf *out) {
    const Stencil *st = w->st;
    const CudaKernel *K = &w->prog->kernels[kernel];
    int nslots = stencil_nslots(st);
    memset(w->ptr, 0, sizeof *w->ptr * (size_t)(nslots + 1));
    memset(w->stride, 0, sizeof *w->stride * (size_t)(nslots + 1));
    memset(w->scal, 0, sizeof *w->scal * (size_t)(st->nscalars + 1));
    w->v_ni = w->v_nj = w->v_nk = w->v_swap = w->v_ti = w->v_tj = w->v_bi = w->v_bj = NULL;
    w->v_stop = w->v_spin = NULL;
    w->v_i0 = w->v_j0 = w->v_nit = w->v_njt = w->v_first_i = w->v_last_i = NULL;
    for (int k = 0; k < 4; k++) w->v_anchor[k] = NULL;
    w->v_first_j = w->v_last_j = w->v_blin = w->v_kb = w->v_ke = w->v_kchunk = NULL;
    w->nload_names = 0;
    w->kchunks = K->kchunks;
    gen_init(&w->g);
    static const char *const params[] = {"gt_ptrs", "gt_strides", "gt_domain", "gt_scalars", "gt_klo", "gt_khi", "gt_smem"};
    for (size_t i = 0; i < sizeof params / sizeof *params; i++) gen_name(&w->g, params[i]);
    w->ii = gen_name(&w->g, "ii");
    w->jj = gen_name(&w->g, "jj");
    w->i = gen_name(&w->g, "i");
    w->j = gen_name(&w->g, "j");
    w->k = gen_name(&w->g, "k");
    const char *sname = K->name;
    gen_open(&w->g,
             "GT_KERNEL void %s(char *const *gt_ptrs, const long long *gt_strides, const long long *gt_domain,\n"
             "    const char *gt_scalars, long long gt_klo, long long gt_khi)",
             sname);
    bind_smem(w, kernel);
    for (int t = 0; t < st->ntemps; t++) {
        const Symbol *s = st->temps[t];
        if (w->prog->storage[t] != TS_REG || w->prog->temp_kernel[t] != kernel) continue;
        char base[160];
        ident(base, sizeof base, "t_", s->name, "");
        w->ptr[s->slot] = gen_declare(&w->g, HOIST, cuda_ctype(s->dtype), base, "0");
    }
    for (int q = 0; q < P->nstmts;) {
        if (P->stmts[q].kernel != kernel) {
            q++;
            continue;
        }
        int r = q;
        while (r < P->nstmts && P->stmts[r].kernel == kernel && P->stmts[r].interval == P->stmts[q].interval) r++;
        write_interval(w, P, q, r - q, P->needs_sync[kernel]);
        q = r;
    }
    char *text = gen_take(&w->g);
    if (text == NULL) {
        w->g.failed = true;
        out->oom = true;
    } else {
        sb_puts(out, text);
        sb_puts(out, "\n");
    }
    free(text);
    gen_free(&w->g);
}

static void kernel_names(const Stencil *st, CudaProgram *p) {
    char base[48];
    int n = 0;
    for (const char *c = st->name ? st->name : "stencil"; *c && n < 40; c++)
        base[n++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')) ? *c : '_';
    base[n] = '\0';
    for (int k = 0; k < p->nkernels; k++)
        snprintf(p->kernels[k].name, sizeof p->kernels[k].name, "gt_%s_c%d_k%d", base, p->kernels[k].comp, k);
}

bool cuda_generate(const Stencil *st, int block_x, int block_y, CudaProgram *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    KPlan P;
    int nslots = stencil_nslots(st);
    W w = {.st = st, .prog = out};
    w.ptr = calloc((size_t)nslots + 1, sizeof *w.ptr);
    w.stride = calloc((size_t)nslots + 1, sizeof *w.stride);
    w.scal = calloc((size_t)st->nscalars + 1, sizeof *w.scal);
    bool ok = w.ptr && w.stride && w.scal && kplan_build(st, &P, out, block_x, block_y);
    StrBuf src = {0};
    if (ok) {
        kernel_names(st, out);
        cuda_write_preamble(&src, st->name ? st->name : "");
        for (int k = 0; k < out->nkernels && ok; k++) {
            write_kernel(&w, &P, k, &src);
            ok = !src.oom;
        }
        kplan_free(&P);
    }
    free(w.ptr);
    free(w.stride);
    free(w.scal);
    if (!ok || src.oom) {
        sb_free(&src);
        cuda_program_free(out);
        snprintf(err, errlen, "out of memory while writing the CUDA source");
        return false;
    }
    out->source = src.data;
    return true;
}

void cuda_program_free(CudaProgram *p) {
    free(p->source);
    free(p->kernels);
    free(p->storage);
    free(p->temp_kernel);
    memset(p, 0, sizeof *p);
}
