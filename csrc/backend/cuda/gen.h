/*
 * A source-writer context for generated kernels, modelled on the clBLAS kernel generator:
 *
 * - Scopes: gen_open()/gen_close() bracket a block ("for (...) {" ... "}"); every scope keeps
 *   its declarations apart from its statements, so a declaration made while writing a loop
 *   body can be hoisted to an enclosing scope (gen_declare(.., up, ..)) and still appear
 *   before the code that uses it.
 * - Names: every declared or reserved name is unique in the whole source; asking for a name
 *   that is taken gives it a numeric suffix, so independent emitters never clash.
 * - Reordering sections: inside gen_section_begin()/gen_section_end(), statements are typed
 *   (fetch, arithmetic, store) and written back grouped, all fetches first, so a statement's
 *   loads are issued together before the arithmetic that consumes them.
 * Out of memory is sticky: gen_failed() reports it at the end.
 */
#ifndef GT_CUDA_GEN_H
#define GT_CUDA_GEN_H

#include <stdbool.h>

#include "util/strbuf.h"

typedef enum { GEN_FETCH, GEN_ARITH, GEN_STORE, GEN_NKINDS } GenKind;

typedef struct GenScope {
    StrBuf decls, body;
    StrBuf section[GEN_NKINDS]; /* while a reordering section is open */
    bool in_section;
    int depth;
    char *header; /* the line before "{"; NULL for the root */
} GenScope;

enum { GEN_MAX_DEPTH = 32 };

typedef struct Gen {
    GenScope scope[GEN_MAX_DEPTH];
    int nscopes;
    char **names;
    int nnames, capnames;
    bool failed;
} Gen;

void gen_init(Gen *g);
void gen_free(Gen *g);
bool gen_failed(const Gen *g);

/* Opens a block after the line `header` (printf format; "" for a bare block). */
void gen_open(Gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Closes the innermost block, writing it (declarations first) into its parent. */
void gen_close(Gen *g);

/* A fresh name derived from `base`, reserved for the rest of the source. The returned
 * string is owned by the context. */
const char *gen_name(Gen *g, const char *base);
/* Declares `type name = init;` in the scope `up` levels out (0: the current one; a large
 * number: the outermost open block) and returns the unique name. `init` may be NULL. */
const char *gen_declare(Gen *g, int up, const char *type, const char *base, const char *init_fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* One line (printf format, no trailing newline) of the given kind. */
void gen_line(Gen *g, GenKind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void gen_blank(Gen *g);

void gen_section_begin(Gen *g);
void gen_section_end(Gen *g);

/* Everything written at the root, as one malloc'ed string (the context is left empty). */
char *gen_take(Gen *g);

#endif
