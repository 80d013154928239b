/* The IR printer: one line per statement, guards and extents shown as the analyses left them. */
#include "ir/print.h"

#include <stdio.h>
#include <string.h>

static void print_bound(AxisBound b, StrBuf *o) {
    if (b.sym) {
        sb_puts(o, b.sym->name);
        if (b.offset) sb_printf(o, " %c %d", b.offset < 0 ? '-' : '+', b.offset < 0 ? -b.offset : b.offset);
    } else if (b.level == 0) sb_printf(o, "%d", b.offset);
    else if (b.offset == 0) sb_puts(o, "None");
    else sb_printf(o, "%d", b.offset);
}

/* A float literal that reads back exactly and reads as a float: 2.0, not 2 (%.17g, with
 * ".0" where it has no point, exponent, nan or inf). */
static void print_float(double v, StrBuf *o) {
    char text[40];
    snprintf(text, sizeof text, "%.17g", v);
    sb_puts(o, text);
    if (strpbrk(text, ".eni") == NULL) sb_puts(o, ".0");
}

void ir_print_expr(const Expr *e, StrBuf *o) {
    switch (e->kind) {
    case E_CONST:
        if (e->type == DT_BOOL) sb_puts(o, e->cnst.i ? "True" : "False");
        else if (dtype_is_int(e->type)) sb_printf(o, "%lld", (long long)e->cnst.i);
        else print_float(e->cnst.f, o);
        if (e->type != DT_FLOAT64 && e->type != DT_INT64 && e->type != DT_BOOL)
            sb_printf(o, ":%s", dtype_name(e->type));
        return;
    case E_FIELD:
        if (e->field.kabs) {
            sb_printf(o, "%s.at(K=", e->field.sym->name);
            ir_print_expr(e->field.kexpr, o);
            sb_puts(o, ")");
            for (int i = 0; i < e->field.ndi; i++) sb_printf(o, "[%d]", e->field.data_index[i]);
            return;
        }
        sb_printf(o, "%s[%d, %d, ", e->field.sym->name, e->field.off[0], e->field.off[1]);
        if (e->field.kexpr) {
            ir_print_expr(e->field.kexpr, o);
            if (e->field.off[2]) sb_printf(o, " + %d", e->field.off[2]);
        } else {
            sb_printf(o, "%d", e->field.off[2]);
        }
        sb_puts(o, "]");
        for (int i = 0; i < e->field.ndi; i++) sb_printf(o, "[%d]", e->field.data_index[i]);
        return;
    case E_SCALAR: sb_puts(o, e->scalar->name); return;
    case E_UNARY:
        sb_puts(o, e->op.op == OP_NOT ? "not " : op_name(e->op.op));
        ir_print_expr(e->op.a, o);
        return;
    case E_BINARY:
    case E_CMP:
    case E_LOGIC:
        sb_puts(o, "(");
        ir_print_expr(e->op.a, o);
        sb_printf(o, " %s ", op_name(e->op.op));
        ir_print_expr(e->op.b, o);
        sb_puts(o, ")");
        return;
    case E_TERNARY:
        sb_puts(o, "(");
        ir_print_expr(e->ternary.a, o);
        sb_puts(o, " if ");
        ir_print_expr(e->ternary.cond, o);
        sb_puts(o, " else ");
        ir_print_expr(e->ternary.b, o);
        sb_puts(o, ")");
        return;
    case E_CALL:
        sb_printf(o, "%s(", builtin_name(e->call.fn));
        for (int i = 0; i < e->call.nargs; i++) {
            if (i) sb_puts(o, ", ");
            ir_print_expr(e->call.args[i], o);
        }
        sb_puts(o, ")");
        return;
    case E_CAST:
        sb_printf(o, "%s(", dtype_name(e->type));
        ir_print_expr(e->cast, o);
        sb_puts(o, ")");
        return;
    case E_KINDEX: sb_puts(o, "K"); return;
    }
}

static void print_stmts(const StmtList *l, int depth, StrBuf *o);

static void print_stmt(const Stmt *s, int depth, StrBuf *o) {
    const int *h = s->horizontal_extent;
    sb_indent(o, depth);
    if (s->kind == S_ASSIGN) {
        sb_printf(o, "%s", s->assign.target->name);
        if (s->assign.kexpr) {
            sb_puts(o, "[0, 0, ");
            ir_print_expr(s->assign.kexpr, o);
            sb_puts(o, "]");
        } else if (s->assign.koff) sb_printf(o, "[0, 0, %d]", s->assign.koff);
        for (int i = 0; i < s->assign.ndi; i++) sb_printf(o, "[%d]", s->assign.data_index[i]);
        sb_puts(o, " = ");
        ir_print_expr(s->assign.value, o);
    } else if (s->kind == S_WHILE) {
        sb_puts(o, "while ");
        ir_print_expr(s->while_.cond, o);
    } else if (s->kind == S_IF) {
        sb_puts(o, "if ");
        ir_print_expr(s->if_.cond, o);
    } else {
        sb_puts(o, "region");
    }
    if (s->guard) {
        sb_puts(o, "  where ");
        ir_print_expr(s->guard, o);
    }
    for (int b = 0; b < s->nboxes; b++) sb_printf(o, "%s", b == 0 ? "  in region" : " |");
    sb_printf(o, "    # line %d, extent i<%d,%d> j<%d,%d>", s->line, h[0], h[1], h[2], h[3]);
    const int *t = s->tile_extent; /* wider only where regions read temporaries (tiles.c) */
    if (memcmp(t, h, sizeof s->tile_extent))
        sb_printf(o, ", per tile i<%d,%d> j<%d,%d>", t[0], t[1], t[2], t[3]);
    sb_puts(o, "\n");
    if (s->kind == S_WHILE) print_stmts(&s->while_.body, depth + 1, o);
    if (s->kind == S_IF) {
        print_stmts(&s->if_.then, depth + 1, o);
        if (s->if_.els.n) {
            sb_indent(o, depth);
            sb_puts(o, "else\n");
            print_stmts(&s->if_.els, depth + 1, o);
        }
    }
    if (s->kind == S_REGION) print_stmts(&s->region.body, depth + 1, o);
}

static void print_stmts(const StmtList *l, int depth, StrBuf *o) {
    for (int i = 0; i < l->n; i++) print_stmt(l->items[i], depth, o);
}

void ir_print(const Stencil *st, StrBuf *o) {
    sb_printf(o, "stencil %s(", st->name);
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        sb_printf(o, "%s%s: %s%s", i ? ", " : "", s->name, s->kind == SYM_FIELD ? "Field " : "",
                  dtype_name(s->dtype));
    }
    sb_puts(o, ")\n");
    if (st->region_min_domain[0] > 1 || st->region_min_domain[1] > 1)
        sb_printf(o, "    # per-region extents: calls need a domain of at least %d x %d in I, J\n",
                  st->region_min_domain[0], st->region_min_domain[1]);
    if (st->region_exact_domain[0] > 1 || st->region_exact_domain[1] > 1)
        sb_printf(o, "    # per-region extents hold from a domain of %d x %d in I, J (below: checked "
                  "without regions)\n",
                  st->region_exact_domain[0], st->region_exact_domain[1]);
    for (int i = 0; i < st->ntemps; i++) {
        const Symbol *s = st->temps[i];
        char dims[64] = "";
        for (int d = 0, n = 0; d < s->ndata && n < (int)sizeof dims; d++)
            n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%d%s", d ? ", " : " (data dims ",
                          s->data_dims[d], d + 1 == s->ndata ? ")" : "");
        sb_printf(o, "    temporary %s: %s%s%s  # halo i<%d,%d> j<%d,%d> k<%d,%d>%s\n", s->name,
                  dtype_name(s->dtype), s->axes & AX_K ? "" : " (IJ)", dims,
                  s->tile_hext[0], s->tile_hext[1], s->tile_hext[2],
                  s->tile_hext[3], s->access.lo[2], s->access.hi[2],
                  s->column_local ? ", column-local" : "");
    }
    for (int c = 0; c < st->ncomps; c++) {
        const Computation *comp = &st->comps[c];
        sb_printf(o, "    computation(%s)", policy_name(comp->levels_free ? comp->as_written : comp->policy));
        if (comp->levels_free)
            sb_puts(o, "  # runs as PARALLEL: no value crosses a level");
        else if (comp->columnwise && st->column_lanes > 1)
            sb_printf(o, "  # column by column (K contiguous), %d %scolumns at a time%s", st->column_lanes,
                      st->column_spread ? "spread " : "",
                      comp->column_fuse_next ? "; shares the column loop with the next" : "");
        else if (comp->columnwise)
            sb_printf(o, "  # column by column (K contiguous), one at a time%s",
                      comp->column_fuse_next ? "; shares the column loop with the next" : "");
        sb_puts(o, "\n");
        for (int i = 0; i < comp->nintervals; i++) {
            const Interval *in = &comp->intervals[i];
            sb_puts(o, "        interval(");
            print_bound(in->start, o);
            sb_puts(o, ", ");
            print_bound(in->end, o);
            sb_puts(o, ")\n");
            print_stmts(&in->body, 3, o);
        }
    }
}
