/*
 * epoch: write-barrier bookkeeping of the sending node (see epoch.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "epoch.h"

struct epoch {
	uint32_t max_size;
	uint32_t max_open;
	uint32_t cur;        /* number of the current (open) epoch */
	uint32_t cur_writes; /* writes in it */
	bool close;          /* a write of it completed: close before the next */
	uint32_t *sizes;     /* ring of closed, unacked epochs' sizes */
	uint32_t first;      /* number of the oldest unacked closed epoch */
	uint32_t n_open;     /* closed epochs waiting for their ack */
};

int epoch_new(uint32_t max_epoch_size, uint32_t max_open, struct epoch **out)
{
	struct epoch *e;

	if (max_epoch_size < 1 || max_epoch_size > 20000 || max_open < 2 || max_open > 65536)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->sizes = calloc(max_open, sizeof(*e->sizes)))) {
		free(e);
		return -ENOMEM;
	}
	e->max_size = max_epoch_size;
	e->max_open = max_open;
	epoch_reset(e);
	*out = e;
	return 0;
}

void epoch_free(struct epoch *e)
{
	if (!e)
		return;
	free(e->sizes);
	free(e);
}

void epoch_reset(struct epoch *e)
{
	e->cur = 1;
	e->cur_writes = 0;
	e->close = false;
	e->first = 1;
	e->n_open = 0;
}

/* Close the current epoch (room checked by the caller). */
static uint32_t close_current(struct epoch *e)
{
	uint32_t nr = e->cur;

	e->sizes[(nr - 1) % e->max_open] = e->cur_writes;
	e->n_open++;
	e->cur++;
	e->cur_writes = 0;
	e->close = false;
	return nr;
}

int epoch_write(struct epoch *e, uint32_t *nr, uint32_t *barrier)
{
	if (e->cur_writes && (e->close || e->cur_writes >= e->max_size)) {
		if (e->n_open >= e->max_open)
			return -EBUSY;
		*barrier = close_current(e);
		return 1;
	}
	e->cur_writes++;
	*nr = e->cur;
	return 0;
}

int epoch_close_due(struct epoch *e, uint32_t *barrier)
{
	if (!e->cur_writes || !e->close)
		return 0;
	if (e->n_open >= e->max_open)
		return -EBUSY;
	*barrier = close_current(e);
	return 1;
}

void epoch_completed(struct epoch *e, uint32_t nr)
{
	if (nr == e->cur)
		e->close = true;
}

int epoch_flush(struct epoch *e, uint32_t *barrier)
{
	if (e->n_open >= e->max_open)
		return -EBUSY;
	*barrier = close_current(e);
	return 0;
}

int epoch_ack(struct epoch *e, uint32_t nr, uint32_t set_size, uint32_t *writes)
{
	uint32_t size;

	if (!e->n_open || nr != e->first)
		return -EPROTO;
	size = e->sizes[(e->first - 1) % e->max_open];
	if (set_size != size)
		return -EPROTO;
	e->first++;
	e->n_open--;
	*writes = size;
	return 0;
}

uint32_t epoch_unacked(const struct epoch *e)
{
	return e->n_open;
}

uint32_t epoch_oldest(const struct epoch *e)
{
	return e->n_open ? e->first : e->cur;
}
