/*
 * defer: run a function on a libqb main loop, from any thread, in the order
 * the calls were queued (an eventfd wakes the loop).
 */
#ifndef TANDEM_DEFER_H
#define TANDEM_DEFER_H

#include <qb/qbloop.h>

struct defer;

int defer_start(qb_loop_t *loop, struct defer **out);
/* Run what is queued now (at exit). */
void defer_drain(struct defer *q);
/* Calls still queued are dropped. */
void defer_stop(struct defer *q);
/* fn(arg) on the loop's thread; 0 or a negative errno (not queued). */
int defer_call(struct defer *q, void (*fn)(void *arg), void *arg);

#endif
