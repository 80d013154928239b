/* A growable, always NUL-terminated character buffer (printer, serialiser, messages). */
#ifndef GT_STRBUF_H
#define GT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct StrBuf {
    char *data;
    size_t len, cap;
    bool oom; /* set once an allocation failed; later appends are ignored */
} StrBuf;

void sb_append(StrBuf *sb, const char *s, size_t n);
void sb_puts(StrBuf *sb, const char *s);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_indent(StrBuf *sb, int depth);
void sb_free(StrBuf *sb);

#endif
