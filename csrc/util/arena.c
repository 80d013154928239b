#include "util/arena.h"

#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
    ArenaBlock *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

enum { ARENA_BLOCK = 64 * 1024 };

void *arena_alloc(Arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    ArenaBlock *b = a->head;
    if (b == NULL || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        b = malloc(sizeof(ArenaBlock) + cap);
        if (b == NULL) return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

/* NULL for a NULL `s` too: a failed conversion (PyUnicode_AsUTF8) stays a failure. */
char *arena_strdup(Arena *a, const char *s) {
    if (s == NULL) return NULL;
    size_t n = strlen(s) + 1;
    char *p = arena_alloc(a, n);
    if (p) memcpy(p, s, n);
    return p;
}

void *arena_grow(Arena *a, void *old, size_t old_n, size_t new_n, size_t elem) {
    void *p = arena_alloc(a, new_n * elem);
    if (p && old && old_n) memcpy(p, old, old_n * elem);
    return p;
}

void arena_free(Arena *a) {
    ArenaBlock *b = a->head;
    while (b) {
        ArenaBlock *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}
