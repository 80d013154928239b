/*
 * The canonical text of an analysed stencil (see serialise.h). The format is a compact,
 * prefix-notation token stream; it is hashed, never parsed, so it only has to be
 * unambiguous: every node starts with its own tag and has a fixed or counted arity.
 */
#include "ir/serialise.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ser {
    const Stencil *st;
    StrBuf *out;
    int *canon; /* per temporary index: first-use number, -1 before its first use */
    int nused;
} Ser;

/* Parameters are named by their position, temporaries by their first use. */
static void sym_ref(Ser *S, const Symbol *s) {
    if (s->kind != SYM_TEMP) {
        sb_printf(S->out, "p%d", s->index);
        return;
    }
    if (S->canon[s->index] < 0) S->canon[s->index] = S->nused++;
    sb_printf(S->out, "t%d", S->canon[s->index]);
}

static void ints(Ser *S, int n, const int *v) {
    sb_printf(S->out, "[%d", n);
    for (int i = 0; i < n; i++)
        sb_printf(S->out, " %d", v[i]);
    sb_puts(S->out, "]");
}

static void extent(Ser *S, const Extent *e) {
    sb_printf(S->out, "<%d %d %d %d %d %d>", e->lo[0], e->hi[0], e->lo[1], e->hi[1], e->lo[2],
              e->hi[2]);
}

static void expr(Ser *S, const Expr *e);

static void opt_expr(Ser *S, const Expr *e) {
    if (e == NULL)
        sb_puts(S->out, "_");
    else
        expr(S, e);
}

/* Floats by their bit pattern: exact, and -0.0 and NaN payloads stay distinct. */
static void constant(Ser *S, const Expr *e) {
    if (dtype_is_float(e->type)) {
        uint64_t bits;
        memcpy(&bits, &e->cnst.f, sizeof bits);
        sb_printf(S->out, "%016" PRIx64, bits);
    } else {
        sb_printf(S->out, "%" PRId64, e->cnst.i);
    }
}

static void expr(Ser *S, const Expr *e) {
    StrBuf *o = S->out;
    sb_printf(o, "(%d:%s%s ", (int)e->kind, dtype_name(e->type), e->weak ? "~" : "");
    switch (e->kind) {
    case E_CONST:
        constant(S, e);
        break;
    case E_FIELD:
        sym_ref(S, e->field.sym);
        /* "@": the K index is absolute (f.at(K=...)), not an offset from the current level */
        sb_printf(o, " %d %d %d%s ", e->field.off[0], e->field.off[1], e->field.off[2],
                  e->field.kabs ? (e->field.kchecked ? "@!" : "@") : (e->field.kchecked ? "!" : ""));
        /* a checked level's failure names its line, compiled into the kernel: two definitions
         * that differ only there must not share a module (the message would name the other) */
        if (e->field.kchecked) sb_printf(o, "L%d ", e->line);
        ints(S, e->field.ndi, e->field.data_index);
        sb_puts(o, " ");
        opt_expr(S, e->field.kexpr);
        break;
    case E_SCALAR:
        sym_ref(S, e->scalar);
        break;
    case E_UNARY:
        sb_printf(o, "%d ", (int)e->op.op);
        expr(S, e->op.a);
        break;
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        sb_printf(o, "%d ", (int)e->op.op);
        expr(S, e->op.a);
        expr(S, e->op.b);
        break;
    case E_TERNARY:
        expr(S, e->ternary.cond);
        expr(S, e->ternary.a);
        expr(S, e->ternary.b);
        break;
    case E_CALL:
        sb_printf(o, "%s %d ", builtin_name(e->call.fn), e->call.nargs);
        /* a checked bound's failure names its line, as a checked level's (above) */
        if (e->call.checked) sb_printf(o, "!L%d ", e->line);
        for (int i = 0; i < e->call.nargs; i++)
            expr(S, e->call.args[i]);
        break;
    case E_CAST:
        expr(S, e->cast);
        break;
    case E_KINDEX: /* the kind and the type say everything */
        break;
    }
    sb_puts(o, ")");
}

static void bound(Ser *S, bool has, AxisBound b) {
    if (has)
        sb_printf(S->out, "%d%+d", b.level, b.offset);
    else
        sb_puts(S->out, "*");
    /* a run-time bound: the scalar parameter by position (names do not change the code) */
    if (has && b.sym) sb_printf(S->out, "+p%d", b.sym->index);
}

static void boxes(Ser *S, int n, const Box *bx) {
    sb_printf(S->out, "{%d", n);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            sb_puts(S->out, " ");
            bound(S, bx[i].has[k], bx[i].b[k]);
        }
    sb_puts(S->out, "}");
}

static void stmts(Ser *S, const StmtList *l);

static void stmt(Ser *S, const Stmt *s) {
    StrBuf *o = S->out;
    const int *h = s->horizontal_extent, *t = s->tile_extent;
    sb_printf(o, "\n{%d <%d %d %d %d> <%d %d %d %d> ", (int)s->kind, h[0], h[1], h[2], h[3], t[0], t[1], t[2],
              t[3]);
    opt_expr(S, s->guard);
    boxes(S, s->nboxes, s->boxes);
    switch (s->kind) {
    case S_ASSIGN:
        sym_ref(S, s->assign.target);
        sb_printf(o, " %d%s ", s->assign.koff, s->assign.kchecked ? "!" : "");
        if (s->assign.kchecked) sb_printf(o, "L%d ", s->line); /* named by its failure, as above */
        opt_expr(S, s->assign.kexpr);
        sb_puts(o, " ");
        ints(S, s->assign.ndi, s->assign.data_index);
        expr(S, s->assign.value);
        break;
    case S_IF:
        expr(S, s->if_.cond);
        stmts(S, &s->if_.then);
        stmts(S, &s->if_.els);
        break;
    case S_WHILE:
        expr(S, s->while_.cond);
        stmts(S, &s->while_.body);
        break;
    case S_REGION:
        stmts(S, &s->region.body);
        break;
    }
    sb_puts(o, "}");
}

static void stmts(Ser *S, const StmtList *l) {
    sb_printf(S->out, "[%d", l->n);
    for (int i = 0; i < l->n; i++)
        stmt(S, l->items[i]);
    sb_puts(S->out, "]");
}

static void symbol_facts(Ser *S, const Symbol *s) {
    sb_printf(S->out, " %s axes=%d slot=%d mask=%d r=%d w=%d ", dtype_name(s->dtype), s->axes,
              s->slot, s->is_mask, s->read, s->written);
    ints(S, s->ndata, s->data_dims);
    sb_printf(S->out, " acc=%d col=%d tile=<%d %d %d %d>", s->has_access, s->column_local, s->tile_hext[0],
              s->tile_hext[1], s->tile_hext[2], s->tile_hext[3]);
    extent(S, &s->access);
}

static void params(Ser *S) {
    const Stencil *st = S->st;
    sb_printf(S->out, "params %d fields=%d scalars=%d", st->nparams, st->nfields, st->nscalars);
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *p = st->params[i];
        /* Names belong to the signature: a call binds arguments by name. */
        sb_printf(S->out, "\np%d %c %s", i, p->kind == SYM_FIELD ? 'F' : 'S', p->name);
        symbol_facts(S, p);
    }
}

static void body(Ser *S) {
    const Stencil *st = S->st;
    sb_printf(S->out, "\ncomputations %d", st->ncomps);
    for (int c = 0; c < st->ncomps; c++) {
        const Computation *comp = &st->comps[c];
        sb_printf(S->out, "\n%s %d columnwise=%d fuse=%d", policy_name(comp->policy),
                  comp->nintervals, comp->columnwise, comp->column_fuse_next);
        for (int i = 0; i < comp->nintervals; i++) {
            const Interval *in = &comp->intervals[i];
            sb_puts(S->out, "\ninterval ");
            bound(S, true, in->start);
            sb_puts(S->out, " ");
            bound(S, true, in->end);
            stmts(S, &in->body);
        }
    }
}

/* After the body, so that every used temporary has its first-use name; a temporary the
 * analysed body never mentions is named after them, in slot order. */
static void temporaries(Ser *S) {
    const Stencil *st = S->st;
    sb_printf(S->out, "\ntemporaries %d", st->ntemps);
    for (int i = 0; i < st->ntemps; i++) {
        sb_puts(S->out, "\n");
        sym_ref(S, st->temps[i]);
        symbol_facts(S, st->temps[i]);
    }
}

static void stencil_facts(Ser *S) {
    const Stencil *st = S->st;
    sb_printf(S->out,
              "\nfacts min_k=%d extended_writes=%d literal_float_bits=%d literal_int_bits=%d "
              "lanes=%d spread=%d kacc=%d",
              st->min_k_levels, st->extended_writes, st->literal_float_bits, st->literal_int_bits,
              st->column_lanes, st->column_spread, st->nkacc);
    for (int i = 0; i < st->nkacc; i++) {
        const KAccess *k = &st->kacc[i];
        sb_printf(S->out, " (%d ", k->slot);
        bound(S, true, k->start);
        sb_puts(S->out, " ");
        bound(S, true, k->end);
        sb_printf(S->out, " %d %d)", k->dlo, k->dhi);
    }
}

bool ir_serialise(const Stencil *st, StrBuf *out) {
    Ser S = {.st = st, .out = out};
    S.canon = malloc(sizeof(int) * (size_t)(st->ntemps + 1));
    if (S.canon == NULL) return false;
    for (int i = 0; i < st->ntemps; i++)
        S.canon[i] = -1;
    sb_puts(out, "gtscript-ir 1\n");
    params(&S);
    body(&S);
    temporaries(&S);
    stencil_facts(&S);
    free(S.canon);
    return !out->oom;
}
