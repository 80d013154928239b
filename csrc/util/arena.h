/* Arena allocation: every IR node of a stencil lives in one arena, freed with the stencil. */
#ifndef GT_ARENA_H
#define GT_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;

typedef struct Arena {
    ArenaBlock *head;
} Arena;

/* Zeroed memory aligned for any type; NULL only when the system is out of memory. */
void *arena_alloc(Arena *a, size_t n);
char *arena_strdup(Arena *a, const char *s);
/* Grows an arena array of `elem` sized items from `old_n` to `new_n` items (copying). */
void *arena_grow(Arena *a, void *old, size_t old_n, size_t new_n, size_t elem);
void arena_free(Arena *a);

#endif
