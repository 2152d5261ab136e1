/*
 * diag: a list of diagnostics (errors and warnings) with their source
 * position, collected so that one run reports every problem of a file.
 */
#ifndef TANDEM_DIAG_H
#define TANDEM_DIAG_H

#include <stdbool.h>
#include <stdio.h>

struct diag;

enum diag_sev {
	DIAG_WARN,
	DIAG_ERR,
};

/* A position in a source file; file NULL = no file (command line). */
struct diag_loc {
	const char *file;
	int line;
	int col;
};

int diag_new(struct diag **out);
void diag_free(struct diag *d);
/* Record one message; keyword may be NULL. Never fails silently: on
 * allocation failure the diag remembers that it lost messages. */
void diag_add(struct diag *d, enum diag_sev sev, const struct diag_loc *loc, const char *keyword,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
unsigned int diag_count(const struct diag *d, enum diag_sev sev);
/* Print "file:line:col: error: keyword: reason" lines in source order. */
void diag_print(const struct diag *d, FILE *f);
/* Iterate: index 0..count-1 over all messages in order of recording. */
unsigned int diag_total(const struct diag *d);
bool diag_get(const struct diag *d, unsigned int i, enum diag_sev *sev, struct diag_loc *loc,
	      const char **keyword, const char **msg);

#endif
