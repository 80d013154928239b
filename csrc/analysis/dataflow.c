/*
 * The parallel model's data-flow rule (seed rule 4, DESIGN rule 1): an argument field may
 * not be written once it has been read with a horizontal offset, directly or through
 * temporaries computed from it, anywhere before or in the statement that writes it. With
 * tiled execution the neighbour's value could already be overwritten.
 *
 * Facts tracked in execution order:
 *   dep[t][f]    temporary t was computed from argument field f (any offset): line or 0
 *   offdep[t][f] ... from f read with a horizontal offset on the way: line or 0
 *   offread[f]   f has been read with a horizontal offset (directly or via dep): line or 0
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

typedef struct {
    Stencil *st;
    int nf, nt;
    int *dep, *offdep, *offread;
    /* per statement being examined */
    int *all, *off;
} Flow;

static void note(int *slot, int line) {
    if (*slot == 0 || (line > 0 && line < *slot)) *slot = line;
}

static void visit_read(void *ctx, Expr *e) {
    Flow *F = ctx;
    Symbol *s = e->field.sym;
    bool shifted = e->field.off[0] != 0 || e->field.off[1] != 0;
    if (s->kind == SYM_FIELD) {
        note(&F->all[s->slot], e->line);
        if (shifted) note(&F->off[s->slot], e->line);
    } else if (s->kind == SYM_TEMP) {
        int *dep = F->dep + (size_t)s->index * F->nf, *offdep = F->offdep + (size_t)s->index * F->nf;
        for (int f = 0; f < F->nf; f++) {
            if (dep[f]) note(&F->all[f], dep[f]);
            if (shifted && dep[f]) note(&F->off[f], e->line);
            else if (offdep[f]) note(&F->off[f], offdep[f]);
        }
    }
}

static void flow_stmts(Flow *F, StmtList *l);

static void flow_assign(Flow *F, Stmt *s) {
    Stencil *st = F->st;
    memset(F->all, 0, sizeof(int) * (size_t)F->nf);
    memset(F->off, 0, sizeof(int) * (size_t)F->nf);
    expr_visit_fields(s->assign.value, visit_read, F);
    expr_visit_fields(s->guard, visit_read, F);
    for (int f = 0; f < F->nf; f++)
        if (F->off[f]) note(&F->offread[f], F->off[f]);
    Symbol *t = s->assign.target;
    if (t->kind == SYM_FIELD && F->offread[t->slot]) {
        int rl = F->offread[t->slot];
        if (F->off[t->slot])
            diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                       "'%s' is written from a value that reads '%s' with a horizontal offset "
                       "(line %d): a field read with an offset cannot be written in the same "
                       "stencil, since neighbouring points may already be overwritten; write to "
                       "another field or a temporary",
                       t->name, t->name, rl);
        else
            diag_error(st, DIAG_SEMANTIC, s->line, s->col,
                       "write after read with offset: '%s' is written here but was read with a "
                       "horizontal offset on line %d; neighbouring points of a tile may already "
                       "be overwritten when that read happens",
                       t->name, rl);
    } else if (t->kind == SYM_TEMP) {
        int *dep = F->dep + (size_t)t->index * F->nf, *offdep = F->offdep + (size_t)t->index * F->nf;
        for (int f = 0; f < F->nf; f++) {
            if (F->all[f]) note(&dep[f], F->all[f]);
            if (F->off[f]) note(&offdep[f], F->off[f]);
        }
    }
}

static void flow_stmts(Flow *F, StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        Stmt *s = l->items[i];
        if (s->kind == S_ASSIGN) {
            flow_assign(F, s);
        } else if (s->kind == S_WHILE) {
            memset(F->all, 0, sizeof(int) * (size_t)F->nf);
            memset(F->off, 0, sizeof(int) * (size_t)F->nf);
            expr_visit_fields(s->while_.cond, visit_read, F);
            expr_visit_fields(s->guard, visit_read, F);
            for (int f = 0; f < F->nf; f++)
                if (F->off[f]) note(&F->offread[f], F->off[f]);
            flow_stmts(F, &s->while_.body);
        }
    }
}

bool checks_dataflow(Stencil *st) {
    Flow F = {.st = st, .nf = st->nfields, .nt = st->ntemps};
    size_t nf = (size_t)(F.nf ? F.nf : 1), nt = (size_t)(F.nt ? F.nt : 1);
    F.dep = calloc(nt * nf, sizeof(int));
    F.offdep = calloc(nt * nf, sizeof(int));
    F.offread = calloc(nf, sizeof(int));
    F.all = calloc(nf, sizeof(int));
    F.off = calloc(nf, sizeof(int));
    if (!F.dep || !F.offdep || !F.offread || !F.all || !F.off) {
        diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    } else {
        for (int c = 0; c < st->ncomps; c++)
            for (int i = 0; i < st->comps[c].nintervals; i++)
                flow_stmts(&F, &st->comps[c].intervals[i].body);
    }
    free(F.dep);
    free(F.offdep);
    free(F.offread);
    free(F.all);
    free(F.off);
    return st->diag.kind == DIAG_NONE;
}
