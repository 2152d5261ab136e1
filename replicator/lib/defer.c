/*
 * defer: run a function on the main loop, from any thread.
 *
 * tandemd's data path runs on NBD connection and replication threads;
 * state changes, handlers and events belong to its main loop (libqb). A
 * thread that needs one (an I/O error, a finished resync) queues a call
 * here; an eventfd wakes the loop, which runs the calls in the order they
 * were queued.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "defer.h"
#include "log.h"

struct defer_call {
	void (*fn)(void *arg);
	void *arg;
	struct defer_call *next;
};

struct defer {
	qb_loop_t *loop;
	int fd;
	pthread_mutex_t lock;
	struct defer_call *head, *tail;
};

static int32_t defer_run(int32_t fd, int32_t revents, void *data)
{
	struct defer *q = data;
	struct defer_call *c, *next;
	uint64_t n;

	if (read(q->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_err("defer: reading the eventfd: %s", strerror(errno));
	pthread_mutex_lock(&q->lock);
	c = q->head;
	q->head = q->tail = NULL;
	pthread_mutex_unlock(&q->lock);
	for (; c; c = next) {
		next = c->next;
		c->fn(c->arg);
		free(c);
	}
	return 0;
}

int defer_start(qb_loop_t *loop, struct defer **out)
{
	struct defer *q = calloc(1, sizeof(*q));
	int rc;

	if (!q)
		return -ENOMEM;
	q->loop = loop;
	q->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->fd < 0) {
		rc = -errno;
		free(q);
		return rc;
	}
	pthread_mutex_init(&q->lock, NULL);
	rc = qb_loop_poll_add(loop, QB_LOOP_HIGH, q->fd, POLLIN, q, defer_run);
	if (rc < 0) {
		close(q->fd);
		pthread_mutex_destroy(&q->lock);
		free(q);
		return rc;
	}
	*out = q;
	return 0;
}

/* Run what is queued now (at exit, before the control clients go). */
void defer_drain(struct defer *q)
{
	if (q)
		defer_run(q->fd, POLLIN, q);
}

/* Calls still queued are dropped: the daemon is exiting. */
void defer_stop(struct defer *q)
{
	struct defer_call *c, *next;

	if (!q)
		return;
	qb_loop_poll_del(q->loop, q->fd);
	for (c = q->head; c; c = next) {
		next = c->next;
		free(c);
	}
	close(q->fd);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

int defer_call(struct defer *q, void (*fn)(void *arg), void *arg)
{
	struct defer_call *c = malloc(sizeof(*c));
	uint64_t one = 1;

	if (!c)
		return -ENOMEM;
	c->fn = fn;
	c->arg = arg;
	c->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	pthread_mutex_unlock(&q->lock);
	if (write(q->fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}
