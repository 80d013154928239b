/*
 * The parallel model's data-flow rule 1, on the lowered IR in execution order: an argument
 * field may not be written once it has been read with a horizontal offset, directly or
 * through temporaries computed from it, anywhere before or in the statement that writes it
 * (seed rule 4: "write after read with offset", "shifted self-assignment", also "with
 * temporary" across computations). With tiled execution the neighbour's value could already
 * be overwritten. (A temporary may read itself with an offset: selfassign.c splits that
 * statement so it keeps its "evaluate, then assign" meaning.) Also: in a PARALLEL
 * computation, a statement may not read its own target at another K level.
 *
 * Facts tracked in execution order, as "where" records (line of the read, and the temporary
 * it went through, if any):
 *   dep[t][f]    temporary t was computed from argument field f (any offset): line or 0
 *   offdep[t][f] ... from f read with a horizontal offset on the way
 *   offread[f]   f has been read with a horizontal offset (directly or through temporaries)
 * Every violation is recorded (diag_error keeps the first in source order and counts them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

typedef struct {
    int line;          /* of the read with an offset; 0: none */
    const Symbol *via; /* the temporary read with that offset, NULL: the field itself */
} Where;

typedef struct {
    Stencil *st;
    Policy policy;
    const Symbol *target;
    const Expr *self_k; /* a read of the statement's target at another K level */
    int nf, nt;
    int *dep;
    Where *offdep, *offread;
    /* per statement being examined */
    int *all;
    Where *off;
} Flow;

static void note(int *slot, int line) {
    if (*slot == 0 || (line > 0 && line < *slot)) *slot = line;
}

static void note_where(Where *w, int line, const Symbol *via) {
    if (w->line == 0 || (line > 0 && line < w->line)) {
        w->line = line;
        w->via = via;
    }
}

static bool shifted(const Expr *e) {
    return e->field.off[0] != 0 || e->field.off[1] != 0;
}

static void visit_read(void *ctx, Expr *e) {
    Flow *F = ctx;
    Symbol *s = e->field.sym;
    if (s == F->target && (e->field.off[2] != 0 || e->field.kexpr) && F->self_k == NULL)
        F->self_k = e;
    if (s->kind == SYM_FIELD) {
        note(&F->all[s->slot], e->line);
        if (shifted(e)) note_where(&F->off[s->slot], e->line, NULL);
    } else if (s->kind == SYM_TEMP) {
        const int *dep = F->dep + (size_t)s->index * (size_t)F->nf;
        const Where *offdep = F->offdep + (size_t)s->index * (size_t)F->nf;
        for (int f = 0; f < F->nf; f++) {
            if (dep[f] == 0) continue;
            note(&F->all[f], dep[f]);
            if (shifted(e))
                note_where(&F->off[f], e->line, s);
            else if (offdep[f].line)
                note_where(&F->off[f], offdep[f].line, offdep[f].via ? offdep[f].via : s);
        }
    }
}

static void begin_statement(Flow *F, const Symbol *target) {
    memset(F->all, 0, sizeof(int) * (size_t)F->nf);
    memset(F->off, 0, sizeof(Where) * (size_t)F->nf);
    F->target = target;
    F->self_k = NULL;
}

static void merge_offreads(Flow *F) {
    for (int f = 0; f < F->nf; f++)
        if (F->off[f].line) note_where(&F->offread[f], F->off[f].line, F->off[f].via);
}

/* " (through temporary 'tmp', computed from 'a' on line 3)", or "" for a direct read. */
static void via_text(const Flow *F, Where w, const Symbol *f, char *buf, size_t n) {
    if (w.via == NULL) {
        buf[0] = '\0';
        return;
    }
    int from = F->dep[(size_t)w.via->index * (size_t)F->nf + (size_t)f->slot];
    snprintf(buf, n, " (through temporary '%s', computed from '%s' on line %d)", w.via->name,
             f->name, from);
}

static void check_argument_write(Flow *F, const Stmt *s, const Symbol *t) {
    /* A self-assignment names its own read (and the temporary it came through). */
    bool self = F->off[t->slot].line != 0;
    Where w = self ? F->off[t->slot] : F->offread[t->slot];
    if (w.line == 0) return;
    char via[256];
    via_text(F, w, t, via, sizeof via);
    if (self)
        diag_error(F->st, DIAG_SEMANTIC, s->line, s->col,
                   "shifted self-assignment: '%s' is assigned a value computed from '%s' read with "
                   "a horizontal offset on line %d%s; neighbouring points may already be "
                   "overwritten when they are read, so write the result to another field",
                   t->name, t->name, w.line, via);
    else
        diag_error(F->st, DIAG_SEMANTIC, s->line, s->col,
                   "write after read with offset: '%s' is written here but was read with a "
                   "horizontal offset on line %d%s; neighbouring points may already be "
                   "overwritten when that read happens, so write to another field",
                   t->name, w.line, via);
}

/* In PARALLEL a statement writes every level "at once", but backends (the cuda one runs K
 * inside a thread) may visit the levels in any order, in place: reading the target at another
 * level would see old or new values depending on that order. */
static void check_k_self_read(Flow *F, const Stmt *s, const Symbol *t) {
    if (F->self_k == NULL || F->policy != POLICY_PARALLEL) return;
    diag_error(F->st, DIAG_SEMANTIC, F->self_k->line, F->self_k->col,
               "'%s' is assigned (line %d) from its own values at another K level in a PARALLEL "
               "computation: the K order is unspecified there, so the levels read may already be "
               "overwritten; use FORWARD or BACKWARD, or assign the result to another field",
               t->name, s->line);
}

static void flow_assign(Flow *F, Stmt *s) {
    Symbol *t = s->assign.target;
    begin_statement(F, t);
    expr_visit_fields(s->assign.value, visit_read, F);
    /* a write's variable K offset reads too (temporaries: a checked level) */
    if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, visit_read, F);
    F->target = NULL; /* the guard is a mask evaluated before the statement */
    expr_visit_fields(s->guard, visit_read, F);
    merge_offreads(F);
    check_k_self_read(F, s, t);
    if (t->kind == SYM_FIELD) check_argument_write(F, s, t);
    if (t->kind == SYM_TEMP) {
        int *dep = F->dep + (size_t)t->index * (size_t)F->nf;
        Where *offdep = F->offdep + (size_t)t->index * (size_t)F->nf;
        for (int f = 0; f < F->nf; f++) {
            if (F->all[f]) note(&dep[f], F->all[f]);
            if (F->off[f].line) note_where(&offdep[f], F->off[f].line, F->off[f].via);
        }
    }
}

static void flow_stmts(Flow *F, StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        Stmt *s = l->items[i];
        if (s->kind == S_ASSIGN) {
            flow_assign(F, s);
        } else if (s->kind == S_WHILE) {
            begin_statement(F, NULL);
            expr_visit_fields(s->while_.cond, visit_read, F);
            expr_visit_fields(s->guard, visit_read, F);
            merge_offreads(F);
            flow_stmts(F, &s->while_.body);
        }
    }
}

bool checks_dataflow(Stencil *st) {
    Flow F = {.st = st, .nf = st->nfields, .nt = st->ntemps};
    size_t nf = (size_t)(F.nf ? F.nf : 1), nt = (size_t)(F.nt ? F.nt : 1);
    F.dep = calloc(nt * nf, sizeof(int));
    F.offdep = calloc(nt * nf, sizeof(Where));
    F.offread = calloc(nf, sizeof(Where));
    F.all = calloc(nf, sizeof(int));
    F.off = calloc(nf, sizeof(Where));
    if (!F.dep || !F.offdep || !F.offread || !F.all || !F.off) {
        diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    } else {
        for (int c = 0; c < st->ncomps; c++) {
            F.policy = st->comps[c].policy;
            for (int i = 0; i < st->comps[c].nintervals; i++)
                flow_stmts(&F, &st->comps[c].intervals[i].body);
        }
    }
    free(F.dep);
    free(F.offdep);
    free(F.offread);
    free(F.all);
    free(F.off);
    return st->diag.kind == DIAG_NONE;
}
