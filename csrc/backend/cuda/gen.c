/* The source-writer context: see gen.h. */
#include "backend/cuda/gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *vformat(const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

static void scope_free(GenScope *s) {
    sb_free(&s->decls);
    sb_free(&s->body);
    for (int k = 0; k < GEN_NKINDS; k++) sb_free(&s->section[k]);
    free(s->header);
    memset(s, 0, sizeof *s);
}

static bool scope_oom(const GenScope *s) {
    bool oom = s->decls.oom || s->body.oom;
    for (int k = 0; k < GEN_NKINDS; k++) oom = oom || s->section[k].oom;
    return oom;
}

void gen_init(Gen *g) {
    memset(g, 0, sizeof *g);
    g->nscopes = 1;
}

void gen_free(Gen *g) {
    for (int i = 0; i < g->nscopes; i++) scope_free(&g->scope[i]);
    for (int i = 0; i < g->nnames; i++) free(g->names[i]);
    free(g->names);
    memset(g, 0, sizeof *g);
}

bool gen_failed(const Gen *g) {
    if (g->failed) return true;
    for (int i = 0; i < g->nscopes; i++)
        if (scope_oom(&g->scope[i])) return true;
    return false;
}

static GenScope *top(Gen *g) { return &g->scope[g->nscopes - 1]; }

/* Where a finished line of the current scope goes. */
static StrBuf *sink(Gen *g, GenKind kind) {
    GenScope *s = top(g);
    return s->in_section ? &s->section[kind] : &s->body;
}

static void put_line(StrBuf *sb, int depth, const char *text) {
    sb_indent(sb, depth);
    sb_puts(sb, text);
    sb_puts(sb, "\n");
}

void gen_open(Gen *g, const char *fmt, ...) {
    if (g->nscopes == GEN_MAX_DEPTH) {
        g->failed = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char *h = vformat(fmt, ap);
    va_end(ap);
    if (h == NULL) {
        g->failed = true;
        return;
    }
    int depth = top(g)->depth + (g->nscopes > 1 ? 1 : 0);
    GenScope *s = &g->scope[g->nscopes++];
    memset(s, 0, sizeof *s);
    s->header = h;
    s->depth = depth;
}

void gen_close(Gen *g) {
    if (g->nscopes <= 1) {
        g->failed = true;
        return;
    }
    GenScope *s = top(g);
    if (s->in_section) gen_section_end(g);
    if (scope_oom(s)) g->failed = true;
    GenScope *parent = &g->scope[g->nscopes - 2];
    StrBuf *out = parent->in_section ? &parent->section[GEN_ARITH] : &parent->body;
    sb_indent(out, s->depth);
    sb_puts(out, s->header);
    sb_puts(out, s->header[0] ? " {\n" : "{\n");
    if (s->decls.len) sb_append(out, s->decls.data, s->decls.len);
    if (s->body.len) sb_append(out, s->body.data, s->body.len);
    put_line(out, s->depth, "}");
    scope_free(s);
    g->nscopes--;
}

static bool taken(const Gen *g, const char *name) {
    for (int i = 0; i < g->nnames; i++)
        if (strcmp(g->names[i], name) == 0) return true;
    return false;
}

const char *gen_name(Gen *g, const char *base) {
    char buf[160];
    snprintf(buf, sizeof buf, "%s", base);
    for (int n = 1; taken(g, buf); n++) snprintf(buf, sizeof buf, "%s_%d", base, n);
    if (g->nnames == g->capnames) {
        int cap = g->capnames ? 2 * g->capnames : 64;
        char **p = realloc(g->names, sizeof *p * (size_t)cap);
        if (p == NULL) {
            g->failed = true;
            return "gt_oom";
        }
        g->names = p;
        g->capnames = cap;
    }
    char *s = strdup(buf);
    if (s == NULL) {
        g->failed = true;
        return "gt_oom";
    }
    g->names[g->nnames++] = s;
    return s;
}

const char *gen_declare(Gen *g, int up, const char *type, const char *base, const char *init_fmt, ...) {
    const char *name = gen_name(g, base);
    int idx = g->nscopes - 1 - up;
    if (idx < 1 && g->nscopes > 1) idx = 1; /* the outermost open block, never the root */
    if (idx < 0) idx = 0;
    GenScope *s = &g->scope[idx];
    int depth = s->depth + (idx > 0 ? 1 : 0);
    sb_indent(&s->decls, depth);
    sb_printf(&s->decls, "%s %s", type, name);
    if (init_fmt) {
        va_list ap;
        va_start(ap, init_fmt);
        char *init = vformat(init_fmt, ap);
        va_end(ap);
        if (init == NULL) g->failed = true;
        else sb_printf(&s->decls, " = %s", init);
        free(init);
    }
    sb_puts(&s->decls, ";\n");
    return name;
}

void gen_line(Gen *g, GenKind kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *text = vformat(fmt, ap);
    va_end(ap);
    if (text == NULL) {
        g->failed = true;
        return;
    }
    GenScope *s = top(g);
    put_line(sink(g, kind), s->depth + (g->nscopes > 1 ? 1 : 0), text);
    free(text);
}

void gen_blank(Gen *g) { sb_puts(sink(g, GEN_ARITH), "\n"); }

void gen_section_begin(Gen *g) {
    GenScope *s = top(g);
    if (s->in_section) gen_section_end(g);
    s->in_section = true;
}

void gen_section_end(Gen *g) {
    GenScope *s = top(g);
    if (!s->in_section) return;
    s->in_section = false;
    for (int k = 0; k < GEN_NKINDS; k++) {
        if (s->section[k].len) sb_append(&s->body, s->section[k].data, s->section[k].len);
        if (s->section[k].oom) g->failed = true;
        sb_free(&s->section[k]);
    }
}

char *gen_take(Gen *g) {
    while (g->nscopes > 1) gen_close(g);
    GenScope *root = &g->scope[0];
    if (root->in_section) gen_section_end(g);
    StrBuf out = {0};
    if (root->decls.len) sb_append(&out, root->decls.data, root->decls.len);
    if (root->body.len) sb_append(&out, root->body.data, root->body.len);
    if (out.oom || gen_failed(g)) {
        sb_free(&out);
        return NULL;
    }
    scope_free(root);
    return out.data ? out.data : strdup("");
}
