/* diag: collected diagnostics with file:line:col positions. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

struct diag_msg {
	enum diag_sev sev;
	char *file;
	int line;
	int col;
	char *keyword;
	char *msg;
	unsigned int seq;
};

struct diag {
	struct diag_msg *msgs;
	unsigned int n;
	unsigned int cap;
	unsigned int counts[2];
	bool lost;
};

int diag_new(struct diag **out)
{
	struct diag *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	*out = d;
	return 0;
}

void diag_free(struct diag *d)
{
	unsigned int i;

	if (!d)
		return;
	for (i = 0; i < d->n; i++) {
		free(d->msgs[i].file);
		free(d->msgs[i].keyword);
		free(d->msgs[i].msg);
	}
	free(d->msgs);
	free(d);
}

void diag_add(struct diag *d, enum diag_sev sev, const struct diag_loc *loc, const char *keyword,
	      const char *fmt, ...)
{
	struct diag_msg *m;
	va_list ap;
	int rc;

	d->counts[sev]++;
	if (d->n == d->cap) {
		unsigned int cap = d->cap ? d->cap * 2 : 16;
		struct diag_msg *n = realloc(d->msgs, cap * sizeof(*n));

		if (!n) {
			d->lost = true;
			return;
		}
		d->msgs = n;
		d->cap = cap;
	}
	m = &d->msgs[d->n];
	memset(m, 0, sizeof(*m));
	m->sev = sev;
	m->seq = d->n;
	if (loc && loc->file)
		m->file = strdup(loc->file);
	m->line = loc ? loc->line : 0;
	m->col = loc ? loc->col : 0;
	if (keyword)
		m->keyword = strdup(keyword);
	va_start(ap, fmt);
	rc = vasprintf(&m->msg, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		free(m->file);
		free(m->keyword);
		d->lost = true;
		return;
	}
	d->n++;
}

unsigned int diag_count(const struct diag *d, enum diag_sev sev)
{
	return d->counts[sev];
}

unsigned int diag_total(const struct diag *d)
{
	return d->n;
}

bool diag_get(const struct diag *d, unsigned int i, enum diag_sev *sev, struct diag_loc *loc,
	      const char **keyword, const char **msg)
{
	const struct diag_msg *m;

	if (i >= d->n)
		return false;
	m = &d->msgs[i];
	if (sev)
		*sev = m->sev;
	if (loc) {
		loc->file = m->file;
		loc->line = m->line;
		loc->col = m->col;
	}
	if (keyword)
		*keyword = m->keyword;
	if (msg)
		*msg = m->msg;
	return true;
}

static int diag_cmp(const void *a, const void *b)
{
	const struct diag_msg *x = *(const struct diag_msg *const *)a;
	const struct diag_msg *y = *(const struct diag_msg *const *)b;
	int c;

	c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

void diag_print(const struct diag *d, FILE *f)
{
	const struct diag_msg **order;
	unsigned int i;

	order = calloc(d->n ? d->n : 1, sizeof(*order));
	if (!order) {
		fprintf(f, "tandem: out of memory while printing %u diagnostics\n", d->n);
		return;
	}
	for (i = 0; i < d->n; i++)
		order[i] = &d->msgs[i];
	qsort(order, d->n, sizeof(*order), diag_cmp);
	for (i = 0; i < d->n; i++) {
		const struct diag_msg *m = order[i];

		if (m->file && m->col > 0)
			fprintf(f, "%s:%d:%d: ", m->file, m->line, m->col);
		else if (m->file)
			fprintf(f, "%s:%d: ", m->file, m->line);
		fprintf(f, "%s: ", m->sev == DIAG_ERR ? "error" : "warning");
		if (m->keyword)
			fprintf(f, "%s: ", m->keyword);
		fprintf(f, "%s\n", m->msg);
	}
	if (d->lost)
		fprintf(f, "tandem: out of memory: some diagnostics were lost\n");
	free(order);
}
