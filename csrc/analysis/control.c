/*
 * Parallel-model rules about control flow, checked on the structured IR, before lowering
 * turns branches into guarded statements and the nesting is lost:
 *
 *   rule 3  a `while` body may not write a field that the condition or the body reads with a
 *           horizontal offset: every point iterates on its own, so a neighbour may be any
 *           number of iterations ahead or behind;
 *   rule 4  inside a conditional on a field, a field written in either branch may not be read
 *           with a horizontal offset: the branches run point by point, so the neighbour's value
 *           may or may not have been updated yet.
 *
 * Both apply to argument fields and temporaries alike, and each offending read is reported
 * where it is, naming the write. A field conditional's own condition is evaluated into a mask
 * before either branch runs, so it is not "inside" (rule 1 covers it for argument fields).
 *
 * Only the outermost construct is checked: the writes of anything nested inside are writes of
 * the enclosing construct too, so every violation inside is found once, by the outer check.
 */
#include <stdlib.h>

#include "analysis/analysis.h"

typedef struct {
    Stencil *st;
    int *wline;       /* per slot: first line writing it inside the construct checked, or 0 */
    const char *what; /* "a while loop" / "a conditional on a field" */
    const char *why;
    int line; /* of the construct */
} Ctl;

static void note_writes(const StmtList *l, int *wline) {
    for (int i = 0; i < l->n; i++) {
        const Stmt *s = l->items[i];
        switch (s->kind) {
        case S_ASSIGN: {
            int *w = &wline[s->assign.target->slot];
            if (*w == 0 || s->line < *w) *w = s->line;
            break;
        }
        case S_IF:
            note_writes(&s->if_.then, wline);
            note_writes(&s->if_.els, wline);
            break;
        case S_WHILE:
            note_writes(&s->while_.body, wline);
            break;
        case S_REGION:
            note_writes(&s->region.body, wline);
            break;
        }
    }
}

static void check_read(void *ctx, Expr *e) {
    Ctl *C = ctx;
    const Symbol *s = e->field.sym;
    const int *o = e->field.off;
    int w = C->wline[s->slot];
    if (w == 0 || (o[0] == 0 && o[1] == 0)) return;
    diag_error(C->st, DIAG_SEMANTIC, e->line, e->col,
               "'%s' is read with a horizontal offset [%d, %d, %d] inside %s (line %d) that writes "
               "'%s' on line %d: %s; write the new values to another field or temporary and read "
               "the old ones",
               s->name, o[0], o[1], e->field.kexpr ? 0 : o[2], C->what, C->line, s->name, w,
               C->why);
}

static void check_reads(Ctl *C, const StmtList *l) {
    for (int i = 0; i < l->n; i++) {
        Stmt *s = l->items[i];
        switch (s->kind) {
        case S_ASSIGN:
            expr_visit_fields(s->assign.value, check_read, C);
            /* a write's variable K offset reads too (temporaries: a checked level) */
            if (s->assign.kexpr) expr_visit_fields(s->assign.kexpr, check_read, C);
            break;
        case S_IF:
            expr_visit_fields(s->if_.cond, check_read, C);
            check_reads(C, &s->if_.then);
            check_reads(C, &s->if_.els);
            break;
        case S_WHILE:
            expr_visit_fields(s->while_.cond, check_read, C);
            check_reads(C, &s->while_.body);
            break;
        case S_REGION:
            check_reads(C, &s->region.body);
            break;
        }
    }
}

static void mark(void *ctx, Expr *e) {
    (void)e;
    *(bool *)ctx = true;
}

static bool reads_any_field(Expr *e) {
    bool any = false;
    expr_visit_fields(e, mark, &any);
    return any;
}

static void check_while(Ctl *C, Stmt *s) {
    note_writes(&s->while_.body, C->wline);
    C->what = "a while loop";
    C->why = "every point iterates on its own, so a neighbour may be any number of iterations "
             "ahead or behind";
    C->line = s->line;
    expr_visit_fields(s->while_.cond, check_read, C);
    check_reads(C, &s->while_.body);
}

static void check_field_if(Ctl *C, Stmt *s) {
    note_writes(&s->if_.then, C->wline);
    note_writes(&s->if_.els, C->wline);
    C->what = "a conditional on a field";
    C->why = "the branches run point by point, so a neighbour's value may or may not be "
             "updated yet";
    C->line = s->line;
    check_reads(C, &s->if_.then);
    check_reads(C, &s->if_.els);
}

static void walk(Ctl *C, StmtList *l, int nslots) {
    for (int i = 0; i < l->n; i++) {
        Stmt *s = l->items[i];
        if (s->kind == S_WHILE || (s->kind == S_IF && reads_any_field(s->if_.cond))) {
            for (int k = 0; k < nslots; k++)
                C->wline[k] = 0;
            if (s->kind == S_WHILE)
                check_while(C, s);
            else
                check_field_if(C, s);
        } else if (s->kind == S_IF) {
            walk(C, &s->if_.then, nslots);
            walk(C, &s->if_.els, nslots);
        } else if (s->kind == S_REGION) {
            walk(C, &s->region.body, nslots);
        }
    }
}

bool checks_control(Stencil *st) {
    int n = stencil_nslots(st);
    Ctl C = {.st = st, .wline = calloc((size_t)n + 1, sizeof(int))};
    if (C.wline == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    for (int c = 0; c < st->ncomps; c++)
        for (int i = 0; i < st->comps[c].nintervals; i++)
            walk(&C, &st->comps[c].intervals[i].body, n);
    free(C.wline);
    return st->diag.kind == DIAG_NONE;
}
