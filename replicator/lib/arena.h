/* arena: bump allocator for objects that share one lifetime (a parsed config). */
#ifndef TANDEM_ARENA_H
#define TANDEM_ARENA_H

#include <stddef.h>

struct arena;

int arena_new(struct arena **out);
void arena_free(struct arena *a);
/* Zeroed memory, aligned for any type; NULL only on allocation failure. */
void *arena_alloc(struct arena *a, size_t size);
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
